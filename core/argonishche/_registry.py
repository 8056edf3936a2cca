"""The registry: settings, discovery, checks and selection composed, once per process.

Start-up happens on first use (the first hash, ``backends()``, ``info``), never at import:

1. :mod:`argonishche._settings` parses every ``ARGONISHCHE_*`` variable (an invalid one is a
   SettingError naming it, raised from here);
2. :mod:`argonishche._discovery` walks the plugins and collects backends and allocators;
3. :mod:`argonishche._backend_checks` checks each backend (CPU gate, module, ABI, compiled
   target, self-test);
4. :mod:`argonishche._selection` picks a backend per algorithm.

After that the hot path is :func:`selected_table`: one dictionary lookup, no pluggy call.

Locks, threads and fork (the one place the lock order is written down; docs/threads.md says it for
users):

- ``fork()`` waits for two locks, in this order (the before-fork hooks run in reverse order of
  registration, and the package's ``__init__`` registers after this module): the lazy-name lock
  (``argonishche._lazy_lock``), then this module's ``_lock``.  Code may take ``_lazy_lock`` and
  then ``_lock``, never the reverse.
- Under either, only argonishche's own code runs: parsing the settings, registering and checking
  the built-in backends, the selection, a lazy import of one of argonishche's modules.  Never a
  warning or a log call (:mod:`argonishche._warn` keeps them until the locks are released), and
  never plugin code: a plugin's import and hooks, a third-party kernel module's import, self-test
  and certification.  Another fork hook (logging's) or another thread (one a plugin's import
  waits for) may hold what such code needs, while waiting for one of these locks.
- The builder (the one thread that builds the registry, marked by ``_builder``) holds ``_lock``
  except while plugin code runs (:func:`_plugin_window` releases it); ``_build_finished``, which
  fork() does not wait for, is held for the whole build.  A thread that asks for the registry
  while the builder runs plugin code (the builder itself, from plugin code, included) gets a
  *provisional* registry of the built-in backends only, checked like any, and hashes with it:
  the same tags, maybe slower.  It waits for the build only for what only a plugin can give
  (an allocator or a backend named that the built-ins do not have).
- A child forked while another thread ran plugin code never runs plugin code: that thread's
  locks (importlib's lock on the module it was importing) are held in the child forever.  It
  builds a registry of the built-ins, and records each plugin as ``not-loaded`` with the reason.
- ``_deferred_lock`` (not waited for by fork) serializes the import of deferred plugins
  (:meth:`Registry.allocator`); it is never taken under ``_lock``.
"""

from __future__ import annotations

import _thread
import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _backend_checks, _selection, _settings, _warn, _work_memory
from ._backend_declarations import DECLARATIONS
from ._discovery import (
    AVAILABLE,
    LOAD_FAILED,
    QUARANTINED,
    USABLE_STATES,
    BackendEntry,
    PluginCode,
    PluginInfo,
    discover,
    load_deferred,
    run_here,
)
from ._entry_points import entry_point_groups
from ._wording import stated
from .exceptions import ArgonishcheError, BackendError, ParameterTypeError, SettingError, echo
from .hookspecs import PROJECT_NAME, Allocator

if TYPE_CHECKING:
    from ._core import CData

ALGORITHMS = _selection.ALGORITHMS
__all__ = ["ALGORITHMS", "USABLE_STATES", "BackendInfo", "Registry", "get", "reset",
           "selected_table"]


@dataclass(frozen=True)
class BackendInfo:
    """What ``argonishche.backends()`` returns for one registered backend."""

    name: str
    priority: int
    state: str
    reason: str
    distribution: str
    description: str = ""
    cpu_features: tuple[str, ...] = ()
    selected_for: tuple[str, ...] = ()
    selftest_ms: float | None = None
    #: {algorithm: nanoseconds per KiB} when the selection measured the backends (see info).
    ns_per_kib: dict[str, float] = field(default_factory=dict)
    #: Shipped by argonishche itself; any other backend is used only once certified.
    builtin: bool = True
    validation: str = ""
    #: Built in, or this repository's own plugin wheel; a third-party one is witnessed.
    first_party: bool = True


