"""``argonishche tune``: measure the kernels properly, remember the choice, and recommend Argon2id
parameters for this machine.

Kernels: the same in-cache workouts as the start-up selection (:mod:`argonishche._selection`),
with enough rounds to beat the noise (400 by default, against 41 at start-up), shown as core
cycles per Argon2 block and per BLAKE2b byte; the choice is remembered as
``ARGONISHCHE_SELECT=measure`` remembers it.

Parameters, by RFC 9106 section 4's procedure ("Parameter Choice"), with the three inputs it asks
for: the time each hash may take (the latency target, met by the 95th percentile of the hashes),
and, since a server hashes several passwords at once, the number of concurrent hashes and the
work memory all of them together may use:

1. type Argon2id (step 1: the choice when side channels matter or are unknown);
2. threads per hash h: the CPUs over the concurrent hashes, at least 1 (step 2); as many lanes;
3. memory m: the budget over the concurrent hashes, the most each can afford (step 3), and no
   more than argonishche's default limit for hashes it verifies (4 GiB);
4. a 16-byte salt and a 32-byte tag (steps 5 and 6: 128 bits of salt suffice; RFC 9106's
   recommended profiles take 256-bit tags);
5. the largest t whose hashes, run that many at once, stay within the target; if even t = 1
   does not, a smaller m (step 8): the search, and why two runs agree, is
   :mod:`argonishche._tune_search`.

**The budget** is the process's work-memory budget (:func:`argonishche.memory_budget`) unless
``--memory-budget`` says otherwise, since that is what a deployed process admits its hashes
against.  A plan of concurrent hashes needing more than the process's budget is refused before
anything is measured, since they would all start at once; a larger budget whose plan fits all
the same is measured with the process's raised to it for the run (:func:`plan_budget`).  The
output says how many hashes of the recommended size the budget holds at once (beyond that,
hashes wait for room in arrival order), and prints ``ARGONISHCHE_MEMORY_BUDGET_MIB`` when
argonishche's default budget would hold fewer than the concurrency asked for.

**OWASP's minimums** (:data:`OWASP_MINIMUMS`): a recommendation, or constraints, below all of
them get a warning, with the latency or budget that would reach one, measured.  A machine busy
with other work when the search starts is said to be (:func:`busy`): its timings do not repeat.

Nothing here runs at import or on the hash path: only ``argonishche tune`` imports it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from . import _memory_limits, _registry, _tune_search, _work_memory
from ._hash_call import memory_size
from ._tune_search import HASH_LEN, OWASP_MINIMUMS, Trial, at_least
from ._wording import counted, noun, stated
from .exceptions import ParameterError

#: Rounds of the kernel measurement (each times every backend once per algorithm).
KERNEL_ROUNDS = 400
KERNEL_BUDGET_SECONDS = 5.0
#: What RFC 9106 recommends a hash may take on a front-end server: "0.5 seconds on a 2 GHz CPU
#: using 2 cores" (section 4, example "Frontend server authentication").
DEFAULT_LATENCY_MS = 500.0
#: The longest --latency: a minute per hash (RFC 9106's slowest example, disk encryption, takes
#: 3 s); each candidate is timed as 20 or more such hashes, so a search at it takes hours.
MAX_LATENCY_MS = 60_000.0
SALT_LEN = 16
MIB = 2**20
#: A load average above this share of the CPUs makes timings unrepeatable (``bench``'s verdict).
BUSY_LOAD_PER_CPU = 0.25

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
        why = result["why"]
        # "(forced): forced by ARGONISHCHE_BACKEND=..." would say it twice: the why alone then.
        how = "" if stated(result["how"], why) == why else f" ({result['how']})"
        for name, b in backends.items():
            mark = f"  <- selected{how}: {why}" if name == result["selected"] else ""
            digits = 0 if result["unit"] == "block" else 2
            lines.append(f"    {name:<10} {b['cycles']:>8.{digits}f}  "
                         f"{b['ns_per_kib'] / fastest:>5.2f}x{mark}")
        if result["record"]:
            records.add(result["record"])
    lines += [f"  remembered in {path}" for path in sorted(records)]
    return lines


# ---- the budget --------------------------------------------------------------------------------


class Budget(NamedTuple):
    """The work memory tune plans all concurrent hashes within, and the process's budgets."""

    mib: int
    #: Where ``mib`` came from: ``--memory-budget``, or the process's budget and its source.
    source: str
    #: ``mib`` was given (``--memory-budget``), not the process's budget.
    given: bool
    #: The process's work-memory budget when tune started, and where it came from.
    process_mib: int
    process_source: str
    #: argonishche's default budget here (no variable, no call): what a process deployed without
    #: ARGONISHCHE_MEMORY_BUDGET_MIB gets.
    default_mib: int
    default_source: str
    #: How long a hash waits for room before MemoryBudgetTimeout.
    wait_seconds: float

    @property
    def raised(self) -> bool:
        """The process's budget is raised to ``mib`` for the run."""
        return self.mib > self.process_mib


