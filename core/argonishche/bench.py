"""Benchmarks in the manner of ``openssl speed``: our backends against the peers, in one run.

Honest by construction:

- every subject must produce the same tag at a point before any of them is timed;
- subjects are timed **interleaved** (round-robin, rotating the order each repetition), so drift
  in a shared, noisy machine's speed hits all of them alike, and ratios are computed from the
  same repetitions;
- every figure is a median over repetitions, shown with its min and max;
- the mode is named: ``hot`` is steady state (the same inputs hashed back to back, caches and
  allocator warm).  Cycles are core cycles, from a timed chain of dependent additions, not TSC
  ticks.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import driver, registry
from ._core import lib
from .argon2 import argon2_hash
from .blake2 import blake2b

PASSWORD = b"correct horse battery staple"
SALT = bytes(range(16))  # 16 bytes: the only salt length libsodium accepts


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
        return self.time_cost * driver.memory_size(self.memory_cost, self.parallelism) // 1024


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


# ---- subjects ------------------------------------------------------------------------------


def our_argon2_subjects(point: Point) -> list[Subject]:
    """The selected backend, then each usable backend forced by name."""
    def hasher(backend):
        return lambda: argon2_hash(PASSWORD, SALT, type=point.type, time_cost=point.time_cost,
                                   memory_cost=point.memory_cost,
                                   parallelism=point.parallelism, backend=backend)
    selected = registry.get().selected_name("argon2")
    subjects = [Subject(f"argonishche ({selected})", hasher(None))]
    subjects += [Subject(f"  backend {entry.name}", hasher(entry.name))
                 for entry in registry.get().usable()]
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
        module = {"i": getattr(pwhash, "argon2i", None), "id": getattr(pwhash, "argon2id", None)}
        if point.parallelism == 1 and module.get(point.type) is not None:
            kdf = module[point.type].kdf
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


# ---- timing --------------------------------------------------------------------------------


def _calls_for(run: Callable[[], bytes], budget: float) -> int:
    """How many back-to-back calls fill about *budget* seconds (at least one)."""
    started = time.perf_counter()
    run()
    once = max(time.perf_counter() - started, 1e-7)
    return max(1, int(budget / once))


def time_interleaved(subjects: list[Subject], repetitions: int, budget: float,
                     progress: Callable[[str], None] | None = None) -> None:
    """Fill each subject's samples: *repetitions* rounds, every subject once per round."""
    calls = [_calls_for(s.run, budget) for s in subjects]
    for repetition in range(repetitions):
        shift = repetition % len(subjects)
        for index in list(range(len(subjects)))[shift:] + list(range(len(subjects)))[:shift]:
            subject = subjects[index]
            if progress:
                progress(f"rep {repetition + 1}/{repetitions} {subject.name.strip()}")
            started = time.perf_counter()
            for _ in range(calls[index]):
                subject.run()
            subject.samples.append((time.perf_counter() - started) / calls[index])


def check_same_tags(subjects: list[Subject]) -> None:
    """Refuse to time subjects that disagree: a fast wrong answer is no result."""
    tags = {s.name: s.run() for s in subjects}
    if len(set(tags.values())) != 1:
        detail = ", ".join(f"{name}: {tag.hex()[:16]}" for name, tag in tags.items())
        raise RuntimeError(f"subjects disagree, nothing timed: {detail}")


# ---- reports -------------------------------------------------------------------------------


def _spread(samples: list[float], scale: Callable[[float], float]) -> str:
    values = sorted(scale(s) for s in samples)
    return f"{values[0]:,.1f}..{values[-1]:,.1f}"


def argon2_report(point: Point, subjects: list[Subject], clock_hz: float) -> tuple[str, dict]:
    reference = subjects[0]
    peers = [s for s in subjects if not s.name.startswith(("argonishche", "  backend"))]
    lines = [f"Argon2{point}  (hot: same inputs back to back; each library's default threads; "
             f"{len(reference.samples)} interleaved repetitions)",
             f"  {'subject':<26}{'hashes/s':>10}  {'min..max':>19}{'ms/hash':>9}"
             f"{'cycles/block':>14}" + "".join(f"{'vs ' + p.name:>17}" for p in peers)]
    rows = []
    for s in subjects:
        rate = 1 / s.median
        cycles = s.median * clock_hz / point.blocks
        ratios = [p.median / s.median for p in peers]
        lines.append(f"  {s.name:<26}{rate:>10,.1f}  {_spread(s.samples, lambda x: 1 / x):>19}"
                     f"{s.median * 1e3:>9.2f}{cycles:>14,.0f}"
                     + "".join(f"{r:>16.2f}x" for r in ratios))
        rows.append({"subject": s.name.strip(), "hashes_per_s": rate,
                     "samples_s": s.samples, "cycles_per_block": cycles,
                     "ratio_vs": {p.name: p.median / s.median for p in peers}})
    return "\n".join(lines), {"point": str(point), "mode": "hot", "results": rows}