class Registry:
    """Backends and allocators found, checked and selected for one environment."""

    def __init__(self, environ: Mapping[str, str] | None = None,
                 plugin_entry_points: Iterable[Any] | None = None, *,
                 plugin_code: PluginCode = run_here, provisional: bool = False,
                 backend_declarations: Iterable[Any] = ()) -> None:
        """:param environ: the variables to read (default: this process's, parsed once).
        :param plugin_entry_points: the entry points to walk (default: the installed ones).
        :param backend_declarations: the entry points declaring their backends (group
            ``argonishche.backends``; the installed ones when *plugin_entry_points* is not given).
        :param plugin_code: the context every run of plugin code is made in (a plugin's import
            and hooks; a third-party kernel module's import, self-test and certification); it
            may refuse to run it.  The process registry's releases its lock (module docstring).
        :param provisional: the registry threads get while another loads the plugins: chosen
            by the ladder (nothing measured or remembered), and a forced backend the built-ins
            do not have is replaced by the best built-in (the tags are the same).
        :raises SettingError: a variable has a value that is not allowed."""
        self.settings = _settings.current() if environ is None else _settings.parse(environ)
        if plugin_entry_points is None:
            installed = entry_point_groups((PROJECT_NAME, DECLARATIONS))
            plugin_entry_points, backend_declarations = installed[PROJECT_NAME], installed[
                DECLARATIONS]
        self.provisional = provisional
        self._plugin_code = plugin_code
        self._found = found = discover(self.settings, plugin_entry_points, plugin_code,
                                       backend_declarations)
        self.entries: dict[str, BackendEntry] = found.backends
        self.allocators: dict[str, tuple[Allocator, str]] = found.allocators
        self.plugins: list[PluginInfo] = found.plugins
        for entry in self.entries.values():
            if entry.state == AVAILABLE and entry.builtin:
                _backend_checks.check(entry)
        reference = self._reference()
        for entry in self.entries.values():
            if entry.state == AVAILABLE and not entry.builtin:
                self._check_plugin_backend(entry, reference)
        self.tables: dict[str, CData] = {}   # algorithm -> selected kernel table, for hot paths
        self.choices: dict[str, _selection.Choice] = {}   # algorithm -> what was chosen, why
        self.selection_error: ArgonishcheError | None = None
        # id(table) -> (table, its entry), kept for the process: see hashing_tables().
        self._table_owners: dict[int, tuple[CData, BackendEntry]] = {}
        settings = self.settings
        if provisional:
            forced = settings.backend if settings.backend in self.entries else None
            settings = settings._replace(select="priority", backend=forced)
        try:
            self._choose(_selection.select(settings, self.entries, plugins=self.plugins))
        except (BackendError, SettingError) as exc:
            self.selection_error = exc  # raised when a hash needs a backend, not before

    def _check_plugin_backend(self, entry: BackendEntry, reference: CData | None) -> None:
        """Check and certify a backend that is not built in: plugin code (its kernel module is
        imported, or certified in a child first)."""
        with self._plugin_code() as refused:
            if refused:
                entry.state, entry.reason = LOAD_FAILED, refused
                return
            _backend_checks.check(entry)
            if _backend_checks.needs_certification(entry):
                _backend_checks.certify(entry, reference, self.settings)
        if entry.table is not None and not entry.first_party and self.settings.witness:
            entry.validation += ", witnessed (a built-in recomputes its Argon2 tags)"

    def _reference(self) -> CData | None:
        """ref's kernel table, which certification compares with, if ref is the built-in one
        and usable here."""
        ref = self.entries.get("ref")
        return ref.table if ref is not None and ref.builtin else None

    def usable(self) -> list[BackendEntry]:
        return _selection.usable(self.entries.values())

    def _choose(self, choices: dict[str, _selection.Choice]) -> None:
        _selection.mark(self.entries.values(),
                        {a: self.entries[c.backend] for a, c in choices.items()})
        self.choices = choices
        self.tables = {a: self.entries[c.backend].table for a, c in choices.items()}

    def calibrate(self, rounds: int = _selection.ROUNDS,
                  budget: float = _selection.BUDGET_SECONDS,
                  step: Callable[[str], None] | None = None) -> dict[str, dict[str, float]]:
        """Measure every usable backend afresh, select the fastest for each algorithm (unless a
        backend is forced: it stays selected) and remember the choice for this CPU.

        Returns {algorithm: {backend: nanoseconds per KiB}}.  *rounds*, *budget* (seconds) and
        *step* (called before each round): as :func:`argonishche._selection.measure` takes them.
        """
        if self.provisional:  # a measurement of the finished registry, which is kept
            finished = _finished()
            if finished is not None:
                return finished.calibrate(rounds, budget, step)
        candidates = self.usable()
        if not candidates:
            raise self.selection_error or BackendError(
                f"no usable backend. {_selection.summary(self.entries.values())}")
        if self.settings.backend is not None:
            return _selection.measure(candidates, rounds=rounds, budget=budget,
                                      step=step).ns_per_kib
        self._choose(_selection.select(self.settings, self.entries, fresh=True, rounds=rounds,
                                       plugins=self.plugins,
                                       budget=budget, step=step))
        self.selection_error = None
        return {a: dict(c.ns_per_kib) for a, c in self.choices.items()}

    def kernel_table(self, algorithm: str, backend: str | None = None) -> CData:
        """The kernel table to use for *algorithm*, or for the backend named *backend*."""
        if backend is None:
            table = self.tables.get(algorithm)
            if table is None and self.provisional and algorithm in ALGORITHMS:
                finished = _finished()  # the selection failed: a plugin may be what it needs
                if finished is not None:
                    return finished.kernel_table(algorithm)
            if table is None:
                raise self.selection_error or BackendError(
                    f"unknown algorithm {echo(algorithm)}")
            return table
        entry = self.entries.get(_lookup_name("backend", backend))
        if entry is None and self.provisional:  # a plugin's, maybe: ask the finished registry
            finished = _finished()
            if finished is not None:
                return finished.kernel_table(algorithm, backend)
        if entry is None or entry.table is None:
            why = "no such backend" if entry is None else stated(entry.state, entry.reason)
            raise BackendError(f"backend {echo(backend)} cannot be used: {why}. Available: "
                               f"{', '.join(e.name for e in self.usable()) or 'none'}")
        return entry.table

    def hashing_tables(self, backend: str | None = None
                       ) -> tuple[CData, CData, tuple[tuple[BackendEntry, CData], ...]]:
        """(Argon2 table, BLAKE2b table, (third-party backend, its table) for each table a third
        party owns, Argon2's first) for one Argon2 hash with the selection, or with the backend
        named *backend*: the witness (argonishche._witness) checks the tags of hashes that have
        third-party owners.

        A quarantined backend named here hashes with the selection instead: its quarantine was
        warned about, and the backend is known to be wrong.  The owners are found from the
        tables themselves, through a map that keeps every table it has seen, so a table read
        just before a quarantine re-selected is still known as the quarantined backend's."""
        try:
            argon2 = self.kernel_table("argon2", backend)
            blake2b = self.kernel_table("blake2b", backend)
        except BackendError:
            named = None if backend is None or not backend.isascii() else \
                self.entries.get(backend.lower())
            if named is None or named.state != QUARANTINED:
                raise
            argon2, blake2b = self.kernel_table("argon2"), self.kernel_table("blake2b")
        owners = tuple((owner, table) for owner, table in (
            (self._owner_of(argon2), argon2), (self._owner_of(blake2b), blake2b))
            if owner is not None and not owner.first_party)
        if len(owners) == 2 and owners[0][0] is owners[1][0]:
            owners = owners[:1]
        return argon2, blake2b, owners

    def _owner_of(self, table: CData) -> BackendEntry | None:
        known = self._table_owners.get(id(table))
        if known is None:  # the first hash, or a plugin imported since (load_deferred)
            with _lock:
                for entry in self.entries.values():
                    if entry.table is not None:
                        self._table_owners.setdefault(id(entry.table), (entry.table, entry))
            known = self._table_owners.get(id(table))
        return None if known is None else known[1]

    def quarantine(self, name: str, reason: str) -> bool:
        """Stop using the backend *name* for the rest of this process (it gave a wrong result):
        the algorithms it was selected for fall back to the ladder's best usable backend (a
        forced backend gives way too); nothing is measured, and the others keep their choice.

        True for the one call that quarantined it; False if it already was (or is unknown), so
        that of several threads finding the same wrong kernel at once, one warns and records."""
        with _lock:
            entry = self.entries.get(name)
            if entry is None or entry.state == QUARANTINED:
                return False
            if entry.table is not None:
                self._owner_of(entry.table)  # hashes still holding its table must find it
            entry.state, entry.reason, entry.table = QUARANTINED, reason, None
            choices = dict(self.choices)
            affected = [a for a, choice in choices.items() if choice.backend == name]
            candidates = self.usable()
            for algorithm in affected:
                del choices[algorithm]
                if candidates:
                    choices[algorithm] = _selection.by_priority(
                        candidates, f"the ladder: {name} was quarantined")[algorithm]
            if affected and not candidates:
                self.selection_error = BackendError(
                    f"no usable backend: {name} was quarantined ({reason}). "
                    f"{_selection.summary(self.entries.values())}")
            # _choose replaces the tables dict (never mutates it): the blake2b type
            # (core/ext/blake2b_type.c) compares its cached table with the dict's and follows.
            self._choose(choices)
            return True

    @property
    def allocator_name(self) -> str:
        return self.settings.allocator_name

    def allocator(self, name: str | Allocator | None = None) -> Allocator:
        """The allocator named *name* (or *name* itself, an :class:`Allocator` instance), else
        the one ``ARGONISHCHE_ALLOCATOR`` or the default names; an unknown name is an error
        listing the registered ones."""
        if isinstance(name, Allocator):
            return name
        if name is not None and not isinstance(name, str):
            raise ParameterTypeError(f"allocator must be a registered allocator's name or an "
                                     f"argonishche.Allocator, not {type(name).__name__}")
        wanted = _lookup_name("allocator", name or self.allocator_name)
        if wanted not in self.allocators and self._found.deferred:
            self._load_deferred()  # a deferred plugin may provide it
        found = self.allocators.get(wanted)
        if found is None and self.provisional:  # a plugin's, maybe: ask the finished registry
            finished = _finished()
            if finished is not None:
                return finished.allocator(name)
        if found is not None:
            return found[0]
        registered = ", ".join(sorted(self.allocators)) or "none"
        if name is None and self.settings.allocator is not None:
            raise SettingError("ARGONISHCHE_ALLOCATOR", self.settings.allocator,
                               f"a registered allocator; registered: {registered}")
        raise BackendError(f"allocator {echo(wanted)}: no such allocator. Registered: "
                           f"{registered}")

    def _load_deferred(self) -> None:
        """Import the deferred plugins, all at once (outside ``_lock``: plugin code)."""
        with _warn.collected() as kept:
            with _deferred_lock:
                if self._found.deferred:
                    for entry in load_deferred(self._found, self.settings, self._plugin_code):
                        if entry.state == AVAILABLE:  # reported; a forced one stays forced
                            self._check_plugin_backend(entry, self._reference())
        _warn.emit(kept)

    def selected_name(self, algorithm: str) -> str:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not "
                             f"{echo(algorithm)}")
        entry = next((e for e in self.entries.values() if algorithm in e.selected_for), None)
        if entry is None:
            raise self.selection_error or BackendError("no backend selected")
        return entry.name

    def report(self) -> list[BackendInfo]:
        """One record per registered backend, best first."""
        return [BackendInfo(
            name=e.name, priority=e.backend.priority, state=e.state, reason=e.reason,
            distribution=e.distribution, description=e.backend.description,
            cpu_features=tuple(sorted(e.backend.cpu_features)),
            selected_for=tuple(e.selected_for), selftest_ms=e.selftest_ms,
            ns_per_kib={a: c.ns_per_kib[e.name] for a, c in self.choices.items()
                        if e.name in c.ns_per_kib},
            builtin=e.builtin, validation=e.validation, first_party=e.first_party,
        ) for e in sorted(self.entries.values(), key=lambda e: (-e.backend.priority, e.name))]


