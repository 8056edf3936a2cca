"""The load test runs in ``tox -e load`` (ARGONISHCHE_LOAD=1); elsewhere its tests are skipped,
with that reason: it takes a minute, and a memory cgroup (root) to be what CI runs.

Its report (one row per burst: what happened, throughput, latency, memory) is printed at the end
of the run and written as JSON to ``ARGONISHCHE_LOAD_REPORT`` (tox: the env's tmp dir), else to
pytest's temporary directory.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

REPORT = pytest.StashKey[dict]()


def pytest_collection_modifyitems(config, items):
    from support import skip_folder_unless

    skip_folder_unless(items, Path(__file__).parent, "ARGONISHCHE_LOAD", "load")


@pytest.fixture(scope="session")
def load_report(request, tmp_path_factory):
    """The report the tests fill in: ``settings`` (the limit, the costs) and ``runs`` (one dict
    per burst, see test_verify_burst.row); written as JSON when the session ends."""
    report: dict = {"settings": {}, "runs": []}
    request.config.stash[REPORT] = report
    start = time.monotonic()
    yield report
    report["settings"]["took"] = f"{time.monotonic() - start:.0f} s, the reference hashes and " \
        f"every burst"
    report["comparisons"] = comparisons(report)
    target = os.environ.get("ARGONISHCHE_LOAD_REPORT")
    path = Path(target) if target else tmp_path_factory.getbasetemp() / "load-report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    report["written_to"] = str(path)


def comparisons(report: dict) -> list[str]:
    """argonishche's throughput against argon2-cffi's, burst for burst (same mode, same limit)."""
    lines = []
    for mode in ("threads", "asyncio"):
        ours = [r for r in report["runs"] if r["library"] == "argonishche" and r["mode"] == mode]
        theirs = [r for r in report["runs"] if r["library"] == "argon2-cffi" and r["mode"] == mode]
        if not ours or not theirs:
            continue
        a, b = ours[0], theirs[0]
        if a["throughput"] and b["throughput"]:
            verdict = f"{a['throughput'] / b['throughput']:.1f}x argon2-cffi's"
        else:
            verdict = "no ratio: argon2-cffi did not answer every verification"
        lines.append(f"{mode}: argonishche {_number(a['throughput'], '.1f')} verif/s, "
                     f"{a['happened']}; argon2-cffi {_number(b['throughput'], '.1f')} verif/s, "
                     f"{b['happened']}: {verdict}")
    return lines


def _mib(n):
    return "-" if n is None else f"{n / 2**20:.0f}"


def _number(x, form):
    return "-" if x is None else format(x, form)


COLUMNS = [("run", "run"), ("what happened", "happened"), ("verif/s", "throughput"),
           ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms"), ("peak RSS MiB", "hwm"),
           ("cgroup peak MiB", "cgroup_peak"), ("RSS idle MiB", "rss_after_idle"),
           ("work mem peak/budget MiB", "work")]


def table(report: dict) -> list[str]:
    rows = []
    for run in report["runs"]:
        budget = run.get("budget")
        rows.append({
            "run": run["run"], "happened": run["happened"],
            "throughput": _number(run.get("throughput"), ".1f"),
            "p50_ms": _number(run.get("p50_ms"), ".0f"),
            "p99_ms": _number(run.get("p99_ms"), ".0f"),
            "hwm": _mib(run.get("hwm")), "cgroup_peak": _mib(run.get("cgroup_peak")),
            "rss_after_idle": _mib(run.get("rss_after_idle")),
            "work": "-" if budget is None else
            f"{_mib(run.get('work_high_water'))}/{_mib(budget)}"})
    widths = {key: max([len(title)] + [len(r[key]) for r in rows]) for title, key in COLUMNS}
    lines = [" | ".join(title.ljust(widths[key]) for title, key in COLUMNS),
             "-+-".join("-" * widths[key] for _, key in COLUMNS)]
    lines += [" | ".join(r[key].ljust(widths[key]) for _, key in COLUMNS) for r in rows]
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    report = config.stash.get(REPORT, None)
    if not report or not report["runs"]:
        return
    write = terminalreporter.write_line
    terminalreporter.section("load: 64 concurrent verifications under one memory limit")
    for key, value in report["settings"].items():
        write(f"{key}: {value}")
    write("")
    for line in table(report):
        write(line)
    write("")
    for line in report.get("comparisons", []):
        write(line)
    if "written_to" in report:
        write(f"JSON: {report['written_to']}")
