"""The ``argonishche bench`` subcommand: its flags, and a run of the suites they choose.

The parser is built on every ``argonishche`` call, so this module imports the rest of the
benchmark only when ``bench`` runs: ``hash`` and ``verify`` do not pay for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from .._cli_arguments import output_file, real_number, whole_number
from ..exceptions import ArgonishcheError

if TYPE_CHECKING:
    from .points import Point
    from .progress import Progress

#: The optional extra that brings in matplotlib for ``bench --plot``.
PLOT_HINT = "pip install argonishche[plot]"
#: ``--profile``'s choices, named here so that building the parser imports no profile (the
#: profiles module's tests check it against its PROFILES).
PROFILE_NAMES = ("deployed",)
#: A hot sample's most seconds: 50 times the default already averages out a scheduler's noise,
#: and the default run (5 points x about 5 subjects x 7 repetitions) takes half an hour at it.
MAX_BUDGET_SECONDS = 10.0
#: The longest --pause: a VM's host takes freed memory back within seconds (docs/memory.md).
MAX_PAUSE_SECONDS = 3600.0
#: The most passwords --batch times: each is hashed in every round, so this many take hours.
#: Memory does not bound it: hash_many's work memory is its workers', whatever N, and N
#: passwords and tags take a few hundred bytes each.
MAX_BATCH = 100_000


def argon2_point(text: str) -> Point:
    """``TYPE,T,M,P`` as a benchmark point (:meth:`Point.parse`, which checks it), for argparse;
    points are imported only when a ``--point`` is given."""
    from .points import Point

    try:
        return Point.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """``argonishche bench``: 0, 2 for bad flags, 130 when interrupted (what was measured by
    then is printed and saved all the same)."""
    from .compare import compare_report, load
    from .machine import machine_description, machine_state
    from .plot import load_pyplot, plot
    from .points import DEFAULT_POINTS
    from .progress import Progress, printing_above
    from .report import noise_report

    if args.plot:
        try:
            load_pyplot()
        except ImportError:
            print(f"argonishche bench: --plot needs matplotlib: {PLOT_HINT}", file=sys.stderr)
            return 2
    points = list(args.point) or list(DEFAULT_POINTS)  # checked as parsed (argon2_point)
    conflict = profile_conflict(args)
    if conflict:
        print(f"argonishche bench: {conflict}", file=sys.stderr)
        return 2
    saved: dict[str, Any] | None = None
    if args.compare:
        try:
            saved = load(args.compare)  # before the run: a wrong path is told at once
        except ValueError as exc:
            print(f"argonishche bench: --compare: {exc}", file=sys.stderr)
            return 2
    modes = [mode for mode in ("hot", "cold") if getattr(args, mode)] or ["hot"]
    progress = Progress(sys.stderr) if sys.stderr.isatty() else None
    before = machine_state()
    results: dict[str, Any] = {"machine": machine_description()}
    try:
        print(selection_report(results))
    except ArgonishcheError as exc:  # no usable backend, an invalid setting: say it and stop
        print(f"argonishche bench: {exc}", file=sys.stderr)
        return 2
    status = 0
    try:
        with printing_above(progress):  # tables are printed while the bar shows
            run_suites(args, points, modes, progress, results)
    except KeyboardInterrupt:
        if progress:
            progress.clear()
        print("\ninterrupted: the tables above are what was measured; the rest was not")
        results["interrupted"] = True
        status = 130
    finally:
        if progress:
            progress.clear()
    text, results["noise"] = noise_report(results, before)
    print(text)
    if saved is not None:
        text, results["compare"] = compare_report(saved, results, args.compare)
        print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    if args.plot:
        if results.get("argon2"):
            what = f"profile {args.profile}: hot, first" if args.profile else ", ".join(modes)
            plot(results["argon2"], args.plot,
                 title=f"Argon2 hashes/s, one Python thread ({what}); {results['machine']}")
            print(f"plot: {args.plot}")
        else:
            print("argonishche bench: nothing to plot (no Argon2 table was measured)",
                  file=sys.stderr)
    return status


def run_suites(args: argparse.Namespace, points: list[Point], modes: list[str],
               progress: Progress | None, results: dict[str, Any]) -> None:
    """The suites the flags choose, each printing its tables and keeping them in *results*."""
    from . import suites

    if args.startup:
        results["startup"] = suites.bench_startup(args.repetitions)
    if args.profile:
        from .profiles import PROFILES, bench_profile

        results["argon2"], results["profile"] = [], {}
        bench_profile(PROFILES[args.profile], repetitions=args.repetitions,
                      budget=args.budget, pause=args.pause, progress=progress,
                      results=results["argon2"], summary=results["profile"])
    elif not args.no_argon2:
        results["argon2"] = []
        suites.bench_argon2(points, peers=args.peers, repetitions=args.repetitions,
                            budget=args.budget, modes=modes, progress=progress,
                            results=results["argon2"])
    if args.memory:
        results["memory"] = suites.bench_memory(peers=args.peers,
                                                repetitions=args.repetitions,
                                                budget=args.budget, progress=progress)
    if args.batch:
        results["batch"] = suites.bench_batch(count=args.batch)
    if not args.no_blake2b:
        results["blake2b"] = suites.bench_blake2b(repetitions=args.repetitions,
                                                  budget=args.budget, progress=progress)


def profile_conflict(args: argparse.Namespace) -> str | None:
    """Why the flags cannot go together, or None: a profile brings its own points and modes,
    and only its first hashes have a pause."""
    if args.profile is None:
        return "--pause applies to --profile's first hashes only" if args.pause else None
    clashing = [flag for flag, given in (("--point", args.point), ("--hot", args.hot),
                                         ("--cold", args.cold), ("--no-argon2", args.no_argon2))
                if given]
    if clashing:
        return (f"--profile {args.profile} brings its own points and modes: drop "
                f"{', '.join(clashing)}")
    return None


def selection_report(results: dict[str, Any]) -> str:
    """Which backend hashes each algorithm in this run and why (``info`` says the same); kept in
    *results* too."""
    from .. import _registry
    from .._info import describe

    reg = _registry.get()
    reg.kernel_table("argon2")  # raises the selection's error, if it had one
    results["selection"] = {a: c._asdict() for a, c in reg.choices.items()}
    return "\n".join(["Selected backends (argonishche's rows below use them):"] + [
        f"  {algorithm:<8} {choice.backend:<10} {describe(choice._asdict())}"
        for algorithm, choice in reg.choices.items()])


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` to the CLI's *commands* (its subparsers)."""
    parser = commands.add_parser(
        "bench", help="hashes/s and cycles per block of every backend (and peers), interleaved",
        description="Time every usable backend (and peers) at Argon2 points, interleaved; "
                    "report medians, min..max, the spread and a noise verdict.")
    parser.add_argument("--peers", action="store_true",
                        help="also time argon2-cffi, PyNaCl and cryptography if installed")
    parser.add_argument("--point", action="append", default=[], metavar="TYPE,T,M,P",
                        type=argon2_point,
                        help="an Argon2 point such as id,3,65536,4 (repeatable), within "
                             "argonishche's default Limits")
    parser.add_argument("--hot", action="store_true",
                        help="steady state, work memory reused (the default)")
    parser.add_argument("--cold", action="store_true",
                        help="one hash per sample after evicting the caches, work memory "
                             "allocated per hash (with --hot: both)")
    parser.add_argument("--profile", choices=sorted(PROFILE_NAMES), metavar="NAME",
                        help="instead of --point: a named set of points (deployed: the "
                             "Argon2id points people deploy), each timed in steady state "
                             "(default and every allocator, and the peers) and as the first "
                             "hash in a new process")
    parser.add_argument("--pause", type=real_number("seconds", MAX_PAUSE_SECONDS, zero=True),
                        default=0.0, metavar="SECONDS",
                        help=f"with --profile: sleep this long before each new process "
                             f"(default 0, at most {MAX_PAUSE_SECONDS:g})")
    parser.add_argument("--repetitions", type=whole_number(1, 10**6), default=7, metavar="N",
                        help="interleaved repetitions per subject (default 7; a profile's "
                             "largest points take fewer)")
    parser.add_argument("--budget", type=real_number("seconds", MAX_BUDGET_SECONDS),
                        default=0.2, metavar="SECONDS",
                        help=f"time per hot sample, above 0 and at most {MAX_BUDGET_SECONDS:g} "
                             f"(default 0.2)")
    parser.add_argument("--no-blake2b", action="store_true")
    parser.add_argument("--no-argon2", action="store_true")
    parser.add_argument("--memory", action="store_true",
                        help="also time every allocator with the wipe on and off")
    parser.add_argument("--batch", type=whole_number(1, MAX_BATCH), metavar="N",
                        help=f"also time hash_many of N passwords against one thread "
                             f"(at most {MAX_BATCH:,})")
    parser.add_argument("--startup", action="store_true",
                        help="also time a new process's import and first hash")
    parser.add_argument("--json", metavar="FILE", type=output_file,
                        help="also write the results as JSON")
    parser.add_argument("--compare", metavar="OLD.json",
                        help="also print each row's ratio to a run saved with --json, "
                             "flagging rows slower beyond the runs' noise")
    parser.add_argument("--plot", metavar="FILE.png", type=output_file,
                        help="also draw hashes/s against memory size per backend "
                             f"(needs matplotlib: {PLOT_HINT})")
    parser.set_defaults(run=run)
