"""Benchmarks in the manner of ``openssl speed``: our backends against the peers, in one run.

Honest by construction:

- every subject must produce the same tag at a point before any of them is timed;
- subjects are timed **interleaved** (round-robin, rotating the order each repetition), so drift
  in a shared, noisy machine's speed hits all of them alike, and ratios are computed from the
  same repetitions;
- every figure is a median over repetitions, shown with its min and max and its spread, and the
  run ends with a verdict on how noisy the machine was (spreads, load average, CPU steal);
- the mode is named on every row: ``hot`` is steady state (the same inputs hashed back to back,
  caches and allocator warm, our work memory reused); ``cold`` is one hash per sample after a
  read of a buffer larger than the last-level cache, with work memory allocated for that hash
  (``allocator="system"``, as the reference implementation and the peers do);
- time is wall time (``perf_counter``), never CPU time, which counts every thread's work.
  Cycles are core cycles, from a timed chain of dependent additions, not TSC ticks.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .. import _driver, _registry
from ._clock import lib
from .._argon2 import argon2_hash
from .._blake2 import blake2b

PASSWORD = b"correct horse battery staple"
SALT = bytes(range(16))  # 16 bytes: the only salt length libsodium accepts

MODES = {
    "hot": "hot: steady state, same inputs back to back, work memory reused",
    "cold": "cold: one hash per sample after evicting the caches, work memory allocated "
            "for each hash (allocator=system)",
}

#: The optional extra that brings in matplotlib for ``bench --plot``.
PLOT_HINT = "pip install argonishche[plot]"


@dataclass(frozen=True)
class Point:
    """One Argon2 parameter point: type, t, m (KiB), p."""

    type: str
    time_cost: int
    memory_cost: int
    parallelism: int

    @classmethod
    def parse(cls, text: str) -> Point:
        """``"id,3,65536,4"`` -> Point; the order of RFC 9106 and shared/PEERS.md tables."""
        try:
            kind, t, m, p = (part.strip() for part in text.split(","))
            return cls(kind.lower().removeprefix("argon2"), int(t), int(m), int(p))
        except ValueError:
            raise ValueError(f"point {text!r}: expected TYPE,T,M_KIB,P such as id,3,65536,4") \
                from None

    def __str__(self) -> str:
        return f"{self.type} t={self.time_cost} m={self.memory_cost} p={self.parallelism}"

    @property
    def blocks(self) -> int:
        """Blocks filled per hash: t passes over m' blocks."""
        return self.time_cost * _driver.memory_size(self.memory_cost, self.parallelism) // 1024

    def as_dict(self) -> dict:
        return {"type": self.type, "time_cost": self.time_cost, "memory_kib": self.memory_cost,
                "parallelism": self.parallelism}


#: Argonishche's headline point, a server point, RFC 9106's low-memory profile, two more peers'.
DEFAULT_POINTS = (Point("d", 1, 2048, 1), Point("i", 3, 4096, 1), Point("id", 2, 19456, 1),
                  Point("id", 1, 32768, 1), Point("id", 3, 65536, 4))


@dataclass
class Subject:
    name: str
    run: Callable[[], bytes]
    samples: list[float] = field(default_factory=list)   # seconds per call, one per repetition

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


# ---- progress and cache eviction ---------------------------------------------------------------


class Progress:
    """A progress bar on one line of *stream*: ``argon2 [#######.........]  12/63  label``.

    Nothing is drawn until *delay* seconds after it was made, so short runs stay silent, and it
    is redrawn at most ten times a second.  Each section of a run calls :meth:`start` with its
    number of steps, then :meth:`step` before each one.
    """

    def __init__(self, stream=sys.stderr, *, delay: float = 1.0, width: int = 24,
                 clock: Callable[[], float] = time.monotonic, columns: int | None = None):
        self.stream, self.delay, self.width, self.clock = stream, delay, width, clock
        if columns is None:
            import shutil
            columns = shutil.get_terminal_size().columns
        self.columns = max(columns - 1, 20)
        self.created = clock()
        self.last_draw = float("-inf")
        self.title, self.total, self.done = "", 1, 0
        self.drawn = False

    def start(self, title: str, total: int) -> None:
        self.title, self.total, self.done = title, max(total, 1), 0

    def render(self, label: str = "") -> str:
        filled = self.width * min(self.done, self.total) // self.total
        text = (f"{self.title} [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{self.done:>{len(str(self.total))}}/{self.total}  {label}")
        return text[:self.columns]

    def step(self, label: str = "") -> None:
        now = self.clock()
        if now - self.created >= self.delay and now - self.last_draw >= 0.1:
            self.stream.write("\r\033[K" + self.render(label))
            self.stream.flush()
            self.last_draw, self.drawn = now, True
        self.done += 1

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False


