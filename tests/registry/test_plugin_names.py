"""Names: who may register a backend name, what forcing one says when its plugin failed,
``argonishche.plugins()``, and the built-ins loaded through their own entry points.

Fake entry points stand in for installed distributions (tests/support.py); a kernel module
named here that must never be imported does not exist, so importing it would also fail loudly.
"""

from __future__ import annotations

import sys
import warnings

import argonishche
import pytest
from argonishche import _discovery, _info, _record, _registry, hookspecs
from argonishche._version import __version__
from argonishche.exceptions import BackendError, SettingError
from argonishche_backends.table import ALL_BUILTIN_BACKENDS, BUILTIN_BACKENDS
from support import FakeEntryPoint, make_registry, own_entry_points, plugin_registering

# The squatter's entry point is not named after its backend, and is told so: expected here.
pytestmark = pytest.mark.filterwarnings("ignore:.*under another name:RuntimeWarning")

SQUATTER = ("squatter-kernels", "0.1")
REAL = ("scalar2-kernels", "1.0")


def scalar2(module: str, description: str = "") -> hookspecs.Backend:
    return hookspecs.Backend(name="scalar2", description=description or module,
                             kernel_module=module, priority=50)


def squatter_and_real():
    """The squatter's entry point sorts first ("aaa" < "scalar2"), as in the issue."""
    squatter = FakeEntryPoint("aaa", plugin_registering(scalar2("squatter_module_never_imported")),
                              dist=SQUATTER)
    real = FakeEntryPoint("scalar2", plugin_registering(scalar2("real_module_never_imported")),
                          dist=REAL)
    return squatter, real


def records_named(reg, name):
    return [b for b in reg.report() if b.name == name]


def plugin_of(reg, name, dist):
    records = [p for p in reg.plugins if p.name == name and p.distribution == " ".join(dist)]
    assert len(records) == 1, reg.plugins
    return records[0]


# ---- two distributions, one backend name ----------------------------------------------------


def test_two_distributions_registering_one_backend_name_are_both_refused():
    with pytest.warns(RuntimeWarning) as caught:
        reg = make_registry(*squatter_and_real())
    conflict = [str(w.message) for w in caught if "registered by" in str(w.message)]
    assert len(conflict) == 1, [str(w.message) for w in caught]
    for name in ("plugin 'aaa' from squatter-kernels 0.1", "plugin 'scalar2' from "
                 "scalar2-kernels 1.0", "ARGONISHCHE_DISABLE_BACKENDS=squatter-kernels or "
                 "=scalar2-kernels"):
        assert name in conflict[0]
    both = records_named(reg, "scalar2")
    assert sorted(b.distribution for b in both) == ["scalar2-kernels 1.0", "squatter-kernels 0.1"]
    assert {b.state for b in both} == {"name-conflict"} == {_discovery.NAME_CONFLICT}
    for record in both:
        other = next(b for b in both if b is not record)
        assert f"from {other.distribution} also registers a backend 'scalar2'" in record.reason
    assert "squatter_module_never_imported" not in sys.modules
    assert "real_module_never_imported" not in sys.modules
    assert reg.selected_name("argon2") != "scalar2"
    assert plugin_of(reg, "aaa", SQUATTER).state == "failed"
    assert "registers one of that name too" in plugin_of(reg, "scalar2", REAL).reason


def test_the_entry_point_order_does_not_decide_either_way():
    squatter, real = squatter_and_real()
    squatter.name = "zzz"  # now sorting after the real one: still both refused
    with pytest.warns(RuntimeWarning, match="plugin 'zzz' from squatter-kernels 0.1"):
        reg = make_registry(squatter, real)
    assert {b.state for b in records_named(reg, "scalar2")} == {"name-conflict"}


def test_a_squatter_exposing_the_real_plugin_object_conflicts_too():
    # The squatter's entry point points at the real distribution's plugin object: the backend
    # would be credited to the squatter while the real entry point failed ("already
    # registered"); both are refused instead.
    real_plugin = plugin_registering(scalar2("real_module_never_imported"))
    squatter = FakeEntryPoint("aaa", real_plugin, dist=SQUATTER)
    real = FakeEntryPoint("scalar2", real_plugin, dist=REAL)
    with pytest.warns(RuntimeWarning, match="registered by plugin 'aaa'"):
        reg = make_registry(squatter, real)
    assert sorted(b.distribution for b in records_named(reg, "scalar2")
                  if b.state == "name-conflict") == ["scalar2-kernels 1.0",
                                                     "squatter-kernels 0.1"]