def _lookup_name(kind: str, name: str) -> str:
    """*name* (a backend's or an allocator's, as a caller gave it) lowercased for the lookup.

    :raises BackendError: it is not ASCII.  Names are ASCII only, as in the settings: str.lower()
        maps the Kelvin sign (U+212A) onto k, so "LOCKED" spelled with it would find ``locked``."""
    if not name.isascii():
        foreign = next(i for i, char in enumerate(name) if not char.isascii())
        raise BackendError(f"{kind} {echo(name)} cannot be used: names are ASCII only (character "
                           f"{foreign + 1} is U+{ord(name[foreign]):04X})")
    return name.lower()


# The C blake2b type (core/ext/blake2b_type.c) reads _instance and its ``tables`` dict by name
# on every construction, to reuse the table it last resolved while the selection is unchanged:
# renaming either means changing it there too (tests/kernels/test_blake2b_type.py follows
# calibrate()).
_instance: Registry | None = None
# The locks and the state of a build: see the module docstring for the order and the rules.
_lock = _thread.RLock()  # threading's import is not needed for a lock
_builder: int | None = None            # the thread building the registry
_builder_released_lock = False         # ... and it runs plugin code, _lock released
_build_finished = _thread.allocate_lock()  # held by the builder for the whole build
_provisional: Registry | None = None   # the built-ins, for other threads meanwhile
_generation = 0                        # reset() counts: a build started before is not kept
_plugin_threads: list[int] = []        # threads running plugin code now (once per nesting)
_plugins_refused: str | None = None    # in a child forked while plugin code ran: why
_deferred_lock = _thread.RLock()

