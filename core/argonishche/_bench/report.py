"""The tables each suite prints, with their JSON form, and the verdict on how noisy the run was.

Every figure is a median over repetitions, shown with its min and max and its spread; ratios
compare medians of the same interleaved repetitions.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from .machine import machine_state
from .memory_use import LEGEND
from .peers import is_ours
from .points import Point
from .timing import MODES, Subject, interquartile, spread

if TYPE_CHECKING:
    from typing import Any


def _number(x: float) -> str:
    """Three significant figures or more, with thousands separators: 27,779 / 174.8 / 9.04."""
    return f"{x:,.0f}" if x >= 1000 else f"{x:,.1f}" if x >= 100 else f"{x:,.2f}"


def _range(samples: list[float], scale: Callable[[float], float]) -> str:
    values = sorted(scale(s) for s in samples)
    return f"{_number(values[0])}..{_number(values[-1])}"


def argon2_preamble(clock_hz: float) -> str:
    """What the Argon2 tables' columns mean, printed once before them."""
    return (f"core clock {clock_hz / 1e9:.2f} GHz (dependent-add chain); ratios are peer time / "
            f"our time: above 1 means we are faster; spread is (max - min) / median of the "
            f"repetitions\n{LEGEND}")


def argon2_report(point: Point, subjects: Sequence[Subject], clock_hz: float, mode: str = "hot",
                  planned: int | None = None, *, title: str = "",
                  protocol: str = "") -> tuple[str, dict[str, Any]]:
    """The table of one point in one mode, and its JSON form.

    :param planned: repetitions asked for, when fewer were finished (an interrupted run).
    :param title: what the point is (``OWASP minimum``), after it in the heading.
    :param protocol: more on how it was measured, after the mode's description.
    """
    reference = subjects[0]
    done = len(reference.samples)
    peers = [s for s in subjects if not is_ours(s.name)]
    note = (f"interrupted after {done} of {planned} interleaved repetitions"
            if planned and planned > done else f"{done} interleaved repetitions")
    width = max(24, *(len(s.name) + 2 for s in subjects))  # a long name never runs into "mode"
    size = point.memory_bytes
    memory = [s.memory.label(size) for s in subjects]
    memory_width = max(8, *(len(label) + 2 for label in memory))
    heading = f"Argon2{point}" + (f" - {title}" if title else "")
    described = MODES[mode] + (f", {protocol}" if protocol else "")
    lines = [f"{heading}  ({described}; each library's default threads; {note})",
             f"  {'subject':<{width}}{'mode':<6}{'memory':<{memory_width}}{'hashes/s':>10}"
             f"{'min..max':>19}{'ms/hash':>9}{'cycles/blk':>11}{'MB/s':>8}{'spread':>8}"
             + "".join(f"{'vs ' + p.name:>17}" for p in peers)]
    rows = []
    for s, used in zip(subjects, memory, strict=True):
        rate = 1 / s.median
        cycles = s.median * clock_hz / point.blocks
        mbps = point.blocks * 1024 / s.median / 1e6
        ratios = [p.median / s.median for p in peers]
        lines.append(f"  {s.name:<{width}}{mode:<6}{used:<{memory_width}}{_number(rate):>10}"
                     f"{_range(s.samples, lambda x: 1 / x):>19}{s.median * 1e3:>9.2f}"
                     f"{cycles:>11,.0f}{mbps:>8,.0f}{s.spread * 100:>7.1f}%"
                     + "".join(f"{r:>16.2f}x" for r in ratios))
        rows.append({"subject": s.name.strip(), "mode": mode, "hashes_per_s": rate,
                     "ms_per_hash": s.median * 1e3, "samples_s": s.samples,
                     "cycles_per_block": cycles, "mb_per_s": mbps, "spread": s.spread,
                     "memory": s.memory.as_dict(size),
                     "ratio_vs": {p.name: p.median / s.median for p in peers}})
    data = {"point": str(point), **point.as_dict(), "mode": mode, "repetitions": done,
            "results": rows}
    if title:
        data["title"] = title
    if protocol:
        data["protocol"] = protocol
    if planned and planned > done:
        data["interrupted"] = True
    return "\n".join(lines), data


def memory_report(point: Point, subjects: list[Subject],
                  repetitions: int) -> tuple[str, dict[str, Any]]:
    """The allocator x wipe table, ratios to ``system wipe=on`` and to each peer, and its JSON."""
    reference = next(s for s in subjects if s.name == "system wipe=on")
    others = [reference] + [s for s in subjects if " wipe=" not in s.name]
    lines = [f"Argon2{point}: allocator x wipe (hot; {repetitions} interleaved repetitions; "
             f"ratios: their time / this row's)",
             f"  {'allocator':<22}{'hashes/s':>10}{'min..max':>17}{'spread':>8}"
             + "".join(f"{'vs ' + o.name:>18}" for o in others)]
    rows = []
    for s in subjects:
        lines.append(f"  {s.name:<22}{_number(1 / s.median):>10}"
                     f"{_range(s.samples, lambda x: 1 / x):>17}{s.spread * 100:>7.1f}%"
                     + "".join(f"{o.median / s.median:>17.2f}x" for o in others))
        rows.append({"subject": s.name, "mode": "hot", "hashes_per_s": 1 / s.median,
                     "samples_s": s.samples, "spread": s.spread})
    return "\n".join(lines), {"point": str(point), "mode": "hot", "results": rows}


