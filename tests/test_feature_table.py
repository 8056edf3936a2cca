"""The CPU-feature table against the kernels: every compiled module records the target it was
compiled for, it matches what its descriptor declares, and the registry refuses one that was
compiled for more than it declares (which the CPU gate could not protect against)."""

from __future__ import annotations

import dataclasses
import pathlib
import re

import pytest

from argonishche import _backend_checks, _features, _registry, hookspecs
from argonishche.build import kernel_target
from support import REF_SOURCE, FakeEntryPoint, compiled_backend, make_registry
from support import plugin_registering

ROOT = pathlib.Path(__file__).resolve().parents[1]
KERNEL_SOURCES = sorted([*ROOT.glob("backends/*.c"), *ROOT.glob("backends/*.h"),
                         *ROOT.glob("plugins/*/src/*.c")])


def test_every_row_is_consistent():
    assert len(set(_features.NAMES)) == len(_features.FEATURES)
    assert len(_features.BY_COMPILER_TARGET) == len(_features.FEATURES)
    for feature in _features.FEATURES:
        assert set(feature.implies) <= set(_features.NAMES), feature
        assert feature.cpuid.register in ("eax", "ebx", "ecx", "edx")
        assert 0 <= feature.cpuid.bit < 32
        # A feature needs at least the OS state of what it builds on.
        for base in feature.implies:
            assert feature.xcr0 & _features.BY_NAME[base].xcr0 == _features.BY_NAME[base].xcr0
    assert hookspecs.CPU_FEATURE_NAMES == _features.NAMES


def test_compiler_target_round_trips_through_the_table():
    assert kernel_target({"sse4_1", "sse2", "ssse3"}) == "sse2,ssse3,sse4.1"
    assert _features.from_compiler_target("sse2,ssse3,sse4.1") == {"sse2", "ssse3", "sse4_1"}
    assert _features.from_compiler_target("avx2") == {"sse2", "ssse3", "sse4_1", "avx", "avx2"}
    assert _features.from_compiler_target("") == frozenset()
    with pytest.raises(ValueError, match="'fma', which is not a known CPU feature"):
        _features.from_compiler_target("avx2,fma")
    with pytest.raises(ValueError, match="unknown CPU features"):
        kernel_target({"avx3"})


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
    table = _backend_checks.kernel_table(entry.module)
    assert _backend_checks.compiled_for(table) == kernel_target(entry.backend.cpu_features)


@pytest.fixture(scope="module")
def overreaching_kernels(tmp_path_factory):
    """A real module compiled, with the plugin authors' helper, for AVX2 (it records that),
    under a descriptor that declares only SSE2."""
    with compiled_backend(tmp_path_factory.mktemp("overreaching"), "overreaching_kernels_mod",
                          REF_SOURCE.read_text(), name="overreach",
                          description="declares less than it uses",
                          cpu_features={"avx", "avx2"}, declared={"sse2"}) as backend:
        yield backend


def test_a_module_compiled_for_more_than_its_descriptor_declares_is_refused(
        overreaching_kernels):
    with pytest.warns(RuntimeWarning, match="beyond the declared cpu_features"):
        reg = make_registry(FakeEntryPoint("overreach", plugin_registering(overreaching_kernels)))
    record = {b.name: b for b in reg.report()}["overreach"]
    assert record.state == "load-failed"
    assert "compiled for 'avx,avx2', which uses avx, avx2, sse4_1, ssse3 beyond" in record.reason
    assert reg.selected_name("argon2") != "overreach"


def test_the_same_module_is_accepted_when_its_descriptor_is_honest(overreaching_kernels):
    honest = dataclasses.replace(overreaching_kernels, cpu_features=frozenset({"avx", "avx2"}))
    reg = make_registry(FakeEntryPoint("overreach", plugin_registering(honest)))
    record = {b.name: b for b in reg.report()}["overreach"]
    if record.state == "unsupported-cpu":
        pytest.skip(f"this CPU cannot run AVX2: {record.reason}")
    assert record.state == "selected"


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
    # backend forced, plugins are not imported at all: tests/test_bad_kernels.py.)
    with pytest.warns(RuntimeWarning, match="NULL argon2_fill_block"):
        reg = make_registry(FakeEntryPoint("nullkernel", plugin_registering(null_kernel_module)))
    record = {b.name: b for b in reg.report()}["nullkernel"]
    assert record.state == "load-failed" and "NULL argon2_fill_block" in record.reason
    assert reg.selected_name("argon2") == make_registry().selected_name("argon2")
