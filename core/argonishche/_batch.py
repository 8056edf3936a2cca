"""Hashing many passwords at once: a pool of threads, or any concurrent.futures.Executor.

Each hash releases the GIL for its whole C call, so plain threads scale over cores; each thread
keeps its own work memory (the ``arena`` allocator), so memory stays at one hash's worth per
thread however many passwords there are.  Work is submitted in chunks to a module-level function,
so a process pool or a cluster's ``concurrent.futures.Executor`` (dask.distributed's
``Client.get_executor()``, say) can run it unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from typing import Any, TypeAlias, cast

from ._argon2 import DEFAULTS, argon2_hash_encoded
from .exceptions import ParameterTypeError
from .hookspecs import Allocator
from ._params import MIN_SALT_LEN, UINT32_MAX, Argon2Params, Buffer, TypeLike, Wipe, integer

#: The most ``workers=`` accepted (a larger executor's count is capped to it for chunking).
MAX_WORKERS = 4096

#: ``progress=``: called as ``progress(done, total)``; what it returns is ignored.
Progress: TypeAlias = Callable[[int, int], object]


def hash_chunk(passwords: Sequence[Buffer | str], salts: Sequence[bytes],
               options: dict[str, Any]) -> list[str]:
    """PHC strings for one chunk; what every executor runs (module level, so picklable)."""
    return [argon2_hash_encoded(password, salt, **options)
            for password, salt in zip(passwords, salts, strict=True)]


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
        by default a thread pool of *workers* threads made for this call.
    :param workers: the number of workers to size the chunks for (and, without *executor*, the
        threads of the pool made for this call).  Default: the executor's own count where it
        tells (a thread or process pool's ``max_workers``; a dask.distributed executor's worker
        threads, summed, when the call starts), else one per CPU of this machine.  Give it for
        an executor that does not tell, or whose cluster will grow.
    :param chunk_size: passwords per submitted task; default: about four tasks per worker.
        Given, it wins over *workers*.
    :param progress: called as ``progress(done, total)`` each time a chunk finishes.

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
    if workers is None:
        told = executor_workers(executor) if executor is not None else None
        workers = min(told, MAX_WORKERS) if told else os.cpu_count() or 1
    workers = integer("workers", workers, 1, MAX_WORKERS)
    total = len(passwords)
    if chunk_size is None:
        chunk_size = max(1, -(-total // (4 * workers)))
    chunk_size = integer("chunk_size", chunk_size, 1, UINT32_MAX)
    options = dict(type=type, time_cost=time_cost, memory_cost=memory_cost,
                   parallelism=parallelism, hash_len=hash_len, version=version, secret=secret,
                   associated_data=associated_data, allocator=allocator, wipe=wipe,
                   backend=backend, threads=1)
    salts = [os.urandom(salt_len) for _ in range(total)]
    own_pool = executor is None
    if executor is None:
        executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="argonishche")
    results: list[str | None] = [None] * total
    try:
        futures = {executor.submit(hash_chunk, passwords[start:start + chunk_size],
                                   salts[start:start + chunk_size], options): start
                   for start in range(0, total, chunk_size)}
        done = 0
        for future in as_completed(futures):
            start = futures[future]
            chunk = future.result()
            results[start:start + len(chunk)] = chunk
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    finally:
        if own_pool:
            executor.shutdown(wait=True, cancel_futures=True)
    return cast("list[str]", results)  # every chunk has filled its slots
