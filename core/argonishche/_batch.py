"""Hashing many passwords at once: a pool of threads, or any concurrent.futures.Executor.

Each hash releases the GIL for its whole C call, so plain threads scale over cores; each thread
keeps its own work memory (the ``arena`` allocator), so memory stays at one hash's worth per
thread however many passwords there are.  Work is submitted in chunks to a module-level function,
so a process pool or a cluster's executor (dask.distributed, Ray) can run it unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor, as_completed
from typing import Any, TypeAlias, cast

from ._argon2 import DEFAULTS, argon2_hash_encoded
from .exceptions import ParameterTypeError
from .hookspecs import Allocator
from ._params import MIN_SALT_LEN, UINT32_MAX, Argon2Params, Buffer, TypeLike, Wipe, integer

#: ``progress=``: called as ``progress(done, total)``; what it returns is ignored.
Progress: TypeAlias = Callable[[int, int], object]


def hash_chunk(passwords: Sequence[Buffer | str], salts: Sequence[bytes],
               options: dict[str, Any]) -> list[str]:
    """PHC strings for one chunk; what every executor runs (module level, so picklable)."""
    return [argon2_hash_encoded(password, salt, **options)
            for password, salt in zip(passwords, salts, strict=True)]


def hash_many(passwords: Iterable[Buffer | str], *, type: TypeLike = DEFAULTS.type,
              time_cost: int = DEFAULTS.time_cost, memory_cost: int = DEFAULTS.memory_cost,
              parallelism: int = DEFAULTS.parallelism, hash_len: int = DEFAULTS.hash_len,
              version: int = DEFAULTS.version, salt_len: int = 16, secret: Buffer = b"",
              associated_data: Buffer = b"", allocator: str | Allocator | None = None,
              wipe: Wipe = True, backend: str | None = None, executor: Executor | None = None,
              workers: int | None = None, chunk_size: int | None = None,
              progress: Progress | None = None) -> list[str]:
    """PHC strings for *passwords*, in order, each with a fresh random salt.

    :param executor: run the chunks on this executor (a ThreadPoolExecutor, a
        ProcessPoolExecutor, a dask.distributed or Ray executor...); by default a thread pool of
        *workers* threads (default: one per CPU) made for this call.
    :param chunk_size: passwords per submitted task; default: about four tasks per worker.
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
    workers = integer("workers", (os.cpu_count() or 1) if workers is None else workers, 1, 4096)
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
