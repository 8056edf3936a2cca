"""The ``argonishche`` command (also ``python -m argonishche``)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import info, registry, selftest


def _info(args) -> int:
    report = info.collect(cpuinfo=not args.fast)
    print(json.dumps(report, indent=2) if args.json else info.render(report))
    bad_allocator = report["allocator"] not in {a["name"] for a in report["allocators"]}
    return 1 if report["error"] or bad_allocator else 0


def _selftest(args) -> int:
    reg = registry.get()
    status = 0
    for entry in reg.entries.values():
        if entry.table is None:
            print(f"{entry.name:<10} not run: {entry.state}"
                  + (f" ({entry.reason})" if entry.reason else ""))
            continue
        failures = selftest.run(entry.table, full=True)
        print(f"{entry.name:<10} {'FAIL' if failures else 'ok'}")
        for failure in failures:
            print(f"{'':<10} wrong: {failure}")
        status |= bool(failures)
    return status


def _bench(args) -> int:
    from . import bench

    def progress(text):
        sys.stderr.write(f"\r\033[K[bench] {text}")
        sys.stderr.flush()
    show = progress if sys.stderr.isatty() else None
    results = {}
    try:
        if args.startup:
            results["startup"] = bench.bench_startup(args.repetitions)
        if not args.no_argon2:
            points = [bench.Point.parse(p) for p in args.point] or list(bench.DEFAULT_POINTS)
            results["argon2"] = bench.bench_argon2(points, peers=args.peers,
                                                   repetitions=args.repetitions,
                                                   budget=args.budget, progress=show)
        if args.memory:
            results["memory"] = bench.bench_memory(peers=args.peers,
                                                   repetitions=args.repetitions,
                                                   budget=args.budget, progress=show)
        if args.batch:
            results["batch"] = bench.bench_batch(count=args.batch)
        if not args.no_blake2b:
            results["blake2b"] = bench.bench_blake2b(repetitions=args.repetitions,
                                                     budget=args.budget, progress=show)
    except KeyboardInterrupt:
        print("\ninterrupted: the tables above are complete, the rest was not measured")
        return 130
    finally:
        if show:
            sys.stderr.write("\r\033[K")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="argonishche", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    info_parser = commands.add_parser("info", help="CPU features, backends and their state")
    info_parser.add_argument("--json", action="store_true", help="machine-readable output")
    info_parser.add_argument("--fast", action="store_true",
                             help="skip py-cpuinfo's cross-check (it takes about a second)")
    info_parser.set_defaults(run=_info)
    commands.add_parser("selftest", help="every known-answer vector on every usable backend"
                        ).set_defaults(run=_selftest)
    bench_parser = commands.add_parser(
        "bench", help="hashes/s and cycles per block of every backend (and peers), interleaved")
    bench_parser.add_argument("--peers", action="store_true",
                              help="also time argon2-cffi, PyNaCl and cryptography if installed")
    bench_parser.add_argument("--point", action="append", default=[], metavar="TYPE,T,M,P",
                              help="an Argon2 point such as id,3,65536,4 (repeatable)")
    bench_parser.add_argument("--repetitions", type=int, default=7, metavar="N",
                              help="interleaved repetitions per subject (default 7)")
    bench_parser.add_argument("--budget", type=float, default=0.2, metavar="SECONDS",
                              help="time per sample (default 0.2)")
    bench_parser.add_argument("--no-blake2b", action="store_true")
    bench_parser.add_argument("--no-argon2", action="store_true")
    bench_parser.add_argument("--memory", action="store_true",
                              help="also time every allocator with the wipe on and off")
    bench_parser.add_argument("--batch", type=int, default=0, metavar="N",
                              help="also time hash_many of N passwords against one thread")
    bench_parser.add_argument("--startup", action="store_true",
                              help="also time a new process's import and first hash")
    bench_parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    bench_parser.set_defaults(run=_bench)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:
        # `argonishche info | head`: the reader left; say nothing more (Python's documented way).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
