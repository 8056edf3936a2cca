"""Selection: which usable backend hashes each algorithm, and why.

A backend's priority (the ladder: ref < sse2 < ssse3 < sse41 < avx2 < avx512) says which
instruction set is newer, not which kernel is faster on this CPU: where vector integer
instructions take two cycles and scalar ones one, the portable ``ref`` BLAKE2b beats every
vector kernel (docs/backends.md has the measurements).  So the default is to measure, once per
CPU:

- ``ARGONISHCHE_BACKEND`` forces one backend for both algorithms.  A forced name that is not
  registered, or cannot run here, is an error that says why and lists what is available; never a
  silent fallback.
- ``ARGONISHCHE_SELECT=auto`` (the default): the choice remembered for this CPU and these backend
  modules (:mod:`argonishche._remembered_selection`), unless its choice contradicts its own times
  (:func:`contradiction`), else measure now and remember it.  Without a
  writable cache directory the ladder decides instead: a process must not pay the measurement
  every time it starts.
- ``ARGONISHCHE_SELECT=measure`` (and :func:`argonishche.calibrate`): measure afresh, and
  rewrite the record.
- ``ARGONISHCHE_SELECT=priority``: the ladder only, nothing measured, read or written.

Measuring (:func:`measure`) times each usable backend's kernels on in-cache data
(core/csrc/kernel_workout.c): Argon2's G on 16 blocks and BLAKE2b's F on runs of 64 blocks,
interleaved, backend after backend, round after round, within :data:`BUDGET_SECONDS`; a
backend's time is its fastest sample (noise only ever adds time).  :func:`decide` then takes the
fastest, unless others tie with it (slower by no more than 3 % plus the noise seen in each):
among those, the ladder decides, so that noise never moves the choice between two kernels that
are equally fast.

The result is a kernel-table pointer per algorithm; hashing never calls pluggy or this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from . import _remembered_selection
from ._core import ffi, lib
from ._discovery import (
    AVAILABLE,
    FIRST_PARTY,
    NAME_CONFLICT,
    PLUGIN_BLOCKED,
    PLUGIN_FAILED,
    SELECTED,
    BackendEntry,
    PluginInfo,
)
from ._settings import Settings
from ._trust import record_store
from ._wording import stated
from .exceptions import BackendError, SettingError, echo

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ._named_tuple import NamedTuple

ALGORITHMS = ("argon2", "blake2b")
#: Backends that come in wheels of their own, for the hint when one is asked for but missing
#: (the one first-party table, kept in _discovery).
PLUGIN_DISTRIBUTIONS = FIRST_PARTY

#: How a choice was made, as ``info`` and the record name it.
FORCED, MEASURED, REMEMBERED, PRIORITY = "forced", "measured", "remembered", "priority"

#: Work per sample: 32 G calls (32 KiB of Argon2 blocks) and 128 blocks of F (16 KiB), some
#: microseconds: long against the clock's resolution and short enough to fall between
#: interruptions on a busy machine.
ARGON2_FILLS = 32
BLAKE2B_BLOCKS = 128
#: Start-up measurement: at most this many rounds, each timing every backend once per
#: algorithm, and no more after BUDGET_SECONDS (at least MIN_ROUNDS, however slow).
ROUNDS = 41
MIN_ROUNDS = 8
BUDGET_SECONDS = 0.025
#: A backend ties with the fastest when it is slower by no more than this plus the noise seen
#: in both (:func:`noise`, :func:`ties`); among the backends that tie, the ladder decides.
MIN_LEAD = 0.03


class Measurement(NamedTuple):
    """What :func:`measure` found: every candidate's fastest sample, per algorithm."""

    ns_per_kib: dict[str, dict[str, float]]   # algorithm -> backend -> nanoseconds per KiB
    noise: dict[str, dict[str, float]]         # algorithm -> backend -> noise (see noise())
    rounds: int
    seconds: float


class Choice(NamedTuple):
    """The backend chosen for one algorithm, and why (``info`` and the record show it)."""

    algorithm: str
    backend: str
    how: str            # FORCED, MEASURED, REMEMBERED or PRIORITY
    why: str            # one sentence for people
    ns_per_kib: dict[str, float] = {}   # each candidate's measured time, when measured
    noise: dict[str, float] = {}        # ... and the noise in it (never mutated: shared default)
    measured_at: str = ""               # when the measurement was made (UTC, ISO 8601)
    record: str = ""                    # the record it was read from or written to


