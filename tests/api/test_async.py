"""``run_blocking`` (argonishche._async) and ``PasswordHasher.hash_async`` / ``verify_async``:
hashes awaited from asyncio run on one shared, bounded thread pool, never on the event loop.

Each test drives its own event loop with ``asyncio.run`` under a deadline, so that a hang is a
failure; the fork and shutdown checks run in fresh interpreters with timeouts.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time

import argonishche
import pytest
from argonishche import (
    InvalidHashError,
    PasswordHasher,
    VerifyMismatchError,
    _thread_pool,
    argon2_hash_encoded,
    argon2_verify,
)
from argonishche._async import pool_size, run_blocking
from support import PASSWORD, SALT, SMALL, VALID, run_python

pytestmark = pytest.mark.timeout(120)

#: A few MiB: long enough (milliseconds) for the event loop to be seen running meanwhile.
MIB_COSTS = dict(time_cost=3, memory_cost=8192, parallelism=1)


def run(coroutine, deadline: float = 60):
    """Run *coroutine* on a new event loop; a TimeoutError if it takes over *deadline* s."""
    return asyncio.run(asyncio.wait_for(coroutine, deadline))


def test_results_equal_the_synchronous_calls():
    async def main():
        encoded = await run_blocking(argon2_hash_encoded, PASSWORD, SALT, **SMALL)
        checked = await run_blocking(argon2_verify, encoded, PASSWORD)
        raw = await run_blocking(argonishche.argon2_hash, PASSWORD, salt=SALT, **SMALL)
        return encoded, checked, raw

    encoded, checked, raw = run(main())
    assert encoded == argon2_hash_encoded(PASSWORD, SALT, **SMALL) == VALID
    assert checked is True
    assert raw == argonishche.argon2_hash(PASSWORD, SALT, **SMALL)


@pytest.mark.parametrize("call, expected", [
    ((argon2_verify, VALID, b"wrong"), VerifyMismatchError),
    ((argon2_verify, "$argon2id$v=19$m=32,t=1,p=1$bad", PASSWORD), InvalidHashError),
    ((argon2_hash_encoded, PASSWORD, b"short"), argonishche.ParameterError),
    ((dict.__getitem__, {}, "key"), KeyError),
], ids=["mismatch", "invalid-hash", "parameter", "any-exception"])
def test_exceptions_reach_the_await_with_their_type(call, expected):
    with pytest.raises(expected) as caught:
        run(run_blocking(*call))
    assert type(caught.value) is expected


def test_the_call_runs_on_the_shared_pool_not_the_loops_thread():
    async def main():
        names = await asyncio.gather(*(run_blocking(lambda: threading.current_thread().name)
                                       for _ in range(4)))
        return names, _thread_pool.shared_pool()

    names, pool = run(main())
    assert all(name.startswith(_thread_pool.THREAD_NAME_PREFIX) for name in names), names
    assert run(main())[1] is pool  # another event loop, the same pool


def ticker_during(work):
    """Run coroutine *work* while a 1 ms ticker runs on the same loop: (its result, ticks,
    worst gap between ticks in s, the work's duration in s)."""
    async def main():
        done, ticks, worst = asyncio.Event(), [0], [0.0]

        async def tick():
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                ticks[0], worst[0], last = ticks[0] + 1, max(worst[0], now - last), now

        ticking = asyncio.create_task(tick())
        await asyncio.sleep(0.01)  # the ticker is running
        started = time.perf_counter()
        result = await work
        duration = time.perf_counter() - started
        done.set()
        await ticking
        return result, ticks[0], worst[0], duration
    return run(main())


def test_the_event_loop_keeps_running_while_hashes_run():
    # 48 hashes: with a third as many, one scheduling hiccup on a busy CI machine was half the
    # run and failed the bound below, though no hash ran on the loop's thread.
    passwords = [f"pw{i}".encode() for i in range(48)]
    expected = [argon2_hash_encoded(pw, SALT, **MIB_COSTS) for pw in passwords]

    async def hashes():
        return await asyncio.gather(*(run_blocking(argon2_hash_encoded, pw, SALT, **MIB_COSTS)
                                      for pw in passwords))

    result, ticks, worst, duration = ticker_during(hashes())
    assert result == expected
    # Hashed on the loop's thread, the ticker would not tick at all until the end: its worst
    # gap would be the whole duration.  Generous bounds: the machine may be busy.
    assert ticks >= 5, (ticks, duration)
    assert worst < 0.5 * duration, (worst, duration)


def test_at_most_pool_size_calls_run_at_once():
    running, most, lock = [0], [0], threading.Lock()

    def hash_counted(password):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.02)  # so that calls overlap whenever the pool lets them
            return argon2_hash_encoded(password, SALT, **SMALL)
        finally:
            with lock:
                running[0] -= 1

    async def main():
        return await asyncio.gather(*(run_blocking(hash_counted, f"pw{i}")
                                      for i in range(4 * pool_size() + 3)))

    results = run(main())
    assert results == [argon2_hash_encoded(f"pw{i}", SALT, **SMALL)
                       for i in range(4 * pool_size() + 3)]
    assert most[0] == pool_size()  # bounded, and not serialized either
    assert _thread_pool.shared_pool()._max_workers == pool_size() >= 1