def last_level_cache_bytes() -> int:
    """The largest CPU cache Linux reports for CPU 0 (its L3), or 0 where it says nothing."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    largest = 0
    try:
        names = os.listdir(base)
    except OSError:
        return 0
    for name in names:
        try:
            with open(f"{base}/{name}/size", encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        try:
            size = int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
        except (ValueError, IndexError):
            continue
        largest = max(largest, size)
    return largest


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


# ---- subjects ------------------------------------------------------------------------------


def our_argon2_subjects(point: Point, allocator: str | None = None) -> list[Subject]:
    """The selected backend, then each usable backend forced by name."""
    def hasher(backend):
        return lambda: argon2_hash(PASSWORD, SALT, type=point.type, time_cost=point.time_cost,
                                   memory_cost=point.memory_cost,
                                   parallelism=point.parallelism, backend=backend,
                                   allocator=allocator)
    selected = _registry.get().selected_name("argon2")
    subjects = [Subject(f"argonishche ({selected})", hasher(None))]
    subjects += [Subject(f"  backend {entry.name}", hasher(entry.name))
                 for entry in _registry.get().usable()]
    return subjects


def peer_argon2_subjects(point: Point) -> list[Subject]:
    """argon2-cffi, PyNaCl and cryptography, where installed and where they support *point*."""
    peers = []
    try:
        from argon2 import low_level
    except ImportError:
        pass
    else:
        kind = {"d": low_level.Type.D, "i": low_level.Type.I, "id": low_level.Type.ID}[point.type]
        peers.append(Subject("argon2-cffi", lambda: low_level.hash_secret_raw(
            PASSWORD, SALT, time_cost=point.time_cost, memory_cost=point.memory_cost,
            parallelism=point.parallelism, hash_len=32, type=kind)))
    try:
        from nacl import pwhash
    except ImportError:
        pass
    else:
        module = {"i": getattr(pwhash, "argon2i", None),
                  "id": getattr(pwhash, "argon2id", None)}.get(point.type)
        # libsodium: one lane only, and its own minimums (argon2i: t >= 3).
        if (point.parallelism == 1 and module is not None
                and point.time_cost >= getattr(module, "OPSLIMIT_MIN", 1)
                and point.memory_cost * 1024 >= getattr(module, "MEMLIMIT_MIN", 8192)):
            kdf = module.kdf
            peers.append(Subject("PyNaCl", lambda: kdf(
                32, PASSWORD, SALT, opslimit=point.time_cost,
                memlimit=point.memory_cost * 1024)))
    try:
        from cryptography.hazmat.primitives.kdf import argon2 as crypto_argon2
    except ImportError:
        pass
    else:
        cls = getattr(crypto_argon2, {"d": "Argon2d", "i": "Argon2i", "id": "Argon2id"}
                      [point.type], None)
        if cls is not None:
            peers.append(Subject("cryptography", lambda: cls(
                salt=SALT, length=32, iterations=point.time_cost, lanes=point.parallelism,
                memory_cost=point.memory_cost).derive(PASSWORD)))
    return peers


def is_ours(name: str) -> bool:
    return name.strip().startswith(("argonishche", "backend"))


# ---- timing --------------------------------------------------------------------------------


def _calls_for(run: Callable[[], bytes], budget: float) -> int:
    """How many back-to-back calls fill about *budget* seconds (at least one)."""
    started = time.perf_counter()
    run()
    once = max(time.perf_counter() - started, 1e-7)
    return max(1, int(budget / once))


def time_interleaved(subjects: list[Subject], repetitions: int, budget: float,
                     progress: Progress | None = None, *, label: str = "",
                     evict: Callable[[], None] | None = None) -> None:
    """Fill each subject's samples: *repetitions* rounds, every subject once per round.

    Hot (no *evict*): a sample is as many back-to-back calls as fill *budget*, after one
    warm-up call that sizes it.  Cold: a sample is one call, right after ``evict()``.
    Interrupted (Ctrl-C), every subject keeps the samples of the rounds all of them finished,
    so that what was measured stays comparable, and KeyboardInterrupt propagates.
    """
    calls = [1 if evict else _calls_for(s.run, budget) for s in subjects]
    order = list(range(len(subjects)))
    try:
        for repetition in range(repetitions):
            shift = repetition % len(subjects)
            for index in order[shift:] + order[:shift]:
                subject = subjects[index]
                if progress:
                    progress.step(f"{label}rep {repetition + 1}/{repetitions} "
                                  f"{subject.name.strip()}")
                if evict:
                    evict()
                started = time.perf_counter()
                for _ in range(calls[index]):
                    subject.run()
                subject.samples.append((time.perf_counter() - started) / calls[index])
    except KeyboardInterrupt:
        complete = min(len(s.samples) for s in subjects)
        for s in subjects:
            del s.samples[complete:]
        raise


def check_same_tags(subjects: list[Subject]) -> None:
    """Refuse to time subjects that disagree: a fast wrong answer is no result."""
    tags = {s.name: s.run() for s in subjects}
    if len(set(tags.values())) != 1:
        detail = ", ".join(f"{name}: {tag.hex()[:16]}" for name, tag in tags.items())
        raise RuntimeError(f"subjects disagree, nothing timed: {detail}")


# ---- reports -------------------------------------------------------------------------------


def _number(x: float) -> str:
    """Three significant figures or more, with thousands separators: 27,779 / 174.8 / 9.04."""
    return f"{x:,.0f}" if x >= 1000 else f"{x:,.1f}" if x >= 100 else f"{x:,.2f}"


def _range(samples: list[float], scale: Callable[[float], float]) -> str:
    values = sorted(scale(s) for s in samples)
    return f"{_number(values[0])}..{_number(values[-1])}"


def argon2_report(point: Point, subjects: list[Subject], clock_hz: float, mode: str = "hot",
                  planned: int | None = None) -> tuple[str, dict]:
    """The table of one point in one mode, and its JSON form.

    :param planned: repetitions asked for, when fewer were finished (an interrupted run).
    """
    reference = subjects[0]
    done = len(reference.samples)
    peers = [s for s in subjects if not is_ours(s.name)]
    note = (f"interrupted after {done} of {planned} interleaved repetitions"
            if planned and planned > done else f"{done} interleaved repetitions")
    lines = [f"Argon2{point}  ({MODES[mode]}; each library's default threads; {note})",
             f"  {'subject':<24}{'mode':<5}{'hashes/s':>10}{'min..max':>19}{'ms/hash':>9}"
             f"{'cycles/blk':>11}{'MB/s':>8}{'spread':>8}"
             + "".join(f"{'vs ' + p.name:>17}" for p in peers)]
    rows = []
    for s in subjects:
        rate = 1 / s.median
        cycles = s.median * clock_hz / point.blocks
        mbps = point.blocks * 1024 / s.median / 1e6
        ratios = [p.median / s.median for p in peers]
        lines.append(f"  {s.name:<24}{mode:<5}{_number(rate):>10}"
                     f"{_range(s.samples, lambda x: 1 / x):>19}{s.median * 1e3:>9.2f}"
                     f"{cycles:>11,.0f}{mbps:>8,.0f}{s.spread * 100:>7.1f}%"
                     + "".join(f"{r:>16.2f}x" for r in ratios))
        rows.append({"subject": s.name.strip(), "mode": mode, "hashes_per_s": rate,
                     "ms_per_hash": s.median * 1e3, "samples_s": s.samples,
                     "cycles_per_block": cycles, "mb_per_s": mbps, "spread": s.spread,
                     "ratio_vs": {p.name: p.median / s.median for p in peers}})
    data = {"point": str(point), **point.as_dict(), "mode": mode, "repetitions": done,
            "results": rows}
    if planned and planned > done:
        data["interrupted"] = True
    return "\n".join(lines), data


def bench_argon2(points, *, peers: bool, repetitions: int, budget: float,
                 modes=("hot",), progress: Progress | None = None, out=None,
                 results: list | None = None) -> list[dict]:
    """One table per point and mode, appended to *results* as each is finished (so that an
    interrupted run keeps them; the table being measured is kept too if every subject finished
    at least one repetition)."""
    out = sys.stdout if out is None else out  # looked up per call: redirectable
    results = [] if results is None else results
    clock_hz = core_clock_hz()
    print(f"core clock {clock_hz / 1e9:.2f} GHz (dependent-add chain); "
          f"ratios are peer time / our time: above 1 means we are faster; "
          f"spread is (max - min) / median of the repetitions", file=out)
    evict = CacheEvictor() if "cold" in modes else None
    plan = []
    for point in points:
        for mode in modes:
            ours = our_argon2_subjects(point, allocator="system" if mode == "cold" else None)
            plan.append((point, mode, ours + (peer_argon2_subjects(point) if peers else [])))
    if progress:
        progress.start("argon2", sum(len(subjects) for *_, subjects in plan) * repetitions)
    for point, mode, subjects in plan:
        check_same_tags(subjects)
        try:
            time_interleaved(subjects, repetitions, budget, progress,
                             label=f"{point} {mode}: ", evict=evict if mode == "cold" else None)
        except KeyboardInterrupt:
            if subjects[0].samples:
                text, data = argon2_report(point, subjects, clock_hz, mode, planned=repetitions)
                print(text, file=out)
                results.append(data)
            raise
        text, data = argon2_report(point, subjects, clock_hz, mode)
        print(text, file=out)
        results.append(data)
    return results


def bench_blake2b(*, repetitions: int, budget: float, progress: Progress | None = None,
                  out=None) -> dict:
    """1 MiB throughput and 64-byte one-shot latency, against hashlib.blake2b, interleaved."""
    out = sys.stdout if out is None else out  # looked up per call: redirectable
    import hashlib

    big, small = bytes(range(256)) * 4096, bytes(range(64))
    cases = {}
    for label, data in (("1 MiB", big), ("64 B one-shot", small)):
        subjects = [Subject(f"argonishche ({_registry.get().selected_name('blake2b')})",
                            lambda d=data: blake2b(d).digest())]
        if len(data) > len(small):
            # Not at 64 bytes: there a call with backend= (a slower argument path in Python)
            # would time that path, not the kernel, which the selected row already shows.
            subjects += [Subject(f"  backend {e.name}",
                                 lambda d=data, n=e.name: blake2b(d, backend=n).digest())
                         for e in _registry.get().usable()]
        subjects.append(Subject("hashlib.blake2b", lambda d=data: hashlib.blake2b(d).digest()))
        cases[label] = (data, subjects)
    if progress:
        progress.start("blake2b", sum(len(s) for _, s in cases.values()) * repetitions)
    for label, (_, subjects) in cases.items():
        check_same_tags(subjects)
        time_interleaved(subjects, repetitions, budget, progress, label=f"{label}: ")
    print(f"BLAKE2b (hot; {repetitions} interleaved repetitions; ratio = hashlib time / ours; "
          f"64 B: the selected backend only)", file=out)
    report = {}
    for label, (data, subjects) in cases.items():
        hashlib_time = subjects[-1].median
        for s in subjects:
            mbps = len(data) / s.median / 1e6
            print(f"  {label:<14}{s.name:<24}{mbps:>9,.1f} MB/s {s.median * 1e9:>12,.0f} ns/call"
                  f"  {_range(s.samples, lambda x: x * 1e9):>21} ns{s.spread * 100:>6.1f}%"
                  f" {hashlib_time / s.median:>7.2f}x", file=out)
            report.setdefault(label, []).append({"subject": s.name.strip(), "mode": "hot",
                                                 "mb_per_s": mbps, "samples_s": s.samples,
                                                 "spread": s.spread})
    return report


# ---- start-up -------------------------------------------------------------------------------

STARTUP_CASES = {
    "python -c pass": "pass",
    "import argonishche + first hash": (
        "import argonishche; argonishche.argon2_hash(b'pw', b'saltsalt', memory_cost=8, "
        "parallelism=1, time_cost=1)"),
    "import argon2 + first hash": (
        "import argon2.low_level as a; a.hash_secret_raw(b'pw', b'saltsalt', time_cost=1, "
        "memory_cost=8, parallelism=1, hash_len=32, type=a.Type.ID)"),
}


def bench_startup(repetitions: int = 15, out=None) -> dict:
    """Cold start of a fresh interpreter to its first Argon2 tag, ours against argon2-cffi's.

    Each sample is a new process (cold: imports, plugin discovery, CPU probe and self-test all
    included), interleaved case by case; the first hash uses tiny costs so that start-up shows.
    """
    out = sys.stdout if out is None else out  # looked up per call: redirectable
    import importlib.util
    import subprocess

    cases = dict(STARTUP_CASES)
    if importlib.util.find_spec("argon2") is None:
        cases.pop("import argon2 + first hash")
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repetitions):
        for name, code in cases.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            samples[name].append(time.perf_counter() - started)
    print(f"Start-up (cold: a new process each time; {repetitions} interleaved repetitions)",
          file=out)
    for name, values in samples.items():
        print(f"  {name:<34}{statistics.median(values) * 1e3:>8.1f} ms median  "
              f"{_range(values, lambda x: x * 1e3):>15} ms", file=out)
    return {name: values for name, values in samples.items()}


# ---- memory: allocators, wiping, batches ------------------------------------------------------

SERVER_POINT = Point("id", 1, 32768, 1)


def bench_memory(point: Point = SERVER_POINT, *, peers: bool, repetitions: int, budget: float,
                 progress: Progress | None = None, out=None) -> dict:
    """Every allocator with the wipe on and off, interleaved with the peers, at one point.

    ``system`` with the wipe on is what the reference implementation does on every hash; the
    ratio to it is what the allocation and the wipe cost.
    """
    out = sys.stdout if out is None else out  # looked up per call: redirectable
    def hasher(allocator, wipe):
        return lambda: argon2_hash(PASSWORD, SALT, type=point.type, time_cost=point.time_cost,
                                   memory_cost=point.memory_cost,
                                   parallelism=point.parallelism, allocator=allocator, wipe=wipe)
    subjects = [Subject(f"{name} wipe={'on' if wipe else 'off'}", hasher(name, wipe))
                for name in sorted(_registry.get().allocators) for wipe in (True, False)]
    subjects += peer_argon2_subjects(point) if peers else []
    check_same_tags(subjects)
    if progress:
        progress.start("memory", len(subjects) * repetitions)
    time_interleaved(subjects, repetitions, budget, progress)
    reference = next(s for s in subjects if s.name == "system wipe=on")
    print(f"Argon2{point}: allocator x wipe (hot; {repetitions} interleaved repetitions; "
          f"ratios: their time / this row's)", file=out)
    others = [reference] + [s for s in subjects if " wipe=" not in s.name]
    print(f"  {'allocator':<22}{'hashes/s':>10}{'min..max':>17}{'spread':>8}"
          + "".join(f"{'vs ' + o.name:>18}" for o in others), file=out)
    rows = []
    for s in subjects:
        print(f"  {s.name:<22}{_number(1 / s.median):>10}{_range(s.samples, lambda x: 1 / x):>17}"
              f"{s.spread * 100:>7.1f}%"
              + "".join(f"{o.median / s.median:>17.2f}x" for o in others), file=out)
        rows.append({"subject": s.name, "mode": "hot", "hashes_per_s": 1 / s.median,
                     "samples_s": s.samples, "spread": s.spread})
    return {"point": str(point), "mode": "hot", "results": rows}


def bench_batch(point: Point = SERVER_POINT, *, count: int = 200, workers: int = 2,
                out=None) -> dict:
    """hash_many on *workers* threads against the same hashes one after another on one thread,
    alternated three times; and the peak RSS of the process afterwards."""
    out = sys.stdout if out is None else out  # looked up per call: redirectable
    import resource

    from .._batch import hash_many

    options = dict(type=point.type, time_cost=point.time_cost, memory_cost=point.memory_cost,
                   parallelism=point.parallelism)
    passwords = [f"password {i}" for i in range(count)]
    serial, batch = [], []
    for _ in range(3):
        started = time.perf_counter()
        for password in passwords:
            argon2_hash(password, SALT, threads=1, **options)
        serial.append((time.perf_counter() - started) / count)
        started = time.perf_counter()
        hash_many(passwords, workers=workers, **options)
        batch.append((time.perf_counter() - started) / count)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    ratio = statistics.median(serial) / statistics.median(batch)
    print(f"hash_many, Argon2{point}, {count} passwords, 3 alternating runs: one thread "
          f"{1 / statistics.median(serial):,.1f} h/s, {workers} workers "
          f"{1 / statistics.median(batch):,.1f} h/s = {ratio:.2f}x; "
          f"peak RSS {peak / 2**20:,.0f} MiB", file=out)
    return {"point": str(point), "serial_s": serial, "batch_s": batch, "ratio": ratio,
            "peak_rss_bytes": peak}


# ---- how noisy was it ---------------------------------------------------------------------------


def machine_state() -> dict:
    """Load average and CPU tick counters now, to compare before and after a run."""
    state: dict = {"cpus": os.cpu_count() or 1}
    try:
        state["loadavg"] = list(os.getloadavg())
    except OSError:
        state["loadavg"] = None
    try:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
        # user nice system idle iowait irq softirq steal ...: steal is time the hypervisor gave
        # this VM's CPUs to someone else.
        state["ticks_total"], state["ticks_steal"] = sum(ticks[:8]), ticks[7]
    except (OSError, ValueError, IndexError):
        pass
    return state


def _sampled_rows(results: dict) -> Iterator[tuple[str, list[float]]]:
    for table in results.get("argon2", []):
        for row in table["results"]:
            yield f"{row['subject']}, {table['point']} {row['mode']}", row["samples_s"]
    if results.get("memory"):
        for row in results["memory"]["results"]:
            yield f"{row['subject']}, {results['memory']['point']}", row["samples_s"]
    for label, rows in (results.get("blake2b") or {}).items():
        for row in rows:
            yield f"BLAKE2b {label} {row['subject']}", row["samples_s"]
    for name, values in (results.get("startup") or {}).items():
        yield f"start-up {name}", values


def noise_report(results: dict, before: dict, after: dict | None = None) -> tuple[str, dict]:
    """How much the repetitions varied, what else the machine did, and a one-line verdict.

    Two figures per row: the *spread*, (max - min) / median, which one preempted sample can make
    large; and the *interquartile* spread, (Q3 - Q1) / median, how much the middle half of the
    repetitions varied, which is what the reported medians are subject to.  The verdict rests
    on the typical interquartile spread: a difference between two medians well above it is real.
    Interleaving means a disturbance hits every subject of a table alike, so ratios are steadier
    than absolute numbers.
    """
    after = after or machine_state()
    rows = [(label, samples) for label, samples in _sampled_rows(results) if len(samples) >= 2]
    data: dict = {"rows": len(rows), "loadavg_before": before.get("loadavg"),
                  "loadavg_after": after.get("loadavg"), "cpus": before.get("cpus")}
    parts = []
    if rows:
        spreads = sorted((spread(samples), label) for label, samples in rows)
        middles = sorted(interquartile(samples) for _, samples in rows)
        typical, worst, worst_label = (statistics.median(s for s, _ in spreads), *spreads[-1])
        middle = statistics.median(middles)
        data.update(median_spread=typical, worst_spread=worst, worst_row=worst_label,
                    median_interquartile=middle, worst_interquartile=middles[-1])
        parts.append(f"spread (max-min)/median: median {typical * 100:.1f} %, worst "
                     f"{worst * 100:.1f} % ({worst_label.strip()})")
        parts.append(f"interquartile/median: median {middle * 100:.1f} %, worst "
                     f"{middles[-1] * 100:.1f} %")
    if before.get("loadavg"):
        parts.append(f"load average {before['loadavg'][0]:.2f} before the run on "
                     f"{before['cpus']} CPUs")
    if "ticks_total" in before and "ticks_total" in after:
        total = after["ticks_total"] - before["ticks_total"]
        steal = (after["ticks_steal"] - before["ticks_steal"]) / total if total > 0 else 0.0
        data["steal"] = steal
        parts.append(f"CPU steal {steal * 100:.1f} %")
    if not rows:
        verdict = "too few repetitions to judge (use --repetitions 3 or more)"
    else:
        load = (before.get("loadavg") or [0.0])[0] / (before.get("cpus") or 1)
        busy = load > 0.25 or data.get("steal", 0) > 0.02
        if middle < 0.02 and not busy:
            verdict = (f"quiet: differences between medians above about "
                       f"{max(2 * middle * 100, 1):.0f} % are real")
        elif middle < 0.05:
            verdict = (f"somewhat noisy: trust differences between medians above about "
                       f"{max(2 * middle * 100, 3):.0f} %")
        else:
            verdict = (f"noisy: differences below {2 * middle * 100:.0f} % mean nothing; "
                       f"rerun on an idle machine")
        if busy and middle < 0.05:
            verdict += " (the machine was busy: compare ratios, not absolute numbers)"
        if worst > 4 * max(middle, 0.01):
            verdict += ("; some repetitions were disturbed (see the spread column), "
                        "which the medians discount")
    data["verdict"] = verdict
    return "Noise: " + "; ".join(parts) + f".\nVerdict: {verdict}", data


# ---- plot ----------------------------------------------------------------------------------------


def load_pyplot():
    """matplotlib's pyplot with a file-only backend; ImportError if it is not installed."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def _memory_label(kib: int) -> str:
    return f"{kib / 1024:g} MiB" if kib >= 1024 else f"{kib} KiB"


