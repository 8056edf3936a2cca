"""How the benchmark measures: subjects timed interleaved, hot or cold, and summed up as medians.

Time is wall time (``perf_counter``), never CPU time; cycles are core cycles (see the package's
docstring for why).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from ._clock import lib
from .machine import last_level_cache_bytes
from .memory_use import MemoryUse, read_counters
from .progress import Progress

#: The modes, as every table names them.  Whether work memory was reused is not a property of
#: the mode but of each row (the memory column): hot hashes with the default allocator reuse it
#: unless it went back to the OS, the ``system`` allocator's and the peers' never do.
MODES = {
    "hot": "hot: steady state, same inputs back to back in one process",
    "cold": "cold: one hash per sample after evicting the caches, work memory allocated "
            "for each hash (allocator=system)",
    "first": "first hash in a new process: one per sample, timed after import and a tiny hash",
}


@dataclass
class Subject:
    name: str
    run: Callable[[], bytes]
    samples: list[float] = field(default_factory=list)   # seconds per call, one per repetition
    #: What the timed calls' work memory was: reused or fresh (the memory column).
    memory: MemoryUse = field(default_factory=MemoryUse)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """(max - min) / median of the samples: 0.05 means the repetitions varied by 5 %."""
        return spread(self.samples)


def spread(samples: list[float]) -> float:
    return (max(samples) - min(samples)) / statistics.median(samples) if samples else 0.0


def interquartile(samples: list[float]) -> float:
    """(Q3 - Q1) / median: how much the middle half of the samples varied."""
    if len(samples) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return (q3 - q1) / statistics.median(samples)


def core_clock_hz(rounds: int = 500_000) -> float:
    """Core cycles per second, from the fastest of many short timed dependent-add chains.

    Short runs (about a millisecond) fit between preemptions on a busy machine, and the fastest
    of many is the one that was not interrupted.
    """
    best = float("inf")
    for _ in range(30):
        started = time.perf_counter()
        lib.argonishche_dependent_adds(rounds)
        best = min(best, time.perf_counter() - started)
    return 8 * rounds / best


class CacheEvictor:
    """Calling it reads a buffer of at least 64 MiB and twice the last-level cache, so that
    the next hash finds none of its data (or its page-table entries) in any cache.

    The buffer is written once when made (so its pages are real, not the shared zero page) and
    searched for a byte it does not hold: memchr reads every cache line at memory speed, about
    2 ms for 64 MiB.  A memset would not do: glibc writes large blocks with non-temporal stores,
    which bypass the caches.
    """

    def __init__(self, size: int | None = None):
        self.size = size or max(64 << 20, 2 * last_level_cache_bytes())
        self.buffer = bytearray(b"\x01") * self.size

    def __call__(self) -> None:
        self.buffer.find(0)


def check_same_tags(subjects: list[Subject]) -> bytes:
    """Refuse to time subjects that disagree: a fast wrong answer is no result.  The tag they
    agree on."""
    tags = {s.name: s.run() for s in subjects}
    if len(set(tags.values())) != 1:
        detail = ", ".join(f"{name}: {tag.hex()[:16]}" for name, tag in tags.items())
        raise RuntimeError(f"subjects disagree, nothing timed: {detail}")
    return next(iter(tags.values()))


def _calls_for(run: Callable[[], bytes], budget: float) -> int:
    """How many back-to-back calls fill about *budget* seconds (at least one)."""
    started = time.perf_counter()
    run()
    once = max(time.perf_counter() - started, 1e-7)
    return max(1, int(budget / once))


class _Sampled(Protocol):
    name: str
    samples: list[float]


@contextmanager
def kept_whole_rounds(subjects: Sequence[_Sampled]) -> Iterator[None]:
    """Interrupted (Ctrl-C), every subject keeps the samples of the rounds all of them
    finished, so that what was measured stays comparable; KeyboardInterrupt propagates."""
    try:
        yield
    except KeyboardInterrupt:
        complete = min(len(s.samples) for s in subjects)
        for s in subjects:
            del s.samples[complete:]
        raise


def rounds(subjects: Sequence[_Sampled], repetitions: int, progress: Progress | None,
           label: str) -> Iterator[int]:
    """The index of each subject in turn, *repetitions* rounds, the order rotating by one each
    round (so no subject always follows the same other), each step shown on *progress*."""
    order = list(range(len(subjects)))
    for repetition in range(repetitions):
        shift = repetition % len(subjects)
        for index in order[shift:] + order[:shift]:
            if progress:
                progress.step(f"{label}rep {repetition + 1}/{repetitions} "
                              f"{subjects[index].name.strip()}")
            yield index


def time_interleaved(subjects: list[Subject], repetitions: int, budget: float,
                     progress: Progress | None = None, *, label: str = "",
                     evict: Callable[[], None] | None = None) -> None:
    """Fill each subject's samples: *repetitions* rounds, every subject once per round.

    Hot (no *evict*): a sample is as many back-to-back calls as fill *budget*, after one
    warm-up call that sizes it.  Cold: a sample is one call, right after ``evict()``.  Around
    each sample, outside the timed part, each subject's ``memory`` counts whether its calls'
    work memory was reused or fresh.
    Interrupted (Ctrl-C), every subject keeps the samples of the rounds all of them finished,
    so that what was measured stays comparable, and KeyboardInterrupt propagates.
    """
    calls = [1 if evict else _calls_for(s.run, budget) for s in subjects]
    with kept_whole_rounds(subjects):
        for index in rounds(subjects, repetitions, progress, label):
            subject = subjects[index]
            if evict:
                evict()
            before = read_counters()
            started = time.perf_counter()
            for _ in range(calls[index]):
                subject.run()
            elapsed = time.perf_counter() - started
            subject.memory.add(before, read_counters(), calls[index])
            subject.samples.append(elapsed / calls[index])
