"""The process's work-memory budget: its size and where it came from, and waiting for room.

Work memory is a resource of the process (``core/csrc/work_memory.c`` keeps it): every hash whose
memory argonishche allocates is admitted against one budget, waits in arrival order while the
process is at it, and finds the memory earlier hashes of any thread finished with.  This module
configures the budget (:func:`default_budget` sizes it), hands it to C on the first hash, reports it
(:func:`argonishche.memory_budget`) and turns a wait that lasted too long into
:class:`~argonishche.MemoryBudgetTimeout`.

How large the default budget is and why: :mod:`argonishche._memory_limits`.

**Waiting** happens in C with the GIL released, in slices of :data:`WAIT_SLICE_MS`: between
them the calling thread is back in Python for a moment, so signal handlers (Ctrl-C) run, and the
deadline is checked here.  The ticket that keeps the hash's place is closed in a ``finally``, and
by its ``ffi.gc`` destructor if even that is interrupted.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator

from . import _memory_limits, _settings
from ._core import ffi, lib
from ._memory_limits import MIB, size_text
from ._wording import counted
from .exceptions import MemoryBudgetError, MemoryBudgetTimeout, ParameterError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ._named_tuple import NamedTuple

if TYPE_CHECKING:
    from ._core import CData

#: Milliseconds of one wait in C before the thread looks in on Python (signals, the deadline).
WAIT_SLICE_MS = 100


class MemoryBudget(NamedTuple):
    """The process's work-memory budget and what it holds now (:func:`argonishche.memory_budget`).

    Sizes are in bytes.  ``held`` is ``in_use + idle``: the work memory argonishche has from the
    OS now; it never exceeds ``budget``.
    """

    budget: int
    #: Where ``budget`` came from, in words (a variable, ``set_memory_budget``, or which limit
    #: the default is half of).
    source: str
    held: int
    in_use: int
    idle: int
    #: The most ``held`` has been since the process started.
    high_water: int
    #: Hashes holding work memory now, and hashes waiting for room.
    running: int
    waiting: int
    #: Idle memory is given back to the OS after this many seconds without a hash using it.
    idle_seconds: float
    #: A hash waits at most this long for room before :class:`MemoryBudgetTimeout`.
    wait_seconds: float
    #: Since the process started: fresh mappings made, hashes served from kept memory, hashes
    #: that had to wait.
    maps: int
    reuses: int
    waits: int
    #: Kept memory from 2 MiB up gets transparent huge pages; and why (or why not).
    huge_pages: bool
    huge_pages_why: str


class _Config(NamedTuple):
    budget: int
    source: str
    idle_seconds: float
    wait_seconds: float
    huge_pages: bool
    huge_pages_why: str

    def apply(self) -> None:
        """Hand this configuration to C (work_memory.c)."""
        lib.argonishche_memory_configure(self.budget, round(self.idle_seconds * 1000),
                                         self.huge_pages)


_lock = threading.Lock()
_config: _Config | None = None


# ---- configuration ----------------------------------------------------------------------------


def _configure(mib: int | None, idle_seconds: float | None, wait_seconds: float | None,
               caller: str | None, huge_pages: bool | None = None) -> _Config:
    """Decide the budget from the arguments, else the environment, else the default; hand it
    to C.  The caller holds _lock."""
    global _config
    settings = _settings.current()
    if mib is not None:
        budget, source = mib * MIB, f"{caller}({mib})"
    elif settings.memory_budget_mib is not None:
        budget = settings.memory_budget_mib * MIB
        source = f"ARGONISHCHE_MEMORY_BUDGET_MIB={settings.memory_budget_mib}"
    else:
        budget, source = _memory_limits.default_budget()
    idle = settings.memory_idle_seconds if idle_seconds is None else idle_seconds
    wait = settings.memory_wait_seconds if wait_seconds is None else wait_seconds
    huge = _memory_limits.huge_pages(settings.memory_huge_pages) if huge_pages is None else (
        huge_pages, f"{caller}(huge_pages={huge_pages})")
    _config = _Config(budget, source, float(idle), float(wait), *huge)
    _config.apply()
    return _config


def config() -> _Config:
    """The budget in force, decided (and handed to C) on first use."""
    current = _config
    if current is None:
        with _lock:
            current = _config or _configure(None, None, None, None)
    return current


def _seconds(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 <= value <= _settings.MAX_WAIT_SECONDS:
        raise ParameterError(f"{name} must be a number of seconds from 0 to "
                             f"{_settings.MAX_WAIT_SECONDS}, not {value!r}")
    return float(value)


def set_memory_budget(mib: int | None = None, *, idle_seconds: float | None = None,
                      wait_seconds: float | None = None,
                      huge_pages: bool | None = None) -> MemoryBudget:
    """Set the process's work-memory budget; the new state.

    :param mib: the most work memory (MiB) all hashes of the process hold at once, running and
        idle.  None: ``ARGONISHCHE_MEMORY_BUDGET_MIB``, or the default (half of the least of the
        cgroup limit, physical memory and RLIMIT_AS/RLIMIT_DATA).
    :param idle_seconds: idle memory is given back to the OS after this long unused (0: after
        every hash).  None: ``ARGONISHCHE_MEMORY_IDLE_SECONDS``, or 10.
    :param wait_seconds: a hash waits at most this long for room, then raises
        :class:`~argonishche.MemoryBudgetTimeout` (0: never waits).  None:
        ``ARGONISHCHE_MEMORY_WAIT_SECONDS``, or 10.
    :param huge_pages: kept memory from 2 MiB up gets transparent huge pages (mappings made
        from now on).  None: ``ARGONISHCHE_MEMORY_HUGE_PAGES``, or auto: on, unless this machine
        is a VM that reports free memory to its host (docs/memory.md).

    Lowering the budget gives idle memory above it back at once; hashes running keep theirs,
    and new ones wait until the memory held fits.  Hashes already waiting keep their deadline.
    """
    if mib is not None and (isinstance(mib, bool) or not isinstance(mib, int) or
                            not 1 <= mib <= _settings.MAX_ARENA_MIB):
        raise ParameterError(f"mib must be a whole number of MiB from 1 to "
                             f"{_settings.MAX_ARENA_MIB}, or None for the default; not {mib!r}")
    idle, wait = _seconds("idle_seconds", idle_seconds), _seconds("wait_seconds", wait_seconds)
    if huge_pages is not None and not isinstance(huge_pages, bool):
        raise ParameterError(f"huge_pages must be True, False or None, not {huge_pages!r}")
    with _lock:
        _configure(mib, idle, wait, "set_memory_budget", huge_pages)
    return memory_budget()


@contextlib.contextmanager
def raised_to(mib: int, source: str) -> Iterator[MemoryBudget]:
    """The budget raised to *mib* MiB (with *source* as where it came from) if it is lower, until
    the block ends; then the budget before, source and all.  For ``argonishche tune``, which
    measures hashes under a budget the process was not given, and must leave it as it was."""
    global _config
    before = config()
    if before.budget >= mib * MIB:
        yield memory_budget()
        return
    with _lock:
        _config = before._replace(budget=mib * MIB, source=source)
        _config.apply()
    try:
        yield memory_budget()
    finally:
        with _lock:
            _config = before
            before.apply()


def memory_budget() -> MemoryBudget:
    """The process's work-memory budget, where it came from, and what is held now."""
    current = config()
    stats = ffi.new("argonishche_memory_stats *")
    lib.argonishche_memory_stats_read(stats, 0)
    return MemoryBudget(
        budget=current.budget, source=current.source, held=stats.in_use + stats.idle,
        in_use=stats.in_use, idle=stats.idle, high_water=stats.high_water,
        running=stats.running, waiting=stats.waiting, idle_seconds=current.idle_seconds,
        wait_seconds=current.wait_seconds, maps=stats.maps, reuses=stats.reuses,
        waits=stats.waits, huge_pages=current.huge_pages, huge_pages_why=current.huge_pages_why)


