"""Checking Argon2 parameters before any C code sees them.

Every refusal is a :class:`~argonishche.exceptions.ParameterError` (a ValueError) naming the
parameter and its allowed range; a wrong type is a
:class:`~argonishche.exceptions.ParameterTypeError` (also a TypeError).  The ranges are RFC 9106
section 3.1's.
"""

from __future__ import annotations

import enum
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TypeAlias

from .exceptions import LimitExceededError, ParameterError, ParameterTypeError

#: What :func:`byte_buffer` returns: the bytes-like object C receives.
ByteView: TypeAlias = bytes | bytearray | memoryview
# What byte inputs (password, salt, secret, data, memory=...) accept: any C-contiguous buffer.
# Python 3.12 can say so (PEP 688: mmap, array.array and numpy arrays included); before it the
# annotation names the three built-in types, and the others still work at run time.
if sys.version_info >= (3, 12):
    from collections.abc import Buffer
else:
    Buffer: TypeAlias = ByteView
#: ``wipe=``: True (wipe in C), False (do not), or a callable given the work memory.
Wipe: TypeAlias = bool | Callable[[memoryview], object]

UINT32_MAX = 2**32 - 1
MAX_LANES = 2**24 - 1
MIN_SALT_LEN = 8
MIN_HASH_LEN = 4
VERSIONS = (0x10, 0x13)


class Type(enum.IntEnum):
    """Argon2 variants, numbered as RFC 9106's type code y (and argon2-cffi's ``Type``)."""

    D = 0
    I = 1  # noqa: E741 - the variant's name
    ID = 2

    @property
    def label(self) -> str:
        """``"d"``, ``"i"`` or ``"id"``: the name in ``$argon2id$...`` strings."""
        return self.name.lower()


#: ``type=``: ``Type.ID``, ``"id"``, ``"argon2id"`` (any case) or the RFC code 2.
TypeLike: TypeAlias = Type | str | int


def to_type(value: TypeLike) -> Type:
    """Accept ``Type.ID``, ``"id"``, ``"argon2id"`` (any case) or the RFC code 2."""
    if isinstance(value, Type):
        return value
    if isinstance(value, str):
        label = value.lower().removeprefix("argon2")
        for member in Type:
            if member.label == label:
                return member
        raise ParameterError(f"type must be 'd', 'i' or 'id' (or Type.D/I/ID), not {value!r}")
    if isinstance(value, int) and not isinstance(value, bool):
        if value in (0, 1, 2):
            return Type(value)
        raise ParameterError(f"type must be 0 (d), 1 (i) or 2 (id), not {value}")
    raise ParameterTypeError(f"type must be 'd', 'i', 'id' or argonishche.Type, not {value!r}")


