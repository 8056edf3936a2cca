"""A server whose work-memory budget is full: every API and adapter lets MemoryBudgetTimeout
through, so that a busy server never reports a right password as wrong; a hash larger than the
whole budget is answered as each adapter answers memory it cannot get (Django's in
test_django.py)."""

from __future__ import annotations

import importlib.util

import argonishche
import pytest
from argonishche import MemoryBudgetTimeout, argon2_hash_encoded
from argonishche.argon2_cffi import PasswordHasher as CffiPasswordHasher
from argonishche.argon2_cffi.exceptions import VerificationError as CffiVerificationError
from support import PASSWORD, SALT

COSTS = dict(time_cost=1, memory_cost=1024, parallelism=1)
# Tests take `stored` before `busy`: pytest sets fixtures of one scope up in the order a test
# asks for them, and a full budget would refuse the hash that makes `stored`.


@pytest.fixture
def stored():
    return argon2_hash_encoded(PASSWORD, SALT, **COSTS)


def test_the_own_api_raises_memory_budget_timeout_when_busy(stored, busy):
    with pytest.raises(MemoryBudgetTimeout):
        argonishche.argon2_verify(stored, PASSWORD)
    with pytest.raises(MemoryBudgetTimeout):
        argonishche.PasswordHasher(**COSTS).verify(stored, PASSWORD)
    with pytest.raises(MemoryBudgetTimeout):
        argonishche.hash_many([PASSWORD, b"other"], **COSTS)


def test_the_argon2_cffi_shim_lets_it_through_not_as_a_verification_error(stored, busy):
    with pytest.raises(MemoryBudgetTimeout) as caught:
        CffiPasswordHasher(**COSTS).verify(stored, PASSWORD)
    assert not isinstance(caught.value, CffiVerificationError)


def test_the_argon2_cffi_shim_answers_a_hash_over_the_budget_as_memory_error(budget, stored):
    budget(1)
    tampered = stored.replace("m=1024,", "m=4096,")
    with pytest.raises(CffiVerificationError, match="Memory allocation error") as caught:
        CffiPasswordHasher(**COSTS).verify(tampered, PASSWORD)
    assert isinstance(caught.value.__cause__, argonishche.MemoryBudgetError)


pwdlib_installed = pytest.mark.skipif(importlib.util.find_spec("pwdlib") is None,
                                      reason="pwdlib is not installed")


@pwdlib_installed
def test_the_pwdlib_hasher_raises_when_busy_and_refuses_over_the_budget(budget, stored):
    from argonishche.contrib.pwdlib import Argon2Hasher

    hasher = Argon2Hasher(**COSTS)
    budget(16, wait_seconds=0)
    held = argonishche._work_memory.reserve(16 * 2**20)
    try:
        with pytest.raises(MemoryBudgetTimeout):
            hasher.verify(PASSWORD, stored)
    finally:
        held.close()
    budget(1)
    over_the_budget = stored.replace("m=1024,", "m=4096,")
    # Never checkable here: pwdlib 0.4's HashVerificationError, pwdlib 0.3's False.
    import pwdlib.exceptions

    if hasattr(pwdlib.exceptions, "HashVerificationError"):
        with pytest.raises(pwdlib.exceptions.HashVerificationError):
            hasher.verify(PASSWORD, over_the_budget)
    else:
        assert hasher.verify(PASSWORD, over_the_budget) is False


@pytest.mark.skipif(importlib.util.find_spec("passlib") is None,
                    reason="passlib (libpass) is not installed")
def test_the_passlib_handler_raises_when_busy(stored, busy):
    from argonishche.contrib.passlib import argon2 as handler

    with pytest.raises(MemoryBudgetTimeout):
        handler.verify(PASSWORD, stored)
