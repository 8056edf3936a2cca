"""64 logins at once under a 1.5 GiB limit: the process-wide work-memory budget at work (issue 30).

Django's default Argon2 costs (argon2id, t=2, m=100 MiB, p=8) make 64 simultaneous
verifications ask for 6,400 MiB of work memory.  A process held to 1.5 GiB (a memory cgroup,
else RLIMIT_AS: load_limits.py) must still answer every one of them right: argonishche's default
budget is half of the limit it finds, hashes beyond it wait their turn, and the memory they
leave is given back once idle.  Each burst runs in a process of its own (tools/load_verify.py):
through argonishche's own ``PasswordHasher`` at Django's costs (Django is not needed) from 64
threads and from 64 coroutines on one event loop (``verify_async``), and once more from 64
threads through Django's ``check_password`` and ``argonishche.contrib.django`` when Django is
installed (``tox -e load`` installs it and sets ARGONISHCHE_REQUIRE_DJANGO: there it cannot
skip).

argon2-cffi runs the same bursts under the same limit for comparison only: whatever it does
(OOM-killed, memory errors, or fine) is recorded in the report, never failed on.

The stored hashes are argon2-cffi's (the reference the answers are checked against), one in four
passwords is wrong, and ``ARGONISHCHE_MEMORY_IDLE_SECONDS`` is 2 in the children (default 10) so
that "RSS after idle" is measured a few seconds after the burst, not ten.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from load_limits import CannotLimit, MemoryLimit, choice, memory_limit

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tools" / "load_verify.py"

MIB = 2**20
LIMIT = 1536 * MIB
CONCURRENT = 64
#: Django's Argon2PasswordHasher's costs (unchanged since Django 3.2).
DJANGO_COSTS = dict(time_cost=2, memory_cost=102400, parallelism=8)
HASH_MEMORY = DJANGO_COSTS["memory_cost"] * 1024
DISTINCT_PASSWORDS = 8
IDLE_SECONDS = 2
#: Past the idle time, with room for the reaper thread to unmap 700 MiB on a busy machine.
IDLE_WAIT = IDLE_SECONDS + 2
#: Seconds a whole burst may take in the child before it counts as hung: far above what one
#: takes on a busy 2-core machine, argon2-cffi's the slowest.
BURST_DEADLINE = 60
#: The child's start (imports, the registry's first use) and its idle wait, on top.
CHILD_TIMEOUT = BURST_DEADLINE + IDLE_WAIT + 60

REQUIRE_DJANGO = os.environ.get("ARGONISHCHE_REQUIRE_DJANGO", "").strip() not in ("", "0")


@pytest.fixture(scope="session")
def cases(tmp_path_factory, load_report):
    """(the cases file, the expected outcome of each): 64 verifications of 8 stored hashes made
    by argon2-cffi at Django's costs; every fourth password is wrong by one character."""
    argon2 = pytest.importorskip("argon2", reason="argon2-cffi makes the reference hashes")
    hasher = argon2.PasswordHasher(**DJANGO_COSTS)
    passwords = [f"correct horse {k} battery staple" for k in range(DISTINCT_PASSWORDS)]
    stored = [hasher.hash(p) for p in passwords]
    listed, expected = [], []
    for i in range(CONCURRENT):
        wrong = i % 4 == 3
        password = passwords[i % DISTINCT_PASSWORDS]
        listed.append({"stored": stored[i % DISTINCT_PASSWORDS],
                       "password": password[:-1] + "E" if wrong else password})
        expected.append("mismatch" if wrong else "ok")
    path = tmp_path_factory.mktemp("load") / "cases.json"
    path.write_text(json.dumps(listed))
    load_report["settings"].update({
        "costs": "Django's default Argon2PasswordHasher: argon2id t=2 m=102400 KiB (100 MiB) p=8, "
                 "verified through argonishche.PasswordHasher at those costs (and Django's "
                 "check_password where marked)",
        "burst": f"{CONCURRENT} verifications at once ({CONCURRENT * HASH_MEMORY // MIB:,} MiB "
                 f"of work memory if all ran together), {expected.count('mismatch')} with a "
                 f"wrong password",
        "idle": f"ARGONISHCHE_MEMORY_IDLE_SECONDS={IDLE_SECONDS} in the children (default 10); "
                f"'RSS idle' is VmRSS {IDLE_WAIT} s after the burst",
        "budget": "the library's defaults: ARGONISHCHE_MEMORY_BUDGET_MIB and "
                  "ARGONISHCHE_MEMORY_WAIT_SECONDS are removed from the children's environment, "
                  "so the budget is half the limit the child finds and a verification waits at "
                  "most 10 s for memory",
        "latency": "each verification's own time, waiting for memory or a pool thread included; "
                   "p99 by nearest rank (of 64: the slowest)",
    })
    return path, expected


