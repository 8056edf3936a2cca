"""The built-in Argon2 work-memory allocators, registered directly by the registry.

Why more than one: from 32 MiB up glibc serves every allocation with a fresh mmap, so a hash
that allocates its memory takes one page fault per 4 KiB (8,193 faults, about 13 ms, at 32 MiB)
and the kernel zeroes every page first; reusing memory that is already mapped avoids all of it
(argon2-cffi and libargon2 measured 2.0-2.2x faster that way at 32 MiB, on an AMD EPYC Zen 4
VM with glibc 2.36 in November 2026).

- ``system``: allocate and free in C for every hash, exactly like the reference implementation.
- ``arena`` (the default): each thread's memory is kept between its hashes, grown to the largest
  hash seen, faulted in by the first hash's lane threads in parallel, and from 2 MiB up advised
  for transparent huge pages (rounded up to whole 2 MiB pages: a 32 MiB hash's random
  references then stay within the TLB); a hash above
  ``ARGONISHCHE_ARENA_MAX_MIB`` (default 1024) gets a fresh mapping of its own, advised for huge
  pages, faulted in and wiped by the lane threads in parallel (each its own lanes) and unmapped
  after it, and after a hash the thread keeps at most ``ARGONISHCHE_ARENA_RETAIN_MIB``
  (default 64): one burst of large hashes (attacker-chosen costs, within the limits) does not
  decide what the process holds from then on.  A thread's memory goes back to the OS when the
  thread ends, however it was started; :func:`argonishche.trim_memory` and interpreter exit
  return every idle thread's.
- ``hugepages``: a fresh mapping per hash, advised for transparent 2 MiB pages, so a 32 MiB hash
  takes 16 faults instead of 8,192; where the OS gives no huge pages it is an ordinary mapping.
- ``locked``: like ``arena``, but every mapping is mlock'ed: never written to swap.  Needs
  ``RLIMIT_MEMLOCK`` (``ulimit -l``) room, or CAP_IPC_LOCK; refusing is a clear error, and so is
  a hash above the bound (it has no unlocked fallback).  A forked child drops the parent's locked
  memory (locks are not inherited) and locks anew.

The three mapping allocators are C arenas (``core/csrc/arena.c``): the memory is taken, used
and given back inside the one C call that hashes, with the GIL released, so no Python exception
(a signal handler's, say) can leave it half taken, and no other thread waits while it is mapped.
A wipe callback needs memory Python can see: with one, :meth:`acquire` lends a fresh mapping
for that hash instead.  Every mapping is marked MADV_DONTDUMP where available: work memory holds
password-derived data and has no business in a core dump.

Memory is faulted in ahead of a hash a page at a time, by a read-write of one byte per page
(``argonishche_pages_prefault`` in ``core/csrc/platform.h``), never with ``MAP_POPULATE`` or
``MADV_POPULATE_WRITE``: those hold the process's memory-map lock, and every other thread's mmap,
munmap and mprotect (an event loop starting an executor thread, whose stack is a mapping) waited
for them, 5 ms to over a second for a whole 64 MiB, and still 68-171 ms in 2 MiB steps on a busy
machine (issue 24); a page fault takes only its own range's lock.
"""

from __future__ import annotations

import atexit
import mmap
import os
from typing import TYPE_CHECKING, cast

from . import _settings
from ._core import ffi, lib
from .exceptions import ArgonishcheMemoryError
from .hookspecs import Allocator, hookimpl

if TYPE_CHECKING:
    from collections.abc import Callable

HUGE_PAGE = 2 * 1024 * 1024
ARENA_MAX_ENV = "ARGONISHCHE_ARENA_MAX_MIB"
MIB = 1024 * 1024


def _map(size: int, *, populate: bool, huge: bool = False) -> mmap.mmap:
    """An anonymous private mapping of *size* bytes (page aligned, so 64-byte aligned);
    *populate*: faulted in now, not during the hash, a page at a time and without the GIL (not
    MAP_POPULATE, which holds the process's memory-map lock for the whole mapping: every other
    thread's mmap, a thread start's say, waited for all of it)."""
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    try:
        mapping = mmap.mmap(-1, size, flags=flags) if flags else mmap.mmap(-1, size)
    except OSError as exc:
        raise ArgonishcheMemoryError(f"could not map {size} bytes of Argon2 work memory: {exc}") \
            from None
    for advice, wanted in (("MADV_DONTDUMP", True), ("MADV_HUGEPAGE", huge)):
        if wanted and hasattr(mmap, advice):
            try:
                mapping.madvise(getattr(mmap, advice))
            except OSError:
                pass  # advice only: a kernel without it still gives working memory
    if populate:
        view = ffi.from_buffer(mapping)
        lib.argonishche_prefault(view, size)
        ffi.release(view)  # the mapping cannot be closed while a view exports it
    return mapping


class SystemAllocator(Allocator):
    name = "system"
    description = "allocate and free in C for every hash, like the reference implementation"

    def acquire(self, size: int) -> None:
        return None


