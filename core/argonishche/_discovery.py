"""Discovery: which plugins exist, which are blocked, and what each one registers.

1. The built-ins are registered first: the allocators (directly), then the backends, each
   through argonishche's own entry point (``ref = argonishche_backends:ref``), loaded like
   every plugin's, their marked hooks called directly: pluggy is imported only for a third
   party's plugin, whose hooks it calls and validates.  A built-in name is accepted only from the
   ``argonishche`` distribution: a third-party entry point named like a built-in backend is
   refused before it is imported, and a third-party backend registered under a built-in name is
   refused, whether or not that backend is built for this machine.  Without argonishche's own
   entry points (a broken install, a source tree without dist-info) the built-ins are registered
   directly, with a RuntimeWarning saying so.
2. The other ``argonishche`` entry points are walked in name order.  One named in
   ``ARGONISHCHE_DISABLE_BACKENDS``, by its entry-point name (by convention a backend plugin's is
   its backend's name) or by its distribution's name, is blocked *before* it is imported; so is
   one all of whose declared backends are named (:mod:`argonishche._backend_declarations`), and
   those are listed as ``blocked``.  A plugin that fails to import, fails pluggy's validation or
   raises in a hook is recorded with its distribution and a RuntimeWarning, and the others carry
   on: a broken wheel must not take the library down.
3. Each backend a plugin registers becomes a :class:`BackendEntry`; one named in
   ``ARGONISHCHE_DISABLE_BACKENDS`` is kept as ``blocked`` and its kernels are never imported.
   A backend name registered by two distributions is a ``name-conflict``: both are refused,
   neither's kernels are imported, and one RuntimeWarning names both (the order of entry-point
   names must not decide who gets ``backend='x'``: a squatter would only need a name that sorts
   first).  Blocking one of them by its entry-point or distribution name keeps it from being
   imported, so no conflict remains.
4. With a built-in backend forced (``ARGONISHCHE_BACKEND=avx2``), no plugin can provide the
   backend, so none is imported at start-up: a slow or broken plugin costs nothing.  They are
   ``deferred``, and imported by :func:`load_deferred` if an allocator that one of them may
   provide is asked for.

Nothing here imports or runs a kernel module: that is :mod:`argonishche._trust.vetting`.
Each plugin's code (its import and its hooks) runs within the *plugin_code* context the caller
gives: the process registry releases its lock there, or refuses (see :mod:`argonishche._registry`).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager

from . import _allocators, _backend_declarations, hookspecs
from ._record import record
from ._settings import Settings
from ._version import __version__
from ._warn import warn
from ._wording import noun
from .exceptions import echo
from .hookspecs import PROJECT_NAME, Allocator, Backend

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    import pluggy

# Backend states, as ``backends()`` and ``info`` report them.
SELECTED = "selected"
AVAILABLE = "available"
UNSUPPORTED_CPU = "unsupported-cpu"
BLOCKED = "blocked"
LOAD_FAILED = "load-failed"
SELFTEST_FAILED = "selftest-failed"
CERTIFICATION_FAILED = "certification-failed"
NAME_CONFLICT = "name-conflict"
#: Gave a wrong Argon2 tag while witnessed (:mod:`argonishche._trust.witness`): unused from then.
QUARANTINED = "quarantined"
USABLE_STATES = (SELECTED, AVAILABLE)

# Plugin states, as ``plugins()`` and ``info`` report them.
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
#: The module behind argonishche's own backend entry points (``argonishche_backends:<name>``).
BUILTIN_BACKENDS_MODULE = "argonishche_backends"
#: First-party backends besides the built-ins: this repository's own plugin wheels, as
#: {backend name: distribution name}.  Every backend neither built in nor listed here is
#: third-party, and its Argon2 tags are witnessed by a built-in (argonishche._trust.witness).
FIRST_PARTY = {"avx512": "argonishche-avx512"}


class BackendEntry:
    """One registered backend and what the checks and the selection made of it."""

    __slots__ = ("backend", "distribution", "state", "reason", "table", "module",
                 "selftest_ms", "selected_for", "builtin", "first_party", "validation",
                 "plugin")

    def __init__(self, backend: Backend, distribution: str, state: str = AVAILABLE,
                 reason: str = "", plugin: str = "") -> None:
        self.backend = backend
        self.distribution = distribution
        #: The entry point (plugin name) that registered it, for messages naming who did.
        self.plugin = plugin
        self.state = state
        self.reason = reason
        self.table: Any = None   # ``const argonishche_kernel_table *`` once loaded and tested
        self.module: Any = None  # the compiled module; the table lives in its data segment
        self.selftest_ms: float | None = None
        self.selected_for: list[str] = []
        #: Shipped by argonishche itself (registered directly, before any plugin).
        self.builtin = distribution.split(" ")[0] == BUILTIN_DISTRIBUTION
        #: Built in, or this repository's own plugin wheel (FIRST_PARTY): never witnessed.
        self.first_party = self.builtin or (
            FIRST_PARTY.get(backend.name) == _normalized(distribution.split(" ")[0]))
        #: How it was validated, for reports: "self-test", "self-test, certified ...".
        self.validation = ""

    @property
    def name(self) -> str:
        return self.backend.name


@record
class PluginInfo:
    """What ``argonishche.plugins()`` returns for one plugin: an ``argonishche`` entry point
    (the built-in backends have one each) or the built-in allocators, and what became of it."""

    #: The entry-point name (``ARGONISHCHE_DISABLE_BACKENDS`` takes it too).
    name: str
    #: ``"name version"`` of the distribution that ships it.
    distribution: str
    #: ``"loaded"``, ``"blocked"``, ``"failed"`` or ``"deferred"`` (not imported yet).
    state: str
    #: Why it is not simply loaded (empty when it is); every problem it had, separated by ``"; "``.
    reason: str = ""


class Discovered:
    """What discovery found: backends by name, allocators by name, and every plugin's fate."""

    def __init__(self) -> None:
        self.backends: dict[str, BackendEntry] = {}
        self.allocators: dict[str, tuple[Allocator, str]] = {}  # name -> (allocator, dist)
        self.plugins: list[PluginInfo] = []
        self.deferred: list[Any] = []  # entry points not imported yet (see the module docstring)
        #: Every built-in backend name, of any architecture: no other distribution may use one.
        self.reserved: set[str] = set()
        #: Backend names two distributions registered, not yet warned about.
        self.conflicts: set[str] = set()
        self._manager: pluggy.PluginManager | None = None
        #: id(entry point) -> the backend names its distribution declares for it.
        self.declared: dict[int, frozenset[str]] = {}

    @property
    def manager(self) -> pluggy.PluginManager:
        """pluggy's plugin manager, made (and pluggy imported) for the first plugin that is not
        argonishche's own: the built-ins are registered directly (see :func:`_hook_functions`)."""
        if self._manager is None:
            import pluggy

            spec = pluggy.HookspecMarker(PROJECT_NAME)
            for function in hookspecs.HOOKSPECS:
                spec(function)
            manager = pluggy.PluginManager(PROJECT_NAME)
            manager.add_hookspecs(hookspecs)
            self._manager = manager
        return self._manager


