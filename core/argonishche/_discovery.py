"""Discovery: which plugins exist, which are blocked, and what each one registers.

1. The built-ins are registered first and directly: the allocators, then the backends of
   ``argonishche_backends`` (their entry points, argonishche's own, are not walked).  No setting
   and no other distribution can remove or replace them: a third-party entry point named like a
   built-in backend is refused before it is imported, and a backend registered under a built-in
   name is refused (the built-in came first).
2. The other ``argonishche`` entry points are walked in name order.  One named in
   ``ARGONISHCHE_DISABLE_BACKENDS``, by its entry-point name (by convention a backend plugin's is
   its backend's name) or by its distribution's name, is blocked *before* it is imported.  A
   plugin that fails to import, fails pluggy's validation or raises in a hook is recorded with
   its distribution and a RuntimeWarning, and the others carry on: a broken wheel must not take
   the library down.
3. Each backend a plugin registers becomes a :class:`BackendEntry`; one named in
   ``ARGONISHCHE_DISABLE_BACKENDS`` is kept as ``blocked`` and its kernels are never imported.
4. With a built-in backend forced (``ARGONISHCHE_BACKEND=avx2``), no plugin can provide the
   backend, so none is imported at start-up: a slow or broken plugin costs nothing.  They are
   ``deferred``, and imported by :func:`load_deferred` if an allocator that one of them may
   provide is asked for.

Nothing here imports or runs a kernel module: that is :mod:`argonishche._backend_checks`.
Each plugin's code (its import and its hooks) runs within the *plugin_code* context the caller
gives: the process registry releases its lock there, or refuses (see :mod:`argonishche._registry`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

import pluggy

from . import _allocators, hookspecs
from ._settings import Settings
from ._version import __version__
from ._warn import warn
from .hookspecs import PROJECT_NAME, Allocator, Backend

# Backend states, as ``backends()`` and ``info`` report them.
SELECTED = "selected"
AVAILABLE = "available"
UNSUPPORTED_CPU = "unsupported-cpu"
BLOCKED = "blocked"
LOAD_FAILED = "load-failed"
SELFTEST_FAILED = "selftest-failed"
CERTIFICATION_FAILED = "certification-failed"
USABLE_STATES = (SELECTED, AVAILABLE)

# Plugin states, as ``info`` reports them.
PLUGIN_LOADED = "loaded"
PLUGIN_BLOCKED = "blocked"
PLUGIN_FAILED = "failed"
PLUGIN_DEFERRED = "deferred"
PLUGIN_NOT_LOADED = "not-loaded"  # plugin code could not run now (the reason says why)

#: Runs a plugin's code: entering yields None to run it, or the reason it may not run.
PluginCode = Callable[[], AbstractContextManager["str | None"]]


@contextlib.contextmanager
def run_here() -> Iterator[str | None]:
    """The :data:`PluginCode` of a registry with no lock to release: plugin code just runs."""
    yield None

#: The distribution that ships the built-in backends and allocators.
BUILTIN_DISTRIBUTION = "argonishche"
#: The plugin name of the built-in allocators, which are registered directly.
BUILTIN_ALLOCATORS = "builtin-allocators"


class BackendEntry:
    """One registered backend and what the checks and the selection made of it."""

    __slots__ = ("backend", "distribution", "state", "reason", "table", "module",
                 "selftest_ms", "selected_for", "builtin", "validation")

    def __init__(self, backend: Backend, distribution: str, state: str = AVAILABLE,
                 reason: str = "") -> None:
        self.backend = backend
        self.distribution = distribution
        self.state = state
        self.reason = reason
        self.table: Any = None   # ``const argonishche_kernel_table *`` once loaded and tested
        self.module: Any = None  # the compiled module; the table lives in its data segment
        self.selftest_ms: float | None = None
        self.selected_for: list[str] = []
        #: Shipped by argonishche itself (registered directly, before any plugin).
        self.builtin = distribution.split(" ")[0] == BUILTIN_DISTRIBUTION
        #: How it was validated, for reports: "self-test", "self-test, certified ...".
        self.validation = ""

    @property
    def name(self) -> str:
        return self.backend.name


class PluginRecord(NamedTuple):
    """One ``argonishche`` entry point (or the built-in allocators), and what became of it."""

    name: str           # the entry-point name (ARGONISHCHE_DISABLE_BACKENDS takes it too)
    distribution: str   # "name version" of the distribution that ships it
    state: str          # PLUGIN_LOADED, PLUGIN_BLOCKED, PLUGIN_FAILED or PLUGIN_DEFERRED
    reason: str = ""


class Discovered:
    """What discovery found: backends by name, allocators by name, and every plugin's fate."""

    def __init__(self) -> None:
        self.backends: dict[str, BackendEntry] = {}
        self.allocators: dict[str, tuple[Allocator, str]] = {}  # name -> (allocator, dist)
        self.plugins: list[PluginRecord] = []
        self.deferred: list[Any] = []  # entry points not imported yet (see the module docstring)
        self.manager = pluggy.PluginManager(PROJECT_NAME)
        self.manager.add_hookspecs(hookspecs)


