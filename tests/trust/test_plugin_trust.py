"""Third-party kernels make hashing faster, never wrong, never down (issue 23), shown with real
misbehaving plugin wheels.

Each plugin is a small project (tests/plugin_wheels.py) whose kernels are ref's with one
misbehaviour (tests/trust/bad_plugins/trust/misbehaving.c), built into a wheel with pip once
per session, installed with pip, and run in fresh interpreters with a cache directory of their own
(XDG_CACHE_HOME: certification and selection records live there).  Expected tags come from
argon2-cffi and hashlib, never from argonishche.

What a user must see, whatever the plugin does: every tag and digest right, the process alive, and
a kernel caught misbehaving never used again, in this process or a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import plugin_wheels
import pytest
from plugin_wheels import (
    BLAKE2B_2MIB,
    INFO_AND_HASHES,
    USABLE,
    Kernels,
    Plugin,
    backend_plugin,
    certification_records,
    kernel_plugin,
    records,
    run,
    run_command,
)
from support import load_tool

# The interpreters these tests start run without the ARGONISHCHE_* variables of the tox env that
# runs them, so every env would repeat the same minutes of work: they run in the envs that set
# none (py, py312, py313), where the wheels are built for each Python.
pytestmark = plugin_wheels.WITHOUT_SETTINGS_ONLY

SHIM = '''\
"""The plugin's kernel module: the compiled kernels, re-exported."""
from ._kernels_impl import ffi, lib  # noqa: F401
'''

# What a concurrent `pip install -U` does to an installed plugin: the new build renamed over the
# loaded one's path, here right after the plugin imported it (TRUST_SWAP_IN names the new file).
SWAP_AT_IMPORT = '''\
import os
import shutil

from . import _kernels

_new_build = os.environ.get("TRUST_SWAP_IN")
if _new_build:
    shutil.copyfile(_new_build, _kernels.__file__ + ".new")
    os.replace(_kernels.__file__ + ".new", _kernels.__file__)
'''

# Another entry point of the same distribution, imported first: it makes every check pass.
PATCH_THE_CHECKS = '''\
import argonishche._trust.certification_checks
import argonishche._trust.self_test


def _nothing_wrong(*args, **kwargs):
    return []


argonishche._trust.certification_checks.failures = _nothing_wrong
argonishche._trust.self_test.run = _nothing_wrong
APPLIED = True


@argonishche.hookimpl
def argonishche_register_backends(register):
    pass
