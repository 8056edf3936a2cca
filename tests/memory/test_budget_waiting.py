"""Waiting for the work-memory budget (issue 30): bounded in time, interruptible, given up when
abandoned, invisible to an event loop; and a forked child starts with no hash running.
"""

from __future__ import annotations

import asyncio
import os
import time

import argonishche
import pytest
from argonishche import MemoryBudgetTimeout, _work_memory, argon2_hash
from argonishche._core import ffi, lib
from budget_gate import EIGHT, MIB, hold_budget
from support import PASSWORD, SALT

# ---- waiting: bounded, interruptible, invisible to an event loop -------------------------------


def test_a_hash_that_waits_too_long_raises_memory_budget_timeout(budget, gate):
    budget(12, wait_seconds=0.3)
    holder = hold_budget(gate, **EIGHT)
    try:
        start = time.monotonic()
        with pytest.raises(MemoryBudgetTimeout) as caught:
            argon2_hash(PASSWORD, SALT, **EIGHT)
        waited = time.monotonic() - start
        assert 0.25 <= waited < 5, waited
        assert "waited 0.3 s for 8 MiB" in str(caught.value) and "budget of 12 MiB" in str(
            caught.value)
        assert isinstance(caught.value, TimeoutError)
        assert not isinstance(caught.value, (MemoryError, argonishche.VerificationError))
        assert argonishche.memory_budget().waiting == 0  # its place was given up
    finally:
        gate.gate.set()
        holder.join(60)


def test_a_wait_of_zero_fails_at_once_when_the_budget_is_full(budget, gate):
    budget(12, wait_seconds=0)
    holder = hold_budget(gate, **EIGHT)
    try:
        with pytest.raises(MemoryBudgetTimeout):
            argon2_hash(PASSWORD, SALT, **EIGHT)
        assert argonishche.memory_budget().waiting == 0  # a try that is never queued
    finally:
        gate.gate.set()
        holder.join(60)
    assert argon2_hash(PASSWORD, SALT, **EIGHT)  # room again


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs setitimer")
def test_a_signal_handler_interrupts_a_waiting_hash(budget, gate):
    import signal

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted

    budget(12, wait_seconds=60)
    holder = hold_budget(gate, **EIGHT)
    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        start = time.monotonic()
        with pytest.raises(Interrupted):
            argon2_hash(PASSWORD, SALT, **EIGHT)
        assert time.monotonic() - start < 2.0  # within a slice, not after the 60 s wait
        assert argonishche.memory_budget().waiting == 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        gate.gate.set()
        holder.join(60)


def test_an_abandoned_place_in_the_queue_does_not_hold_up_the_others(budget):
    """A ticket whose owner never comes back (its frame kept alive, never closed) is dropped
    once it has not been seen for a while, and the hashes behind it run."""
    budget(12, wait_seconds=30)
    holder = _work_memory.reserve(12 * MIB)  # the whole budget
    ticket = ffi.new("argonishche_memory_ticket *")  # a wait of 1 ms: it takes a place
    assert lib.argonishche_memory_reserve(ticket, 8 * MIB, 1) == lib.ARGONISHCHE_WAIT_MEMORY
    assert ticket.queued and argonishche.memory_budget().waiting == 1
    holder.close()  # room now, but the abandoned ticket is first in line
    start = time.monotonic()
    try:
        argon2_hash(PASSWORD, SALT, **EIGHT)
        assert 3 < time.monotonic() - start < 20
    finally:
        lib.argonishche_memory_ticket_close(ticket)


def test_hash_async_waits_for_room_without_blocking_the_event_loop(budget, gate):
    from argonishche._async import run_blocking

    budget(12, wait_seconds=60)
    holder = hold_budget(gate, **EIGHT)
    ticks = []

    async def main():
        waiting = asyncio.ensure_future(run_blocking(argon2_hash, PASSWORD, SALT, **EIGHT))
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks.append(time.monotonic())
        assert not waiting.done()
        gate.gate.set()
        return await waiting

    try:
        assert asyncio.run(main()) == argon2_hash(PASSWORD, SALT, allocator="system", **EIGHT)
    finally:
        gate.gate.set()
        holder.join(60)
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert max(gaps) < 0.5, gaps


# ---- fork ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_forked_child_starts_with_no_hash_running_and_can_hash(budget, gate):
    budget(12, wait_seconds=60)
    holder = hold_budget(gate, **EIGHT)
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: the holder's thread is not here, nor its share
            try:
                state = argonishche.memory_budget()
                tag = argon2_hash(PASSWORD, SALT, allocator="arena", **EIGHT)
                os.write(write, f"{state.in_use} {state.running} {len(tag)}".encode())
            finally:
                os._exit(0)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        assert os.read(read, 100).decode() == "0 0 32"
        os.close(read)
    finally:
        gate.gate.set()
        holder.join(60)