FORKED_WHILE_LOADING = "not loaded: the process forked while plugins were loading"
LOADING_ELSEWHERE = ("not loaded yet: the plugins are loading (asked for meanwhile: the "
                     "built-in backends answered)")


@contextlib.contextmanager
def _plugin_window() -> Iterator[str | None]:
    """The process registry's :data:`PluginCode`: plugin code runs with ``_lock`` released (a
    fork() meanwhile then makes a child that loads no plugin), or not at all in such a child."""
    global _builder_released_lock
    if _plugins_refused is not None:
        yield _plugins_refused
        return
    me = _thread.get_ident()
    release = _builder == me and not _builder_released_lock  # the builder holds _lock once
    _plugin_threads.append(me)
    if release:
        _builder_released_lock = True
        _lock.release()
    try:
        yield None
    finally:
        if release:
            _lock.acquire()  # the global: in a child this thread forked, the child's new lock
            _builder_released_lock = False
        _plugin_threads.remove(me)


def _refusing(reason: str) -> PluginCode:
    """A :data:`PluginCode` that runs no plugin code, for *reason*."""
    @contextlib.contextmanager
    def refuse() -> Iterator[str | None]:
        yield reason
    return refuse


def _before_fork() -> None:
    # fork() waits while argonishche's own start-up code runs (a child forked then would inherit
    # the builder's locks, ours and importlib's lock of a built-in kernel module it was
    # importing), never while plugin code runs (which may wait for another fork hook's lock).
    _lock.acquire()


