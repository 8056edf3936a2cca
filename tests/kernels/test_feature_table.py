"""The CPU-feature table against the kernels: every compiled module records the target it was
compiled for, it matches what its descriptor declares, and the registry refuses one that was
compiled for more than it declares (which the CPU gate could not protect against)."""

from __future__ import annotations

import pathlib
import platform
import re

import pytest
from argonishche import _features, _record, _registry, hookspecs
from argonishche._trust import vetting
from argonishche.build import kernel_target
from support import REF_SOURCE, FakeEntryPoint, compiled_backend, make_registry, plugin_registering

ROOT = pathlib.Path(__file__).resolve().parents[2]
MACHINE = _features.arch_of(platform.machine())
KERNEL_SOURCES = sorted([*ROOT.glob("backends/*.c"), *ROOT.glob("backends/*.h"),
                         *ROOT.glob("plugins/*/src/*.c")])


def test_every_row_is_consistent():
    assert len(set(_features.NAMES)) == len(_features.FEATURES)
    assert len(_features.BY_COMPILER_TARGET) == len(_features.FEATURES)
    for feature in _features.FEATURES:
        assert set(feature.implies) <= set(_features.NAMES), feature
        assert feature.arch in _features.ARCHES, feature
        # One probe kind per architecture, and what it builds on is of the same architecture.
        assert {_features.BY_NAME[base].arch for base in feature.implies} <= {feature.arch}
        # One comma-separated term: the build joins the terms of several features with commas.
        assert feature.compiler_target and "," not in feature.compiler_target, feature
        if feature.arch == _features.X86_64:
            assert isinstance(feature.probe, _features.Cpuid), feature
            assert feature.probe.register in ("eax", "ebx", "ecx", "edx")
            assert 0 <= feature.probe.bit < 32
        else:
            assert isinstance(feature.probe, _features.Hwcap), feature
            assert feature.probe.word in (1, 2) and 0 <= feature.probe.bit < 64
            assert feature.probe.sysctl.startswith("hw.optional."), feature
            assert feature.xcr0 == 0, feature
        # A feature needs at least the OS state of what it builds on.
        for base in feature.implies:
            assert feature.xcr0 & _features.BY_NAME[base].xcr0 == _features.BY_NAME[base].xcr0
    assert hookspecs.CPU_FEATURE_NAMES == _features.NAMES


def test_aarch64_rows_are_linux_hwcap_bits():
    # arch/arm64/include/uapi/asm/hwcap.h: HWCAP_ASIMD (1 << 1), HWCAP_SHA3 (1 << 17).
    assert _features.BY_NAME["asimd"].probe[:2] == (1, 1)
    assert _features.BY_NAME["sha3"].probe[:2] == (1, 17)
    assert _features.closure({"sha3"}) == {"asimd", "sha3"}


@pytest.mark.parametrize("machine, arch", [
    ("x86_64", "x86_64"), ("AMD64", "x86_64"), ("aarch64", "aarch64"), ("arm64", "aarch64"),
    ("ARM64", "aarch64"), ("riscv64", "riscv64")])
def test_machine_names_map_to_table_arches(machine, arch):
    assert _features.arch_of(machine) == arch


@pytest.mark.parametrize("platform_tag, arch", [
    ("linux-x86_64", "x86_64"), ("linux-aarch64", "aarch64"), ("macosx-11.0-arm64", "aarch64"),
    ("macosx-10.9-x86_64", "x86_64"), ("win-amd64", "x86_64"), ("win-arm64", "aarch64"),
    ("win32", "x86"), ("linux-i686", "i686"), ("linux-riscv64", "riscv64"),
    ("macosx-10.9-universal2", "universal2")])
def test_build_platforms_map_to_table_arches(platform_tag, arch):
    assert _features.arch_of_platform(platform_tag) == arch


def test_compiler_target_round_trips_through_the_table():
    assert kernel_target({"sse4_1", "sse2", "ssse3"}) == "sse2,ssse3,sse4.1"
    assert _features.from_compiler_target("sse2,ssse3,sse4.1") == {"sse2", "ssse3", "sse4_1"}
    assert _features.from_compiler_target("avx2") == {"sse2", "ssse3", "sse4_1", "avx", "avx2"}
    assert _features.from_compiler_target("") == frozenset()
    with pytest.raises(ValueError, match="'fma', which is not a known CPU feature"):
        _features.from_compiler_target("avx2,fma")
    with pytest.raises(ValueError, match="unknown CPU features"):
        kernel_target({"avx3"})
    # aarch64: GCC 12 compiles arm_neon.h's SHA3 intrinsics only for armv8.2-a+sha3 or more.
    assert kernel_target({"sha3", "asimd"}) == "+simd,arch=armv8.2-a+sha3"
    assert _features.from_compiler_target("arch=armv8.2-a+sha3") == {"asimd", "sha3"}
    with pytest.raises(ValueError, match="different architectures"):
        kernel_target({"sse2", "asimd"})