def summary(entries: Iterable[BackendEntry]) -> str:
    """Every backend with its state and reason, for error messages."""
    return "; ".join(f"{e.name} ({stated(e.state, e.reason)})"
                     for e in entries) or "no backends registered"


def usable(entries: Iterable[BackendEntry]) -> list[BackendEntry]:
    return [e for e in entries if e.table is not None]


def ladder(candidates: Iterable[BackendEntry]) -> BackendEntry:
    """The candidate with the highest priority (ties: the name, so every process agrees)."""
    return max(candidates, key=lambda e: (e.backend.priority, e.name))


def forced(settings: Settings, entries: dict[str, BackendEntry],
           plugins: Iterable[PluginInfo] = ()) -> BackendEntry | None:
    """The backend ``ARGONISHCHE_BACKEND`` names, if any.

    :raises SettingError: it is not registered (naming the plugins that failed or were
        blocked, one of which may have been meant to register it).
    :raises BackendError: it cannot run here; its plugin, named like it, failed or was blocked;
        or two distributions register it (naming both).
    """
    if settings.backend is None:
        return None
    name = settings.backend
    shown = echo(name, quoted=False)  # as given, at most ECHO_LIMIT characters of it
    entry = entries.get(name)
    if entry is None:
        # By convention a backend plugin's entry point is named after its backend: a failed or
        # blocked plugin of that name is why the backend is missing.
        unloaded = [p for p in plugins if p.state in (PLUGIN_FAILED, PLUGIN_BLOCKED)]
        own = [p for p in unloaded if _spelled_alike(p.name, name)]
        if own:
            raise BackendError(f"ARGONISHCHE_BACKEND={shown} cannot be used: " + "; ".join(
                f"its plugin {p.name!r} from {p.distribution} {stated(p.state, p.reason)}"
                for p in own))
        wheel = PLUGIN_DISTRIBUTIONS.get(name)
        hint = f" ({name} comes with pip install {wheel})" if wheel else ""
        if unloaded:
            hint += "; plugins that registered nothing: " + "; ".join(
                f"{p.name!r} from {p.distribution} ({stated(p.state, p.reason)})" for p in unloaded)
        raise SettingError("ARGONISHCHE_BACKEND", name,
                           f"a registered backend{hint}; registered: {summary(entries.values())}")
    if entry.state == NAME_CONFLICT:
        rivals = [e for e in entries.values() if e.name == name]
        raise BackendError(
            f"ARGONISHCHE_BACKEND={shown} cannot be used: it is in a name conflict, registered by "
            + " and ".join(f"plugin {e.plugin!r} from {e.distribution}" for e in rivals)
            + "; neither is used. Block one with ARGONISHCHE_DISABLE_BACKENDS (its entry point "
              "or distribution name), or uninstall it")
    if entry.table is None:
        raise BackendError(
            f"ARGONISHCHE_BACKEND={shown} cannot be used: {stated(entry.state, entry.reason)}. "
            f"Available: "
            f"{', '.join(e.name for e in usable(entries.values())) or 'none'}")
    return entry


def _spelled_alike(first: str, second: str) -> bool:
    return first.lower().replace("-", "_") == second.lower().replace("-", "_")


