"""Third-party kernels never take hashing down (issue 23), shown with real plugin wheels: a kernel
that raises SIGILL or hangs in certification, or runs an instruction its CPU lacks, costs only
itself.

The plugins, and how they are built and run: test_plugin_trust.py's docstring.
"""

from __future__ import annotations

import json

import plugin_wheels
import pytest
from plugin_wheels import BLAKE2B_2MIB, run, run_command
from support import load_tool

# Only in the envs that set no ARGONISHCHE_* variables (see test_plugin_trust.py).
pytestmark = plugin_wheels.WITHOUT_SETTINGS_ONLY


# ---- 8. never down: SIGILL, a crash, a hang -----------------------------------------------------


def test_a_kernel_that_raises_sigill_in_certification_costs_only_itself(installed, cache):
    probe = run(BLAKE2B_2MIB, cache, [installed("trap")], ARGONISHCHE_SELECT="priority")
    out = probe.ok()  # before issue 23 the whole process died of SIGILL
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
