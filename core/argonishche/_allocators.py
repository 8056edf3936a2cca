"""The built-in Argon2 work-memory allocators, registered as a plugin like any third party's.

Why more than one: from 32 MiB up glibc serves every allocation with a fresh mmap, so a hash
that allocates its memory takes one page fault per 4 KiB (8,193 faults, about 13 ms, at 32 MiB)
and the kernel zeroes every page first; reusing memory that is already mapped avoids all of it
(argon2-cffi and libargon2 measured 2.0-2.2x faster that way at 32 MiB, on an AMD EPYC Zen 4
VM with glibc 2.36 in November 2026).

- ``system``: allocate and free in C for every hash, exactly like the reference implementation.
- ``arena`` (the default): one mapping per thread, reused by every hash on that thread, grown to
  the largest hash seen and bounded by ``ARGONISHCHE_ARENA_MAX_MIB`` (default 1024) per thread,
  read from the settings on first use;
  a larger hash falls back to ``system``.  :func:`argonishche.trim_memory` and interpreter exit
  return it to the OS.
- ``hugepages``: a fresh mapping per hash, advised for transparent 2 MiB pages, so a 32 MiB hash
  takes 16 faults instead of 8,192; where the OS gives no huge pages it is an ordinary mapping.
- ``locked``: like ``arena``, but the mapping is mlock'ed: never written to swap.  Needs
  ``RLIMIT_MEMLOCK`` (``ulimit -l``) room, or CAP_IPC_LOCK; refusing is a clear error, and so is
  a hash above the bound (it has no unlocked fallback).

Every mapping is also marked MADV_DONTDUMP where available: work memory holds password-derived
data and has no business in a core dump.
"""

from __future__ import annotations

import atexit
import mmap
import os
import threading

from . import _settings
from ._core import ffi, lib
from .exceptions import ArgonishcheMemoryError
from .hookspecs import Allocator, hookimpl

HUGE_PAGE = 2 * 1024 * 1024
ARENA_MAX_ENV = "ARGONISHCHE_ARENA_MAX_MIB"
MIB = 1024 * 1024


def _map(size: int, *, populate: bool, huge: bool = False) -> mmap.mmap:
    """An anonymous private mapping of *size* bytes (page aligned, so 64-byte aligned)."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    if populate and hasattr(mmap, "MAP_POPULATE"):
        flags |= mmap.MAP_POPULATE  # fault every page in now, not during the hash
    try:
        mapping = mmap.mmap(-1, size, flags=flags)
    except OSError as exc:
        raise ArgonishcheMemoryError(f"could not map {size} bytes of Argon2 work memory: {exc}") \
            from None
    for advice, wanted in (("MADV_DONTDUMP", True), ("MADV_HUGEPAGE", huge)):
        if wanted and hasattr(mmap, advice):
            try:
                mapping.madvise(getattr(mmap, advice))
            except OSError:
                pass  # advice only: a kernel without it still gives working memory
    return mapping


class SystemAllocator(Allocator):
    name = "system"
    description = "allocate and free in C for every hash, like the reference implementation"

    def acquire(self, size: int):
        return None


class HugePagesAllocator(Allocator):
    name = "hugepages"
    description = "a fresh mapping per hash, advised for 2 MiB transparent huge pages"

    def acquire(self, size: int):
        # Only 2 MiB-aligned ranges can be huge pages: map one page more and start aligned.
        mapping = _map(size + HUGE_PAGE, populate=False, huge=True)
        address = int(ffi.cast("uintptr_t", ffi.from_buffer(mapping)))
        offset = -address % HUGE_PAGE
        return memoryview(mapping)[offset:offset + size]

    def release(self, buffer) -> None:
        mapping = buffer.obj
        buffer.release()
        mapping.close()


class _Arena:
    """One thread's mapping; `busy` while a hash on that thread uses it."""

    __slots__ = ("mapping", "busy", "thread")

    def __init__(self) -> None:
        self.mapping: mmap.mmap | None = None
        self.busy = False
        self.thread = threading.current_thread()