@dataclass
class Run:
    """One child's burst, as seen from outside."""

    library: str
    mode: str
    limit: MemoryLimit
    returncode: int | None = None
    timed_out: bool = False
    started: bool = False
    done: int = 0
    result: dict | None = None
    counters: dict = field(default_factory=dict)
    stderr: str = ""

    @property
    def killed_by(self) -> str | None:
        if self.returncode is not None and self.returncode < 0:
            return signal.Signals(-self.returncode).name
        return None

    def context(self, expected: list[str]) -> str:
        """What to show when an assertion about this run fails."""
        result = dict(self.result or {})
        result.pop("latencies_s", None)
        return (f"{happened(self, expected)}\n"
                f"{self.library} {self.mode} under {self.limit.describe()}: exit "
                f"{self.returncode}, timed out {self.timed_out}, {self.done} done, cgroup "
                f"{self.counters}\nresult: {json.dumps(result)[:3000]}\n"
                f"stderr: {self.stderr[-3000:]}")


def child_environment() -> dict[str, str]:
    """This environment, but the budget and the wait are the library's defaults (the default
    budget, half of the limit the child finds, is what is under test), and no allocator forced
    by the tox env (as tests/support.run_python)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARGONISHCHE_MEMORY_BUDGET_MIB", "ARGONISHCHE_MEMORY_WAIT_SECONDS",
                        "ARGONISHCHE_ALLOCATOR", "ARGONISHCHE_ARENA_MAX_MIB")}
    env["ARGONISHCHE_MEMORY_IDLE_SECONDS"] = str(IDLE_SECONDS)
    return env


def burst(library: str, mode: str, cases_file: Path) -> Run:
    """Run tools/load_verify.py under a fresh limit, removed afterwards; skip if no limit can
    be applied here."""
    try:
        with memory_limit(LIMIT, f"{library}-{mode}") as limit:
            run = Run(library, mode, limit)
            command = [sys.executable, str(PROGRAM), str(cases_file), "--library", library,
                       "--mode", mode, *limit.child_arguments(), "--idle-wait", str(IDLE_WAIT),
                       "--deadline", str(BURST_DEADLINE)]
            try:
                child = subprocess.run(command, capture_output=True, text=True,
                                       timeout=CHILD_TIMEOUT, env=child_environment())
                stdout, run.stderr, run.returncode = child.stdout, child.stderr, child.returncode
            except subprocess.TimeoutExpired as expired:  # killed by subprocess.run
                run.timed_out = True
                stdout = _text(expired.stdout)
                run.stderr = _text(expired.stderr)
            run.counters = limit.counters()
    except CannotLimit as error:
        message = f"no {LIMIT // MIB} MiB memory limit can be applied here: {error}"
        if choice() == "cgroup":  # asked for a cgroup: its absence is a failure
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    lines = stdout.splitlines()
    run.started = "STARTED" in lines
    run.done = sum(line.startswith("DONE ") for line in lines)
    results = [line[len("RESULT "):] for line in lines if line.startswith("RESULT ")]
    run.result = json.loads(results[-1]) if results else None
    return run


def _text(output: bytes | str | None) -> str:
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def percentile(values: list[float], p: float) -> float | None:
    """Nearest rank: the smallest value with at least p % of them at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def happened(run: Run, expected: list[str]) -> str:
    """What the run came to, in words."""
    if run.timed_out:
        return f"hung: killed after {CHILD_TIMEOUT} s, {run.done}/{CONCURRENT} done"
    if run.killed_by:
        oom = run.counters.get("oom_kill")
        by_oom = f", cgroup oom_kill={oom}" if oom is not None else ""
        return f"killed by {run.killed_by}{by_oom} after {run.done}/{CONCURRENT} done"
    if run.result is None:
        return f"exit {run.returncode} with no result: {run.stderr.strip()[-200:]}"
    outcomes = run.result["outcomes"]
    right = sum(o == e for o, e in zip(outcomes, expected, strict=True))
    errors: dict[str, int] = {}
    for outcome in outcomes:
        if outcome.startswith("error"):
            errors[outcome] = errors.get(outcome, 0) + 1
    text = f"{right}/{CONCURRENT} right"
    refused = sum(o == "mismatch" and e == "ok" for o, e in zip(outcomes, expected, strict=True))
    accepted = sum(o == "ok" and e == "mismatch" for o, e in zip(outcomes, expected, strict=True))
    if refused:
        text += f"; {refused} right passwords answered wrong"
    if accepted:
        text += f"; {accepted} wrong passwords accepted"
    text += "".join(f"; {count}x {what[len('error '):]}" for what, count in errors.items())
    waits = (run.result.get("budget_after_burst") or {}).get("waits")
    if waits:
        text += f" ({waits} waited for work memory)"
    if run.result["hung"]:
        text += f"; {len(run.result['hung'])} hung"
    return text


