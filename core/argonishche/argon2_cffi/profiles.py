"""argon2-cffi's named parameter sets, for ``PasswordHasher.from_parameters``.

Values from argon2-cffi 25.1's ``argon2.profiles`` and, for the two RFC ones, RFC 9106
section 4 ("Parameter Choice"): its first recommended option (t=1, 2 GiB, p=4) and its second
(t=3, 64 MiB, p=4), both Argon2id with a 128-bit salt and a 256-bit tag.
"""

from __future__ import annotations

from .._extract_parameters import Parameters
from .._parameter_checks import Type

RFC_9106_HIGH_MEMORY = Parameters(type=Type.ID, version=0x13, salt_len=16, hash_len=32,
                                  time_cost=1, memory_cost=2 * 1024 * 1024, parallelism=4)
RFC_9106_LOW_MEMORY = Parameters(type=Type.ID, version=0x13, salt_len=16, hash_len=32,
                                 time_cost=3, memory_cost=64 * 1024, parallelism=4)
#: argon2-cffi's defaults before its 21.2.0.
PRE_21_2 = Parameters(type=Type.ID, version=0x13, salt_len=16, hash_len=16, time_cost=2,
                      memory_cost=100 * 1024, parallelism=8)
#: The least work Argon2 allows: for tests only.
CHEAPEST = Parameters(type=Type.ID, version=0x13, salt_len=8, hash_len=4, time_cost=1,
                      memory_cost=8, parallelism=1)


def get_default_parameters() -> Parameters:
    """The parameters ``PasswordHasher()`` uses: RFC_9106_LOW_MEMORY.  (argon2-cffi lowers
    parallelism to 1 on WebAssembly; argonishche has no WebAssembly build.)"""
    return RFC_9106_LOW_MEMORY


__all__ = ["CHEAPEST", "PRE_21_2", "RFC_9106_HIGH_MEMORY", "RFC_9106_LOW_MEMORY",
           "get_default_parameters"]
