"""Threads: ``threads=`` shares out the lanes without changing the tag, Python threads hash at
once correctly, and the GIL is released while the C code hashes (which hashes 64 MiB once)."""

from __future__ import annotations

import hashlib
import sys
import threading

from argonishche import argon2_hash
from support import PASSWORD, SALT


def test_threads_do_not_change_the_tag(backend):
    kwargs = dict(time_cost=2, memory_cost=256, parallelism=4, backend=backend)
    one = argon2_hash(PASSWORD, SALT, threads=1, **kwargs)
    four = argon2_hash(PASSWORD, SALT, threads=4, **kwargs)
    assert one == four
    assert argon2_hash(PASSWORD, SALT, **kwargs) == one  # default thread count
    assert argon2_hash(PASSWORD, SALT, threads=3, **kwargs) == one  # uneven share of lanes


def test_concurrent_python_threads_get_correct_results():
    inputs = [(f"password {i}".encode(), b"salt%04d" % i) for i in range(8)]
    expected = [argon2_hash(p, s, time_cost=1, memory_cost=128, parallelism=2)
                for p, s in inputs]
    results = [None] * len(inputs)
    errors = []

    def work(i):
        try:
            for _ in range(3):
                tag = argon2_hash(*inputs[i], time_cost=1, memory_cost=128, parallelism=2)
                results[i] = tag if results[i] in (None, tag) else b"inconsistent"
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert results == expected


def test_gil_is_released_while_hashing():
    """While a 64 MiB Argon2 hash runs, another Python thread keeps running.

    The switch interval is raised for the duration, so the interpreter never *forces* the
    hashing thread to give up the GIL: the counting thread can then only run while the C call
    has released it.  (The counting thread releases the GIL itself in every iteration, inside
    hashlib's C code for >= 2 KiB inputs, so the hashing thread is never starved; this does not
    give the CPU away the way os.sched_yield would on a loaded machine.)  With the GIL held
    through the hash the counter cannot move between the two reads; released, it advances
    tens of thousands of times.
    """
    chunk = bytes(4096)
    count = [0]
    started, stop = threading.Event(), threading.Event()

    def counter():
        started.set()
        while not stop.is_set():
            count[0] += 1
            hashlib.blake2b(chunk)  # releases the GIL while it hashes

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    thread = threading.Thread(target=counter, daemon=True)
    try:
        thread.start()
        assert started.wait(60)
        before = count[0]
        tag = argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=65536, parallelism=1,
                          threads=1, backend="ref")
        advanced = count[0] - before
    finally:
        stop.set()
        sys.setswitchinterval(old_interval)
        thread.join(60)
    assert not thread.is_alive()
    assert len(tag) == 32
    assert advanced > 1000, f"the counter advanced only {advanced} times during the hash"
