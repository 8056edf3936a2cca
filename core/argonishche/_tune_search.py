"""The search behind ``argonishche tune``'s Argon2id parameters (RFC 9106 section 4, steps 7 and
8): at the most memory per hash the budget allows, the most passes t whose hashes, run
*concurrency* at once, meet the latency target; if even t = 1 does not, less memory.

Two runs on one machine must agree, and the answer must hold for a server's slow hashes, not its
typical one.  What made runs disagree before, and what is done instead:

- **A candidate was the median of three batches**: a scheduling hiccup moved it, and the slow
  hashes did not count.  Now it is judged by the 95th percentile (p95) of every hash's latency,
  nearest rank (:func:`percentile`: with fewer than 20 hashes, the slowest), over at least
  :data:`MIN_SAMPLES` hashes, and :data:`MAX_SAMPLES` if their p95 is within :data:`CLOSE` of
  the target, where the noise decides the verdict (:func:`trial`).
- **Memory was whatever whole MiB** a ratio of two noisy latencies pointed at, and the search
  stopped "within 5 %" of where it was heading, so each run ended elsewhere in that band.  Now
  m is on a fixed grid (:func:`memory_grid`, 16 steps a doubling, 4.4 % apart), and the search
  ends only between two neighbours it measured, one meeting the target and the next not: two
  runs agree unless a verdict near the target flips, and then by one step.
- **One disturbed measurement decided**: other processes only ever slow hashes down, and a
  burst of their work during one candidate failed it, so the search settled below it where a
  quieter moment would not.  Now a candidate too slow is measured again, and the less slow of
  the two counts: failing takes two disturbed measurements (or a candidate truly too slow).
- **It gave up after 12 candidates**, t stepped down one pass at a time from a noisy estimate.
  Now each search keeps a bracket (:func:`largest_fitting`), measures only strictly inside it
  and bisects when a guess did not halve it, so it ends, and never leaves an untried t that
  could meet the target: a t too slow rules out every larger t at that m, and t = 1 too slow
  rules out that m and every larger one (time grows with both).

Every candidate is measured, never extrapolated: the guesses only choose what to measure next.
"""

from __future__ import annotations

import bisect
import math
import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ._argon2 import argon2_hash
from ._parameter_checks import DEFAULT_LIMITS

HASH_LEN = 32
#: Hashes a candidate is judged on, at least: with 20, the p95 is the second-slowest, so one
#: stalled hash does not decide.
MIN_SAMPLES = 20
#: Timed batches a candidate gets, at least (with many hashes at once, 20 come in fewer).
MIN_BATCHES = 3
#: Hashes a candidate whose p95 is within CLOSE of the target gets, at most.
MAX_SAMPLES = 60
CLOSE = 0.10
#: An untimed batch whose fastest hash took more than this many times the target is the
#: measurement: far too slow, and each batch of it costs seconds.  Not 2: that first batch
#: faults the memory in, which can make a first hash more than twice as slow as the next.
HOPELESS = 3.0
#: The first memory cost tried when the budget allows more (KiB): a pass over it takes tens of
#: milliseconds, and it is past the caches, so the guess made from it is close.
PILOT_KIB = 64 * 1024
GRID_STEPS_PER_DOUBLING = 16
#: From this memory cost up (KiB), the grid is rounded to whole MiB (a step is over 2.8 MiB).
WHOLE_MIB_FROM_KIB = 64 * 1024
#: OWASP's Password Storage Cheat Sheet, section "Argon2id"
#: (https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#argon2id):
#: its equally strong minimum configurations, as (m in KiB, t), each with p = 1: 46 MiB and 1
#: pass, 19 MiB and 2, 12 MiB and 3, 9 MiB and 4, 7 MiB and 5.  Compared on m and t only
#: (``_tune.meets_owasp``): more lanes do not lower the memory or passes a guess costs an
#: attacker.  They are on the memory grid, so that a search whose target allows one of them
#: finds it, not a grid point just below.
OWASP_MINIMUMS: tuple[tuple[int, int], ...] = (
    (47104, 1), (19456, 2), (12288, 3), (9216, 4), (7168, 5))


class Trial(NamedTuple):
    """One candidate's timed hashes: each one's latency, and each batch's wall time."""

    memory_cost: int
    time_cost: int
    parallelism: int
    latencies_ms: list[float]
    batch_seconds: list[float]
    concurrency: int
    #: 2 for a candidate too slow at first: measured again, the less slow measurement kept.
    measurements: int = 1

    @property
    def p95_ms(self) -> float:
        return percentile(self.latencies_ms, 95)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.latencies_ms)

    @property
    def hashes_per_second(self) -> float:
        return self.concurrency / statistics.median(self.batch_seconds)


