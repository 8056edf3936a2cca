"""``hash_many`` and ``PasswordHasher.hash_many``: many passwords hashed on a pool of workers,
in order, each with a fresh salt, with at most one hash's memory per worker."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor

import argonishche
import pytest
from argonishche import (
    BackendError,
    ParameterError,
    PasswordHasher,
    VerifyMismatchError,
    argon2_verify,
)
from argonishche._argon2 import params_of
from argonishche._batch import MAX_WORKERS, executor_workers
from support import run_python

MANY_COSTS = dict(time_cost=1, memory_cost=64, parallelism=2)
PASSWORDS = ["alpha", b"beta", "gämma", b"", "", "pässwörd ☃", b"\x00\xff", "x" * 100, "9",
             b"10"]


def check_hashes(passwords, encoded, costs=MANY_COSTS, salt_len=16):
    argon2 = pytest.importorskip("argon2")
    assert len(encoded) == len(passwords)
    prefix = "$argon2id$v=19$m={memory_cost},t={time_cost},p={parallelism}$".format(**costs)
    salts = set()
    for password, phc in zip(passwords, encoded, strict=True):
        assert phc.startswith(prefix)
        assert argon2_verify(phc, password) is True
        assert argon2.PasswordHasher().verify(phc, password) is True
        salt = params_of(phc)[1]
        assert len(salt) == salt_len
        salts.add(salt)
    assert len(salts) == len(passwords)  # a fresh salt each


def test_hash_many_results_in_order_and_verifiable():
    encoded = argonishche.hash_many(PASSWORDS, workers=3, chunk_size=2, **MANY_COSTS)
    check_hashes(PASSWORDS, encoded)
    with pytest.raises(VerifyMismatchError):  # each result belongs to its own password
        argon2_verify(encoded[0], PASSWORDS[1])


def test_hash_many_accepts_any_iterable_and_empty_input():
    progress = []
    assert argonishche.hash_many([], progress=lambda *a: progress.append(a)) == []
    assert argonishche.hash_many(iter(()), **MANY_COSTS) == []
    assert progress == []
    generated = (f"pw{i}" for i in range(5))
    check_hashes([f"pw{i}" for i in range(5)],
                 argonishche.hash_many(generated, workers=2, **MANY_COSTS))


def test_hash_many_progress_counts_up_to_the_total():
    calls = []
    lock = threading.Lock()

    def progress(done, total):
        with lock:
            calls.append((done, total))

    argonishche.hash_many([f"pw{i}" for i in range(11)], workers=2, chunk_size=3,
                          progress=progress, **MANY_COSTS)
    dones = [done for done, _ in calls]
    assert {total for _, total in calls} == {11}
    assert dones == sorted(set(dones)) and dones[-1] == 11
    assert len(calls) == 4  # one per chunk: 3 + 3 + 3 + 2


def test_hash_many_on_a_thread_pool_leaves_the_pool_running():
    with ThreadPoolExecutor(max_workers=2) as pool:
        encoded = argonishche.hash_many(PASSWORDS, executor=pool, **MANY_COSTS)
        assert pool.submit(len, "still open").result() == 10
    check_hashes(PASSWORDS, encoded)


def test_hash_many_on_a_process_pool():
    with ProcessPoolExecutor(2) as pool:
        encoded = argonishche.hash_many(PASSWORDS[:6], executor=pool, chunk_size=2,
                                        **MANY_COSTS)
    check_hashes(PASSWORDS[:6], encoded)


@pytest.mark.parametrize("option", [dict(workers=0), dict(chunk_size=0), dict(workers=-1),
                                    dict(chunk_size=-3), dict(salt_len=7)])
def test_hash_many_refuses_bad_options(option):
    with pytest.raises(ParameterError, match=next(iter(option))):
        argonishche.hash_many(["a", "b"], **MANY_COSTS, **option)


def test_hash_many_chunk_size_larger_than_the_input_is_one_chunk():
    check_hashes(["a", "b"], argonishche.hash_many(["a", "b"], chunk_size=8, **MANY_COSTS))


def test_hash_many_passes_allocator_and_wipe_through():
    with pytest.raises(BackendError, match="'nosuch'"):
        argonishche.hash_many(["a"], allocator="nosuch", **MANY_COSTS)
    with pytest.raises(ParameterError, match="'system' allocates in C"):
        argonishche.hash_many(["a"], allocator="system", wipe=lambda view: None, **MANY_COSTS)


def test_password_hasher_hash_many_uses_the_hasher_parameters(acquire_log):
    hasher = PasswordHasher(time_cost=1, memory_cost=48, parallelism=3, hash_len=20,
                            salt_len=12, type="i", allocator="hugepages")
    encoded = hasher.hash_many(PASSWORDS, workers=2)
    assert len(encoded) == len(PASSWORDS)
    for password, phc in zip(PASSWORDS, encoded, strict=True):
        assert phc.startswith("$argon2i$v=19$m=48,t=1,p=3$")
        assert hasher.check_needs_rehash(phc) is False
        assert hasher.verify(phc, password) is True
        params, salt, tag = params_of(phc)
        assert len(salt) == 12 and len(tag) == 20
    # every hash (and each chunk's choice between one C call and a hash at a time) asked for it
    assert set(acquire_log) == {"hugepages"} and len(acquire_log) >= 2 * len(PASSWORDS)


def test_hash_many_peak_memory_is_one_hash_per_worker():
    result = run_python("""
        import resource
        import argonishche
        costs = dict(time_cost=1, memory_cost=4096, parallelism=1)
        argonishche.argon2_hash(b"warm-up", b"somesalt", **costs)
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        encoded = argonishche.hash_many([f"pw{i}" for i in range(300)], workers=2, **costs)
        assert len(encoded) == 300 and len(set(encoded)) == 300
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline)
        """)
    assert result.returncode == 0, result.stderr
    growth_kib = int(result.stdout)
    assert growth_kib < 3 * (2 * 4096) + 16 * 1024


# ---- chunking: sized by the executor's workers, not by this machine's CPUs -------------------


class InlineExecutor(Executor):
    """An executor that tells nothing about its workers: runs each task at once, here."""

    def submit(self, fn, /, *args, **kwargs):
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future


class FakeDaskClient:
    """What hash_many reads of a dask.distributed Client: ``nthreads()`` per worker address."""

    asynchronous = False

    def __init__(self, nthreads):
        self._nthreads = nthreads

    def nthreads(self, workers=None):
        if callable(self._nthreads):
            return self._nthreads()
        return {k: v for k, v in self._nthreads.items() if workers is None or k in workers}


class FakeClientExecutor(InlineExecutor):
    """Shaped like dask.distributed's ClientExecutor (``Client.get_executor(**kwargs)``)."""

    def __init__(self, client, **kwargs):
        self._client = client
        self._kwargs = kwargs


