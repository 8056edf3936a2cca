"""Hashing many passwords at once: on the process's shared thread pool, or any
concurrent.futures.Executor.

Each hash releases the GIL for its whole C call, so plain threads scale over cores; each thread
keeps its own work memory (the ``arena`` allocator), so memory stays at one hash's worth per
thread however many passwords there are.  Without an executor the chunks run on the pool that
``run_blocking`` uses too (``_thread_pool``: one per process, made at first use, as many threads as
CPUs) and on the calling thread, which takes chunks like the pool's threads instead of waiting
idle: no pool (nor thread) is made per call, and a call from a pool thread (``run_blocking``
of ``hash_many``) cannot deadlock waiting for a pool that is busy.  Given an executor, work is
submitted in chunks to a module-level function, so a process pool or a cluster's
``concurrent.futures.Executor`` (dask.distributed's ``Client.get_executor()``, say) can run it
unchanged.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping, Sequence

from ._argon2 import DEFAULTS, MAX_HASHES_PER_CALL, argon2_hash_encoded_many
from ._parameter_checks import (
    MIN_SALT_LEN,
    UINT32_MAX,
    Argon2Params,
    Buffer,
    TypeLike,
    Wipe,
    integer,
)
from ._thread_pool import Executor, Progress, pool_size, shared_pool  # see _thread_pool's doc
from .exceptions import ParameterTypeError
from .hookspecs import Allocator

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:  # concurrent.futures is imported only when a batch needs the pool
    from concurrent.futures import Future
    from typing import Any

#: The most ``workers=`` accepted (a larger executor's count is capped to it for chunking).
MAX_WORKERS = 4096

#: Without an executor and *chunk_size*, each chunk is the passwords left divided by this many
#: per hashing thread (rounded up): a chunk is hashed in one C call that wipes its work memory
#: once, at its end, so large chunks save a wipe per password; they shrink to one password as
#: the batch ends, so that no thread finishes long before the others.  At most
#: ``MAX_HASHES_PER_CALL``: progress is reported, and an error raised, between chunks.
GUIDED_SHARES_PER_THREAD = 2


def hash_chunk(passwords: Sequence[Buffer | str], salts: Sequence[bytes],
               options: dict[str, Any]) -> list[str]:
    """PHC strings for one chunk; what every executor runs (module level, so picklable).

    With a C arena allocator (the default) and built-in kernels, the chunk is hashed in one C
    call and one lease of work memory, wiped once before it leaves the call rather than after
    every hash; otherwise (a Python allocator, a wipe callback, a third-party kernel and its
    witness) one hash at a time, as ``argon2_hash_encoded``."""
    return argon2_hash_encoded_many(passwords, salts, **options)


def executor_workers(executor: Executor) -> int | None:
    """How many tasks *executor* runs at once, where it tells (else None); never raises.

    A ``ThreadPoolExecutor`` or ``ProcessPoolExecutor`` (or any executor with an int
    ``_max_workers``): that number.  A dask.distributed ``Client.get_executor()``: the threads of
    the cluster's workers (of the workers it was restricted to, if any) at this moment, summed.
    These are private attributes, read defensively: anything unexpected means "unknown".
    """
    try:
        count = getattr(executor, "_max_workers", None)
        if count is None:
            count = _dask_threads(executor)
    except Exception:  # a private API that changed, a cluster that went away...
        return None
    if isinstance(count, int) and not isinstance(count, bool) and count >= 1:
        return count
    return None


def _dask_threads(executor: Executor) -> object:
    """Sum of ``nthreads()`` of a dask.distributed ClientExecutor's client, or None."""
    client = getattr(executor, "_client", None)
    if client is None or getattr(client, "asynchronous", False) is not False:
        return None  # not dask's, or an asynchronous client (nthreads() would be awaitable)
    nthreads = getattr(client, "nthreads", None)
    if not callable(nthreads):
        return None
    only = getattr(executor, "_kwargs", {}).get("workers")  # get_executor(workers=[...])
    counts = nthreads() if only is None else nthreads([only] if isinstance(only, str) else only)
    from inspect import iscoroutine  # here: only dask executors need it

    if iscoroutine(counts):
        counts.close()
        return None
    if not isinstance(counts, Mapping):
        return None
    return sum(n for n in counts.values() if isinstance(n, int) and n > 0)


