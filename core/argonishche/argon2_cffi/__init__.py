"""argon2-cffi's API on argonishche's kernels: change ``from argon2 import ...`` to
``from argonishche.argon2_cffi import ...`` (or ``import argonishche.argon2_cffi as argon2``).

The names argon2-cffi 25.1 exports, with its defaults and exception hierarchy.
``PasswordHasher`` is a subclass of argonishche's that answers work memory it cannot allocate
as argon2-cffi does (``VerificationError`` / ``HashingError("Memory allocation error")``), where
argonishche's own raises ``ArgonishcheMemoryError``; ``low_level`` answers so too.  Where
argonishche is deliberately stricter (invalid parameters refused when a hasher is built, limits
on the hashes ``verify`` reads, ...), docs/migration/argon2-cffi.md's table lists each
difference.
Its deprecated ``hash_password`` / ``hash_password_raw`` / ``verify_password`` are not provided.
Code that imports ``argon2`` by name and cannot be changed: :func:`install_as_argon2`.
"""

from __future__ import annotations

from .. import _extract_parameters
from .._parameter_checks import Type
from .._password_hasher import (
    DEFAULT_HASH_LENGTH,
    DEFAULT_MEMORY_COST,
    DEFAULT_PARALLELISM,
    DEFAULT_RANDOM_SALT_LENGTH,
    DEFAULT_TIME_COST,
)
from . import exceptions, low_level, profiles
from ._install import install_as_argon2
from ._password_hasher import PasswordHasher

Parameters = _extract_parameters.Parameters
extract_parameters = _extract_parameters.extract_parameters

__all__ = [
    "DEFAULT_HASH_LENGTH", "DEFAULT_MEMORY_COST", "DEFAULT_PARALLELISM",
    "DEFAULT_RANDOM_SALT_LENGTH", "DEFAULT_TIME_COST", "Parameters", "PasswordHasher", "Type",
    "exceptions", "extract_parameters", "install_as_argon2", "low_level", "profiles",
]