def select(settings: Settings, entries: dict[str, BackendEntry], *, fresh: bool = False,
           rounds: int = ROUNDS, budget: float = BUDGET_SECONDS,
           step: Callable[[str], None] | None = None,
           plugins: Iterable[PluginInfo] = ()) -> dict[str, Choice]:
    """{algorithm: Choice} as the settings ask (see the module docstring); *fresh* measures and
    rewrites the record whatever ``ARGONISHCHE_SELECT`` says (a forced backend stays forced).
    *rounds*, *budget* and *step*: for :func:`measure`; *plugins*: every plugin's record, for
    the error naming the plugin that failed to register a forced backend.

    :raises SettingError: the forced backend is not registered.
    :raises BackendError: the forced backend cannot run here, or no backend can.
    """
    entry = forced(settings, entries, plugins)
    if entry is not None:
        return {a: Choice(a, entry.name, FORCED, f"forced by ARGONISHCHE_BACKEND={entry.name}")
                for a in ALGORITHMS}
    candidates = usable(entries.values())
    if not candidates:
        raise BackendError(f"no usable backend. {summary(entries.values())}")
    mode = "measure" if fresh else settings.select
    if mode == "priority":
        return by_priority(candidates, "ARGONISHCHE_SELECT=priority: the ladder, nothing measured")
    if len(candidates) == 1:
        return by_priority(candidates, "the only usable backend: nothing to measure")
    key = _remembered_selection.key(candidates)
    again = ""  # why a record was not obeyed, for the new choice's why
    if mode == "auto":
        remembered = _remembered_selection.recall(key, (e.name for e in candidates))
        wrong = "" if remembered is None else contradiction(candidates, remembered)
        if remembered is not None and not wrong:
            return recalled(candidates, remembered)
        if remembered is not None:  # edited, or written by another rule: its times decide
            record_store.note_ignored(remembered.path, f"its choice contradicts its own times "
                                                   f"({wrong})")
            again = f"; the record {remembered.path} was not used: {wrong}"
    directory, why_not = _remembered_selection.writable_directory()
    if directory is None and mode == "auto":
        return by_priority(candidates, f"the ladder: no measurement remembered, and none can "
                                       f"be ({why_not}); ARGONISHCHE_SELECT=measure measures "
                                       f"in every process{again}")
    measurement = as_recorded(measure(candidates, rounds=rounds, budget=budget, step=step))
    choices = {a: c._replace(why=c.why + (f"; measured again{again}" if again else ""))
               for a, c in decide(candidates, measurement).items()}
    path = ""
    if directory is not None:
        path, why_not = _remembered_selection.remember(
            directory, key, {a: c.backend for a, c in choices.items()}, measurement.ns_per_kib,
            measurement.noise, choices[ALGORITHMS[0]].measured_at, measurement.rounds,
            measurement.seconds)
    if why_not:
        return {a: c._replace(why=f"{c.why}; not remembered: {why_not}")
                for a, c in choices.items()}
    return {a: c._replace(record=path, why=f"{c.why}; measured in {measurement.seconds * 1e3:.1f}"
                                           f" ms ({measurement.rounds} rounds)")
            for a, c in choices.items()}


def recalled(candidates: list[BackendEntry],
             remembered: _remembered_selection.Remembered) -> dict[str, Choice]:
    priorities = {e.name: e.backend.priority for e in candidates}
    return {a: Choice(a, remembered.choices[a], REMEMBERED,
                      explain(remembered.choices[a], remembered.ns_per_kib[a],
                              remembered.noise[a], priorities),
                      remembered.ns_per_kib[a], remembered.noise[a], remembered.measured_at,
                      remembered.path)
            for a in ALGORITHMS}


def contradiction(candidates: list[BackendEntry],
                  remembered: _remembered_selection.Remembered) -> str:
    """Why *remembered*'s choices are not what its own times choose under :func:`decide`'s
    rule ("" if they are): a record is a measurement, and the choice must follow from it."""
    decided = decide(candidates, Measurement(remembered.ns_per_kib, remembered.noise, 0, 0.0),
                     remembered.measured_at)
    return "; ".join(f"it chose {remembered.choices[a]} for {a}, where its times choose "
                     f"{decided[a].backend}" for a in ALGORITHMS
                     if decided[a].backend != remembered.choices[a])


def as_recorded(measurement: Measurement) -> Measurement:
    """*measurement* at the precision a record keeps (:func:`_remembered_selection.remember`), so
    that the record's times choose what this process chose from them."""
    return measurement._replace(
        ns_per_kib={a: {name: round(ns, 2) for name, ns in by_name.items()}
                    for a, by_name in measurement.ns_per_kib.items()},
        noise={a: {name: round(gap, 4) for name, gap in by_name.items()}
               for a, by_name in measurement.noise.items()})


def by_priority(candidates: list[BackendEntry], why: str) -> dict[str, Choice]:
    best = ladder(candidates)
    return {a: Choice(a, best.name, PRIORITY, f"{why} (priority {best.backend.priority})")
            for a in ALGORITHMS}


def mark(entries: Iterable[BackendEntry], choice: Mapping[str, BackendEntry]) -> None:
    """Record *choice* in the entries' states, for ``backends()`` and ``info``."""
    for entry in entries:
        entry.selected_for.clear()
        if entry.state == SELECTED:
            entry.state = AVAILABLE
    for algorithm, entry in choice.items():
        entry.selected_for.append(algorithm)
        entry.state = SELECTED


# ---- measuring --------------------------------------------------------------------------------


def sample(entry: BackendEntry, algorithm: str, scratch: object) -> float:
    """One timed workout of *entry*'s kernel for *algorithm*: nanoseconds per KiB processed."""
    clock = time.perf_counter_ns
    if algorithm == "argon2":
        started = clock()
        lib.argonishche_workout_argon2(entry.table, scratch, ARGON2_FILLS)
        return (clock() - started) / ARGON2_FILLS  # a block is 1 KiB
    started = clock()
    lib.argonishche_workout_blake2b(entry.table, scratch, BLAKE2B_BLOCKS)
    return (clock() - started) / (BLAKE2B_BLOCKS * 128 / 1024)


