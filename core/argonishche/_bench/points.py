"""What the benchmark hashes: the Argon2 parameter points, and one password and salt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import _hash_call
from .._parameter_checks import Argon2Params, Limits

if TYPE_CHECKING:
    from typing import Any

PASSWORD = b"correct horse battery staple"
SALT = bytes(range(16))  # 16 bytes: the only salt length libsodium accepts
HASH_LEN = 32


class _PointLimits(Limits):
    """The default limits, whose messages say that bench has no flag to raise them."""

    def _how_to_raise(self, **settings: int) -> str:
        return ("not in bench, which times only points argonishche verifies by default "
                "(docs/limits.md)")


@dataclass(frozen=True)
class Point:
    """One Argon2 parameter point: type, t, m (KiB), p."""

    type: str
    time_cost: int
    memory_cost: int
    parallelism: int

    @classmethod
    def parse(cls, text: str) -> Point:
        """``"id,3,65536,4"`` -> Point: type, t, m (KiB), p, in the order in which the
        reference ``argon2`` program prints them."""
        try:
            kind, t, m, p = (part.strip() for part in text.split(","))
            point = cls(kind.lower().removeprefix("argon2"), int(t), int(m), int(p))
        except ValueError:
            raise ValueError(f"point {text!r}: expected TYPE,T,M_KIB,P such as id,3,65536,4") \
                from None
        try:
            point.check()
        except ValueError as exc:  # the library's ParameterError and LimitExceededError
            raise ValueError(f"point {text!r}: {exc}") from None
        return point

    def check(self) -> None:
        """Raise what ``argon2_hash`` raises for this point's costs, or LimitExceededError if
        the default limits would refuse its hashes (a point of 8 GiB or 65 passes): the API's
        own messages."""
        Argon2Params.check(type=self.type, version=0x13, time_cost=self.time_cost,
                           memory_cost=self.memory_cost, parallelism=self.parallelism,
                           hash_len=HASH_LEN)
        _PointLimits().check_hash(memory_cost=self.memory_cost, time_cost=self.time_cost,
                                  parallelism=self.parallelism, hash_len=HASH_LEN,
                                  salt_len=len(SALT))

    def __str__(self) -> str:
        return f"{self.type} t={self.time_cost} m={self.memory_cost} p={self.parallelism}"

    @property
    def blocks(self) -> int:
        """Blocks filled per hash: t passes over m' blocks."""
        return self.time_cost * self.memory_bytes // 1024

    @property
    def memory_bytes(self) -> int:
        """Bytes of work memory one hash fills: m' blocks of 1 KiB."""
        return _hash_call.memory_size(self.memory_cost, self.parallelism)

    @property
    def costs(self) -> dict[str, Any]:
        """The point as keyword arguments of ``argon2_hash``."""
        return dict(type=self.type, time_cost=self.time_cost, memory_cost=self.memory_cost,
                    parallelism=self.parallelism)

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.type, "time_cost": self.time_cost, "memory_kib": self.memory_cost,
                "parallelism": self.parallelism}


#: Argonishche's headline point, a server point, RFC 9106's low-memory profile, two more peers'.
DEFAULT_POINTS = (Point("d", 1, 2048, 1), Point("i", 3, 4096, 1), Point("id", 2, 19456, 1),
                  Point("id", 1, 32768, 1), Point("id", 3, 65536, 4))

#: The point of the allocator and batch measurements.
SERVER_POINT = Point("id", 1, 32768, 1)
