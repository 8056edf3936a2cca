"""PasswordHasher: hash, verify and check_needs_rehash with the semantics argon2-cffi users know."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import Executor
from typing import TypedDict

from ._argon2 import argon2_hash_encoded, argon2_verify, params_of
from ._batch import Progress, hash_many
from .exceptions import InvalidHashError
from .hookspecs import Allocator
from ._params import (
    MIN_SALT_LEN,
    UINT32_MAX,
    Argon2Params,
    Buffer,
    Limits,
    Type,
    TypeLike,
    Wipe,
    integer,
    resolve_limits,
)


class _MemoryOptions(TypedDict):
    allocator: str | Allocator | None
    wipe: Wipe


class PasswordHasher:
    """High-level password hashing with a random salt and PHC strings.

    Defaults are RFC 9106's second recommended option (Argon2id, t=3, m=64 MiB, p=4), the same
    as argon2-cffi's.  ``verify`` reads type and costs from the hash itself, so hashes made with
    older settings still verify; ``check_needs_rehash`` tells when to re-hash them.
    """

    def __init__(self, time_cost: int = 3, memory_cost: int = 65536, parallelism: int = 4,
                 hash_len: int = 32, salt_len: int = 16, type: TypeLike = "id", *,
                 allocator: str | Allocator | None = None, wipe: Wipe = True,
                 limits: Limits | None = None) -> None:
        """:param allocator: and :param wipe: as for :func:`argonishche.argon2_hash`.

        :param limits: an :class:`argonishche.Limits` that ``verify`` and ``check_needs_rehash``
            apply to the hashes they read (default ``Limits()``; ``Limits.none()`` for none).
            The hasher's own parameters must be within them (else ParameterError).
        """
        self._params = Argon2Params.check(type=type, version=0x13, time_cost=time_cost,
                                          memory_cost=memory_cost, parallelism=parallelism,
                                          hash_len=hash_len)
        self.salt_len = integer("salt_len", salt_len, MIN_SALT_LEN, UINT32_MAX)
        self.limits = resolve_limits(limits)
        self.limits.check_own(memory_cost=memory_cost, time_cost=time_cost,
                              parallelism=parallelism, hash_len=hash_len, salt_len=salt_len)
        self._memory = _MemoryOptions(allocator=allocator, wipe=wipe)

    @property
    def time_cost(self) -> int:
        return self._params.time_cost

    @property
    def memory_cost(self) -> int:
        return self._params.memory_cost

    @property
    def parallelism(self) -> int:
        return self._params.parallelism

    @property
    def hash_len(self) -> int:
        return self._params.hash_len

    @property
    def type(self) -> Type:
        return self._params.type

    def __repr__(self) -> str:
        p = self._params
        return (f"PasswordHasher(time_cost={p.time_cost}, memory_cost={p.memory_cost}, "
                f"parallelism={p.parallelism}, hash_len={p.hash_len}, "
                f"salt_len={self.salt_len}, type={p.type.label!r})")

    def hash(self, password: Buffer | str, *, salt: Buffer | None = None) -> str:
        """A PHC string for *password* (str is UTF-8 encoded) with a fresh random salt."""
        p = self._params
        return argon2_hash_encoded(
            password, os.urandom(self.salt_len) if salt is None else salt, type=p.type,
            time_cost=p.time_cost, memory_cost=p.memory_cost, parallelism=p.parallelism,
            hash_len=p.hash_len, version=p.version, **self._memory)

    def hash_many(self, passwords: Iterable[Buffer | str], *, executor: Executor | None = None,
                  workers: int | None = None, progress: Progress | None = None) -> list[str]:
        """PHC strings for many passwords, as :func:`argonishche.hash_many` makes them."""
        p = self._params
        return hash_many(passwords, type=p.type, time_cost=p.time_cost,
                         memory_cost=p.memory_cost, parallelism=p.parallelism,
                         hash_len=p.hash_len, version=p.version, salt_len=self.salt_len,
                         executor=executor, workers=workers, progress=progress, **self._memory)

    def verify(self, hash: str | bytes,  # noqa: A002 - argon2-cffi's parameter name
               password: Buffer | str) -> bool:
        """True, or VerifyMismatchError / InvalidHashError; the costs come from *hash*, and a
        hash over this hasher's limits is a LimitExceededError (an InvalidHashError)."""
        return argon2_verify(hash, password, limits=self.limits, **self._memory)

    def check_needs_rehash(self, hash: str | bytes) -> bool:  # noqa: A002
        """True if *hash* was made with parameters other than this hasher's.

        A hash over this hasher's limits is a LimitExceededError: it could not be verified."""
        params, salt, _ = params_of(hash, self.limits)
        return params != self._params or len(salt) != self.salt_len


__all__ = ["PasswordHasher", "InvalidHashError"]