@pytest.mark.parametrize("block", ["squatter-kernels", "aaa"])
@pytest.mark.filterwarnings("ignore:.*real_module_never_imported")
def test_blocking_one_of_them_before_it_is_imported_resolves_the_conflict(block):
    squatter, real = squatter_and_real()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = make_registry(squatter, real, environ={"ARGONISHCHE_DISABLE_BACKENDS": block})
    assert not squatter.loaded
    assert not [w for w in caught if "registered by" in str(w.message)]
    (record,) = records_named(reg, "scalar2")
    # The real one goes on to the checks (its module does not exist here: load-failed).
    assert record.distribution == "scalar2-kernels 1.0" and record.state == "load-failed"
    assert plugin_of(reg, "aaa", SQUATTER).state == "blocked"


def test_blocking_the_backend_name_blocks_both_without_a_conflict_warning():
    squatter, real = squatter_and_real()
    real.name = "realkernels"  # else the name blocks its plugin before it is imported
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = make_registry(squatter, real, environ={"ARGONISHCHE_DISABLE_BACKENDS": "scalar2"})
    assert not [w for w in caught if "registered by" in str(w.message)]
    assert [b.state for b in records_named(reg, "scalar2")] == ["blocked", "blocked"]


def test_forcing_a_backend_in_a_name_conflict_says_with_whom():
    with pytest.warns(RuntimeWarning, match="registered by"):
        reg = make_registry(*squatter_and_real(), environ={"ARGONISHCHE_BACKEND": "scalar2"})
    with pytest.raises(BackendError, match=r"ARGONISHCHE_BACKEND=scalar2 cannot be used: it is "
                                           r"in a name conflict, registered by plugin 'aaa' from "
                                           r"squatter-kernels 0.1 and plugin 'scalar2' from "
                                           r"scalar2-kernels 1.0"):
        reg.selected_name("argon2")
    with pytest.raises(BackendError, match="scalar2.*: name conflict: "):
        reg.kernel_table("argon2", backend="scalar2")


# ---- forcing a backend whose plugin failed --------------------------------------------------


def test_forcing_a_backend_whose_plugin_failed_to_import_names_the_plugin_and_why():
    broken = FakeEntryPoint("scalar2", error=ImportError("libscalar.so.2: cannot open"), dist=REAL)
    with pytest.warns(RuntimeWarning, match="libscalar"):
        reg = make_registry(broken, environ={"ARGONISHCHE_BACKEND": "scalar2"})
    with pytest.raises(BackendError, match=r"ARGONISHCHE_BACKEND=scalar2 cannot be used: its "
                                           r"plugin 'scalar2' from scalar2-kernels 1\.0 failed to "
                                           r"load: ImportError\('libscalar\.so\.2"):
        reg.selected_name("argon2")


def test_forcing_a_backend_whose_plugin_raised_in_its_hook_names_the_plugin_and_why():
    class Raising:
        @hookspecs.hookimpl
        def argonishche_register_backends(self, register):
            raise RuntimeError("no licence file")
    with pytest.warns(RuntimeWarning, match="no licence file"):
        reg = make_registry(FakeEntryPoint("scalar2", Raising(), dist=REAL),
                            environ={"ARGONISHCHE_BACKEND": "scalar2"})
    with pytest.raises(BackendError, match=r"plugin 'scalar2' from scalar2-kernels 1\.0 failed: "
                                           r"argonishche_register_backends raised "
                                           r"RuntimeError\('no licence file'\)"):
        reg.kernel_table("argon2")


