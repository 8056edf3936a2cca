"""Every known-answer vector of :mod:`argonishche.vectors`, on every backend.

Each test id carries the vector's index and a short form of its ``source``; every assertion
message carries the full ``source``, so a failure says which published or computed value was
not reproduced, by which backend.
"""

from __future__ import annotations

import re

import argonishche
import pytest
from argonishche.vectors import ARGON2_VECTORS, BLAKE2B_VECTORS

# BLAKE2b's block is 128 bytes: 127/128/129 straddle the first block boundary, where an
# implementation must keep the last full block buffered until it knows whether more follows.
SPLIT_POINTS = (0, 1, 127, 128, 129)


def _vector_id(index: int, source: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", source).strip("-")
    return f"{index:02d}-{slug[:48]}"


BLAKE2B_PARAMS = [pytest.param(v, id=_vector_id(i, v.source))
                  for i, v in enumerate(BLAKE2B_VECTORS)]
ARGON2_PARAMS = [pytest.param(v, id=_vector_id(i, v.source)) for i, v in enumerate(ARGON2_VECTORS)]


def _blake2b(vector, backend, data=None):
    return argonishche.blake2b(
        vector.data if data is None else data, digest_size=vector.digest_size, key=vector.key,
        salt=vector.salt, person=vector.person, backend=backend)


def _argon2_kwargs(vector, backend):
    return dict(type=vector.type, version=vector.version, time_cost=vector.time_cost,
                memory_cost=vector.memory_cost, parallelism=vector.parallelism,
                hash_len=len(vector.tag), secret=vector.secret,
                associated_data=vector.associated_data, backend=backend)


def test_vector_tables_are_not_empty():
    # Guards the parametrisation below against silently running zero cases.
    assert len(BLAKE2B_VECTORS) >= 10
    assert len(ARGON2_VECTORS) >= 20
    assert {v.type for v in ARGON2_VECTORS} == {"d", "i", "id"}
    assert {v.version for v in ARGON2_VECTORS} == {0x10, 0x13}


# ---- BLAKE2b ------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", BLAKE2B_PARAMS)
def test_blake2b_vector(vector, backend):
    h = _blake2b(vector, backend)
    assert h.digest_size == vector.digest_size
    assert h.digest() == vector.digest, f"{backend}: wrong BLAKE2b digest for {vector.source}"
    assert h.hexdigest() == vector.digest.hex(), vector.source


@pytest.mark.parametrize("vector", BLAKE2B_PARAMS)
def test_blake2b_vector_default_backend(vector):
    # No backend= keyword: the selected backend, and for plain bytes the one-shot path.
    h = argonishche.blake2b(vector.data, digest_size=vector.digest_size, key=vector.key,
                            salt=vector.salt, person=vector.person)
    assert h.digest() == vector.digest, f"default path: wrong digest for {vector.source}"
    h.update(b"")
    assert h.digest() == vector.digest, f"default path after update(b''): {vector.source}"


@pytest.mark.parametrize("split", SPLIT_POINTS)
@pytest.mark.parametrize("vector", BLAKE2B_PARAMS)
def test_blake2b_vector_split_in_two(vector, split, backend):
    data = vector.data
    k = min(split, len(data))
    h = _blake2b(vector, backend, data=b"")
    h.update(data[:k])
    h.update(data[k:])
    assert h.digest() == vector.digest, (
        f"{backend}: update({k} bytes) + update({len(data) - k} bytes) gave a wrong digest "
        f"for {vector.source}")


@pytest.mark.parametrize("split", SPLIT_POINTS)
@pytest.mark.parametrize("vector", BLAKE2B_PARAMS)
def test_blake2b_vector_constructor_data_then_update(vector, split, backend):
    data = vector.data
    k = min(split, len(data))
    h = _blake2b(vector, backend, data=data[:k])
    h.update(b"")  # an empty update must change nothing
    h.update(data[k:])
    assert h.digest() == vector.digest, (
        f"{backend}: blake2b({k} bytes).update({len(data) - k} bytes) gave a wrong digest "
        f"for {vector.source}")


@pytest.mark.parametrize("vector", BLAKE2B_PARAMS)
def test_blake2b_vector_byte_by_byte(vector, backend):
    h = _blake2b(vector, backend, data=b"")
    for i in range(len(vector.data)):
        h.update(vector.data[i:i + 1])
    assert h.digest() == vector.digest, (
        f"{backend}: byte-by-byte updates gave a wrong digest for {vector.source}")


# ---- Argon2 -------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", ARGON2_PARAMS)
def test_argon2_vector(vector, backend):
    tag = argonishche.argon2_hash(vector.password, vector.salt, **_argon2_kwargs(vector, backend))
    assert tag == vector.tag, f"{backend}: wrong Argon2 tag for {vector.source}"


@pytest.mark.parametrize("vector", ARGON2_PARAMS)
def test_argon2_vector_every_thread_count(vector, backend):
    # Threads only share out the lanes: 1..p threads must all give the published tag.
    for threads in range(1, vector.parallelism + 1):
        tag = argonishche.argon2_hash(vector.password, vector.salt, threads=threads,
                                      **_argon2_kwargs(vector, backend))
        assert tag == vector.tag, (
            f"{backend}: threads={threads} gave a wrong Argon2 tag for {vector.source}")


@pytest.mark.parametrize("vector", ARGON2_PARAMS)
def test_argon2_vector_encoded_and_verified(vector, backend):
    kwargs = _argon2_kwargs(vector, backend)
    encoded = argonishche.argon2_hash_encoded(vector.password, vector.salt, **kwargs)
    assert encoded.startswith(
        f"$argon2{vector.type}$v={vector.version}$m={vector.memory_cost},"
        f"t={vector.time_cost},p={vector.parallelism}$"), vector.source
    assert argonishche.argon2_verify(
        encoded, vector.password, secret=vector.secret,
        associated_data=vector.associated_data, backend=backend) is True, vector.source
