"""argonishche: Argon2 (i, d, id) and BLAKE2b with C kernels chosen at run time from plugins.

Importing is cheap: backends are discovered, CPU-checked and self-tested on first use.
See ``python -m argonishche info`` for what was found and chosen on this machine.
"""

from __future__ import annotations

from . import registry as _registry
from .argon2 import argon2_hash, argon2_hash_encoded, argon2_verify
from .blake2 import blake2b
from .driver import memory_size as _memory_size
from .errors import (
    ArgonishcheError,
    ArgonishcheMemoryError,
    BackendError,
    HashingError,
    InvalidHashError,
    ParameterError,
    ParameterTypeError,
    VerificationError,
    VerifyMismatchError,
)
from .hookspecs import Backend, hookimpl
from .params import Argon2Params, Type
from .password_hasher import PasswordHasher
from .registry import BackendInfo

__version__ = "0.1.0"


def backends() -> list[BackendInfo]:
    """One record per registered backend (and per plugin that failed), best first."""
    return _registry.get().report()


def selected_backend(algorithm: str = "argon2") -> str:
    """Name of the backend hashing *algorithm* (``"argon2"`` or ``"blake2b"``)."""
    return _registry.get().selected_name(algorithm)


def calibrate() -> dict[str, dict[str, float]]:
    """Time the usable backends briefly and select the fastest per algorithm (from now on).

    Returns ``{algorithm: {backend: microseconds}}``; ``ARGONISHCHE_SELECT=measure`` does this
    at start-up.  A backend forced with ``ARGONISHCHE_BACKEND`` stays selected.
    """
    return _registry.get().calibrate()


def memory_size(memory_cost: int, parallelism: int = 1) -> int:
    """Bytes of Argon2 work memory for these costs (m rounded down to a multiple of 4p KiB)."""
    params = Argon2Params.check(type="id", version=0x13, time_cost=1, memory_cost=memory_cost,
                                parallelism=parallelism, hash_len=32)
    return _memory_size(params.memory_cost, params.parallelism)


__all__ = [
    "Argon2Params", "ArgonishcheError", "ArgonishcheMemoryError", "Backend", "BackendError",
    "BackendInfo", "HashingError", "InvalidHashError", "ParameterError", "ParameterTypeError",
    "PasswordHasher", "Type", "VerificationError", "VerifyMismatchError", "argon2_hash",
    "argon2_hash_encoded", "argon2_verify", "backends", "blake2b", "calibrate", "hookimpl",
    "memory_size", "selected_backend",
]
