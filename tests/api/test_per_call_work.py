"""What a call does not do again once it has been done (issue 34, the Python boundary).

Each of these was per-call work that cost a small hash or a ``check_needs_rehash`` a measurable
share of its time: importlib's lookup of a module imported at first use (about 1 us of a
``check_needs_rehash``'s 5), glibc's read of /sys/devices/system/cpu/online behind
``os.cpu_count()`` (about 6 us of a 30-us hash).  The tests make the second call impossible to
do the slow way and check that it still answers.
"""

from __future__ import annotations

import importlib
import sys

import pytest

import argonishche
from argonishche import _lazy_import, _parameter_checks
from argonishche._parameter_checks import Argon2Params

COSTS = {"time_cost": 1, "memory_cost": 8, "parallelism": 1}


def refuse_import(*args, **kwargs):
    raise AssertionError(f"importlib.import_module{args} called again")


def test_check_needs_rehash_finds_its_module_without_importlib(monkeypatch):
    hasher = argonishche.PasswordHasher(**COSTS)
    own = hasher.hash("pw")
    other = argonishche.PasswordHasher(**dict(COSTS, time_cost=2)).hash("pw")
    assert hasher.check_needs_rehash(other)  # the first call imports _extract_parameters
    monkeypatch.setattr(importlib, "import_module", refuse_import)
    assert not hasher.check_needs_rehash(own)
    assert hasher.check_needs_rehash(other)


def test_a_module_dropped_from_sys_modules_is_imported_again(monkeypatch):
    name = "argonishche._extract_parameters"
    first = _lazy_import.module("._extract_parameters")
    assert sys.modules[name] is first
    # Each put back when the test ends: the import below replaces all three, and a second
    # _extract_parameters (with its own Parameters class) must not outlive the test.
    monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(argonishche, "_extract_parameters", first)
    monkeypatch.setitem(_lazy_import._imported, "._extract_parameters", first)
    again = _lazy_import.module("._extract_parameters")
    assert again is not first, "a module no longer in sys.modules was handed out"
    assert sys.modules[name] is again


@pytest.fixture
def counted_cpu_count(monkeypatch):
    """os.cpu_count answering 3 and counting its calls, with online_cpus' memory emptied."""
    calls = []

    def cpu_count():
        calls.append(1)
        return 3

    monkeypatch.setattr(_parameter_checks, "_online_cpus", None, raising=False)
    monkeypatch.setattr(_parameter_checks.os, "cpu_count", cpu_count)
    return calls


def params(parallelism: int) -> Argon2Params:
    return Argon2Params.check(type="id", version=0x13, time_cost=1, memory_cost=64,
                              parallelism=parallelism, hash_len=32)


def test_lane_threads_read_the_cpu_count_once(counted_cpu_count):
    assert params(4).threads() == 3
    assert params(8).threads() == 3
    assert params(2).threads() == 2
    assert len(counted_cpu_count) == 1


def test_one_lane_is_one_thread_without_asking_for_the_cpu_count(counted_cpu_count):
    assert params(1).threads() == 1
    assert counted_cpu_count == []


def test_threads_asked_for_are_still_checked(counted_cpu_count):
    assert params(4).threads(2) == 2
    with pytest.raises(argonishche.ParameterError):
        params(4).threads(5)
    assert counted_cpu_count == []
