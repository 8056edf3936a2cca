"""hash_many's chunks: several hashes in one C call and one lease of work memory
(``argonishche_arena_argon2_hash_many``), wiped once before the memory leaves the call, on
success and on every failure; tags equal to the per-hash path's, and never a wrong one."""

from __future__ import annotations

import random

import argonishche
import pytest
from argonishche import ParameterError, _argon2, _hash_call, _registry, argon2_hash
from argonishche._core import ffi, lib
from support import ARENA, LOCKED, PASSWORD, SALT, SMALL, needed

COSTS = dict(time_cost=1, memory_cost=64, parallelism=2)


def kept_memory(allocator) -> bytes:
    """A copy of what the one idle mapping of *allocator*'s kind holds now."""
    [(address, size)] = allocator.idle_mappings()
    return ffi.buffer(ffi.cast("char *", address), size)[:]


def stats():
    return argonishche.memory_budget()


def c_chunk(passwords, salts, *, wipe=True, type="id", version=0x13, time_cost=1,
            memory_cost=64, parallelism=2, threads=1, hash_len=32, null_at=None):
    """(status, done, tags) of one argonishche_arena_argon2_hash_many call in the arena's
    memory; *null_at*: that input's password is NULL with a length (the driver refuses it)."""
    argon2_table, blake2b_table, _ = _registry.get().hashing_tables()
    count = len(passwords)
    inputs = ffi.new("argonishche_argon2_input[]", count)
    keep = []
    for i, (password, salt) in enumerate(zip(passwords, salts, strict=True)):
        keep += [ffi.from_buffer(password), ffi.from_buffer(salt)]
        inputs[i].password = ffi.NULL if i == null_at else keep[-2]
        inputs[i].password_len = len(password) or (5 if i == null_at else 0)
        inputs[i].salt, inputs[i].salt_len = keep[-1], len(salt)
    tags = ffi.new("uint8_t[]", hash_len * count)
    request = ffi.new("argonishche_argon2_request *", {
        "type": _hash_call.TYPE_CODES[type], "version": version, "time_cost": time_cost,
        "memory_cost": memory_cost, "lanes": parallelism, "threads": threads,
        "tag_len": hash_len, "wipe_memory": wipe})
    done, os_error = ffi.new("uint32_t *"), ffi.new("int *")
    argonishche.memory_budget()  # configures the budget, as the first hash would
    status = lib.argonishche_arena_argon2_hash_many(
        ARENA.c_arena, argon2_table, blake2b_table, request, inputs, count, tags, done,
        ffi.new("argonishche_memory_ticket *"), 1000, os_error)
    return status, done[0], [ffi.buffer(tags)[i * hash_len:(i + 1) * hash_len]
                             for i in range(count)]


def one_by_one(passwords, salts, **costs):
    return [argon2_hash(p, s, allocator="system", **costs) for p, s in
            zip(passwords, salts, strict=True)]


PASSWORDS = [b"alpha", b"beta", b"", b"gamma" * 40, b"\x00\xff"]
SALTS = [bytes([i]) * 8 + b"salt" for i in range(len(PASSWORDS))]


# ---- (a) the memory is wiped after a chunk, once -----------------------------------------


def test_a_chunk_is_one_lease_and_leaves_its_memory_wiped(trimmed):
    before = stats()
    status, done, tags = c_chunk(PASSWORDS, SALTS)
    after = stats()
    assert (status, done) == (lib.ARGONISHCHE_OK, len(PASSWORDS))
    assert tags == one_by_one(PASSWORDS, SALTS, **COSTS)
    assert after.maps + after.reuses - before.maps - before.reuses == 1  # one lease, 5 hashes
    memory = kept_memory(ARENA)
    assert len(memory) == needed(64, 2) and memory == bytes(len(memory))


def test_a_chunk_without_the_wipe_leaves_the_memory_as_its_last_hash_left_it(trimmed):
    # What the wipe test above sees is the wipe, not memory that was never written.
    status, done, _ = c_chunk(PASSWORDS, SALTS, wipe=False)
    assert (status, done) == (lib.ARGONISHCHE_OK, len(PASSWORDS))
    assert any(kept_memory(ARENA))
    assert c_chunk(PASSWORDS[:2], SALTS[:2])[0] == lib.ARGONISHCHE_OK
    assert kept_memory(ARENA) == bytes(needed(64, 2))


