"""Third-party kernels' certification records (issue 23), shown with real plugin wheels: keyed on
the compiled code that runs (a shim module's upgrade, a kernel file swapped during start-up), and
ignored when others could have written them or when the record path is no regular file.

The plugins, and how they are built and run: test_plugin_trust.py's docstring.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import plugin_wheels
import pytest
from plugin_wheels import BLAKE2B_2MIB, INFO_AND_HASHES, USABLE, certification_records, records, run
from trust_plugins import PLUGINS

# Only in the envs that set no ARGONISHCHE_* variables (see test_plugin_trust.py).
pytestmark = plugin_wheels.WITHOUT_SETTINGS_ONLY


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
