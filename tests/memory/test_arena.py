"""The built-in allocators' memory: the process's kept mappings (reused, fitted to the hash,
trimmed, never lent to two hashes at once), the locked variant and huge pages.

Tests that look at the kept mappings take the ``trimmed`` fixture, so what other tests left
idle cannot blur what they see.  The budget that bounds all of it is tested in
tests/memory/test_budget_*.py.
"""

from __future__ import annotations

import mmap
import os
import threading
import time

import argonishche
import pytest
from argonishche import _allocators, argon2_hash
from support import ARENA, HUGEPAGES, KNOWN_TAG, LOCKED, PASSWORD, SALT, SMALL, address_of, needed


def status_kib(field: str) -> int:
    """A KiB field of /proc/self/status (VmLck, VmRSS); a skip where there is none."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1])
    except OSError:
        pass
    pytest.skip(f"no {field} in /proc/self/status")


def pages(size: int) -> int:
    """*size* rounded up to whole pages: what a mapping for it takes."""
    return -(-size // mmap.PAGESIZE) * mmap.PAGESIZE


def same_tag(**costs) -> bool:
    return argon2_hash(PASSWORD, SALT, allocator="arena", **costs) == argon2_hash(
        PASSWORD, SALT, allocator="system", **costs)


# ---- kept memory ------------------------------------------------------------------------------


def test_kept_memory_is_reused_by_a_hash_it_fits_and_a_bigger_hash_maps_anew(trimmed):
    assert same_tag(time_cost=1, memory_cost=64, parallelism=1)
    [(first, size)] = ARENA.idle_mappings()
    assert size == pages(needed(64))
    assert same_tag(time_cost=1, memory_cost=64, parallelism=1)
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG  # fits: reused
    assert ARENA.idle_mappings() == [(first, size)]
    assert same_tag(time_cost=1, memory_cost=256, parallelism=2)  # bigger: a mapping of its own
    assert sorted(s for _, s in ARENA.idle_mappings()) == [size, pages(needed(256, 2))]
    assert ARENA.cached_bytes() == size + pages(needed(256, 2))


def test_a_mapping_more_than_twice_the_hash_is_not_lent_to_it(trimmed):
    """A 2 GiB mapping kept for a 100 MiB hash would hold the budget's room from others: a
    hash takes kept memory only up to twice what it needs."""
    assert same_tag(time_cost=1, memory_cost=1024, parallelism=1)
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG
    assert sorted(s for _, s in ARENA.idle_mappings()) == [pages(needed(32)), needed(1024)]


def test_a_threads_end_leaves_the_memory_for_any_threads_next_hash(trimmed):
    """Threads started by threading or by _thread (as a C library's or a server's): when the
    thread ends its memory stays the process's, and the next hash, on another thread, reuses
    it; it goes back after the idle time (test_budget_reuse.py) or on a trim."""
    import _thread

    def work(done: threading.Event) -> None:
        argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=256,
                    parallelism=1)
        done.set()

    for start in ("threading", "_thread"):
        done = threading.Event()
        if start == "threading":
            threading.Thread(target=work, args=(done,)).start()
        else:
            _thread.start_new_thread(work, (done,))
        assert done.wait(30)
        time.sleep(0.05)  # the thread has ended, not only finished its hash
        [(address, size)] = ARENA.idle_mappings()
        maps = argonishche.memory_budget().maps
        argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=256,
                    parallelism=1)
        assert ARENA.idle_mappings() == [(address, size)], start
        assert argonishche.memory_budget().maps == maps, start
        argonishche.trim_memory()


def test_hashes_running_at_once_never_share_memory(trimmed):
    """Four threads of mixed sizes at once: every tag right.  Two hashes lent one mapping would
    both return wrong tags, or the driver's claim check would refuse the second
    (ParameterError: memory is in use)."""
    costs = [dict(time_cost=1, memory_cost=m, parallelism=p) for m, p in
             ((256, 1), (512, 2), (1024, 4), (288, 1))]
    expected = [argon2_hash(PASSWORD, SALT, allocator="system", **c) for c in costs]
    errors: list[BaseException] = []

    def work(index):
        try:
            for _ in range(25):
                assert argon2_hash(PASSWORD, SALT, allocator="arena", **costs[index]) == \
                    expected[index]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    assert argonishche.memory_budget().in_use == 0


def test_trim_memory_returns_every_kinds_idle_memory(trimmed):
    assert argonishche.trim_memory() == 0
    argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=128,
                parallelism=1)
    argon2_hash(PASSWORD, SALT, allocator="locked", **SMALL)
    cached = ARENA.cached_bytes() + LOCKED.cached_bytes()
    assert cached == pages(needed(128)) + pages(needed(32))
    assert LOCKED.trim() == pages(needed(32)) and ARENA.cached_bytes() == pages(needed(128))
    assert argonishche.trim_memory() == pages(needed(128))
    assert ARENA.cached_bytes() == LOCKED.cached_bytes() == 0 and ARENA.idle_mappings() == []
    assert argonishche.trim_memory() == 0
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG


def test_locked_allocator_locks_its_memory_in_ram(trimmed):
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    if os.geteuid() != 0 and soft != resource.RLIM_INFINITY and soft < 2**21:
        pytest.skip("RLIMIT_MEMLOCK below 2 MiB and not root")
    before = status_kib("VmLck")
    argon2_hash(PASSWORD, SALT, allocator="locked", time_cost=1, memory_cost=1024,
                parallelism=1)
    assert status_kib("VmLck") - before >= 1024
    assert argonishche.trim_memory() == needed(1024)
    assert status_kib("VmLck") == before
    argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=1024,
                parallelism=1)
    assert status_kib("VmLck") == before  # the plain arena is not locked
    view = LOCKED.acquire(needed(1024))  # the mapping a wipe callback sees: locked too
    try:
        assert status_kib("VmLck") - before >= 1024
    finally:
        LOCKED.release(view)
    assert status_kib("VmLck") == before


# ---- hugepages --------------------------------------------------------------------------------


def test_hugepages_buffer_is_2mib_aligned_and_release_unmaps_it():
    size = needed(4096)
    view = HUGEPAGES.acquire(size)
    assert isinstance(view, memoryview) and not view.readonly and len(view) == size
    assert address_of(view) % _allocators.HUGE_PAGE == 0
    view[-1:] = b"x"  # the whole requested size is usable
    mapping = view.obj
    assert isinstance(mapping, mmap.mmap) and not mapping.closed
    HUGEPAGES.release(view)
    assert mapping.closed
    with pytest.raises(ValueError):
        view[0]
    assert HUGEPAGES.cached_bytes() == 0


def test_hugepages_hash_runs_in_aligned_memory_and_keeps_none():
    addresses = []

    def wipe(view):
        addresses.append(address_of(view))
        view[:] = bytes(view.nbytes)

    assert argon2_hash(PASSWORD, SALT, allocator="hugepages", wipe=wipe, **SMALL) == KNOWN_TAG
    assert len(addresses) == 1 and addresses[0] % _allocators.HUGE_PAGE == 0
    maps = argonishche.memory_budget().maps
    assert argon2_hash(PASSWORD, SALT, allocator="hugepages", **SMALL) == KNOWN_TAG
    assert argonishche.memory_budget().maps == maps + 1  # a fresh mapping per hash
    assert HUGEPAGES.cached_bytes() == 0 and HUGEPAGES.idle_mappings() == []


# ---- pages, pre-faulting and the wipe by lane threads ------------------------------------------


def mapping_of(address: int) -> dict[str, str]:
    """The /proc/self/smaps fields of the mapping holding *address* (VmFlags, Rss, ...)."""
    try:
        with open("/proc/self/smaps") as smaps:
            lines = smaps.read().splitlines()
    except OSError:
        pytest.skip("no /proc/self/smaps")
    fields: dict[str, str] | None = None
    for line in lines:
        head, _, rest = line.partition(" ")
        if "-" in head and not head.endswith(":"):
            if fields is not None:
                break
            low, high = (int(bound, 16) for bound in head.split("-"))
            if low <= address < high:
                fields = {"range": head}
        elif fields is not None:
            fields[head.rstrip(":")] = rest.strip()
    assert fields is not None, f"no mapping holds {address:#x}"
    return fields


def transparent_huge_pages() -> str:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as setting:
            return setting.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        pytest.skip("no transparent huge pages here")


@pytest.mark.parametrize("huge_pages", [False, True], ids=["small-pages", "huge-pages"])
def test_kept_memory_is_marked_dontdump_faulted_in_ahead_and_paged_as_configured(budget, trimmed,
                                                                                huge_pages):
    """Huge pages from 2 MiB up where configured (ARGONISHCHE_MEMORY_HUGE_PAGES; auto: unless a
    VM reports free memory to its host, docs/memory.md), rounded up to whole 2 MiB pages and 2
    MiB aligned; small pages otherwise, and below 2 MiB always."""
    transparent_huge_pages()
    budget(huge_pages=huge_pages)
    assert same_tag(time_cost=1, memory_cost=4100, parallelism=1)
    [(address, size)] = ARENA.idle_mappings()
    flags = mapping_of(address)
    assert ("hg" in flags["VmFlags"].split()) is huge_pages  # madvise(MADV_HUGEPAGE)
    assert "dd" in flags["VmFlags"].split()  # madvise(MADV_DONTDUMP)
    if huge_pages:
        assert address % _allocators.HUGE_PAGE == 0 and size == 3 * _allocators.HUGE_PAGE
    else:
        assert size == pages(needed(4100))
    assert int(flags["Rss"].split()[0]) * 1024 >= size  # faulted in by the lane threads
    argonishche.trim_memory()
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG
    [(address, size)] = ARENA.idle_mappings()
    assert "hg" not in mapping_of(address)["VmFlags"].split() and size == pages(needed(32))


def test_fresh_memory_is_faulted_in_and_wiped_by_the_lane_threads_at_any_thread_count(trimmed):
    """A fresh mapping is faulted in (and wiped) by the lane threads in parallel, each its own
    lanes: the same tag at any thread count and either wipe, and nothing left after a trim."""
    costs = dict(time_cost=1, memory_cost=65536, parallelism=4)
    expected = argon2_hash(PASSWORD, SALT, allocator="system", threads=1, **costs)
    before = status_kib("VmRSS")
    for threads in (1, 2, 3, 4):
        for wipe in (True, False):
            maps = argonishche.memory_budget().maps
            assert argon2_hash(PASSWORD, SALT, allocator="arena", threads=threads, wipe=wipe,
                               **costs) == expected
            assert argonishche.memory_budget().maps == maps + 1, (threads, wipe)  # fresh
            assert argonishche.trim_memory() == needed(65536, 4)
            # 64 MiB were faulted in for the hash: all of it is unmapped again
            assert status_kib("VmRSS") - before < 16 * 1024, (threads, wipe)


@pytest.mark.parametrize("passes", [1, 2])
def test_lane_threads_wipe_every_lane_and_the_tag_is_unchanged(passes):
    """Each lane thread wipes the lanes it filled, all but their last blocks (the tag's input),
    which the calling thread wipes after the tag: together, every byte."""
    costs = dict(time_cost=passes, memory_cost=256, parallelism=4)
    expected = argon2_hash(PASSWORD, SALT, allocator="system", threads=1, **costs)
    for threads in (1, 2, 3, 4):
        memory = bytearray(argonishche.memory_size(256, 4))
        assert argon2_hash(PASSWORD, SALT, memory=memory, threads=threads, **costs) == expected
        assert memory == bytes(len(memory)), threads
        memory = bytearray(argonishche.memory_size(256, 4))
        argon2_hash(PASSWORD, SALT, memory=memory, threads=threads, wipe=False, **costs)
        start = -address_of(memory) % 64  # the driver starts at the first 64-byte boundary
        last_blocks = [memory[start + (lane + 1) * 64 * 1024 - 1024:][:1024] for lane in range(4)]
        assert all(any(block) for block in last_blocks)  # the wipe above did wipe something
