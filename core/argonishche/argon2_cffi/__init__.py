"""argon2-cffi's API on argonishche's kernels: change ``from argon2 import ...`` to
``from argonishche.argon2_cffi import ...`` (or ``import argonishche.argon2_cffi as argon2``).

The names argon2-cffi 25.1 exports, with its defaults and exception hierarchy.
``PasswordHasher`` is a subclass of argonishche's that answers work memory it cannot allocate
as argon2-cffi does (``VerificationError`` / ``HashingError("Memory allocation error")``), where
argonishche's own raises ``ArgonishcheMemoryError``; ``low_level`` answers so too.  Where
argonishche is deliberately stricter (invalid parameters refused when a hasher is built, limits
on the hashes ``verify`` reads, ...), the documentation's migration guide,
:doc:`Migrating from argon2-cffi </migration/argon2-cffi>`, lists each difference.
Its deprecated ``hash_password`` / ``hash_password_raw`` / ``verify_password`` are not provided.
"""

from __future__ import annotations

from .. import _hash_parameters
from . import exceptions, low_level, profiles
from .._password_hasher import (
    DEFAULT_HASH_LENGTH,
    DEFAULT_MEMORY_COST,
    DEFAULT_PARALLELISM,
    DEFAULT_RANDOM_SALT_LENGTH,
    DEFAULT_TIME_COST,
)
from ._password_hasher import PasswordHasher
from .._params import Type

Parameters = _hash_parameters.Parameters
extract_parameters = _hash_parameters.extract_parameters

__all__ = [
    "DEFAULT_HASH_LENGTH", "DEFAULT_MEMORY_COST", "DEFAULT_PARALLELISM",
    "DEFAULT_RANDOM_SALT_LENGTH", "DEFAULT_TIME_COST", "Parameters", "PasswordHasher", "Type",
    "exceptions", "extract_parameters", "low_level", "profiles",
]
