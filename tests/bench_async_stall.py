"""The event loop's worst stall while hashes run off it: argonishche against argon2-cffi.

    python tests/bench_async_stall.py --rounds 10

Each measurement starts *count* (20) default-cost hashes at once (PasswordHasher() defaults:
t=3, m=64 MiB, p=4) from a fresh event loop and, until all are done, runs a ticker that sleeps
1 ms; the stall is the ticker's worst lateness (time slept minus 1 ms).  The sides run in the
same process, interleaved (A B C, A B C, ...), after one unmeasured warm-up round:

    ours       argonishche's PasswordHasher.hash through ``run_blocking`` (the shared pool
               that ``hash_async`` uses: one thread per CPU)
    theirs     argon2-cffi's PasswordHasher().hash through ``loop.run_in_executor(None, ...)``
    ours-dflt  (for reference) argonishche's hash through ``run_in_executor(None, ...)``

It prints, per side, the median and spread (min, quartiles, max) of the worst stall and the
time all hashes took, then the ratio theirs / ours of the medians and the median of the
per-round ratios.  A benchmark, not a test: tests/stress/test_server_safety_stress.py runs
:func:`measure` for a few rounds and asserts only a loose ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import argonishche
from argonishche._async import run_blocking

#: One call per hash: a password in, an awaitable PHC string out.
Submit = Callable[[str], Awaitable[str]]
TICK = 0.001


async def worst_stall(submit: Submit, count: int) -> tuple[float, float]:
    """(worst lateness of a 1 ms ticker, seconds until all *count* hashes were done)."""
    started = time.perf_counter()
    jobs = [asyncio.ensure_future(submit(f"pw{i}")) for i in range(count)]
    worst = 0.0
    while not all(job.done() for job in jobs):
        before = time.perf_counter()
        await asyncio.sleep(TICK)
        worst = max(worst, time.perf_counter() - before - TICK)
    await asyncio.gather(*jobs)
    return worst, time.perf_counter() - started


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


def measure(rounds: int, count: int = 20, only: tuple[str, ...] = ()
            ) -> dict[str, list[tuple[float, float]]]:
    """{side: [(worst stall s, total s) per round]}, the sides interleaved round by round."""
    made = {name: make for name, make in sides().items() if not only or name in only}

    async def one(make: Callable[[], Submit]) -> tuple[float, float]:
        return await worst_stall(make(), count)

    for make in made.values():  # warm-up: registries, self-tests, first mappings
        asyncio.run(one(make))
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in made}
    for _ in range(rounds):
        for name, make in made.items():  # a fresh loop (and default executor) each time
            rows[name].append(asyncio.run(one(make)))
    return rows


def spread(values: list[float]) -> str:
    """min [q1 median q3] max, in ms."""
    ordered = sorted(values)
    if len(ordered) >= 2:
        q1, median, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = median = q3 = ordered[0]
    return " ".join(f"{v * 1e3:7.1f}" for v in (ordered[0], q1, median, q3, ordered[-1]))


def report(rows: dict[str, list[tuple[float, float]]], count: int) -> str:
    lines = [f"{count} hashes at a time, PasswordHasher() defaults (t=3, m=64 MiB, p=4); "
             f"{len(next(iter(rows.values())))} rounds; ms",
             f"{'side':<10} {'':<6} {'min':>7} {'q1':>7} {'median':>7} {'q3':>7} {'max':>7}"]
    for name, values in rows.items():
        lines.append(f"{name:<10} {'stall':<6} {spread([s for s, _ in values])}")
        lines.append(f"{'':<10} {'total':<6} {spread([t for _, t in values])}")
    if "ours" in rows and "theirs" in rows:
        ours = [s for s, _ in rows["ours"]]
        theirs = [s for s, _ in rows["theirs"]]
        paired = [t / o for o, t in zip(ours, theirs, strict=True) if o > 0]
        of_medians = statistics.median(theirs) / max(statistics.median(ours), 1e-9)
        lines.append(f"stall ratio theirs/ours: of the medians {of_medians:.2f}; per round: "
                     f"median {statistics.median(paired):.2f}, min {min(paired):.2f}, "
                     f"max {max(paired):.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--count", type=int, default=20, help="hashes started at once")
    parser.add_argument("--only", nargs="*", default=(), choices=["ours", "theirs", "ours-dflt"])
    args = parser.parse_args(argv)
    rows = measure(args.rounds, args.count, tuple(args.only))
    print(report(rows, args.count))


if __name__ == "__main__":
    main()