'''


def _shim(version: str, *defines: str) -> Plugin:
    return Plugin("trust-shim", "trust_shim", {"shim": "trust_shim"}, version=version,
                  kernels=(Kernels("_kernels_impl", defines),),
                  files={"__init__.py": backend_plugin("shim", "trust_shim.kernels"),
                         "kernels.py": SHIM})


#: The third-party plugins, by key.  A run of 8,193 blocks or more in one F call is one the quick
#: self-test cannot afford and certification covers (a message over 1 MiB).
PLUGINS = {
    "timebomb": kernel_plugin("timebomb", "TRUST_G_AFTER_CALLS (1ULL << 20)"),
    "far_g": kernel_plugin("far_g", "TRUST_G_BEHIND 70000"),
    "long_f": kernel_plugin("long_f", "TRUST_F_RUN_FROM 32000"),
    "shim_v1": _shim("1.0"),
    "shim_v2": _shim("2.0", "TRUST_F_RUN_FROM 8193"),
    "swap": kernel_plugin("swap", before=SWAP_AT_IMPORT),
    "swap_new": kernel_plugin("swap", "TRUST_F_RUN_FROM 8193", version="1.1"),
    "right": kernel_plugin("right"),
    "wrong": kernel_plugin("wrong", "TRUST_F_RUN_FROM 8193"),
    "patch": Plugin("trust-patch", "trust_patch",
                    {"a_patch_the_checks": "trust_patch.patch", "patched": "trust_patch"},
                    kernels=(Kernels("_kernels", ("TRUST_F_RUN_FROM 8193",)),),
                    files={"__init__.py": backend_plugin("patched", "trust_patch._kernels"),
                           "patch.py": PATCH_THE_CHECKS}),
    "undeclared": kernel_plugin("undeclared", "TRUST_AVX512_IN_G",
                                cpu_features=("avx", "avx2")),
    "trap": kernel_plugin("trap", "TRUST_F_TRAP_FROM 8193"),
    "hang": kernel_plugin("hang", "TRUST_F_HANG_FROM 8193"),
    "scalar2": kernel_plugin("scalar2"),
    # Registers the same backend name, from an entry point that sorts before the real one's.
    "squatter": kernel_plugin("squatter", backend="scalar2", entry_point="a_scalar2"),
}

def mentions_a_failure_remembered(reason: str) -> bool:
    return any(word in reason.lower() for word in ("record", "remember", "witness",
                                                    "quarantin", "disagree"))


# ---- the wheels ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def wheels(tmp_path_factory) -> dict[str, Path]:
    """Every plugin of PLUGINS built into a wheel, once per session."""
    return plugin_wheels.build_wheels_or_skip(PLUGINS, tmp_path_factory.mktemp("plugin_wheels"))


@pytest.fixture(scope="session")
def installed(wheels, tmp_path_factory):
    """The directory a plugin's wheel is installed in, with pip (once per session); tests that
    change the files install their own copy with ``fresh_site``."""
    directories: dict[str, Path] = {}

    def get(key: str) -> Path:
        if key not in directories:
            directories[key] = plugin_wheels.install(
                wheels[key], tmp_path_factory.mktemp(f"site-{key}"))
        return directories[key]
    return get


@pytest.fixture
def fresh_site(wheels, tmp_path):
    def get(key: str) -> Path:
        return plugin_wheels.install(wheels[key], tmp_path / f"site-{key}")
    return get


@pytest.fixture
def cache(tmp_path) -> Path:
    path = tmp_path / "cache"
    path.mkdir(mode=0o700)
    return path


# ---- 1. a kernel that goes wrong after N calls --------------------------------------------------

TIME_BOMB = """
    from argonishche import PasswordHasher
    out["selected_at_start"] = argonishche.selected_backend("argon2")
    calls = importlib.import_module("trust_timebomb._kernels").lib.trust_g_calls
    hasher, checker = PasswordHasher(), argon2.PasswordHasher()
    stored = [hasher.hash(f"stored before {i}") for i in range(2)]
    out["calls_before"] = calls()
    warned_from = len(CAUGHT)
    wrong = []
    # Past 2**20 G calls with a margin: the defaults (64 MiB, t=3) take 196,604 calls a hash.
    for i in range(7):
        password, salt = f"password {i}".encode(), f"salt of hash {i:03}".encode()
        if i % 2:
            encoded = hasher.hash(password)
            try:
                checker.verify(encoded, password)
            except argon2.exceptions.VerificationError:
                wrong.append(f"PasswordHasher().hash #{i} (calls so far {calls()})")
        elif tag(password, salt, 3, 65536, 4) != expected_tag(password, salt, 3, 65536, 4):
            wrong.append(f"argon2_hash #{i} (calls so far {calls()})")
    out["wrong"] = wrong
    out["calls_after"] = calls()
    out["new_warnings"] = warnings_text(warned_from)


    def verifies(check, encoded, password):
        try:
            return check(encoded, password)
        except argonishche.VerifyMismatchError:
            return False


    out["stored_verify"] = [verifies(argonishche.argon2_verify, e, f"stored before {i}")
                            for i, e in enumerate(stored)]
    out["stored_verify_hasher"] = [verifies(hasher.verify, e, f"stored before {i}")
                                   for i, e in enumerate(stored)]
    out["hashes_after_right"] = argon2_right(m=65536, t=1, p=4)
    report()
"""


def test_a_kernel_that_goes_wrong_after_2_to_the_20_calls_never_returns_a_wrong_tag(
        installed, cache):
    plugin = PLUGINS["timebomb"]
    probe = run(TIME_BOMB, cache, [installed("timebomb")], ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    assert out["selected_at_start"] == "timebomb", (
        f"precondition: the time bomb passed every check and was selected by priority; "
        f"selected {out['selected_at_start']}, its record {probe.backend('timebomb')}")
    assert out["calls_after"] > 2**20, (
        f"precondition: the bomb went off (its kernel made {out['calls_after']} G calls)")
    assert out["wrong"] == [], (
        f"wrong tags returned without an error after the kernel went wrong: {out['wrong']}")
    assert out["stored_verify"] == [True, True] and out["stored_verify_hasher"] == [True, True], (
        "hashes stored before the bomb must still verify after it")
    record = probe.backend("timebomb")
    assert record["state"] == "quarantined", (
        f"caught disagreeing, the backend is quarantined for the process: {record}")
    assert out["selected"]["argon2"] != "timebomb" and out["hashes_after_right"]
    named = [w for w in out["new_warnings"] if w.startswith("RuntimeWarning")
             and "timebomb" in w and plugin.distribution in w]
    assert named, ("a RuntimeWarning naming the backend and its distribution "
                   f"({plugin.label}) when it went wrong; warnings: {out['new_warnings']}")

    # A new process does not use it until it is certified again: the failure was recorded.
    again = run("""
        out["argon2_right"] = argon2_right(m=65536, t=3, p=4)
        report()
        """, cache, [installed("timebomb")], ARGONISHCHE_SELECT="priority")
    record = again.backend("timebomb")
    assert record["state"] not in USABLE and record["state"] in (
        "certification-failed", "quarantined"), (
        f"a new process must not use a kernel caught giving wrong tags: {record}")
    assert mentions_a_failure_remembered(record["reason"]), (
        f"the reason says that a failure was recorded: {record['reason']!r}")
    assert again.out["selected"]["argon2"] != "timebomb" and again.out["argon2_right"]


# ---- 2., 3. wrong beyond the old certification horizon ------------------------------------------


def test_a_g_wrong_for_references_over_70000_blocks_behind_fails_certification(installed, cache):
    code = """
        out["m128_right"] = argon2_right(m=131072, t=1, p=1)
        report()
        """
    probe = run(code, cache, [installed("far_g")])  # the default selection
    record = probe.backend("far_g")
    assert record["state"] == "certification-failed", (
        f"certification must place ref at every distance the limits allow (the bug is from "
        f"70,001 blocks): {record}")
    assert probe.out["m128_right"], "Argon2id m=128 MiB must give argon2-cffi's tag"
    # The ladder, which would pick it first, does not either (the failure is remembered).
    ladder = run(code, cache, [installed("far_g")], ARGONISHCHE_SELECT="priority")
    assert ladder.backend("far_g")["state"] == "certification-failed"
    assert ladder.out["selected"]["argon2"] != "far_g" and ladder.out["m128_right"]


def test_an_f_wrong_for_one_run_of_32000_blocks_never_gets_such_a_run(installed, cache):
    code = """
        try:
            out["forced"] = [blake2b_right(size) for size in (4 << 20, (4 << 20) + 1, 6 << 20)]
        except argonishche.BackendError as exc:
            out["forced"] = f"refused: {exc}"
        report()
        """
    forced = run(code, cache, [installed("long_f")], ARGONISHCHE_BACKEND="long_f")
    out = forced.ok()
    if isinstance(out["forced"], str):  # certification found it: it may not be forced
        assert forced.backend("long_f")["state"] not in USABLE, out["forced"]
    else:
        assert out["selected"]["blake2b"] == "long_f", f"precondition: forced: {out}"
        assert out["forced"] == [True, True, True], (
            f"BLAKE2b of 4 MiB, 4 MiB + 1 and 6 MiB in one update() through the forced backend "
            f"must equal hashlib's (the core splits runs it hands a third-party F): "
            f"{out['forced']}")
    ladder = run("""
        out["right"] = [blake2b_right(size) for size in (4 << 20, 6 << 20)]
        report()
        """, cache, [installed("long_f")], ARGONISHCHE_SELECT="priority")
    assert ladder.ok()["right"] == [True, True], (
        f"BLAKE2b of 4 and 6 MiB in one update() with the ladder's selection "
        f"({ladder.out['selected']}) must equal hashlib's")


# ---- 4., 5. records keyed on the code that runs -------------------------------------------------

def test_a_shim_module_upgrade_with_new_compiled_code_is_certified_again(wheels, tmp_path, cache):
    python = plugin_wheels.make_venv(tmp_path / "venv")
    plugin_wheels.venv_install(python, wheels["shim_v1"])
    first = run(BLAKE2B_2MIB, cache, [], python=python, ARGONISHCHE_SELECT="priority")
    assert first.backend("shim")["state"] == "selected", (
        f"precondition: version 1, right, is certified and selected: {first.backend('shim')}")
    assert first.out["blake2b_2mib_right"]

    plugin_wheels.venv_install(python, wheels["shim_v2"])  # the same .py shim, new .so
    upgraded = run(BLAKE2B_2MIB, cache, [], python=python, ARGONISHCHE_SELECT="priority")
    record = upgraded.backend("shim")
    assert record["distribution"] == PLUGINS["shim_v2"].label, f"precondition: upgraded: {record}"
    assert record["state"] == "certification-failed", (
        f"the record must be keyed on the compiled code the shim re-exports, so version 2 is "
        f"certified again and refused: {record}")
    assert upgraded.out["blake2b_2mib_right"], "BLAKE2b of 2 MiB must equal hashlib's"
    assert upgraded.out["selected"]["blake2b"] != "shim"


def test_a_kernel_file_swapped_during_start_up_is_not_recorded_as_passed(
        installed, fresh_site, cache):
    swapped = fresh_site("swap")
    new_build = plugin_wheels.installed_file(installed("swap_new"), "trust_swap", "_kernels")
    first = run(BLAKE2B_2MIB, cache, [swapped], ARGONISHCHE_SELECT="priority",
                TRUST_SWAP_IN=str(new_build))
    out = first.ok()
    loaded = plugin_wheels.installed_file(swapped, "trust_swap", "_kernels")
    assert loaded.read_bytes() == new_build.read_bytes(), "precondition: the file was swapped"
    assert out["blake2b_2mib_right"] and out["argon2_right"], out
    new_digest = hashlib.blake2b(new_build.read_bytes(), digest_size=32).hexdigest()
    vouching = [path for path in certification_records(cache, "yes")
                if new_digest in path.read_text()]
    assert vouching == [], (
        f"a 'passed' record names the new file, which was never certified: {vouching}")

    second = run(BLAKE2B_2MIB, cache, [swapped], ARGONISHCHE_SELECT="priority")
    record = second.backend("swap")
    assert record["state"] == "certification-failed", (
        f"a new process loads the new, wrong build: it must be certified and refused: {record}")
    assert second.out["blake2b_2mib_right"] and second.out["argon2_right"], second.out


# ---- 6. the record files ------------------------------------------------------------------------

def _forge(record: Path, how: str) -> None:
    """Make the failed certification *record* say it passed, then loosen its file's or its
    directory's mode as *how* says."""
    lines = [("passed: yes" if line == "passed: no" else line)
             for line in record.read_text().splitlines() if not line.startswith("failure: ")]
    record.write_text("\n".join(lines) + "\n")
    if how == "world-writable record":
        record.chmod(0o666)
    else:
        record.parent.chmod(0o777)


@pytest.mark.parametrize("how", ["world-writable record", "record in a 0777 directory"])
def test_a_forged_passed_record_others_could_write_is_ignored_and_said_so(installed, cache, how):
    wrong = installed("wrong")
    first = run(BLAKE2B_2MIB, cache, [wrong], ARGONISHCHE_SELECT="priority")
    assert first.backend("wrong")["state"] == "certification-failed", (
        f"precondition: certification finds the wrong kernel: {first.backend('wrong')}")
    failed = certification_records(cache, "no")
    assert len(failed) == 1, f"precondition: one record of the failure: {records(cache)}"
    _forge(failed[0], how)
    try:
        forged = run(INFO_AND_HASHES, cache, [wrong], ARGONISHCHE_SELECT="priority")
    finally:
        failed[0].parent.chmod(0o700)  # pytest's tmp_path clean-up
    record = forged.backend("wrong")
    assert record["state"] == "certification-failed", (
        f"a record others could have written is no record: certified again and refused: "
        f"{record}")
    assert forged.out["blake2b_2mib_right"] and forged.out["argon2_right"]
    assert forged.out["info_exit"] == 0
    info = forged.out["info"]
    named = str(failed[0]) if how == "world-writable record" else str(failed[0].parent)
    assert "ignor" in info.lower() and (str(failed[0]) in info or named in info), (
        f"`argonishche info` must say that the record {named} was ignored, and why:\n{info}")


@pytest.fixture(scope="session")
def right_record(installed, tmp_path_factory) -> Path:
    """Where, relative to the cache directory, the right plugin's certification is recorded."""
    cache = tmp_path_factory.mktemp("record_path_cache")
    probe = run(BLAKE2B_2MIB, cache, [installed("right")], ARGONISHCHE_SELECT="priority")
    assert probe.backend("right")["state"] == "selected", probe.backend("right")
    passed = certification_records(cache, "yes")
    assert len(passed) == 1, f"precondition: one record of the passed certification: {passed}"
    return passed[0].relative_to(cache)


@pytest.mark.parametrize("what", ["FIFO", "symbolic link to /dev/zero"])
def test_a_fifo_or_a_link_to_dev_zero_at_the_record_path_costs_no_hang(
        installed, cache, right_record, what):
    path = cache / right_record
    path.parent.mkdir(parents=True, mode=0o700)
    for parent in path.relative_to(cache).parents:
        (cache / parent).chmod(0o700)
    if what == "FIFO":
        os.mkfifo(path, 0o600)
    else:
        path.symlink_to("/dev/zero")
    probe = run(BLAKE2B_2MIB, cache, [installed("right")], timeout=90,
                ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    assert out["blake2b_2mib_right"] and out["argon2_right"], out
    assert probe.backend("right")["state"] in USABLE, (
        f"with no readable record the kernel is simply certified again: "
        f"{probe.backend('right')}")


# ---- 7. code run at import ----------------------------------------------------------------------


def test_an_import_time_patch_of_the_checks_cannot_certify_a_wrong_kernel(installed, cache):
    probe = run("""
        out["blake2b_2mib_right"] = blake2b_right(2 << 20)
        out["patched"] = getattr(importlib.import_module("trust_patch.patch"), "APPLIED", False)
        report()
        """, cache, [installed("patch")], ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    assert out["patched"], "precondition: the other entry point patched the checks"
    record = probe.backend("patched")
    assert record["state"] == "certification-failed", (
        f"certification runs in a child interpreter that imports only the kernel module and "
        f"the checks, so the patch cannot pass a wrong kernel: {record}")
    assert out["selected"]["blake2b"] != "patched" and out["blake2b_2mib_right"]


# ---- 8. never down: SIGILL, a crash, a hang -----------------------------------------------------


def test_a_kernel_that_raises_sigill_in_certification_costs_only_itself(installed, cache):
    probe = run(BLAKE2B_2MIB, cache, [installed("trap")], ARGONISHCHE_SELECT="priority")
    out = probe.ok()  # today: the whole process dies of SIGILL
    record = probe.backend("trap")
    assert record["state"] == "certification-failed" and "SIGILL" in record["reason"], (
        f"the child interpreter certifying it died of SIGILL, and the reason says so: {record}")
    assert out["blake2b_2mib_right"] and out["argon2_right"]
    assert out["selected"]["blake2b"] != "trap"


def test_a_kernel_that_hangs_in_certification_is_refused_at_the_timeout(installed, cache):
    probe = run(BLAKE2B_2MIB, cache, [installed("hang")], timeout=60,
                ARGONISHCHE_SELECT="priority", ARGONISHCHE_CERTIFY_TIMEOUT="5")
    out = probe.ok()
    record = probe.backend("hang")
    assert record["state"] == "certification-failed", record
    assert "time" in record["reason"].lower() and "5" in record["reason"], (
        f"the reason names the timeout: {record['reason']!r}")
    assert out["blake2b_2mib_right"] and out["argon2_right"]
    assert probe.seconds < 45, f"start-up took {probe.seconds:.1f} s with a 5 s timeout"


def _emulated_haswell() -> str:
    """An interpreter wrapper running on a Haswell model (AVX2, no AVX-512: QEMU's, or Intel
    SDE's -hsw), whose child interpreters are emulated too (tools/emulate.py)."""
    emulate = load_tool("emulate")
    try:
        emulate.emulator_command("avx2")
    except SystemExit as exc:
        pytest.skip(f"no CPU model without AVX-512 to run on: {exc} (CI installs qemu-user)")
    return emulate.wrapper("avx2")


def test_an_undeclared_avx512_instruction_is_caught_on_a_cpu_without_it(installed, cache):
    python = _emulated_haswell()
    info = run_command([python, "-m", "argonishche", "info", "--json", "--fast"], cache,
                       [installed("undeclared")], timeout=600, ARGONISHCHE_SELECT="priority")
    assert info.returncode == 0, (
        f"`argonishche info` on a CPU without AVX-512 exited with {info.returncode} "
        f"(-4: SIGILL):\n{info.stderr[-3000:]}")
    report = json.loads(info.stdout)
    (record,) = [b for b in report["backends"] if b["name"] == "undeclared"]
    assert record["state"] == "certification-failed" and "SIGILL" in record["reason"], (
        f"the module declares avx,avx2 but runs AVX-512: {record}")
    probe = run(BLAKE2B_2MIB, cache, [installed("undeclared")], python=python, timeout=600,
                ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    assert out["argon2_right"] and out["blake2b_2mib_right"]
    assert probe.backend("undeclared")["state"] == "certification-failed"


# ---- 9. names -----------------------------------------------------------------------------------


def test_two_distributions_registering_one_backend_name_are_both_refused(installed, cache):
    sites = [installed("scalar2"), installed("squatter")]
    real, squatter = PLUGINS["scalar2"], PLUGINS["squatter"]
    probe = run("""
        try:
            argonishche.argon2_hash(b"password", b"somesalt", type="id", time_cost=1,
                                    memory_cost=32, parallelism=1, backend="scalar2")
            out["forced"] = "hashed"
        except argonishche.BackendError as exc:
            out["forced"] = f"refused: {exc}"
        out["argon2_right"] = argon2_right()
        report()
        """, cache, sites, ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    scalar2 = [b for b in out["backends"] if b["name"] == "scalar2"]
    states = {b["state"] for b in scalar2} | {
        p["state"] for p in out["plugins"] or ()
        if p["distribution"] in (real.label, squatter.label)}
    assert "name-conflict" in states and all(b["state"] == "name-conflict" for b in scalar2), (
        f"both registrations of scalar2 are refused as a name conflict: backends {scalar2}, "
        f"plugins {out['plugins']}")
    assert out["forced"].startswith("refused"), "backend='scalar2' names no usable backend"
    assert "scalar2" not in out["selected"].values() and out["argon2_right"]
    assert any(real.distribution in w and squatter.distribution in w
               for w in out["warnings"]), (
        f"a warning names both distributions: {out['warnings']}")

    blocked = run("""
        out["argon2_right"] = argon2_right()
        report()
        """, cache, sites, ARGONISHCHE_SELECT="priority",
        ARGONISHCHE_DISABLE_BACKENDS=squatter.distribution)
    record = blocked.backend("scalar2")
    assert record["distribution"] == real.label and record["state"] == "selected", (
        f"with the squatter blocked, the real scalar2 is used: {record}")
    assert blocked.out["argon2_right"]
