"""PasswordHasher: hash, verify and check_needs_rehash, with argon2-cffi's API and semantics.

The class is argon2-cffi's ``PasswordHasher`` (same arguments in the same order, same defaults,
``from_parameters``, ``encoding``), so ``argonishche.argon2_cffi`` can export it unchanged; where
it is deliberately stricter, docs/migration/argon2-cffi.md's table says so.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable

from . import _lazy_import
from ._argon2 import DEFAULTS, argon2_hash_encoded, argon2_verify
from ._parameter_checks import (
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
from ._thread_pool import Executor, Progress
from .exceptions import InvalidHashError, ParameterError, ParameterTypeError
from .hookspecs import Allocator

# Hashing needs neither typing nor the modules of hash_many (_batch) and of the methods that
# read hashes (_extract_parameters, whose Parameters is a dataclass: dataclasses is not imported
# at start-up): those methods import them at first use.  The names of annotations exist at run
# time (typing.get_type_hints, autodoc), Parameters excepted: hash_many's Executor and Progress
# are _thread_pool's, which is light; Literal is _argon2's stand-in; Self is bound below.
TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Literal, Self, TypedDict

    from ._extract_parameters import Parameters

    class _MemoryOptions(TypedDict):
        allocator: str | Allocator | None
        wipe: Wipe
else:
    from ._argon2 import Literal  # typing.Literal, imported when get_type_hints first needs it

# argon2-cffi's names for the defaults: RFC 9106's second recommended option (its "low memory"
# profile), which argon2-cffi has used since 21.2.0.
DEFAULT_TIME_COST = DEFAULTS.time_cost
DEFAULT_MEMORY_COST = DEFAULTS.memory_cost
DEFAULT_PARALLELISM = DEFAULTS.parallelism
DEFAULT_HASH_LENGTH = DEFAULTS.hash_len
DEFAULT_RANDOM_SALT_LENGTH = 16


def encode_password(password: Buffer | str, encoding: str) -> Buffer:
    """*password* as bytes: a str is encoded with *encoding*, a bytes-like object is kept."""
    return password.encode(encoding) if isinstance(password, str) else password


def _check_encoding(encoding: object) -> str:
    if not isinstance(encoding, str):
        raise ParameterTypeError(f"encoding must be a str, not {type(encoding).__name__}")
    try:
        codecs.lookup(encoding)
    except LookupError:  # found now, not at the first hash
        raise ParameterError(f"encoding {encoding!r} is not a known codec") from None
    return encoding


class PasswordHasher:
    """High-level password hashing with a random salt and PHC strings.

    Defaults are RFC 9106's second recommended option (Argon2id, t=3, m=64 MiB, p=4), the same
    as argon2-cffi's.  ``verify`` reads type and costs from the hash itself, so hashes made with
    older settings still verify; ``check_needs_rehash`` tells when to re-hash them.
    """

    def __init__(self, time_cost: int = DEFAULT_TIME_COST,
                 memory_cost: int = DEFAULT_MEMORY_COST,
                 parallelism: int = DEFAULT_PARALLELISM, hash_len: int = DEFAULT_HASH_LENGTH,
                 salt_len: int = DEFAULT_RANDOM_SALT_LENGTH, encoding: str = "utf-8",
                 type: TypeLike = Type.ID, *, allocator: str | Allocator | None = None,
                 wipe: Wipe = True, limits: Limits | None = None) -> None:
        """Arguments in argon2-cffi's order; a str password is encoded with *encoding*.

        Invalid costs are refused here (ParameterError), not at the first hash.

        :param allocator: and :param wipe: as for :func:`argonishche.argon2_hash`.
        :param limits: an :class:`argonishche.Limits` that ``verify`` applies to the hashes it
            reads (default ``Limits()``; ``Limits.none()`` for none).  The hasher's own
            parameters must be within them (else UnsupportedParametersError).
        """
        self._params = Argon2Params.check(type=type, version=0x13, time_cost=time_cost,
                                          memory_cost=memory_cost, parallelism=parallelism,
                                          hash_len=hash_len)
        salt_len = integer("salt_len", salt_len, MIN_SALT_LEN, UINT32_MAX)
        self.encoding = _check_encoding(encoding)
        self.limits = resolve_limits(limits)
        self.limits.check_own(memory_cost=memory_cost, time_cost=time_cost,
                              parallelism=parallelism, hash_len=hash_len, salt_len=salt_len)
        self._salt_len = salt_len
        self._parameters_made: Parameters | None = None  # see _parameters
        self._memory: _MemoryOptions = {"allocator": allocator, "wipe": wipe}

    @classmethod
    def from_parameters(cls, params: Parameters, *, allocator: str | Allocator | None = None,
                        wipe: Wipe = True, limits: Limits | None = None) -> Self:
        """A hasher of the class it is called on, making hashes with *params* (an
        ``argonishche.argon2_cffi.profiles`` entry, or what ``extract_parameters`` read); its
        version is ignored, as argon2-cffi does: new hashes are always version 0x13."""
        if not isinstance(params, _lazy_import.module("._extract_parameters").Parameters):
            raise ParameterTypeError(f"params must be argonishche.argon2_cffi.Parameters, not "
                                     f"{type(params).__name__}")
        return cls(time_cost=params.time_cost, memory_cost=params.memory_cost,
                   parallelism=params.parallelism, hash_len=params.hash_len,
                   salt_len=params.salt_len, type=params.type, allocator=allocator, wipe=wipe,
                   limits=limits)

    @property
    def _parameters(self) -> Parameters:
        """The hasher's parameters as ``extract_parameters`` reads a hash's (argon2-cffi's
        attribute of this name), made at first use: hashing does not need them."""
        parameters = self._parameters_made
        if parameters is None:
            p = self._params
            made = _lazy_import.module("._extract_parameters").Parameters
            parameters = self._parameters_made = made(
                type=p.type, version=p.version, salt_len=self._salt_len, hash_len=p.hash_len,
                time_cost=p.time_cost, memory_cost=p.memory_cost, parallelism=p.parallelism)
        return parameters

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
    def salt_len(self) -> int:
        return self._salt_len

    @property
    def type(self) -> Type:
        return self._params.type

    def __repr__(self) -> str:
        p = self._params
        return (f"PasswordHasher(time_cost={p.time_cost}, memory_cost={p.memory_cost}, "
                f"parallelism={p.parallelism}, hash_len={p.hash_len}, "
                f"salt_len={self._salt_len}, encoding={self.encoding!r}, "
                f"type={p.type.label!r})")

    def hash(self, password: Buffer | str, *, salt: Buffer | None = None) -> str:
        """A PHC string for *password* with a fresh random salt (or *salt*, at least 8 bytes:
        pass one only to reproduce a known hash)."""
        p = self._params
        return argon2_hash_encoded(
            encode_password(password, self.encoding),
            os.urandom(self._salt_len) if salt is None else salt, type=p.type,
            time_cost=p.time_cost, memory_cost=p.memory_cost, parallelism=p.parallelism,
            hash_len=p.hash_len, version=p.version, **self._memory)

    def hash_many(self, passwords: Iterable[Buffer | str], *, executor: Executor | None = None,
                  workers: int | None = None, chunk_size: int | None = None,
                  progress: Progress | None = None) -> list[str]:
        """PHC strings for many passwords, as :func:`argonishche.hash_many` makes them."""
        hash_many = _lazy_import.module("._batch").hash_many  # imported at first use
        if not isinstance(passwords, (str, bytes, bytearray, memoryview)):  # hash_many refuses
            passwords = [encode_password(password, self.encoding) for password in passwords]
        p = self._params
        encoded: list[str] = hash_many(
            passwords, type=p.type, time_cost=p.time_cost, memory_cost=p.memory_cost,
            parallelism=p.parallelism, hash_len=p.hash_len, version=p.version,
            salt_len=self._salt_len, executor=executor, workers=workers, chunk_size=chunk_size,
            progress=progress, **self._memory)
        return encoded

    def verify(self, hash: str | bytes,  # noqa: A002 - argon2-cffi's parameter name
               password: Buffer | str) -> Literal[True]:
        """True, or an exception: VerifyMismatchError for a wrong password; InvalidHashError
        (a VerificationError) for a hash that cannot be read, or one asking for more than this
        hasher's limits (LimitExceededError).  The costs come from *hash*."""
        return argon2_verify(hash, encode_password(password, self.encoding),
                             limits=self.limits, **self._memory)

    def check_needs_rehash(self, hash: str | bytes) -> bool:  # noqa: A002
        """True if *hash* was made with parameters other than this hasher's (its type, version,
        costs, salt or tag length), including costs over its limits, which ``verify`` refuses.

        Like argon2-cffi, it reads only the string's structure, never against limits: a string
        longer than any hash within them (``Limits.max_encoded_len``) is True unread;
        InvalidHashError if *hash* is not structured like an Argon2 PHC string at all."""
        longest = self.limits.max_encoded_len
        if longest is not None and isinstance(hash, (str, bytes)) and len(hash) > longest:
            return True
        # Compared as tuples in Parameters' field order: no Parameters is made for the hash.
        read = _lazy_import.module("._extract_parameters").parameter_fields(hash)
        own = self._parameters
        return bool(read != (own.type, own.version, own.salt_len, own.hash_len, own.time_cost,
                             own.memory_cost, own.parallelism))

    async def hash_async(self, password: Buffer | str, *, salt: Buffer | None = None) -> str:
        """:meth:`hash` on the shared hashing thread pool, without blocking the event loop."""
        from ._async import run_blocking  # asyncio is imported only by those who use it

        return await run_blocking(self.hash, password, salt=salt)

    async def verify_async(self, hash: str | bytes,  # noqa: A002
                           password: Buffer | str) -> Literal[True]:
        """:meth:`verify` on the shared hashing thread pool, without blocking the event loop.

        (``check_needs_rehash`` reads a string and does no hashing, so it has no async twin.)"""
        from ._async import run_blocking

        return await run_blocking(self.verify, hash, password)


if not TYPE_CHECKING:  # from_parameters' Self, for get_type_hints without importing typing
    Self = PasswordHasher

__all__ = ["PasswordHasher", "InvalidHashError"]
