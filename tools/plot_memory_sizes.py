"""Time per Argon2id hash against the memory size m, steady state, for one argonishche or two
(before and after a change): docs/benchmarks.md's plot of the work-memory cliff.

    PYTHON tools/plot_memory_sizes.py measure OUT.json --label TEXT [--time-cost 1]
        [--parallelism 4] [--sizes-mib 16,32,...] [--repetitions 5] [--budget 0.3]
    python tools/plot_memory_sizes.py draw BEFORE.json [AFTER.json] --out FIGURE.png
        [--note TEXT]

``measure`` times the argonishche that *PYTHON* imports, whatever its version: it calls only
``argonishche.argon2_hash(..., allocator=...)`` (and ``selected_backend``), which old and new
versions share, so an old checkout installed in another venv runs it as it is.  At each size it
times our default allocator, each built-in mapping allocator forced (``arena``, ``system``,
``hugepages``), argon2-cffi and PyNaCl where installed, **interleaved** (round-robin, the order
rotating each repetition) after one untimed hash each, which also checks that every subject
gives the same tag.  A sample is as many back-to-back hashes as fill ``--budget`` seconds (at
least one): steady state, as a server sees it after its first hashes.  libsodium has one lane,
so PyNaCl is timed at p=1 (its tag checked against argonishche's at p=1) and kept apart as its
own line.  The JSON keeps every sample, the minor page faults per hash (fresh memory faults in
each page; reused memory none), the CPU as /proc/cpuinfo names it, the versions, the load.

``draw`` plots milliseconds per hash (median, bars min..max) against m, both log scales, one
panel per JSON file, sharing the y axis, so the before/after difference reads across.  It needs
matplotlib (the test extra); measuring does not.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_SIZES_MIB = (16, 32, 48, 63, 65, 96, 128, 256, 512, 1024, 2048)
PASSWORD, SALT = b"correct horse battery staple", bytes(range(16))
OURS = {"argonishche default": None, "arena": "arena", "system": "system",
        "hugepages": "hugepages"}
#: The old arenas kept at most this much per thread: the cliff the plot is about.
OLD_ARENA_BOUND_MIB = 64


# ---- measuring ---------------------------------------------------------------------------------


def cpu_description() -> dict[str, Any]:
    """The CPU as /proc/cpuinfo names it (first processor), and how many there are."""
    found: dict[str, Any] = {"cpus": os.cpu_count(), "machine": platform.machine()}
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return found
    first = text.split("\n\n", 1)[0]
    fields = dict(line.split(":", 1) for line in first.splitlines() if ":" in line)
    fields = {key.strip(): value.strip() for key, value in fields.items()}
    for key in ("model name", "vendor_id", "cpu family", "model", "stepping"):
        if key in fields:
            found[key] = fields[key]
    flags = set(fields.get("flags", "").split())
    found["flags"] = sorted(flags & {"avx2", "avx512f", "avx512vl", "hypervisor"})
    return found


def faults() -> int | None:
    """Minor page faults of the whole process so far (every thread's); None on Windows."""
    try:
        import resource
    except ImportError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def load_average() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except (AttributeError, OSError):  # Windows
        return None


def _version(distribution: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _git_commit(directory: Path) -> str | None:
    try:
        result = subprocess.run(["git", "-C", str(directory), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def subjects_at(memory_kib: int, time_cost: int, parallelism: int) -> dict[str, Any]:
    """name -> (hash, the parallelism it runs at, a reference tag function or None)."""
    import argonishche

    def ours(allocator: str | None, lanes: int = parallelism) -> Any:
        return lambda: argonishche.argon2_hash(
            PASSWORD, SALT, type="id", time_cost=time_cost, memory_cost=memory_kib,
            parallelism=lanes, allocator=allocator)

    subjects: dict[str, Any] = {name: (ours(allocator), parallelism, None)
                                for name, allocator in OURS.items()}
    try:
        low = importlib.import_module("argon2.low_level")
        subjects["argon2-cffi"] = (lambda: low.hash_secret_raw(
            PASSWORD, SALT, time_cost=time_cost, memory_cost=memory_kib,
            parallelism=parallelism, hash_len=32, type=low.Type.ID), parallelism, None)
    except ImportError:
        pass
    try:
        pwhash = importlib.import_module("nacl.pwhash")
        name = "PyNaCl" if parallelism == 1 else "PyNaCl (p=1)"
        subjects[name] = (lambda: pwhash.argon2id.kdf(
            32, PASSWORD, SALT, opslimit=time_cost, memlimit=memory_kib * 1024), 1,
            ours(None, lanes=1) if parallelism != 1 else None)
    except ImportError:
        pass
    return subjects


def measure_size(memory_kib: int, time_cost: int, parallelism: int, repetitions: int,
                 budget: float) -> dict[str, Any]:
    """Every subject at one size: a tag check (untimed, also the warm-up), then interleaved
    samples."""
    subjects = subjects_at(memory_kib, time_cost, parallelism)
    calls: dict[str, int] = {}
    tags: dict[int, set[bytes]] = {}
    for name, (run, lanes, reference) in subjects.items():
        started = time.perf_counter()
        tag = run()
        calls[name] = max(1, int(budget / max(time.perf_counter() - started, 1e-6)))
        tags.setdefault(lanes, set()).add(tag)
        if reference is not None:
            tags[lanes].add(reference())
    if any(len(found) != 1 for found in tags.values()):
        raise SystemExit(f"m={memory_kib} KiB: the subjects disagree on the tag; nothing timed")
    samples: dict[str, list[float]] = {name: [] for name in subjects}
    page_faults: dict[str, int | None] = dict.fromkeys(subjects, 0)
    names = list(subjects)
    for repetition in range(repetitions):
        shift = repetition % len(names)
        for name in names[shift:] + names[:shift]:
            run = subjects[name][0]
            before = faults()
            started = time.perf_counter()
            for _ in range(calls[name]):
                run()
            samples[name].append((time.perf_counter() - started) / calls[name])
            after, counted = faults(), page_faults[name]
            page_faults[name] = (None if counted is None or before is None or after is None
                                 else counted + after - before)
    return {"memory_mib": memory_kib / 1024, "memory_kib": memory_kib, "subjects": {
        name: {"parallelism": subjects[name][1], "samples_s": samples[name],
               "median_s": statistics.median(samples[name]), "min_s": min(samples[name]),
               "max_s": max(samples[name]),
               "faults_per_hash": None if page_faults[name] is None
               else page_faults[name] / (calls[name] * repetitions)}
        for name in names}}


def measure(args: argparse.Namespace) -> int:
    import argonishche

    sizes = [int(size) for size in args.sizes_mib.split(",")]
    unit = 4 * args.parallelism  # m is rounded down to a multiple of 4p KiB: ask for that
    package = Path(argonishche.__file__).resolve().parent
    data: dict[str, Any] = {
        "label": args.label, "command": [sys.executable, *sys.argv],
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu": cpu_description(), "python": platform.python_version(),
        "argonishche": {"version": getattr(argonishche, "__version__", None),
                        "path": str(package), "git_commit": _git_commit(package),
                        "argon2_backend": argonishche.selected_backend("argon2")},
        "peers": {"argon2-cffi": _version("argon2-cffi"), "PyNaCl": _version("PyNaCl")},
        "type": "id", "time_cost": args.time_cost, "parallelism": args.parallelism,
        "repetitions": args.repetitions, "budget_s": args.budget,
        "loadavg_before": load_average(), "sizes": []}
    for mib in sizes:
        print(f"m={mib} MiB ...", file=sys.stderr, flush=True)
        kib = mib * 1024 // unit * unit
        data["sizes"].append(measure_size(kib, args.time_cost, args.parallelism,
                                          args.repetitions, args.budget))
    data["loadavg_after"] = load_average()
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


# ---- drawing -----------------------------------------------------------------------------------

#: How each subject is drawn: ours solid (the default the thickest), the peers dotted.
STYLES = {
    "argonishche default": dict(color="black", linestyle="-", linewidth=2.4, marker="o"),
    "arena": dict(color="tab:blue", linestyle="-", linewidth=1.2, marker="o"),
    "system": dict(color="tab:red", linestyle="-", linewidth=1.2, marker="o"),
    "hugepages": dict(color="tab:green", linestyle="-", linewidth=1.2, marker="o"),
    "argon2-cffi": dict(color="tab:orange", linestyle=":", linewidth=1.6, marker="s"),
    "PyNaCl": dict(color="tab:purple", linestyle="-.", linewidth=1.4, marker="^"),
}


def _style(name: str) -> dict[str, Any]:
    base = name.split(" (", 1)[0]
    return {"markersize": 4, **STYLES.get(base, dict(color="gray", linestyle="--", marker="x"))}


def _legend_name(name: str, run: dict[str, Any]) -> str:
    if name == "argonishche default":
        return "argonishche, default allocator"
    if name in OURS:
        return f"argonishche, allocator={name}"
    return name


def _panel_title(run: dict[str, Any]) -> str:
    commit = (run["argonishche"].get("git_commit") or "")[:9]
    load = ""
    if run.get("loadavg_before") and run.get("loadavg_after"):
        load = (f"; load average {run['loadavg_before'][0]:.1f} before, "
                f"{run['loadavg_after'][0]:.1f} after")
    return (f"{run['label']}" + (f" ({commit})" if commit else "")
            + f"\nArgon2 backend {run['argonishche']['argon2_backend']}{load}")


def _cpu_name(cpu: dict[str, Any]) -> str:
    """``AMD EPYC (family 26, model 2), 2 CPUs``: the family and model too, since a VM's model
    name often says little."""
    name = cpu.get("model name", cpu.get("machine", "unknown CPU"))
    if "cpu family" in cpu and "model" in cpu:
        name += f" (family {cpu['cpu family']}, model {cpu['model']})"
    return f"{name}, {cpu.get('cpus')} CPUs"


def draw(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    runs = [json.loads(Path(path).read_text()) for path in args.runs]
    figure, axes = pyplot.subplots(1, len(runs), figsize=(6.2 * len(runs), 5.2), sharey=True,
                                   squeeze=False)
    for axis, run in zip(axes[0], runs, strict=True):
        names = list(dict.fromkeys(name for size in run["sizes"] for name in size["subjects"]))
        for name in names:
            points = [(size["memory_mib"], size["subjects"][name]) for size in run["sizes"]
                      if name in size["subjects"]]
            x = [mib for mib, _ in points]
            y = [s["median_s"] * 1e3 for _, s in points]
            low = [(s["median_s"] - s["min_s"]) * 1e3 for _, s in points]
            high = [(s["max_s"] - s["median_s"]) * 1e3 for _, s in points]
            axis.errorbar(x, y, yerr=[low, high], capsize=2, label=_legend_name(name, run),
                          **_style(name))
        axis.axvline(OLD_ARENA_BOUND_MIB, color="gray", linestyle="--", linewidth=0.8)
        axis.text(OLD_ARENA_BOUND_MIB * 1.04, 0.98, "64 MiB: old arena bound",
                  rotation=90, fontsize=7, color="gray", va="top",
                  transform=axis.get_xaxis_transform())
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        ticks = sorted({size["memory_mib"] for size in run["sizes"]} - {63, 65})
        axis.set_xticks(ticks)
        axis.set_xticklabels([f"{mib:g}" for mib in ticks], fontsize=8)
        axis.minorticks_off()
        axis.set_xlabel("m (MiB; 63 and 65 drawn, not labelled)")
        axis.grid(True, which="major", alpha=0.3)
        axis.set_title(_panel_title(run), fontsize=10)
    axes[0][0].set_ylabel("ms per hash (median; bars: min..max)")
    axes[0][0].legend(fontsize=7, loc="lower right")  # the corner no line reaches
    first = runs[0]
    title = (f"Argon2id t={first['time_cost']} p={first['parallelism']} (PyNaCl p=1), steady "
             f"state, one Python thread; {_cpu_name(first['cpu'])}; "
             f"{first['repetitions']} interleaved repetition(s) per size")
    figure.suptitle(title + (f"\n{args.note}" if args.note else ""), fontsize=9)
    figure.tight_layout()
    figure.savefig(args.out, dpi=args.dpi)
    pyplot.close(figure)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("measure", help="time every subject at each size; write JSON")
    run.add_argument("out", metavar="OUT.json")
    run.add_argument("--label", required=True, help="the panel's title, e.g. 'before'")
    run.add_argument("--time-cost", type=int, default=1)
    run.add_argument("--parallelism", type=int, default=4)
    run.add_argument("--sizes-mib", default=",".join(map(str, DEFAULT_SIZES_MIB)),
                     help="comma-separated sizes in MiB (default %(default)s)")
    run.add_argument("--repetitions", type=int, default=5)
    run.add_argument("--budget", type=float, default=0.3,
                     help="seconds of back-to-back hashes per sample (at least one hash)")
    run.set_defaults(run=measure)
    plot = commands.add_parser("draw", help="draw one or two measure JSON files")
    plot.add_argument("runs", nargs="+", metavar="RUN.json", help="before [after]")
    plot.add_argument("--out", required=True, metavar="FIGURE.png")
    plot.add_argument("--dpi", type=int, default=90)
    plot.add_argument("--note", help="a line under the title (what the figure is, if it is "
                                     "not the final measurement)")
    plot.set_defaults(run=draw)
    args = parser.parse_args(argv)
    if args.command == "draw" and len(args.runs) > 2:
        parser.error("draw takes one or two JSON files (before, after)")
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
