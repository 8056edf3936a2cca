"""``argonishche tune``: measure the kernels properly, remember the choice, and recommend Argon2id
parameters for this machine.

Kernels: the same in-cache workouts as the start-up selection (:mod:`argonishche._selection`),
with enough rounds to beat the noise (400 by default, against 41 at start-up), shown as core
cycles per Argon2 block and per BLAKE2b byte; the choice is remembered as
``ARGONISHCHE_SELECT=measure`` remembers it.

Parameters, by RFC 9106 section 4's procedure ("Parameter Choice"), with the three inputs it asks
for: the time each hash may take (the latency target), and, since a server hashes several
passwords at once, the number of concurrent hashes and the memory all of them together may use:

1. type Argon2id (step 1: the choice when side channels matter or are unknown);
2. threads per hash h: the CPUs over the concurrent hashes, at least 1 (step 2); as many lanes;
3. memory m: the budget over the concurrent hashes, the most each can afford (step 3), and no
   more than argonishche's default limit for hashes it verifies (4 GiB);
4. a 16-byte salt and a 32-byte tag (steps 5 and 6: 128 bits of salt suffice; RFC 9106's
   recommended profiles take 256-bit tags);
5. the largest t whose hashes, run that many at once, stay within the target; if even t = 1
   does not, a smaller m (step 8), measured, never extrapolated: each candidate is timed as
   *concurrency* hashes at once, each on its own thread, through the default allocator, as a
   server's would run.

Nothing here runs at import or on the hash path: only ``argonishche tune`` imports it.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from . import _registry
from ._argon2 import argon2_hash
from ._params import DEFAULT_LIMITS

#: Rounds of the kernel measurement (each times every backend once per algorithm).
KERNEL_ROUNDS = 400
KERNEL_BUDGET_SECONDS = 5.0
#: What RFC 9106 recommends a hash may take on a front-end server: "0.5 seconds on a 2 GHz CPU
#: using 2 cores" (section 4, example "Frontend server authentication").
DEFAULT_LATENCY_MS = 500.0
#: RFC 9106's first recommended profile uses 2 GiB per hash (section 4).
DEFAULT_MIB_PER_HASH = 2048
SALT_LEN, HASH_LEN = 16, 32
#: Timed batches per candidate (the median counts), after one untimed batch that faults in the
#: work memory and warms the caches.
REPETITIONS = 3
#: The most candidates the search times before it settles for the best that met the target.
MAX_TRIALS = 12


class Trial(NamedTuple):
    """One candidate's batches: each hash's wall time, and the batches' wall times."""

    memory_cost: int
    time_cost: int
    parallelism: int
    latencies_ms: list[float]
    batch_seconds: list[float]
    concurrency: int

    @property
    def latency_ms(self) -> float:
        return statistics.median(self.latencies_ms)

    @property
    def hashes_per_second(self) -> float:
        return self.concurrency / statistics.median(self.batch_seconds)


def physical_memory_mib() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
    except (AttributeError, OSError, ValueError):
        return None


def default_budget_mib(concurrency: int) -> int:
    """RFC 9106's 2 GiB per concurrent hash, but at most half of the machine's memory."""
    total = physical_memory_mib()
    wanted = DEFAULT_MIB_PER_HASH * concurrency
    return wanted if total is None else min(wanted, total // 2)


# ---- kernels -----------------------------------------------------------------------------------


def tune_kernels(rounds: int = KERNEL_ROUNDS, step: Callable[[str], None] | None = None
                 ) -> dict[str, Any]:
    """Measure every usable backend's kernels, select and remember; what was found, as data."""
    from ._bench.machine import machine_description
    from ._bench.timing import core_clock_hz

    reg = _registry.get()
    timings = reg.calibrate(rounds=rounds, budget=KERNEL_BUDGET_SECONDS, step=step)
    hz = core_clock_hz()
    kernels: dict[str, Any] = {}
    for algorithm, per_backend in timings.items():
        choice = reg.choices[algorithm]
        unit_bytes = 1024 if algorithm == "argon2" else 1  # cycles per block / per byte
        kernels[algorithm] = {
            "unit": "block" if algorithm == "argon2" else "byte",
            "backends": {name: {"ns_per_kib": ns, "cycles": ns * 1e-9 * hz * unit_bytes / 1024}
                         for name, ns in sorted(per_backend.items(), key=lambda item: item[1])},
            "selected": choice.backend, "how": choice.how, "why": choice.why,
            "noise": choice.noise, "record": choice.record,
        }
    return {"machine": machine_description(), "core_clock_ghz": hz / 1e9, "kernels": kernels}


def render_kernels(found: dict[str, Any]) -> list[str]:
    lines = [f"argonishche tune on {found['machine']}",
             f"Kernels: in-cache workouts, interleaved, each backend's fastest sample; core clock "
             f"{found['core_clock_ghz']:.2f} GHz (timed dependent additions)"]
    records = set()
    for algorithm, result in found["kernels"].items():
        backends = result["backends"]
        fastest = min(b["ns_per_kib"] for b in backends.values())
        lines.append(f"  {algorithm} (cycles per {result['unit']}):")
        for name, b in backends.items():
            mark = f"  <- selected ({result['how']}): {result['why']}" \
                if name == result["selected"] else ""
            digits = 0 if result["unit"] == "block" else 2
            lines.append(f"    {name:<10} {b['cycles']:>8.{digits}f}  "
                         f"{b['ns_per_kib'] / fastest:>5.2f}x{mark}")
        if result["record"]:
            records.add(result["record"])
    lines += [f"  remembered in {path}" for path in sorted(records)]
    return lines


# ---- parameters --------------------------------------------------------------------------------


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
          step: Callable[[str], None] | None = None, hopeless_ms: float | None = None) -> Trial:
    """Time these parameters: an untimed batch (it faults the memory in), then REPETITIONS
    batches; a first batch slower than *hopeless_ms* is the measurement (no need to be precise
    about what is far too slow, and each batch of it costs seconds)."""
    label = f"t={time_cost} m={memory_cost // 1024} MiB p={parallelism}"
    latencies, batches = [], []
    for repetition in range(REPETITIONS + 1):
        if step is not None:
            step(label)
        each, seconds = timed_batch(memory_cost, time_cost, parallelism, concurrency)
        if repetition or (hopeless_ms is not None and min(each) > hopeless_ms):
            latencies += each
            batches.append(seconds)
            if not repetition:
                break
    return Trial(memory_cost, time_cost, parallelism, latencies, batches, concurrency)