@pytest.mark.parametrize("allocator", ["arena", "locked"])
def test_hash_many_hashes_its_chunks_in_one_call_and_wipes_them(trimmed, allocator, monkeypatch):
    calls = []
    original = _hash_call.argon2_many
    monkeypatch.setattr(_hash_call, "argon2_many",
                        lambda *a, **k: calls.append(len(k["passwords"])) or original(*a, **k))
    passwords = [f"pw{i}" for i in range(12)]
    try:
        encoded = argonishche.hash_many(passwords, allocator=allocator, workers=2,
                                        chunk_size=4, **COSTS)
    except argonishche.ArgonishcheMemoryError:  # mlock refused (RLIMIT_MEMLOCK)
        pytest.skip("the locked allocator cannot lock memory here")
    assert calls == [4, 4, 4]
    assert all(argonishche.argon2_verify(h, p) for h, p in zip(encoded, passwords, strict=True))
    kind = {"arena": ARENA, "locked": LOCKED}[allocator]
    for address, size in kind.idle_mappings():
        assert ffi.buffer(ffi.cast("char *", address), size)[:] == bytes(size)


def test_hash_many_default_chunks_grow_past_one_and_shrink_to_one(monkeypatch):
    sizes = []
    original = _hash_call.argon2_many
    monkeypatch.setattr(_hash_call, "argon2_many",
                        lambda *a, **k: sizes.append(len(k["passwords"])) or original(*a, **k))
    monkeypatch.setattr("argonishche._batch.pool_size", lambda: 2)
    progress = []
    argonishche.hash_many([f"pw{i}" for i in range(24)], progress=lambda d, t: progress.append(d),
                          **SMALL)
    assert sum(sizes) == 24 and max(sizes) > 1 and sizes.count(1) >= 2
    assert len(progress) == len(sizes) and sorted(progress) == progress and progress[-1] == 24


@pytest.mark.parametrize("options", [dict(allocator="system"), dict(allocator="hugepages"),
                                     dict(wipe=lambda view: None)])
def test_other_memory_keeps_the_hash_at_a_time_path(monkeypatch, options):
    monkeypatch.setattr(_hash_call, "argon2_many", None)  # would raise if called
    passwords = ["a", "b", "c"]
    encoded = argonishche.hash_many(passwords, chunk_size=3, **COSTS, **options)
    assert all(argonishche.argon2_verify(h, p) for h, p in zip(encoded, passwords, strict=True))


# ---- (b) a hash that fails in the middle: wiped all the same, never a wrong tag -------------


@pytest.mark.parametrize("at", [0, 2, 4])
def test_a_failed_hash_stops_the_chunk_and_its_memory_is_wiped(trimmed, at):
    assert c_chunk(PASSWORDS, SALTS, wipe=False)[0] == lib.ARGONISHCHE_OK
    assert any(kept_memory(ARENA))  # a dirty mapping, as a wipe=False hash leaves it
    status, done, tags = c_chunk(PASSWORDS, SALTS, null_at=at)
    assert (status, done) == (lib.ARGONISHCHE_ERR_PARAMETER, at)
    assert tags[:at] == one_by_one(PASSWORDS[:at], SALTS[:at], **COSTS)  # the ones before it
    assert kept_memory(ARENA) == bytes(needed(64, 2))


def test_a_failed_hash_in_hash_many_raises_and_wipes(trimmed, monkeypatch):
    original = _hash_call._owned_copy

    def refused_third(data):  # the driver refuses a NULL password with a length
        return (ffi.NULL, 5, None) if data == b"third" else original(data)
    monkeypatch.setattr(_hash_call, "_owned_copy", refused_third)
    with pytest.raises(ParameterError, match="refused"):
        argonishche.hash_many(["first", "second", "third", "fourth"], workers=1, chunk_size=4,
                              **COSTS)
    assert kept_memory(ARENA) == bytes(needed(64, 2))
    with pytest.raises(ParameterError, match="refused"):
        _argon2.argon2_hash_encoded_many(["first", "third"], [SALT, SALT], **COSTS)
    monkeypatch.undo()
    assert argonishche.hash_many(["first", "third"], chunk_size=2, **COSTS)  # still usable


def test_an_over_budget_chunk_raises_as_one_hash_would(budget):
    budget(1, wait_seconds=0)
    with pytest.raises(argonishche.MemoryBudgetError) as many:
        argonishche.hash_many(["a", "b", "c"], chunk_size=3, time_cost=1, memory_cost=2048,
                              parallelism=1)
    with pytest.raises(argonishche.MemoryBudgetError) as one:
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=2048, parallelism=1)
    assert str(many.value) == str(one.value)


