"""``bench --plot``: hashes/s against memory size as a PNG, with matplotlib (an optional extra)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .peers import is_ours

if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any


def load_pyplot() -> ModuleType:
    """matplotlib's pyplot with a file-only backend; ImportError if it is not installed."""
    import importlib

    # Through importlib: a type checker needs neither matplotlib nor its types (an optional
    # extra; tests/project/test_typing_wheel.py).
    importlib.import_module("matplotlib").use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def _memory_label(kib: int) -> str:
    return f"{kib / 1024:g} MiB" if kib >= 1024 else f"{kib} KiB"


#: Markers for the lines, in turn: filled for argonishche's, hollow for the peers'.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")


def plot(tables: list[dict[str, Any]], path: str, *, title: str = "", dpi: int = 100) -> None:
    """Hashes/s against memory size, log-log, as PNG: one line per series.

    A series is one backend or peer (and mode) at one type, t and p: only points that differ in
    memory alone are joined, so a line's slope is what memory costs (the default points also
    differ in type, t and p, and each of them is then a point of its own).  Each subject has its
    own colour and marker, the peers' hollow and dashed, so that two peers at the same speed
    (argon2-cffi and cryptography both run libargon2) stay visible one over the other.  The
    selected backend's row duplicates its backend's, so it only names that line "(selected)".
    """
    pyplot = load_pyplot()
    lines: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    selected = None
    for table in tables:
        series = f"{table['type']} t={table['time_cost']} p={table['parallelism']}"
        for row in table["results"]:
            if row["subject"].startswith("argonishche ("):
                selected = row["subject"][len("argonishche ("):-1]
                continue
            lines.setdefault((row["subject"], row["mode"], series), []).append(
                (table["memory_kib"], row["hashes_per_s"]))
    modes = {mode for _, mode, _ in lines}
    series_names = sorted({series for _, _, series in lines})
    subjects = sorted({subject for subject, _, _ in lines},
                      key=lambda subject: (not is_ours(subject), subject.casefold()))
    colours = pyplot.get_cmap("tab10").colors
    style = {subject: (colours[i % len(colours)], _MARKERS[i % len(_MARKERS)])
             for i, subject in enumerate(subjects)}
    figure, axes = pyplot.subplots(figsize=(8, 5.6))
    for (subject, mode, series), values in sorted(
            lines.items(), key=lambda kv: (subjects.index(kv[0][0]), kv[0][1:])):
        values.sort()
        label = subject.removeprefix("backend ")
        chosen = label == selected
        if chosen:
            label += " (selected)"
        if len(modes) > 1:
            label += f", {mode}"
        if len(series_names) > 1:
            label += f", {series}"
        peer = not is_ours(subject)
        colour, marker = style[subject]
        dashes: Any = "--" if peer else "-"
        if len(series_names) > 1 and series_names.index(series):
            dashes = (0, (1, 1 + series_names.index(series)))
        axes.plot([x for x, _ in values], [y for _, y in values], label=label, color=colour,
                  marker=marker, markersize=8 if peer else 5,
                  markerfacecolor="none" if peer else colour, markeredgewidth=1.5,
                  linestyle=dashes if mode == "hot" else ":",
                  linewidth=2.6 if chosen else 1.4, zorder=3 if peer else 2)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    ticks = sorted({kib for values in lines.values() for kib, _ in values})
    axes.set_xticks(ticks)
    # Rotated, so that neighbours less than an octave apart (19, 32 MiB) do not overlap.
    axes.set_xticklabels([_memory_label(kib) for kib in ticks], fontsize=9, rotation=30,
                         ha="right")
    axes.minorticks_off()
    axes.set_xlabel("memory (m)" + (f"; every point {series_names[0]}"
                                    if len(series_names) == 1 else ""), fontsize=10)
    axes.set_ylabel("hashes/s (median)", fontsize=10)
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=9, ncol=3 if len(lines) > 6 else 2, loc="upper center",
                bbox_to_anchor=(0.5, -0.2), frameon=False)
    axes.set_title(title or "Argon2: hashes/s from one Python thread", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=dpi)
    pyplot.close(figure)