def reset_high_water() -> int:
    """Start the high-water mark again from what is held now; the mark before."""
    stats = ffi.new("argonishche_memory_stats *")
    lib.argonishche_memory_stats_read(stats, 0)
    before = int(stats.high_water)
    lib.argonishche_memory_stats_read(stats, 1)
    return before


def forget() -> None:
    """Decide the budget again on next use, from the environment (the registry's reset)."""
    global _config
    with _lock:
        _config = None


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # another thread may have held it, deciding the budget


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork()
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ---- admission --------------------------------------------------------------------------------


def unconfigured() -> bool:
    """True until the budget has been decided and handed to C (the hot path's one check)."""
    return _config is None


def new_try() -> CData:
    """A ticket for a call with ``wait_ms`` 0 that was never queued: such a call only tries, so
    the ticket needs no closing (and no ``ffi.gc``, which costs the hot path)."""
    return ffi.new("argonishche_memory_ticket *")


def _new_ticket() -> CData:
    """A ticket that may be queued: closed in a ``finally``, and by ``ffi.gc`` if even that is
    interrupted, so that C never keeps a pointer to a freed ticket."""
    return ffi.gc(ffi.new("argonishche_memory_ticket *"), lib.argonishche_memory_ticket_close)


def _over_budget(needed: int, current: _Config) -> MemoryBudgetError:
    error = MemoryBudgetError(
        f"this hash needs {size_text(needed)} of work memory, more than the process's whole "
        f"work-memory budget of {size_text(current.budget)} ({current.source}): raise "
        f"ARGONISHCHE_MEMORY_BUDGET_MIB or call argonishche.set_memory_budget(), or use a "
        f"lower memory_cost")
    error.needed, error.budget = needed, current.budget
    return error