def hash_many(passwords: Iterable[Buffer | str], *, type: TypeLike = DEFAULTS.type,
              time_cost: int = DEFAULTS.time_cost, memory_cost: int = DEFAULTS.memory_cost,
              parallelism: int = DEFAULTS.parallelism, hash_len: int = DEFAULTS.hash_len,
              version: int = DEFAULTS.version, salt_len: int = 16, secret: Buffer = b"",
              associated_data: Buffer = b"", allocator: str | Allocator | None = None,
              wipe: Wipe = True, backend: str | None = None, executor: Executor | None = None,
              workers: int | None = None, chunk_size: int | None = None,
              progress: Progress | None = None) -> list[str]:
    """PHC strings for *passwords*, in order, each with a fresh random salt.

    :param executor: run the chunks on this ``concurrent.futures.Executor`` (a
        ThreadPoolExecutor, a ProcessPoolExecutor, a dask.distributed ``Client.get_executor()``...);
        by default on the calling thread and the process's shared hashing pool (the one
        ``run_blocking`` uses: as many threads as CPUs, made once, kept for the next call).
    :param workers: the number of workers to size the chunks for; without *executor*, also the
        most hashes this call runs at once, itself capped at the shared pool's size (the CPUs:
        more threads would not hash faster).  Default: the executor's own count where it tells
        (a thread or process pool's ``max_workers``; a dask.distributed executor's worker
        threads, summed, when the call starts), else one per CPU of this process.  Give it for
        an executor that does not tell, or whose cluster will grow.
    :param chunk_size: passwords per submitted task; default: about four tasks per worker
        (without *executor*, chunks that shrink as the batch ends: see
        ``GUIDED_SHARES_PER_THREAD``).  Given, it wins over *workers*.
    :param progress: called as ``progress(done, total)`` each time a chunk finishes (*done*
        counts passwords).

    Each hash fills its lanes on one thread (``threads=1``): the parallelism is across hashes.
    """
    if isinstance(passwords, (str, bytes, bytearray, memoryview)):
        # Iterating it would hash each character as a password of its own.
        raise ParameterTypeError(f"passwords must be an iterable of passwords (a list, say), "
                                 f"not one {passwords.__class__.__name__}")
    passwords = list(passwords)
    Argon2Params.check(type=type, version=version, time_cost=time_cost,
                       memory_cost=memory_cost, parallelism=parallelism, hash_len=hash_len)
    salt_len = integer("salt_len", salt_len, MIN_SALT_LEN, UINT32_MAX)
    if workers is None and executor is None:
        workers = pool_size()
    elif workers is None and executor is not None:
        told = executor_workers(executor)
        workers = min(told, MAX_WORKERS) if told else os.cpu_count() or 1
    workers = integer("workers", workers, 1, MAX_WORKERS)
    total = len(passwords)
    if chunk_size is not None:
        chunk_size = integer("chunk_size", chunk_size, 1, UINT32_MAX)
    elif executor is not None:
        chunk_size = max(1, -(-total // (4 * workers)))
    options = dict(type=type, time_cost=time_cost, memory_cost=memory_cost,
                   parallelism=parallelism, hash_len=hash_len, version=version, secret=secret,
                   associated_data=associated_data, allocator=allocator, wipe=wipe,
                   backend=backend, threads=1)
    salts = [os.urandom(salt_len) for _ in range(total)]
    if executor is None:
        return _on_shared_pool(passwords, salts, options, chunk_size, workers, progress)
    from concurrent.futures import as_completed  # the executor's own module: loaded already

    assert chunk_size is not None
    results: list[str | None] = [None] * total
    futures: dict[Future[list[str]], int] = {}
    try:
        for start in range(0, total, chunk_size):
            futures[executor.submit(hash_chunk, passwords[start:start + chunk_size],
                                    salts[start:start + chunk_size], options)] = start
        done = 0
        for future in as_completed(futures):
            start = futures[future]
            chunk = future.result()
            results[start:start + len(chunk)] = chunk
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    finally:
        for future in futures:  # an error or an interrupt: no chunk of this call starts now
            future.cancel()
    return results  # type: ignore[return-value]  # every chunk has filled its slots


def _on_shared_pool(passwords: Sequence[Buffer | str], salts: Sequence[bytes],
                    options: dict[str, Any], chunk_size: int | None, workers: int,
                    progress: Progress | None) -> list[str]:
    """The chunks hashed by the calling thread and by up to ``min(workers, pool_size()) - 1``
    threads of the shared pool, each taking the next chunk until none is left: of *chunk_size*
    passwords, or (None) of the passwords left shared among the threads
    (``GUIDED_SHARES_PER_THREAD``).

    Progress is reported, and errors raised, on the calling thread (between its own chunks, then
    while it waits for the pool's); on an error or interrupt no further chunk starts, and the
    call returns once the chunks already started have ended (none uses the passwords after).
    """
    import queue

    total = len(passwords)
    next_start = 0
    take_lock = threading.Lock()
    stopped = False
    finished: queue.SimpleQueue[tuple[int, list[str] | BaseException]] = queue.SimpleQueue()
    chunks = total if chunk_size is None else -(-total // chunk_size)  # at most
    threads = min(workers, pool_size(), chunks)
    shares = GUIDED_SHARES_PER_THREAD * max(threads, 1)

    def take() -> tuple[int, int] | None:
        nonlocal next_start
        with take_lock:
            start, left = next_start, total - next_start
            if stopped or left <= 0:
                return None
            size = min(left, chunk_size or min(-(-left // shares), MAX_HASHES_PER_CALL))
            next_start += size
            return start, size

    def hash_one(start: int, size: int) -> None:
        try:
            chunk: list[str] | BaseException = hash_chunk(
                passwords[start:start + size], salts[start:start + size], options)
        except BaseException as exc:  # reported (raised) on the calling thread
            chunk = exc
        finished.put((start, chunk))

    def helper() -> None:
        while (taken := take()) is not None:
            hash_one(*taken)

    helpers: list[Future[None]] = []
    if threads > 1:
        pool = shared_pool()
        for _ in range(threads - 1):
            try:
                helpers.append(pool.submit(helper))
            except RuntimeError:  # the interpreter is shutting down: no new pool work
                break
    results: list[str | None] = [None] * total
    done = 0

    def receive(block: bool) -> bool:
        nonlocal done
        try:
            start, chunk = finished.get(block=block)
        except queue.Empty:
            return False
        if isinstance(chunk, BaseException):
            raise chunk
        results[start:start + len(chunk)] = chunk
        done += len(chunk)
        if progress is not None:
            progress(done, total)
        return True

    try:
        while (taken := take()) is not None:
            hash_one(*taken)
            while receive(block=False):
                pass
        while done < total:  # every chunk taken: wait for the pool's
            receive(block=True)
    finally:
        with take_lock:
            stopped = True
        for future in helpers:
            future.cancel()  # not started yet: it never will
        for future in helpers:
            if not future.cancelled():
                future.exception()  # waits for a running helper to end its chunk
    return results  # type: ignore[return-value]  # every chunk has filled its slots
