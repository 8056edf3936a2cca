"""The CPU gate: in-process CPUID/XGETBV, user masking, and py-cpuinfo as a cross-check."""

from __future__ import annotations

import subprocess
import sys

import pytest

from argonishche import _cpu
from argonishche.exceptions import ParameterError
from argonishche.hookspecs import CPU_FEATURE_NAMES


def test_probe_reports_only_known_names_and_x86_64_has_sse2():
    probed = _cpu.probed_features()
    assert probed <= set(CPU_FEATURE_NAMES)
    import platform
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert "sse2" in probed  # part of the x86-64 baseline


def test_probe_is_consistent_with_itself():
    # Feature ladder facts of every real CPU (and of QEMU's and SDE's models).
    probed = _cpu.probed_features()
    if "avx2" in probed:
        assert "avx" in probed
    if "avx512vl" in probed or "avx512bw" in probed:
        assert "avx512f" in probed


def test_probe_agrees_with_py_cpuinfo_on_this_host():
    # py-cpuinfo reads /proc/cpuinfo (the host) plus CPUID: it may claim more than we can use
    # (an emulator, OS-disabled state) but never less than the CPU running us reports.
    flags, brand = _cpu.cpuinfo_flags()
    assert brand
    assert _cpu.probed_features() - {"avx", "avx2", "avx512f", "avx512vl", "avx512bw"} <= flags


@pytest.mark.parametrize("hidden, gone", [
    ("avx2", {"avx2", "avx512f", "avx512vl", "avx512bw"}),
    ("sse2", set(CPU_FEATURE_NAMES)),
    ("ssse3,avx512bw", {"ssse3", "sse4_1", "avx", "avx2", "avx512f", "avx512vl", "avx512bw"}),
])
def test_disabling_a_feature_also_hides_what_builds_on_it(hidden, gone):
    code = "from argonishche import _cpu; print(' '.join(sorted(_cpu.features())))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"ARGONISHCHE_DISABLE_CPU_FEATURES": hidden, "PATH": ""},
                         timeout=60)
    assert out.returncode == 0, out.stderr
    usable = set(out.stdout.split())
    assert usable == _cpu.probed_features() - gone


def test_unknown_feature_name_is_an_error_naming_the_known_ones():
    with pytest.raises(ParameterError, match="avx1024.*known: sse2"):
        _cpu.disabled_features({"ARGONISHCHE_DISABLE_CPU_FEATURES": "avx1024"})