def bench_argon2(points, *, peers: bool, repetitions: int, budget: float,
                 progress=None, out=sys.stdout) -> list[dict]:
    clock_hz = core_clock_hz()
    print(f"core clock {clock_hz / 1e9:.2f} GHz (dependent-add chain); "
          f"ratios are peer time / our time: above 1 means we are faster", file=out)
    results = []
    for point in points:
        subjects = our_argon2_subjects(point) + (peer_argon2_subjects(point) if peers else [])
        check_same_tags(subjects)
        time_interleaved(subjects, repetitions, budget,
                         (lambda text, point=point: progress(f"{point}: {text}"))
                         if progress else None)
        text, data = argon2_report(point, subjects, clock_hz)
        print(text, file=out)
        results.append(data)
    return results


def bench_blake2b(*, repetitions: int, budget: float, progress=None, out=sys.stdout) -> dict:
    """1 MiB throughput and 64-byte one-shot latency, against hashlib.blake2b, interleaved."""
    import hashlib

    big, small = bytes(range(256)) * 4096, bytes(range(64))
    cases = {}
    for label, data in (("1 MiB", big), ("64 B one-shot", small)):
        subjects = [Subject(f"argonishche ({registry.get().selected_name('blake2b')})",
                            lambda d=data: blake2b(d).digest())]
        subjects += [Subject(f"  backend {e.name}",
                             lambda d=data, n=e.name: blake2b(d, backend=n).digest())
                     for e in registry.get().usable()]
        subjects.append(Subject("hashlib.blake2b", lambda d=data: hashlib.blake2b(d).digest()))
        check_same_tags(subjects)
        time_interleaved(subjects, repetitions, budget, progress)
        cases[label] = (data, subjects)
    print(f"BLAKE2b (hot; {repetitions} interleaved repetitions; ratio = hashlib time / ours)",
          file=out)
    report = {}
    for label, (data, subjects) in cases.items():
        hashlib_time = subjects[-1].median
        for s in subjects:
            mbps = len(data) / s.median / 1e6
            print(f"  {label:<14}{s.name:<26}{mbps:>10,.1f} MB/s {s.median * 1e9:>12,.0f} ns/call"
                  f"  {_spread(s.samples, lambda x: x * 1e9):>17} ns {hashlib_time / s.median:>7.2f}x",
                  file=out)
            report.setdefault(label, []).append({"subject": s.name.strip(), "mb_per_s": mbps,
                                                 "samples_s": s.samples})
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


def bench_startup(repetitions: int = 15, out=sys.stdout) -> dict:
    """Cold start of a fresh interpreter to its first Argon2 tag, ours against argon2-cffi's.

    Each sample is a new process (cold: imports, plugin discovery, CPU probe and self-test all
    included), interleaved case by case; the first hash uses tiny costs so that start-up shows.
    """
    import subprocess

    import importlib.util

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
              f"{_spread(values, lambda x: x * 1e3):>15} ms", file=out)
    return {name: values for name, values in samples.items()}


# ---- memory: allocators, wiping, batches ------------------------------------------------------

SERVER_POINT = Point("id", 1, 32768, 1)


def bench_memory(point: Point = SERVER_POINT, *, peers: bool, repetitions: int, budget: float,
                 progress=None, out=sys.stdout) -> dict:
    """Every allocator with the wipe on and off, interleaved with the peers, at one point.

    ``system`` with the wipe on is what the reference implementation does on every hash; the
    ratio to it is what the allocation and the wipe cost.
    """
    def hasher(allocator, wipe):
        return lambda: argon2_hash(PASSWORD, SALT, type=point.type, time_cost=point.time_cost,
                                   memory_cost=point.memory_cost,
                                   parallelism=point.parallelism, allocator=allocator, wipe=wipe)
    subjects = [Subject(f"{name} wipe={'on' if wipe else 'off'}", hasher(name, wipe))
                for name in sorted(registry.get().allocators) for wipe in (True, False)]
    subjects += peer_argon2_subjects(point) if peers else []
    check_same_tags(subjects)
    time_interleaved(subjects, repetitions, budget, progress)
    reference = next(s for s in subjects if s.name == "system wipe=on")
    print(f"Argon2{point}: allocator x wipe (hot; {repetitions} interleaved repetitions; "
          f"ratios: their time / this row's)", file=out)
    others = [reference] + [s for s in subjects if " wipe=" not in s.name]
    print(f"  {'allocator':<22}{'hashes/s':>10}  {'min..max':>15}"
          + "".join(f"{'vs ' + o.name:>18}" for o in others), file=out)
    rows = []
    for s in subjects:
        print(f"  {s.name:<22}{1 / s.median:>10,.1f}  {_spread(s.samples, lambda x: 1 / x):>15}"
              + "".join(f"{o.median / s.median:>17.2f}x" for o in others), file=out)
        rows.append({"subject": s.name, "hashes_per_s": 1 / s.median, "samples_s": s.samples})
    return {"point": str(point), "mode": "hot", "results": rows}


def bench_batch(point: Point = SERVER_POINT, *, count: int = 200, workers: int = 2,
                out=sys.stdout) -> dict:
    """hash_many on *workers* threads against the same hashes one after another on one thread,
    alternated three times; and the peak RSS of the process afterwards."""
    import resource

    from .batch import hash_many

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
