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


def plot(tables: list[dict[str, Any]], path: str, *, title: str = "", dpi: int = 80) -> None:
    """Hashes/s against memory size, one line per backend or peer (and mode), log-log, as PNG.

    *tables* are the JSON forms of the Argon2 tables.  Each x position is labelled with the
    points measured there, since the default points also differ in type, t and p.  The selected
    backend's row duplicates its backend's, so it only names that line "(selected)".
    """
    pyplot = load_pyplot()
    lines: dict[tuple[str, str], list[tuple[int, float]]] = {}
    selected = None
    points_at: dict[int, set[str]] = {}
    for table in tables:
        points_at.setdefault(table["memory_kib"], set()).add(
            f"{table['type']} t={table['time_cost']} p={table['parallelism']}")
        for row in table["results"]:
            if row["subject"].startswith("argonishche ("):
                selected = row["subject"][len("argonishche ("):-1]
                continue
            lines.setdefault((row["subject"], row["mode"]), []).append(
                (table["memory_kib"], row["hashes_per_s"]))
    modes = {mode for _, mode in lines}
    figure, axes = pyplot.subplots(figsize=(8, 5))
    for (subject, mode), values in sorted(lines.items(), key=lambda kv: (not is_ours(kv[0][0]),
                                                                        kv[0])):
        values.sort()
        label = subject.removeprefix("backend ")
        if label == selected:
            label += " (selected)"
        if len(modes) > 1:
            label += f", {mode}"
        peer = not is_ours(subject)
        axes.plot([x for x, _ in values], [y for _, y in values], label=label,
                  marker="s" if peer else "o", markersize=4,
                  linestyle=(":" if peer else "-") if mode == "hot" else "--",
                  linewidth=2 if label.startswith(f"{selected} (selected)") else 1.2)
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    ticks = sorted(points_at)
    axes.set_xticks(ticks)
    axes.set_xticklabels([f"{_memory_label(kib)}\n" + "\n".join(sorted(points_at[kib]))
                          for kib in ticks], fontsize=8)
    axes.minorticks_off()
    axes.set_xlabel("memory (m)")
    axes.set_ylabel("hashes/s (median)")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8, ncol=2)
    axes.set_title(title or "Argon2: hashes/s from one Python thread", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=dpi)
    pyplot.close(figure)