class ArenaAllocator(Allocator):
    name = "arena"
    description = "per-thread memory reused across hashes, pre-faulted, bounded"
    #: Flags of the C arena (ARGONISHCHE_ARENA_LOCKED, ARGONISHCHE_ARENA_HUGE_PAGES).
    arena_flags = 0

    def __init__(self, max_bytes: int | None = None, retain_bytes: int | None = None) -> None:
        """:param max_bytes: the largest hash served from the arena (None: the setting
            ``ARGONISHCHE_ARENA_MAX_MIB``).
        :param retain_bytes: the most a thread keeps mapped after a hash (None: the setting
            ``ARGONISHCHE_ARENA_RETAIN_MIB``)."""
        self._max_bytes = max_bytes
        self._retain_bytes = retain_bytes
        self.c_arena = lib.argonishche_arena_new(self.arena_flags)
        if self.c_arena == ffi.NULL:
            raise ArgonishcheMemoryError("could not allocate an arena's bookkeeping")

    @property
    def max_bytes(self) -> int:
        if self._max_bytes is None:  # at first use: an invalid value is a SettingError there
            return _settings.current().arena_max_mib * MIB
        return self._max_bytes

    @property
    def retain_bytes(self) -> int:
        if self._retain_bytes is None:
            return min(_settings.current().arena_retain_mib * MIB, self.max_bytes)
        return self._retain_bytes

    @property
    def locked(self) -> bool:
        return bool(self.arena_flags & lib.ARGONISHCHE_ARENA_LOCKED)

    def failure(self, status: int, size: int, os_error: int) -> Exception | None:
        """The exception for a C arena status this allocator explains, else None."""
        if status == lib.ARGONISHCHE_ERR_OVER_BOUND:
            return ArgonishcheMemoryError(
                f"the hash needs {size} bytes of locked memory, above the bound of "
                f"{self.max_bytes} per thread: raise {ARENA_MAX_ENV}")
        if status == lib.ARGONISHCHE_ERR_LOCK:
            return ArgonishcheMemoryError(
                f"could not lock {size} bytes of Argon2 work memory in RAM "
                f"({os.strerror(os_error)}): raise RLIMIT_MEMLOCK (ulimit -l) or use another "
                f"allocator")
        if status == lib.ARGONISHCHE_ERR_NO_MEMORY and os_error:
            return ArgonishcheMemoryError(f"could not map {size} bytes of Argon2 work memory: "
                                          f"{os.strerror(os_error)}")
        return None

    def acquire(self, size: int) -> memoryview | None:
        """A fresh mapping for one hash that Python must see (a wipe callback's): the kept
        per-thread memory is only ever lent inside the C call that hashes."""
        if size > self.max_bytes:
            if self.locked:  # falling back would break the promise of never swapping
                raise self.failure(lib.ARGONISHCHE_ERR_OVER_BOUND, size, 0)  # type: ignore[misc]
            return None
        mapping = _map(size, populate=True)
        if self.locked:
            view = ffi.from_buffer(mapping)
            error = lib.argonishche_lock_memory(view, len(view))
            ffi.release(view)  # the mapping cannot be closed while a view exports it
            if error:
                mapping.close()
                raise self.failure(lib.ARGONISHCHE_ERR_LOCK, size, error)  # type: ignore[misc]
        return memoryview(mapping)[:size]

    def release(self, buffer: memoryview | bytearray) -> None:
        # Only ever given back what acquire() returned: a memoryview of a mapping.
        buffer = cast(memoryview, buffer)
        mapping = cast(mmap.mmap, buffer.obj)
        buffer.release()
        view = ffi.from_buffer(mapping)
        lib.argonishche_secure_wipe(view, len(view))
        ffi.release(view)
        mapping.close()

    def trim(self) -> int:
        """Unmap every thread's kept memory that no hash is using now (wiped first where the
        last hash opted out of the wipe)."""
        return lib.argonishche_arena_trim(self.c_arena)

    def cached_bytes(self) -> int:
        return lib.argonishche_arena_cached_bytes(self.c_arena)

    def thread_memory(self) -> tuple[int, int]:
        """(address, bytes) of the memory the calling thread keeps, (0, 0) if none."""
        size = ffi.new("size_t *")
        address = lib.argonishche_arena_thread_memory(self.c_arena, size)
        return int(ffi.cast("uintptr_t", address)), size[0]


class LockedAllocator(ArenaAllocator):
    name = "locked"
    description = "like arena, but mlock'ed: the work memory is never written to swap"
    arena_flags = lib.ARGONISHCHE_ARENA_LOCKED


class HugePagesAllocator(ArenaAllocator):
    name = "hugepages"
    description = "a fresh mapping per hash, advised for 2 MiB transparent huge pages"
    arena_flags = lib.ARGONISHCHE_ARENA_HUGE_PAGES

    @property
    def retain_bytes(self) -> int:
        return 0  # a fresh mapping per hash: what makes it "hugepages" and not an arena

    def acquire(self, size: int) -> memoryview | None:
        if size > self.max_bytes:
            return None
        # Only 2 MiB-aligned ranges can be huge pages: map one page more and start aligned.
        mapping = _map(size + HUGE_PAGE, populate=False, huge=True)
        address = int(ffi.cast("uintptr_t", ffi.from_buffer(mapping)))
        offset = -address % HUGE_PAGE
        return memoryview(mapping)[offset:offset + size]


BUILTIN = (SystemAllocator(), ArenaAllocator(), HugePagesAllocator(), LockedAllocator())


@atexit.register
def _trim_at_exit() -> None:
    for allocator in BUILTIN:
        allocator.trim()


class BuiltinAllocators:
    """The plugin object the registry registers first and directly."""

    @hookimpl
    def argonishche_register_allocators(self, register: Callable[[Allocator], None]) -> None:
        for allocator in BUILTIN:
            register(allocator)


plugin = BuiltinAllocators()
