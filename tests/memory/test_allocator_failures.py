"""Allocator failure: an arena that cannot map, a plugin pool that is empty or short, mlock
refused, no RLIMIT_MEMLOCK room and a 4 TiB hash all raise a clear error naming the size, give
back what was acquired, and leave the next hash working.

What must not disturb this process (an mlock refused for real, a 4 TiB allocation) runs in a
subprocess."""

from __future__ import annotations

import errno

import pytest
from argonishche import ArgonishcheMemoryError, ParameterError, _allocators, argon2_hash
from support import (
    BUILTIN_NAMES,
    KNOWN_TAG,
    PASSWORD,
    SALT,
    SMALL,
    FakeEntryPoint,
    Pool,
    allocator_plugin,
    make_registry,
    needed,
    run_python,
)


def test_arena_mapping_failure_propagates_and_the_next_hash_works():
    result = run_python("""
        import resource
        import argonishche
        from argonishche import _allocators
        arena = _allocators.BUILTIN[1]
        costs = dict(time_cost=1, memory_cost=16384, parallelism=1, allocator="arena")
        expected = argonishche.argon2_hash(b"password", b"somesalt", **costs)
        argonishche.trim_memory()
        with open("/proc/self/statm") as statm:
            in_use = int(statm.read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (in_use + (4 << 20), hard))  # 16 MiB won't fit
        try:
            argonishche.argon2_hash(b"password", b"somesalt", **costs)
        except argonishche.ArgonishcheMemoryError as exc:
            print("error|" + str(exc) + "|" + str(isinstance(exc, MemoryError)))
        print("after", arena.cached_bytes(), argonishche.memory_budget().in_use)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        assert argonishche.argon2_hash(b"password", b"somesalt", **costs) == expected
        print("again", arena.cached_bytes())
        """)
    assert result.returncode == 0, result.stderr
    error, after, again = result.stdout.splitlines()
    _, message, is_memory_error = error.split("|")
    assert message.startswith(f"could not map {needed(16384)} bytes of Argon2 work memory: ")
    assert is_memory_error == "True"
    assert after == "after 0 0"  # nothing half-mapped or left busy
    assert again == f"again {needed(16384)}"


def test_plugin_allocator_failure_propagates_and_buffers_are_always_released(install):
    class Failing(Pool):
        def acquire(self, size):
            raise ArgonishcheMemoryError(f"pool empty: {size} bytes wanted")

    failing, short = Failing("failing"), Pool("short", short_by=1)
    install(make_registry(FakeEntryPoint("zz-pools", allocator_plugin(failing, short))))
    with pytest.raises(MemoryError, match=f"pool empty: {needed(32)} bytes"):
        argon2_hash(PASSWORD, SALT, allocator="failing", **SMALL)
    assert failing.released == []  # nothing acquired, nothing to release
    # A buffer the driver refuses is still handed back.
    with pytest.raises(ParameterError, match="needs"):
        argon2_hash(PASSWORD, SALT, allocator="short", **SMALL)
    assert len(short.acquired) == 1 and short.released == short.acquired
    assert argon2_hash(PASSWORD, SALT, **SMALL) == KNOWN_TAG


def test_locked_memory_for_a_wipe_callback_refused_mlock_is_a_clear_error(monkeypatch):
    # A wipe callback gets a fresh mapping from Python (the C arena path is covered by the next
    # test, in a process that cannot lock memory).
    real_lib, real_map, mappings = _allocators.lib, _allocators._map, []

    class RefusingLib:
        def argonishche_lock_memory(self, address, length):
            return errno.ENOMEM

        def __getattr__(self, name):
            return getattr(real_lib, name)

    def recording_map(size, **options):
        mappings.append(real_map(size, **options))
        return mappings[-1]

    monkeypatch.setattr(_allocators, "lib", RefusingLib())
    monkeypatch.setattr(_allocators, "_map", recording_map)
    with pytest.raises(ArgonishcheMemoryError, match="RLIMIT_MEMLOCK") as info:
        argon2_hash(PASSWORD, SALT, allocator="locked", wipe=lambda view: None, **SMALL)
    assert isinstance(info.value, MemoryError)
    assert str(needed(32)) in str(info.value)
    assert len(mappings) == 1 and mappings[0].closed
    monkeypatch.undo()
    assert argon2_hash(PASSWORD, SALT, allocator="locked", wipe=lambda view: None,
                       **SMALL) == KNOWN_TAG


