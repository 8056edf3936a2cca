"""An argon2-cffi user's code on the drop-in: ``mypy --strict`` must pass on it as on argon2-cffi.

Type-checked only, never run (as typing_usage.py).  Written as argon2-cffi users write it:
annotations naming the module's classes, ``from_parameters`` with a profile, a subclass that
overrides a method with argon2-cffi's own signature.  tests/project/test_typing_wheel.py also
checks it against argon2-cffi itself, its drop-in import line replaced by ``import argon2``: proof
that it is valid argon2-cffi code.  Keep that line exactly as it is.
"""

from __future__ import annotations

from typing import Literal, assert_type

import argonishche.argon2_cffi as argon2  # the line test_typing_wheel.py swaps for argon2-cffi


def make_hasher() -> argon2.PasswordHasher:
    # argon2-cffi's from_parameters returns its PasswordHasher; the drop-in's must return the
    # drop-in's (not argonishche.PasswordHasher, its base), or this return is an error.
    return argon2.PasswordHasher.from_parameters(argon2.profiles.RFC_9106_LOW_MEMORY)


class PepperedHasher(argon2.PasswordHasher):
    """A subclass: a method overridden with argon2-cffi's signature, one added."""

    def check_needs_rehash(self, hash: str | bytes) -> bool:
        return super().check_needs_rehash(hash) or self.pepper_changed()

    def pepper_changed(self) -> bool:
        return False


def make_peppered() -> PepperedHasher:
    hasher = PepperedHasher.from_parameters(argon2.profiles.CHEAPEST)
    assert isinstance(hasher, PepperedHasher)  # argon2-cffi types from_parameters as its base
    return hasher


def password_hasher(ph: argon2.PasswordHasher) -> None:
    h = ph.hash("correct horse")
    assert_type(h, str)
    assert_type(ph.hash(b"correct horse", salt=b"somesalt"), str)
    assert_type(ph.verify(h, "correct horse"), Literal[True])
    assert_type(ph.verify(h.encode(), b"correct horse"), Literal[True])
    assert_type(ph.check_needs_rehash(h), bool)
    assert_type(ph.check_needs_rehash(h.encode()), bool)
    assert_type(ph.time_cost, int)
    assert_type(ph.memory_cost, int)
    assert_type(ph.parallelism, int)
    assert_type(ph.hash_len, int)
    assert_type(ph.salt_len, int)
    assert_type(ph.type, argon2.Type)
    assert_type(ph.encoding, str)
    built = argon2.PasswordHasher(
        time_cost=argon2.DEFAULT_TIME_COST, memory_cost=argon2.DEFAULT_MEMORY_COST,
        parallelism=argon2.DEFAULT_PARALLELISM, hash_len=argon2.DEFAULT_HASH_LENGTH,
        salt_len=argon2.DEFAULT_RANDOM_SALT_LENGTH, encoding="utf-8", type=argon2.Type.ID)
    assert_type(built, argon2.PasswordHasher)
    try:
        ph.verify(h, "wrong")
    except argon2.exceptions.VerifyMismatchError as exc:
        assert_type(exc, argon2.exceptions.VerifyMismatchError)
    except argon2.exceptions.InvalidHashError:
        pass
    except argon2.exceptions.VerificationError:
        pass
    except argon2.exceptions.Argon2Error:
        pass
    try:
        ph.hash("x")
    except argon2.exceptions.HashingError:
        pass
    except (argon2.exceptions.InvalidHash, argon2.exceptions.UnsupportedParametersError):
        pass


def parameters() -> None:
    params = argon2.extract_parameters(make_hasher().hash("x"))
    assert_type(params, argon2.Parameters)
    assert_type(params.type, argon2.Type)
    assert_type(params.version, int)
    assert_type(params.salt_len + params.hash_len + params.time_cost, int)
    assert_type(params.memory_cost + params.parallelism, int)
    assert_type(argon2.profiles.get_default_parameters(), argon2.Parameters)
    assert_type(argon2.profiles.RFC_9106_HIGH_MEMORY, argon2.Parameters)
    assert_type(argon2.profiles.PRE_21_2, argon2.Parameters)
    assert_type(argon2.Parameters(type=argon2.Type.ID, version=19, salt_len=16, hash_len=32,
                                  time_cost=3, memory_cost=65536, parallelism=4),
                argon2.Parameters)
    assert_type(argon2.PasswordHasher.from_parameters(params), argon2.PasswordHasher)


def low_level() -> None:
    ll = argon2.low_level
    encoded = ll.hash_secret(b"secret", b"somesalt", time_cost=1, memory_cost=8,
                             parallelism=1, hash_len=16, type=ll.Type.ID)
    assert_type(encoded, bytes)
    assert_type(ll.hash_secret(b"secret", b"somesalt", 1, 8, 1, 16, argon2.Type.I,
                               version=ll.ARGON2_VERSION), bytes)
    assert_type(ll.hash_secret_raw(b"secret", b"somesalt", 1, 8, 1, 16, ll.Type.D), bytes)
    assert_type(ll.verify_secret(encoded, b"secret", ll.Type.ID), Literal[True])
    version: int = ll.ARGON2_VERSION  # argon2-cffi's is Any (its C library's constant)
    del version


def wrong_calls() -> None:
    """Mistakes a type checker catches with either library."""
    argon2.PasswordHasher(time_cost="2")  # type: ignore[arg-type]
    argon2.PasswordHasher().hash(42)  # type: ignore[arg-type]
    argon2.PasswordHasher.from_parameters("RFC_9106_LOW_MEMORY")  # type: ignore[arg-type]
    argon2.low_level.hash_secret(b"s", b"somesalt", 1, 8, 1, 16)  # type: ignore[call-arg]