def noise(samples: list[float]) -> float:
    """How far apart the fastest samples of the even and the odd rounds are: 0.01 is 1 %.  A
    backend's time is its fastest sample; if the machine let each half of the rounds reach the
    true speed at least once, the two halves agree, and where they do not, that gap is how far
    noise can move the result."""
    even, odd = samples[0::2], samples[1::2]
    if not even or not odd:
        return 0.0
    return max(min(even), min(odd)) / min(samples) - 1


def measure(candidates: list[BackendEntry], *, rounds: int = ROUNDS,
            budget: float = BUDGET_SECONDS,
            step: Callable[[str], None] | None = None) -> Measurement:
    """Time every candidate's kernels, interleaved (see the module docstring).

    :param step: called before each round with a label, for a progress indicator.
    """
    scratch = ffi.new("char[]", lib.ARGONISHCHE_WORKOUT_SCRATCH_BYTES)
    lib.argonishche_workout_prepare(scratch)
    samples: dict[str, dict[str, list[float]]] = {a: {e.name: [] for e in candidates}
                                                  for a in ALGORITHMS}
    for entry in candidates:  # warm-up, not counted: the first call faults the code in
        for algorithm in ALGORITHMS:
            sample(entry, algorithm, scratch)
    started = time.perf_counter()
    done = 0
    while done < rounds and (done < MIN_ROUNDS or time.perf_counter() - started < budget):
        if step is not None:
            step(f"round {done + 1}")
        turn = done % len(candidates)  # each round starts with another backend
        for entry in candidates[turn:] + candidates[:turn]:
            for algorithm in ALGORITHMS:
                samples[algorithm][entry.name].append(sample(entry, algorithm, scratch))
        done += 1
    seconds = time.perf_counter() - started
    return Measurement(
        ns_per_kib={a: {name: min(s) for name, s in by_name.items()}
                    for a, by_name in samples.items()},
        noise={a: {name: noise(s) for name, s in by_name.items()}
               for a, by_name in samples.items()},
        rounds=done, seconds=seconds)


def ties(times: Mapping[str, float], noise: Mapping[str, float]) -> list[str]:
    """The backends whose time is within MIN_LEAD plus their noise and the fastest's of the
    fastest time (the fastest among them)."""
    fastest = min(times, key=lambda name: times[name])
    return [name for name, t in times.items()
            if t <= times[fastest] * (1 + MIN_LEAD + noise[name] + noise[fastest])]


def decide(candidates: list[BackendEntry], measurement: Measurement,
           measured_at: str = "") -> dict[str, Choice]:
    """The choice per algorithm: the fastest, or, among the backends that tie with it
    (:func:`ties`), the one the ladder prefers."""
    measured_at = measured_at or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    priorities = {e.name: e.backend.priority for e in candidates}
    choices = {}
    for algorithm in ALGORITHMS:
        times, noise = measurement.ns_per_kib[algorithm], measurement.noise[algorithm]
        tied = set(ties(times, noise))
        chosen = ladder(e for e in candidates if e.name in tied)
        choices[algorithm] = Choice(algorithm, chosen.name, MEASURED,
                                    explain(chosen.name, times, noise, priorities),
                                    dict(times), dict(noise), measured_at)
    return choices


def explain(chosen: str, times: Mapping[str, float], noise: Mapping[str, float],
            priorities: Mapping[str, int]) -> str:
    """Why *chosen* won a measurement, in one sentence."""
    rivals = sorted((t, name) for name, t in times.items() if name != chosen)
    if not rivals:
        return "the only backend measured"
    top = max(priorities, key=lambda name: (priorities[name], name))
    tied = [name for name in ties(times, noise) if name != chosen]
    if not tied:
        next_time, next_name = rivals[0]
        text = f"the fastest: {next_time / times[chosen]:.2f}x faster than {next_name}, the next"
        if top == next_name:
            text += " and the ladder's pick"
        elif top != chosen:
            text += f", and {times[top] / times[chosen]:.2f}x faster than {top}, the ladder's pick"
        return text
    fastest = min(times.values())
    spread = max(times[name] for name in [*tied, chosen]) / fastest - 1
    return (f"tied with {', '.join(sorted(tied))} (within {spread:.0%} of the fastest, inside "
            f"{MIN_LEAD:.0%} plus the noise): the ladder decides among them (priority "
            f"{priorities[chosen]})")
