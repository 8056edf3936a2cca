"""Discovery, the CPU gate, the ABI check, the self-test and selection, with fake plugins.

Fake entry points stand in for installed distributions (as pluggy's own tests do), so every
failure mode a broken wheel can have is exercised without installing anything.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import types
import warnings
from pathlib import Path

import argonishche
import pytest
from argonishche import _process_registry, _registry, _selection, _settings, hookspecs, testing
from argonishche._core import lib
from argonishche._trust import vetting
from argonishche.exceptions import BackendError, SettingError
from argonishche_backends.table import ALL_BUILTIN_BACKENDS, BUILTIN_BACKENDS
from support import (
    REF_SOURCE,
    FakeEntryPoint,
    Pool,
    allocator_plugin,
    builtin_entry_points,
    compiled_backend,
    make_registry,
    plugin_registering,
    timings_where,
)

SMALL_COSTS = dict(time_cost=1, memory_cost=32, parallelism=1)



def builtin_choice(algorithm="argon2"):
    """What the built-in backends alone select on this CPU."""
    return make_registry().selected_name(algorithm)


def state_of(reg, name):
    return {b.name: b for b in reg.report()}[name]


def plugin_of(reg, name):
    """The record of the plugin (entry point) *name*; there must be exactly one."""
    records = [p for p in reg.plugins if p.name == name]
    assert len(records) == 1, reg.plugins
    return records[0]


def test_builtin_ref_is_registered_through_its_entry_point():
    ref = state_of(_registry.get(), "ref")
    assert ref.distribution.startswith("argonishche ")
    assert ref.state in ("selected", "available")
    assert ref.selftest_ms is not None and ref.selftest_ms > 0


def test_by_priority_the_usable_backend_with_the_highest_priority_is_selected():
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "priority"})
    usable = [b for b in reg.report() if b.state in ("selected", "available")]
    best = max(usable, key=lambda b: (b.priority, b.name))
    assert reg.selected_name("argon2") == best.name
    assert reg.selected_name("blake2b") == best.name
    with pytest.raises(ValueError, match="algorithm"):
        argonishche.selected_backend("sha3")


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


@pytest.fixture(scope="module")
def wrong_kernels(tmp_path_factory):
    """A real compiled backend, built with the plugin authors' helper, whose G is subtly wrong."""
    source = REF_SOURCE.read_text()
    rotation = "b = argonishche_rotr64(b ^ c, 63);"
    assert rotation in source
    with compiled_backend(tmp_path_factory.mktemp("wrong_kernels"), "wrong_kernels_mod",
                          source.replace(rotation, rotation.replace("63", "62")), name="wrong",
                          description="G with one rotation off") as backend:
        yield backend


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


def test_forcing_an_unknown_backend_lists_what_is_registered():
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "nosuch"})
    with pytest.raises(SettingError,
                       match=r"ARGONISHCHE_BACKEND='nosuch': must be a registered backend.*ref \("):
        reg.selected_name("argon2")


def test_forcing_an_unsupported_backend_says_why(monkeypatch):
    monkeypatch.setattr(vetting.cpu_gate, "features", lambda: frozenset())
    needs = hookspecs.Backend(name="vec", description="SSE2", kernel_module="nope",
                              cpu_features={"sse2"}, priority=5)
    reg = make_registry(FakeEntryPoint("vec", plugin_registering(needs)),
                        environ={"ARGONISHCHE_BACKEND": "vec"})
    with pytest.raises(BackendError,
                       match="vec cannot be used: unsupported-cpu: this CPU lacks sse2"):
        reg.kernel_table("blake2b")


def test_forcing_a_usable_backend_selects_it_over_priority():
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "REF"})
    assert reg.selected_name("argon2") == "ref"
    assert state_of(reg, "ref").selected_for == ("argon2", "blake2b")


def test_no_backend_at_all_is_a_clear_error():
    everything = ",".join(b.name for b in make_registry().report())
    reg = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": everything})
    with pytest.raises(BackendError, match="no usable backend"):
        reg.kernel_table("argon2")


def test_per_call_backend_must_be_usable():
    with pytest.raises(BackendError, match="nosuch.*no such backend.*Available: "):
        argonishche.argon2_hash(b"pw", b"saltsalt", memory_cost=8, parallelism=1,
                                backend="nosuch")


def test_registry_starts_once_under_concurrent_first_use(monkeypatch):
    monkeypatch.setattr(_process_registry, "_instance", None)
    seen, barrier = [], threading.Barrier(8)

    def first_use():
        barrier.wait()
        seen.append(_registry.get())
    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # One registry is built.  A thread that asked while the builder ran plugin code (with
    # plugins installed: tox -e plugins) got the provisional one of the built-ins instead of
    # waiting (see argonishche._registry), itself made once per build.
    final = _registry.get()
    assert len(seen) == 8 and not final.provisional
    assert all(r is final or r.provisional for r in seen)
    assert len({id(r) for r in seen if r.provisional}) <= 1


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


def run_python(code, **env):
    import os
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)


def test_env_force_selects_the_named_backend_in_a_fresh_process():
    out = run_python("import argonishche as a; print(a.selected_backend('argon2'), "
                     "a.selected_backend('blake2b'))", ARGONISHCHE_BACKEND="ref")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ref", "ref"]


