"""Selection by measurement (argonishche._selection): measured on first use, interleaved, and
read back by later registries and processes; the settings that change it; the policy that turns
timings into a choice, and what `argonishche info` says of it; and, in a pytest of its own, the
selection tests passing where measurement disagrees with the ladder, as it does on some CPUs.

Each test has a cache directory of its own (tests/conftest.py's process_state fixture); the
registries here are the test's own, never the process's.  The records' key and the records that
must be ignored are test_remembered_selection.py's.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import stat
import subprocess
import sys
import textwrap

import argonishche
import pytest
from argonishche import _registry, _selection
from argonishche._trust import cpu_gate
from argonishche.exceptions import BackendError
from selection_support import (
    forbid_measuring,
    multi_backend_registry,
    only_record,
    usable_names,
    without_settings,
)
from support import make_registry, timings_where

TESTS = pathlib.Path(__file__).resolve().parents[1]
TOOLS = TESTS.parent / "tools"


# ---- first use, and later uses ----------------------------------------------------------------


def test_first_use_measures_every_usable_backend_interleaved_and_remembers(cache, samples):
    reg = multi_backend_registry()
    names = usable_names(reg)
    for choice in reg.choices.values():
        assert choice.how == "measured" and set(choice.ns_per_kib) == set(names)
        assert "measured in" in choice.why and choice.record == str(only_record(cache))
    # Interleaved: each round times every backend once per algorithm, each round starting with
    # another backend (after one warm-up call each, not counted).
    per_round = 2 * len(names)
    rounds = [samples[i:i + per_round] for i in range(per_round, len(samples), per_round)]
    assert len(rounds) >= _selection.MIN_ROUNDS and all(len(r) == per_round for r in rounds)
    assert all(sorted(r) == sorted(rounds[0]) for r in rounds)
    assert rounds[0][0][0] != rounds[1][0][0]
    record = only_record(cache)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    text = record.read_text()
    assert f"cpu: {cpu_gate.identity()}\n" in text and f"argonishche: {argonishche.__version__}\n" \
        in text and f"kernel_abi: {argonishche.KERNEL_ABI}\n" in text
    for name in names:
        assert f"backend: {name} argonishche_backends._{name} " in text


def test_a_later_registry_reads_the_record_and_measures_nothing(cache, monkeypatch):
    first = multi_backend_registry()
    forbid_measuring(monkeypatch)
    again = make_registry(installed=False)
    for algorithm, choice in again.choices.items():
        assert choice.how == "remembered"
        assert choice.backend == first.choices[algorithm].backend
        assert choice.measured_at == first.choices[algorithm].measured_at
        assert choice.ns_per_kib == pytest.approx(first.choices[algorithm].ns_per_kib, abs=0.01)


def test_a_later_process_reads_the_record_and_measures_nothing(cache):
    multi_backend_registry(installed=True)   # the backends a new process finds
    code = """
        import argonishche
        from argonishche import _registry, _selection
        def refuse(*args):
            raise AssertionError("measured")
        _selection.sample = refuse
        print(sorted({c.how for c in _registry.get().choices.values()}))
        """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120, env=without_settings())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "['remembered']", out.stdout + out.stderr


def test_each_algorithm_may_come_from_another_backend(cache, monkeypatch, install):
    names = usable_names(multi_backend_registry(ARGONISHCHE_SELECT="priority"))
    lowest, highest = names[-1], names[0]   # report order: the ladder's
    monkeypatch.setattr(_selection, "sample", timings_where({"blake2b": lowest}))
    reg = install(make_registry(installed=False))
    assert (reg.selected_name("blake2b"), reg.selected_name("argon2")) == (lowest, highest)
    assert {b.name: set(b.selected_for) for b in reg.report() if b.selected_for} == {
        lowest: {"blake2b"}, highest: {"argon2"}}
    assert "the ladder decides" in reg.choices["argon2"].why
    assert argonishche.selected_backend("blake2b") == lowest


# ---- the settings ------------------------------------------------------------------------------


def test_priority_mode_measures_reads_and_writes_nothing(cache, samples):
    reg = multi_backend_registry(ARGONISHCHE_SELECT="priority")
    assert not samples and not cache.exists()
    for choice in reg.choices.values():
        assert (choice.how, choice.backend) == ("priority", usable_names(reg)[0])
        assert "ARGONISHCHE_SELECT=priority" in choice.why


def backdated(record: pathlib.Path) -> str:
    """Make *record* look measured long ago (a new measurement then shows in it); its text."""
    text = re.sub(r"(?m)^measured_at: .*$", "measured_at: 2000-01-01T00:00:00Z",
                  record.read_text())
    record.write_text(text)
    return text


def test_measure_mode_measures_afresh_and_rewrites_the_record(cache, samples):
    multi_backend_registry()
    first = backdated(only_record(cache))
    samples.clear()
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False)
    assert samples and {c.how for c in reg.choices.values()} == {"measured"}
    assert only_record(cache).read_text() != first


def test_calibrate_measures_afresh_and_rewrites_the_record(cache, samples):
    reg = multi_backend_registry()
    first = backdated(only_record(cache))
    samples.clear()
    timings = reg.calibrate()
    assert samples and set(timings) == set(_registry.ALGORITHMS)
    assert only_record(cache).read_text() != first
    assert {c.how for c in reg.choices.values()} == {"measured"}


def test_a_forced_backend_stays_forced_and_nothing_is_measured(cache, samples):
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "ref"}, installed=False)
    assert not samples and not cache.exists()
    for choice in reg.choices.values():
        assert (choice.how, choice.backend, choice.why) == (
            "forced", "ref", "forced by ARGONISHCHE_BACKEND=ref")


@pytest.mark.parametrize("where", ["under a file", "relative, no home"])
def test_without_a_writable_cache_the_ladder_decides_and_says_why(tmp_path, monkeypatch,
                                                                  samples, where):
    if where == "under a file":
        (tmp_path / "file").write_text("")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", "relative")   # ignored, as the XDG spec says
        monkeypatch.setenv("HOME", "relative-too")          # so there is no cache directory
    reg = multi_backend_registry()
    assert not samples
    for choice in reg.choices.values():
        assert choice.how == "priority" and choice.backend == usable_names(reg)[0]
        assert "no measurement remembered, and none can be" in choice.why
    # ARGONISHCHE_SELECT=measure still measures, and says it could not remember.
    measured = make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False)
    assert samples and "not remembered" in measured.choices["blake2b"].why


def test_the_only_usable_backend_is_not_measured(samples):
    others = [name for name in usable_names(make_registry(
        environ={"ARGONISHCHE_SELECT": "priority"}, installed=False)) if name != "ref"]
    reg = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": ",".join(others)},
                        installed=False)
    assert not samples and reg.choices["argon2"].how == "priority"
    assert "the only usable backend" in reg.choices["argon2"].why


def test_no_usable_backend_is_the_registrys_error_not_a_measurement(samples):
    everything = ",".join(b.name for b in make_registry(
        environ={"ARGONISHCHE_SELECT": "priority"}, installed=False).report())
    reg = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": everything}, installed=False)
    with pytest.raises(BackendError, match="no usable backend"):
        reg.kernel_table("blake2b")
    with pytest.raises(BackendError, match="no usable backend"):
        reg.calibrate()
    assert not samples


# ---- the policy --------------------------------------------------------------------------------


def test_noise_is_the_gap_between_the_fastest_samples_of_the_two_halves():
    assert _selection.noise([100, 101, 300, 290, 500]) == pytest.approx(0.01)
    assert _selection.noise([100, 150, 300, 160]) == pytest.approx(0.5)
    assert _selection.noise([100, 100, 100, 100]) == 0
    assert _selection.noise([100]) == 0


def test_a_lead_within_the_noise_is_a_tie_the_ladder_breaks():
    entries = {e.name: e for e in make_registry(installed=False).usable()}
    if len(entries) < 3:
        pytest.skip("fewer than three usable backends")
    ranked = sorted(entries.values(), key=lambda e: e.backend.priority)
    bottom, middle, top = ranked[0], ranked[1], ranked[-1]
    others = {name: 200.0 for name in entries}
    quiet = {name: 0.0 for name in entries}

    def winner(times, noise):
        measurement = _selection.Measurement({a: times for a in _registry.ALGORITHMS},
                                             {a: noise for a in _registry.ALGORITHMS}, 9, 0.01)
        choices = _selection.decide(list(entries.values()), measurement)
        assert choices["argon2"].backend == choices["blake2b"].backend
        return choices["argon2"]

    # Under 3 % (and no noise) is a tie the ladder breaks; 1.5x is a lead.
    assert winner({**others, top.name: 102.0, bottom.name: 100.0}, quiet).backend == top.name
    lead = winner({**others, top.name: 150.0, bottom.name: 100.0}, quiet)
    assert lead.backend == bottom.name
    assert lead.why == f"the fastest: 1.50x faster than {top.name}, the next and the ladder's pick"
    # The noise in the two compared widens the tie: 5 % in each, and 1.12x is not enough...
    times = {**others, top.name: 112.0, bottom.name: 100.0}
    noisy = {**quiet, top.name: 0.05, bottom.name: 0.05}
    tie = winner(times, noisy)
    assert tie.backend == top.name and tie.why.startswith(f"tied with {bottom.name} (within 12")
    # ... but noise in a backend that is not compared does not.
    assert winner(times, {**quiet, middle.name: 0.5}).backend == bottom.name


# ---- what people see ---------------------------------------------------------------------------


def test_info_says_how_and_why_each_algorithm_was_chosen():
    def info(**env):
        out = subprocess.run([sys.executable, "-m", "argonishche", "info", "--fast", "--json"],
                             capture_output=True, text=True, timeout=120,
                             env=without_settings(**env))
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["selection"]

    forced = info(ARGONISHCHE_BACKEND="ref")
    assert forced["blake2b"]["why"] == "forced by ARGONISHCHE_BACKEND=ref"
    ladder = info(ARGONISHCHE_SELECT="priority")
    assert ladder["argon2"]["how"] == "priority"
    first = info(ARGONISHCHE_SELECT="measure")
    if first["argon2"]["how"] == "priority":
        pytest.skip(f"nothing to measure here: {first['argon2']['why']}")
    assert first["argon2"]["how"] == "measured" and first["argon2"]["record"]
    later = info()
    assert {c["how"] for c in later.values()} == {"remembered"}
    text = subprocess.run([sys.executable, "-m", "argonishche", "info", "--fast"],
                          capture_output=True, text=True, timeout=120,
                          env=without_settings()).stdout
    assert f"measured {later['argon2']['measured_at']}, remembered: " in text
    assert f"remembered in {later['argon2']['record']}" in text
    # The backend table says which is the ladder's pick, and which are selected.
    assert "the ladder's pick (the highest priority usable)" in text
    assert "selected for " in text and "ns/KiB (the fastest)" in text


# ---- the suite where measurement disagrees with the ladder -------------------------------------

#: The tests that check which backend is selected, run where measurement disagrees with the
#: ladder (tools/measurement_disagrees.py).
SELECTION_TESTS = ("platforms/test_emulation.py", "api/test_backends_api.py",
                   "registry/test_registry.py", "registry/test_registry_discovery.py",
                   "registry/test_registry_vetting.py", "kernels/test_blake2b_type.py",
                   "cli/test_cli.py", "kernels/test_known_answers.py")


@pytest.mark.timeout(600)
def test_the_selection_tests_pass_where_measurement_disagrees_with_the_ladder():
    """On some CPUs measurement picks ref for BLAKE2b, which the ladder ranks last; a test
    that assumed the ladder, or left a measurement's choice behind for the tests after it,
    failed there.  tools/measurement_disagrees.py makes every CPU measure that way (and more:
    Argon2 from the ladder's second-lowest rung), and the tests that check the selection must
    pass under it, in one process, in the order pytest runs them."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARGONISHCHE_BACKEND", "ARGONISHCHE_SELECT", "ARGONISHCHE_EXPECT_BACKEND")}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "measurement_disagrees", "-p", "no:cacheprovider",
         "-x", *(str(TESTS / name) for name in SELECTION_TESTS)],
        cwd=TESTS, env={**env, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(TOOLS), env.get("PYTHONPATH")]))},
        capture_output=True, text=True, timeout=580)
    header = next((line for line in out.stdout.splitlines()
                   if line.startswith("measurement disagrees with the ladder:")), "")
    assert header, out.stdout[-3000:] + out.stderr[-3000:]
    assert "selected: " in header and "as faked" in header, header
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