def test_forcing_a_missing_backend_lists_the_plugins_that_registered_nothing():
    # Named otherwise than the backend: it cannot be known to be the one, so it is listed.
    broken = FakeEntryPoint("fastkernels", error=ImportError("wrong glibc"), dist=REAL)
    with pytest.warns(RuntimeWarning, match="wrong glibc"):
        reg = make_registry(broken, environ={"ARGONISHCHE_BACKEND": "scalar2"})
    with pytest.raises(SettingError, match=r"must be a registered backend; plugins that "
                                           r"registered nothing: 'fastkernels' from "
                                           r"scalar2-kernels 1\.0 \(failed to load: "
                                           r"ImportError\('wrong glibc'\)\); registered: .*ref"):
        reg.selected_name("argon2")


# ---- argonishche.plugins() ------------------------------------------------------------------


def test_plugins_returns_one_frozen_record_per_plugin_builtins_included():
    records = argonishche.plugins()
    assert "plugins" in argonishche.__all__ and "PluginInfo" in argonishche.__all__
    assert all(isinstance(p, argonishche.PluginInfo) for p in records)
    own = {p.name: p for p in records if p.distribution == f"argonishche {__version__}"}
    assert {_discovery.BUILTIN_ALLOCATORS, *(row.name for row in BUILTIN_BACKENDS)} <= set(own)
    assert all(own[row.name].state == "loaded" and own[row.name].reason == ""
               for row in BUILTIN_BACKENDS)
    keys = [(p.name, p.distribution) for p in records]
    assert len(keys) == len(set(keys))
    with pytest.raises(_record.FrozenRecordError):
        records[0].state = "loaded"  # type: ignore[misc]
    records.clear()  # a copy: the registry's own list is untouched
    assert argonishche.plugins()


def test_a_plugin_with_several_problems_has_one_record_naming_them_all():
    class TwoBadHooks:
        @hookspecs.hookimpl
        def argonishche_register_backends(self, register):
            raise RuntimeError("first problem")

        @hookspecs.hookimpl
        def argonishche_register_allocators(self, register):
            raise RuntimeError("second problem")
    with pytest.warns(RuntimeWarning):
        reg = make_registry(FakeEntryPoint("twobad", TwoBadHooks(), dist=REAL))
    record = plugin_of(reg, "twobad", REAL)
    assert record.state == "failed"
    assert "first problem" in record.reason and "second problem" in record.reason


def test_info_lists_the_plugins_from_the_same_records(install):
    with pytest.warns(RuntimeWarning, match="gone"):
        reg = install(make_registry(FakeEntryPoint("broken", error=ImportError("gone"),
                                                   dist=REAL)))
    report = _info.collect(cpuinfo=False)
    assert report["plugins"] == [_record.asdict(p) for p in argonishche.plugins()]
    assert report["plugins"] == [_record.asdict(p) for p in reg.plugins]
    text = _info.render(report)
    for row in BUILTIN_BACKENDS:
        assert f"  {row.name:<20} loaded   argonishche {__version__}" in text
    assert (f"  {'broken':<20} failed   scalar2-kernels 1.0: failed to load: "
            f"ImportError('gone')") in text


# ---- the built-ins come through argonishche's own entry points ------------------------------


def own_fakes(**replaced):
    """Stand-ins for argonishche's own entry points: the real objects, unless *replaced*."""
    return [FakeEntryPoint(ep.name, replaced.get(ep.name) or ep.load(),
                           dist=("argonishche", __version__)) for ep in own_entry_points()]


