"""Hashing from asyncio code without blocking the event loop: :func:`run_blocking`.

Every hash releases the GIL for its whole C call, so running it on another thread leaves the
event loop free.  :func:`run_blocking` runs a call on the thread pool the whole process shares
(``argonishche._thread_pool``: ``hash_many`` runs there too):

* **Bounded.**  At most :func:`pool_size` calls run at once (the CPUs this process may run on),
  however many coroutines await: more would only make each hash slower and hold more work
  memory at once.  Calls beyond that wait their turn in the pool's queue (unbounded: limiting
  how many requests hash at all, a semaphore say, is the application's part), without blocking
  the loop.  Work memory is bounded for the whole process by its budget
  (:func:`argonishche.memory_budget`): a call whose memory does not fit waits for room on its
  pool thread, never on the loop, and raises :class:`~argonishche.MemoryBudgetTimeout` through
  the ``await`` if none comes in time.
* **Lazy.**  Importing this module imports neither asyncio nor concurrent.futures, nor starts a
  thread; the pool is made (under a lock, once) by the first call, and serves every event loop
  of every thread.
* **fork()-safe.**  A child process forgets its parent's pool (whose threads did not survive the
  fork) and makes its own on first use, instead of queueing work for threads that are not there.
* **Interpreter exit** waits for the calls running, and those queued whose ``await`` was not
  cancelled (``concurrent.futures`` joins its threads; ``asyncio.run`` cancels the tasks left
  when its loop ends); a call made once shutdown has begun raises ``RuntimeError``.
* **Cancellation.**  Cancelling the awaiting task cancels a call that has not started (it never
  runs).  A call already running cannot be interrupted: the C call runs to completion on its
  thread, its result (or exception) is dropped, and the thread returns to the pool with its
  memory wiped as usual.  So a cancelled ``await`` frees the coroutine at once, not the CPU.
* **Exceptions** propagate to the ``await`` with their type, as if the call had been direct.
* **contextvars.**  The call runs in a copy of the awaiting task's context, as with
  :func:`asyncio.to_thread` (``run_in_executor`` alone would run it in the pool thread's own).
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ._thread_pool import pool_size, shared_pool

__all__ = ["pool_size", "run_blocking"]

P = ParamSpec("P")
R = TypeVar("R")


async def run_blocking(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """``fn(*args, **kwargs)`` on the shared hashing pool, awaited from the running event loop.

    For calls that release the GIL (every argonishche hash and verify); see the module's
    documentation for the pool's size, cancellation, fork() and contextvars.
    """
    from asyncio import get_running_loop  # here: importing argonishche must not import asyncio

    loop = get_running_loop()
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await loop.run_in_executor(shared_pool(), call)