@pytest.fixture
def many_cpus(monkeypatch):
    """This machine claims 64 CPUs, so that chunking by them cannot pass for chunking by the
    executor's workers (64 CPUs: 256 tasks wanted, i.e. one password per task here)."""
    monkeypatch.setattr(os, "cpu_count", lambda: 64)


def count_submits(executor, monkeypatch):
    """Sizes of the chunks submitted to *executor*, in order."""
    sizes = []
    original = executor.submit

    def submit(fn, /, *args, **kwargs):
        sizes.append(len(args[0]))
        return original(fn, *args, **kwargs)
    monkeypatch.setattr(executor, "submit", submit)
    return sizes


@pytest.mark.parametrize("max_workers, tasks", [(1, 4), (2, 8), (3, 12)])
def test_hash_many_chunks_by_the_thread_pools_workers(many_cpus, monkeypatch, max_workers,
                                                       tasks):
    passwords = [f"pw{i}" for i in range(24)]
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        sizes = count_submits(pool, monkeypatch)
        encoded = argonishche.hash_many(passwords, executor=pool, **MANY_COSTS)
    assert len(sizes) == tasks and sum(sizes) == 24  # about four tasks per worker
    check_hashes(passwords, encoded)


def test_hash_many_chunks_by_the_process_pools_workers(many_cpus, monkeypatch):
    passwords = [f"pw{i}" for i in range(16)]
    with ProcessPoolExecutor(2) as pool:
        sizes = count_submits(pool, monkeypatch)
        encoded = argonishche.hash_many(passwords, executor=pool, **MANY_COSTS)
    assert sizes == [2] * 8
    check_hashes(passwords, encoded)