def distribution_label(entry_point: Any) -> str:
    dist = getattr(entry_point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def _normalized(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def discover(settings: Settings, entry_points: Iterable[Any],
             plugin_code: PluginCode = run_here) -> Discovered:
    """Walk *entry_points* under *settings*; see the module docstring."""
    found = Discovered()
    manager = found.manager
    own = f"{BUILTIN_DISTRIBUTION} {__version__}"
    _collect(manager, found, BUILTIN_ALLOCATORS, own, _allocators.plugin, settings)
    builtin_names, reserved_names = _register_builtin_backends(manager, found, own, settings)
    disabled = {_normalized(name) for name in settings.disabled_backends}
    entry_points = sorted(entry_points, key=lambda ep: ep.name)
    third_party = [ep for ep in entry_points
                   if _normalized(getattr(ep.dist, "name", "")) != BUILTIN_DISTRIBUTION]
    for ep in third_party:
        dist = distribution_label(ep)
        if ep.name.lower() in reserved_names:
            _fail(found, ep.name, dist, f"not loaded: the name {ep.name!r} belongs to a built-in "
                                        f"backend of {BUILTIN_DISTRIBUTION}, which a plugin may "
                                        f"not replace")
            continue
        if {_normalized(ep.name), _normalized(getattr(ep.dist, "name", ""))} & disabled:
            manager.set_blocked(ep.name)
            found.plugins.append(PluginRecord(ep.name, dist, PLUGIN_BLOCKED,
                                              "blocked by ARGONISHCHE_DISABLE_BACKENDS"))
            continue
        if settings.backend in builtin_names:
            found.deferred.append(ep)
            found.plugins.append(PluginRecord(
                ep.name, dist, PLUGIN_DEFERRED, f"not imported: ARGONISHCHE_BACKEND="
                f"{settings.backend} is built in (imported if an allocator is asked for that no "
                f"imported plugin registered)"))
            continue
        _run_plugin(found, ep, dist, settings, plugin_code)
    known = set(found.backends) | {ep.name.lower() for ep in third_party} | {
        _normalized(getattr(ep.dist, "name", "")) for ep in third_party}
    _warn_unknown("ARGONISHCHE_DISABLE_BACKENDS", settings.disabled_backends, known,
                  "backends, plugins and distributions")
    return found


def _load(found: Discovered, ep: Any, dist: str, settings: Settings) -> None:
    manager = found.manager
    try:
        plugin = ep.load()
        manager.register(plugin, name=ep.name)
        manager.check_pending()
    except Exception as exc:  # noqa: BLE001 - any failure of a plugin is reported, not fatal
        if manager.has_plugin(ep.name):
            manager.unregister(name=ep.name)
        _fail(found, ep.name, dist, f"failed to load: {exc!r}")
        return
    _collect(manager, found, ep.name, dist, plugin, settings)


def _run_plugin(found: Discovered, ep: Any, dist: str, settings: Settings,
                plugin_code: PluginCode) -> None:
    with plugin_code() as refused:
        if refused:
            found.plugins.append(PluginRecord(ep.name, dist, PLUGIN_NOT_LOADED, refused))
        else:
            _load(found, ep, dist, settings)


def load_deferred(found: Discovered, settings: Settings,
                  plugin_code: PluginCode = run_here) -> list[BackendEntry]:
    """Import the plugins :func:`discover` deferred; the backends they registered (to check)."""
    before = set(found.backends)
    deferred, found.deferred = found.deferred, []
    names = {ep.name for ep in deferred}
    found.plugins[:] = [p for p in found.plugins
                        if not (p.state == PLUGIN_DEFERRED and p.name in names)]
    for ep in deferred:
        _run_plugin(found, ep, distribution_label(ep), settings, plugin_code)
    return [entry for name, entry in found.backends.items() if name not in before]


def _register_builtin_backends(manager: pluggy.PluginManager, found: Discovered, own: str,
                               settings: Settings) -> tuple[set[str], set[str]]:
    """Register argonishche's own backends before any other plugin: (the names of those built
    for this machine, the names of every built-in backend of any architecture).  The second
    are reserved everywhere: on aarch64 no plugin may call itself ``avx2`` either."""
    try:
        # Installed from backends/ (package-dir): mypy run on the source tree does not find it.
        import argonishche_backends  # type: ignore[import-not-found, unused-ignore]
        from argonishche_backends.table import (  # type: ignore[import-not-found, unused-ignore]
            ALL_BUILTIN_BACKENDS,
            BUILTIN_BACKENDS,
        )
    except Exception as exc:  # noqa: BLE001 - a broken install still gets a clear report
        _fail(found, "argonishche_backends", own, f"built-in backends failed to load: {exc!r}")
        return set(), set()
    for row in BUILTIN_BACKENDS:
        _collect(manager, found, row.name, own, getattr(argonishche_backends, row.name),
                 settings)
    return {row.name for row in BUILTIN_BACKENDS}, {row.name for row in ALL_BUILTIN_BACKENDS}


def _collect(manager: pluggy.PluginManager, found: Discovered, plugin_name: str, dist: str,
             plugin: Any, settings: Settings) -> None:
    """Call this plugin's hooks one at a time, so that one failing hook costs only itself."""
    if not manager.is_registered(plugin):
        manager.register(plugin, name=plugin_name)
    hook = manager.hook
    calls: tuple[tuple[pluggy.HookCaller, type[Backend] | type[Allocator],
                       Callable[[Discovered, Any, str, Settings], str]], ...] = (
        (hook.argonishche_register_backends, Backend, _accept_backend),
        (hook.argonishche_register_allocators, Allocator, _accept_allocator))
    failed = False
    backend_names = []
    for caller, kind, accept in calls:
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin:
                continue
            registered: list[Any] = []
            try:
                impl.function(register=registered.append)
                for item in registered:
                    if not isinstance(item, kind):
                        raise TypeError(
                            f"registered {item!r}, not an argonishche.{kind.__name__}")
            except Exception as exc:  # noqa: BLE001
                _fail(found, plugin_name, dist, f"{caller.name} raised {exc!r}")
                failed = True
                continue
            for item in registered:
                problem = accept(found, item, dist, settings)
                if problem:
                    _fail(found, plugin_name, dist, problem)
                    failed = True
                elif kind is Backend:
                    backend_names.append(item.name)
    if backend_names and plugin_name.lower() not in backend_names:
        # ARGONISHCHE_DISABLE_BACKENDS=<backend> can then block only the backend, after the
        # plugin was imported: say how to let users block it before.
        warn(f"argonishche: plugin {plugin_name!r} from {dist} registers backend(s) "
             f"{', '.join(backend_names)} under another name: name its entry point "
             f"{backend_names[0]!r}, so that ARGONISHCHE_DISABLE_BACKENDS={backend_names[0]} "
             f"keeps it from being imported")
    if not failed:
        found.plugins.append(PluginRecord(plugin_name, dist, PLUGIN_LOADED))


def _accept_backend(found: Discovered, backend: Backend, dist: str,
                    settings: Settings) -> str:
    first = found.backends.get(backend.name)
    if first is not None:
        return (f"backend {backend.name!r} not used: already registered by "
                f"{first.distribution}")
    blocked = backend.name in settings.disabled_backends
    found.backends[backend.name] = BackendEntry(
        backend, dist, BLOCKED if blocked else AVAILABLE,
        "blocked by ARGONISHCHE_DISABLE_BACKENDS" if blocked else "")
    return ""


def _accept_allocator(found: Discovered, allocator: Allocator, dist: str,
                      settings: Settings) -> str:
    name = str(allocator.name).lower()
    if not name:
        return f"allocator {allocator!r} not used: it has no name"
    if name in found.allocators:
        return f"allocator {name!r} not used: already registered by {found.allocators[name][1]}"
    found.allocators[name] = (allocator, dist)
    return ""


def _fail(found: Discovered, name: str, dist: str, reason: str) -> None:
    found.plugins.append(PluginRecord(name, dist, PLUGIN_FAILED, reason))
    warn(f"argonishche: plugin {name!r} from {dist}: {reason}")


def _warn_unknown(variable: str, named: frozenset[str], known: set[str], kind: str) -> None:
    normalized = {_normalized(name) for name in known}
    unknown = sorted(name for name in named if _normalized(name) not in normalized)
    if unknown:
        warn(f"argonishche: {variable} names {', '.join(unknown)}, which no installed "
                      f"plugin provides; known {kind}: {', '.join(sorted(known)) or 'none'}")