def batch_report(point: Point, *, count: int, workers: int, serial: list[float],
                 batch: list[float], peak: int) -> tuple[str, dict[str, Any]]:
    """One line on hash_many against one thread (seconds per hash, each run, the runs of one
    round at the same index), and its JSON: the median of the rounds' ratios, with their
    range (the machine's noise: on a shared machine a single ratio says little)."""
    ratios = [s / b for s, b in zip(serial, batch, strict=True)]
    ratio = statistics.median(ratios)
    text = (f"hash_many, Argon2{point}, {count} passwords, {len(ratios)} alternating rounds: "
            f"one thread {1 / statistics.median(serial):,.1f} h/s, {workers} workers "
            f"{1 / statistics.median(batch):,.1f} h/s = {ratio:.2f}x "
            f"({min(ratios):.2f}..{max(ratios):.2f}); peak RSS {peak / 2**20:,.0f} MiB")
    return text, {"point": str(point), "serial_s": serial, "batch_s": batch, "ratio": ratio,
                  "ratios": ratios, "peak_rss_bytes": peak}


def blake2b_report(cases: dict[str, tuple[bytes, list[Subject]]],
                   repetitions: int) -> tuple[str, dict[str, Any]]:
    """One row per input size and subject, the last subject of each (hashlib) the reference."""
    lines = [f"BLAKE2b (hot; {repetitions} interleaved repetitions; ratio = hashlib time / ours; "
             f"64 B: the selected backend only)"]
    report: dict[str, Any] = {}
    width = max((len(label) + 1 for label in cases), default=14)
    for label, (data, subjects) in cases.items():
        hashlib_time = subjects[-1].median
        for s in subjects:
            mbps = len(data) / s.median / 1e6
            lines.append(f"  {label:<{width}}{s.name:<24}{mbps:>9,.1f} MB/s "
                         f"{s.median * 1e9:>12,.0f} ns/call"
                         f"  {_range(s.samples, lambda x: x * 1e9):>21} ns"
                         f"{s.spread * 100:>6.1f}% {hashlib_time / s.median:>7.2f}x")
            report.setdefault(label, []).append({"subject": s.name.strip(), "mode": "hot",
                                                 "mb_per_s": mbps, "samples_s": s.samples,
                                                 "spread": s.spread})
    return "\n".join(lines), report


#: The start-up cases of argonishche's selection modes (see suites.STARTUP_CASES).
LADDER_STARTUP = "  ... ARGONISHCHE_SELECT=priority"
MEASURE_STARTUP = "  ... ARGONISHCHE_SELECT=measure"


def startup_report(samples: dict[str, list[float]], repetitions: int,
                   ours: str = "import argonishche + first hash",
                   peer: str = "import argon2 + first hash") -> str:
    """Each case's median and range, then ours against the peer's, and the remembered
    selection against the ladder and against measuring anew: the ratio of the medians, and the
    middle half of the per-repetition ratios (each repetition ran every case, interleaved)."""
    lines = [f"Start-up (cold: a new process each time; {repetitions} interleaved repetitions)"]
    for name, values in samples.items():
        lines.append(f"  {name:<34}{statistics.median(values) * 1e3:>8.1f} ms median  "
                     f"{_range(values, lambda x: x * 1e3):>15} ms")
    for first, second, label in (
            (ours, peer, "argonishche / argon2-cffi"),
            (ours, LADDER_STARTUP, "remembered selection / the ladder"),
            (MEASURE_STARTUP, LADDER_STARTUP, "measuring anew / the ladder")):
        if samples.get(first) and samples.get(second):
            paired = [a / b for a, b in zip(samples[first], samples[second], strict=False)]
            ratio = statistics.median(samples[first]) / statistics.median(samples[second])
            middle = (statistics.quantiles(paired, n=4, method="inclusive") if len(paired) >= 2
                      else [paired[0], paired[0], paired[0]])
            lines.append(f"  {label}: {ratio:.2f}x (medians); per repetition "
                         f"{statistics.median(paired):.2f}x, middle half "
                         f"{middle[0]:.2f}..{middle[2]:.2f}x")
    return "\n".join(lines)


# ---- how noisy was it ---------------------------------------------------------------------------


def _sampled_rows(results: dict[str, Any]) -> Iterator[tuple[str, list[float]]]:
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


def noise_report(results: dict[str, Any], before: dict[str, Any],
                 after: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
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
    data: dict[str, Any] = {"rows": len(rows), "loadavg_before": before.get("loadavg"),
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
