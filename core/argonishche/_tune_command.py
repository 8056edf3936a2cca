"""The ``argonishche tune`` subcommand: its flags, and a run of the measurement and the search.

The search itself is :mod:`argonishche._tune`; this module imports it only when ``tune`` runs.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

from ._cli_arguments import fail, real_number, whole_number

if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    """Kernels measured and the choice remembered, then (unless --kernels-only) Argon2id
    parameters recommended; 0, 1 if nothing met the latency target, 2 for a budget the process
    cannot have (refused before anything is measured)."""
    from . import _tune, _tune_search
    from ._bench.progress import Progress
    from .exceptions import ArgonishcheError, ParameterError

    progress = Progress(sys.stderr) if sys.stderr.isatty() else None
    concurrency = args.concurrency or os.cpu_count() or 1
    try:
        budget = None if args.kernels_only else _tune.plan_budget(args.memory_budget,
                                                                  concurrency)
    except ParameterError as exc:
        return fail(str(exc), 2)

    def step(label: str) -> None:
        if progress:  # the search's length is not known ahead: the bar's end moves with it
            progress.total = max(progress.total, progress.done + 1)
            progress.step(label)
    try:
        if progress:
            progress.start("kernels", args.rounds)
        kernels = _tune.tune_kernels(args.rounds, progress.step if progress else None)
        parameters = None
        if budget is not None:
            if progress:  # a typical search: about 8 candidates of MIN_SAMPLES hashes
                progress.start("parameters", 8 * (1 + -(-_tune_search.MIN_SAMPLES //
                                                        concurrency)))
            parameters = _tune.recommend(args.latency, concurrency, budget, step)
    except (ArgonishcheError, MemoryError) as exc:
        return fail(str(exc), 1)
    finally:
        if progress:
            progress.clear()
    if args.json:
        print(json.dumps(_tune.as_json(kernels, parameters), indent=2))
    else:
        lines = _tune.render_kernels(kernels)
        if parameters is not None:
            lines += [""] + _tune.render_parameters(parameters)
        print("\n".join(lines))
    return 1 if parameters is not None and parameters["chosen"] is None else 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ._tune import DEFAULT_LATENCY_MS, KERNEL_ROUNDS, MAX_LATENCY_MS

    parser = commands.add_parser(
        "tune", help="measure the kernels, remember the fastest, recommend Argon2id parameters",
        description="Measure every usable backend's kernels with many interleaved rounds and "
                    "print their cycles per Argon2 block and per BLAKE2b byte, the choice and "
                    "its margin; remember the choice (as ARGONISHCHE_SELECT=measure does). Then "
                    "recommend Argon2id parameters for this machine by RFC 9106 section 4: the "
                    "most memory per hash the work-memory budget allows at the given "
                    "concurrency, then the most passes whose 95th-percentile latency meets the "
                    "target, each timed as that many hashes at once; say what the budget holds, "
                    "and warn below OWASP's minimums.")
    parser.add_argument("--latency", type=real_number("milliseconds", MAX_LATENCY_MS),
                        default=DEFAULT_LATENCY_MS, metavar="MS",
                        help=f"the most one hash may take (its 95th percentile), in milliseconds "
                             f"above 0 and at most {MAX_LATENCY_MS:,.0f} (default "
                             f"{DEFAULT_LATENCY_MS:.0f}, RFC 9106's front-end server example)")
    parser.add_argument("--concurrency", type=whole_number(1, 4096), metavar="N",
                        help="hashes running at once (default: the number of CPUs)")
    parser.add_argument("--memory-budget", type=whole_number(1, 2**32 - 1), metavar="MIB",
                        help="MiB of work memory all concurrent hashes may use together "
                             "(default: the process's work-memory budget, "
                             "ARGONISHCHE_MEMORY_BUDGET_MIB or half of what the process may "
                             "use); a plan of --concurrency hashes needing more than that is "
                             "refused")
    parser.add_argument("--rounds", type=whole_number(8, 100_000), default=KERNEL_ROUNDS,
                        metavar="N", help=f"kernel measurement rounds (default {KERNEL_ROUNDS})")
    parser.add_argument("--kernels-only", action="store_true",
                        help="measure and remember the kernels' choice only")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)
