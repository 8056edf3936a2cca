"""The work-memory budget tests' helpers: a plugin allocator that holds a hash's share of the
budget until the test opens its gate, and the costs those tests hash with."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from argonishche import argon2_hash
from support import PASSWORD, SALT, Pool

MIB = 1024 * 1024
#: One hash that holds 8 MiB of the budget for a few milliseconds.
EIGHT = dict(time_cost=1, memory_cost=8192, parallelism=1)
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc and sets RLIMIT_AS (Linux)")


def wait_until(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


class Gate(Pool):
    """A plugin allocator whose acquire() waits for a gate: the budget share its hash reserved
    (before acquire) stays held until the test opens the gate."""

    def __init__(self):
        super().__init__(name="gate")
        self.entered, self.gate = threading.Event(), threading.Event()

    def acquire(self, size):
        self.entered.set()
        assert self.gate.wait(60)
        return super().acquire(size)


def hold_budget(gate, **costs):
    """A thread whose hash holds its share of the budget until gate.gate is set."""
    thread = threading.Thread(target=argon2_hash, args=(PASSWORD, SALT),
                              kwargs={"allocator": "gate", **costs})
    thread.start()
    assert gate.entered.wait(60)
    return thread