def test_a_chunk_refuses_missing_arrays_and_counts_zero():
    argon2_table, blake2b_table, _ = _registry.get().hashing_tables()
    request = ffi.new("argonishche_argon2_request *", {
        "type": 2, "version": 0x13, "time_cost": 1, "memory_cost": 64, "lanes": 1,
        "threads": 1, "tag_len": 32, "wipe_memory": 1})
    done, os_error = ffi.new("uint32_t *", 7), ffi.new("int *", 7)
    ticket = ffi.new("argonishche_memory_ticket *")
    assert lib.argonishche_arena_argon2_hash_many(ARENA.c_arena, argon2_table, blake2b_table,
                                                  request, ffi.NULL, 0, ffi.NULL, done, ticket,
                                                  0, os_error) == lib.ARGONISHCHE_OK
    assert (done[0], os_error[0]) == (0, 0)
    assert lib.argonishche_arena_argon2_hash_many(ARENA.c_arena, argon2_table, blake2b_table,
                                                  request, ffi.NULL, 2, ffi.NULL, done, ticket,
                                                  0, os_error) == lib.ARGONISHCHE_ERR_PARAMETER
    lib.argonishche_memory_ticket_close(ticket)


# ---- (c) the chunk's tags are the per-hash path's ---------------------------------------------


def test_chunk_tags_equal_one_hash_at_a_time_for_random_inputs():
    rng = random.Random(20240934)
    for _ in range(40):
        costs = dict(type=rng.choice(["d", "i", "id"]), version=rng.choice([0x10, 0x13]),
                     time_cost=rng.randint(1, 3), parallelism=rng.randint(1, 5),
                     hash_len=rng.choice([4, 16, 32, 64, 65, 100]))
        costs["memory_cost"] = rng.randint(8 * costs["parallelism"], 300)
        threads = rng.randint(1, costs["parallelism"])
        count = rng.randint(1, 6)
        passwords = [rng.randbytes(rng.randint(0, 80)) for _ in range(count)]
        salts = [rng.randbytes(rng.randint(8, 40)) for _ in range(count)]
        secret, ad = rng.randbytes(rng.choice([0, 16])), rng.randbytes(rng.choice([0, 12]))
        expected = [argon2_hash(p, s, secret=secret, associated_data=ad, threads=threads,
                                allocator="system", **costs)
                    for p, s in zip(passwords, salts, strict=True)]
        params = _argon2.Argon2Params.check(**costs)
        got = _argon2._compute_many(params, [bytearray(p) for p in passwords], salts, secret,
                                    ad, threads, None, "arena")
        assert got == expected, costs


def test_hash_many_strings_verify_with_every_type_version_and_lanes():
    for costs in (dict(type="d", version=0x10, time_cost=2, memory_cost=96, parallelism=3),
                  dict(type="i", version=0x13, time_cost=1, memory_cost=64, parallelism=4),
                  dict(type="id", version=0x13, time_cost=3, memory_cost=40, parallelism=1)):
        passwords = [f"pw{i}" for i in range(7)]
        encoded = argonishche.hash_many(passwords, workers=2, chunk_size=3, **costs)
        assert all(argonishche.argon2_verify(h, p)
                   for h, p in zip(encoded, passwords, strict=True))


def test_known_tag_from_a_chunk():
    assert _argon2._compute_many(_argon2.Argon2Params.check(type="id", version=0x13,
                                                            hash_len=32, **SMALL),
                                 [PASSWORD, PASSWORD], [SALT, SALT], b"", b"", 1, None,
                                 "arena") == [argonishche.argon2_hash(PASSWORD, SALT, **SMALL)] * 2


def test_a_long_chunk_is_hashed_in_c_calls_of_a_few_hashes(monkeypatch):
    # Nothing interrupts a C call and its lease is held until it returns: a few hashes each.
    sizes = []
    original = _hash_call.argon2_many
    monkeypatch.setattr(_hash_call, "argon2_many",
                        lambda *a, **k: sizes.append(len(k["passwords"])) or original(*a, **k))
    count = 2 * _argon2.MAX_HASHES_PER_CALL + 3
    passwords = [f"pw{i}" for i in range(count)]
    encoded = argonishche.hash_many(passwords, chunk_size=count, **SMALL)
    assert sizes == [_argon2.MAX_HASHES_PER_CALL] * 2 + [3]
    assert all(argonishche.argon2_verify(h, p) for h, p in zip(encoded, passwords, strict=True))
    sizes.clear()
    argonishche.hash_many(passwords * 4, **SMALL)  # default chunks: capped the same way
    assert sum(sizes) == 4 * count and max(sizes) <= _argon2.MAX_HASHES_PER_CALL