def _after_fork_in_parent() -> None:
    _lock.release()


def _after_fork_in_child() -> None:
    global _lock, _builder, _build_finished, _provisional, _instance, _plugins_refused
    global _deferred_lock
    me = _thread.get_ident()
    _lock = _thread.RLock()  # the parent's was held (by _before_fork) as the child was made
    _deferred_lock = _thread.RLock()
    _build_finished = _thread.allocate_lock()
    builder_forked = _builder == me  # plugin code of the build forked: the build goes on here
    if builder_forked:
        _build_finished.acquire()
        if not _builder_released_lock:
            _lock.acquire()
    others = [thread for thread in _plugin_threads if thread != me]
    _plugin_threads[:] = [thread for thread in _plugin_threads if thread == me]
    if others or (_builder is not None and not builder_forked):
        # Those threads do not exist here; the locks they held (importlib's, the plugin's own)
        # stay held: no plugin code runs in this process, and what they were building is gone.
        _plugins_refused = FORKED_WHILE_LOADING
        _instance = _provisional = None
        if not builder_forked:
            _builder = None


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork()
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def get() -> Registry:
    """The process-wide registry, built on first use; safe to call from many threads.

    While another thread runs the plugins' code for it, this is the provisional registry of the
    built-in backends (see the module docstring).

    :raises SettingError: an ``ARGONISHCHE_*`` variable is invalid (raised on every call until
        it is fixed and :func:`reset` is called)."""
    registry = _instance
    if registry is None:
        registry = _build()
    return registry


