"""Bad input to every entry point is a ``ParameterError`` (a ``ValueError``), or a
``ParameterTypeError`` (also a ``TypeError``) for a wrong type, whose message names the
parameter: argon2_hash, argon2_hash_encoded, argon2_verify, PasswordHasher and blake2b."""

from __future__ import annotations

import pytest
from argonishche import (
    ArgonishcheError,
    ParameterError,
    ParameterTypeError,
    PasswordHasher,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
    blake2b,
)
from argonishche.exceptions import ParameterOverflowError
from support import PASSWORD, SALT, SMALL, UINT32_MAX, VALID

# ---- Argon2 ---------------------------------------------------------------------------------

# (id, overrides of the call, expected exception, word the message must contain)
ARGON2_BAD_INPUT = [
    ("salt-7-bytes", dict(salt=b"1234567"), ParameterError, "salt"),
    ("salt-empty", dict(salt=b""), ParameterError, "salt"),
    ("hash_len-3", dict(hash_len=3), ParameterError, "hash_len"),
    ("hash_len-0", dict(hash_len=0), ParameterError, "hash_len"),
    ("hash_len-negative", dict(hash_len=-32), ParameterError, "hash_len"),
    ("memory_cost-7", dict(memory_cost=7), ParameterError, "memory_cost"),
    ("memory_cost-below-8p", dict(memory_cost=31, parallelism=4), ParameterError, "memory_cost"),
    ("memory_cost-0", dict(memory_cost=0), ParameterError, "memory_cost"),
    ("time_cost-0", dict(time_cost=0), ParameterError, "time_cost"),
    ("time_cost-negative", dict(time_cost=-1), ParameterError, "time_cost"),
    ("parallelism-0", dict(parallelism=0), ParameterError, "parallelism"),
    ("parallelism-2**24", dict(parallelism=2**24), ParameterError, "parallelism"),
    ("version-0x12", dict(version=0x12), ParameterError, "version"),
    ("version-0", dict(version=0), ParameterError, "version"),
    ("version-0x14", dict(version=0x14), ParameterError, "version"),
    ("type-x", dict(type="x"), ParameterError, "type"),
    ("type-argon2x", dict(type="argon2x"), ParameterError, "type"),
    ("type-empty", dict(type=""), ParameterError, "type"),
    ("threads-0", dict(threads=0), ParameterError, "threads"),
    ("threads-above-p", dict(threads=3, parallelism=2, memory_cost=16), ParameterError,
     "threads"),
    ("time_cost-2**32", dict(time_cost=UINT32_MAX + 1), ParameterError, "time_cost"),
    ("memory_cost-2**32", dict(memory_cost=UINT32_MAX + 1), ParameterError, "memory_cost"),
    ("hash_len-2**32", dict(hash_len=UINT32_MAX + 1), ParameterError, "hash_len"),
    ("parallelism-2**32", dict(parallelism=UINT32_MAX + 1), ParameterError, "parallelism"),
    # wrong types
    ("time_cost-float", dict(time_cost=1.0), ParameterTypeError, "time_cost"),
    ("memory_cost-float", dict(memory_cost=32.0), ParameterTypeError, "memory_cost"),
    ("parallelism-float", dict(parallelism=1.0), ParameterTypeError, "parallelism"),
    ("hash_len-float", dict(hash_len=32.0), ParameterTypeError, "hash_len"),
    ("threads-float", dict(threads=1.0), ParameterTypeError, "threads"),
    ("time_cost-None", dict(time_cost=None), ParameterTypeError, "time_cost"),
    ("memory_cost-None", dict(memory_cost=None), ParameterTypeError, "memory_cost"),
    ("parallelism-None", dict(parallelism=None), ParameterTypeError, "parallelism"),
    ("hash_len-None", dict(hash_len=None), ParameterTypeError, "hash_len"),
    ("time_cost-bool", dict(time_cost=True), ParameterTypeError, "time_cost"),
    ("parallelism-bool", dict(parallelism=True), ParameterTypeError, "parallelism"),
    ("hash_len-bool", dict(hash_len=True), ParameterTypeError, "hash_len"),
    ("threads-bool", dict(threads=True), ParameterTypeError, "threads"),
    ("time_cost-str", dict(time_cost="1"), ParameterTypeError, "time_cost"),
    ("type-None", dict(type=None), ParameterTypeError, "type"),
    ("type-float", dict(type=2.0), ParameterTypeError, "type"),
    ("type-bool", dict(type=True), ParameterTypeError, "type"),
    ("salt-str", dict(salt="somesalt"), ParameterTypeError, "salt"),
    ("salt-None", dict(salt=None), ParameterTypeError, "salt"),
    ("salt-int", dict(salt=12345678), ParameterTypeError, "salt"),
    ("password-None", dict(password=None), ParameterTypeError, "password"),
    ("password-int", dict(password=5), ParameterTypeError, "password"),
    ("secret-str", dict(secret="pepper"), ParameterTypeError, "secret"),
    ("secret-None", dict(secret=None), ParameterTypeError, "secret"),
    ("associated_data-str", dict(associated_data="ad"), ParameterTypeError, "associated_data"),
    ("associated_data-float", dict(associated_data=1.5), ParameterTypeError,
     "associated_data"),
    ("version-None", dict(version=None), ParameterTypeError, "version"),
    ("version-bool", dict(version=True), ParameterTypeError, "version"),
    ("version-str", dict(version="19"), ParameterTypeError, "version"),
    ("version-float", dict(version=19.0), ParameterTypeError, "version"),
    ("type-int-3", dict(type=3), ParameterError, "type"),
    ("type-int-negative", dict(type=-1), ParameterError, "type"),
]