def test_env_force_unknown_name_fails_loudly_in_a_fresh_process():
    out = run_python("import argonishche as a; a.argon2_hash(b'p', b'saltsalt', memory_cost=8,"
                     " parallelism=1)", ARGONISHCHE_BACKEND="turbo")
    assert out.returncode != 0
    assert "SettingError: ARGONISHCHE_BACKEND='turbo'" in out.stderr and "ref" in out.stderr


def test_env_disable_blocks_builtin_plugins_in_a_fresh_process():
    # Every installed plugin named: the built-ins are registered (as blocked), other plugins not
    # imported, their declared backends (argonishche.backends) listed as blocked.
    from argonishche._entry_points import entry_points

    builtin = sorted(row.name for row in BUILTIN_BACKENDS)
    declared = {ep.name for ep in entry_points("argonishche.backends")}
    everything = sorted({*builtin, *(ep.name for ep in builtin_entry_points())})
    code = ("import argonishche as a\n"
            "print(sorted(b.name for b in a.backends() if b.state == 'blocked'))\n"
            "a.blake2b(b'x').digest()")
    out = run_python(code, ARGONISHCHE_DISABLE_BACKENDS=",".join(everything))
    assert out.stdout.strip() == str(sorted({*builtin, *declared}))
    assert out.returncode != 0 and "no usable backend" in out.stderr
    out = run_python(code.replace("a.blake2b(b'x').digest()", "print(a.selected_backend())"),
                     ARGONISHCHE_DISABLE_BACKENDS="ref")
    expected = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": "ref"}
                             ).selected_name("argon2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["['ref']", expected]


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


def test_measured_selection_is_what_the_policy_says_on_this_cpu(install):
    reg = install(make_registry(environ={"ARGONISHCHE_SELECT": "measure"}))
    usable = {b.name for b in reg.report() if b.state in ("selected", "available")}
    for algorithm in _registry.ALGORITHMS:
        choice = reg.choices[algorithm]
        assert choice.how == "measured" and set(choice.ns_per_kib) == usable
        assert all(ns > 0 for ns in choice.ns_per_kib.values())
        assert set(choice.noise) == usable and all(0 <= n < 1 for n in choice.noise.values())
        assert choice.backend in _selection.ties(choice.ns_per_kib, choice.noise)
        assert choice.backend == testing.expected_backend(algorithm)


def test_each_algorithm_takes_the_backend_measured_fastest_not_the_ladders(monkeypatch,
                                                                           install):
    by_priority = [b.name for b in make_registry(environ={"ARGONISHCHE_SELECT": "priority"},
                                                 installed=False).report()
                   if b.state in ("selected", "available")]
    if len(by_priority) < 2:
        pytest.skip(f"only {by_priority} can run here: nothing to choose between")
    highest, lowest = by_priority[0], by_priority[-1]
    monkeypatch.setattr(_selection, "sample",
                        timings_where({"blake2b": lowest, "argon2": highest}))
    reg = install(make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False))
    assert (reg.selected_name("blake2b"), reg.selected_name("argon2")) == (lowest, highest)
    assert reg.choices["blake2b"].why.startswith("the fastest: 2.00x faster than ")
    why = reg.choices["blake2b"].why
    assert f"2.00x faster than {highest}" in why and "the ladder's pick" in why
    assert reg.kernel_table("blake2b") is reg.entries[lowest].table
    assert reg.kernel_table("argon2") is reg.entries[highest].table
    # Both tables hash together (Argon2's H0 and H' run on the BLAKE2b table): the right tags.
    assert argonishche.argon2_hash(b"password", b"somesalt", **SMALL_COSTS) == \
        argonishche.argon2_hash(b"password", b"somesalt", backend="ref", **SMALL_COSTS)
    assert argonishche.blake2b(b"abc").digest() == hashlib.blake2b(b"abc").digest()


def test_within_the_noise_the_ladder_decides(monkeypatch):
    monkeypatch.setattr(_selection, "sample", lambda entry, algorithm, scratch: 100.0)
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False)
    ladder = max((b for b in reg.report() if b.state in ("selected", "available")),
                 key=lambda b: (b.priority, b.name)).name
    for algorithm in _registry.ALGORITHMS:
        assert reg.selected_name(algorithm) == ladder
        assert "the ladder decides among them" in reg.choices[algorithm].why


def test_calibrate_keeps_a_forced_backend_and_reports_timings():
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "ref"})
    timings = reg.calibrate()
    assert set(timings) == set(_registry.ALGORITHMS)
    assert all(ns > 0 for per_backend in timings.values() for ns in per_backend.values())
    assert reg.selected_name("argon2") == reg.selected_name("blake2b") == "ref"
    assert {c.how for c in reg.choices.values()} == {"forced"}


def test_unknown_selection_mode_is_an_error_naming_the_variable():
    with pytest.raises(SettingError, match=r"ARGONISHCHE_SELECT='fastest-please': must be "
                                           r"auto \(measure once per CPU"):
        make_registry(environ={"ARGONISHCHE_SELECT": "fastest-please"})


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
