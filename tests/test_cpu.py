"""The CPU gate: in-process CPUID/XGETBV read through the feature table, user masking, and
py-cpuinfo as a cross-check."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from argonishche import _cpu, _features, _settings
from argonishche.exceptions import SettingError
from argonishche.hookspecs import CPU_FEATURE_NAMES

X86_64 = platform.machine().lower() in ("x86_64", "amd64")
ALL_REGISTERS = 0xFFFFFFFF


class FakeCpu:
    """Stands in for the C probe: CPUID answers every leaf up to *max_leaf* with *bits* set
    (``{(leaf, register): mask}``), and XCR0 is *xcr0*."""

    def __init__(self, bits, xcr0, max_leaf=7):
        self.bits, self.xcr0, self.max_leaf = bits, xcr0, max_leaf

    def argonishche_cpuid(self, leaf, subleaf, registers):
        if leaf > self.max_leaf:
            return 0
        for index, register in enumerate(("eax", "ebx", "ecx", "edx")):
            registers[index] = self.bits.get((leaf, register), 0)
        return 1

    def argonishche_xcr0(self):
        return self.xcr0


def cpu_with(*names, xcr0=_features.XCR0_ZMM, max_leaf=7):
    bits = {}
    for name in names:
        where = _features.BY_NAME[name].cpuid
        bits[where.leaf, where.register] = bits.get((where.leaf, where.register), 0) \
            | 1 << where.bit
    return FakeCpu(bits, xcr0, max_leaf)


@pytest.fixture
def x86_64(monkeypatch):
    monkeypatch.setattr(_cpu, "_machine", lambda: _features.X86_64)


@pytest.mark.parametrize("cpu, expected", [
    (cpu_with("sse2", "ssse3", "sse4_1"), {"sse2", "ssse3", "sse4_1"}),
    # The OS saves no ymm state: AVX and AVX2 are reported by CPUID but must not be used.
    (cpu_with("sse2", "ssse3", "sse4_1", "avx", "avx2", xcr0=0), {"sse2", "ssse3", "sse4_1"}),
    # ymm saved, zmm not: AVX-512 reported but unusable.
    (cpu_with(*_features.NAMES, xcr0=_features.XCR0_YMM),
     {"sse2", "ssse3", "sse4_1", "avx", "avx2"}),
    (cpu_with(*_features.NAMES), set(_features.NAMES)),
    # A CPU whose highest leaf is 1: leaf 7's bits are not asked for, whatever it would say.
    (cpu_with(*_features.NAMES, max_leaf=1), {"sse2", "ssse3", "sse4_1", "avx"}),
], ids=["sse41", "avx2-without-os-ymm", "avx512-without-os-zmm", "everything", "max-leaf-1"])
def test_probe_reads_cpuid_and_xcr0_through_the_table(monkeypatch, x86_64, cpu, expected):
    monkeypatch.setattr(_cpu, "lib", cpu)
    assert _cpu.probed_features() == expected


def test_a_feature_without_its_prerequisites_is_not_usable():
    # CPUID can report AVX2 while AVX is missing (masked by a hypervisor): AVX2 code needs both.
    assert _cpu.usable(frozenset({"sse2", "avx2"}), frozenset()) == {"sse2"}
    assert _cpu.usable(frozenset(_features.NAMES), frozenset({"ssse3"})) == {"sse2"}


def test_probe_on_this_cpu_reports_only_table_names_and_a_closed_set():
    if not X86_64:
        pytest.skip(f"the feature table has no rows for {platform.machine()} yet")
    probed, usable = _cpu.probed_features(), _cpu.features()
    assert "sse2" in probed  # part of the x86-64 baseline
    assert probed <= set(CPU_FEATURE_NAMES)
    for name in usable:
        assert set(_features.BY_NAME[name].implies) <= usable, name


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


def test_unknown_feature_name_is_a_setting_error_naming_the_known_ones():
    with pytest.raises(SettingError, match="ARGONISHCHE_DISABLE_CPU_FEATURES='avx1024': "
                                           "must be .*from: sse2, ssse3"):
        _settings.parse({"ARGONISHCHE_DISABLE_CPU_FEATURES": "avx1024"})