def test_builtin_backends_are_loaded_through_their_entry_points():
    fakes = own_fakes()
    assert sorted(ep.name for ep in fakes) == sorted(row.name for row in ALL_BUILTIN_BACKENDS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = _registry.Registry(environ={}, plugin_entry_points=fakes)
    built = {row.name for row in BUILTIN_BACKENDS}
    assert {ep.name for ep in fakes if ep.loaded} == built  # other architectures': not needed
    assert {b.name for b in reg.report()} == {row.name for row in BUILTIN_BACKENDS}


def test_what_the_builtin_entry_point_gives_is_what_is_registered():
    ref = hookspecs.Backend(name="ref", description="ref, as this entry point registers it",
                            kernel_module="argonishche_backends._ref")
    reg = _registry.Registry(environ={}, plugin_entry_points=own_fakes(
        ref=plugin_registering(ref)))
    record = next(b for b in reg.report() if b.name == "ref")
    assert record.description == "ref, as this entry point registers it" and record.builtin


def test_without_argonishches_own_entry_points_the_builtins_are_registered_directly():
    with pytest.warns(RuntimeWarning, match=r"no entry point of argonishche's own for the "
                                            r"built-in backends? ref.*registered directly"):
        reg = _registry.Registry(environ={}, plugin_entry_points=[])
    assert {b.name for b in reg.report()} == {row.name for row in BUILTIN_BACKENDS}
    assert all(b.builtin for b in reg.report())
    assert reg.selected_name("argon2") in {row.name for row in BUILTIN_BACKENDS}


@pytest.mark.parametrize("row", ALL_BUILTIN_BACKENDS, ids=lambda row: row.name)
def test_a_third_party_entry_point_named_like_any_builtin_is_refused(row):
    impostor = hookspecs.Backend(name=row.name, description="impostor", kernel_module="nope",
                                 priority=99)
    ep = FakeEntryPoint(row.name, plugin_registering(impostor), dist=SQUATTER)
    with pytest.warns(RuntimeWarning, match="belongs to a built-in backend"):
        reg = make_registry(ep)
    assert not ep.loaded
    assert all(b.builtin and b.description != "impostor" for b in reg.report())


# ---- backends declared before import (argonishche.backends; installed wheels in
# test_plugin_declared_backends.py) --------------------------------------------------------


class DeclaringEntryPoint(FakeEntryPoint):
    """A fake entry point with a value: in the argonishche group a plugin, in
    argonishche.backends a declaration of a backend for the plugin of that value."""

    def __init__(self, name, value, obj=None, dist=SQUATTER):
        super().__init__(name, obj, dist=dist)
        self.value = value


def test_a_declared_builtin_name_keeps_the_plugin_unimported():
    ep = DeclaringEntryPoint("fancy", "fancy_plugin", plugin_registering())
    with pytest.warns(RuntimeWarning, match="declares backend avx2, a name of a built-in"):
        reg = _registry.Registry(environ={}, plugin_entry_points=own_entry_points() + [ep],
                                 backend_declarations=[DeclaringEntryPoint("avx2",
                                                                           "fancy_plugin")])
    assert not ep.loaded and plugin_of(reg, "fancy", SQUATTER).state == "failed"


def test_a_declaration_matching_no_plugin_is_ignored_with_a_warning():
    never = hookspecs.Backend(name="never", description="x", kernel_module="never_imported")
    ep = DeclaringEntryPoint("kernels", "pkg.plugin", plugin_registering(never))
    with pytest.warns(RuntimeWarning, match="declares backend 'never' for 'pkg.other'.*no "
                                            "plugin entry point of it has that value"):
        reg = _registry.Registry(
            environ={"ARGONISHCHE_DISABLE_BACKENDS": "never"},
            plugin_entry_points=own_entry_points() + [ep],
            backend_declarations=[DeclaringEntryPoint("never", "pkg.other")])
    # Undeclared: imported, and its backend blocked after, as before declarations existed.
    assert ep.loaded and records_named(reg, "never")[0].state == "blocked"


def test_the_reader_finds_both_groups_in_one_pass(tmp_path):
    from argonishche._entry_points import entry_point_groups

    info = tmp_path / "fast_kernels-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text(
        "[argonishche]\nfast_kernels = fastpkg.plugin\n\n"
        "[argonishche.backends]\nfast = fastpkg.plugin\nfaster = fastpkg.plugin\n")
    found = entry_point_groups(("argonishche", "argonishche.backends"), [str(tmp_path)])
    assert [(ep.name, ep.value) for ep in found["argonishche"]] == [
        ("fast_kernels", "fastpkg.plugin")]
    assert [(ep.name, ep.value) for ep in found["argonishche.backends"]] == [
        ("fast", "fastpkg.plugin"), ("faster", "fastpkg.plugin")]


# ---- a real squatter: two wheels installed with pip, a fresh interpreter --------------------

