"""PasswordHasher: hash, verify and check_needs_rehash with the semantics argon2-cffi users know."""

from __future__ import annotations

import os

from ._argon2 import argon2_hash_encoded, argon2_verify, params_of
from ._batch import hash_many
from .exceptions import InvalidHashError
from ._params import MIN_SALT_LEN, UINT32_MAX, Argon2Params, integer, resolve_limits


class PasswordHasher:
    """High-level password hashing with a random salt and PHC strings.

    Defaults are RFC 9106's second recommended option (Argon2id, t=3, m=64 MiB, p=4), the same
    as argon2-cffi's.  ``verify`` reads type and costs from the hash itself, so hashes made with
    older settings still verify; ``check_needs_rehash`` tells when to re-hash them.
    """

    def __init__(self, time_cost: int = 3, memory_cost: int = 65536, parallelism: int = 4,
                 hash_len: int = 32, salt_len: int = 16, type="id", *, allocator=None,
                 wipe=True, limits=None) -> None:
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
        self._memory = dict(allocator=allocator, wipe=wipe)

    time_cost = property(lambda self: self._params.time_cost)
    memory_cost = property(lambda self: self._params.memory_cost)
    parallelism = property(lambda self: self._params.parallelism)
    hash_len = property(lambda self: self._params.hash_len)
    type = property(lambda self: self._params.type)

    def __repr__(self) -> str:
        p = self._params
        return (f"PasswordHasher(time_cost={p.time_cost}, memory_cost={p.memory_cost}, "
                f"parallelism={p.parallelism}, hash_len={p.hash_len}, "
                f"salt_len={self.salt_len}, type={p.type.label!r})")

    def hash(self, password, *, salt=None) -> str:
        """A PHC string for *password* (str is UTF-8 encoded) with a fresh random salt."""
        p = self._params
        return argon2_hash_encoded(
            password, os.urandom(self.salt_len) if salt is None else salt, type=p.type,
            time_cost=p.time_cost, memory_cost=p.memory_cost, parallelism=p.parallelism,
            hash_len=p.hash_len, version=p.version, **self._memory)

    def hash_many(self, passwords, *, executor=None, workers=None, progress=None) -> list[str]:
        """PHC strings for many passwords, as :func:`argonishche.hash_many` makes them."""
        p = self._params
        return hash_many(passwords, type=p.type, time_cost=p.time_cost,
                         memory_cost=p.memory_cost, parallelism=p.parallelism,
                         hash_len=p.hash_len, version=p.version, salt_len=self.salt_len,
                         executor=executor, workers=workers, progress=progress, **self._memory)

    def verify(self, hash, password) -> bool:  # noqa: A002 - argon2-cffi's parameter name
        """True, or VerifyMismatchError / InvalidHashError; the costs come from *hash*, and a
        hash over this hasher's limits is a LimitExceededError (an InvalidHashError)."""
        return argon2_verify(hash, password, limits=self.limits, **self._memory)

    def check_needs_rehash(self, hash) -> bool:  # noqa: A002
        """True if *hash* was made with parameters other than this hasher's.

        A hash over this hasher's limits is a LimitExceededError: it could not be verified."""
        params, salt, _ = params_of(hash, self.limits)
        return params != self._params or len(salt) != self.salt_len


__all__ = ["PasswordHasher", "InvalidHashError"]
