"""The caching allocators: the per-thread arena (reused, grown, bounded, trimmed, one per thread),
its locked variant and huge pages.

Tests that look inside an arena take the ``trimmed`` fixture, so what other tests left cached
cannot blur what they see."""

from __future__ import annotations

import mmap
import os
import threading
import time

import pytest

import argonishche
from argonishche import ArgonishcheMemoryError, ParameterError, argon2_hash
from argonishche import _allocators

from support import ARENA, HUGEPAGES, KNOWN_TAG, LOCKED, PASSWORD, SALT, SMALL
from support import FakeEntryPoint, address_of, allocator_plugin, make_registry, needed, run_python


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


# ---- the arena ------------------------------------------------------------------------------


def test_arena_is_reused_on_one_thread_and_grows_for_a_bigger_hash(trimmed):
    argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=1, allocator="arena")
    first = ARENA.thread_memory()
    assert first[0] and first[1] == needed(64)
    argon2_hash(b"other", SALT, time_cost=1, memory_cost=64, parallelism=1, allocator="arena")
    assert ARENA.thread_memory() == first
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG  # smaller fits
    assert ARENA.thread_memory() == first
    assert ARENA.cached_bytes() == needed(64)

    bigger = argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=256, parallelism=2,
                         allocator="arena")
    assert bigger == argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=256, parallelism=2,
                                 allocator="system")
    grown = ARENA.thread_memory()
    assert grown[1] == needed(256, 2) == ARENA.cached_bytes()


def test_arena_keeps_at_most_its_retain_bound_after_a_hash(install):
    class Retaining(_allocators.ArenaAllocator):
        name = "retaining"
    arena = Retaining(max_bytes=needed(1024), retain_bytes=needed(64))
    install(make_registry(FakeEntryPoint("zz-retain", allocator_plugin(arena))))
    try:
        argon2_hash(PASSWORD, SALT, allocator="retaining", time_cost=1, memory_cost=64,
                    parallelism=1)
        assert arena.thread_memory()[1] == needed(64)  # at the bound: kept
        tag = argon2_hash(PASSWORD, SALT, allocator="retaining", time_cost=1, memory_cost=1024,
                          parallelism=1)
        assert tag == argon2_hash(PASSWORD, SALT, allocator="system", time_cost=1,
                                  memory_cost=1024, parallelism=1)
        assert arena.thread_memory() == (0, 0) and arena.cached_bytes() == 0  # given back
    finally:
        arena.trim()


def test_arena_bound_falls_back_to_the_c_allocator(install):
    class SmallArena(_allocators.ArenaAllocator):
        name = "small-arena"
    arena = SmallArena(max_bytes=needed(64))
    install(make_registry(FakeEntryPoint("zz-small", allocator_plugin(arena))))
    try:
        assert argon2_hash(PASSWORD, SALT, allocator="small-arena", **SMALL) == KNOWN_TAG
        kept = arena.thread_memory()
        big = dict(time_cost=1, memory_cost=128, parallelism=1)
        assert argon2_hash(PASSWORD, SALT, allocator="small-arena", **big) == argon2_hash(
            PASSWORD, SALT, allocator="system", **big)
        assert arena.thread_memory() == kept and arena.cached_bytes() == needed(32)
        assert arena.acquire(needed(64) + 1) is None
        with pytest.raises(ParameterError, match="'small-arena' allocates in C"):
            argon2_hash(PASSWORD, SALT, allocator="small-arena", wipe=lambda view: None, **big)
        # at the bound itself the arena still serves
        argon2_hash(PASSWORD, SALT, allocator="small-arena", time_cost=1, memory_cost=64,
                    parallelism=1)
        assert arena.cached_bytes() == needed(64)
    finally:
        arena.trim()


def test_arena_max_environment_variable_bounds_the_builtin_arenas():
    result = run_python("""
        import argonishche
        from argonishche import _allocators
        print(_allocators.BUILTIN[1].max_bytes, _allocators.BUILTIN[3].max_bytes)
        argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=1024,
                                parallelism=1, allocator="arena")
        print(_allocators.BUILTIN[1].cached_bytes())
        argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=2048,
                                parallelism=1, allocator="arena")
        print(_allocators.BUILTIN[1].cached_bytes())
        """, ARGONISHCHE_ARENA_MAX_MIB="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(2**20)] * 2 + [str(2**20)] * 2


def test_trim_memory_returns_cached_bytes(trimmed):
    assert argonishche.trim_memory() == 0
    argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=128,
                parallelism=1)
    argon2_hash(PASSWORD, SALT, allocator="locked", **SMALL)
    cached = ARENA.cached_bytes() + LOCKED.cached_bytes()
    assert cached == needed(128) + needed(32)
    assert argonishche.trim_memory() == cached
    assert ARENA.cached_bytes() == LOCKED.cached_bytes() == 0
    assert ARENA.thread_memory() == (0, 0)
    assert argonishche.trim_memory() == 0
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG


def test_locked_allocator_locks_its_arena_in_ram(trimmed):
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


def test_locked_allocator_never_hands_out_unlocked_memory():
    # Above its bound the plain arena returns None (the C driver then mallocs unlocked memory);
    # the locked one refuses, naming the size and the bound to raise.
    locked = _allocators.LockedAllocator(max_bytes=needed(32))
    try:
        with pytest.raises(ArgonishcheMemoryError, match=f"needs {needed(64)} bytes of locked"
                           ) as info:
            locked.acquire(needed(64))
        assert "ARGONISHCHE_ARENA_MAX_MIB" in str(info.value)
        assert locked.cached_bytes() == 0
    finally:
        locked.trim()


