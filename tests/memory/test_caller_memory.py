"""Caller memory (``memory=``): any writable buffer of ``memory_size()`` bytes, wherever it
starts; and ``memory_size()`` itself, the blocks Argon2 rounds to plus the alignment slack."""

from __future__ import annotations

import ctypes
import mmap
import pickle

import argonishche
import pytest
from argonishche import (
    ParameterError,
    ParameterTypeError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
)
from support import KNOWN_TAG, PASSWORD, SALT, SMALL, VALID, buffer_at, mprime


def numpy_buffer(n):
    numpy = pytest.importorskip("numpy")
    return numpy.zeros(n, dtype=numpy.uint8)


@pytest.mark.parametrize("make", [
    bytearray,
    lambda n: mmap.mmap(-1, n),
    numpy_buffer,
    lambda n: memoryview(bytearray(n + 5))[5:],
    lambda n: buffer_at(n, 1),   # the worst start: 63 bytes before the first 64-byte boundary
    lambda n: buffer_at(n, 0),
], ids=["bytearray", "mmap", "numpy", "unaligned-slice", "address-1-mod-64", "aligned"])
@pytest.mark.parametrize("parallelism", [1, 4])
def test_caller_memory_of_memory_size_bytes_works(make, parallelism):
    costs = dict(time_cost=2, memory_cost=67, parallelism=parallelism)
    expected = argon2_hash(PASSWORD, SALT, allocator="system", **costs)
    size = argonishche.memory_size(67, parallelism)
    memory = make(size)
    try:
        assert argon2_hash(PASSWORD, SALT, memory=memory, **costs) == expected
        assert argon2_verify(argon2_hash_encoded(PASSWORD, SALT, **costs), PASSWORD,
                             memory=memory) is True
        assert not any(memoryview(memory).cast("B"))  # wiped, and only inside the buffer
    finally:
        if isinstance(memory, mmap.mmap):
            memory.close()  # BufferError if the driver still held it


def test_caller_memory_one_byte_short_is_an_error_naming_the_size():
    size = argonishche.memory_size(64, 2)
    with pytest.raises(ParameterError) as info:
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=2,
                    memory=buffer_at(size - 1, 1))
    message = str(info.value)
    assert f"needs {size}" in message and f"memory is {size - 1} bytes" in message
    assert "memory_size" in message


def test_caller_memory_one_byte_short_is_refused_wherever_it_starts():
    size = argonishche.memory_size(64, 2)
    with pytest.raises(ParameterError, match=f"needs {size}"):
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=2,
                    memory=buffer_at(size - 1, 0))


@pytest.mark.parametrize("make", [bytes, lambda n: memoryview(bytearray(n)).toreadonly(),
                                  lambda n: n], ids=["bytes", "readonly-view", "int"])
def test_caller_memory_must_be_a_writable_buffer(make):
    with pytest.raises(ParameterTypeError, match="memory must be a writable buffer"):
        argon2_hash(PASSWORD, SALT, memory=make(argonishche.memory_size(32)), **SMALL)


def closed_mmap(n):
    mapping = mmap.mmap(-1, n)
    mapping.close()
    return mapping


def released_view(n):
    view = memoryview(bytearray(n))
    view.release()
    return view


@pytest.mark.parametrize("make", [closed_mmap, released_view], ids=["closed-mmap", "released"])
def test_caller_memory_closed_before_the_call_is_a_parameter_error_naming_it(make):
    # The right type in a state that cannot be used: once a plain ValueError from memoryview().
    memory = make(argonishche.memory_size(32))
    for call in (lambda: argon2_hash(PASSWORD, SALT, memory=memory, **SMALL),
                 lambda: argon2_hash_encoded(PASSWORD, SALT, memory=memory, **SMALL),
                 lambda: argon2_verify(VALID, PASSWORD, memory=memory)):
        with pytest.raises(ParameterError, match=r"^memory cannot be used: .*(closed|released)"):
            call()


@pytest.mark.parametrize("make", [closed_mmap, released_view], ids=["closed-mmap", "released"])
def test_caller_memory_closed_after_the_check_is_still_the_parameter_error(make):
    # Another thread may close it between the API's check and the driver's: the driver says
    # the same thing (it used to let a plain ValueError through).
    from argonishche import _hash_call
    from argonishche._registry import selected_table

    memory = make(argonishche.memory_size(32))
    table = selected_table("argon2")
    with pytest.raises(ParameterError, match=r"^memory cannot be used: .*(closed|released)"):
        _hash_call.argon2(table, selected_table("blake2b"), type="id", version=0x13, time_cost=1,
                       memory_cost=32, parallelism=1, threads=1, hash_len=32, memory=memory,
                       wipe_memory=True, arena=None, password=b"p", salt=SALT, secret=b"",
                       associated_data=b"")