def _timed_out(needed: int, waited: float, current: _Config,
               refused: bool) -> MemoryBudgetTimeout:
    state = memory_budget()
    if refused:  # within the budget, but the OS gave no more while others held theirs
        why = (f"the OS refused it while {counted(state.running, 'other hash', 'other hashes')} "
               f"held work memory, within "
               f"the budget of {size_text(current.budget)} ({current.source}): this process can "
               f"have less than that (RLIMIT_AS or RLIMIT_DATA, a cgroup, other memory it "
               f"holds), so lower ARGONISHCHE_MEMORY_BUDGET_MIB, or retry later")
    else:
        why = (f"the process's work-memory budget of {size_text(current.budget)} "
               f"({current.source}) was held by "
               f"{counted(state.running, 'running hash', 'running hashes')}, with "
               f"{state.waiting} more waiting; retry later, or raise the budget "
               f"(ARGONISHCHE_MEMORY_BUDGET_MIB) or the wait (ARGONISHCHE_MEMORY_WAIT_SECONDS)")
    error = MemoryBudgetTimeout(
        f"waited {waited:.1f} s for {size_text(needed)} of work memory: {why}")
    error.needed, error.budget, error.waited = needed, current.budget, waited
    return error


def _wait(ticket: CData, call: Callable[[CData, int], int], needed: int) -> int:
    """``call(ticket, wait_ms)``'s status once it is not ``ARGONISHCHE_WAIT_MEMORY``: called
    again with the same ticket after every slice of waiting, until the wait allowed is over.

    :raises MemoryBudgetError: the hash needs more than the whole budget.
    :raises MemoryBudgetTimeout: no room came within the wait allowed.
    """
    current = config()
    start = time.monotonic()
    wait_ms = min(WAIT_SLICE_MS, round(current.wait_seconds * 1000))
    while True:
        status = call(ticket, wait_ms)
        if status == lib.ARGONISHCHE_WAIT_MEMORY:
            left = current.wait_seconds - (time.monotonic() - start)
            if left <= 0:
                raise _timed_out(needed, time.monotonic() - start, current,
                                 bool(ticket.refused))
            wait_ms = max(1, min(WAIT_SLICE_MS, round(left * 1000)))
            continue
        if status == lib.ARGONISHCHE_ERR_OVER_BUDGET:
            raise _over_budget(needed, current)
        return status


def admitted(call: Callable[[CData, int], int], needed: int) -> int:
    """The status of ``call(ticket, wait_ms)``, a C call that takes its share of the budget and
    gives it back itself (see :func:`_wait`); the ticket is closed afterwards."""
    ticket = _new_ticket()
    try:
        return _wait(ticket, call, needed)
    finally:
        lib.argonishche_memory_ticket_close(ticket)


class Reservation:
    """*needed* bytes of the budget held for memory allocated outside the C arenas (a plugin
    allocator's, a mapping a wipe callback sees) until :meth:`close`, which is safe to call
    again; made by :func:`reserve`."""

    def __init__(self, needed: int) -> None:
        self._ticket = _new_ticket()
        try:
            _wait(self._ticket, lambda t, wait_ms: lib.argonishche_memory_reserve(
                t, needed, wait_ms), needed)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        lib.argonishche_memory_ticket_close(self._ticket)


def reserve(needed: int) -> Reservation:
    """Wait for *needed* bytes of the budget and hold them (see :class:`Reservation`).

    :raises MemoryBudgetError: and :raises MemoryBudgetTimeout: as :func:`admitted`.
    """
    return Reservation(needed)
