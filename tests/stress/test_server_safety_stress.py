"""The programs of tests/api/safety_scripts.py many times larger, and the event loop's worst stall
while argonishche hashes in an executor, against argon2-cffi's in the same run."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from safety_scripts import run_script
from support import stress_scale
from test_server_safety import fields

SCALE = stress_scale()


def test_trim_race():
    assert fields(run_script("trim_race", SCALE, timeout=900)) == {"wrong": "0", "errors": "0"}


def test_fork_during_startup_many_times():
    outcomes = {run_script("fork_during_startup") for _ in range(3 * SCALE)}
    assert outcomes == {"child ok"}


def test_fork_during_lazy_imports_many_times():
    assert run_script("fork_during_lazy_import", SCALE, timeout=900) == f"ok {10 * SCALE}"


@pytest.mark.parametrize("name", ["fork_during_trim", "fork_mid_hash"])
def test_fork_at_random_moments(name):
    assert run_script(name, SCALE, timeout=900) == f"ok {5 * SCALE}"


def test_signals():
    assert fields(run_script("signals", SCALE, timeout=900)) == {
        "wrong": "0", "trimmed_left": "0", "reused": "True", "interrupted": "True"}


def test_thread_churn():
    out = fields(run_script("thread_churn", SCALE, timeout=900))
    assert out["cached"] == "0" and int(out["grew_mib"]) < 64


@pytest.mark.parametrize("name", ["salt_mutation", "shared_memory"])
def test_inputs(name):
    out = fields(run_script(name, SCALE, timeout=900))
    assert out.get("unverifiable", "0") == "0" and out.get("wrong", "0") == "0"


def test_mapping_a_large_hash_does_not_stall_other_threads():
    # A ratio within one run: the longest another Python thread waited, over the whole hash's
    # time (the hash maps and pre-faults 256 MiB first).  Holding the GIL while mapping made it
    # far more than the bound; released, it is well within it.
    out = fields(run_script("mapping_stall", 3, timeout=900))
    assert float(out["worst_stall_percent_of_hash"]) < 15, out


EVENT_LOOP = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bench_async_stall import measure
rows = measure(rounds=5)  # interleaved, after a warm-up round
print(json.dumps({side: [s * 1e3 for s, _ in v] for side, v in rows.items()}))
"""


def test_event_loop_stall_no_worse_than_argon2_cffi():
    # tools/bench_async_stall.py's measurement, 3 rounds: 20 default-cost hashes at once, through
    # run_blocking (what hash_async uses) and through the loop's default executor, against
    # argon2-cffi's through the default executor.
    pytest.importorskip("argon2", reason="argon2-cffi is the peer this compares with")
    tools = str(Path(__file__).resolve().parents[2] / "tools")
    out = subprocess.run([sys.executable, "-c", EVENT_LOOP, tools],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    stalls = json.loads(out.stdout.strip().splitlines()[-1])
    print("worst event-loop stall per round (ms):", stalls)
    median = {side: statistics.median(v) for side, v in stalls.items()}
    worst = {side: max(v) for side, v in stalls.items()}
    # A ratio, not a time: the machine is shared.  2 ms of slack covers timer granularity.
    # hash_async's own pool starts no thread per call: it must not stall the loop at all.
    assert median["ours"] <= 1.5 * median["theirs"] + 2.0, stalls
    # The loop's default executor starts its threads while others hash, and each start maps a
    # stack: issue 24's goal for it, over 5 runs, is a worst stall of at most 2x argon2-cffi's
    # + 20 ms (a new arena populated in one call, or in 2 MiB steps, held the memory-map lock
    # long enough to miss it; faulted in a page at a time, it is met).
    assert worst["ours-dflt"] <= 2 * worst["theirs"] + 20.0, stalls
