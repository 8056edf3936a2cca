"""argon2-cffi's low-level functions: every parameter explicit, bytes in and out.

argon2-cffi's ``ffi``, ``lib``, ``core()`` and ``error_to_str()`` expose its bundled C library
and are not provided: argonishche's kernels have another interface.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeVar

from .._argon2 import argon2_hash, argon2_hash_encoded, argon2_verify, params_of
from .._parameter_checks import Buffer, Type, to_type
from ..exceptions import (
    HashingError,
    InvalidHashError,
    ParameterError,
    ParameterTypeError,
    VerificationError,
)
from ._memory_errors import answered_as

#: The Argon2 version new hashes get: 0x13 (1.3).
ARGON2_VERSION = 0x13

_Result = TypeVar("_Result", str, bytes)


def _bytes_only(name: str, value: object) -> None:
    # argon2-cffi takes bytes here; a str is a TypeError, never silently encoded.
    if isinstance(value, str):
        raise ParameterTypeError(f"{name} must be bytes, not str (encode it first)")


def _hash(function: Callable[..., _Result], secret: Buffer, salt: Buffer, time_cost: int,
          memory_cost: int, parallelism: int, hash_len: int, type: Type,
          version: int) -> _Result:
    _bytes_only("secret", secret)
    _bytes_only("salt", salt)
    try:
        with answered_as(HashingError):  # as argon2-cffi reports its C library's failure
            return function(secret, salt, type=to_type(type), time_cost=time_cost,
                            memory_cost=memory_cost, parallelism=parallelism,
                            hash_len=hash_len, version=version)
    except ParameterTypeError:
        raise
    except ParameterError as exc:  # argon2-cffi reports what its C library refuses this way
        raise HashingError(str(exc)) from exc


def hash_secret(secret: Buffer, salt: Buffer, time_cost: int, memory_cost: int,
                parallelism: int, hash_len: int, type: Type,
                version: int = ARGON2_VERSION) -> bytes:
    """The PHC string of *secret* (ASCII bytes); HashingError for parameters Argon2 refuses or
    work memory that cannot be allocated."""
    encoded = _hash(argon2_hash_encoded, secret, salt, time_cost, memory_cost, parallelism,
                    hash_len, type, version)
    return encoded.encode("ascii")


def hash_secret_raw(secret: Buffer, salt: Buffer, time_cost: int, memory_cost: int,
                    parallelism: int, hash_len: int, type: Type,
                    version: int = ARGON2_VERSION) -> bytes:
    """The raw tag of *secret*; HashingError for parameters Argon2 refuses or work memory that
    cannot be allocated."""
    return _hash(argon2_hash, secret, salt, time_cost, memory_cost, parallelism, hash_len,
                 type, version)


def verify_secret(hash: bytes | str, secret: Buffer,  # noqa: A002 - argon2-cffi's name
                  type: Type) -> Literal[True]:
    """True if *secret* matches *hash*, which must be of Argon2 *type*.

    VerifyMismatchError for a wrong secret; InvalidHashError (a VerificationError) for a hash
    that cannot be read, is of another type, or asks for more than the default
    :class:`~argonishche.Limits` allow; ``VerificationError("Memory allocation error")``, as
    argon2-cffi's, for one whose work memory cannot be allocated.
    """
    _bytes_only("secret", secret)
    expected = to_type(type)
    found = params_of(hash)[0].type  # within the default limits, before anything is run
    if found != expected:
        raise InvalidHashError(f"hash is argon2{found.label}, not argon2{expected.label}")
    with answered_as(VerificationError):
        return argon2_verify(hash, secret)


__all__ = ["ARGON2_VERSION", "Type", "hash_secret", "hash_secret_raw", "verify_secret"]