def test_a_threads_memory_goes_back_when_the_thread_ends(trimmed):
    seen = {}

    def hash_on_a_thread(key):
        argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=256,
                    parallelism=1)
        seen[key] = (ARENA.thread_memory(), ARENA.cached_bytes())

    for key in ("threading", "_thread"):
        if key == "threading":
            thread = threading.Thread(target=hash_on_a_thread, args=(key,))
            thread.start()
            thread.join()
        else:  # a thread threading knows nothing of: reclaimed all the same
            import _thread
            done = threading.Event()
            _thread.start_new_thread(lambda k=key, d=done: (hash_on_a_thread(k), d.set()), ())
            assert done.wait(30)
        # join() and the event return a moment before the OS thread has ended
        deadline = time.monotonic() + 30
        while ARENA.cached_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        (address, size), cached_inside = seen[key]
        assert address and size == needed(256) and cached_inside == needed(256)
        assert ARENA.cached_bytes() == 0, key


def test_threads_hashing_at_once_use_different_arenas(trimmed):
    both_inside = threading.Barrier(2, timeout=20)
    seen, results = {}, {}

    def work(key):
        results[key] = argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL)
        seen[key] = ARENA.thread_memory()
        both_inside.wait()  # both threads still exist, so both keep their memory

    threads = [threading.Thread(target=work, args=(key,)) for key in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {0: KNOWN_TAG, 1: KNOWN_TAG}
    (address_a, size_a), (address_b, size_b) = seen.values()
    assert size_a == size_b == needed(32)
    assert abs(address_a - address_b) >= needed(32)  # not even overlapping


# ---- hugepages ------------------------------------------------------------------------------


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


def test_hugepages_hash_runs_in_aligned_memory(install):
    addresses = []

    def wipe(view):
        addresses.append(address_of(view))
        view[:] = bytes(view.nbytes)

    assert argon2_hash(PASSWORD, SALT, allocator="hugepages", wipe=wipe, **SMALL) == KNOWN_TAG
    assert len(addresses) == 1 and addresses[0] % _allocators.HUGE_PAGE == 0
    assert HUGEPAGES.cached_bytes() == 0  # a fresh mapping per hash

    class Keeping(_allocators.HugePagesAllocator):  # keeps its memory, so it can be seen
        name = "keeping-hugepages"
        retain_bytes = _allocators.HUGE_PAGE
    keeping = Keeping()
    install(make_registry(FakeEntryPoint("zz-keep", allocator_plugin(keeping))))
    try:
        assert argon2_hash(PASSWORD, SALT, allocator="keeping-hugepages", **SMALL) == KNOWN_TAG
        address, size = keeping.thread_memory()
        assert address % _allocators.HUGE_PAGE == 0 and size == _allocators.HUGE_PAGE
    finally:
        keeping.trim()


# ---- transparent huge pages, pre-faulting and the wipe by lane threads -------------------------


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


def test_arena_memory_from_2mib_is_advised_for_huge_pages_and_prefaulted(trimmed):
    transparent_huge_pages()
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG
    address, size = ARENA.thread_memory()
    assert size == needed(32) and "hg" not in mapping_of(address)["VmFlags"].split()
    argonishche.trim_memory()

    # 2 MiB + 4 KiB: rounded up to whole 2 MiB pages, aligned, advised, all of it faulted in
    tag = argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=2052, parallelism=1,
                      allocator="arena")
    assert tag == argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=2052, parallelism=1,
                              allocator="system")
    address, size = ARENA.thread_memory()
    assert address % _allocators.HUGE_PAGE == 0 and size == 2 * _allocators.HUGE_PAGE
    fields = mapping_of(address)
    assert "hg" in fields["VmFlags"].split()  # madvise(MADV_HUGEPAGE)
    assert "dd" in fields["VmFlags"].split()  # still MADV_DONTDUMP
    # faulted in ahead of filling (by the lane threads, a page at a time), whole huge pages
    assert int(fields["Rss"].split()[0]) * 1024 >= size


def test_hash_above_the_arena_bound_maps_faults_in_and_unmaps_its_own_memory(install):
    """Above the bound each hash maps memory of its own, which the lane threads fault in (and
    wipe) in parallel: the same tag at any thread count, and nothing left mapped after it."""
    class Bounded(_allocators.ArenaAllocator):
        name = "bounded"
    arena = Bounded(max_bytes=needed(1024))
    install(make_registry(FakeEntryPoint("zz-bounded", allocator_plugin(arena))))
    costs = dict(time_cost=1, memory_cost=65536, parallelism=4)
    expected = argon2_hash(PASSWORD, SALT, allocator="system", threads=1, **costs)
    try:
        before = status_kib("VmRSS")
        for threads in (1, 2, 3, 4):
            for wipe in (True, False):
                assert argon2_hash(PASSWORD, SALT, allocator="bounded", threads=threads,
                                   wipe=wipe, **costs) == expected
                # 64 MiB were faulted in for the hash: all of it is unmapped again
                assert status_kib("VmRSS") - before < 16 * 1024, (threads, wipe)
        assert arena.cached_bytes() == 0 and arena.thread_memory() == (0, 0)
    finally:
        arena.trim()


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
