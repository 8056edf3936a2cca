"""The CPU gate: in-process CPUID/XGETBV (x86-64) or the auxiliary vector's HWCAP words
(Linux/aarch64) read through the feature table, user masking, and py-cpuinfo as a cross-check."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest
from argonishche import _features, _settings
from argonishche._trust import cpu_gate
from argonishche.exceptions import SettingError
from argonishche.hookspecs import CPU_FEATURE_NAMES

MACHINE = _features.arch_of(platform.machine())
X86_64_NAMES = [f.name for f in _features.FEATURES if f.arch == _features.X86_64]


class FakeCpu:
    """Stands in for the C probe: CPUID answers every leaf up to *max_leaf* with *bits* set
    (``{(leaf, register): mask}``), and XCR0 is *xcr0*; AT_HWCAP/AT_HWCAP2 are *hwcaps*
    (``{word: value}``) and the macOS sysctl flags set are *sysctls*."""

    def __init__(self, bits, xcr0, max_leaf=7, hwcaps=None, sysctls=()):
        self.bits, self.xcr0, self.max_leaf = bits, xcr0, max_leaf
        self.hwcaps, self.sysctls = hwcaps or {}, set(sysctls)
        self.hwcap_calls = []

    def argonishche_cpuid(self, leaf, subleaf, registers):
        if leaf > self.max_leaf:
            return 0
        for index, register in enumerate(("eax", "ebx", "ecx", "edx")):
            registers[index] = self.bits.get((leaf, register), 0)
        return 1

    def argonishche_xcr0(self):
        return self.xcr0

    def argonishche_hwcap(self, word):
        self.hwcap_calls.append(word)
        return self.hwcaps.get(word, 0)

    def argonishche_sysctl_flag(self, name):
        return int(name.decode() in self.sysctls)


def cpu_with(*names, xcr0=_features.XCR0_ZMM, max_leaf=7):
    bits = {}
    for name in names:
        where = _features.BY_NAME[name].probe
        bits[where.leaf, where.register] = bits.get((where.leaf, where.register), 0) \
            | 1 << where.bit
    return FakeCpu(bits, xcr0, max_leaf)


def arm_cpu_with(*names, other_bits=0):
    hwcaps = {1: other_bits, 2: other_bits}
    for name in names:
        where = _features.BY_NAME[name].probe
        hwcaps[where.word] |= 1 << where.bit
    return FakeCpu({}, 0, hwcaps=hwcaps,
                   sysctls={_features.BY_NAME[name].probe.sysctl for name in names})


@pytest.fixture
def x86_64(monkeypatch):
    monkeypatch.setattr(cpu_gate, "_machine", lambda: _features.X86_64)


@pytest.fixture
def aarch64(monkeypatch):
    monkeypatch.setattr(cpu_gate, "_machine", lambda: _features.AARCH64)
    monkeypatch.setattr(cpu_gate.sys, "platform", "linux")


@pytest.mark.parametrize("cpu, expected", [
    (cpu_with("sse2", "ssse3", "sse4_1"), {"sse2", "ssse3", "sse4_1"}),
    # The OS saves no ymm state: AVX and AVX2 are reported by CPUID but must not be used.
    (cpu_with("sse2", "ssse3", "sse4_1", "avx", "avx2", xcr0=0), {"sse2", "ssse3", "sse4_1"}),
    # ymm saved, zmm not: AVX-512 reported but unusable.
    (cpu_with(*X86_64_NAMES, xcr0=_features.XCR0_YMM),
     {"sse2", "ssse3", "sse4_1", "avx", "avx2"}),
    (cpu_with(*X86_64_NAMES), set(X86_64_NAMES)),
    # A CPU whose highest leaf is 1: leaf 7's bits are not asked for, whatever it would say.
    (cpu_with(*X86_64_NAMES, max_leaf=1), {"sse2", "ssse3", "sse4_1", "avx"}),
], ids=["sse41", "avx2-without-os-ymm", "avx512-without-os-zmm", "everything", "max-leaf-1"])
def test_probe_reads_cpuid_and_xcr0_through_the_table(monkeypatch, x86_64, cpu, expected):
    monkeypatch.setattr(cpu_gate, "lib", cpu)
    assert cpu_gate.probed_features() == expected


# HWCAP values QEMU 7.2 reports (tools/emulate_aarch64.py); all bits but ASIMD/SHA3 are noise.
CORTEX_A57_HWCAP, QEMU_MAX_HWCAP, QEMU_MAX_HWCAP2 = 0x8FB, 0xECFFFFFB, 0x7F877FFF


@pytest.mark.parametrize("hwcap, hwcap2, expected", [
    (CORTEX_A57_HWCAP, 0, {"asimd"}),
    (QEMU_MAX_HWCAP, QEMU_MAX_HWCAP2, {"asimd", "sha3"}),
    (0, 0, set()),
    # Only bit 17 of AT_HWCAP is SHA3: the same bit of AT_HWCAP2 is something else.
    (1 << 1, 1 << 17, {"asimd"}),
], ids=["cortex-a57", "qemu-max", "nothing", "sha3-bit-in-hwcap2"])
def test_probe_reads_hwcap_through_the_table(monkeypatch, aarch64, hwcap, hwcap2, expected):
    cpu = FakeCpu({}, 0, hwcaps={1: hwcap, 2: hwcap2})
    monkeypatch.setattr(cpu_gate, "lib", cpu)
    assert cpu_gate.probed_features() == expected
    assert set(cpu.hwcap_calls) == {1} and len(cpu.hwcap_calls) == 1  # one call per word used


def test_aarch64_probe_asks_no_cpuid_and_x86_asks_no_hwcap(monkeypatch, aarch64):
    class Refusing(FakeCpu):
        def argonishche_cpuid(self, *args):
            raise AssertionError("CPUID asked on aarch64")

        def argonishche_xcr0(self):
            raise AssertionError("XCR0 asked on aarch64")
    monkeypatch.setattr(cpu_gate, "lib", Refusing({}, 0, hwcaps={1: QEMU_MAX_HWCAP}))
    assert cpu_gate.probed_features() == {"asimd", "sha3"}
    monkeypatch.setattr(cpu_gate, "_machine", lambda: _features.X86_64)
    x86 = cpu_with("sse2")
    monkeypatch.setattr(cpu_gate, "lib", x86)
    assert cpu_gate.probed_features() == {"sse2"} and x86.hwcap_calls == []


def test_macos_reads_the_sysctl_names_of_the_rows(monkeypatch, aarch64):
    # The C side (sysctlbyname) is untested: this machine is not a Mac.  This checks only that
    # the gate asks the rows' names and reads the answers through them.
    monkeypatch.setattr(cpu_gate.sys, "platform", "darwin")
    monkeypatch.setattr(cpu_gate, "lib", FakeCpu({}, 0, sysctls={"hw.optional.AdvSIMD"}))
    assert cpu_gate.probed_features() == {"asimd"}
    monkeypatch.setattr(cpu_gate, "lib", arm_cpu_with("asimd", "sha3"))
    assert cpu_gate.probed_features() == {"asimd", "sha3"}


def test_an_architecture_without_rows_has_no_features(monkeypatch):
    monkeypatch.setattr(cpu_gate, "_machine", lambda: "riscv64")
    monkeypatch.setattr(cpu_gate, "lib", arm_cpu_with("asimd", "sha3", other_bits=2**32 - 1))
    assert cpu_gate.probed_features() == frozenset()


def test_a_feature_without_its_prerequisites_is_not_usable():
    # CPUID can report AVX2 while AVX is missing (masked by a hypervisor): AVX2 code needs both.
    assert cpu_gate.usable(frozenset({"sse2", "avx2"}), frozenset()) == {"sse2"}
    assert cpu_gate.usable(frozenset(X86_64_NAMES), frozenset({"ssse3"})) == {"sse2"}
    assert cpu_gate.usable(frozenset({"sha3"}), frozenset()) == frozenset()
    assert cpu_gate.usable(frozenset({"asimd", "sha3"}), frozenset({"asimd"})) == frozenset()


def test_probe_on_this_cpu_reports_only_table_names_and_a_closed_set():
    probed, usable = cpu_gate.probed_features(), cpu_gate.features()
    if MACHINE == _features.X86_64:
        assert "sse2" in probed  # part of the x86-64 baseline
    elif MACHINE == _features.AARCH64 and sys.platform in ("linux", "darwin"):
        assert "asimd" in probed  # in every ARMv8-A CPU these OSes run on
    else:
        assert probed == frozenset(), f"the feature table has no rows for {MACHINE}"
    assert probed <= set(CPU_FEATURE_NAMES)
    assert {_features.BY_NAME[name].arch for name in probed} <= {MACHINE}
    for name in usable:
        assert set(_features.BY_NAME[name].implies) <= usable, name


def test_probe_agrees_with_py_cpuinfo_on_this_host():
    # py-cpuinfo reads /proc/cpuinfo (the host) plus CPUID: it may claim more than we can use
    # (an emulator, OS-disabled state) but never less than the CPU running us reports.
    if os.environ.get("ARGONISHCHE_EXPECT_CPU_FEATURES") is not None and MACHINE != "x86_64":
        # QEMU 7.2 user mode shows the x86-64 host's /proc/cpuinfo to an aarch64 guest.
        pytest.skip("emulated non-x86 CPU: /proc/cpuinfo describes the host")
    flags, brand = cpu_gate.cpuinfo_flags()
    assert brand
    assert cpu_gate.probed_features() - {"avx", "avx2", "avx512f", "avx512vl", "avx512bw"} <= flags


@pytest.mark.parametrize("hidden, gone", [
    ("avx2", {"avx2", "avx512f", "avx512vl", "avx512bw"}),
    ("sse2", set(X86_64_NAMES)),
    ("ssse3,avx512bw", {"ssse3", "sse4_1", "avx", "avx2", "avx512f", "avx512vl", "avx512bw"}),
    ("sha3", {"sha3"}),
    ("asimd", {"asimd", "sha3"}),
])
def test_disabling_a_feature_also_hides_what_builds_on_it(hidden, gone):
    code = "from argonishche._trust import cpu_gate; print(' '.join(sorted(cpu_gate.features())))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"ARGONISHCHE_DISABLE_CPU_FEATURES": hidden, "PATH": ""},
                         timeout=60)
    assert out.returncode == 0, out.stderr
    usable = set(out.stdout.split())
    assert usable == cpu_gate.probed_features() - gone


def test_unknown_feature_name_is_a_setting_error_naming_the_known_ones():
    with pytest.raises(SettingError, match="ARGONISHCHE_DISABLE_CPU_FEATURES='avx1024': "
                                           "must be .*from: sse2, ssse3"):
        _settings.parse({"ARGONISHCHE_DISABLE_CPU_FEATURES": "avx1024"})