PLUGIN_MODULE = '''
from argonishche import Backend, hookimpl


@hookimpl
def argonishche_register_backends(register):
    register(Backend(name="scalar2", description="{package}", priority=50,
                     kernel_module="{package}._kernels"))
'''
# ref's compiled kernels behind a module of the plugin's own: right, and importable only if
# the registry goes as far as checking the backend.
SHIM_MODULE = "from argonishche_backends._ref import ffi, lib  # noqa: F401\n"
PYPROJECT = '''
[build-system]
requires = ["setuptools>=77.0.3"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "{version}"

[project.entry-points.argonishche]
{entry_point} = "{package}"

[tool.setuptools]
packages = ["{package}"]
'''
REPORT = """
    import json, sys, warnings
    import argonishche
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backends = [[b.name, b.state, b.reason, b.distribution] for b in argonishche.backends()
                    if b.name == "scalar2"]
    try:
        selected = argonishche.selected_backend("argon2")
    except argonishche.ArgonishcheError as exc:
        selected = f"{type(exc).__name__}: {exc}"
    print(json.dumps(dict(
        backends=backends, selected=selected,
        warnings=[str(w.message) for w in caught],
        plugins=[[p.name, p.distribution, p.state] for p in argonishche.plugins()],
        imported=sorted(m for m in sys.modules if m.endswith("._kernels")
                        and not m.startswith("argonishche")))))
"""


@pytest.fixture(scope="module")
def squatted(tmp_path_factory):
    """A site directory with the real scalar2 plugin and a squatter whose entry point sorts
    first, both built as wheels and installed with pip."""
    import subprocess

    def pip(*args):
        done = subprocess.run([sys.executable, "-m", "pip", *map(str, args), "--no-deps",
                               "--no-cache-dir", "--disable-pip-version-check", "--quiet"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    root = tmp_path_factory.mktemp("squatted")
    site = root / "site"
    wheels = root / "wheels"
    for dist, version, entry_point, package in [("squatter-kernels", "0.1", "aaa",
                                                 "squatter_kernels"),
                                                ("scalar2-kernels", "1.0", "scalar2",
                                                 "scalar2_kernels")]:
        project = root / dist
        (project / package).mkdir(parents=True)
        (project / "pyproject.toml").write_text(PYPROJECT.format(
            dist=dist, version=version, entry_point=entry_point, package=package))
        (project / package / "__init__.py").write_text(PLUGIN_MODULE.format(package=package))
        (project / package / "_kernels.py").write_text(SHIM_MODULE)
        pip("wheel", "--no-build-isolation", "--wheel-dir", wheels, project)
    pip("install", "--target", site, *wheels.glob("*.whl"))

    def run(**environ):
        import json
        import os
        import textwrap
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site),
                                                          os.environ.get("PYTHONPATH")]))
        env["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
        env.update(environ)
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(REPORT)], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)
    return run


def test_an_installed_squatter_gets_neither_itself_nor_the_real_plugin_the_name(squatted):
    out = squatted()
    assert sorted((state, dist) for _, state, _, dist in out["backends"]) == [
        ("name-conflict", "scalar2-kernels 1.0"), ("name-conflict", "squatter-kernels 0.1")]
    assert out["imported"] == []  # neither kernel module was imported
    (warning,) = [w for w in out["warnings"] if "registered by" in w]
    assert "plugin 'aaa' from squatter-kernels 0.1" in warning
    assert "plugin 'scalar2' from scalar2-kernels 1.0" in warning
    assert out["selected"] != "scalar2"


def test_an_installed_squatter_blocked_leaves_the_real_plugin_its_name(squatted):
    out = squatted(ARGONISHCHE_DISABLE_BACKENDS="squatter-kernels",
                   ARGONISHCHE_BACKEND="scalar2")
    assert [(state, dist) for _, state, _, dist in out["backends"]] == [
        ("selected", "scalar2-kernels 1.0")]
    assert out["selected"] == "scalar2"
    assert out["imported"] == ["scalar2_kernels._kernels"]
    assert ["aaa", "squatter-kernels 0.1", "blocked"] in out["plugins"]


def test_forcing_a_squatted_name_says_who_registers_it(squatted):
    out = squatted(ARGONISHCHE_BACKEND="scalar2")
    assert out["selected"].startswith("BackendError: ARGONISHCHE_BACKEND=scalar2 cannot be used: "
                                      "it is in a name conflict, registered by plugin 'aaa' "
                                      "from squatter-kernels 0.1 and plugin 'scalar2' from "
                                      "scalar2-kernels 1.0")
    assert out["imported"] == []