def selected_table(algorithm: str) -> CData:
    """The selected kernel table for *algorithm*: the hot paths' one dictionary lookup."""
    try:
        return _instance.tables[algorithm]  # type: ignore[union-attr]
    except (AttributeError, KeyError):  # not built yet, or no usable backend (raises why)
        return get().kernel_table(algorithm)


def _build() -> Registry:
    global _instance, _builder, _provisional
    kept: _warn.Collected = []
    try:
        with _warn.collected() as kept:  # given below, once no lock is held
            _lock.acquire()
            try:
                registry = _instance
                if registry is None and _builder is not None:
                    registry = _provisional_registry()
                if registry is None:
                    _builder, generation = _thread.get_ident(), _generation
                    _build_finished.acquire()  # free: only a builder takes it
                    try:
                        registry = Registry(plugin_code=_plugin_window)
                        if generation == _generation:  # else reset() came meanwhile: not kept
                            _instance = registry
                    finally:
                        _builder, _provisional = None, None
                        _build_finished.release()
            finally:
                _lock.release()  # the global: see _plugin_window
    finally:  # also when the build failed: what it found is still worth saying
        _warn.emit(kept)
    return registry


def _provisional_registry() -> Registry:
    """The built-ins-only registry, made once per build (called holding ``_lock``)."""
    global _provisional
    if _provisional is None:
        with _warn.collected():  # dropped: the builder gives the same ones when it is done
            _provisional = Registry(plugin_code=_refusing(LOADING_ELSEWHERE), provisional=True)
    return _provisional


def _finished() -> Registry | None:
    """The process registry, once the build in progress is done (None: there is none, or this
    thread is running its plugin code and cannot wait for itself)."""
    me = _thread.get_ident()
    if _builder is not None and _builder != me and me not in _plugin_threads:
        finished = _build_finished
        finished.acquire()
        finished.release()
    return _instance


def reset() -> None:
    """Forget the registry and the parsed settings, so the next use starts again (for tests
    and long-lived tools)."""
    global _instance, _provisional, _generation
    with _lock:
        _instance = _provisional = None
        _generation += 1
        _settings.forget()
        _work_memory.forget()
