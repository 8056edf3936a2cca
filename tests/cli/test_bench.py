"""``argonishche bench`` as a whole: every suite run for real, and the command's flags, JSON,
plot and Ctrl-C.  Tiny points and budgets; nothing here depends on how fast anything is.
Measuring and reports on their own: test_bench_timing.py and test_bench_report.py."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import argonishche
import pytest
from argonishche._bench import suites
from argonishche._bench.points import Point
from support import bench_cli

TINY = ("--repetitions", "2", "--budget", "0.01", "--point", "d,1,64,1")


# ---- whole runs ------------------------------------------------------------------------------


def test_bench_argon2_hot_and_cold_tables_for_every_backend():
    out = io.StringIO()
    tables = suites.bench_argon2([Point("d", 1, 64, 1)], peers=False, repetitions=2,
                                budget=0.001, modes=("hot", "cold"), out=out)
    assert [t["mode"] for t in tables] == ["hot", "cold"]
    usable = [b.name for b in argonishche.backends() if b.state in ("selected", "available")]
    for t in tables:
        subjects = [row["subject"] for row in t["results"]]
        assert subjects[0] == f"argonishche ({argonishche.selected_backend('argon2')})"
        assert sorted(subjects[1:]) == sorted(f"backend {name}" for name in usable)
        assert all(len(row["samples_s"]) == 2 for row in t["results"])
    text = out.getvalue()
    assert "(hot: steady state" in text and "(cold: one hash per sample after evicting" in text


def test_cold_mode_allocates_per_hash_and_evicts_before_every_sample(monkeypatch):
    allocators, evictions = [], []
    real_hash = suites.argon2_hash

    def recording_hash(*args, **kwargs):
        allocators.append(kwargs.get("allocator"))
        return real_hash(*args, **kwargs)

    class CountingEvictor:
        def __call__(self):
            evictions.append(1)
    monkeypatch.setattr(suites, "argon2_hash", recording_hash)
    monkeypatch.setattr(suites, "CacheEvictor", CountingEvictor)
    tables = suites.bench_argon2([Point("i", 1, 64, 1)], peers=False, repetitions=3,
                                budget=0.001, modes=("cold",), out=io.StringIO())
    subjects = len(tables[0]["results"])
    assert set(allocators) == {"system"}
    assert len(evictions) == 3 * subjects
    assert len(allocators) == subjects + 3 * subjects   # the tag check, then one per sample


def test_bench_memory_times_every_allocator_with_wipe_on_and_off():
    out = io.StringIO()
    report = suites.bench_memory(Point("id", 1, 64, 1), peers=False, repetitions=2,
                                budget=0.001, out=out)
    subjects = {row["subject"] for row in report["results"]}
    for name in ("arena", "system", "hugepages", "locked"):
        assert {f"{name} wipe=on", f"{name} wipe=off"} <= subjects
    assert "vs system wipe=on" in out.getvalue()


def test_cli_bench_json_has_modes_rows_and_noise(capsys, tmp_path):
    path = tmp_path / "bench.json"
    status, out, err = bench_cli(capsys, *TINY, "--no-blake2b", "--hot", "--cold",
                                 "--json", str(path))
    assert status == 0, err
    assert "\r" not in err                          # no progress bar when stderr is no tty
    assert "Noise: spread (max-min)/median: median" in out and "\nVerdict: " in out
    data = json.loads(path.read_text())
    assert [t["mode"] for t in data["argon2"]] == ["hot", "cold"]
    assert data["noise"]["rows"] == sum(len(t["results"]) for t in data["argon2"])
    assert "blake2b" not in data and data["machine"]
    # Which backend each algorithm used in the run, and why, is printed first and saved.
    assert out.startswith("Selected backends (argonishche's rows below use them):\n")
    for algorithm in ("argon2", "blake2b"):
        choice = data["selection"][algorithm]
        assert choice["backend"] == argonishche.selected_backend(algorithm) and choice["why"]
        assert f"  {algorithm:<8} {choice['backend']:<10} " in out


def test_cli_bench_peers_are_interleaved_in_the_same_table(capsys):
    pytest.importorskip("argon2")
    status, out, _ = bench_cli(capsys, *TINY, "--no-blake2b", "--peers")
    assert status == 0
    assert "vs argon2-cffi" in out
    assert any(line.strip().startswith("argon2-cffi") for line in out.splitlines())


def test_cli_bench_blake2b_table(capsys):
    status, out, _ = bench_cli(capsys, *TINY, "--no-argon2")
    assert status == 0
    assert "BLAKE2b (hot;" in out and "hashlib.blake2b" in out
    big = [line for line in out.splitlines() if line.strip().startswith("1 MiB")]
    small = [line for line in out.splitlines() if line.strip().startswith("64 B one-shot")]
    usable = [b for b in argonishche.backends() if b.state in ("selected", "available")]
    assert len(big) == 2 + len(usable)      # selected, every backend, hashlib
    assert len(small) == 2                  # selected and hashlib: backend= is another path
    objects = [line for line in out.splitlines() if line.strip().startswith("64 B object")]
    assert len(objects) == 2                # new + update + digest, ours and hashlib's


def test_cli_bench_plot_draws_a_small_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "bench.png"
    status, out, err = bench_cli(capsys, "--repetitions", "2", "--budget", "0.001", "--point",
                                 "d,1,64,1", "--point", "d,1,128,1", "--no-blake2b",
                                 "--plot", str(path))
    assert status == 0, err
    assert f"plot: {path}" in out
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) < 100_000


def test_cli_bench_plot_without_matplotlib_says_what_to_install(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    status, out, err = bench_cli(capsys, *TINY, "--plot", str(tmp_path / "x.png"))
    assert status == 2
    assert "pip install argonishche[plot]" in err
    assert out == ""                                 # refused before measuring anything


def test_cli_bench_ctrl_c_prints_and_saves_what_was_measured(capsys, monkeypatch, tmp_path):
    def interrupted(**kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(suites, "bench_blake2b", interrupted)
    path = tmp_path / "partial.json"
    status, out, _ = bench_cli(capsys, *TINY, "--json", str(path))
    assert status == 130
    assert "Argon2d t=1 m=64 p=1" in out and "interrupted" in out and "Verdict:" in out
    data = json.loads(path.read_text())
    assert data["interrupted"] is True and len(data["argon2"]) == 1


def test_cli_bench_sigint_in_a_real_process():
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    environ["PYTHONUNBUFFERED"] = "1"
    # SIGINT at its default in the child: a runner started in the background by a shell without
    # job control (`.ci/run &`) ignores SIGINT, the ignored disposition survives exec, and a
    # Python started so never raises KeyboardInterrupt: the test would wait out its timeout.
    process = subprocess.Popen(
        [sys.executable, "-m", "argonishche", "bench", "--repetitions", "100000", "--budget",
         "0.001", "--point", "d,1,64,1", "--no-blake2b"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in process.stdout:  # after the selection lines, the tables begin
            if line.startswith("core clock"):
                break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "interrupted" in out and "Verdict:" in out


@pytest.mark.parametrize("args", [("--point", "id,3"), ("--repetitions", "0"), ("--frob",)])
def test_cli_bench_bad_flags_are_status_2(capsys, args):
    status, out, err = bench_cli(capsys, *args)
    assert status == 2
    assert out == ""
    assert "usage:" in err or "expected TYPE,T,M_KIB,P" in err
