"""What the registry refuses after vetting, with fake plugins: a backend the CPU gate rules out
(its kernel module never imported), a kernel module of another kernel ABI, kernels that fail
the self-test, and a third party's kernels that nothing can certify.
"""

from __future__ import annotations

import sys
import types

import pytest
from argonishche import hookspecs
from argonishche._core import lib
from argonishche._trust import vetting
from argonishche.exceptions import BackendError
from support import (
    REF_SOURCE,
    FakeEntryPoint,
    builtin_choice,
    compiled_backend,
    make_registry,
    plugin_registering,
    state_of,
)


def test_cpu_gate_runs_before_the_kernel_module_is_imported(monkeypatch):
    needs = hookspecs.Backend(name="future_isa", description="needs AVX-512BW",
                              kernel_module="module_that_does_not_exist",
                              cpu_features={"avx512bw"}, priority=99)
    monkeypatch.setattr(vetting.cpu_gate, "features", lambda: frozenset({"sse2"}))
    reg = make_registry(FakeEntryPoint("future_isa", plugin_registering(needs)))
    record = state_of(reg, "future_isa")
    assert record.state == "unsupported-cpu"
    assert "avx512bw" in record.reason
    assert reg.selected_name("argon2") == builtin_choice()


@pytest.mark.parametrize("abi", [0, 2])  # 2: before blake2b_compress took f1 (last_node_flag)
def test_wrong_kernel_abi_is_refused_before_any_kernel_runs(monkeypatch, abi):
    assert lib.ARGONISHCHE_KERNEL_ABI == 3
    stale = types.ModuleType("stale_kernels")
    stale.lib = types.SimpleNamespace(ARGONISHCHE_KERNEL_ABI=abi,
                                      argonishche_kernels=lambda: pytest.fail("called"))
    monkeypatch.setitem(sys.modules, "stale_kernels", stale)
    backend = hookspecs.Backend(name="stale", description="old wheel",
                                kernel_module="stale_kernels", priority=99)
    with pytest.warns(RuntimeWarning, match="ABI"):
        reg = make_registry(FakeEntryPoint("stale", plugin_registering(backend)))
    record = state_of(reg, "stale")
    assert record.state == "load-failed"
    assert f"built for kernel ABI {abi}" in record.reason and "reinstall" in record.reason
    assert reg.selected_name("argon2") == builtin_choice()


def test_backend_failing_its_self_test_is_excluded_with_a_warning(wrong_kernels):
    with pytest.warns(RuntimeWarning, match="failed its self-test"):
        reg = make_registry(FakeEntryPoint("wrong", plugin_registering(wrong_kernels)))
    record = state_of(reg, "wrong")
    assert record.state == "selftest-failed"
    assert "Argon2" in record.reason and "RFC 9106" in record.reason
    assert reg.selected_name("argon2") == builtin_choice()  # despite its priority 99


def test_forcing_a_backend_that_failed_its_self_test_is_an_error(wrong_kernels):
    with pytest.warns(RuntimeWarning):
        reg = make_registry(FakeEntryPoint("wrong", plugin_registering(wrong_kernels)),
                            environ={"ARGONISHCHE_BACKEND": "wrong"})
    with pytest.raises(BackendError,
                       match="wrong cannot be used: selftest-failed.*Available: .*ref"):
        reg.kernel_table("argon2")


@pytest.fixture(scope="module")
def third_party_ref(tmp_path_factory):
    """ref's kernels built as a third party's module: right, but not argonishche's own."""
    with compiled_backend(tmp_path_factory.mktemp("third_party"), "third_party_kernels_mod",
                          REF_SOURCE.read_text(), name="thirdparty",
                          description="ref's kernels, shipped by others") as backend:
        yield backend


def test_a_third_party_backend_is_certified_before_it_is_used(third_party_ref):
    # By priority (99), so that "selected" shows it is used once certified.
    reg = make_registry(FakeEntryPoint("thirdparty", plugin_registering(third_party_ref)),
                        environ={"ARGONISHCHE_SELECT": "priority"})
    record = state_of(reg, "thirdparty")
    assert record.state == "selected" and not record.builtin
    assert record.validation.startswith("self-test, certified")
    assert state_of(reg, "ref").builtin and state_of(reg, "ref").validation == "self-test"


def test_a_third_party_backend_is_not_used_when_nothing_can_certify_it(third_party_ref):
    with pytest.warns(RuntimeWarning, match="not certified: the ref backend"):
        reg = make_registry(FakeEntryPoint("thirdparty", plugin_registering(third_party_ref)),
                            environ={"ARGONISHCHE_DISABLE_BACKENDS": "ref"})
    assert state_of(reg, "thirdparty").state == "certification-failed"
    assert reg.selected_name("argon2") not in ("thirdparty", "ref")