def integer(name: str, value: object, low: int, high: int) -> int:
    """*value* as an int in [low, high], or an error naming *name* and the range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterTypeError(f"{name} must be an int in {low}..{high}, "
                                 f"not {type(value).__name__}")
    if not low <= value <= high:
        raise ParameterError(f"{name} must be in {low}..{high}, got {value}")
    return value


def byte_buffer(name: str, value: Buffer | str, *, min_len: int = 0, max_len: int = UINT32_MAX,
                allow_str: bool = False) -> ByteView:
    """A C-contiguous bytes-like object (no copy), or UTF-8 bytes of a str where allowed."""
    if type(value) is bytes and min_len <= len(value) <= max_len:
        return value  # the common case, without making a memoryview
    if isinstance(value, str):
        if not allow_str:
            raise ParameterTypeError(f"{name} must be bytes-like, not str (encode it first)")
        value = value.encode("utf-8")
    try:
        view = memoryview(value)
    except TypeError:
        raise ParameterTypeError(f"{name} must be bytes-like"
                                 f"{' or str' if allow_str else ''}, "
                                 f"not {type(value).__name__}") from None
    if not view.c_contiguous:
        raise ParameterError(f"{name} must be a C-contiguous buffer")
    if not min_len <= view.nbytes <= max_len:
        raise ParameterError(f"{name} must be {min_len}..{max_len} bytes long, "
                             f"got {view.nbytes}")
    return value if isinstance(value, (bytes, bytearray)) else view.cast("B")


@dataclass(frozen=True)
class Argon2Params:
    """One checked set of Argon2 cost parameters (the inputs that are not secrets)."""

    type: Type
    version: int
    time_cost: int
    memory_cost: int
    parallelism: int
    hash_len: int

    @classmethod
    def check(cls, *, type: TypeLike, version: int, time_cost: int, memory_cost: int,
              parallelism: int, hash_len: int) -> Argon2Params:
        parallelism = integer("parallelism", parallelism, 1, MAX_LANES)
        if integer("version", version, 0, UINT32_MAX) not in VERSIONS:
            raise ParameterError(f"version must be 0x10 (16) or 0x13 (19), got {version!r}")
        return cls(
            type=to_type(type),
            version=version,
            time_cost=integer("time_cost", time_cost, 1, UINT32_MAX),
            memory_cost=integer("memory_cost", memory_cost, 8 * parallelism, UINT32_MAX),
            parallelism=parallelism,
            hash_len=integer("hash_len", hash_len, MIN_HASH_LEN, UINT32_MAX),
        )

    def threads(self, requested: int | None = None) -> int:
        """C threads for the lanes: as asked (1..p), else one per lane up to the CPU count."""
        if requested is None:
            return min(self.parallelism, os.cpu_count() or 1)
        return integer("threads", requested, 1, self.parallelism)


#: What each limit bounds: (the field it limits, its unit in messages, its PHC spelling).
_LIMITED = {
    "max_memory_cost": ("memory_cost", " KiB", "m="),
    "max_time_cost": ("time_cost", "", "t="),
    "max_parallelism": ("parallelism", "", "p="),
    "max_hash_len": ("hash_len", " bytes", ""),
    "max_salt_len": ("salt_len", " bytes", ""),
}


@dataclass(frozen=True)
class Limits:
    """The most work an encoded hash may ask for before it is refused, unread and unrun.

    ``argon2_verify`` and ``PasswordHasher.verify`` / ``check_needs_rehash`` take their costs
    from the hash string, which may come from an attacker (a submitted hash, a tampered
    database row).  A hash over any of these limits raises
    :class:`~argonishche.LimitExceededError` (an ``InvalidHashError``) before any work memory is
    allocated.  ``None`` means no limit for that field; :meth:`none` disables all of them.
    The defaults are explained in README.md ("Limits and hostile input").
    """

    max_memory_cost: int | None = 4 * 1024 * 1024  # KiB: 4 GiB, twice RFC 9106's 2 GiB profile
    max_time_cost: int | None = 64
    max_parallelism: int | None = 64
    max_hash_len: int | None = 4096
    max_salt_len: int | None = 4096

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if value is not None:
                integer(f"Limits.{field.name}", value, 1, UINT32_MAX)

    @classmethod
    def none(cls) -> Limits:
        """No limits at all: every valid hash is run, whatever it costs (trusted input only)."""
        return cls(max_memory_cost=None, max_time_cost=None, max_parallelism=None,
                   max_hash_len=None, max_salt_len=None)

    def _first_exceeded(self, values: dict[str, int]) -> tuple[str, int, int] | None:
        """(limit name, value, limit) of the first field of *values* over its limit."""
        for name, (field, _, _) in _LIMITED.items():
            limit = getattr(self, name)
            if limit is not None and field in values and values[field] > limit:
                return name, values[field], limit
        return None

    def check_hash(self, *, memory_cost: int, time_cost: int, parallelism: int,
                   hash_len: int, salt_len: int) -> None:
        """Raise LimitExceededError if a hash with these values asks for too much."""
        exceeded = self._first_exceeded(dict(
            memory_cost=memory_cost, time_cost=time_cost, parallelism=parallelism,
            hash_len=hash_len, salt_len=salt_len))
        if exceeded is not None:
            name, value, limit = exceeded
            field, unit, spelling = _LIMITED[name]
            raise LimitExceededError(
                f"hash has {field} {value}{unit}{f' ({spelling}{value})' if spelling else ''}, "
                f"over the limit of "
                f"{limit}{unit} (Limits.{name}); refused before any work was done. If such "
                f"hashes are legitimate here, raise it: limits=argonishche.Limits({name}="
                f"{value}) for argon2_verify or PasswordHasher (Limits.none() disables every "
                f"limit)")

    def check_own(self, **values: int) -> None:
        """ParameterError if a hasher's own parameters are over its limits (it could not verify
        its own hashes)."""
        exceeded = self._first_exceeded(values)
        if exceeded is not None:
            name, value, limit = exceeded
            field, unit, _ = _LIMITED[name]
            raise ParameterError(
                f"{field}={value} is over this hasher's limit Limits.{name}={limit}{unit}, so it "
                f"could not verify its own hashes: pass limits=argonishche.Limits({name}="
                f"{value}) (or higher) as well")


def resolve_limits(limits: Limits | None) -> Limits:
    """*limits* itself, or the default Limits() for None; ParameterTypeError otherwise."""
    if limits is None:
        return DEFAULT_LIMITS
    if not isinstance(limits, Limits):
        raise ParameterTypeError(f"limits must be argonishche.Limits or None, not "
                                 f"{type(limits).__name__}")
    return limits


DEFAULT_LIMITS = Limits()