def row(run: Run, expected: list[str], label: str) -> dict:
    """The report's row for *run* (see conftest.table)."""
    result = run.result or {}
    latencies = result.get("latencies_s", [])
    complete = run.returncode == 0 and result.get("outcomes") == expected
    budget_after = result.get("budget_after_burst") or {}
    return {
        "run": label, "library": run.library, "mode": run.mode,
        "version": result.get("version"), "backend": result.get("backend"),
        "limit": run.limit.describe(), "happened": happened(run, expected),
        "all_right": complete, "returncode": run.returncode, "timed_out": run.timed_out,
        "done": run.done,
        # Throughput only for a burst that answered everything: errors are quick to give.
        "throughput": CONCURRENT / result["wall_s"] if complete and result.get("wall_s")
        else None,
        "wall_s": result.get("wall_s"),
        "p50_ms": None if not complete else percentile(latencies, 50) * 1e3,
        "p99_ms": None if not complete else percentile(latencies, 99) * 1e3,
        "hwm": result["hwm_kib"] * 1024 if "hwm_kib" in result else None,
        "vm_peak": result["vm_peak_kib"] * 1024 if "vm_peak_kib" in result else None,
        "rss_before": result["rss_before_kib"] * 1024 if "rss_before_kib" in result else None,
        "rss_after_idle": result["rss_after_idle_kib"] * 1024
        if "rss_after_idle_kib" in result else None,
        "cgroup_peak": run.counters.get("peak"), "cgroup": run.counters,
        "budget": budget_after.get("budget"), "budget_source": budget_after.get("source"),
        "work_high_water": budget_after.get("high_water"),
        "waits": budget_after.get("waits"), "maps": budget_after.get("maps"),
        "reuses": budget_after.get("reuses"),
        "held_after_idle": (result.get("budget_after_idle") or {}).get("held"),
        "latencies_s": latencies, "outcomes": result.get("outcomes"),
    }


def record(load_report, run: Run, expected: list[str], label: str) -> dict:
    entry = row(run, expected, label)
    load_report["runs"].append(entry)
    limit = run.limit
    load_report["settings"]["limit"] = f"{limit.mechanism}, {limit.limit / 2**30:g} GiB, a " \
        f"fresh one per burst ({limit.swap})"
    return entry