def test_a_backend_is_built_only_for_its_own_architecture(monkeypatch):
    from argonishche import build
    monkeypatch.setattr(build, "target_arch", lambda: "aarch64")
    build.backend_ffibuilder("m._neon", ["neon.c"], cpu_features={"asimd"})
    with pytest.raises(ValueError, match="sse2 are x86_64 features, and this build is for "
                                         "aarch64"):
        build.backend_ffibuilder("m._sse2", ["sse2.c"], cpu_features={"sse2"})
    monkeypatch.setattr(build, "target_arch", lambda: "riscv64")
    build.backend_ffibuilder("m._ref", ["ref.c"])  # a portable one builds anywhere


def test_kernel_files_take_their_target_only_from_the_build():
    # A target written in a kernel file would not be recorded in its table: the registry could
    # not see it, and the CPU gate would not check it.
    assert KERNEL_SOURCES
    for path in KERNEL_SOURCES:
        text = path.read_text()
        assert not re.search(r"#\s*pragma\s+(GCC|clang)\s+(target|attribute)", text), path
        assert "__attribute__((target" not in text.replace(" ", ""), path


@pytest.mark.parametrize("name", [b.name for b in _registry.get().report()])
def test_each_loaded_module_was_compiled_for_exactly_its_declared_features(name):
    entry = _registry.get().entries[name]
    if entry.module is None:
        pytest.skip(f"backend {name} is {entry.state}: {entry.reason}")
    table = vetting.kernel_table(entry.module)
    assert vetting.compiled_for(table) == kernel_target(entry.backend.cpu_features)


# Per architecture: (compiled for, declared, what the refusal says).
OVERREACH = {
    "x86_64": ({"avx", "avx2"}, {"sse2"},
               "compiled for 'avx,avx2', which uses avx, avx2, sse4_1, ssse3 beyond"),
    "aarch64": ({"asimd", "sha3"}, {"asimd"},
                "compiled for '+simd,arch=armv8.2-a+sha3', which uses sha3 beyond"),
}


@pytest.fixture(scope="module")
def overreaching_kernels(tmp_path_factory):
    """A real module compiled, with the plugin authors' helper, for AVX2 (aarch64: SHA3; it
    records that), under a descriptor that declares only SSE2 (ASIMD)."""
    if MACHINE not in OVERREACH:
        pytest.skip(f"no CPU features to compile for on {MACHINE}")
    compiled_for, declared, _ = OVERREACH[MACHINE]
    with compiled_backend(tmp_path_factory.mktemp("overreaching"), "overreaching_kernels_mod",
                          REF_SOURCE.read_text(), name="overreach",
                          description="declares less than it uses",
                          cpu_features=compiled_for, declared=declared) as backend:
        yield backend


def test_a_module_compiled_for_more_than_its_descriptor_declares_is_refused(
        overreaching_kernels):
    with pytest.warns(RuntimeWarning, match="beyond the declared cpu_features"):
        reg = make_registry(FakeEntryPoint("overreach", plugin_registering(overreaching_kernels)))
    record = {b.name: b for b in reg.report()}["overreach"]
    assert record.state == "load-failed"
    assert OVERREACH[MACHINE][2] in record.reason
    assert reg.selected_name("argon2") != "overreach"


def test_the_same_module_is_accepted_when_its_descriptor_is_honest(overreaching_kernels):
    honest = _record.replace(overreaching_kernels,
                             cpu_features=frozenset(OVERREACH[MACHINE][0]))
    reg = make_registry(FakeEntryPoint("overreach", plugin_registering(honest)))
    record = {b.name: b for b in reg.report()}["overreach"]
    if record.state == "unsupported-cpu":
        pytest.skip(f"this CPU cannot run {sorted(honest.cpu_features)}: {record.reason}")
    assert record.state in ("selected", "available") and record.reason == ""


@pytest.fixture(scope="module")
def null_kernel_module(tmp_path_factory):
    """A real module whose table has a NULL Argon2 kernel (its BLAKE2b one is ref's)."""
    source = REF_SOURCE.read_text()
    define = re.search(r"ARGONISHCHE_DEFINE_KERNELS\((\w+), (\w+)\)", source)
    assert define
    broken = source.replace(define.group(0),
                            f"ARGONISHCHE_DEFINE_KERNELS({define.group(1)}, NULL)")
    with compiled_backend(tmp_path_factory.mktemp("null_kernel"), "null_kernel_mod", broken,
                          name="nullkernel", description="G is NULL") as backend:
        yield backend


def test_a_null_kernel_is_refused_before_anything_calls_it(null_kernel_module):
    # Before: the self-test called it and the process died with SIGSEGV.  (With a built-in
    # backend forced, plugins are not imported at all: tests/trust/test_bad_kernels.py.)
    with pytest.warns(RuntimeWarning, match="NULL argon2_fill_block"):
        reg = make_registry(FakeEntryPoint("nullkernel", plugin_registering(null_kernel_module)))
    record = {b.name: b for b in reg.report()}["nullkernel"]
    assert record.state == "load-failed" and "NULL argon2_fill_block" in record.reason
    assert reg.selected_name("argon2") == make_registry().selected_name("argon2")