def percentile(values: Sequence[float], q: int) -> float:
    """The *q*-th percentile by nearest rank: the ceil(q n / 100)-th smallest of the n values.
    A value that was measured, never one interpolated between two; with few values it is the
    largest (for q = 95, with fewer than 20), the cautious side for a latency."""
    ordered = sorted(values)
    return ordered[max(1, -(-q * len(ordered) // 100)) - 1]


def timed_batch(memory_cost: int, time_cost: int, parallelism: int, concurrency: int
                ) -> tuple[list[float], float]:
    """*concurrency* Argon2id hashes at once, one per thread: each one's milliseconds, and the
    batch's seconds."""
    latencies: list[float] = []
    errors: list[BaseException] = []
    start = threading.Barrier(concurrency + 1)

    def one(index: int) -> None:
        start.wait()
        began = time.perf_counter()
        try:
            argon2_hash(b"argonishche tune %d" % index, b"tune salt %6d" % index, type="id",
                        time_cost=time_cost, memory_cost=memory_cost,
                        parallelism=parallelism, hash_len=HASH_LEN, threads=parallelism)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
            errors.append(exc)
        latencies.append((time.perf_counter() - began) * 1e3)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    if errors:
        raise errors[0]
    return latencies, seconds


def trial(memory_cost: int, time_cost: int, parallelism: int, concurrency: int,
          target_ms: float, step: Callable[[str], None] | None = None) -> Trial:
    """Time these parameters until the verdict against *target_ms* is clear: an untimed batch
    (it faults the memory in and warms the caches; if even its fastest hash took HOPELESS times
    the target, it is the measurement), then timed batches: MIN_BATCHES, and no more if every
    hash was over the target by more than CLOSE; else MIN_SAMPLES hashes, and MAX_SAMPLES if
    their p95 is then within CLOSE of the target.  How many is decided once, at MIN_SAMPLES:
    stopping whenever the p95 happened to leave the band would push it away from the target."""
    label = f"t={time_cost} m={memory_cost:,} KiB p={parallelism}"

    def batch() -> tuple[list[float], float]:
        if step is not None:
            step(label)
        return timed_batch(memory_cost, time_cost, parallelism, concurrency)

    first, seconds = batch()
    if min(first) > HOPELESS * target_ms:
        return Trial(memory_cost, time_cost, parallelism, first, [seconds], concurrency)
    latencies: list[float] = []
    batches: list[float] = []
    wanted, decided = MIN_SAMPLES, False
    while len(batches) < MIN_BATCHES or len(latencies) < wanted:
        each, took = batch()
        latencies += each
        batches.append(took)
        if len(batches) == MIN_BATCHES and min(latencies) > target_ms * (1 + CLOSE):
            break  # clearly too slow: the p95 is no less than the fastest hash
        if not decided and len(batches) >= MIN_BATCHES and len(latencies) >= MIN_SAMPLES:
            decided = True
            if abs(percentile(latencies, 95) - target_ms) <= CLOSE * target_ms:
                wanted = MAX_SAMPLES
    return Trial(memory_cost, time_cost, parallelism, latencies, batches, concurrency)


def lanes_for(concurrency: int) -> int:
    """RFC 9106 step 2: the CPUs over the concurrent hashes, at least 1 (and at most 64)."""
    return max(1, min(os.cpu_count() or 1, 64) // concurrency)


def rounded(memory_cost: int, parallelism: int) -> int:
    """*memory_cost* KiB down to whole MiB, and to a multiple of 4p KiB as Argon2 uses it."""
    unit = 1024 if memory_cost >= 1024 + 4 * parallelism else 4 * parallelism
    kib = memory_cost // unit * unit
    return max(kib - kib % (4 * parallelism), 8 * parallelism)


def most_memory(budget_mib: int, concurrency: int, parallelism: int) -> int:
    """RFC 9106 step 3: the most KiB each concurrent hash can afford, within argonishche's
    default limit for hashes it verifies."""
    limit = DEFAULT_LIMITS.max_memory_cost or 2**32 - 1
    return rounded(min(budget_mib * 1024 // concurrency, limit), parallelism)


def memory_grid(most: int, parallelism: int) -> list[int]:
    """The memory costs (KiB) the search may choose, smallest first: 2^(j/16) KiB (every 16th a
    power of two), rounded to whole MiB from WHOLE_MIB_FROM_KIB up, and to a multiple of 4p KiB
    (what Argon2 uses: for p a power of two, whole MiB are); OWASP's minimums' sizes
    (:func:`at_least`); from Argon2's least (8p) up to *most*, the budget's own size, which is
    the last.  The grid does not depend on the budget, so runs with different budgets choose
    among the same sizes."""
    least, unit = 8 * parallelism, 4 * parallelism
    values = {most} | {at_least(m, parallelism) for m, _ in OWASP_MINIMUMS}
    j = 0
    while (exact := 2 ** (j / GRID_STEPS_PER_DOUBLING)) < most:
        if exact >= WHOLE_MIB_FROM_KIB:
            whole = round(exact / 1024) * 1024
            values.add(whole - whole % unit)
        else:
            values.add(round(exact / unit) * unit)
        j += 1
    return sorted(value for value in values if least <= value <= most)


def at_least(memory_cost: int, parallelism: int) -> int:
    """The least memory cost (KiB) of at least *memory_cost* that Argon2 uses whole with
    *parallelism* lanes: a multiple of 4p, and at least 8p."""
    unit = 4 * parallelism
    return max(-(-memory_cost // unit) * unit, 8 * parallelism)


def max_passes(memory_cost: int) -> int:
    """The most passes argonishche's default limits verify at *memory_cost* (max_time_cost, and
    max_work over the memory)."""
    most = DEFAULT_LIMITS.max_time_cost or 2**32 - 1
    if DEFAULT_LIMITS.max_work:
        most = min(most, DEFAULT_LIMITS.max_work // memory_cost)
    return max(most, 1)


def largest_fitting(lo: int, hi: int, fits: Callable[[int], bool],
                    guess: Callable[[int, int], int], lo_measured: bool = False) -> int:
    """The largest position that meets the target, knowing that *lo* does (-1: none known) and
    *hi* does not (one past the last position: none known), where a position too slow rules out
    every larger one.  Each position measured (``fits``) is strictly inside the bracket, so the
    search ends, and it ends only when *lo* and *hi* are neighbours; *guess* picks the next
    position, but once both ends were measured a guess that did not halve the bracket is
    followed by a bisection, so a poor guess costs a few measurements, not one per position."""
    hi_measured = bisect_next = False
    while hi - lo > 1:
        position = (lo + hi) // 2 if bisect_next else guess(lo, hi)
        position = min(max(position, lo + 1), hi - 1)
        width = hi - lo
        if fits(position):
            lo, lo_measured = position, True
        else:
            hi, hi_measured = position, True
        bisect_next = lo_measured and hi_measured and 2 * (hi - lo) > width
    return lo


def aim(known: dict[int, tuple[float, float]], lo: int, hi: int, target: float) -> float:
    """Where along an axis the latency should reach *target*, from the (x, latency) points
    measured at each *known* position: interpolated between the bracket's ends *lo* and *hi*
    when both were measured; else along the line through the two points nearest the end not
    measured (all on one side of the target); with one point, in proportion to x (as if all the
    time grew with it)."""
    if lo in known and hi in known:
        (x0, y0), (x1, y1) = known[lo], known[hi]
    else:
        side = sorted(xy for position, xy in known.items() if position <= lo or position >= hi)
        pair = side[-2:] if lo in known else side[:2]
        (x0, y0), (x1, y1) = pair[0], pair[-1]
        if len(pair) < 2 or y1 <= y0:
            x, y = pair[-1] if lo in known else pair[0]
            return x * target / y
    if y1 <= y0:  # noise: no slope to follow
        return (x0 + x1) / 2
    return x0 + (target - y0) * (x1 - x0) / (y1 - y0)


def recommend(latency_ms: float, concurrency: int, budget_mib: int,
              step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Argon2id parameters for this machine (see the module docstring); what was tried too:
    ``chosen`` is None if even the least memory Argon2 allows is too slow at one pass."""
    parallelism = lanes_for(concurrency)
    grid = memory_grid(most_memory(budget_mib, concurrency, parallelism), parallelism)
    measured: dict[tuple[int, int], Trial] = {}

    def fits(memory_cost: int, time_cost: int) -> bool:
        key = (memory_cost, time_cost)
        if key not in measured:  # a verdict is never asked for twice
            first = trial(memory_cost, time_cost, parallelism, concurrency, latency_ms, step)
            if first.p95_ms > latency_ms:  # too slow, or other processes were busy: again
                again = trial(memory_cost, time_cost, parallelism, concurrency, latency_ms, step)
                first = min(first, again, key=lambda t: t.p95_ms)._replace(measurements=2)
            measured[key] = first
        return measured[key].p95_ms <= latency_ms

    # Step 8, first: the most memory at which one pass meets the target (the budget's own
    # size if it does); the first guess is PILOT_KIB when the budget allows more.
    pilot = max(0, bisect.bisect_right(grid, PILOT_KIB) - 1)

    def memory_guess(lo: int, hi: int) -> int:
        known = {grid.index(t.memory_cost): (float(t.memory_cost), t.p95_ms)
                 for t in measured.values() if t.time_cost == 1}
        if not known:
            return pilot
        return bisect.bisect_right(grid, aim(known, lo, hi, latency_ms)) - 1

    memory_at = largest_fitting(-1, len(grid), lambda i: fits(grid[i], 1), memory_guess)
    found: dict[str, Any] = {"latency_target_ms": latency_ms, "concurrency": concurrency,
                             "budget_mib": budget_mib, "parallelism": parallelism,
                             "chosen": None}
    if memory_at >= 0:
        # ... then the most passes at that memory: position i is t = i + 1, and t = 1 is known
        # to meet the target.
        memory_cost = grid[memory_at]

        def passes_guess(lo: int, hi: int) -> int:
            known = {t.time_cost - 1: (float(t.time_cost), t.p95_ms)
                     for t in measured.values() if t.memory_cost == memory_cost}
            return math.floor(min(aim(known, lo, hi, latency_ms), 2.0**31)) - 1

        passes_at = largest_fitting(0, max_passes(memory_cost),
                                    lambda i: fits(memory_cost, i + 1), passes_guess,
                                    lo_measured=True)
        found["chosen"] = measured[memory_cost, passes_at + 1]
    found["trials"] = list(measured.values())
    return found