def lanes_for(concurrency: int) -> int:
    return max(1, min(os.cpu_count() or 1, 64) // concurrency)


def rounded(memory_cost: int, parallelism: int) -> int:
    """*memory_cost* KiB down to whole MiB, and to a multiple of 4p KiB as Argon2 uses it."""
    unit = 1024 if memory_cost >= 1024 + 4 * parallelism else 4 * parallelism
    kib = memory_cost // unit * unit
    return max(kib - kib % (4 * parallelism), 8 * parallelism)


def recommend(latency_ms: float, concurrency: int, budget_mib: int,
              step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Argon2id parameters for this machine (see the module docstring); what was tried too."""
    parallelism = lanes_for(concurrency)
    smallest = 8 * parallelism
    limit = DEFAULT_LIMITS.max_memory_cost or 2**32 - 1
    memory_cost = rounded(min(budget_mib * 1024 // concurrency, limit), parallelism)
    trials: list[Trial] = []

    def run(time_cost: int) -> Trial:
        trials.append(trial(memory_cost, time_cost, parallelism, concurrency, step,
                            hopeless_ms=2 * latency_ms))
        return trials[-1]

    # Step 8, first: the most memory at which one pass fits the target.  Time grows a little
    # faster than memory (page faults, caches), so each guess aims 5 % under the target, from
    # the nearest trial that fitted, or the one that did not; within 5 % of the target, or of
    # the least memory that was too slow, is close enough.
    best: Trial | None = None
    too_slow: int | None = None   # the least memory found too slow at one pass
    while len(trials) < MAX_TRIALS:
        now = run(1)
        if now.latency_ms <= latency_ms:
            best = now
        else:
            too_slow = memory_cost
        if too_slow is None:
            break  # all the memory the budget allows fits
        base = best or now
        guess = base.memory_cost * latency_ms / base.latency_ms * 0.95
        if best is not None:
            if too_slow <= best.memory_cost * 1.05 or guess <= best.memory_cost * 1.05:
                break
            guess = min(guess, (best.memory_cost + too_slow) / 2)
        elif memory_cost <= smallest:
            break  # even the least memory Argon2 allows is too slow
        following = rounded(max(int(guess), smallest), parallelism)
        if following == memory_cost:
            break
        memory_cost = following
    if best is None:
        return {"latency_target_ms": latency_ms, "concurrency": concurrency,
                "budget_mib": budget_mib, "parallelism": parallelism, "trials": trials,
                "chosen": None}
    # ... then the most passes that still fit, at that memory.
    memory_cost = best.memory_cost
    time_cost = min(estimated_passes(trials, latency_ms), max_passes(memory_cost))
    while time_cost > best.time_cost and len(trials) < MAX_TRIALS:
        now = run(time_cost)
        if now.latency_ms <= latency_ms:
            best = now
            time_cost = min(estimated_passes(trials, latency_ms), max_passes(memory_cost))
        else:
            time_cost -= 1
    return {"latency_target_ms": latency_ms, "concurrency": concurrency,
            "budget_mib": budget_mib, "parallelism": parallelism, "trials": trials,
            "chosen": best}


def estimated_passes(trials: list[Trial], latency_ms: float) -> int:
    """The most passes the target allows at the last trial's memory cost, from its timings:
    one trial gives the cost of a pass (all of it, pessimistically); two at different t give
    the fixed cost too."""
    last = trials[-1]
    same = [t for t in trials if t.memory_cost == last.memory_cost]
    if len(same) >= 2 and same[-1].time_cost != same[-2].time_cost:
        a, b = same[-2], same[-1]
        per_pass = (b.latency_ms - a.latency_ms) / (b.time_cost - a.time_cost)
        fixed = b.latency_ms - per_pass * b.time_cost
    else:
        per_pass, fixed = last.latency_ms / last.time_cost, 0.0
    if per_pass <= 0:
        return last.time_cost + 1
    return max(1, int((latency_ms - fixed) / per_pass))


def max_passes(memory_cost: int) -> int:
    """The most passes argonishche's default limits verify at *memory_cost* (max_time_cost, and
    max_work over the memory)."""
    most = DEFAULT_LIMITS.max_time_cost or 2**32 - 1
    if DEFAULT_LIMITS.max_work:
        most = min(most, DEFAULT_LIMITS.max_work // memory_cost)
    return max(most, 1)


def settings_lines(t: int, m: int, p: int) -> list[str]:
    """The chosen parameters as argon2-cffi, argonishche, Django and a PHC string spell them."""
    return [
        f"argon2-cffi:  argon2.PasswordHasher(time_cost={t}, memory_cost={m}, parallelism={p}, "
        f"hash_len={HASH_LEN}, salt_len={SALT_LEN})",
        f"argonishche:  argonishche.PasswordHasher(time_cost={t}, memory_cost={m}, "
        f"parallelism={p}, hash_len={HASH_LEN}, salt_len={SALT_LEN})",
        f"Django:       class TunedArgon2PasswordHasher(Argon2PasswordHasher): time_cost = {t}; "
        f"memory_cost = {m}; parallelism = {p}",
        "              (subclass django.contrib.auth.hashers' or argonishche.contrib.django's "
        "Argon2PasswordHasher; list it first in PASSWORD_HASHERS)",
        f"PHC:          $argon2id$v=19$m={m},t={t},p={p}",
    ]


def render_parameters(found: dict[str, Any]) -> list[str]:
    lines = [f"Argon2id parameters (RFC 9106 section 4): at most {found['latency_target_ms']:,.0f}"
             f" ms per hash with {found['concurrency']} at once, {found['budget_mib']:,} MiB for "
             f"all of them; {found['parallelism']} lane(s) and thread(s) per hash "
             f"({os.cpu_count()} CPUs over {found['concurrency']} concurrent hashes)"]
    for t in found["trials"]:
        met = "meets the target" if t.latency_ms <= found["latency_target_ms"] else "too slow"
        lines.append(f"  t={t.time_cost:<3} m={t.memory_cost:>9,} KiB: {t.latency_ms:>9,.1f} ms "
                     f"per hash (median; {min(t.latencies_ms):,.1f}..{max(t.latencies_ms):,.1f}),"
                     f" {t.hashes_per_second:,.1f} hashes/s: {met}")
    chosen = found["chosen"]
    if chosen is None:
        lines.append("  nothing meets the target, even at the smallest memory: allow more time")
        return lines
    lines.append(f"Recommended: t={chosen.time_cost}, m={chosen.memory_cost:,} KiB "
                 f"({chosen.memory_cost / 1024:,.0f} MiB), p={chosen.parallelism}: "
                 f"{chosen.latency_ms:,.1f} ms per hash, {chosen.hashes_per_second:,.1f} "
                 f"hashes/s with {found['concurrency']} at once")
    lines += ["  " + line for line in settings_lines(chosen.time_cost, chosen.memory_cost,
                                                      chosen.parallelism)]
    return lines


def as_json(kernels: dict[str, Any] | None, parameters: dict[str, Any] | None
            ) -> dict[str, Any]:
    result: dict[str, Any] = {"kernels": kernels}
    if parameters is not None:
        chosen = parameters["chosen"]
        result["parameters"] = {
            **{k: v for k, v in parameters.items() if k not in ("trials", "chosen")},
            "trials": [{**t._asdict(), "latency_ms": t.latency_ms,
                        "hashes_per_second": t.hashes_per_second} for t in parameters["trials"]],
            "chosen": None if chosen is None else {
                "type": "id", "time_cost": chosen.time_cost, "memory_cost": chosen.memory_cost,
                "parallelism": chosen.parallelism, "hash_len": HASH_LEN, "salt_len": SALT_LEN,
                "latency_ms": chosen.latency_ms, "hashes_per_second": chosen.hashes_per_second,
                "settings": settings_lines(chosen.time_cost, chosen.memory_cost,
                                           chosen.parallelism)},
        }
    return result
