"""The process's one hashing thread pool, shared by ``hash_many`` and ``run_blocking``.

* **Bounded.**  :func:`pool_size` threads: the CPUs this process may run on.  More would only
  make each hash slower and hold more work memory at once (within the process's work-memory
  budget either way: see :func:`argonishche.memory_budget`).
* **Lazy.**  Importing this module imports neither ``concurrent.futures`` nor starts a thread;
  the pool is made (under a lock, once) by the first call of :func:`shared_pool`.
* **fork()-safe.**  A child process forgets its parent's pool (whose threads did not survive the
  fork) and makes its own on first use, instead of queueing work for threads that are not there.
* **Interpreter exit** waits for the calls running and queued (``concurrent.futures`` joins its
  threads); a call submitted once shutdown has begun raises ``RuntimeError``.

``hash_many``'s :class:`Executor` and :data:`Progress` are defined here, not in ``_batch``:
``PasswordHasher.hash_many``'s annotations name them, and importing ``PasswordHasher`` (and
hashing with it) imports neither ``_batch`` nor :mod:`typing`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor
    from typing import Any, Protocol, TypeAlias, TypeVar

    T = TypeVar("T")
else:  # Executor is a protocol for type checkers; at run time a plain class, typing not imported
    Protocol = object

#: The names of the pool's threads start with this.
THREAD_NAME_PREFIX = "argonishche"

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


class Executor(Protocol):
    """What ``hash_many`` needs of its *executor*: a ``concurrent.futures.Executor``'s
    ``submit`` (any executor has it).  A protocol rather than ``concurrent.futures.Executor``
    itself, so that annotating with it does not import concurrent.futures (and logging) into
    every process that imports argonishche."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]: ...


#: ``progress=`` of ``hash_many``: called as ``progress(done, total)``; what it returns is ignored.
Progress: TypeAlias = Callable[[int, int], object]


def pool_size() -> int:
    """Threads of the shared pool: the CPUs this process may run on (its affinity mask where the
    OS has one, else ``os.cpu_count()``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux, or not allowed
        return os.cpu_count() or 1


def shared_pool() -> ThreadPoolExecutor:
    """The shared pool, made on first use (double-checked: one pool, whatever the races)."""
    global _pool
    pool = _pool
    if pool is None:
        with _lock:
            pool = _pool
            if pool is None:
                from concurrent.futures import ThreadPoolExecutor  # only once a pool is needed

                pool = _pool = ThreadPoolExecutor(max_workers=pool_size(),
                                                  thread_name_prefix=THREAD_NAME_PREFIX)
    return pool


def _forget_pool_after_fork() -> None:
    # The parent's pool threads do not exist in the child, but its queue and idle count do: a
    # call submitted to it would wait forever.  The lock may have been held at the fork.
    global _pool, _lock
    _pool = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_pool_after_fork)
