"""BLAKE2b at the Python boundary: argonishche.blake2b against hashlib.blake2b.

    python tools/bench_blake2b_boundary.py --rounds 41

Cases (each the whole user-visible pattern, measured with timeit in this process):

    oneshot-64      blake2b(data).digest()                      64-byte data
    update-64       h = blake2b(); h.update(data); h.digest()   64-byte data
    keyed-64        blake2b(data, key=key).digest()             64-byte data, 32-byte key
    oneshot-1MiB    blake2b(data).digest()                      1 MiB data

The two sides run interleaved (ours, hashlib, hashlib, ours, ... the order alternating by
round) in short batches (about 10 ms), after one unmeasured warm-up round, so that a load
change on the machine hits both.  Per case it prints each side's median and spread (min..max)
of the time per call, and the per-round ratio ours / hashlib: its median and min..max (below
1.0: ours is faster), and the ratio of the two sides' fastest rounds ("best").

``--impl module:attribute`` measures another class instead of ``argonishche.blake2b`` (e.g.
``argonishche._blake2:blake2b``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import statistics
import timeit
from collections.abc import Callable

CASES: dict[str, tuple[str, int]] = {  # name -> (statement, data length)
    "oneshot-64": ("h(d).digest()", 64),
    "update-64": ("o = h(); o.update(d); o.digest()", 64),
    "keyed-64": ("h(d, key=k).digest()", 64),
    "oneshot-1MiB": ("h(d).digest()", 1 << 20),
}
#: Target seconds per timed batch; the number of calls per batch is fixed from the warm-up.
BATCH_SECONDS = 0.01


def load(spec: str) -> Callable[..., object]:
    module, _, attribute = spec.partition(":")
    return getattr(importlib.import_module(module), attribute or "blake2b")


def timer(impl: Callable[..., object], statement: str, size: int) -> timeit.Timer:
    data = bytes(range(256)) * (size // 256) if size >= 256 else bytes(range(size))
    return timeit.Timer(statement, globals={"h": impl, "d": data, "k": b"K" * 32})


def per_call(t: timeit.Timer, number: int) -> float:
    return t.timeit(number) / number


def run(ours: Callable[..., object], rounds: int, cases: list[str]) -> list[str]:
    lines = []
    for case in cases:
        statement, size = CASES[case]
        sides = {"ours": timer(ours, statement, size), "hashlib": timer(hashlib.blake2b,
                                                                         statement, size)}
        # Warm-up, and the calls per batch: about BATCH_SECONDS for hashlib.
        number = max(1, int(BATCH_SECONDS / max(per_call(sides["hashlib"], 10), 1e-9)))
        for t in sides.values():
            t.timeit(number)
        times: dict[str, list[float]] = {"ours": [], "hashlib": []}
        for r in range(rounds):
            order = ("ours", "hashlib") if r % 2 == 0 else ("hashlib", "ours")
            for side in order:
                times[side].append(per_call(sides[side], number))
        ratios = [a / b for a, b in zip(times["ours"], times["hashlib"], strict=True)]
        unit, scale = ("us", 1e6) if size >= 4096 else ("ns", 1e9)

        def spread(values: list[float], scale: float = scale) -> str:
            return (f"{statistics.median(values) * scale:9.1f} "
                    f"({min(values) * scale:.1f}..{max(values) * scale:.1f})")

        lines.append(f"{case:13} ours {spread(times['ours'])} {unit}   "
                     f"hashlib {spread(times['hashlib'])} {unit}   "
                     f"ratio {statistics.median(ratios):.2f} "
                     f"({min(ratios):.2f}..{max(ratios):.2f}) "
                     f"best {min(times['ours']) / min(times['hashlib']):.2f}   "
                     f"[{number} calls x {rounds}]")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--impl", default="argonishche:blake2b")
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    args = parser.parse_args()
    ours = load(args.impl)
    ours(b"warm up the registry").digest()  # type: ignore[attr-defined]
    print(f"ours = {args.impl} ({getattr(ours, '__module__', '?')}.{ours.__qualname__})")
    for line in run(ours, args.rounds, args.case or list(CASES)):
        print(line)


if __name__ == "__main__":
    main()
