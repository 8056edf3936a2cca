"""The registry's discovery of plugins, with fake ones: entry points imported, blocked or
deferred; plugins and backends refused (a hook that raises, a wrong type, an unknown hook, a
built-in name taken); the hook specifications and the entry-point reader; allocator plugins.

Fake entry points stand in for installed distributions (as pluggy's own tests do), so every
failure mode a broken wheel can have is exercised without installing anything.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest
from argonishche import _registry, _settings, hookspecs
from argonishche.exceptions import BackendError
from argonishche_backends.table import ALL_BUILTIN_BACKENDS, BUILTIN_BACKENDS
from support import (
    FakeEntryPoint,
    Pool,
    allocator_plugin,
    builtin_choice,
    make_registry,
    plugin_of,
    plugin_registering,
    state_of,
)


def test_builtin_ref_is_registered_through_its_entry_point():
    ref = state_of(_registry.get(), "ref")
    assert ref.distribution.startswith("argonishche ")
    assert ref.state in ("selected", "available")
    assert ref.selftest_ms is not None and ref.selftest_ms > 0


def test_plugin_that_fails_to_import_is_reported_and_others_work():
    broken = FakeEntryPoint("broken", error=ImportError("no module named _kernels"))
    with pytest.warns(RuntimeWarning, match="broken"):
        reg = make_registry(broken)
    record = plugin_of(reg, "broken")
    assert record.state == "failed"
    assert "no module named _kernels" in record.reason
    assert record.distribution == "fake-kernels 1.2"
    assert reg.selected_name("argon2") == builtin_choice()


def test_blocked_plugin_is_never_imported():
    ep = FakeEntryPoint("blockme", error=AssertionError("must not be imported"))
    reg = make_registry(ep, environ={"ARGONISHCHE_DISABLE_BACKENDS": "BlockMe"})
    assert not ep.loaded
    assert plugin_of(reg, "blockme").state == "blocked"
    assert "ARGONISHCHE_DISABLE_BACKENDS" in plugin_of(reg, "blockme").reason


def test_a_distribution_named_in_disable_backends_is_never_imported():
    ep = FakeEntryPoint("anything", error=AssertionError("must not be imported"),
                        dist=("Fancy_Kernels", "2.0"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the name is known: no "names nothing" warning
        reg = make_registry(ep, environ={"ARGONISHCHE_DISABLE_BACKENDS": "fancy-kernels"})
    assert not ep.loaded and plugin_of(reg, "anything").state == "blocked"


#: A built-in backend built for this machine, and one built only for another architecture.
BUILT_HERE = BUILTIN_BACKENDS[-1].name
BUILT_ELSEWHERE = next(row.name for row in ALL_BUILTIN_BACKENDS if row not in BUILTIN_BACKENDS)


@pytest.mark.parametrize("name", [BUILT_HERE, BUILT_ELSEWHERE])
def test_an_entry_point_named_like_a_builtin_backend_is_refused_unimported(name):
    # Every built-in name is reserved on every architecture: on aarch64 no plugin is "avx2".
    impostor = hookspecs.Backend(name=name, description="takes over", kernel_module="nope",
                                 priority=99)
    ep = FakeEntryPoint(name, plugin_registering(impostor), dist=("evil", "6.6.6"))
    with pytest.warns(RuntimeWarning, match="belongs to a built-in backend"):
        reg = make_registry(ep)
    assert not ep.loaded
    refused = [p for p in reg.plugins if p.name == name and p.distribution == "evil 6.6.6"]
    assert [p.state for p in refused] == ["failed"]
    # The backend of that name, where one is built here, is still argonishche's own.
    records = [b for b in reg.report() if b.name == name and b.distribution != "evil 6.6.6"]
    assert [b.distribution.split()[0] for b in records] == (
        ["argonishche"] if name == BUILT_HERE else [])


def test_disabled_backend_is_blocked_and_its_kernel_module_never_imported():
    never = hookspecs.Backend(name="never", description="must not load",
                              kernel_module="module_that_must_not_be_imported", priority=99)
    # The plugin's entry point is named otherwise, and it declares nothing, so only the backend
    # is blocked, and the plugin's author is told how to let users block it before it is imported.
    with pytest.warns(RuntimeWarning, match="plugin 'kernels-of-never' from fake-kernels 1.2 "
                                            "registers backend never under another name: "
                                            "declare it in its distribution's "
                                            "argonishche.backends entry points .or name its "
                                            "entry point 'never'."):
        reg = make_registry(FakeEntryPoint("kernels-of-never", plugin_registering(never)),
                            environ={"ARGONISHCHE_DISABLE_BACKENDS": "Never"})
    record = state_of(reg, "never")
    assert record.state == "blocked" and "ARGONISHCHE_DISABLE_BACKENDS" in record.reason
    assert "module_that_must_not_be_imported" not in sys.modules
    assert reg.selected_name("argon2") == builtin_choice()


def test_unknown_name_to_disable_is_a_warning_listing_the_known_ones():
    with pytest.warns(RuntimeWarning, match=r"DISABLE_BACKENDS names turbo, which no installed "
                                            r"plugin provides; known backends, plugins and "
                                            r"distributions: .*avx2, .*ref, sse2"):
        make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": "turbo,ref"})


def test_hook_that_raises_is_reported_and_others_work():
    class Raising:
        @hookspecs.hookimpl
        def argonishche_register_backends(self, register):
            raise RuntimeError("plugin bug")
    with pytest.warns(RuntimeWarning, match="plugin bug"):
        reg = make_registry(FakeEntryPoint("raising", Raising()))
    assert plugin_of(reg, "raising").state == "failed"
    assert reg.selected_name("blake2b") == builtin_choice("blake2b")


def test_registering_something_that_is_not_a_backend_is_reported():
    with pytest.warns(RuntimeWarning, match="not an argonishche.Backend"):
        reg = make_registry(FakeEntryPoint("wrongtype", plugin_registering("ref")))
    assert plugin_of(reg, "wrongtype").state == "failed"


def test_plugin_with_unknown_hook_fails_validation_and_is_unregistered():
    class FromTheFuture:
        @hookspecs.hookimpl
        def argonishche_register_time_machines(self, register):
            pass
    with pytest.warns(RuntimeWarning, match="future"):
        reg = make_registry(FakeEntryPoint("future", FromTheFuture()))
    assert plugin_of(reg, "future").state == "failed"


@pytest.mark.parametrize("name", [BUILT_HERE, BUILT_ELSEWHERE])
def test_a_backend_registered_under_a_builtin_name_by_a_plugin_is_refused(name):
    # The entry point is named otherwise, so it is imported; its backend still may not take
    # a built-in name, even one not built for this machine (no aarch64 plugin is "avx2").
    twin = hookspecs.Backend(name=name, description="an impostor",
                             kernel_module=f"argonishche_backends._{name}")
    with pytest.warns(RuntimeWarning, match=f"backend '{name}' not used: the name belongs to a "
                                            f"built-in backend of argonishche"):
        reg = make_registry(FakeEntryPoint("twin", plugin_registering(twin)))
    assert [b.distribution.split()[0] for b in reg.report() if b.name == name] == (
        ["argonishche"] if name == BUILT_HERE else [])
    assert all(b.description != "an impostor" for b in reg.report())
    duplicate = plugin_of(reg, "twin")
    assert duplicate.state == "failed" and duplicate.distribution == "fake-kernels 1.2"


@pytest.mark.filterwarnings("ignore:.*kernel module nope")
def test_one_distributions_second_registration_of_a_backend_name_is_refused():
    first = hookspecs.Backend(name="dup", description="first", kernel_module="nope")
    second = hookspecs.Backend(name="dup", description="second", kernel_module="nope")
    with pytest.warns(RuntimeWarning, match="backend 'dup' not used: already registered by "
                                            "plugin 'dup' from fake-kernels 1.2"):
        reg = make_registry(FakeEntryPoint("dup", plugin_registering(first)),
                            FakeEntryPoint("dup_again", plugin_registering(second)))
    assert state_of(reg, "dup").description == "first"
    assert plugin_of(reg, "dup_again").state == "failed"


def test_backend_descriptor_validates_its_fields():
    with pytest.raises(ValueError, match="unknown CPU features"):
        hookspecs.Backend(name="x", description="", kernel_module="m", cpu_features={"avx3"})
    with pytest.raises(ValueError, match="must be"):
        hookspecs.Backend(name="bad name", description="", kernel_module="m")


def test_every_hookspec_is_documented_and_exercised():
    """Meta-test in datasette's manner: each hook documents its arguments and implementers."""
    import inspect
    specs = [f for name, f in vars(hookspecs).items() if name.startswith("argonishche_")]
    assert specs, "no hookspecs found"
    for spec in specs:
        doc = inspect.getdoc(spec) or ""
        assert "Implemented by:" in doc, spec.__name__
        for parameter in inspect.signature(spec).parameters:
            assert f":param {parameter}:" in doc, (spec.__name__, parameter)
        assert spec.__name__ in Path(__file__).read_text(), f"{spec.__name__} has no test"


