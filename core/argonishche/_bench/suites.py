"""What ``argonishche bench`` measures: each suite makes its subjects, checks they agree, times
them interleaved and prints its table.

- :func:`bench_argon2`: every usable backend (and the peers) at each point, hot and/or cold;
- :func:`bench_memory`: every allocator with the wipe on and off;
- :func:`bench_batch`: ``hash_many`` against one thread;
- :func:`bench_startup`: a new interpreter's import and first hash;
- :func:`bench_blake2b`: throughput and 64-byte latency against ``hashlib``.

Each prints to *out*, ``sys.stdout`` looked up per call so that it can be redirected.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from .. import _registry, _settings
from .._argon2 import argon2_hash, argon2_hash_encoded, argon2_verify
from .._blake2 import blake2b
from .peers import peer_argon2_subjects
from .points import PASSWORD, SALT, SERVER_POINT, Point
from .progress import Progress
from .report import (
    LADDER_STARTUP,
    MEASURE_STARTUP,
    argon2_preamble,
    argon2_report,
    batch_report,
    blake2b_report,
    memory_report,
    startup_report,
)
from .timing import CacheEvictor, Subject, check_same_tags, core_clock_hz, time_interleaved

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, TextIO


def our_hasher(point: Point, **options: Any) -> Callable[[], bytes]:
    """A subject's run: our argon2_hash at *point*, with *options* (backend, allocator, wipe)."""
    kwargs = {**point.costs, **options}
    return lambda: argon2_hash(PASSWORD, SALT, **kwargs)


def _verifier(point: Point, **options: Any) -> Callable[[], bytes]:
    """A subject's run: verifying the right password at *point*; the tag it confirmed."""
    encoded = argon2_hash_encoded(PASSWORD, SALT, **point.costs, backend="ref")
    tag = argon2_hash(PASSWORD, SALT, **point.costs, backend="ref")
    return lambda: argon2_verify(encoded, PASSWORD, **options) and tag


def our_argon2_subjects(point: Point, allocator: str | None = None) -> list[Subject]:
    """The selected backend, then each usable backend forced by name.  A third-party backend
    also verifies, as the selected one does: its hash pays for the witness (a built-in
    recomputes the tag), a right password's verify does not, and the rows show both."""
    reg = _registry.get()
    selected = reg.selected_name("argon2")
    subjects = [Subject(f"argonishche ({selected})",
                        our_hasher(point, backend=None, allocator=allocator))]
    third_party = [entry for entry in reg.usable() if not entry.first_party]
    if third_party:
        subjects.append(Subject(f"argonishche ({selected}) verify",
                                _verifier(point, backend=None, allocator=allocator)))
    witness = "witnessed" if reg.settings.witness else "witness off"
    for entry in reg.usable():
        label = f"  backend {entry.name}"
        subjects.append(Subject(label if entry.first_party else f"{label} (third-party, {witness})",
                                our_hasher(point, backend=entry.name, allocator=allocator)))
        if not entry.first_party:
            subjects.append(Subject(f"{label} verify",
                                    _verifier(point, backend=entry.name, allocator=allocator)))
    return subjects


