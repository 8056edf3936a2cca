"""What a user's type checker sees: ``mypy --strict tests/project/typing_usage.py`` must pass.

Not a test module (no ``test_`` prefix: pytest does not collect it), and never run: it is only
type-checked.  Each ``assert_type`` pins a public type; each ``# type: ignore[code]`` line is a
call that must stay a type error (``warn_unused_ignores``, part of ``--strict``, fails the check
if it ever stops being one).
"""

from __future__ import annotations

from typing import Literal, assert_type  # typing.assert_type: Python 3.11 (mypy reads it anywhere)

import argonishche
from argonishche import (
    ArgonishcheError,
    BackendInfo,
    InvalidHashError,
    Limits,
    PasswordHasher,
    Type,
    VerificationError,
    VerifyMismatchError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
    blake2b,
)


def low_level() -> None:
    tag = argon2_hash(b"password", b"somesalt", type="id", time_cost=2, memory_cost=1024,
                      parallelism=1, hash_len=32)
    assert_type(tag, bytes)
    assert_type(argon2_hash("password", bytearray(b"somesalt"), type=Type.ID), bytes)
    encoded = argon2_hash_encoded(b"password", b"somesalt", memory_cost=1024)
    assert_type(encoded, str)
    assert_type(argon2_verify(encoded, b"password"), Literal[True])
    assert_type(argon2_verify(encoded.encode(), "password", limits=Limits.none()), Literal[True])
    argon2_hash(b"password", b"somesalt", memory=bytearray(argonishche.memory_size(1024)),
                wipe=False)


def password_hasher() -> None:
    ph = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1)
    h = ph.hash("correct horse")
    assert_type(h, str)
    assert_type(ph.verify(h, "correct horse"), Literal[True])
    assert_type(ph.verify(h.encode(), b"correct horse"), Literal[True])
    assert_type(ph.check_needs_rehash(h), bool)
    assert_type(ph.hash_many(["a", b"b"]), list[str])
    assert_type(argonishche.hash_many([b"a", "b"], memory_cost=1024), list[str])
    try:
        ph.verify(h, "wrong")
    except VerifyMismatchError as exc:
        assert_type(exc, VerifyMismatchError)
    except InvalidHashError as exc:  # malformed, or over the limits
        assert_type(exc, InvalidHashError)
    except VerificationError:
        pass
    except ArgonishcheError:
        pass


def limits() -> None:
    assert_type(Limits(), Limits)
    assert_type(Limits.none(), Limits)
    assert_type(Limits().max_memory_cost, int | None)
    assert_type(Limits().max_encoded_len, int | None)
    assert_type(Type.ID, Literal[Type.ID])
    assert_type(Type(2), Type)


def hashing() -> None:
    h = blake2b(b"data", digest_size=32, key=b"k", salt=b"s", person=b"p")
    assert_type(h, blake2b)
    h.update(memoryview(b"more"))
    assert_type(h.digest(), bytes)
    assert_type(h.hexdigest(), str)
    assert_type(h.copy(), blake2b)
    leaf = blake2b(b"data", fanout=4, depth=2, leaf_size=4096, node_offset=3, node_depth=0,
                   inner_size=64, last_node=True, usedforsecurity=False)
    assert_type(leaf, blake2b)
    assert_type(h.digest_size, int)
    assert_type(blake2b().name, str)


def runtime() -> None:
    infos = argonishche.backends()
    assert_type(infos, list[BackendInfo])
    assert_type(infos[0].name, str)
    assert_type(infos[0].selftest_ms, float | None)
    assert_type(argonishche.selected_backend(), str)
    assert_type(argonishche.selected_backend("blake2b"), str)
    assert_type(argonishche.memory_size(65536, 4), int)
    assert_type(argonishche.trim_memory(), int)
    assert_type(argonishche.calibrate(), dict[str, dict[str, float]])
    assert_type(argonishche.KERNEL_ABI, int)
    assert_type(argonishche.__version__, str)


def wrong_calls() -> None:
    """Mistakes a user's type checker must catch."""
    argon2_hash(b"password", b"somesalt", time_cost="2")  # type: ignore[arg-type]
    argon2_hash(b"password")  # type: ignore[call-arg]
    argon2_hash(b"password", b"somesalt", 2)  # type: ignore[call-arg]
    argon2_verify(b"password", 3)  # type: ignore[arg-type]
    PasswordHasher(memory_cost=1.5)  # type: ignore[arg-type]
    PasswordHasher().hash(42)  # type: ignore[arg-type]
    PasswordHasher().check_needs_rehash(None)  # type: ignore[arg-type]
    blake2b(b"x").update(42)  # type: ignore[arg-type]
    blake2b(b"x", digest_size="32")  # type: ignore[arg-type]
    argonishche.memory_size("1024")  # type: ignore[arg-type]
    argonishche.selected_backend(1)  # type: ignore[arg-type]
    tag: str = argon2_hash(b"password", b"somesalt")  # type: ignore[assignment]
    del tag
