"""The one place where backends are discovered, checked and selected.

Start-up, once per process, on first use (not at import):

1. Walk the ``argonishche`` entry points.  Plugins named in ``ARGONISHCHE_DISABLE_BACKENDS`` are
   blocked *before* they are imported; a plugin that fails to import, fails pluggy's validation
   or raises in its hook is recorded with its distribution, and the others carry on.
2. For each registered :class:`~argonishche.hookspecs.Backend`: the CPU gate (never import, let
   alone run, kernels the CPU lacks: that is SIGILL, not an exception), then the kernel ABI of its
   compiled module, then the quick known-answer self-test.
3. Select per algorithm the available backend with the highest priority, or, with
   ``ARGONISHCHE_SELECT=measure`` (or :meth:`Registry.calibrate`), the one that was fastest in a
   brief timing on this machine: some CPUs run a narrower ISA faster.  ``ARGONISHCHE_BACKEND``
   forces one instead: a forced name that is unknown or unusable is an error that says why and
   lists what is available, never a silent fallback.

After that the hot path is a lookup of two cdata pointers: no pluggy call per hash.
"""

from __future__ import annotations

import importlib
import os
import _thread
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pluggy

from . import _cpu, _driver, hookspecs, _selftest
from ._entry_points import entry_points
from ._core import ffi, lib
from .exceptions import BackendError
from .hookspecs import PROJECT_NAME, Allocator, Backend

FORCE_ENV = "ARGONISHCHE_BACKEND"
DISABLE_ENV = "ARGONISHCHE_DISABLE_BACKENDS"
SELECT_ENV = "ARGONISHCHE_SELECT"
ALLOCATOR_ENV = "ARGONISHCHE_ALLOCATOR"
#: Measured (README, "Memory"): reusing mapped memory avoids a page fault per 4 KiB per hash.
DEFAULT_ALLOCATOR = "arena"
SELECT_MODES = ("priority", "measure")
ALGORITHMS = ("argon2", "blake2b")

# Backend states, as ``backends()`` and ``info`` report them.
SELECTED = "selected"
AVAILABLE = "available"
UNSUPPORTED_CPU = "unsupported-cpu"
BLOCKED = "blocked"
LOAD_FAILED = "load-failed"
SELFTEST_FAILED = "selftest-failed"
USABLE_STATES = (SELECTED, AVAILABLE)


@dataclass(frozen=True)
class BackendInfo:
    """What ``argonishche.backends()`` returns for one backend (or one plugin that failed)."""

    name: str
    priority: int
    state: str
    reason: str
    distribution: str
    description: str = ""
    cpu_features: tuple[str, ...] = ()
    selected_for: tuple[str, ...] = ()
    selftest_ms: float | None = None
    measured_us: dict[str, float] = field(default_factory=dict)


@dataclass
class _Entry:
    name: str
    distribution: str
    state: str
    reason: str = ""
    backend: Backend | None = None
    table: Any = None   # ``const argonishche_kernel_table *`` once loaded and tested
    module: Any = None  # the compiled module; the table lives in its data segment
    selftest_ms: float | None = None
    selected_for: list[str] = field(default_factory=list)
    measured_us: dict[str, float] = field(default_factory=dict)  # algorithm -> best time


