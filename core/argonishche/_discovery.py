"""Discovery: which plugins exist, which are blocked, and what each one registers.

1. The built-in allocators are registered first and directly, not through an entry point, so no
   setting and no other distribution can remove or replace them.
2. The ``argonishche`` entry points are walked in name order.  A plugin named in
   ``ARGONISHCHE_DISABLE_PLUGINS`` is blocked *before* it is imported.  A plugin that fails to
   import, fails pluggy's validation or raises in a hook is recorded with its distribution and a
   RuntimeWarning, and the others carry on: a broken wheel must not take the library down.
3. Each backend a plugin registers becomes a :class:`BackendEntry`; one named in
   ``ARGONISHCHE_DISABLE_BACKENDS`` is kept as ``blocked`` and its kernels are never imported.
   That variable names backends only, so it never removes an allocator, even one that the same
   plugin registers.

Nothing here imports or runs a kernel module: that is :mod:`argonishche._backend_checks`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import pluggy

from . import _allocators, hookspecs
from ._settings import Settings
from ._version import __version__
from .hookspecs import PROJECT_NAME, Allocator, Backend

# Backend states, as ``backends()`` and ``info`` report them.
SELECTED = "selected"
AVAILABLE = "available"
UNSUPPORTED_CPU = "unsupported-cpu"
BLOCKED = "blocked"
LOAD_FAILED = "load-failed"
SELFTEST_FAILED = "selftest-failed"
USABLE_STATES = (SELECTED, AVAILABLE)

# Plugin states, as ``info`` reports them.
PLUGIN_LOADED = "loaded"
PLUGIN_BLOCKED = "blocked"
PLUGIN_FAILED = "failed"

#: The distribution that ships the built-in backends and allocators.
BUILTIN_DISTRIBUTION = "argonishche"
#: The plugin name of the built-in allocators, which are registered directly.
BUILTIN_ALLOCATORS = "builtin-allocators"


class BackendEntry:
    """One registered backend and what the checks and the selection made of it."""

    __slots__ = ("backend", "distribution", "state", "reason", "table", "module",
                 "selftest_ms", "selected_for", "measured_us")

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
        self.measured_us: dict[str, float] = {}  # algorithm -> best time, when measured

    @property
    def name(self) -> str:
        return self.backend.name


class PluginRecord(NamedTuple):
    """One ``argonishche`` entry point (or the built-in allocators), and what became of it."""

    name: str           # the entry-point name (what ARGONISHCHE_DISABLE_PLUGINS takes)
    distribution: str   # "name version" of the distribution that ships it
    state: str          # PLUGIN_LOADED, PLUGIN_BLOCKED or PLUGIN_FAILED
    reason: str = ""


class Discovered:
    """What discovery found: backends by name, allocators by name, and every plugin's fate."""

    def __init__(self) -> None:
        self.backends: dict[str, BackendEntry] = {}
        self.allocators: dict[str, tuple[Allocator, str]] = {}  # name -> (allocator, dist)
        self.plugins: list[PluginRecord] = []


def distribution_label(entry_point: Any) -> str:
    dist = getattr(entry_point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def discover(settings: Settings, entry_points: Iterable[Any]) -> Discovered:
    """Walk *entry_points* under *settings*; see the module docstring."""
    found = Discovered()
    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    _collect(manager, found, BUILTIN_ALLOCATORS, f"{BUILTIN_DISTRIBUTION} {__version__}",
             _allocators.plugin, settings)
    entry_points = sorted(entry_points, key=lambda ep: ep.name)
    for ep in entry_points:
        dist = distribution_label(ep)
        if ep.name.lower() in settings.disabled_plugins:
            manager.set_blocked(ep.name)
            found.plugins.append(PluginRecord(ep.name, dist, PLUGIN_BLOCKED,
                                              "blocked by ARGONISHCHE_DISABLE_PLUGINS"))
            continue
        try:
            plugin = ep.load()
            manager.register(plugin, name=ep.name)
            manager.check_pending()
        except Exception as exc:  # noqa: BLE001 - any failure of a plugin is reported, not fatal
            if manager.has_plugin(ep.name):
                manager.unregister(name=ep.name)
            _fail(found, ep.name, dist, f"failed to load: {exc!r}")
            continue
        _collect(manager, found, ep.name, dist, plugin, settings)
    _warn_unknown("ARGONISHCHE_DISABLE_BACKENDS", settings.disabled_backends,
                  set(found.backends), "backends")
    _warn_unknown("ARGONISHCHE_DISABLE_PLUGINS", settings.disabled_plugins,
                  {ep.name.lower() for ep in entry_points}, "plugins (entry points)")
    return found


def _collect(manager: pluggy.PluginManager, found: Discovered, plugin_name: str, dist: str,
             plugin: Any, settings: Settings) -> None:
    """Call this plugin's hooks one at a time, so that one failing hook costs only itself."""
    if not manager.is_registered(plugin):
        manager.register(plugin, name=plugin_name)
    hook = manager.hook
    calls: tuple[tuple[Any, type, Callable[..., None]], ...] = (
        (hook.argonishche_register_backends, Backend, _accept_backend),
        (hook.argonishche_register_allocators, Allocator, _accept_allocator))
    failed = False
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
    warnings.warn(f"argonishche: plugin {name!r} from {dist}: {reason}", RuntimeWarning,
                  stacklevel=5)


def _warn_unknown(variable: str, named: frozenset[str], known: set[str], kind: str) -> None:
    unknown = sorted(named - known)
    if unknown:
        warnings.warn(f"argonishche: {variable} names {', '.join(unknown)}, which no installed "
                      f"plugin provides; known {kind}: {', '.join(sorted(known)) or 'none'}",
                      RuntimeWarning, stacklevel=5)
