"""The ``blake2b`` object is a drop-in for ``hashlib.blake2b``: the same attributes, keyword
parameters, buffer types, copy() and digest(), and the same TypeErrors for data of a wrong type.
(Its bad parameters are in test_bad_input.py.)"""

from __future__ import annotations

import array
import hashlib

import pytest
from argonishche import blake2b


def test_blake2b_attributes_like_hashlib():
    ours, theirs = blake2b(b"abc"), hashlib.blake2b(b"abc")
    assert ours.name == theirs.name == "blake2b"
    assert ours.block_size == theirs.block_size == 128
    assert ours.digest_size == theirs.digest_size == 64
    for name in ("SALT_SIZE", "PERSON_SIZE", "MAX_KEY_SIZE", "MAX_DIGEST_SIZE"):
        assert getattr(blake2b, name) == getattr(hashlib.blake2b, name), name
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.digest() == theirs.digest()
    assert ours.hexdigest() == theirs.hexdigest() == ours.digest().hex()
    small = blake2b(b"abc", digest_size=20)
    assert small.digest_size == 20 and len(small.digest()) == 20
    assert len(small.hexdigest()) == 40


def test_blake2b_keyword_parameters_like_hashlib():
    params = dict(digest_size=32, key=b"k" * 10, salt=b"s" * 16, person=b"p" * 5)
    assert (blake2b(b"data", usedforsecurity=False, **params).digest()
            == hashlib.blake2b(b"data", **params).digest())
    assert blake2b(data=b"data").digest() == hashlib.blake2b(b"data").digest()
    assert blake2b().digest() == hashlib.blake2b().digest()


def test_blake2b_buffer_types():
    raw = bytes(range(256)) * 3
    expected = hashlib.blake2b(raw).digest()
    words = array.array("Q")
    words.frombytes(raw)
    buffers = [raw, bytearray(raw), memoryview(raw), memoryview(bytearray(raw)), words,
               memoryview(words)]
    for buf in buffers:
        assert blake2b(buf).digest() == expected, type(buf)
        h = blake2b()
        h.update(buf)
        assert h.digest() == expected, type(buf)
    # Buffers as key, salt and person too.
    assert blake2b(raw, key=bytearray(b"key"), salt=memoryview(b"salt"),
                   person=array.array("B", b"me")).digest() == hashlib.blake2b(
        raw, key=b"key", salt=b"salt", person=b"me").digest()


def test_blake2b_copy_and_digest():
    h = blake2b(b"abc", digest_size=32)
    clone = h.copy()
    assert isinstance(clone, blake2b)
    assert clone.digest_size == 32
    h.update(b"def")
    assert clone.digest() == hashlib.blake2b(b"abc", digest_size=32).digest()
    assert h.digest() == hashlib.blake2b(b"abcdef", digest_size=32).digest()
    assert h.digest() == h.digest()  # non-destructive
    h.update(b"ghi")
    assert h.digest() == hashlib.blake2b(b"abcdefghi", digest_size=32).digest()


@pytest.mark.parametrize("data", ["abc", 123, 1.5, ["a"]], ids=repr)
def test_blake2b_data_of_wrong_type_is_type_error(data):
    with pytest.raises(TypeError):
        blake2b(data)
    h = blake2b(b"x")
    with pytest.raises(TypeError):
        h.update(data)
    assert h.digest() == hashlib.blake2b(b"x").digest()  # the failed update changed nothing


@pytest.mark.parametrize("data", ["", None], ids=repr)
def test_blake2b_empty_str_or_none_data_is_type_error(data):
    with pytest.raises(TypeError):
        hashlib.blake2b(data)  # what callers of a hashlib drop-in expect
    with pytest.raises(TypeError):
        blake2b(data)


def test_blake2b_update_none_is_type_error():
    h = blake2b()
    with pytest.raises(TypeError):
        h.update(None)