def plan_budget(given_mib: int | None, concurrency: int = 1) -> Budget:
    """tune's budget: *given_mib* (``--memory-budget``), else the process's work-memory budget.

    One above the process's budget is measured with the process's raised to it for the run
    (:func:`budget_for_run`) only where the search cannot use it all (each hash is at most
    argonishche's default limit, 4 GiB): a plan of *concurrency* hashes at the most memory each
    can have (:func:`_tune_search.most_memory`) that needs more than the process's budget is
    refused, naming the variable that gives the process that much, since the process would start
    them all at once.  What the process cannot have at all
    (:func:`argonishche._memory_limits.memory_limit`: its cgroup limit, physical memory or
    RLIMIT_AS/RLIMIT_DATA) is refused too: hashes that swap or are OOM-killed measure nothing a
    server would see.

    :raises ParameterError: the plan needs more than the process's budget, or *given_mib* is
        more than the process can have.
    """
    state = _work_memory.memory_budget()
    default, default_source = _memory_limits.default_budget()
    process_mib = state.budget // MIB
    if given_mib is None:
        mib, source = process_mib, f"the process's work-memory budget: {state.source}"
    else:
        mib, source = given_mib, f"--memory-budget {given_mib}"
        limit = _memory_limits.memory_limit()
        if limit is not None and given_mib * MIB > limit[0]:
            raise ParameterError(
                f"--memory-budget {given_mib:,} MiB is more than this process can have at all "
                f"({limit[1]}: {limit[0] // MIB:,} MiB): its hashes would swap or be killed, "
                f"and their timings would say nothing about a server; give at most "
                f"{limit[0] // MIB}")
    parallelism = _tune_search.lanes_for(concurrency)
    per_hash = memory_size(_tune_search.most_memory(mib, concurrency, parallelism), parallelism)
    if concurrency * per_hash > state.budget:
        plan_mib = -(-concurrency * per_hash // MIB)
        raise ParameterError(
            f"{source} with --concurrency {concurrency} plans {concurrency} "
            f"{'hash' if concurrency == 1 else 'hashes'} at once of {_mib(per_hash)} each, "
            f"{plan_mib:,} MiB in all: more than this process's work-memory budget, "
            f"{process_mib:,} MiB ({state.source}); give at most --memory-budget {process_mib} "
            f"(or a smaller --concurrency), or set ARGONISHCHE_MEMORY_BUDGET_MIB={plan_mib} if "
            f"the process may have that much")
    return Budget(mib, source, given_mib is not None, process_mib, state.source, default // MIB,
                  default_source, state.wait_seconds)


@contextmanager
def budget_for_run(budget: Budget) -> Iterator[None]:
    """The process's work-memory budget at least ``budget.mib`` while the parameters are
    measured (so that no hash waits for room and times the wait), then as it was."""
    with _work_memory.raised_to(budget.mib, f"raised by argonishche tune --memory-budget "
                                            f"{budget.mib}"):
        yield


def allowance(chosen: Trial, concurrency: int, budget: Budget) -> dict[str, Any]:
    """What the budget allows at the chosen parameters: hashes at once in tune's budget and in
    the default one, and the variable a deployment needs if the default holds fewer than asked
    for (tune's budget, which holds them: the search chose m within it)."""
    per_hash = memory_size(chosen.memory_cost, chosen.parallelism)
    default_at_once = budget.default_mib * MIB // per_hash
    return {"per_hash_bytes": per_hash, "at_once": budget.mib * MIB // per_hash,
            "default_at_once": default_at_once,
            "variable": f"ARGONISHCHE_MEMORY_BUDGET_MIB={budget.mib}"
            if default_at_once < concurrency else None}


# ---- OWASP's minimums --------------------------------------------------------------------------


def meets_owasp(memory_cost: int, time_cost: int) -> bool:
    """At or above one of :data:`OWASP_MINIMUMS` in both m and t."""
    return any(memory_cost >= m and time_cost >= t for m, t in OWASP_MINIMUMS)


def owasp_check(found: dict[str, Any], budget: Budget,
                step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Whether the chosen parameters reach one of OWASP's minimums; if not (or nothing was
    chosen), what would make the search's answer reach one, measured as a candidate is:

    - with a budget that allows 46 MiB per hash, the latency of one pass over 46 MiB (the
      search then takes at least that memory: OWASP's sizes are on its grid);
    - with a smaller one that allows 7 MiB or more, the latency at the most memory it allows of
      the fewest passes that reach a minimum there (the search then takes those passes);
    - with less, the budget that allows 7 MiB per hash, and the latency of 5 passes over it.
    """
    chosen, concurrency = found["chosen"], found["concurrency"]
    if chosen is not None and meets_owasp(chosen.memory_cost, chosen.time_cost):
        return {"meets": True, "needs": None, "advice": None}
    target, parallelism = found["latency_target_ms"], found["parallelism"]
    most = _tune_search.most_memory(budget.mib, concurrency, parallelism)
    reachable = [(m, t) for m, t in OWASP_MINIMUMS if at_least(m, parallelism) <= most]
    needs_mib = None
    if not reachable:  # the budget per hash is below all of them: the least that is not
        memory_cost, time_cost = min(OWASP_MINIMUMS)
        needs_mib = concurrency * -(-at_least(memory_cost, parallelism) // 1024)
        point = (_tune_search.most_memory(needs_mib, concurrency, parallelism), time_cost)
        reaching = (f"{time_cost} passes over {point[0]:,} KiB (OWASP's m={memory_cost} "
                    f"t={time_cost})")
    elif reachable[0] == OWASP_MINIMUMS[0]:
        point = (at_least(OWASP_MINIMUMS[0][0], parallelism), 1)
        reaching = f"one pass over {point[0]:,} KiB (OWASP's m={OWASP_MINIMUMS[0][0]} t=1)"
    else:
        memory_cost, time_cost = reachable[0]
        point = (most, time_cost)
        reaching = (f"{time_cost} passes over {most:,} KiB, the most the budget allows per hash "
                    f"(OWASP's m={memory_cost} t={time_cost})")
    known = {(t.memory_cost, t.time_cost): t for t in found["trials"]}
    trial = known.get(point)
    measurable_mib = max(budget.mib, budget.process_mib)  # what the run's budget holds at once
    if trial is None and concurrency * memory_size(point[0], parallelism) <= measurable_mib * MIB:
        trial = _tune_search.trial(point[0], point[1], parallelism, concurrency, target, step)
    needs_ms = None if trial is None else math.ceil(trial.p95_ms)
    took = "" if trial is None else (f": {reaching} took p95 {milliseconds(trial.p95_ms)} ms "
                                     f"here with {concurrency} at once")
    within = needs_ms is not None and needs_ms <= target
    if needs_mib is not None:
        advice = (f"--memory-budget {needs_mib} ({concurrency} x {needs_mib // concurrency} MiB) "
                  f"is the least that reaches one" +
                  (f", within the target{took}" if within else
                   f", with --latency {needs_ms}{took}" if took else ""))
    elif within:  # the search judged it, or a size below it, too slow: the timings vary
        advice = (f"measured again, {reaching} met the target (p95 {needs_ms} ms, rounded up): "
                  f"the timings vary this close to it; a run at a quieter time may reach one")
    else:
        advice = f"--latency {needs_ms} would reach one{took}"
    return {"meets": False, "advice": advice,
            "needs": {"memory_cost": point[0], "time_cost": point[1], "budget_mib": needs_mib,
                      "latency_ms": needs_ms}}


# ---- the recommendation ------------------------------------------------------------------------


def recommend(latency_ms: float, concurrency: int, budget: Budget,
              step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The search's parameters within *budget* (measured under it: see :func:`budget_for_run`),
    what the budget allows at them, and OWASP's minimums checked."""
    from ._bench.machine import machine_state

    before = machine_state()
    with budget_for_run(budget):
        found = _tune_search.recommend(latency_ms, concurrency, budget.mib, step)
        found["owasp"] = owasp_check(found, budget, step)
    found["busy"] = busy(before)
    found["budget"] = budget
    found["memory"] = None if found["chosen"] is None else allowance(found["chosen"],
                                                                      concurrency, budget)
    return found


def busy(before: dict[str, Any]) -> str | None:
    """Why the machine was too busy for timings to repeat (a load average over a quarter of the
    CPUs before the search, as ``bench`` judges it; tune's own threads raise it after), or
    None."""
    load = before.get("loadavg")
    if not load or load[0] <= BUSY_LOAD_PER_CPU * before["cpus"]:
        return None
    return (f"the machine was busy (load average {load[0]:.2f} on {before['cpus']} CPUs before "
            f"the search): other processes' work is in these timings, and a run at a quieter "
            f"time may choose differently")


def settings_lines(t: int, m: int, p: int, variable: str | None = None) -> list[str]:
    """The chosen parameters as argon2-cffi, argonishche, Django and a PHC string spell them,
    and the work-memory budget a deployment needs (*variable*), if the default is too small."""
    lines = [
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
    if variable is not None:
        lines.append(f"environment:  {variable}  (argonishche's work-memory budget; the default "
                     f"here holds fewer of these hashes at once)")
    return lines


def milliseconds(value: float) -> str:
    """*value* ms for people: to a tenth from 1 ms up, to two significant digits below (a 5 us
    hash is 0.0050 ms, not 0.0)."""
    decimals = 1 if value >= 1 or value <= 0 else 1 - math.floor(math.log10(value))
    return f"{value:,.{decimals}f}"


def _mib(size: int) -> str:
    return f"{size / MIB:,.0f} MiB" if size % MIB == 0 else f"{size / MIB:,.1f} MiB"


def _trial_line(t: Trial, target: float) -> str:
    verdict = "meets the target" if t.p95_ms <= target else "too slow"
    again = "; the less slow of 2 measurements" if t.measurements > 1 else ""
    return (f"  t={t.time_cost:<3} m={t.memory_cost:>9,} KiB: p95 {milliseconds(t.p95_ms):>9} ms "
            f"per hash (median {milliseconds(t.median_ms)}; "
            f"{counted(len(t.latencies_ms), 'hash', 'hashes')}, "
            f"{milliseconds(min(t.latencies_ms))}..{milliseconds(max(t.latencies_ms))}{again}), "
            f"{t.hashes_per_second:,.1f} hashes/s: {verdict}")


def render_parameters(found: dict[str, Any]) -> list[str]:
    budget, concurrency = found["budget"], found["concurrency"]
    target = found["latency_target_ms"]
    lanes, cpus = found["parallelism"], os.cpu_count() or 1
    # The target as given (250, 12.5, 0.02), not rounded to whole milliseconds.
    lines = [f"Argon2id parameters (RFC 9106 section 4): p95 of at most {target:,g} ms per hash "
             f"with {concurrency} at once; {counted(lanes, 'lane')} and "
             f"{noun(lanes, 'thread')} per hash ({counted(cpus, 'CPU')} over "
             f"{counted(concurrency, 'concurrent hash', 'concurrent hashes')})",
             f"Work memory: {budget.mib:,} MiB for all concurrent hashes ({budget.source})"]
    if budget.raised:
        lines.append(f"  more than this process's work-memory budget, {budget.process_mib:,} MiB "
                     f"({budget.process_source}): raised to {budget.mib:,} MiB for this run")
    elif budget.given:
        lines.append(f"  within this process's work-memory budget, {budget.process_mib:,} MiB "
                     f"({budget.process_source})")
    lines.append(f"Candidates: {counted(concurrency, 'hash', 'hashes')} at "
                 f"once, an untimed batch, then at least "
                 f"{_tune_search.MIN_SAMPLES} hashes ({_tune_search.MAX_SAMPLES} within "
                 f"{_tune_search.CLOSE:.0%} of the target); p95 by nearest rank (of fewer than 20 "
                 f"hashes, the slowest); one too slow is measured again, and the less slow "
                 f"counts")
    lines += [_trial_line(t, target) for t in found["trials"]]
    chosen = found["chosen"]
    if chosen is None:
        lines.append("  nothing meets the target, even at the smallest memory: allow more time")
    else:
        memory = found["memory"]
        lines += [
            f"Recommended: t={chosen.time_cost}, m={chosen.memory_cost:,} KiB "
            f"({_mib(chosen.memory_cost * 1024)}), p={chosen.parallelism}: p95 "
            f"{milliseconds(chosen.p95_ms)} ms per hash (median "
            f"{milliseconds(chosen.median_ms)}), "
            f"{chosen.hashes_per_second:,.1f} hashes/s with {concurrency} at once",
            f"  the budget of {budget.mib:,} MiB holds "
            f"{counted(memory['at_once'], 'such hash', 'such hashes')} at once "
            f"({_mib(memory['per_hash_bytes'])} each); more wait for room in arrival order, up "
            f"to {budget.wait_seconds:g} s (ARGONISHCHE_MEMORY_WAIT_SECONDS), then "
            f"MemoryBudgetTimeout"]
        if memory["variable"] is None and budget.default_mib != budget.mib:
            lines.append(f"  (without ARGONISHCHE_MEMORY_BUDGET_MIB={budget.mib}, a process here "
                         f"has argonishche's default budget, {budget.default_mib:,} MiB "
                         f"({budget.default_source}), which holds "
                         f"{memory['default_at_once']:,})")
        lines += ["  " + line for line in settings_lines(
            chosen.time_cost, chosen.memory_cost, chosen.parallelism, memory["variable"])]
    if found["busy"]:
        lines.append(f"Note: {found['busy']}")
    owasp = found["owasp"]
    if not owasp["meets"]:
        what = "nothing met the target, so nothing reaches" if chosen is None else \
            f"t={chosen.time_cost}, m={chosen.memory_cost:,} KiB is below"
        minimums = ", ".join(f"m={m} t={t}" for m, t in OWASP_MINIMUMS)
        lines += [f"WARNING: {what} every one of OWASP's minimums for Argon2id (Password Storage "
                  f"Cheat Sheet: {minimums}, with p=1)",
                  f"  {owasp['advice']}"]
    return lines


def as_json(kernels: dict[str, Any] | None, parameters: dict[str, Any] | None
            ) -> dict[str, Any]:
    result: dict[str, Any] = {"kernels": kernels}
    if parameters is not None:
        chosen, memory = parameters["chosen"], parameters["memory"]
        result["parameters"] = {
            **{k: v for k, v in parameters.items() if k not in ("trials", "chosen", "budget")},
            "budget": {**parameters["budget"]._asdict(), "raised": parameters["budget"].raised},
            "trials": [{**t._asdict(), "p95_ms": t.p95_ms, "median_ms": t.median_ms,
                        "hashes_per_second": t.hashes_per_second} for t in parameters["trials"]],
            "chosen": None if chosen is None else {
                "type": "id", "time_cost": chosen.time_cost, "memory_cost": chosen.memory_cost,
                "parallelism": chosen.parallelism, "hash_len": HASH_LEN, "salt_len": SALT_LEN,
                "p95_ms": chosen.p95_ms, "median_ms": chosen.median_ms,
                "hashes_per_second": chosen.hashes_per_second,
                "settings": settings_lines(chosen.time_cost, chosen.memory_cost,
                                           chosen.parallelism, memory["variable"])},
        }
    return result