def test_the_pool_is_made_once_however_many_threads_race(monkeypatch):
    monkeypatch.setattr(_thread_pool, "_pool", None)
    barrier, pools = threading.Barrier(16), []

    def make():
        barrier.wait()
        pools.append(_thread_pool.shared_pool())

    threads = [threading.Thread(target=make) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        assert len(pools) == 16 and len({id(pool) for pool in pools}) == 1
    finally:
        pools[0].shutdown(wait=True)


def test_contextvars_reach_the_call_and_its_changes_stay_there():
    var = contextvars.ContextVar("request", default="none")

    def read_and_change():
        seen = var.get()
        var.set("changed in the pool")
        return seen

    async def main():
        var.set("request-42")
        seen = await run_blocking(read_and_change)
        return seen, var.get()

    assert run(main()) == ("request-42", "request-42")


def test_cancelling_leaves_the_pool_usable():
    size = pool_size()
    release, started = threading.Event(), threading.Semaphore(0)
    finished, never = [], []

    def blocker(i):
        started.release()
        release.wait(30)
        finished.append(i)
        return argon2_hash_encoded(PASSWORD, SALT, **SMALL)

    async def main():
        running = [asyncio.create_task(run_blocking(blocker, i)) for i in range(size)]
        for _ in range(size):  # every pool thread is busy
            while not started.acquire(blocking=False):
                await asyncio.sleep(0.001)
        queued = asyncio.create_task(run_blocking(never.append, "ran"))
        await asyncio.sleep(0.01)
        running[0].cancel()  # running in C (here, in blocker): cannot be stopped
        queued.cancel()  # not started: must never run
        for task in (running[0], queued):
            with pytest.raises(asyncio.CancelledError):
                await task
        release.set()
        rest = await asyncio.gather(*running[1:])
        again = await asyncio.gather(*(run_blocking(argon2_hash_encoded, PASSWORD, SALT,
                                                    **SMALL) for _ in range(2 * size)))
        return rest, again

    rest, again = run(main())
    assert rest == [VALID] * (size - 1) and again == [VALID] * (2 * size)
    deadline = time.monotonic() + 10
    while len(finished) < size and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(finished) == list(range(size))  # the cancelled one ran to its end, unseen
    assert never == []


def test_importing_argonishche_does_not_import_asyncio():
    result = run_python("""
        import sys
        import argonishche
        import argonishche._async
        print("asyncio" in sys.modules, "concurrent.futures" in sys.modules)
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


FORK_CHECK = """
import asyncio, os, signal, sys, threading, time
import argonishche
from argonishche._async import pool_size, run_blocking

COSTS = dict(time_cost=1, memory_cost=256, parallelism=1)
BUSY = sys.argv[1] == "busy"


async def one():
    return await run_blocking(argonishche.argon2_hash_encoded, b"pw", b"somesalt", **COSTS)


async def three():
    return await asyncio.wait_for(asyncio.gather(one(), one(), one()), 20)

async def fill():
    # Every thread the pool may have is made: a child could not make one more for itself.
    barrier = threading.Barrier(pool_size())
    await asyncio.gather(*(run_blocking(barrier.wait, 10) for _ in range(pool_size())))

asyncio.run(fill())
expected = asyncio.run(one())  # the parent's pool threads are all idle
if BUSY:  # a pool thread mid-call, holding whatever it holds, at the fork
    gate = threading.Event()
    threading.Thread(target=lambda: asyncio.run(run_blocking(gate.wait, 30)), daemon=True).start()
    time.sleep(0.05)
pid = os.fork()
if pid == 0:
    signal.alarm(25)
    try:
        ok = asyncio.run(three())
        os._exit(0 if ok == [expected] * 3 else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(2)
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.01)
else:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    status = None
if BUSY:
    gate.set()
print("hung" if status is None else f"exit {os.waitstatus_to_exitcode(status)}",
      asyncio.run(one()) == expected)
"""


@pytest.mark.parametrize("state", ["idle", "busy"])
def test_a_forked_child_gets_a_pool_of_its_own(state):
    # Exit 2 or "hung": the child waited for the parent's pool threads, which it does not have.
    result = run_python(FORK_CHECK, state, timeout=90)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["exit", "0", "True"], result.stdout + result.stderr


def test_the_interpreter_exits_with_calls_pending():
    # The loop closes while a hash it awaited still runs, and more are queued: the interpreter
    # must finish them, drop their results and exit cleanly.
    result = run_python("""
        import asyncio
        import argonishche
        from argonishche._async import pool_size, run_blocking

        async def main():
            for i in range(2 * pool_size() + 1):
                asyncio.ensure_future(run_blocking(
                    argonishche.argon2_hash_encoded, b"pw", b"somesalt", time_cost=1,
                    memory_cost=16384, parallelism=1))
            await asyncio.sleep(0.01)

        asyncio.run(main())
        print("left")
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "left"
    assert "Traceback" not in result.stderr and "Exception" not in result.stderr, result.stderr


# ---- PasswordHasher.hash_async / verify_async: they must exist (no skip) ---------------------

HASHER = dict(time_cost=1, memory_cost=64, parallelism=2)


def test_password_hasher_has_async_methods():
    for name in ("hash_async", "verify_async"):
        assert inspect.iscoroutinefunction(getattr(PasswordHasher, name)), name


def test_password_hasher_hash_async_and_verify_async_match_the_sync_methods():
    hasher = PasswordHasher(**HASHER)

    async def main():
        fresh = await hasher.hash_async("pässwörd")
        salted = await hasher.hash_async(b"pw", salt=b"somesalt")
        return fresh, salted, await hasher.verify_async(fresh, "pässwörd")

    fresh, salted, verified = run(main())
    assert verified is True and hasher.verify(fresh, "pässwörd") is True
    assert fresh.startswith("$argon2id$v=19$m=64,t=1,p=2$")
    assert salted == hasher.hash(b"pw", salt=b"somesalt")


@pytest.mark.parametrize("encoded, expected", [
    (None, VerifyMismatchError),
    ("$argon2id$v=19$m=64,t=1,p=2$notbase64!$x", InvalidHashError),
], ids=["mismatch", "invalid-hash"])
def test_password_hasher_verify_async_raises_like_verify(encoded, expected):
    hasher = PasswordHasher(**HASHER)
    encoded = encoded or hasher.hash("right")
    with pytest.raises(expected) as caught:
        run(hasher.verify_async(encoded, "wrong"))
    assert isinstance(caught.value, expected)
    with pytest.raises(type(caught.value)):
        hasher.verify(encoded, "wrong")


def test_password_hasher_async_methods_run_on_the_shared_pool(monkeypatch):
    hasher = PasswordHasher(**HASHER)
    threads = []
    for name in ("hash", "verify"):
        method = getattr(hasher, name)

        def recording(*args, _method=method, **kwargs):
            threads.append(threading.current_thread().name)
            return _method(*args, **kwargs)
        monkeypatch.setattr(hasher, name, recording)

    async def main():
        return await hasher.verify_async(await hasher.hash_async("pw"), "pw")

    assert run(main()) is True
    assert len(threads) == 2, threads
    assert all(n.startswith(_thread_pool.THREAD_NAME_PREFIX) for n in threads), threads