def distribution_label(entry_point: Any) -> str:
    dist = getattr(entry_point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def _normalized(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _is_own(entry_point: Any) -> bool:
    """An entry point of argonishche's own distribution (the built-in backends')."""
    return _normalized(getattr(entry_point.dist, "name", "") or "") == BUILTIN_DISTRIBUTION


def _own_label(dist: str) -> bool:
    return dist.split(" ")[0] == BUILTIN_DISTRIBUTION


def discover(settings: Settings, entry_points: Iterable[Any],
             plugin_code: PluginCode = run_here,
             declarations: Iterable[Any] = ()) -> Discovered:
    """Walk *entry_points* (argonishche's own among them) under *settings*, with the backends
    their distributions declare (*declarations*, see :mod:`argonishche._backend_declarations`);
    see the module docstring."""
    found = Discovered()
    own = f"{BUILTIN_DISTRIBUTION} {__version__}"
    _collect(found, BUILTIN_ALLOCATORS, own, _allocators.plugin, settings, direct=True)
    entry_points = sorted(entry_points, key=lambda ep: ep.name)
    builtin_names = _register_builtin_backends(
        found, own, [ep for ep in entry_points if _is_own(ep)], settings)
    disabled = {_normalized(name) for name in settings.disabled_backends}
    third_party = [ep for ep in entry_points if not _is_own(ep)]
    found.declared = _backend_declarations.match(third_party, declarations)
    blocked_unimported: list[BackendEntry] = []
    for ep in third_party:
        dist = distribution_label(ep)
        declared = found.declared.get(id(ep))
        taken = (f"not loaded: the name {ep.name!r} belongs to a built-in backend of "
                 f"{BUILTIN_DISTRIBUTION}, which a plugin may not replace"
                 if ep.name.lower() in found.reserved
                 else _backend_declarations.reserved_reason(declared, found.reserved))
        if taken:
            _fail(found, ep.name, dist, taken)
            continue
        if _backend_declarations.all_blocked(declared, disabled) or (
                {_normalized(ep.name), _normalized(getattr(ep.dist, "name", ""))} & disabled):
            _record(found, ep.name, dist, PLUGIN_BLOCKED, "blocked by ARGONISHCHE_DISABLE_BACKENDS"
                    + _backend_declarations.not_imported(declared))
            blocked_unimported += [
                BackendEntry(backend, dist, BLOCKED, reason, plugin=ep.name)
                for backend, reason in _backend_declarations.placeholders(declared, ep.name)]
            continue
        if settings.backend in builtin_names:
            found.deferred.append(ep)
            _record(found, ep.name, dist, PLUGIN_DEFERRED, f"not imported: ARGONISHCHE_BACKEND="
                    f"{settings.backend} is built in (imported if an allocator is asked for that "
                    f"no imported plugin registered)")
            continue
        _run_plugin(found, ep, dist, settings, plugin_code)
    _settle_conflicts(found)
    # Listed after the rest: a backend nobody imported takes part in no name conflict.
    for entry in blocked_unimported:
        found.backends.setdefault(entry.name, entry)
    known = {e.name for e in found.backends.values()} | {ep.name.lower() for ep in third_party} | {
        _normalized(getattr(ep.dist, "name", "")) for ep in third_party}
    _warn_unknown("ARGONISHCHE_DISABLE_BACKENDS", settings.disabled_backends, known,
                  "backends, plugins and distributions")
    return found


def _load(found: Discovered, ep: Any, dist: str, settings: Settings, *,
          direct: bool = False) -> None:
    """Import the plugin behind *ep*, register it with pluggy (*direct*: argonishche's own,
    without pluggy) and collect what it registers."""
    if direct:
        try:
            plugin = ep.load()
        except Exception as exc:  # noqa: BLE001 - reported as any plugin's failure is
            _fail(found, ep.name, dist, f"failed to load: {exc!r}")
            return
        _collect(found, ep.name, dist, plugin, settings, direct=True)
        return
    manager = found.manager
    # Unique per entry point: a clash of backend names must be seen, not won by load order.
    pluggy_name = f"{ep.name} from {dist}"
    try:
        plugin = ep.load()
        # Another entry point may expose the same object (a squatter pointing at the real
        # plugin): its hooks are then called again for this one, which is what they register.
        if not manager.is_registered(plugin):
            manager.register(plugin, name=pluggy_name)
            manager.check_pending()
    except Exception as exc:  # noqa: BLE001 - any failure of a plugin is reported, not fatal
        if manager.has_plugin(pluggy_name):
            manager.unregister(name=pluggy_name)
        _fail(found, ep.name, dist, f"failed to load: {exc!r}")
        return
    _collect(found, ep.name, dist, plugin, settings, found.declared.get(id(ep)))


def _run_plugin(found: Discovered, ep: Any, dist: str, settings: Settings,
                plugin_code: PluginCode) -> None:
    with plugin_code() as refused:
        if refused:
            _record(found, ep.name, dist, PLUGIN_NOT_LOADED, refused)
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
    _settle_conflicts(found)
    return [entry for name, entry in found.backends.items() if name not in before]


def _register_builtin_backends(found: Discovered, own: str, own_entry_points: list[Any],
                               settings: Settings) -> set[str]:
    """Load and register argonishche's own backends, through its own entry points, before any
    other plugin; the names of those built for this machine.  Every built-in name, of any
    architecture, is then reserved: on aarch64 no plugin may call itself ``avx2`` either."""
    try:
        # Installed from backends/ (package-dir): mypy run on the source tree does not find it.
        from argonishche_backends.table import (  # type: ignore[import-not-found, unused-ignore]
            ALL_BUILTIN_BACKENDS,
            BUILTIN_BACKENDS,
        )
    except Exception as exc:  # noqa: BLE001 - a broken install still gets a clear report
        _fail(found, BUILTIN_BACKENDS_MODULE, own, f"built-in backends failed to load: {exc!r}")
        return set()
    found.reserved = {row.name for row in ALL_BUILTIN_BACKENDS}
    built = {row.name for row in BUILTIN_BACKENDS}
    by_name: dict[str, Any] = {}
    for ep in own_entry_points:
        by_name.setdefault(ep.name.lower(), ep)
    missing = [row.name for row in BUILTIN_BACKENDS if row.name not in by_name]
    if missing:
        warn(f"argonishche: no entry point of {BUILTIN_DISTRIBUTION}'s own for the built-in "
             f"{noun(missing, 'backend')} {', '.join(missing)} (its dist-info is missing or "
             f"incomplete: a broken install, or a source tree on sys.path): registered directly "
             f"instead; reinstall {BUILTIN_DISTRIBUTION} to fix it")
    # Other architectures' rows register nothing: not loaded (pluggy's register is not free).
    for row in BUILTIN_BACKENDS:
        _load(found, by_name.get(row.name) or _DirectEntryPoint(row.name), own, settings,
              direct=True)
    return built


class _DirectEntryPoint:
    """A built-in backend's plugin object taken from its module directly, as its missing entry
    point would name it (``argonishche_backends:<name>``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def load(self) -> Any:
        return getattr(importlib.import_module(BUILTIN_BACKENDS_MODULE), self.name)


def _hook_functions(plugin: Any, hook_name: str) -> list[Callable[..., object]]:
    """The functions of *plugin* marked as implementing *hook_name*, found as pluggy finds
    them (an attribute marked by :data:`~argonishche.hookspecs.hookimpl`, under its name or its
    ``specname``), for argonishche's own plugins, which are registered without pluggy."""
    functions = []
    for attribute in dir(plugin):
        function = getattr(plugin, attribute, None)
        marks = getattr(function, f"{PROJECT_NAME}_impl", None)
        if callable(function) and isinstance(marks, dict) and (
                marks.get("specname") or attribute) == hook_name:
            functions.append(function)
    return functions


def _collect(found: Discovered, plugin_name: str, dist: str, plugin: Any,
             settings: Settings, declared: frozenset[str] | None = None, *,
             direct: bool = False) -> None:
    """Call this plugin's hooks one at a time (one failing costs only itself); refuse a
    backend it registers outside what its distribution *declared*.  *direct*: argonishche's
    own plugin, its hooks called without registering it with pluggy."""
    if not direct:
        manager = found.manager
        if not manager.is_registered(plugin):
            manager.register(plugin, name=f"{plugin_name} from {dist}")
    calls: tuple[tuple[str, type[Backend] | type[Allocator],
                       Callable[[Discovered, Any, str, str, Settings], str]], ...] = (
        ("argonishche_register_backends", Backend, _accept_backend),
        ("argonishche_register_allocators", Allocator, _accept_allocator))
    failed = False
    backend_names = []
    for hook_name, kind, accept in calls:
        functions = _hook_functions(plugin, hook_name) if direct else [
            impl.function for impl in getattr(found.manager.hook, hook_name).get_hookimpls()
            if impl.plugin is plugin]
        for function in functions:
            registered: list[Any] = []
            try:
                function(register=registered.append)
                for item in registered:
                    if not isinstance(item, kind):
                        raise TypeError(
                            f"registered {item!r}, not an argonishche.{kind.__name__}")
            except Exception as exc:  # noqa: BLE001
                _fail(found, plugin_name, dist, f"{hook_name} raised {exc!r}")
                failed = True
                continue
            for item in registered:
                problem = (_backend_declarations.undeclared_reason(item.name, declared, dist)
                           if kind is Backend else "") or accept(found, item, dist,
                                                                 plugin_name, settings)
                if problem:
                    _fail(found, plugin_name, dist, problem)
                    failed = True
                elif kind is Backend:
                    backend_names.append(item.name)
    if backend_names and declared is None and plugin_name.lower() not in backend_names:
        # ARGONISHCHE_DISABLE_BACKENDS=<backend> can then block only the backend, after the
        # plugin was imported: say how to let users block it before.
        warn(f"argonishche: plugin {plugin_name!r} from {dist} registers "
             f"{noun(backend_names, 'backend')} {', '.join(backend_names)} under another name: "
             f"declare {noun(backend_names, 'it', 'them')} in its "
             f"distribution's {_backend_declarations.DECLARATIONS} entry points (or name its "
             f"entry point {backend_names[0]!r}), so that ARGONISHCHE_DISABLE_BACKENDS="
             f"{backend_names[0]} keeps it from being imported")
    if not failed:
        _record(found, plugin_name, dist, PLUGIN_LOADED)


def _accept_backend(found: Discovered, backend: Backend, dist: str, plugin: str,
                    settings: Settings) -> str:
    name = backend.name
    if name in found.reserved and not _own_label(dist):
        return (f"backend {name!r} not used: the name belongs to a built-in backend of "
                f"{BUILTIN_DISTRIBUTION}, which a plugin may not replace")
    blocked = name in settings.disabled_backends
    entry = BackendEntry(backend, dist, BLOCKED if blocked else AVAILABLE,
                         "blocked by ARGONISHCHE_DISABLE_BACKENDS" if blocked else "",
                         plugin=plugin)
    rivals = [e for e in found.backends.values() if e.name == name]
    if not rivals:
        found.backends[name] = entry
        return ""
    same = next((e for e in rivals if e.distribution == dist or e.builtin), None)
    if same is not None:  # one distribution's two plugins: its own affair, the first stays
        return (f"backend {name!r} not used: already registered by plugin {same.plugin!r} "
                f"from {same.distribution}")
    # Two distributions claim the name.  Kept under a key no backend name can be (it has
    # spaces), so that backends() shows both while lookups by name find the first, refused too.
    found.backends[f"{name} ({plugin} from {dist})"] = entry
    if not blocked:  # blocked: the user keeps the name out of use anyway
        for rival in (*rivals, entry):
            rival.state = NAME_CONFLICT
        found.conflicts.add(name)
    return ""


def _settle_conflicts(found: Discovered) -> None:
    """Give each backend in a name conflict its reason, mark the plugins, and warn once per
    name.  The entries were marked as the clash was found, before any check: no kernel module
    of theirs is imported."""
    for name in sorted(found.conflicts):
        rivals = [e for e in found.backends.values() if e.name == name]
        who = {id(e): f"plugin {e.plugin!r} from {e.distribution}" for e in rivals}
        for e in rivals:
            others = " and ".join(who[id(o)] for o in rivals if o is not e)
            e.reason = (f"name conflict: {others} also registers a backend {name!r}; a name must "
                        f"be one distribution's, so neither is used (block one with "
                        f"ARGONISHCHE_DISABLE_BACKENDS, or uninstall it)")
            _record(found, e.plugin, e.distribution, PLUGIN_FAILED,
                    f"backend {name!r} refused: {others} registers one of that name too")
        blockable = " or ".join(
            f"={e.distribution.split(' ')[0]}" for e in rivals)
        warn(f"argonishche: backend {name!r} is registered by {' and '.join(who.values())}: a "
             f"backend name must belong to one distribution, so neither is used. Uninstall one, "
             f"or block one before it is imported with ARGONISHCHE_DISABLE_BACKENDS{blockable}")
    found.conflicts.clear()


def _accept_allocator(found: Discovered, allocator: Allocator, dist: str, plugin: str,
                      settings: Settings) -> str:
    name = str(allocator.name).lower()
    if not name:
        return f"allocator {allocator!r} not used: it has no name"
    if name in found.allocators:
        return f"allocator {name!r} not used: already registered by {found.allocators[name][1]}"
    found.allocators[name] = (allocator, dist)
    return ""


def _record(found: Discovered, name: str, dist: str, state: str, reason: str = "") -> None:
    """Note what became of the plugin *name* of *dist*: one record per plugin, whose reason
    gathers every problem it had (a failure outweighs the rest)."""
    for index, plugin in enumerate(found.plugins):
        if plugin.name == name and plugin.distribution == dist:
            merged = PLUGIN_FAILED if PLUGIN_FAILED in (plugin.state, state) else state
            found.plugins[index] = PluginInfo(
                name, dist, merged, "; ".join(filter(None, (plugin.reason, reason))))
            return
    found.plugins.append(PluginInfo(name, dist, state, reason))


def _fail(found: Discovered, name: str, dist: str, reason: str) -> None:
    _record(found, name, dist, PLUGIN_FAILED, reason)
    warn(f"argonishche: plugin {name!r} from {dist}: {reason}")


def _warn_unknown(variable: str, named: frozenset[str], known: set[str], kind: str) -> None:
    normalized = {_normalized(name) for name in known}
    unknown = sorted(name for name in named if _normalized(name) not in normalized)
    if unknown:  # the names as given, at most ECHO_LIMIT characters of them
        warn(f"argonishche: {variable} names {echo(', '.join(unknown), quoted=False)}, which "
             f"no installed plugin provides; known {kind}: {', '.join(sorted(known)) or 'none'}")
