"""The registry: settings, discovery, checks and selection composed, once per process.

Start-up happens on first use (the first hash, ``backends()``, ``info``), never at import:

1. :mod:`argonishche._settings` parses every ``ARGONISHCHE_*`` variable (an invalid one is a
   SettingError naming it, raised from here);
2. :mod:`argonishche._discovery` walks the plugins and collects backends and allocators;
3. :mod:`argonishche._trust.vetting` checks each backend (CPU gate, module, ABI, compiled
   target, self-test);
4. :mod:`argonishche._selection` picks a backend per algorithm.

After that the hot path is :func:`selected_table`: one dictionary lookup, no pluggy call.

The process's one registry, its locks and what fork() does to them:
:mod:`argonishche._process_registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from . import _process_registry, _selection, _settings, _warn
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
from ._record import field, record
from ._trust import vetting
from ._wording import stated
from .exceptions import ArgonishcheError, BackendError, ParameterTypeError, SettingError, echo
from .hookspecs import PROJECT_NAME, Allocator

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from ._core import CData

ALGORITHMS = _selection.ALGORITHMS
__all__ = ["ALGORITHMS", "USABLE_STATES", "BackendInfo", "Registry", "get", "reset",
           "selected_table"]


@record
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
                vetting.check(entry)
        reference = self._reference()
        for entry in self.entries.values():
            if entry.state == AVAILABLE and not entry.builtin:
                self._check_plugin_backend(entry, reference)
        # algorithm -> selected kernel table, for hot paths; replaced by _choose only
        self.tables: dict[str, CData] = {}
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
            vetting.check(entry)
            if vetting.needs_certification(entry):
                vetting.certify(entry, reference, self.settings)
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
        # The one way the selection changes: a new tables dict (never one changed in place),
        # pushed to the C blake2b type if this is the process registry.
        _selection.mark(self.entries.values(),
                        {a: self.entries[c.backend] for a, c in choices.items()})
        self.choices = choices
        self.tables = {a: self.entries[c.backend].table for a, c in choices.items()}
        _process_registry.selection_changed(self)

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
                # The selection failed: a plugin may be what it needs.
                finished = _finished()
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
        named *backend*: the witness (argonishche._trust.witness) checks the tags of hashes that
        have third-party owners.

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
            with _process_registry.lock():
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
        with _process_registry.lock():
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
            self._choose(choices)  # pushes the new selection to the C blake2b type at once
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
            with _process_registry.deferred_lock():
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


def _finished() -> Registry | None:
    """The process registry once its build is done
    (:func:`argonishche._process_registry.finished`)."""
    finished: Registry | None = _process_registry.finished()
    return finished


def _lookup_name(kind: str, name: str) -> str:
    """*name* (a backend's or an allocator's, as a caller gave it) lowercased for the lookup.

    :raises BackendError: it is not ASCII.  Names are ASCII only, as in the settings: str.lower()
        maps the Kelvin sign (U+212A) onto k, so "LOCKED" spelled with it would find ``locked``."""
    if not name.isascii():
        foreign = next(i for i, char in enumerate(name) if not char.isascii())
        raise BackendError(f"{kind} {echo(name)} cannot be used: names are ASCII only (character "
                           f"{foreign + 1} is U+{ord(name[foreign]):04X})")
    return name.lower()


def get() -> Registry:
    """The process-wide registry, built on first use; safe to call from many threads.

    While another thread runs the plugins' code for it, this is the provisional registry of the
    built-in backends (see :mod:`argonishche._process_registry`).

    :raises SettingError: an ``ARGONISHCHE_*`` variable is invalid (raised on every call until
        it is fixed and :func:`reset` is called)."""
    registry: Registry | None = _process_registry._instance
    if registry is None:
        registry = _process_registry.get(Registry)
    return registry


def selected_table(algorithm: str) -> CData:
    """The selected kernel table for *algorithm*: the hot paths' one dictionary lookup."""
    try:
        return _process_registry._instance.tables[algorithm]
    except (AttributeError, KeyError):  # not built yet, or no usable backend (raises why)
        return get().kernel_table(algorithm)


reset = _process_registry.reset