def _distribution_label(entry_point) -> str:
    dist = getattr(entry_point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def _names(raw: str) -> set[str]:
    return {part.strip().lower() for part in raw.split(",") if part.strip()}


class Registry:
    """Backends found, checked and selected for one environment; see the module docstring."""

    def __init__(self, environ: Mapping[str, str] = os.environ,
                 plugin_entry_points: Iterable[Any] | None = None) -> None:
        self.forced = environ.get(FORCE_ENV, "").strip().lower() or None
        self.disabled = _names(environ.get(DISABLE_ENV, ""))
        self.select_mode = environ.get(SELECT_ENV, "").strip().lower() or "priority"
        self.allocator_name = environ.get(ALLOCATOR_ENV, "").strip().lower() or DEFAULT_ALLOCATOR
        self.allocators: dict[str, tuple[Allocator, str]] = {}  # name -> (allocator, dist)
        self.entries: dict[str, _Entry] = {}
        self.selection: dict[str, _Entry] = {}
        self.tables: dict[str, Any] = {}   # algorithm -> selected kernel table, for hot paths
        self.selection_error: BackendError | None = None
        self.plugin_manager = pluggy.PluginManager(PROJECT_NAME)
        self.plugin_manager.add_hookspecs(hookspecs)
        if plugin_entry_points is None:
            plugin_entry_points = entry_points(group=PROJECT_NAME)
        self._discover(plugin_entry_points)
        for entry in self.entries.values():
            if entry.backend is not None and entry.state == AVAILABLE:
                self._check(entry)
        self._select()

    # ---- discovery ------------------------------------------------------------------------

    def _add(self, entry: _Entry) -> None:
        # A failed plugin and a backend may share a name; keep both, the failure under a suffix.
        key = entry.name
        while key in self.entries:
            key += "'"
        self.entries[key] = entry

    def _discover(self, plugin_entry_points: Iterable[Any]) -> None:
        pm = self.plugin_manager
        for ep in sorted(plugin_entry_points, key=lambda ep: ep.name):
            dist = _distribution_label(ep)
            if ep.name.lower() in self.disabled:
                pm.set_blocked(ep.name)
                self._add(_Entry(ep.name, dist, BLOCKED, f"blocked by {DISABLE_ENV}"))
                continue
            try:
                pm.register(ep.load(), name=ep.name)
                pm.check_pending()
            except Exception as exc:  # noqa: BLE001 - any failure of a plugin is reported, not fatal
                if pm.has_plugin(ep.name):
                    pm.unregister(name=ep.name)
                self._fail_plugin(ep.name, dist, f"plugin failed to load: {exc!r}")
                continue
            self._collect(ep.name, dist)

    def _collect(self, plugin_name: str, dist: str) -> None:
        """Call this plugin's hooks one by one, so that one failing hook costs only itself."""
        plugin = self.plugin_manager.get_plugin(plugin_name)
        hook = self.plugin_manager.hook
        for caller, kind, accept in (
                (hook.argonishche_register_backends, Backend, self._register_backend),
                (hook.argonishche_register_allocators, Allocator, self._register_allocator)):
            for impl in caller.get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                registered: list = []
                try:
                    impl.function(register=registered.append)
                    for item in registered:
                        if not isinstance(item, kind):
                            raise TypeError(
                                f"registered {item!r}, not an argonishche.{kind.__name__}")
                except Exception as exc:  # noqa: BLE001
                    self._fail_plugin(plugin_name, dist, f"{caller.name} raised {exc!r}")
                    continue
                for item in registered:
                    accept(item, dist)

    def _register_allocator(self, allocator: Allocator, dist: str) -> None:
        name = str(allocator.name).lower()
        if not name or name in self.allocators:
            why = "no name" if not name else f"already registered by {self.allocators[name][1]}"
            self._fail_plugin(f"allocator {name or '?'}", dist, f"allocator not used: {why}")
            return
        self.allocators[name] = (allocator, dist)

    def _register_backend(self, backend: Backend, dist: str) -> None:
        if backend.name in self.disabled:
            self._add(_Entry(backend.name, dist, BLOCKED, f"blocked by {DISABLE_ENV}", backend))
        elif backend.name in self.entries and self.entries[backend.name].backend is not None:
            first = self.entries[backend.name].distribution
            self._add(_Entry(backend.name, dist, LOAD_FAILED,
                             f"duplicate backend name: already registered by {first}", backend))
        else:
            self._add(_Entry(backend.name, dist, AVAILABLE, "", backend))

    def _fail_plugin(self, name: str, dist: str, reason: str) -> None:
        self._add(_Entry(name, dist, LOAD_FAILED, reason))
        warnings.warn(f"argonishche: plugin {name!r} from {dist} is not used: {reason}",
                      RuntimeWarning, stacklevel=4)

    # ---- checks ---------------------------------------------------------------------------

    def _check(self, entry: _Entry) -> None:
        backend = entry.backend
        missing = backend.cpu_features - _cpu.features()
        if missing:
            entry.state = UNSUPPORTED_CPU
            entry.reason = f"this CPU lacks {', '.join(sorted(missing))}"
            return
        try:
            entry.module = importlib.import_module(backend.kernel_module)
            entry.table = self._kernel_table(entry.module)
        except Exception as exc:  # noqa: BLE001
            entry.state = LOAD_FAILED
            entry.reason = f"kernel module {backend.kernel_module}: {exc}"
            warnings.warn(f"argonishche: backend {backend.name!r} from {entry.distribution} is "
                          f"not used: {entry.reason}", RuntimeWarning, stacklevel=4)
            return
        started = time.perf_counter()
        failures = _selftest.run(entry.table)
        entry.selftest_ms = (time.perf_counter() - started) * 1e3
        if failures:
            entry.state = SELFTEST_FAILED
            entry.reason = "wrong result for " + "; ".join(failures)
            entry.table = None
            warnings.warn(f"argonishche: backend {backend.name!r} failed its self-test and is "
                          f"excluded: {entry.reason}", RuntimeWarning, stacklevel=4)

    @staticmethod
    def _kernel_table(module):
        """The module's kernel table as a core cdata pointer, after checking its ABI."""
        built_for = getattr(module.lib, "ARGONISHCHE_KERNEL_ABI", None)
        if built_for != lib.ARGONISHCHE_KERNEL_ABI:
            raise BackendError(f"built for kernel ABI {built_for}, this argonishche speaks "
                               f"ABI {lib.ARGONISHCHE_KERNEL_ABI}: reinstall the plugin")
        address = int(module.ffi.cast("uintptr_t", module.lib.argonishche_kernels()))
        table = ffi.cast("const argonishche_kernel_table *", address)
        if (table.abi_version != lib.ARGONISHCHE_KERNEL_ABI
                or table.table_size != ffi.sizeof("argonishche_kernel_table")):
            raise BackendError(f"kernel table says ABI {table.abi_version}, size "
                               f"{table.table_size}; expected ABI {lib.ARGONISHCHE_KERNEL_ABI}, "
                               f"size {ffi.sizeof('argonishche_kernel_table')}")
        return table

    # ---- selection ------------------------------------------------------------------------

    def usable(self) -> list[_Entry]:
        return [e for e in self.entries.values() if e.table is not None]

    def _summary(self) -> str:
        return "; ".join(f"{e.name} ({e.state}{': ' + e.reason if e.reason else ''})"
                         for e in self.entries.values()) or "no backends registered"

    def _select(self) -> None:
        usable = self.usable()
        if self.select_mode not in SELECT_MODES:
            self.selection_error = BackendError(
                f"{SELECT_ENV}={self.select_mode}: must be one of {', '.join(SELECT_MODES)}")
            return
        if self.forced is not None:
            entry = self.entries.get(self.forced)
            if entry is None or entry.backend is None:
                self.selection_error = BackendError(
                    f"{FORCE_ENV}={self.forced}: no such backend. Registered: {self._summary()}")
                return
            if entry.table is None:
                self.selection_error = BackendError(
                    f"{FORCE_ENV}={self.forced} cannot be used: {entry.state}: {entry.reason}. "
                    f"Available: {', '.join(e.name for e in usable) or 'none'}")
                return
            chosen = entry
        elif usable:
            if self.select_mode == "measure":
                self.calibrate()
                return
            chosen = max(usable, key=lambda e: (e.backend.priority, e.name))
        else:
            self.selection_error = BackendError(f"no usable backend. {self._summary()}")
            return
        self._choose({algorithm: chosen for algorithm in ALGORITHMS})

    def _choose(self, choice: dict[str, _Entry]) -> None:
        for entry in self.entries.values():
            entry.selected_for.clear()
            if entry.state == SELECTED:
                entry.state = AVAILABLE
        for algorithm, entry in choice.items():
            self.selection[algorithm] = entry
            self.tables[algorithm] = entry.table
            entry.selected_for.append(algorithm)
            entry.state = SELECTED

    def calibrate(self, repetitions: int = 5) -> dict[str, dict[str, float]]:
        """Time every usable backend briefly and select the fastest for each algorithm.

        Each backend hashes a small Argon2d (t=1, 256 KiB) and 64 KiB of BLAKE2b, interleaved
        with the others, *repetitions* times; the best time counts (noise only adds time).
        Returns {algorithm: {backend: microseconds}}; a forced backend stays forced.
        """
        usable = self.usable()
        if not usable:
            raise self.selection_error or BackendError(f"no usable backend. {self._summary()}")
        message = bytes(65536)
        work = {
            "argon2": lambda t: _driver.argon2(
                t, t, type="d", version=0x13, time_cost=1, memory_cost=256, parallelism=1,
                threads=1, password=b"calibrate", salt=bytes(16), secret=b"",
                associated_data=b"", hash_len=32),
            "blake2b": lambda t: _driver.blake2b_update(
                _driver.new_blake2b_state(t, 64, b"", b"", b""), message),
        }
        for _ in range(repetitions):
            for entry in usable:
                for algorithm, run in work.items():
                    started = time.perf_counter()
                    run(entry.table)
                    elapsed = (time.perf_counter() - started) * 1e6
                    best = entry.measured_us.get(algorithm, float("inf"))
                    entry.measured_us[algorithm] = min(best, elapsed)
        if self.forced is None:
            self._choose({algorithm: min(usable, key=lambda e: e.measured_us[algorithm])
                          for algorithm in ALGORITHMS})
        return {algorithm: {e.name: e.measured_us[algorithm] for e in usable}
                for algorithm in ALGORITHMS}

    def kernel_table(self, algorithm: str, backend: str | None = None):
        """The kernel table to use for *algorithm*, or for the backend named *backend*."""
        if backend is None:
            entry = self.selection.get(algorithm)
            if entry is None:
                raise self.selection_error or BackendError(f"unknown algorithm {algorithm!r}")
            return entry.table
        entry = self.entries.get(backend.lower())
        if entry is None or entry.table is None:
            why = "no such backend" if entry is None else f"{entry.state}: {entry.reason}"
            raise BackendError(f"backend {backend!r} cannot be used: {why}. Available: "
                               f"{', '.join(e.name for e in self.usable()) or 'none'}")
        return entry.table

    def allocator(self, name: str | None = None) -> Allocator:
        """The allocator named *name*, else the one ``ARGONISHCHE_ALLOCATOR`` or the default
        names; an unknown name is an error listing the registered ones."""
        wanted = (name or self.allocator_name).lower()
        try:
            return self.allocators[wanted][0]
        except KeyError:
            source = "" if name else f" ({ALLOCATOR_ENV})" if wanted != DEFAULT_ALLOCATOR else ""
            raise BackendError(f"allocator {wanted!r}{source}: no such allocator. Registered: "
                               f"{', '.join(sorted(self.allocators)) or 'none'}") from None

    def selected_name(self, algorithm: str) -> str:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}, not {algorithm!r}")
        entry = self.selection.get(algorithm)
        if entry is None:
            raise self.selection_error
        return entry.name

    def report(self) -> list[BackendInfo]:
        return [BackendInfo(
            name=e.name, priority=e.backend.priority if e.backend else 0, state=e.state,
            reason=e.reason, distribution=e.distribution,
            description=e.backend.description if e.backend else "",
            cpu_features=tuple(sorted(e.backend.cpu_features)) if e.backend else (),
            selected_for=tuple(e.selected_for), selftest_ms=e.selftest_ms,
            measured_us=dict(e.measured_us),
        ) for e in sorted(self.entries.values(),
                          key=lambda e: (-(e.backend.priority if e.backend else -1), e.name))]


_instance: Registry | None = None
_lock = _thread.allocate_lock()  # threading's import is not needed for one lock


def get() -> Registry:
    """The process-wide registry, built on first use; safe to call from many threads."""
    registry = _instance
    if registry is None:
        registry = _build()
    return registry


def selected_table(algorithm: str):
    """The selected kernel table for *algorithm*: the hot paths' one dictionary lookup."""
    try:
        return _instance.tables[algorithm]
    except (AttributeError, KeyError):  # not built yet, or no usable backend (raises why)
        return get().kernel_table(algorithm)


def _build() -> Registry:
    global _instance
    with _lock:
        if _instance is None:
            _instance = Registry()
        return _instance


def reset() -> None:
    """Forget the registry, so the next use rediscovers (for tests and long-lived tools)."""
    global _instance
    with _lock:
        _instance = None