def check_within_the_limit(run: Run, expected: list[str]) -> None:
    """Every answer right, nothing killed or hung, the default budget taken from the limit and
    kept to, and the memory given back once idle."""
    why = run.context(expected)
    assert not run.timed_out, why
    assert run.returncode == 0, why
    assert run.result is not None, why
    result = run.result
    # The child was really under the limit.
    if run.limit.directory is not None:
        assert any(line.endswith(":" + run.limit.relative)
                   for line in result["limit"]["proc_self_cgroup"]), why
        assert run.counters["oom_kill"] == 0, why
        # The budget is half the limit: the group should never even reach its limit (where
        # the kernel starts reclaiming from it, and OOM-kills if that is not enough).
        assert run.counters["limit_reached"] == 0, why
    else:  # the limit on top of what the process had reserved when the burst began
        limit = result["limit"]
        assert limit["rlimit_as"] == limit["address_space_reserved"] + run.limit.limit, why
    assert not result["hung"], why
    assert result["outcomes"] == expected, why
    # The default budget came from this limit.
    budget = result["budget_after_burst"]
    mechanism = "RLIMIT_AS" if run.limit.directory is None else run.limit.mechanism
    assert mechanism in budget["source"], why
    assert budget["budget"] <= run.limit.limit // 2, why
    assert 0 < budget["high_water"] <= budget["budget"], why
    # Given back once idle: none of it held, and the process's RSS within one hash's memory of
    # what it was before the burst.
    idle = result["budget_after_idle"]
    assert idle["held"] == 0, why
    assert result["rss_after_idle_kib"] * 1024 - result["rss_before_kib"] * 1024 < \
        HASH_MEMORY, why


def test_argonishche_64_threads_within_the_limit(cases, load_report):
    cases_file, expected = cases
    run = burst("argonishche", "threads", cases_file)
    record(load_report, run, expected, "argonishche, 64 threads")
    check_within_the_limit(run, expected)
    # 64 at once cannot all fit in half of 1.5 GiB: the budget must have made some wait (a run
    # where none waited did not test admission at all), and filled up (as many ran together as
    # fit: waiting must not have made them run one at a time).
    budget = run.result["budget_after_burst"]
    assert budget["waits"] > 0, run.context(expected)
    assert budget["high_water"] + HASH_MEMORY > budget["budget"], run.context(expected)


def test_argonishche_64_coroutines_within_the_limit(cases, load_report):
    cases_file, expected = cases
    run = burst("argonishche", "asyncio", cases_file)
    record(load_report, run, expected, "argonishche, 64 coroutines (verify_async)")
    check_within_the_limit(run, expected)


def test_django_hasher_64_threads_within_the_limit(cases, load_report):
    try:
        import django  # noqa: F401 - only whether it is there: the child imports it
    except ImportError as error:
        if REQUIRE_DJANGO:
            pytest.fail(f"ARGONISHCHE_REQUIRE_DJANGO is set and Django cannot be imported "
                        f"({error})", pytrace=False)
        pytest.skip("Django is not installed: the burst through argonishche.contrib.django "
                    "needs it")
    cases_file, expected = cases
    run = burst("django", "threads", cases_file)
    record(load_report, run, expected, "argonishche.contrib.django, 64 threads")
    check_within_the_limit(run, expected)


@pytest.mark.parametrize("mode", ["threads", "asyncio"])
def test_argon2_cffi_under_the_same_limit(cases, load_report, mode):
    # For the report only: what argon2-cffi does is recorded, never failed on.  What is checked
    # is that the comparison happened: argon2-cffi was imported and its burst began under the
    # limit (the child says STARTED only after joining it).
    cases_file, expected = cases
    run = burst("argon2-cffi", mode, cases_file)
    label = "argon2-cffi, 64 threads" if mode == "threads" else \
        "argon2-cffi, 64 coroutines (asyncio.to_thread)"
    entry = record(load_report, run, expected, label)
    assert run.started, run.context(expected)
    print(entry["happened"])