@pytest.mark.parametrize("group", ["argonishche", "console_scripts"])
def test_lean_entry_point_reader_agrees_with_importlib_metadata(group):
    from importlib.metadata import entry_points as reference

    from argonishche._entry_points import entry_points

    def canonical(name):
        return name.lower().replace("_", "-")
    ours = sorted((ep.name, ep.value, canonical(ep.dist.name), ep.dist.version)
                  for ep in entry_points(group))
    theirs = sorted((ep.name, ep.value, canonical(ep.dist.name), ep.dist.version)
                    for ep in reference(group=group))
    assert ours == theirs
    if group == "argonishche":
        assert ("ref", "argonishche_backends:ref") in [(name, value) for name, value, *_ in ours]


def test_allocator_plugins_register_through_argonishche_register_allocators():
    class Pool(hookspecs.Allocator):
        name, description = "pool", "a test pool"

        def acquire(self, size):
            return bytearray(size + 63)

    class Plugin:
        @hookspecs.hookimpl
        def argonishche_register_allocators(self, register):
            register(Pool())
    reg = make_registry(FakeEntryPoint("pool", Plugin()))
    assert reg.allocator("pool").description == "a test pool"
    assert reg.allocator().name == _settings.DEFAULT_ALLOCATOR
    with pytest.raises(BackendError, match="allocator 'nope'.*Registered: .*pool"):
        reg.allocator("nope")


def test_a_forced_built_in_backend_imports_no_plugin_until_an_allocator_needs_one():
    slow = FakeEntryPoint("slow", error=AssertionError("must not be imported while forced"))
    reg = make_registry(slow, environ={"ARGONISHCHE_BACKEND": "ref"})
    assert not slow.loaded and reg.selected_name("argon2") == "ref"
    assert plugin_of(reg, "slow").state == "deferred"
    assert reg.allocator("arena").name == "arena"  # built in: still nothing imported
    assert not slow.loaded


def test_a_deferred_plugin_is_imported_when_its_allocator_is_asked_for():
    pool = Pool("pool")
    ep = FakeEntryPoint("pool", allocator_plugin(pool))
    reg = make_registry(ep, environ={"ARGONISHCHE_BACKEND": "ref"})
    assert not ep.loaded
    assert reg.allocator("pool") is pool
    assert ep.loaded and plugin_of(reg, "pool").state == "loaded"
    with pytest.raises(BackendError, match="allocator 'nope'"):
        reg.allocator("nope")
