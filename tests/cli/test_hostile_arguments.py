"""Hostile command-line values (issue 31, item 9): nan, inf, negative, zero, huge or overflowing
numbers, unknown choices, paths that cannot be written, plans larger than the process's memory.
Each is a usage error: status 2, a message on stderr naming the flag, no traceback, and nothing
started (no hashing, no thread, no child process: every entry point of the work is a tripwire).

The values' bounds are the ones docs/cli.md states; the messages are the library's own where it
has one (a point is checked as ``argon2_hash`` checks its arguments, and against ``Limits``).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import argonishche
import pytest
from argonishche import _argon2, _memory_limits, _tune
from argonishche._bench import profiles, suites
from support import VALID, call_cli, encoded_with

MIB = 2**20


class Started(AssertionError):
    """What a hostile value reached: work that should not have begun."""


@pytest.fixture
def tripwires(monkeypatch):
    """Every way bench, tune and hash start work raises Started (and is listed)."""
    started = []

    def wire(module, name):
        def tripped(*args, **kwargs):
            started.append(name)
            raise Started(f"{name} started: {args} {kwargs}")
        monkeypatch.setattr(module, name, tripped)
    for name in ("bench_argon2", "bench_memory", "bench_batch", "bench_blake2b",
                 "bench_startup"):
        wire(suites, name)
    wire(profiles, "bench_profile")
    wire(_tune, "tune_kernels")
    wire(_tune, "recommend")
    wire(_argon2, "argon2_hash_encoded")
    wire(_argon2, "argon2_verify")
    return started


def refused(capsys, monkeypatch, started, args, message):
    status, out, err = call_cli(capsys, monkeypatch, *args, stdin=b"password")
    assert started == []
    assert "Traceback" not in err
    assert status == 2, err
    assert out == ""
    assert message in err, err


BUDGET = "expected seconds above 0 to 10, not "
LATENCY = "expected milliseconds above 0 to 60000, not "
BATCH = "argument --batch: must be in 1..100000, got "


@pytest.mark.parametrize("args, message", [
    # Tracebacks before: float('nan') and float('inf') reached int(budget / once).
    (["--budget", "nan"], f"argument --budget: {BUDGET}'nan'"),
    (["--budget", "inf"], f"argument --budget: {BUDGET}'inf'"),
    (["--budget=-inf"], f"argument --budget: {BUDGET}'-inf'"),
    # Never finished: 1e300 seconds per sample.
    (["--budget", "1e300"], f"argument --budget: {BUDGET}'1e300'"),
    (["--budget", "10.5"], f"argument --budget: {BUDGET}'10.5'"),
    # Ran, one hash a sample, as if nothing were wrong.
    (["--budget", "-1"], f"argument --budget: {BUDGET}'-1'"),
    (["--budget", "0"], f"argument --budget: {BUDGET}'0'"),
    # MemoryError (a list of 10**12 passwords), negative rates, a count of 0 taken as "off".
    (["--batch", "1000000000000"], f"{BATCH}1000000000000"),
    (["--batch", "100001"], f"{BATCH}100001"),
    (["--batch", "-5"], f"{BATCH}-5"),
    (["--batch", "0"], f"{BATCH}0"),
    (["--batch", "1.5"], "argument --batch: not a number: '1.5'"),
])
def test_bench_numbers(capsys, monkeypatch, tripwires, args, message):
    refused(capsys, monkeypatch, tripwires, ["bench", *args], message)


@pytest.mark.parametrize("point, message", [
    # Over the default Limits: what argon2_verify refuses, bench does not time.
    ("id,1,8388608,1", "hash has memory_cost 8388608 KiB (m=8388608), over the limit of "
                       "4194304 KiB (Limits.max_memory_cost); refused before any work was done. "
                       "If such hashes are legitimate here, raise it: not in bench, which times "
                       "only points argonishche verifies by default (docs/limits.md)"),
    ("id,65,64,1", "hash has time_cost 65 (t=65), over the limit of 64 (Limits.max_time_cost)"),
    ("id,1,1024,65", "hash has parallelism 65 (p=65), over the limit of 64"),
    ("id,64,262144,1", "hash has time_cost x memory_cost 16777216 KiB-passes"),
    # Over what Argon2 takes at all: argon2_hash's own messages.
    ("id,1,99999999999,1", "memory_cost must be in 8..4294967295, got 99999999999"),
    ("id,1,64,99999999", "parallelism must be in 1..16777215, got 99999999"),
    ("id,0,64,1", "time_cost must be in 1..4294967295, got 0"),
    ("id,1,0,1", "memory_cost must be in 8..4294967295, got 0"),
    ("id,1,64,0", "parallelism must be in 1..16777215, got 0"),
    ("id,1,4,1", "memory_cost must be in 8..4294967295, got 4"),
    ("id,-1,64,1", "time_cost must be in 1..4294967295, got -1"),
    ("x,1,64,1", "type must be 'd', 'i' or 'id' (or Type.D/I/ID), not 'x'"),
    ("argon2k,1,64,1", "type must be 'd', 'i' or 'id' (or Type.D/I/ID), not 'k'"),
])
def test_bench_points(capsys, monkeypatch, tripwires, point, message):
    refused(capsys, monkeypatch, tripwires, ["bench", "--point", point],
            f"argument --point: point {point!r}: {message}")


def test_bench_a_point_within_the_bounds_is_run(capsys, monkeypatch, tripwires):
    with pytest.raises(Started):
        call_cli(capsys, monkeypatch, "bench", "--point", "argon2id,64,65536,64")
    assert tripwires == ["bench_argon2"]


@pytest.mark.parametrize("flag", ["--json", "--plot"])
def test_bench_output_files_are_checked_before_the_run(capsys, monkeypatch, tripwires, tmp_path,
                                                       flag):
    # Found only after the whole run before (open() raised FileNotFoundError at the end).
    missing = tmp_path / "no such directory" / "out"
    refused(capsys, monkeypatch, tripwires, ["bench", flag, str(missing)],
            f"argument {flag}: no such directory: {str(missing.parent)!r}")
    refused(capsys, monkeypatch, tripwires, ["bench", flag, str(tmp_path)],
            f"argument {flag}: {str(tmp_path)!r} is a directory")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "60001", "-5", "0", "-0",
                                   "five"])
def test_tune_latency(capsys, monkeypatch, tripwires, value):
    # Each began the kernel measurement, then a search: with nan and -5 nothing met the target
    # (status 1), with inf t=64, the limit, did (status 0); issue 31 saw tracebacks besides.
    refused(capsys, monkeypatch, tripwires, ["tune", f"--latency={value}"],
            f"argument --latency: {LATENCY}{value!r}")


@pytest.mark.parametrize("given, concurrency, per_hash, total", [
    # 16 x 4 GiB at once where no limit is known (it was started); 2 x 64 MiB over 96 MiB.
    ("4294967295", "16", "4,096 MiB", "65,536"),
    ("128", "2", "64 MiB", "128"),
])
def test_tune_a_plan_over_the_processs_budget(capsys, monkeypatch, tripwires, budget, given,
                                              concurrency, per_hash, total):
    budget(96)
    monkeypatch.setattr(_memory_limits, "memory_limit", lambda: None)
    refused(capsys, monkeypatch, tripwires,
            ["tune", "--memory-budget", given, "--concurrency", concurrency],
            f"Error: --memory-budget {given} with --concurrency {concurrency} plans "
            f"{concurrency} hashes at once of {per_hash} each, {total} MiB in all: more than "
            f"this process's work-memory budget, 96 MiB (set_memory_budget(96)); give at most "
            f"--memory-budget 96 (or a smaller --concurrency), or set "
            f"ARGONISHCHE_MEMORY_BUDGET_MIB={total.replace(',', '')} if the process may have "
            f"that much")
    assert argonishche.memory_budget().budget == 96 * MIB


@pytest.mark.parametrize("args, needs", [
    (["-m", "32"], "4096.0 GiB"), (["-k", "4294967295"], "4096.0 GiB"),
    (["-k", "200000"], "195 MiB"),
])
def test_hash_over_the_processs_whole_budget(capsys, monkeypatch, tripwires, budget, args, needs):
    # Status 1 before, as a hash that failed, and only once the password was read and the hash
    # begun: the flags ask for more than any wait brings.  The message is the library's own.
    budget(96)
    refused(capsys, monkeypatch, tripwires, ["hash", "somesalt", *args],
            f"Error: this hash needs {needs} of work memory, more than the process's whole "
            f"work-memory budget of 96 MiB (set_memory_budget(96)): raise "
            f"ARGONISHCHE_MEMORY_BUDGET_MIB")


def test_verify_a_hash_over_the_processs_whole_budget(capsys, monkeypatch, budget):
    # Status 1 before, as if the hash could have been computed: refused at admission, before
    # any memory is taken (the costs come from ENCODED, so only the library can see them).
    budget(96)
    status, out, err = call_cli(capsys, monkeypatch, "verify", encoded_with(m=200000),
                                stdin=b"password")
    assert (status, out) == (2, "")
    assert err.startswith("Error: this hash needs 195 MiB of work memory, more than the "
                          "process's whole work-memory budget of 96 MiB")


@pytest.mark.parametrize("command", [["hash", "somesalt"], ["verify", VALID]])
def test_a_secret_file_longer_than_a_mib(capsys, monkeypatch, tripwires, tmp_path, command):
    # Read whole before, however long (/dev/zero: until memory ran out), then hashed.
    path = tmp_path / "pepper"
    path.write_bytes(bytes(MIB + 1))
    refused(capsys, monkeypatch, tripwires, [*command, "--secret-file", str(path)],
            f"Error: --secret-file: more than 1,048,576 bytes in {path} (a pepper is tens of "
            f"bytes)")


# ---- in a real process: no traceback, no hang, nothing printed -------------------------------


def capped_memory() -> None:
    """The child's address space capped at 4 GiB: the code before this change, given a batch of
    10**12, would otherwise have taken the machine's memory before its MemoryError."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


@pytest.mark.parametrize("args, message", [
    (["bench", "--budget", "1e300"], BUDGET),       # it hung
    (["bench", "--batch", "1000000000000"], BATCH),  # MemoryError, after the default tables
    (["bench", "--budget", "nan", "--no-argon2"], BUDGET),
    (["tune", "--latency", "inf", "--kernels-only"], LATENCY),
    (["bench", "--point", "id,1,64,0"], "parallelism must be in 1..16777215, got 0"),
    (["hash", "somesalt", "--secret-file", "/dev/zero"], "more than 1,048,576 bytes"),
])
def test_in_a_real_process(args, message):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    began = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "argonishche", *args], capture_output=True,
                              input="password", text=True, env=environ, timeout=30,
                              preexec_fn=capped_memory)
    except subprocess.TimeoutExpired:
        pytest.fail(f"argonishche {' '.join(args)} ran for 30 s: it started")
    assert "Traceback" not in done.stderr
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert message in done.stderr
    assert time.monotonic() - began < 15  # an import and a parse, not a measurement
