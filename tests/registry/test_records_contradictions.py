"""Records that contradict themselves (issue 31, item 7), in fresh interpreters with a cache of
their own each.

- A selection record whose choice is not what its own times choose (edited, or written by
  another rule) is not obeyed: the backends are measured again, and ``info`` says why.
- A certification record edited from failed to passed is trusted: a record is only as good as
  whoever can write the cache directory (docs/backends.md says so).  ``argonishche selftest
  --recertify`` reads no record, certifies every plugin's module again in a child, refuses the
  wrong kernel and rewrites its record.  The wrong kernel is a real plugin wheel
  (tests/plugin_wheels.py): ref's, with F wrong for runs of 8,193 blocks or more.
"""

from __future__ import annotations

import sys
from pathlib import Path

import plugin_wheels
import pytest
from argonishche._selection import ties
from plugin_wheels import (
    BLAKE2B_2MIB,
    USABLE,
    certification_records,
    kernel_plugin,
    records,
    run,
    run_command,
)

pytestmark = plugin_wheels.WITHOUT_SETTINGS_ONLY

SELECTION = """
    from argonishche import _info, _registry
    out["argon2_right"] = argon2_right()
    out["choices"] = {a: dict(backend=c.backend, how=c.how, why=c.why, record=c.record)
                      for a, c in _registry.get().choices.items()}
    out["info"] = _info.render(_info.collect(cpuinfo=False))
    report()
"""


def choices(cache: Path) -> dict:
    probe = run(SELECTION, cache, [])
    out = probe.ok()
    assert out["argon2_right"]
    return out


def times_in(record: Path) -> tuple[dict[str, float], dict[str, float]]:
    """The record's argon2 times and noise, by backend."""
    times, noise = {}, {}
    for line in record.read_text().splitlines():
        if line.startswith("argon2 time: "):
            name, ns, gap = line[len("argon2 time: "):].split(" ")
            times[name], noise[name] = float(ns), float(gap)
    return times, noise


def test_a_selection_record_contradicting_its_own_times_is_measured_again(tmp_path):
    cache = tmp_path / "cache"
    first = choices(cache)
    if first["choices"]["argon2"]["how"] != "measured":
        pytest.skip(f"nothing to measure here: {first['choices']['argon2']['why']}")
    record = Path(first["choices"]["argon2"]["record"])
    assert choices(cache)["choices"]["argon2"]["how"] == "remembered", (
        "precondition: an unedited record agrees with itself and is obeyed")
    times, noise = times_in(record)
    slowest = max(times, key=lambda name: times[name])
    if slowest in ties(times, noise):
        pytest.skip(f"every backend ties with the fastest here: {times}")
    text = record.read_text()
    edited = [f"argon2: {slowest}" if line.startswith("argon2: ") else line
              for line in text.splitlines()]
    record.write_text("\n".join(edited) + "\n")  # the times unchanged
    again = choices(cache)
    argon2 = again["choices"]["argon2"]
    # Before: {'backend': <the slowest>, 'how': 'remembered', ...}
    assert argon2["how"] == "measured" and argon2["backend"] != slowest, argon2
    assert "measured again" in argon2["why"] and "its times choose" in argon2["why"], argon2
    assert "measured again" in again["info"], again["info"]
    assert f"Ignored record {record}: its choice contradicts its own times" in again["info"]
    assert choices(cache)["choices"]["argon2"]["how"] == "remembered", (
        "the record written by the new measurement agrees with itself")


# ---- a certification record edited from failed to passed --------------------------------------


@pytest.fixture(scope="session")
def sites(tmp_path_factory) -> dict[str, Path]:
    """Two plugins at priority 99 (the ladder's pick once usable), built and installed once:
    ``right`` (ref's kernels) and ``wrong`` (F wrong for runs of 8,193 blocks or more)."""
    plugins = {"right": kernel_plugin("right"),
               "wrong": kernel_plugin("wrong", "TRUST_F_RUN_FROM 8193")}
    wheels = plugin_wheels.build_wheels_or_skip(plugins, tmp_path_factory.mktemp("wheels"))
    return {key: plugin_wheels.install(wheel, tmp_path_factory.mktemp(f"site-{key}"))
            for key, wheel in wheels.items()}


def recertify(cache: Path, site: Path):
    return run_command([sys.executable, "-m", "argonishche", "selftest", "--recertify"], cache,
                       [site], ARGONISHCHE_SELECT="priority")


def forge_passed(record: Path) -> None:
    """What someone who can write the cache directory can do: the failure becomes a pass, the
    file stays this user's, mode 0600."""
    lines = [("passed: yes" if line == "passed: no" else line)
             for line in record.read_text().splitlines() if not line.startswith("failure: ")]
    record.write_text("\n".join(lines) + "\n")


def test_selftest_recertify_refuses_a_wrong_kernel_a_forged_record_passed(sites, tmp_path):
    cache, wrong_site = tmp_path / "cache", sites["wrong"]
    first = run(BLAKE2B_2MIB, cache, [wrong_site], ARGONISHCHE_SELECT="priority")
    assert first.backend("wrong")["state"] == "certification-failed", first.backend("wrong")
    [failed] = certification_records(cache, "no")
    forge_passed(failed)
    trusted = run(BLAKE2B_2MIB, cache, [wrong_site], ARGONISHCHE_SELECT="priority")
    # The documented threat: the user's own record is trusted, and BLAKE2b is not witnessed.
    assert trusted.backend("wrong")["state"] in USABLE, trusted.backend("wrong")
    assert not trusted.out["blake2b_2mib_right"], "precondition: the forged record is obeyed"

    done = recertify(cache, wrong_site)
    # Before: "error: unrecognized arguments: --recertify" (exit 2).
    assert done.returncode == 1, f"{done.returncode}\n{done.stdout}\n{done.stderr}"
    assert "wrong      certified again in a child interpreter: certification-failed" in (
        done.stdout), done.stdout
    assert certification_records(cache, "no") == [failed], records(cache)
    assert certification_records(cache, "yes") == [], "the forged record is rewritten"
    after = run(BLAKE2B_2MIB, cache, [wrong_site], ARGONISHCHE_SELECT="priority")
    assert after.backend("wrong")["state"] == "certification-failed", after.backend("wrong")
    assert after.out["blake2b_2mib_right"] and after.out["argon2_right"]


def test_selftest_recertify_certifies_a_right_kernel_again_and_rewrites_its_record(sites,
                                                                                  tmp_path):
    cache = tmp_path / "cache"
    first = run(BLAKE2B_2MIB, cache, [sites["right"]], ARGONISHCHE_SELECT="priority")
    assert first.backend("right")["state"] == "selected", first.backend("right")
    [passed] = certification_records(cache, "yes")
    passed.write_text(passed.read_text().replace("date: ", "date: marked "))
    done = recertify(cache, sites["right"])
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "right      certified again in a child interpreter: self-test, certified now" in (
        done.stdout), done.stdout
    assert certification_records(cache, "yes") == [passed]
    assert "date: marked" not in passed.read_text(), "the record is written anew"
