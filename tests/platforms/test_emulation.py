"""Selection and import safety: the tests the tox matrix runs on every emulated CPU.

They also run natively, where they check the machine's own selection.  The tox envs say what to
expect through the environment:

- ``ARGONISHCHE_EXPECT_BACKEND``: the backend that must be selected (``emu-*``, ``peel-*`` and
  ``backend-*`` envs, which pin the ladder with ``ARGONISHCHE_SELECT=priority``: under an
  emulator timings mean nothing); without it, the one the selection policy must choose on this
  CPU (:func:`argonishche.testing.expected_backend`), never simply the ladder's.
- ``ARGONISHCHE_EXPECT_CPU_FEATURES``: exactly the features the probe must see, proving that the
  emulator is really in effect (a runner that silently ran natively would see more).
- ``ARGONISHCHE_REQUIRE_BACKENDS``: the backends that must be usable.
- ``ARGONISHCHE_EXPECT_MACHINE``: the architecture this interpreter must run on (``emu-aarch64*``:
  ``aarch64``), so that an env which silently ran natively fails.

``ARGONISHCHE_SDE_STANDIN`` is set only by tools/sde_standin/sde64 (``emu-sde``), never by a
real Intel SDE.  When it says the stand-in ran a chip natively (AVX-512: QEMU cannot emulate it),
the checks of what the emulated CPU must show are skips whose reason says so and names the
check: a native run cannot prove them.

What only such an env can show (a backend above the CPU, a required backend) is a skip natively
whose reason names the variable that enables it.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys

import argonishche
import pytest
from argonishche import _registry, testing
from argonishche._core import lib
from argonishche._trust import cpu_gate
from argonishche.testing import USABLE_STATES as USABLE
from support import run_python


def skip_unless_emulated(check: str) -> None:
    """Skip *check* if the sde64 stand-in ran this process natively instead of emulating."""
    standin = os.environ.get("ARGONISHCHE_SDE_STANDIN", "")
    if standin.startswith("native -"):  # not "host: ..." (no chip option): that must fail
        pytest.skip(f"sde64 stand-in, {standin}; skipped: {check}")


def expected_backend(algorithm: str) -> str:
    wanted = (os.environ.get("ARGONISHCHE_EXPECT_BACKEND")
              or os.environ.get("ARGONISHCHE_BACKEND", "").lower())
    return wanted or testing.expected_backend(algorithm)


def test_the_expected_backend_is_the_one_running():
    if os.environ.get("ARGONISHCHE_EXPECT_BACKEND"):
        skip_unless_emulated("the emulated CPU selects ARGONISHCHE_EXPECT_BACKEND="
                             + os.environ["ARGONISHCHE_EXPECT_BACKEND"])
        assert _registry.get().settings.select == "priority", \
            "an env expecting one backend must pin the ladder (ARGONISHCHE_SELECT=priority)"
    for algorithm in _registry.ALGORITHMS:
        assert argonishche.selected_backend(algorithm) == expected_backend(algorithm), \
            _registry.get().choices[algorithm]
    # ... and it really computes: the registry's table is the one that hashes.
    tag = argonishche.argon2_hash(b"password", b"somesalt", type="i", time_cost=2,
                                  memory_cost=64, parallelism=1)
    assert tag == argonishche.argon2_hash(b"password", b"somesalt", type="i", time_cost=2,
                                          memory_cost=64, parallelism=1, backend="ref")


def test_the_interpreter_runs_on_the_expected_architecture():
    expected = os.environ.get("ARGONISHCHE_EXPECT_MACHINE")
    if not expected:
        pytest.skip("ARGONISHCHE_EXPECT_MACHINE is not set: any architecture will do")
    assert platform.machine() == expected
    assert cpu_gate._machine() == expected
    # ... and the child interpreters the tests start run there too (emulated, not native).
    out = run_python("import platform; print(platform.machine())")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected


def test_the_probe_sees_the_cpu_that_runs_us():
    expected = os.environ.get("ARGONISHCHE_EXPECT_CPU_FEATURES")
    probed = cpu_gate.probed_features()
    if expected is not None:
        skip_unless_emulated(f"the probe sees exactly ARGONISHCHE_EXPECT_CPU_FEATURES={expected}")
        assert probed == {f for f in expected.split(",") if f}
        return
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert "sse2" in probed  # part of x86-64 itself: an empty probe would pass the check below
    if platform.machine().lower() == "aarch64":
        assert "asimd" in probed  # in every ARMv8-A CPU Linux runs on
    # Natively: never more than the kernel reports for this machine (an emulator would be
    # caught above; here /proc/cpuinfo and the probe describe the same CPU).
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            # x86: "flags : ...", aarch64: "Features : ..."
            flags = next(line for line in f if line.startswith(("flags", "Features"))
                         ).split(":")[1].split()
    except (OSError, StopIteration):
        pytest.skip("no /proc/cpuinfo flags to compare the probe with")
    assert probed <= set(flags)


def test_child_interpreters_run_on_the_same_cpu():
    """The children the tests start (sys.executable) see this process's CPU: under an emulator,
    sys.executable must lead back into it (tools/emulate.py's wrapper), or every test that runs
    a fresh interpreter would run natively."""
    code = ("import sys\n"
            "from argonishche._trust import cpu_gate\n"
            "print(','.join(sorted(cpu_gate.probed_features())))\n"
            "print(sys.executable)\n")
    out = run_python(code)
    assert out.returncode == 0, out.stderr
    features, executable = out.stdout.splitlines()[-2:]
    assert features == ",".join(sorted(cpu_gate.probed_features()))
    assert executable == sys.executable  # ... and so do theirs


def test_backends_above_the_cpu_are_unsupported_not_broken():
    records = argonishche.backends()
    above = [r for r in records if not set(r.cpu_features) <= cpu_gate.features()]
    expected = os.environ.get("ARGONISHCHE_EXPECT_CPU_FEATURES")
    if expected is not None:  # an emulated CPU: the backends beyond it are the ones above it
        skip_unless_emulated("the backends above the emulated CPU are exactly those needing "
                             f"more than ARGONISHCHE_EXPECT_CPU_FEATURES={expected}")
        emulated = {f for f in expected.split(",") if f}
        assert {r.name for r in above} == {
            r.name for r in records if not set(r.cpu_features) <= emulated}
    if not above:
        pytest.skip("no registered backend needs a CPU feature this process lacks: hide some "
                    "with ARGONISHCHE_DISABLE_CPU_FEATURES (e.g. =avx2) or run an emu-* tox env "
                    "(ARGONISHCHE_EXPECT_CPU_FEATURES)")
    for record in above:
        assert record.state in ("unsupported-cpu", "blocked"), record
        assert record.selftest_ms is None  # never run


def test_every_compiled_module_imports_safely_and_exports_its_table():
    """Importing a backend module and asking for its table must be safe on any CPU of its
    architecture, including modules whose kernels this CPU cannot run (only the kernels carry
    the ISA): on emu-aarch64nosha3, neon_sha3's module is imported on a CPU without SHA3."""
    reg = _registry.get()
    modules = {e.backend.kernel_module for e in reg.entries.values() if e.backend is not None}
    assert modules, "no backend registered"
    code = ("import importlib, sys\n"
            "from argonishche._core import ffi\n"
            "for name in sys.argv[1:]:\n"
            "    m = importlib.import_module(name)\n"
            "    table = ffi.cast('const argonishche_kernel_table *',\n"
            "                     int(m.ffi.cast('uintptr_t', m.lib.argonishche_kernels())))\n"
            "    print(name, table.abi_version)\n")
    # A fresh process: the registry of this one must not have imported them already.
    out = run_python(code, *sorted(modules), timeout=300)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.split("\n")[:-1]) == sorted(
        f"{name} {lib.ARGONISHCHE_KERNEL_ABI}" for name in modules)
    for name in modules:  # and here too, in-process
        module = importlib.import_module(name)
        assert int(module.ffi.cast("uintptr_t", module.lib.argonishche_kernels())) != 0


def test_required_backends_are_usable():
    """ARGONISHCHE_REQUIRE_BACKENDS lists every rung the CPU must run: all of them usable."""
    from argonishche.testing import required_backends
    required = required_backends()
    if not required:
        pytest.skip("ARGONISHCHE_REQUIRE_BACKENDS is not set: no backend is required here")
    states = {b.name: b for b in argonishche.backends()}
    for name in sorted(required):
        assert name in states, f"{name} is not registered"
        assert states[name].state in USABLE, f"{name}: {states[name].state}: {states[name].reason}"
