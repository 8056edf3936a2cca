"""``bench --compare OLD.json``: each row of this run against the same row of a saved run.

A row is one subject at one point and mode (an Argon2 backend or peer, an allocator, a BLAKE2b
input size, a start-up case, hash_many or its one-thread reference); its figure is the median of
its samples, all times, so ``ratio = this run's median / the saved run's``: above 1 is slower.
A ratio is flagged only beyond what the two runs' own repetitions varied: the larger of 2 %,
twice the interquartile spread of the row in either run, and twice the typical interquartile
spread of either run (its noise verdict's figure).  Rows only one run has are listed, not
compared; so is a run made on another machine (the ratios then say little).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from typing import Any

from .report import _sampled_rows
from .timing import interquartile

#: Differences below this are never flagged, however quiet both runs were.
FLOOR = 0.02


def load(path: str) -> dict[str, Any]:
    """The results saved by ``bench --json`` in *path*; ValueError if it is not such a file."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a saved bench run (bench --json FILE writes one)")
    return data


def rows(results: dict[str, Any]) -> dict[str, list[float]]:
    """Every timed row of a run: label -> samples (seconds), the labels as the noise report's."""
    found: dict[str, list[float]] = {}
    for label, samples in _all_rows(results):
        clean = [float(x) for x in samples if isinstance(x, (int, float)) and x > 0]
        if clean:
            found[label.strip()] = clean
    return found


def _all_rows(results: dict[str, Any]) -> Iterator[tuple[str, list[float]]]:
    yield from _sampled_rows(results)
    batch = results.get("batch")
    if isinstance(batch, dict):
        point = batch.get("point", "")
        yield f"hash_many, {point}", batch.get("batch_s") or []
        yield f"hash_many one thread, {point}", batch.get("serial_s") or []


def _typical_interquartile(table: dict[str, list[float]]) -> float:
    spreads = [interquartile(samples) for samples in table.values() if len(samples) >= 2]
    return statistics.median(spreads) if spreads else 0.0


def _time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:,.3g} {unit}"
    return f"{seconds * 1e9:,.3g} ns"


def compare_report(old: dict[str, Any], new: dict[str, Any],
                   name: str = "the saved run") -> tuple[str, dict[str, Any]]:
    """The comparison table (text) and its JSON form: per row the two medians, the ratio, the
    threshold it was judged by and the verdict (``slower``, ``faster`` or ``same``)."""
    before, after = rows(old), rows(new)
    run_noise = max(_typical_interquartile(before), _typical_interquartile(after))
    lines = [f"Compared with {name}: ratio = this run's median time / the saved run's "
             f"(above 1: slower); flagged beyond the rows' and the runs' own noise"]
    if old.get("machine") and new.get("machine") and old["machine"] != new["machine"]:
        lines.append(f"  warning: saved on another machine ({old['machine']}); the ratios "
                     f"compare machines as much as code")
    width = max((len(label) for label in after), default=10) + 2
    lines.append(f"  {'row':<{width}}{'saved':>11}{'now':>11}{'ratio':>8}{'noise':>8}  verdict")
    compared: list[dict[str, Any]] = []
    for label, samples in after.items():
        if label not in before:
            continue
        was, now = statistics.median(before[label]), statistics.median(samples)
        ratio = now / was
        threshold = max(FLOOR, 2 * interquartile(before[label]), 2 * interquartile(samples),
                        2 * run_noise)
        verdict = ("slower" if ratio > 1 + threshold else
                   "faster" if ratio < 1 / (1 + threshold) else "same")
        compared.append({"row": label, "saved_s": was, "now_s": now, "ratio": ratio,
                         "threshold": threshold, "verdict": verdict})
        flag = {"slower": "SLOWER", "faster": "faster", "same": ""}[verdict]
        lines.append(f"  {label:<{width}}{_time(was):>11}{_time(now):>11}{ratio:>7.3f}x"
                     f"{threshold * 100:>6.1f} %  {flag}")
    only_new = sorted(set(after) - set(before))
    only_old = sorted(set(before) - set(after))
    for label in only_new:
        lines.append(f"  {label:<{width}}{'-':>11}{_time(statistics.median(after[label])):>11}"
                     f"{'':>16}  not in the saved run")
    for label in only_old:
        lines.append(f"  {label:<{width}}{_time(statistics.median(before[label])):>11}"
                     f"{'-':>11}{'':>16}  not measured now")
    slower = [row["row"] for row in compared if row["verdict"] == "slower"]
    faster = sum(row["verdict"] == "faster" for row in compared)
    summary = (f"{len(compared)} rows compared: {len(slower)} slower, {faster} faster, "
               f"{len(compared) - len(slower) - faster} within noise")
    if not compared:
        summary = "no row of this run is in the saved run: nothing to compare"
    lines.append(("Compare: " + summary) if not slower else
                 f"Compare: {summary}; SLOWER: {', '.join(slower)}")
    return "\n".join(lines), {"rows": compared, "only_now": only_new, "only_saved": only_old,
                              "slower": slower}