class ArenaAllocator(Allocator):
    name = "arena"
    description = "per-thread memory reused across hashes, pre-faulted, bounded"
    lock_pages = False

    def __init__(self, max_bytes: int | None = None) -> None:
        """:param max_bytes: the bound per thread; None: ``ARGONISHCHE_ARENA_MAX_MIB``."""
        self._max_bytes = max_bytes
        self._local = threading.local()
        self._arenas: list[_Arena] = []   # every thread's, so trim() reaches them all
        self._lock = threading.Lock()

    def _arena(self) -> _Arena:
        arena = getattr(self._local, "arena", None)
        if arena is None:
            arena = self._local.arena = _Arena()
            with self._lock:
                # A new thread is the moment to return the memory of threads that have ended
                # (a finished thread pool's), so it never outlives them for long.
                for ended in [a for a in self._arenas if not a.thread.is_alive()]:
                    self._unmap(ended)
                    self._arenas.remove(ended)
                self._arenas.append(arena)
        return arena

    @property
    def max_bytes(self) -> int:
        if self._max_bytes is None:  # at first use: an invalid value is a SettingError there
            return _settings.current().arena_max_mib * MIB
        return self._max_bytes

    def acquire(self, size: int):
        if size > self.max_bytes:
            if self.lock_pages:  # falling back would break the promise of never swapping
                raise ArgonishcheMemoryError(
                    f"the hash needs {size} bytes of locked memory, above the bound of "
                    f"{self.max_bytes} per thread: raise {ARENA_MAX_ENV}")
            return None  # beyond the bound: this hash allocates and frees like `system`
        arena = self._arena()
        if arena.busy:  # re-entered on one thread (a wipe callback hashing): don't share
            return None
        if arena.mapping is None or len(arena.mapping) < size:
            self._unmap(arena)
            arena.mapping = self._new_mapping(size)
        arena.busy = True
        return memoryview(arena.mapping)[:size]

    def _new_mapping(self, size: int) -> mmap.mmap:
        mapping = _map(size, populate=True)
        if self.lock_pages:
            view = ffi.from_buffer(mapping)
            error = lib.argonishche_lock_memory(view, len(view))
            ffi.release(view)  # the mapping cannot be closed while a view exports it
            if error:
                mapping.close()
                raise ArgonishcheMemoryError(
                    f"could not lock {size} bytes of Argon2 work memory in RAM "
                    f"({os.strerror(error)}): raise RLIMIT_MEMLOCK (ulimit -l) or use another "
                    f"allocator")
        return mapping

    def release(self, buffer) -> None:
        buffer.release()
        self._arena().busy = False

    def _unmap(self, arena: _Arena) -> int:
        if arena.mapping is None:
            return 0
        size = len(arena.mapping)
        view = ffi.from_buffer(arena.mapping)
        lib.argonishche_secure_wipe(view, size)
        ffi.release(view)
        arena.mapping.close()  # munmap also unlocks
        arena.mapping = None
        return size

    def trim(self) -> int:
        """Unmap every thread's arena that is not in use right now."""
        freed = 0
        with self._lock:
            for arena in self._arenas:
                if not arena.busy:
                    freed += self._unmap(arena)
        return freed

    def cached_bytes(self) -> int:
        with self._lock:
            return sum(len(a.mapping) for a in self._arenas if a.mapping is not None)


class LockedAllocator(ArenaAllocator):
    name = "locked"
    description = "like arena, but mlock'ed: the work memory is never written to swap"
    lock_pages = True


BUILTIN = (SystemAllocator(), ArenaAllocator(), HugePagesAllocator(), LockedAllocator())


@atexit.register
def _trim_at_exit() -> None:
    for allocator in BUILTIN:
        allocator.trim()


class BuiltinAllocators:
    """The plugin object behind the ``allocators`` entry point."""

    @hookimpl
    def argonishche_register_allocators(self, register) -> None:
        for allocator in BUILTIN:
            register(allocator)


plugin = BuiltinAllocators()