def test_hash_many_chunks_by_a_dask_executors_worker_threads(many_cpus, monkeypatch):
    # Three workers of 3, 2 and 1 threads: 6 in all, so about 24 tasks: 48 passwords, 2 a task.
    client = FakeDaskClient({"tcp://a:1": 3, "tcp://b:1": 2, "tcp://c:1": 1})
    executor = FakeClientExecutor(client)
    assert executor_workers(executor) == 6
    sizes = count_submits(executor, monkeypatch)
    passwords = [f"pw{i}" for i in range(48)]
    check_hashes(passwords, argonishche.hash_many(passwords, executor=executor, **MANY_COSTS))
    assert sizes == [2] * 24
    # get_executor(workers=[...]): only those workers' threads run its tasks.
    assert executor_workers(FakeClientExecutor(client, workers=["tcp://b:1"])) == 2
    assert executor_workers(FakeClientExecutor(client, workers="tcp://a:1")) == 3


def test_hash_many_on_an_executor_that_does_not_tell_uses_workers_or_the_cpus(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 5)
    executor = InlineExecutor()
    assert executor_workers(executor) is None
    sizes = count_submits(executor, monkeypatch)
    argonishche.hash_many([f"pw{i}" for i in range(40)], executor=executor, **MANY_COSTS)
    assert sizes == [2] * 20  # 5 CPUs: 20 tasks
    sizes.clear()
    argonishche.hash_many([f"pw{i}" for i in range(40)], executor=executor, workers=2,
                          **MANY_COSTS)
    assert sizes == [5] * 8  # workers=2: 8 tasks


def broken_nthreads():
    raise ConnectionError("scheduler gone")


@pytest.mark.parametrize("executor", [
    pytest.param(FakeClientExecutor(FakeDaskClient({})), id="dask-no-workers-yet"),
    pytest.param(FakeClientExecutor(FakeDaskClient(broken_nthreads)), id="dask-unreachable"),
    pytest.param(FakeClientExecutor(FakeDaskClient(lambda: [4])), id="dask-not-a-mapping"),
    pytest.param(FakeClientExecutor(FakeDaskClient({"a": "4", "b": None})), id="dask-not-ints"),
    pytest.param(FakeClientExecutor(object()), id="client-without-nthreads"),
    pytest.param(FakeClientExecutor(FakeDaskClient({"a": 4}), workers=3), id="bad-restriction"),
])
def test_hash_many_falls_back_when_what_the_executor_tells_is_unusable(monkeypatch, executor):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert executor_workers(executor) is None
    sizes = count_submits(executor, monkeypatch)
    check_hashes(["a", "b", "c", "d"], argonishche.hash_many(["a", "b", "c", "d"],
                                                             executor=executor, **MANY_COSTS))
    assert sizes == [1] * 4  # 1 CPU: four tasks


def test_hash_many_ignores_an_asynchronous_dask_client(monkeypatch):
    calls = []

    async def nthreads(workers=None):
        calls.append("awaited")
        return {"a": 8}

    client = FakeDaskClient({"a": 8})
    client.asynchronous = True
    assert executor_workers(FakeClientExecutor(client)) is None
    client.asynchronous = False
    client.nthreads = nthreads  # a coroutine where a mapping was expected: closed, not leaked
    assert executor_workers(FakeClientExecutor(client)) is None
    assert calls == []


@pytest.mark.parametrize("value", [0, -2, True, "8", 2.5, None])
def test_executor_workers_refuses_odd_max_workers(value):
    executor = InlineExecutor()
    executor._max_workers = value
    assert executor_workers(executor) is None


def test_hash_many_caps_a_huge_executors_count(monkeypatch):
    executor = InlineExecutor()
    executor._max_workers = 10 * MAX_WORKERS  # a big cluster: not a ParameterError
    sizes = count_submits(executor, monkeypatch)
    argonishche.hash_many(["a", "b"], executor=executor, **MANY_COSTS)
    assert sizes == [1, 1]


@pytest.mark.parametrize("option, sizes", [(dict(workers=1), [6] * 4),
                                           (dict(chunk_size=5), [5, 5, 5, 5, 4]),
                                           (dict(workers=1, chunk_size=10), [10, 10, 4])])
