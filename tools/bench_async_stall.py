"""Process-wide stalls while hashes run: argonishche against argon2-cffi (issue 24, item 6).

    python tools/bench_async_stall.py loop --rounds 5
    python tools/bench_async_stall.py first-hash           # the arena, 8 new threads in turn
    python tools/bench_async_stall.py first-hash --allocator hugepages
    python tools/bench_async_stall.py steady --ab /path/to/other/python   # interleaved A/B

``loop``: a ticker sleeping *tick* (10 ms) runs on a fresh event loop from before the *count*
(20) default-cost hashes (PasswordHasher() defaults: t=3, m=64 MiB, p=4) are submitted until
all are done; the stall is the ticker's worst lateness.  Submitting counts: the loop's default
executor starts its threads from the loop's own thread, and a thread start maps a stack, which
waits for any other thread holding the process's memory-map lock (a long MADV_POPULATE_WRITE
did, before the arena faulted its memory in a page at a time).  The sides run in the same process,
interleaved (A B C, A B C, ...), after one unmeasured warm-up round:

    ours       argonishche's PasswordHasher.hash through ``run_blocking`` (the shared pool
               that ``hash_async`` uses: one thread per CPU)
    theirs     argon2-cffi's PasswordHasher().hash through ``loop.run_in_executor(None, ...)``
    ours-dflt  argonishche's hash through ``run_in_executor(None, ...)`` (the issue's test)

``first-hash``: 8 threads one after another each hash twice (m=64 MiB, p=4, t=1 by default):
what a new thread adds to a hash.  Work memory is the process's (issue 30): a new thread's first
hash reuses the memory earlier hashes left, so the process's first mapping is made beforehand
(its cost is the first hash in a new process: ``argonishche bench --profile deployed``).
``steady``: the median of back-to-back hashes on one thread.  With ``--ab PYTHON`` each round
runs in a subprocess, alternating this interpreter and *PYTHON* (another build), so both see
the same noise.

Each prints the median and spread (min, quartiles, max) in ms.  A benchmark, not a test:
tests/stress/test_server_safety_stress.py runs :func:`measure` for a few rounds and asserts only
a loose ratio; tests/memory/test_stalls.py checks the mechanism without timing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable

import argonishche
from argonishche._async import run_blocking

#: One call per hash: a password in, an awaitable PHC string out.
Submit = Callable[[str], Awaitable[str]]
TICK = 0.010
MIB_KIB = 1024


async def worst_stall(submit: Submit, count: int, tick: float = TICK) -> tuple[float, float]:
    """(worst lateness of a *tick* ticker started before the hashes are submitted, seconds
    until all *count* hashes were done)."""
    worst = 0.0
    finished = False

    async def ticker() -> None:
        nonlocal worst
        while not finished:
            before = time.perf_counter()
            await asyncio.sleep(tick)
            worst = max(worst, time.perf_counter() - before - tick)

    ticking = asyncio.ensure_future(ticker())
    await asyncio.sleep(tick)  # the ticker is running before the first submission
    started = time.perf_counter()
    await asyncio.gather(*(submit(f"pw{i}") for i in range(count)))
    total = time.perf_counter() - started
    finished = True
    await ticking
    return worst, total


def sides() -> dict[str, Callable[[], Submit]]:
    """Each side: a factory, called inside its event loop, of its submit function."""
    from argon2 import PasswordHasher as Theirs

    ours, theirs = argonishche.PasswordHasher(), Theirs()

    def default_executor(hash_one: Callable[[str], str]) -> Callable[[], Submit]:
        def make() -> Submit:
            loop = asyncio.get_running_loop()
            return lambda password: loop.run_in_executor(None, hash_one, password)
        return make

    return {
        "ours": lambda: lambda password: run_blocking(ours.hash, password),
        "theirs": default_executor(theirs.hash),
        "ours-dflt": default_executor(ours.hash),
    }


def measure(rounds: int, count: int = 20, only: tuple[str, ...] = (), tick: float = TICK
            ) -> dict[str, list[tuple[float, float]]]:
    """{side: [(worst stall s, total s) per round]}, the sides interleaved round by round."""
    made = {name: make for name, make in sides().items() if not only or name in only}

    async def one(make: Callable[[], Submit]) -> tuple[float, float]:
        return await worst_stall(make(), count, tick)

    for make in made.values():  # warm-up: registries, self-tests, first mappings
        asyncio.run(one(make))
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in made}
    for _ in range(rounds):
        for name, make in made.items():  # a fresh loop (and default executor) each time
            rows[name].append(asyncio.run(one(make)))
    return rows


def timed_hash(allocator: str, time_cost: int, memory_mib: int) -> float:
    started = time.perf_counter()
    argonishche.argon2_hash(b"password", b"saltsalt", time_cost=time_cost,
                            memory_cost=memory_mib * MIB_KIB, parallelism=4, allocator=allocator)
    return time.perf_counter() - started


def first_hashes(allocator: str, threads: int = 8, time_cost: int = 1, memory_mib: int = 64
                 ) -> dict[str, list[float]]:
    """{"first": [s], "steady": [s]}: each of *threads* fresh threads, one after another,
    hashes twice."""
    timed_hash("system", 1, 1)  # registry, self-tests and lane threads ready beforehand
    timed_hash(allocator, time_cost, memory_mib)  # the process's first mapping at this size
    rows: dict[str, list[float]] = {"first": [], "steady": []}

    def on_a_new_thread() -> None:
        rows["first"].append(timed_hash(allocator, time_cost, memory_mib))
        rows["steady"].append(timed_hash(allocator, time_cost, memory_mib))

    for _ in range(threads):
        thread = threading.Thread(target=on_a_new_thread)
        thread.start()
        thread.join()
    return rows


def steady_hashes(allocator: str, hashes: int = 15, time_cost: int = 3, memory_mib: int = 64
                  ) -> dict[str, list[float]]:
    timed_hash(allocator, time_cost, memory_mib)
    return {"steady": [timed_hash(allocator, time_cost, memory_mib) for _ in range(hashes)]}


def spread(values: list[float]) -> str:
    """min [q1 median q3] max, in ms."""
    ordered = sorted(values)
    if len(ordered) >= 2:
        q1, median, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = median = q3 = ordered[0]
    return " ".join(f"{v * 1e3:7.1f}" for v in (ordered[0], q1, median, q3, ordered[-1]))


HEADER = f"{'':<16} {'min':>7} {'q1':>7} {'median':>7} {'q3':>7} {'max':>7}"


def report(rows: dict[str, list[tuple[float, float]]], count: int) -> str:
    lines = [f"{count} hashes at a time, PasswordHasher() defaults (t=3, m=64 MiB, p=4); "
             f"{len(next(iter(rows.values())))} rounds; ms", f"{'side':<10} {HEADER[11:]}"]
    for name, values in rows.items():
        lines.append(f"{name:<10} {'stall':<5} {spread([s for s, _ in values])}")
        lines.append(f"{'':<10} {'total':<5} {spread([t for _, t in values])}")
    theirs = [s for s, _ in rows.get("theirs", [])]
    for name in ("ours", "ours-dflt"):
        if name not in rows or not theirs:
            continue
        ours = [s for s, _ in rows[name]]
        lines.append(f"{name}: worst stall {max(ours) * 1e3:.1f} ms against theirs "
                     f"{max(theirs) * 1e3:.1f} ms; goal (2x theirs + 20 ms) "
                     f"{'met' if max(ours) <= 2 * max(theirs) + 0.020 else 'MISSED'}; median "
                     f"ratio ours/theirs {statistics.median(ours) / statistics.median(theirs):.2f}")
    return "\n".join(lines)


def report_timings(title: str, rows: dict[str, list[float]]) -> str:
    lines = [title, HEADER]
    lines += [f"{name:<16} {spread(values)}" for name, values in rows.items()]
    for side in sorted({name.split(" ")[0] for name in rows}):
        first, steady = rows.get(f"{side} first"), rows.get(f"{side} steady")
        if first and steady:
            ratio = max(first) / statistics.median(steady)
            lines.append(f"{side}: worst first / median steady {ratio:.2f} (goal <= 2: "
                         f"{'met' if ratio <= 2 else 'MISSED'})")
    return "\n".join(lines)


def run_ab(args: argparse.Namespace, argv: list[str]) -> dict[str, list[float]]:
    """Rounds in subprocesses alternating this interpreter (A) and args.ab (B)."""
    inner = [a for a in argv if a != "--ab" and a != args.ab] + ["--json", "--rounds", "1"]
    rows: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for side, python in (("A", sys.executable), ("B", args.ab)):
            out = subprocess.run([python, __file__, *inner], capture_output=True, text=True,
                                 timeout=600, check=True)
            for name, values in json.loads(out.stdout.splitlines()[-1]).items():
                rows.setdefault(f"{side} {name}", []).extend(values)
    return rows


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", default="loop", choices=["loop", "first-hash", "steady"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=20, help="hashes started at once")
    parser.add_argument("--tick", type=float, default=TICK * 1e3, help="ticker period, ms")
    parser.add_argument("--only", nargs="*", default=(), choices=["ours", "theirs", "ours-dflt"])
    parser.add_argument("--allocator", default="arena")
    parser.add_argument("--time-cost", type=int)
    parser.add_argument("--ab", metavar="PYTHON", help="alternate rounds with this interpreter")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.what == "loop":
        rows = measure(args.rounds, args.count, tuple(args.only), args.tick / 1e3)
        print(report(rows, args.count))
        return
    if args.ab:
        print(report_timings(f"{args.what}, {args.allocator}, A = {sys.executable}, "
                             f"B = {args.ab}; ms", run_ab(args, argv)))
        return
    timings: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        if args.what == "first-hash":
            got = first_hashes(args.allocator, time_cost=args.time_cost or 1)
        else:
            got = steady_hashes(args.allocator, time_cost=args.time_cost or 3)
        for name, values in got.items():
            timings.setdefault(name, []).extend(values)
    if args.json:
        print(json.dumps(timings))
    else:
        print(report_timings(f"{args.what}, {args.allocator}; ms",
                             {f"this {name}": v for name, v in timings.items()}))


if __name__ == "__main__":
    main()
