"""Wiping Argon2 work memory: zeroed by default, left as the hash left it with ``wipe=False``, or
handed to a ``wipe=`` callback, in caller memory and in an arena alike."""

from __future__ import annotations

import argonishche
import pytest
from argonishche import ParameterError, ParameterTypeError, PasswordHasher, _allocators, argon2_hash
from argonishche._core import ffi
from support import (
    ARENA,
    KNOWN_TAG,
    PASSWORD,
    SALT,
    SMALL,
    FakeEntryPoint,
    allocator_plugin,
    make_registry,
    needed,
)


def test_default_wipe_zeroes_caller_memory():
    memory = bytearray(argonishche.memory_size(64, 2))
    expected = argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=64, parallelism=2,
                           allocator="system")
    assert argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=64, parallelism=2,
                       memory=memory) == expected
    assert memory == bytes(len(memory))


def test_wipe_false_leaves_caller_memory_as_the_hash_left_it():
    memory = bytearray(argonishche.memory_size(64, 2))
    argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=64, parallelism=2, memory=memory,
                wipe=False)
    assert any(memory)
    # at least most of the 64 blocks were written: more than half the bytes are non-zero
    assert len(memory) - memory.count(0) > len(memory) // 2


def test_wipe_callback_gets_the_unwiped_memory_and_what_it_writes_stays():
    memory = bytearray(argonishche.memory_size(32))
    calls = []

    def wipe(view):
        calls.append(view)
        assert isinstance(view, memoryview) and not view.readonly
        assert view.obj is memory and view.nbytes == len(memory)
        assert any(view)  # not wiped before the callback sees it
        view[:] = b"\xa5" * view.nbytes

    assert argon2_hash(PASSWORD, SALT, memory=memory, wipe=wipe, **SMALL) == KNOWN_TAG
    assert len(calls) == 1
    assert memory == b"\xa5" * len(memory)
    with pytest.raises(ValueError):  # the view is released once the callback returns
        calls[0][0]


def test_wipe_callback_with_an_allocator_sees_the_work_memory_then_it_is_unmapped(trimmed):
    seen, mappings = [], []

    def wipe(view):
        seen.append((view.nbytes, any(view)))  # the hash's blocks, not zeros
        mappings.append(view.obj)
        view[:] = bytes(view.nbytes)

    assert argon2_hash(PASSWORD, SALT, allocator="arena", wipe=wipe, **SMALL) == KNOWN_TAG
    assert seen == [(needed(32), True)]
    # Python had to see it, so it was a mapping of its own, not the thread's kept memory.
    assert mappings[0].closed and ARENA.cached_bytes() == 0


def test_wipe_callback_with_the_system_allocator_is_a_parameter_error():
    called = []
    with pytest.raises(ParameterError, match="'system' allocates in C"):
        argon2_hash(PASSWORD, SALT, allocator="system", wipe=called.append, **SMALL)
    assert called == []


@pytest.mark.parametrize("wipe", ["yes", 1, None, b""])
def test_wipe_must_be_true_false_or_callable(wipe):
    with pytest.raises(ParameterTypeError, match="wipe must be True, False or a callable"):
        argon2_hash(PASSWORD, SALT, wipe=wipe, **SMALL)
    with pytest.raises(ParameterTypeError, match="wipe"):
        PasswordHasher(**SMALL, wipe=wipe).hash("pw")


def kept_memory(allocator) -> bytes:
    """A copy of what the one idle mapping of *allocator*'s kind holds now."""
    [(address, size)] = allocator.idle_mappings()
    return ffi.buffer(ffi.cast("char *", address), size)[:]


def test_default_wipe_zeroes_the_arena_memory(trimmed):
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG
    memory = kept_memory(ARENA)
    assert len(memory) == needed(32) and memory == bytes(len(memory))


def test_wipe_false_leaves_the_arena_memory_unwiped(trimmed):
    assert argon2_hash(PASSWORD, SALT, allocator="arena", wipe=False, **SMALL) == KNOWN_TAG
    assert any(kept_memory(ARENA))
    # the next default hash reuses the memory and leaves it zeroed again
    argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL)
    assert kept_memory(ARENA) == bytes(needed(32))


def test_wipe_callback_that_raises_does_not_leak_the_arena(install, trimmed):
    class TestArena(_allocators.ArenaAllocator):
        name = "test-arena"
    arena = TestArena()
    install(make_registry(FakeEntryPoint("zz-test-arena", allocator_plugin(arena))))

    def failing(view):
        raise RuntimeError("callback failed")
    with pytest.raises(RuntimeError, match="callback failed"):
        argon2_hash(PASSWORD, SALT, allocator="test-arena", wipe=failing, **SMALL)
    assert arena.cached_bytes() == 0  # the callback's mapping was given back all the same
    sizes = []
    argon2_hash(PASSWORD, SALT, allocator="test-arena", wipe=lambda v: sizes.append(v.nbytes),
                **SMALL)
    assert sizes == [needed(32)]
    assert argon2_hash(PASSWORD, SALT, allocator="test-arena", **SMALL) == KNOWN_TAG
    assert arena.trim() == needed(32)  # the kept memory is free to be trimmed