def _bad_params(table):
    """(id, overrides, expected, word) rows as pytest params with readable ids."""
    return [pytest.param(*row[1:], id=row[0]) for row in table]


def _check_error(info, expected, word):
    exc = info.value
    assert type(exc) is expected, f"{type(exc).__name__}: {exc}"
    assert isinstance(exc, ValueError) and isinstance(exc, ArgonishcheError)
    assert isinstance(exc, TypeError) == (expected is ParameterTypeError)
    assert word in str(exc), f"message does not name {word!r}: {exc}"


@pytest.mark.parametrize("function", [argon2_hash, argon2_hash_encoded])
@pytest.mark.parametrize("overrides, expected, word", _bad_params(ARGON2_BAD_INPUT))
def test_argon2_bad_input(function, overrides, expected, word):
    call = dict(password=PASSWORD, salt=SALT, **SMALL)
    call.update(overrides)
    with pytest.raises(ParameterError) as info:
        function(call.pop("password"), call.pop("salt"), **call)
    _check_error(info, expected, word)


@pytest.mark.parametrize("overrides, expected, word", [
    (dict(password=None), ParameterTypeError, "password"),
    (dict(password=3.5), ParameterTypeError, "password"),
    (dict(secret="pepper"), ParameterTypeError, "secret"),
    (dict(associated_data=None), ParameterTypeError, "associated_data"),
    (dict(threads=0), ParameterError, "threads"),
    (dict(threads=2), ParameterError, "threads"),  # VALID has p=1
    (dict(threads=1.0), ParameterTypeError, "threads"),
])
def test_verify_bad_input(overrides, expected, word):
    call = dict(password=PASSWORD)
    call.update(overrides)
    with pytest.raises(ParameterError) as info:
        argon2_verify(VALID, call.pop("password"), **call)
    _check_error(info, expected, word)


@pytest.mark.parametrize("overrides, expected, word", [
    (dict(time_cost=0), ParameterError, "time_cost"),
    (dict(memory_cost=7, parallelism=1), ParameterError, "memory_cost"),
    (dict(memory_cost=15, parallelism=2), ParameterError, "memory_cost"),
    (dict(parallelism=0), ParameterError, "parallelism"),
    (dict(parallelism=2**24), ParameterError, "parallelism"),
    (dict(hash_len=3), ParameterError, "hash_len"),
    (dict(salt_len=7), ParameterError, "salt_len"),
    (dict(salt_len=UINT32_MAX + 1), ParameterError, "salt_len"),
    (dict(time_cost=UINT32_MAX + 1), ParameterError, "time_cost"),
    (dict(type="x"), ParameterError, "type"),
    (dict(time_cost=1.5), ParameterTypeError, "time_cost"),
    (dict(memory_cost=None), ParameterTypeError, "memory_cost"),
    (dict(salt_len=16.0), ParameterTypeError, "salt_len"),
    (dict(salt_len=None), ParameterTypeError, "salt_len"),
    (dict(hash_len=True), ParameterTypeError, "hash_len"),
    (dict(type=None), ParameterTypeError, "type"),
], ids=lambda v: str(v) if not isinstance(v, dict) else "-".join(
    f"{k}={v!r}" for k, v in v.items()))
def test_password_hasher_bad_parameters(overrides, expected, word):
    with pytest.raises(ParameterError) as info:
        PasswordHasher(**{**dict(memory_cost=64), **overrides})
    _check_error(info, expected, word)


def test_password_hasher_bad_password_and_salt():
    ph = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    with pytest.raises(ParameterTypeError, match="password"):
        ph.hash(None)
    with pytest.raises(ParameterError, match="salt"):
        ph.hash(PASSWORD, salt=b"short")
    with pytest.raises(ParameterTypeError, match="password"):
        ph.verify(VALID, 12)


# ---- blake2b --------------------------------------------------------------------------------


BLAKE2B_BAD_INPUT = [
    ("digest_size-0", dict(digest_size=0), ParameterError, "digest_size"),
    ("digest_size-65", dict(digest_size=65), ParameterError, "digest_size"),
    ("digest_size-negative", dict(digest_size=-1), ParameterError, "digest_size"),
    # Beyond C int, as hashlib: an OverflowError (and a ParameterError).
    ("digest_size-2**32", dict(digest_size=UINT32_MAX + 1), ParameterOverflowError,
     "digest_size"),
    ("digest_size-float", dict(digest_size=32.0), ParameterTypeError, "digest_size"),
    ("digest_size-None", dict(digest_size=None), ParameterTypeError, "digest_size"),
    ("digest_size-bool", dict(digest_size=True), ParameterTypeError, "digest_size"),
    ("key-65", dict(key=b"k" * 65), ParameterError, "key"),
    ("salt-17", dict(salt=b"s" * 17), ParameterError, "salt"),
    ("person-17", dict(person=b"p" * 17), ParameterError, "person"),
    ("key-str", dict(key="key"), ParameterTypeError, "key"),
    ("salt-str", dict(salt="salt"), ParameterTypeError, "salt"),
    ("person-None", dict(person=None), ParameterTypeError, "person"),
]


@pytest.mark.parametrize("overrides, expected, word", _bad_params(BLAKE2B_BAD_INPUT))
def test_blake2b_bad_parameters(overrides, expected, word):
    with pytest.raises(ParameterError) as info:
        blake2b(b"abc", **overrides)
    _check_error(info, expected, word)
