"""The built-in Argon2 work-memory allocators, registered directly by the registry.

Why more than one: from 32 MiB up glibc serves every allocation with a fresh mmap, so a hash
that allocates its memory takes one page fault per 4 KiB and the kernel zeroes every page
first; reusing memory that is already mapped avoids all of it (docs/memory.md has the
measurements).

Every allocator's memory counts against the process's one work-memory budget
(:mod:`argonishche._work_memory`): a hash is admitted first, and waits in arrival order while
the budget is full.

- ``arena`` (the default): the process's kept memory.  A finished hash's mapping is kept for the
  next hash of any thread, and given back to the OS after ``ARGONISHCHE_MEMORY_IDLE_SECONDS``
  unused (default 10), on :func:`argonishche.trim_memory`, or when a fresh mapping needs its
  room in the budget.  Fresh mappings are faulted in by the hash's lane threads in parallel, a
  write fault per page; from 2 MiB up they get transparent huge pages (rounded up to whole 2 MiB
  pages, so a hash's random references miss the TLB less) where
  ``ARGONISHCHE_MEMORY_HUGE_PAGES`` says: by default everywhere but on a VM that reports free
  memory to its host, where fresh huge pages are slow to fault in.
- ``system``: allocate and free in C for every hash, exactly like the reference implementation.
- ``hugepages``: a fresh mapping per hash, advised for transparent 2 MiB pages, so a 32 MiB hash
  takes 16 faults instead of 8,192; never kept.  Where the OS gives no huge pages it is an
  ordinary mapping.
- ``locked``: like ``arena``, but every mapping is mlock'ed: never written to swap.  Needs
  ``RLIMIT_MEMLOCK`` (``ulimit -l``) room, or CAP_IPC_LOCK; refusing is a clear error.  A forked
  child drops the parent's locked memory (locks are not inherited) and locks anew.

The three mapping allocators lease their memory in C (``core/csrc/arena.c``): it is admitted,
taken, used and given back inside the one C call that hashes, with the GIL released, so no
Python exception (a signal handler's, say) can leave it half taken, and no other thread waits
while it is mapped.  A wipe callback needs memory Python can see: with one, :meth:`acquire`
lends a fresh mapping for that hash instead (reserved in the budget all the same).  Every
mapping is marked MADV_DONTDUMP where available: work memory holds password-derived data and
has no business in a core dump.

Memory is faulted in ahead of a hash a page at a time, never with ``MAP_POPULATE`` or
``MADV_POPULATE_WRITE``: those hold the process's memory-map lock, and every other thread's mmap,
munmap and mprotect (an event loop starting an executor thread, whose stack is a mapping) waited
for them (issue 24); a page fault takes only its own range's lock.  See
``argonishche_pages_prefault`` in ``core/csrc/platform.h`` for why each page is faulted by a
write, not a read then a write.
"""

from __future__ import annotations

import atexit
import mmap
import os

from ._core import ffi, lib
from .exceptions import ArgonishcheMemoryError
from .hookspecs import Allocator, hookimpl

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

HUGE_PAGE = 2 * 1024 * 1024


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
    description = "the process's work memory, reused by any thread's next hash, bounded"
    #: Flags of the C arena (ARGONISHCHE_ARENA_LOCKED, ARGONISHCHE_ARENA_HUGE_PAGES).
    arena_flags = 0

    def __init__(self) -> None:
        self.c_arena = lib.argonishche_arena_new(self.arena_flags)
        if self.c_arena == ffi.NULL:
            raise ValueError(f"no arena has the flags {self.arena_flags:#x}")

    @property
    def locked(self) -> bool:
        return bool(self.arena_flags & lib.ARGONISHCHE_ARENA_LOCKED)

    def failure(self, status: int, size: int, os_error: int) -> Exception | None:
        """The exception for a C arena status this allocator explains, else None."""
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
        """A fresh mapping for one hash that Python must see (a wipe callback's): the process's
        kept memory is only ever lent inside the C call that hashes."""
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
        given: memoryview = buffer  # type: ignore[assignment]
        mapping: mmap.mmap = given.obj  # type: ignore[assignment]
        given.release()
        view = ffi.from_buffer(mapping)
        lib.argonishche_secure_wipe(view, len(view))
        ffi.release(view)
        mapping.close()

    def trim(self) -> int:
        """Unmap the idle memory of this allocator's kind (wiped first where its last hash
        opted out of the wipe)."""
        return lib.argonishche_arena_trim(self.c_arena)

    def cached_bytes(self) -> int:
        return lib.argonishche_arena_cached_bytes(self.c_arena)

    def idle_mappings(self) -> list[tuple[int, int]]:
        """(address, bytes) of each idle mapping of this allocator's kind, oldest first: the
        memory the next hashes would reuse (for tests and reports)."""
        count = lib.argonishche_arena_idle_mappings(self.c_arena, ffi.NULL, ffi.NULL, 0)
        addresses, sizes = ffi.new("uintptr_t[]", count), ffi.new("uint64_t[]", count)
        count = min(count, lib.argonishche_arena_idle_mappings(self.c_arena, addresses, sizes,
                                                               count))
        return [(int(addresses[i]), int(sizes[i])) for i in range(count)]


class LockedAllocator(ArenaAllocator):
    name = "locked"
    description = "like arena, but mlock'ed: the work memory is never written to swap"
    arena_flags = lib.ARGONISHCHE_ARENA_LOCKED


class HugePagesAllocator(ArenaAllocator):
    name = "hugepages"
    description = "a fresh mapping per hash, advised for 2 MiB transparent huge pages"
    arena_flags = lib.ARGONISHCHE_ARENA_HUGE_PAGES

    def acquire(self, size: int) -> memoryview | None:
        # Only 2 MiB-aligned ranges can be huge pages: map one page more and start aligned.
        mapping = _map(size + HUGE_PAGE, populate=False, huge=True)
        address = int(ffi.cast("uintptr_t", ffi.from_buffer(mapping)))
        offset = -address % HUGE_PAGE
        return memoryview(mapping)[offset:offset + size]


BUILTIN = (SystemAllocator(), ArenaAllocator(), HugePagesAllocator(), LockedAllocator())


@atexit.register
def _trim_at_exit() -> None:
    lib.argonishche_memory_trim()


class BuiltinAllocators:
    """The plugin object the registry registers first and directly."""

    @hookimpl
    def argonishche_register_allocators(self, register: Callable[[Allocator], None]) -> None:
        for allocator in BUILTIN:
            register(allocator)


plugin = BuiltinAllocators()
