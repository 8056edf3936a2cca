"""argonishche: Argon2 (i, d, id) and BLAKE2b with C kernels chosen at run time from plugins.

Importing is cheap: backends are discovered, CPU-checked and self-tested on first use, and the
password hasher, batch and BLAKE2b modules are imported when first used.
See ``python -m argonishche info`` for what was found and chosen on this machine.
"""

from __future__ import annotations

# What every hash needs is imported now, in the importing thread; see _LAZY for the rest.
from . import _lazy_import, _registry
from ._argon2 import argon2_hash, argon2_hash_encoded, argon2_verify
from ._core import lib as _lib
from ._discovery import PluginInfo
from ._hash_call import ALIGNMENT_SLACK as _ALIGNMENT_SLACK
from ._hash_call import memory_size as _memory_size
from ._parameter_checks import Argon2Params, Limits, Type
from ._registry import BackendInfo
from ._version import __version__ as __version__
from ._work_memory import MemoryBudget, memory_budget, set_memory_budget
from .exceptions import (
    ArgonishcheError,
    ArgonishcheMemoryError,
    BackendError,
    HashingError,
    InvalidHashError,
    LimitExceededError,
    MemoryBudgetError,
    MemoryBudgetTimeout,
    ParameterError,
    ParameterOverflowError,
    ParameterTypeError,
    SettingError,
    UnsupportedParametersError,
    VerificationError,
    VerifyMismatchError,
)
from .hookspecs import Allocator, Backend, hookimpl

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:  # the lazy names, for type checkers and IDEs
    from ._batch import hash_many
    from ._blake2 import blake2b
    from ._password_hasher import PasswordHasher

#: The kernel ABI this argonishche speaks (include/argonishche_kernel.h): a backend module built
#: for another is refused when it loads.
KERNEL_ABI: int = _lib.ARGONISHCHE_KERNEL_ABI

#: Public names imported on first use (PEP 562), and their modules: a process that only hashes
#: with argon2_hash does not pay for them.
_LAZY = {"PasswordHasher": "._password_hasher", "hash_many": "._batch", "blake2b": "._blake2"}

def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(_lazy_import.module(_LAZY[name]), name)
        globals()[name] = value  # later lookups find it directly
        return value
    try:  # a submodule not imported yet, as `argonishche._thread_pool`
        return _lazy_import.module(f".{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def backends() -> list[BackendInfo]:
    """One record per registered backend, best first: usable or not, with its state and the
    reason (a backend two distributions register appears twice, both ``name-conflict``).  A
    plugin that failed before registering any backend is in :func:`plugins`, not here."""
    return _registry.get().report()


def plugins() -> list[PluginInfo]:
    """One record per plugin: every ``argonishche`` entry point (the built-in backends' too)
    and the built-in allocators, with what became of it (``loaded``, ``blocked``, ``failed``
    or ``deferred``) and why."""
    return list(_registry.get().plugins)


def selected_backend(algorithm: str = "argon2") -> str:
    """Name of the backend hashing *algorithm* (``"argon2"`` or ``"blake2b"``)."""
    return _registry.get().selected_name(algorithm)


def calibrate() -> dict[str, dict[str, float]]:
    """Measure the usable backends afresh, select the fastest per algorithm (from now on) and
    remember the choice for this CPU, as ``ARGONISHCHE_SELECT=measure`` does at start-up.

    Returns ``{algorithm: {backend: nanoseconds per KiB}}``.  A backend forced with
    ``ARGONISHCHE_BACKEND`` stays selected.  ``argonishche tune`` measures longer.
    """
    return _registry.get().calibrate()


def trim_memory() -> int:
    """Give the work memory kept idle for the next hashes back to the OS now (wiped first where
    its last hash opted out of the wipe), and ask plugin allocators to do the same; the number of
    bytes given back.  Idle memory goes back by itself after ``ARGONISHCHE_MEMORY_IDLE_SECONDS``,
    and at interpreter exit."""
    reg = _registry.get()
    return _lib.argonishche_memory_trim() + sum(
        allocator.trim() for allocator, _ in reg.allocators.values())


def memory_size(memory_cost: int, parallelism: int = 1) -> int:
    """Bytes a buffer passed as ``memory=`` needs for these costs: m rounded down to a multiple
    of 4p KiB, plus 63 bytes so that any buffer, aligned or not, holds 64-byte aligned blocks."""
    params = Argon2Params.check(type="id", version=0x13, time_cost=1, memory_cost=memory_cost,
                                parallelism=parallelism, hash_len=32)
    return _memory_size(params.memory_cost, params.parallelism) + _ALIGNMENT_SLACK


__all__ = [
    "Argon2Params", "ArgonishcheError", "ArgonishcheMemoryError", "Backend", "BackendError",
    "BackendInfo", "HashingError", "InvalidHashError", "LimitExceededError", "Limits",
    "MemoryBudget", "MemoryBudgetError", "MemoryBudgetTimeout", "ParameterError",
    "ParameterOverflowError", "ParameterTypeError", "PluginInfo", "SettingError",
    "UnsupportedParametersError", "PasswordHasher", "Type", "VerificationError",
    "VerifyMismatchError", "argon2_hash", "argon2_hash_encoded", "argon2_verify", "backends",
    "blake2b", "calibrate", "hash_many", "hookimpl", "KERNEL_ABI", "memory_budget",
    "memory_size", "plugins", "selected_backend", "set_memory_budget", "trim_memory",
    "Allocator",  # noqa: RUF022
]