def test_hash_many_workers_and_chunk_size_win_over_the_executor(many_cpus, monkeypatch,
                                                                 option, sizes):
    passwords = [f"pw{i}" for i in range(24)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        submitted = count_submits(pool, monkeypatch)
        encoded = argonishche.hash_many(passwords, executor=pool, **option, **MANY_COSTS)
    assert submitted == sizes
    check_hashes(passwords, encoded)


# ---- without an executor: the process's shared pool, and the calling thread ------------------


def test_hash_many_makes_no_pool_or_thread_per_call(monkeypatch):
    import concurrent.futures

    made = []
    original_init = concurrent.futures.ThreadPoolExecutor.__init__

    def recording_init(self, *args, **kwargs):
        made.append(self)
        original_init(self, *args, **kwargs)
    from argonishche._thread_pool import THREAD_NAME_PREFIX, pool_size

    argonishche.hash_many(["warm", "up", "the", "pool"], **MANY_COSTS)  # the pool exists now
    monkeypatch.setattr(concurrent.futures.ThreadPoolExecutor, "__init__", recording_init)
    threads_before = {thread.ident for thread in threading.enumerate()}
    for _ in range(3):
        check_hashes(PASSWORDS, argonishche.hash_many(PASSWORDS, **MANY_COSTS))
    assert made == []
    new = [thread for thread in threading.enumerate() if thread.ident not in threads_before]
    assert all(thread.name.startswith(THREAD_NAME_PREFIX) for thread in new), new
    assert len([thread for thread in threading.enumerate()  # the pool's, started on demand
                if thread.name.startswith(THREAD_NAME_PREFIX)]) <= pool_size()


def test_hash_many_runs_on_the_calling_thread_and_the_shared_pool(monkeypatch):
    from argonishche import _batch, _thread_pool

    running, most, names, lock = [0], [0], set(), threading.Lock()
    original = _batch.hash_chunk

    def counted(*args):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            names.add(threading.current_thread().name)
        try:
            return original(*args)
        finally:
            with lock:
                running[0] -= 1
    monkeypatch.setattr(_batch, "hash_chunk", counted)
    passwords = [f"pw{i}" for i in range(24)]
    check_hashes(passwords, argonishche.hash_many(passwords, workers=1, **MANY_COSTS))
    assert most[0] == 1 and names == {threading.current_thread().name}  # workers=1: inline
    names.clear()
    check_hashes(passwords, argonishche.hash_many(passwords, workers=64, **MANY_COSTS))
    assert most[0] <= _thread_pool.pool_size()  # workers= beyond the CPUs: capped at the pool
    assert names - {threading.current_thread().name} <= {
        thread.name for thread in threading.enumerate()
        if thread.name.startswith(_thread_pool.THREAD_NAME_PREFIX)}


@pytest.mark.timeout(120)
def test_hash_many_from_every_pool_thread_at_once_does_not_deadlock():
    # Each call waits for its chunks while holding a pool thread: had they been queued on the
    # (busy) pool alone, none would ever run.  The calling thread hashes them instead.
    from argonishche._thread_pool import pool_size, shared_pool

    passwords = [f"pw{i}" for i in range(6)]
    calls = [shared_pool().submit(argonishche.hash_many, passwords, **MANY_COSTS)
             for _ in range(pool_size() + 1)]
    for call in calls:
        check_hashes(passwords, call.result(timeout=60))


def test_hash_many_error_stops_the_batch_and_is_raised(monkeypatch):
    from argonishche import _batch

    started = []
    original = _batch.hash_chunk

    def failing(passwords, salts, options):
        started.append(passwords)
        if "bad" in passwords:
            raise ValueError("no")
        return original(passwords, salts, options)
    monkeypatch.setattr(_batch, "hash_chunk", failing)
    with pytest.raises(ValueError, match="no"):
        argonishche.hash_many(["bad"] + [f"pw{i}" for i in range(40)], workers=2, chunk_size=1,
                              **MANY_COSTS)
    assert len(started) < 41  # the chunks not started when it failed never ran
    check_hashes(["a", "b"], argonishche.hash_many(["a", "b"], **MANY_COSTS))  # still usable


def test_hash_many_in_a_forked_child_uses_a_pool_of_its_own():
    result = run_python("""
        import os, signal
        import argonishche
        costs = dict(time_cost=1, memory_cost=64, parallelism=1)
        argonishche.hash_many([f"pw{i}" for i in range(8)], **costs)  # the parent's pool
        pid = os.fork()
        if pid == 0:
            signal.alarm(30)
            out = argonishche.hash_many([f"pw{i}" for i in range(8)], workers=2, **costs)
            os._exit(0 if len(out) == 8 else 1)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0", result.stdout + result.stderr
