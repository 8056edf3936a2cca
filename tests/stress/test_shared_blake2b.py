"""The scenarios of ``tests/api/test_blake2b_threads.py`` (one ``blake2b`` object shared by
threads), longer and with more threads; ``ARGONISHCHE_STRESS_SCALE`` multiplies the rounds and
the time allowed.  Each runs in a fresh interpreter with a timeout, so a crash is a failure."""

from __future__ import annotations

import os

import pytest
from test_blake2b_threads import run_scenario

SCALE = int(os.environ.get("ARGONISHCHE_STRESS_SCALE", "1"))
TIMEOUT = 60 * SCALE  # several times what each takes, and below pytest-timeout at scale 10


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "one-shot"])
@pytest.mark.parametrize("threads", [3, 8])
def test_many_threads_updating_one_object(threads, keyed):
    run_scenario("identical_chunks", timeout=TIMEOUT, threads=threads, updates=2000,
                 rounds=25 * SCALE, keyed=keyed)


def test_many_rounds_of_concurrent_updates_in_some_serial_order():
    run_scenario("updates_in_some_order", timeout=TIMEOUT, rounds=5000 * SCALE)


@pytest.mark.parametrize("readers", [1, 3])
def test_many_readers_racing_update_see_whole_updates(readers):
    run_scenario("readers_see_whole_updates", timeout=TIMEOUT, readers=readers, updates=1000,
                 rounds=25 * SCALE)
