"""The Django settings tests/api/test_django.py configures: what password hashing reads, and hashers
with small costs (64 KiB) so that every login the tests make takes milliseconds.

The hashers live here because ``PASSWORD_HASHERS`` names them by import path.
"""

from __future__ import annotations

from argonishche.contrib.django import Argon2PasswordHasher
from django.contrib.auth.hashers import Argon2PasswordHasher as StockArgon2PasswordHasher

SMALL_COSTS = dict(time_cost=2, memory_cost=64, parallelism=2)


class SmallArgon2PasswordHasher(Argon2PasswordHasher):
    """argonishche's hasher at the tests' current costs."""

    time_cost, memory_cost, parallelism = SMALL_COSTS.values()


class SmallStockArgon2PasswordHasher(StockArgon2PasswordHasher):
    """Django's own (argon2-cffi) hasher at the same costs."""

    time_cost, memory_cost, parallelism = SMALL_COSTS.values()


SECRET_KEY = "argonishche tests: no secret"
INSTALLED_APPS: list[str] = []
USE_I18N = False
PASSWORD_HASHERS = [
    "django_settings.SmallArgon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