def test_locked_allocator_with_no_memlock_room_is_a_clear_error():
    result = run_python("""
        import os, resource
        import argonishche
        costs = dict(time_cost=1, memory_cost=32, parallelism=1)
        # everything loaded while privileged; then no RLIMIT_MEMLOCK room and no CAP_IPC_LOCK
        expected = argonishche.argon2_hash(b"password", b"somesalt", allocator="system", **costs)
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
        if os.geteuid() == 0:  # root's CAP_IPC_LOCK ignores the limit: become nobody
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        try:
            argonishche.argon2_hash(b"password", b"somesalt", allocator="locked", **costs)
        except argonishche.ArgonishcheMemoryError as exc:
            print("refused:", exc)
        else:
            print("locked anyway")
        print("cached:", argonishche._allocators.BUILTIN[3].cached_bytes())
        assert argonishche.argon2_hash(b"password", b"somesalt", allocator="arena",
                                       **costs) == expected
        """)
    if "locked anyway" in result.stdout:
        pytest.skip("mlock cannot be made to fail here")
    assert result.returncode == 0, result.stderr
    refused, cached = result.stdout.splitlines()
    assert refused.startswith(f"refused: could not lock {needed(32)} bytes")
    assert "RLIMIT_MEMLOCK" in refused
    assert cached == "cached: 0"


def test_out_of_memory_is_a_memory_error_naming_the_size():
    """A 128 GiB hash in a process with 64 GiB of address space: the budget (by default half of
    what RLIMIT_AS leaves, or of physical memory if that is less) refuses it at once; with the
    budget raised to 1 TiB, the OS refuses the memory.  Either way every allocator raises a
    MemoryError naming the size, and the next hash works."""
    result = run_python("""
        import resource
        import argonishche
        # 64 GiB of address space: ample for Python, and 128 GiB cannot be had whatever the
        # overcommit policy.
        resource.setrlimit(resource.RLIMIT_AS, (64 << 30, 64 << 30))
        costs = dict(time_cost=1, parallelism=1)
        small = argonishche.argon2_hash(b"password", b"somesalt", memory_cost=32, **costs)
        for refuser in ("budget", "os"):
            if refuser == "os":
                argonishche.set_memory_budget(1 << 20)
            for name in ("system", "arena", "hugepages", "locked"):
                try:
                    argonishche.argon2_hash(b"password", b"somesalt", memory_cost=1 << 27,
                                            allocator=name, **costs)
                except argonishche.ArgonishcheMemoryError as exc:
                    assert isinstance(exc, MemoryError)
                    print(refuser, name, type(exc).__name__, exc, sep="|")
                assert argonishche.argon2_hash(b"password", b"somesalt", memory_cost=32,
                                               allocator=name, **costs) == small
        print("held", argonishche.memory_budget().in_use, argonishche.memory_budget().running)
        """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    errors = {tuple(line.split("|")[:2]): line.split("|")[2:] for line in lines[:-1]}
    assert sorted(errors) == sorted((r, n) for r in ("budget", "os") for n in BUILTIN_NAMES)
    size = (1 << 27) * 1024
    for name in BUILTIN_NAMES:
        kind, message = errors["budget", name]
        assert kind == "MemoryBudgetError", (name, kind)
        assert message.startswith("this hash needs 128.0 GiB of work memory, more than the "
                                  "process's whole work-memory budget of "), message
        assert "(half of what RLIMIT_AS leaves (" in message and " of 64.0 GiB))" in message \
            or "(half of physical memory" in message, message
        kind, message = errors["os", name]
        assert kind == "ArgonishcheMemoryError", (name, kind)
        if name == "system":  # the C driver's malloc
            assert message.startswith(f"could not allocate {size} bytes "
                                      f"({size / 2**20:.1f} MiB)"), message
            assert "memory_cost=134217728 KiB, parallelism=1" in message
        else:  # a mapping of the allocator's kind
            assert message.startswith(f"could not map {size} bytes of Argon2 work memory: "), \
                message
    assert lines[-1] == "held 0 0"  # nothing left taken by the failed hashes
