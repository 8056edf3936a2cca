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
from ._record import fields, record
from .exceptions import (
    LimitExceededError,
    ParameterError,
    ParameterTypeError,
    UnsupportedParametersError,
    echo,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple, TypeAlias
else:
    from ._named_tuple import NamedTuple

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
        raise ParameterError(f"type must be 'd', 'i' or 'id' (or Type.D/I/ID), not "
                             f"{echo(value)}")
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


@record
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
            return 1 if self.parallelism == 1 else min(self.parallelism, online_cpus())
        return integer("threads", requested, 1, self.parallelism)


_online_cpus: int | None = None


def online_cpus() -> int:
    """``os.cpu_count()``, read once: glibc opens and reads /sys/devices/system/cpu/online on
    every call, about 6 us, a sixth of an 8 KiB hash's time.  A CPU brought online later is not
    seen: that costs at most a thread that could have run a lane, never a wrong tag."""
    global _online_cpus
    if _online_cpus is None:
        _online_cpus = os.cpu_count() or 1
    return _online_cpus


class _Bound(NamedTuple):
    """What one limit bounds, for its messages."""

    value: str  # the key of the value it bounds, in check_hash's and check_own's arguments
    label: str  # that value's name in messages
    unit: str
    spelling: str  # how the hash string spells it, formatted with the values ("" for none)


_LIMITED = {
    "max_memory_cost": _Bound("memory_cost", "memory_cost", " KiB", "m={memory_cost}"),
    "max_time_cost": _Bound("time_cost", "time_cost", "", "t={time_cost}"),
    "max_parallelism": _Bound("parallelism", "parallelism", "", "p={parallelism}"),
    "max_work": _Bound("work", "time_cost x memory_cost", " KiB-passes",
                       "t={time_cost} x m={memory_cost}"),
    "max_hash_len": _Bound("hash_len", "hash_len", " bytes", ""),
    "max_salt_len": _Bound("salt_len", "salt_len", " bytes", ""),
}
#: The largest value each limit may be set to (any more is no limit at all).
LIMIT_MAX = {"max_work": UINT32_MAX * UINT32_MAX}

# Limits.max_encoded_len, the longest PHC string within max_salt_len and max_hash_len:
#   "$argon2id$v=$m=,t=,p=$$"                  23 characters of frame (argon2id: the longest type)
#   + 4 numbers (v, m, t, p) of 10 digits      40: the decoder reads no number longer than
#                                                  UINT32_MAX, whatever the cost limits
#   + salt and tag in unpadded base64          ceil(4n / 3) characters each for n bytes
#   + _ENCODED_LEN_MARGIN                      1024, so that a string a little longer than that
#                                                  (a stray newline, a padded field) still gets
#                                                  the decoder's own message
# The default limits (4096-byte salt and tag): 23 + 40 + 5462 + 5462 + 1024 = 12011 characters.
_PHC_FRAME_LEN = len("$argon2id$v=$m=,t=,p=$$")
_PHC_NUMBER_LEN = len(str(UINT32_MAX))
_ENCODED_LEN_MARGIN = 1024


def _base64_len(size: int) -> int:
    """Characters of *size* bytes in unpadded base64."""
    return -(-4 * size // 3)


@record
class Limits:
    """The most work an encoded hash may ask for before it is refused, unread and unrun.

    ``argon2_verify`` and ``PasswordHasher.verify`` / ``check_needs_rehash`` take their costs
    from the hash string, which may come from an attacker (a submitted hash, a tampered
    database row).  A hash over any of these limits raises
    :class:`~argonishche.LimitExceededError` (an ``InvalidHashError``) before any work memory is
    allocated, and a string longer than :attr:`max_encoded_len` before it is even parsed.
    ``None`` means no limit for that field; :meth:`none` disables all of them.
    The defaults are explained in docs/limits.md.
    """

    max_memory_cost: int | None = 4 * 1024 * 1024  # KiB: 4 GiB, twice RFC 9106's 2 GiB profile
    max_time_cost: int | None = 64
    max_parallelism: int | None = 64
    max_hash_len: int | None = 4096
    max_salt_len: int | None = 4096
    # time_cost x memory_cost, in KiB-passes: twice the most any published profile asks for,
    # libsodium's SENSITIVE presets (Argon2id t=4 x m=1 GiB and Argon2i t=8 x 512 MiB, both
    # 4194304).  RFC 9106's first profile is 2097152 (t=1 x 2 GiB), its second and argon2-cffi
    # 25.1's PasswordHasher() 196608 (t=3 x 64 MiB), Django's Argon2PasswordHasher 204800
    # (t=2 x 100 MiB), OWASP's five 35840..47104 (m=47104 t=1 ... m=7168 t=5).  Without it the
    # other limits admit t=64 x m=4 GiB = 268435456: minutes of work for one string.
    max_work: int | None = 8 * 1024 * 1024

    def __post_init__(self) -> None:
        for name in fields(self):
            value = getattr(self, name)
            if value is not None:
                integer(f"Limits.{name}", value, 1, LIMIT_MAX.get(name, UINT32_MAX))

    @classmethod
    def none(cls) -> Limits:
        """No limits at all: every valid hash is run, whatever it costs (trusted input only)."""
        return cls(**dict.fromkeys(fields(cls)))

    @property
    def max_encoded_len(self) -> int | None:
        """The longest encoded hash read at all: the longest PHC string within
        ``max_salt_len`` and ``max_hash_len``, plus a margin (None if either is None)."""
        if self.max_salt_len is None or self.max_hash_len is None:
            return None
        return (_PHC_FRAME_LEN + 4 * _PHC_NUMBER_LEN + _base64_len(self.max_salt_len)
                + _base64_len(self.max_hash_len) + _ENCODED_LEN_MARGIN)

    # How messages name a limit and how to raise it; the command line's verify overrides both
    # to name its flags.

    def _spell(self, name: str) -> str:
        return f"Limits.{name}"

    def _how_to_raise(self, **settings: int) -> str:
        arguments = ", ".join(f"{name}={value}" for name, value in settings.items())
        return (f"limits=argonishche.Limits({arguments}) for argon2_verify or PasswordHasher "
                f"(Limits.none() disables every limit)")

    def _exceeded(self, values: dict[str, int]) -> dict[str, int]:
        """{limit name: value} of every value in *values* over its limit, in _LIMITED's order."""
        if "time_cost" in values and "memory_cost" in values:
            values = dict(values, work=values["time_cost"] * values["memory_cost"])
        return {name: values[bound.value] for name, bound in _LIMITED.items()
                if getattr(self, name) is not None and bound.value in values
                and values[bound.value] > getattr(self, name)}

    def check_encoded_len(self, encoded: object) -> None:
        """Raise LimitExceededError if *encoded* (str or bytes) is longer than
        :attr:`max_encoded_len`: called before the string is parsed, so that a huge one costs
        nothing (its length is all that is looked at)."""
        limit = self.max_encoded_len
        if limit is None or not isinstance(encoded, (str, bytes)) or len(encoded) <= limit:
            return
        size = len(encoded) * 3 // 4  # what a base64 field of the whole length would hold
        raise LimitExceededError(
            f"hash has {len(encoded)} characters, over the limit of {limit} "
            f"({self._spell('max_encoded_len')}, from {self._spell('max_salt_len')} and "
            f"{self._spell('max_hash_len')}); refused before it was parsed. If such hashes are "
            f"legitimate here, raise those: "
            f"{self._how_to_raise(max_salt_len=size, max_hash_len=size)}")

    def check_hash(self, *, memory_cost: int, time_cost: int, parallelism: int,
                   hash_len: int, salt_len: int) -> None:
        """Raise LimitExceededError if a hash with these values asks for too much: the message
        names the first limit exceeded, and how to raise every one that is."""
        values = dict(memory_cost=memory_cost, time_cost=time_cost, parallelism=parallelism,
                      hash_len=hash_len, salt_len=salt_len)
        exceeded = self._exceeded(values)
        if not exceeded:
            return
        overs = []
        for name, value in exceeded.items():
            bound = _LIMITED[name]
            spelling = bound.spelling.format(**values)
            overs.append(f"{bound.label} {value}{bound.unit}"
                         f"{f' ({spelling})' if spelling else ''}, over the limit of "
                         f"{getattr(self, name)}{bound.unit} ({self._spell(name)})")
        raise LimitExceededError(
            f"hash has {', and '.join(overs)}; refused before any work was done. If such "
            f"hashes are legitimate here, raise {'it' if len(exceeded) == 1 else 'them'}: "
            f"{self._how_to_raise(**exceeded)}")

    def check_own(self, **values: int) -> None:
        """UnsupportedParametersError (a ParameterError) if a hasher's own parameters are over its
        limits (it could not verify its own hashes)."""
        exceeded = self._exceeded(values)
        if not exceeded:
            return
        overs = [f"{_LIMITED[name].label}={value} is over this hasher's limit "
                 f"Limits.{name}={getattr(self, name)}{_LIMITED[name].unit}"
                 for name, value in exceeded.items()]
        arguments = ", ".join(f"{name}={value}" for name, value in exceeded.items())
        raise UnsupportedParametersError(
            f"{', and '.join(overs)}, so it could not verify its own hashes: pass "
            f"limits=argonishche.Limits({arguments}) (or higher) as well")


def resolve_limits(limits: Limits | None) -> Limits:
    """*limits* itself, or the default Limits() for None; ParameterTypeError otherwise."""
    if limits is None:
        return DEFAULT_LIMITS
    if not isinstance(limits, Limits):
        raise ParameterTypeError(f"limits must be argonishche.Limits or None, not "
                                 f"{type(limits).__name__}")
    return limits


DEFAULT_LIMITS = Limits()
