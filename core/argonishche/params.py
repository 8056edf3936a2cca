"""Checking Argon2 parameters before any C code sees them.

Every refusal is a :class:`~argonishche.errors.ParameterError` (a ValueError) naming the parameter
and its allowed range; a wrong type is a :class:`~argonishche.errors.ParameterTypeError` (also a
TypeError).  The ranges are RFC 9106 section 3.1's.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass

from .errors import ParameterError, ParameterTypeError

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


def to_type(value) -> Type:
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


def integer(name: str, value, low: int, high: int) -> int:
    """*value* as an int in [low, high], or an error naming *name* and the range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterTypeError(f"{name} must be an int in {low}..{high}, "
                                 f"not {type(value).__name__}")
    if not low <= value <= high:
        raise ParameterError(f"{name} must be in {low}..{high}, got {value}")
    return value


def byte_buffer(name: str, value, *, min_len: int = 0, max_len: int = UINT32_MAX,
                allow_str: bool = False):
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
    def check(cls, *, type, version, time_cost, memory_cost, parallelism,
              hash_len) -> Argon2Params:
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

    def threads(self, requested=None) -> int:
        """C threads for the lanes: as asked (1..p), else one per lane up to the CPU count."""
        if requested is None:
            return min(self.parallelism, os.cpu_count() or 1)
        return integer("threads", requested, 1, self.parallelism)
