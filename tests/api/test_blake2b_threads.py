"""One ``blake2b`` object shared by threads, as hashlib allows: no crash, no corruption, and
every digest is that of *some* serial order of whole ``update`` calls.

The C calls release the GIL: with nothing to serialise them, threads wrote an object's 128-byte
buffer at once and crashed the interpreter.  Each scenario therefore runs in a fresh interpreter
with a timeout: a crash or a deadlock fails the test instead of killing pytest.  The scenarios are
plain functions so that ``tests/stress/test_shared_blake2b.py`` can run them longer.

What makes the results checkable by construction:

* ``identical_chunks``: every chunk is made of the same byte, so any interleaving of the
  threads' updates hashes the same concatenation;
* ``updates_in_some_order``: three threads, one update each on a fresh object: the digest must be
  one of the six orders of whole updates (a lost or torn update matches none);
* ``readers_see_whole_updates``: one writer, so the prefixes are known; every digest and copy
  that readers take meanwhile must be a prefix of whole updates, never earlier than one the same
  reader saw before, and a copy must not move when the writer goes on.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading

import pytest
from argonishche import blake2b
from support import run_python

SIZES = (1, 100, 128, 200, 3000)  # below, at, across and far past the 128-byte C buffer
# ... and one long enough that other threads' calls surely fall inside its C call
WITH_LONG = SIZES + (1 << 16,)
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)  # support.py's folder


# ---- the scenarios (run in the child interpreter) --------------------------------------------


def _run_together(*targets, barrier: threading.Barrier | None = None) -> None:
    """Run each target in its own thread; re-raise the first exception any of them raised
    (after breaking *barrier*, so that the other threads do not wait for the failed one)."""
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)
            if barrier is not None:
                barrier.abort()

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def identical_chunks(threads: int, updates: int, rounds: int, keyed: bool) -> list[str]:
    """Each round, *threads* writers make *updates* each on a fresh object, chunk sizes in a
    different rotation per thread; the object is keyed (a C state from the start) or one-shot
    (the first updates race to make its C state)."""
    params = {"key": b"key"} if keyed else {}
    head = b"Z" * 7
    objects = [blake2b(head, **params) for _ in range(rounds)]
    plans = [[(bytearray if i % 2 else bytes)(b"Z" * SIZES[(i + k) % len(SIZES)])
              for k in range(updates)] for i in range(threads)]
    barrier = threading.Barrier(threads)

    def writer(chunks):
        for shared in objects:
            barrier.wait()  # all threads start each round together
            for chunk in chunks:
                shared.update(chunk)

    _run_together(*(lambda c=c: writer(c) for c in plans), barrier=barrier)
    total = len(head) + sum(len(chunk) for chunks in plans for chunk in chunks)
    expected = hashlib.blake2b(b"Z" * total, **params).digest()
    wrong = sum(shared.digest() != expected for shared in objects)
    return [f"{wrong} of {rounds} rounds: not the digest of the {total} bytes"] if wrong else []


def updates_in_some_order(rounds: int) -> list[str]:
    """Each round, three threads update a fresh object (one-shot, or keyed) once each."""
    cases = []
    for r in range(rounds):
        params = {"key": b"key"} if r % 2 else {}
        head = b"h" * (r % 131)  # shifts where the parts fall in the 128-byte blocks
        parts = [bytes([65 + i]) * WITH_LONG[(r + i) % len(WITH_LONG)] for i in range(3)]
        expected = {hashlib.blake2b(head + b"".join(order), **params).digest()
                    for order in itertools.permutations(parts)}
        cases.append((blake2b(head, **params), parts, expected))
    barrier = threading.Barrier(3)

    def worker(i):
        for shared, parts, _ in cases:
            barrier.wait()  # all three threads start each round together
            shared.update(parts[i])

    _run_together(*(lambda i=i: worker(i) for i in range(3)), barrier=barrier)
    return [f"round {r}: the digest is no order of the whole updates"
            for r, (shared, _, expected) in enumerate(cases) if shared.digest() not in expected]


def readers_see_whole_updates(readers: int, updates: int, rounds: int) -> list[str]:
    """Each round, one writer updates a fresh object while *readers* threads take its digest()
    and copy() in a loop (and check what they took once the writer is done)."""
    rng = random.Random(updates)
    chunks = [rng.randbytes(WITH_LONG[k % len(WITH_LONG)]) for k in range(updates)]
    reference = hashlib.blake2b()
    prefix = {reference.digest(): 0}  # digest -> how many whole updates it covers
    for k, chunk in enumerate(chunks, 1):
        reference.update(chunk)
        prefix[reference.digest()] = k
    # per round: the object (one-shot until the writer's first update), set when written
    objects = [(blake2b(), threading.Event()) for _ in range(rounds)]
    barrier = threading.Barrier(readers + 1)
    failures = []
    taken = [0] * readers

    def writer():
        for shared, done in objects:
            barrier.wait()
            try:
                for chunk in chunks:
                    shared.update(chunk)
            finally:
                done.set()

    def reader(i):
        for r, (shared, done) in enumerate(objects):
            barrier.wait()
            digests, copies = [], []
            while not done.is_set():
                digests.append(shared.digest())
                clone = shared.copy()
                digests.append(clone.digest())
                copies.append((clone, digests[-1]))
            taken[i] += len(digests)
            counts = [prefix.get(d, -1) for d in digests]
            if -1 in counts:
                failures.append(f"round {r}, reader {i}: {counts.count(-1)} digests of no "
                                f"whole-update prefix")
            elif counts != sorted(counts):
                failures.append(f"round {r}, reader {i}: a digest went back to an earlier prefix")
            if any(clone.digest() != digest for clone, digest in copies):
                failures.append(f"round {r}, reader {i}: a copy changed after it was taken")
            for clone, digest in copies[:: max(1, len(copies) // 4)]:
                count = prefix.get(digest, -1)
                clone.update(b"!")  # a copy hashes on independently
                if count >= 0 and clone.digest() != hashlib.blake2b(
                        b"".join(chunks[:count]) + b"!").digest():
                    failures.append(f"round {r}, reader {i}: a copy hashed on wrongly")

    _run_together(writer, *(lambda i=i: reader(i) for i in range(readers)), barrier=barrier)
    wrong = sum(shared.digest() != reference.digest() for shared, _ in objects)
    if wrong:
        failures.append(f"{wrong} of {rounds} final digests are not that of all the updates")
    print(f"{readers} readers took {sum(taken)} digests during {rounds} x {updates} updates")
    return failures


SCENARIOS = {f.__name__: f for f in (identical_chunks, updates_in_some_order,
                                     readers_see_whole_updates)}


def child_main(name: str, arguments: str) -> None:
    sys.setswitchinterval(1e-5)  # interleave the threads' Python code too, not only the C calls
    failures = SCENARIOS[name](**json.loads(arguments))
    for failure in failures:
        print(failure)
    sys.exit(1 if failures else 0)


# ---- running a scenario from pytest ----------------------------------------------------------


def run_scenario(name: str, timeout: float, **arguments) -> None:
    """Run scenario *name* in a fresh interpreter; fail on a crash, a hang or a wrong digest."""
    code = f"""
        import sys
        sys.path[:0] = [{HERE!r}, {TESTS!r}]
        import test_blake2b_threads
        test_blake2b_threads.child_main(*sys.argv[1:])
        """
    try:
        result = run_python(code, name, json.dumps(arguments), timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}({arguments}) did not finish in {timeout} s (a deadlock?)")
    if result.returncode < 0:
        how = f"killed by {signal.Signals(-result.returncode).name}"
    else:
        how = f"exit status {result.returncode}"
    assert result.returncode == 0, f"{name}({arguments}): {how}\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("keyed", [True, False], ids=["keyed", "one-shot"])
@pytest.mark.parametrize("threads", [2, 4])
def test_threads_updating_one_object(threads, keyed):
    run_scenario("identical_chunks", timeout=60, threads=threads, updates=1000,
                 rounds=100 // threads, keyed=keyed)


def test_concurrent_updates_hash_in_some_serial_order():
    run_scenario("updates_in_some_order", timeout=60, rounds=300)


def test_digest_and_copy_racing_update_see_whole_updates():
    run_scenario("readers_see_whole_updates", timeout=60, readers=2, updates=300, rounds=20)