def plot(tables: list[dict], path: str, *, title: str = "", dpi: int = 80) -> None:
    """Hashes/s against memory size, one line per backend or peer (and mode), log-log, as PNG.

    Each x position is labelled with the points measured there, since the default points also
    differ in type, t and p.  The selected backend's row duplicates its backend's, so it only
    names that line "(selected)".
    """
    pyplot = load_pyplot()
    lines: dict[tuple[str, str], list[tuple[int, float]]] = {}
    selected = None
    points_at: dict[int, set[str]] = {}
    for table in tables:
        points_at.setdefault(table["memory_kib"], set()).add(
            f"{table['type']} t={table['time_cost']} p={table['parallelism']}")
        for row in table["results"]:
            if row["subject"].startswith("argonishche ("):
                selected = row["subject"][len("argonishche ("):-1]
                continue
            lines.setdefault((row["subject"], row["mode"]), []).append(
                (table["memory_kib"], row["hashes_per_s"]))
    modes = {mode for _, mode in lines}
    figure, axes = pyplot.subplots(figsize=(8, 5))
    for (subject, mode), values in sorted(lines.items(), key=lambda kv: (not is_ours(kv[0][0]),
                                                                        kv[0])):
        values.sort()
        label = subject.removeprefix("backend ")
        if label == selected:
            label += " (selected)"
        if len(modes) > 1:
            label += f", {mode}"
        peer = not is_ours(subject)
        axes.plot([x for x, _ in values], [y for _, y in values], label=label,
                  marker="s" if peer else "o", markersize=4,
                  linestyle=(":" if peer else "-") if mode == "hot" else "--",
                  linewidth=2 if label.startswith(f"{selected} (selected)") else 1.2)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    ticks = sorted(points_at)
    axes.set_xticks(ticks)
    axes.set_xticklabels([f"{_memory_label(kib)}\n" + "\n".join(sorted(points_at[kib]))
                          for kib in ticks], fontsize=8)
    axes.minorticks_off()
    axes.set_xlabel("memory (m)")
    axes.set_ylabel("hashes/s (median)")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    axes.set_title(title or "Argon2: hashes/s from one Python thread", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=dpi)
    pyplot.close(figure)


def machine_description() -> str:
    """``"AMD EPYC, 2 CPUs, Python 3.11.7"`` for titles."""
    import platform

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