# ---- a wipe callback that keeps the view it was given ---------------------------------------
# The view is valid only during the call.  One the callback keeps (a slice, a ctypes object on
# it) could not be released after it, and the BufferError that said so escaped after the tag was
# computed, losing it.  The tag is now returned, with a RuntimeWarning naming the problem.

KEPT_WARNING = r"wipe callback .* kept a reference to the work memory"


def keeping(kept, make):
    def wipe(view):
        kept.append(make(view))
    return wipe


@pytest.mark.parametrize("make", [lambda view: view[:], ctypes.c_char.from_buffer],
                         ids=["slice", "ctypes"])
def test_wipe_callback_keeping_arena_memory_gets_the_tag_and_a_warning(make, trimmed):
    kept = []
    with pytest.warns(RuntimeWarning, match=KEPT_WARNING) as record:
        tag = argon2_hash(PASSWORD, SALT, allocator="arena", wipe=keeping(kept, make), **SMALL)
    assert tag == KNOWN_TAG
    assert record[0].filename == __file__  # the caller's line, not argonishche's
    # The allocator wiped the mapping before it tried to unmap it: what was kept holds zeros.
    assert not any(bytes(kept[0]))
    with pytest.warns(RuntimeWarning, match=KEPT_WARNING):
        assert argon2_verify(VALID, PASSWORD, allocator="arena",
                             wipe=keeping(kept, make)) is True
    kept.clear()  # the mappings are unmapped with the last reference


def test_wipe_callback_exporting_caller_memory_gets_the_tag_and_a_warning():
    # An object holding a buffer export of the view itself (as a numpy array or a cffi buffer
    # made from it does) keeps the view from being released.
    memory, kept = bytearray(argonishche.memory_size(32)), []
    with pytest.warns(RuntimeWarning, match=KEPT_WARNING):
        assert argon2_hash(PASSWORD, SALT, memory=memory, **SMALL,
                           wipe=keeping(kept, pickle.PickleBuffer)) == KNOWN_TAG
    kept.clear()
    memory.extend(b"x")  # no export left: the bytearray can be resized again


def test_wipe_callback_that_keeps_nothing_gives_no_warning(recwarn, trimmed):
    assert argon2_hash(PASSWORD, SALT, allocator="arena", wipe=lambda view: bytes(view),
                       **SMALL) == KNOWN_TAG
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_memory_and_allocator_together_is_an_error(acquire_log):
    memory = bytearray(argonishche.memory_size(32))
    called = []
    with pytest.raises(ParameterError, match="memory= or allocator="):
        argon2_hash(PASSWORD, SALT, memory=memory, allocator="arena", wipe=called.append,
                    **SMALL)
    assert acquire_log == [] and called == [] and not any(memory)


@pytest.mark.parametrize("memory_cost, parallelism", [
    (8, 1), (32, 1), (33, 1), (35, 1), (67, 4), (100, 3), (4096, 4), (4097, 7), (2**20, 16),
    (2**32 - 1, 1), (2**32 - 1, 3)])
def test_memory_size_is_rounded_blocks_plus_alignment_slack(memory_cost, parallelism):
    expected = mprime(memory_cost, parallelism) * 1024 + 63
    assert argonishche.memory_size(memory_cost, parallelism) == expected
    if parallelism == 1:
        assert argonishche.memory_size(memory_cost) == expected


def test_memory_size_checks_its_parameters():
    with pytest.raises(ParameterError, match="memory_cost"):
        argonishche.memory_size(15, 2)  # m must be at least 8p
    with pytest.raises(ParameterError, match="parallelism"):
        argonishche.memory_size(64, 0)


# ---- memory_size ----------------------------------------------------------------------------


@pytest.mark.parametrize("memory_cost, parallelism, kib", [
    (8, 1, 8), (9, 1, 8), (11, 1, 8), (12, 1, 12), (32, 1, 32), (33, 1, 32), (65536, 1, 65536),
    (65536, 4, 65536), (29, 3, 24), (100, 8, 96), (64, 8, 64), (127, 8, 96),
    (2**32 - 1, 1, 2**32 - 4),
])
def test_memory_size(memory_cost, parallelism, kib):
    assert argonishche.memory_size(memory_cost, parallelism) == kib * 1024 + 63  # + alignment


def test_memory_size_default_parallelism_and_bad_input():
    assert argonishche.memory_size(65536) == 64 * 2**20 + 63
    with pytest.raises(ParameterError, match="memory_cost"):
        argonishche.memory_size(7)
    with pytest.raises(ParameterError, match="memory_cost"):
        argonishche.memory_size(31, 4)
    with pytest.raises(ParameterError, match="parallelism"):
        argonishche.memory_size(64, 0)
    with pytest.raises(ParameterTypeError, match="memory_cost"):
        argonishche.memory_size(64.0)