def bench_argon2(points: Iterable[Point], *, peers: bool, repetitions: int, budget: float,
                 modes: Iterable[str] = ("hot",), progress: Progress | None = None,
                 out: TextIO | None = None,
                 results: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One table per point and mode, appended to *results* as each is finished (so that an
    interrupted run keeps them; the table being measured is kept too if every subject finished
    at least one repetition).

    Cold subjects hash with ``allocator="system"``, work memory allocated for each hash, as the
    reference implementation and the peers do.
    """
    out = sys.stdout if out is None else out
    results = [] if results is None else results
    clock_hz = core_clock_hz()
    print(argon2_preamble(clock_hz), file=out)
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


def bench_memory(point: Point = SERVER_POINT, *, peers: bool, repetitions: int, budget: float,
                 progress: Progress | None = None,
                 out: TextIO | None = None) -> dict[str, Any]:
    """Every allocator with the wipe on and off, interleaved with the peers, at one point.

    ``system`` with the wipe on is what the reference implementation does on every hash; the
    ratio to it is what the allocation and the wipe cost.
    """
    out = sys.stdout if out is None else out
    subjects = [Subject(f"{name} wipe={'on' if wipe else 'off'}",
                        our_hasher(point, allocator=name, wipe=wipe))
                for name in sorted(_registry.get().allocators) for wipe in (True, False)]
    subjects += peer_argon2_subjects(point) if peers else []
    check_same_tags(subjects)
    if progress:
        progress.start("memory", len(subjects) * repetitions)
    time_interleaved(subjects, repetitions, budget, progress)
    text, data = memory_report(point, subjects, repetitions)
    print(text, file=out)
    return data


def _peak_rss() -> int:
    """The process's peak resident set in bytes; 0 where there is no ``resource`` module
    (Windows has no getrusage), imported here so that no platform lacks the benchmark."""
    try:
        import resource
    except ImportError:
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # ru_maxrss is in KiB


def bench_batch(point: Point = SERVER_POINT, *, count: int = 200, workers: int = 2,
                rounds: int = 7, out: TextIO | None = None) -> dict[str, Any]:
    """hash_many on *workers* threads against the same hashes one after another on one thread,
    in *rounds* pairs, the order swapped every other pair (so that a drift of the machine's
    load, or of its clock, falls on both alike); the ratio of each pair, and the peak RSS of
    the process afterwards.  One hash and one batch first, uncounted: the pool's threads are
    started and the work memory mapped before any timing, as in a server's steady state."""
    out = sys.stdout if out is None else out
    from .._batch import hash_many

    passwords = [f"password {i}" for i in range(count)]
    serial: list[float] = []
    batch: list[float] = []

    def one_thread() -> None:
        for password in passwords:
            argon2_hash(password, SALT, threads=1, **point.costs)

    def many() -> None:
        hash_many(passwords, workers=workers, **point.costs)

    argon2_hash(PASSWORD, SALT, threads=1, **point.costs)
    hash_many(passwords[:workers], workers=workers, **point.costs)
    for round_ in range(rounds):
        pair = ((one_thread, serial), (many, batch))
        for run, times in pair if round_ % 2 == 0 else pair[::-1]:
            started = time.perf_counter()
            run()
            times.append((time.perf_counter() - started) / count)
    peak = _peak_rss()
    text, data = batch_report(point, count=count, workers=workers, serial=serial, batch=batch,
                              peak=peak)
    print(text, file=out)
    return data


OUR_STARTUP = "import argonishche + first hash"
PEER_STARTUP = "import argon2 + first hash"
_OURS = ("import argonishche; argonishche.argon2_hash(b'pw', b'saltsalt', memory_cost=8, "
         "parallelism=1, time_cost=1)")
#: name: (code, the ARGONISHCHE_SELECT it runs with, or None for the caller's).  auto reads
#: the selection remembered for this CPU, priority measures nothing, measure measures in
#: every process, as the first process on a CPU does.
STARTUP_CASES: dict[str, tuple[str, str | None]] = {
    "python -c pass": ("pass", None),
    OUR_STARTUP: (_OURS, "auto"),
    LADDER_STARTUP: (_OURS, "priority"),
    MEASURE_STARTUP: (_OURS, "measure"),
    PEER_STARTUP: (
        "import argon2.low_level as a; a.hash_secret_raw(b'pw', b'saltsalt', time_cost=1, "
        "memory_cost=8, parallelism=1, hash_len=32, type=a.Type.ID)", None),
}


def bench_startup(repetitions: int = 15, out: TextIO | None = None) -> dict[str, Any]:
    """Cold start of a fresh interpreter to its first Argon2 tag, ours against argon2-cffi's,
    and ours with the remembered selection against the ladder and against measuring anew.

    Each sample is a new process (cold: imports, plugin discovery, CPU probe and self-test all
    included), interleaved case by case, the order reversed every other repetition; the first
    hash uses tiny costs so that start-up shows.  Bytecode is cached (as in any installed
    package) in a directory of this run's, warmed by one uncounted run of each case, so that a
    stale or unwritable ``__pycache__`` (``PYTHONDONTWRITEBYTECODE``) cannot count as start-up;
    ``-E``, so that no ``PYTHON*`` variable of this shell applies (``ARGONISHCHE_*`` ones do).
    """
    out = sys.stdout if out is None else out
    import importlib.util
    import subprocess
    import tempfile

    cases = dict(STARTUP_CASES)
    if importlib.util.find_spec("argon2") is None:
        cases.pop(PEER_STARTUP)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    environments = {name: None if select is None else
                    _settings.environment_with(ARGONISHCHE_SELECT=select)
                    for name, (_, select) in cases.items()}
    with tempfile.TemporaryDirectory(prefix="argonishche-bench-") as cache:
        # -E: no PYTHON* variable of this shell (PYTHONDONTWRITEBYTECODE...) applies to them.
        commands = {name: [sys.executable, "-E", "-X", f"pycache_prefix={cache}", "-c", code]
                    for name, (code, _) in cases.items()}
        for name, command in commands.items():  # compiles every module once, uncounted
            subprocess.run(command, check=True, env=environments[name])
        for repetition in range(repetitions):
            order = list(commands.items())
            for name, command in order if repetition % 2 == 0 else order[::-1]:
                started = time.perf_counter()
                subprocess.run(command, check=True, env=environments[name])
                samples[name].append(time.perf_counter() - started)
    print(startup_report(samples, repetitions), file=out)
    return {name: values for name, values in samples.items()}


def bench_blake2b(*, repetitions: int, budget: float, progress: Progress | None = None,
                  out: TextIO | None = None) -> dict[str, Any]:
    """1 MiB throughput, and 64-byte latency against hashlib.blake2b, interleaved: one-shot
    (``blake2b(data).digest()``), and as an object (new, update, digest) unkeyed and keyed."""
    out = sys.stdout if out is None else out
    import hashlib

    big, small = bytes(range(256)) * 4096, bytes(range(64))
    key = bytes(range(32))
    cases = {}
    for label, data, mode in (("1 MiB", big, None), ("64 B one-shot", small, None),
                              ("64 B object", small, "object"),
                              ("64 B keyed object", small, "keyed")):

        def ours(d: bytes = data, mode: str | None = mode) -> bytes:
            if mode is not None:
                h = blake2b(key=key) if mode == "keyed" else blake2b()
                h.update(d)
                return h.digest()
            return blake2b(d).digest()

        subjects = [Subject(f"argonishche ({_registry.get().selected_name('blake2b')})", ours)]
        if len(data) > len(small):
            # Not at 64 bytes: there a call with backend= (a slower argument path in Python)
            # would time that path, not the kernel, which the selected row already shows.
            for e in _registry.get().usable():
                def forced(d: bytes = data, n: str = e.name) -> bytes:
                    return blake2b(d, backend=n).digest()

                subjects.append(Subject(f"  backend {e.name}", forced))

        def theirs(d: bytes = data, mode: str | None = mode) -> bytes:
            if mode is not None:
                h = hashlib.blake2b(key=key) if mode == "keyed" else hashlib.blake2b()
                h.update(d)
                return h.digest()
            return hashlib.blake2b(d).digest()

        subjects.append(Subject("hashlib.blake2b", theirs))
        cases[label] = (data, subjects)
    if progress:
        progress.start("blake2b", sum(len(s) for _, s in cases.values()) * repetitions)
    for label, (_, subjects) in cases.items():
        check_same_tags(subjects)
        time_interleaved(subjects, repetitions, budget, progress, label=f"{label}: ")
    text, report = blake2b_report(cases, repetitions)
    print(text, file=out)
    return report
