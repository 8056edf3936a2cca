"""``argonishche bench``: interleaving, hot and cold modes, the noise verdict, progress, plot,
JSON and Ctrl-C.  Tiny points and budgets; nothing here depends on how fast anything is."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest

import argonishche
from argonishche import _bench, _cli

TINY = ("--repetitions", "2", "--budget", "0.01", "--point", "d,1,64,1")


def bench_cli(capsys, *args):
    try:
        status = _cli.main(["bench", *args])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def fake_subjects(names, log=None, fail_at=None):
    """Subjects that return the same tag, record their calls in *log*, and raise
    KeyboardInterrupt on call number *fail_at* (counted over all of them)."""
    calls = [0]

    def make(name):
        def run():
            calls[0] += 1
            if fail_at is not None and calls[0] == fail_at:
                raise KeyboardInterrupt
            if log is not None:
                log.append(name)
            return b"tag"
        return _bench.Subject(name, run)
    return [make(name) for name in names]


# ---- points --------------------------------------------------------------------------------


def test_point_parses_the_rfc_order_and_refuses_junk():
    assert _bench.Point.parse("argon2id, 3,65536 ,4") == _bench.Point("id", 3, 65536, 4)
    assert str(_bench.Point("d", 1, 2048, 1)) == "d t=1 m=2048 p=1"
    with pytest.raises(ValueError, match="expected TYPE,T,M_KIB,P"):
        _bench.Point.parse("id,3,65536")


def test_default_points_hold_the_headline_point_and_rfc_9106_low_memory():
    assert _bench.Point("d", 1, 2048, 1) in _bench.DEFAULT_POINTS
    assert _bench.Point("id", 3, 65536, 4) in _bench.DEFAULT_POINTS


def test_pynacl_is_left_out_where_libsodium_refuses_the_point():
    pytest.importorskip("nacl")
    names = {s.name for s in _bench.peer_argon2_subjects(_bench.Point("i", 1, 64, 1))}
    assert "PyNaCl" not in names            # libsodium's Argon2i needs t >= 3
    names = {s.name for s in _bench.peer_argon2_subjects(_bench.Point("i", 3, 64, 1))}
    assert "PyNaCl" in names
    names = {s.name for s in _bench.peer_argon2_subjects(_bench.Point("id", 1, 64, 2))}
    assert "PyNaCl" not in names            # one lane only


# ---- timing --------------------------------------------------------------------------------


def test_hot_timing_interleaves_and_rotates_the_order():
    log = []
    subjects = fake_subjects("abc", log)
    _bench.time_interleaved(subjects, repetitions=3, budget=0.0)
    assert [len(s.samples) for s in subjects] == [3, 3, 3]
    # one sizing call each, then one call per subject per round, rotated each round
    assert log == list("abc") + list("abc") + list("bca") + list("cab")


def test_cold_timing_evicts_before_every_single_call():
    log = []
    subjects = fake_subjects("ab", log)
    _bench.time_interleaved(subjects, repetitions=2, budget=10.0,
                           evict=lambda: log.append("evict"))
    assert log == ["evict", "a", "evict", "b", "evict", "b", "evict", "a"]
    assert [len(s.samples) for s in subjects] == [2, 2]


def test_interrupted_timing_keeps_only_rounds_every_subject_finished():
    # calls 1-3 size the samples; 4-6 are round one; the 8th call is interrupted
    subjects = fake_subjects("abc", fail_at=8)
    with pytest.raises(KeyboardInterrupt):
        _bench.time_interleaved(subjects, repetitions=5, budget=0.0)
    assert [len(s.samples) for s in subjects] == [1, 1, 1]


def test_subjects_that_disagree_are_not_timed():
    subjects = fake_subjects("ab")
    subjects.append(_bench.Subject("wrong", lambda: b"other"))
    with pytest.raises(RuntimeError, match="disagree"):
        _bench.check_same_tags(subjects)


def test_cache_evictor_is_larger_than_the_last_level_cache():
    evictor = _bench.CacheEvictor()
    assert evictor.size >= 64 << 20
    assert evictor.size >= 2 * _bench.last_level_cache_bytes()
    evictor()  # reads it all; must not fail
    assert _bench.CacheEvictor(size=4096).size == 4096


# ---- reports ---------------------------------------------------------------------------------


def test_argon2_report_labels_every_row_with_its_mode_and_compares_to_peers():
    point = _bench.Point("d", 1, 64, 1)
    subjects = [_bench.Subject("argonishche (x)", None, [0.001, 0.001, 0.0012]),
                _bench.Subject("peer", None, [0.002, 0.002, 0.002])]
    text, data = _bench.argon2_report(point, subjects, clock_hz=1e9, mode="cold")
    lines = text.splitlines()
    assert lines[0].startswith("Argon2d t=1 m=64 p=1  (cold:")
    assert "3 interleaved repetitions" in lines[0]
    assert "vs peer" in lines[1] and "spread" in lines[1]
    assert lines[2].split()[:3] == ["argonishche", "(x)", "cold"]
    assert lines[2].rstrip().endswith("2.00x")
    assert [row["mode"] for row in data["results"]] == ["cold", "cold"]
    assert data["memory_kib"] == 64 and data["mode"] == "cold"
    first = data["results"][0]
    assert first["hashes_per_s"] == pytest.approx(1000)
    assert first["ms_per_hash"] == pytest.approx(1.0)
    assert first["cycles_per_block"] == pytest.approx(1e6 / 64)
    assert first["mb_per_s"] == pytest.approx(64 * 1024 / 0.001 / 1e6)
    assert first["spread"] == pytest.approx(0.2)
    assert first["ratio_vs"] == {"peer": pytest.approx(2.0)}


def test_argon2_report_says_when_it_was_interrupted():
    subjects = [_bench.Subject("argonishche (x)", None, [0.001])]
    text, data = _bench.argon2_report(_bench.Point("d", 1, 64, 1), subjects, 1e9, "hot",
                                     planned=7)
    assert "interrupted after 1 of 7 interleaved repetitions" in text
    assert data["interrupted"] is True


def table(steps, samples=None):
    """One Argon2 table whose row i has samples 1, 1+a, 1+2a, 1+3a, 1+4a for a = steps[i]:
    spread 4a / (1+2a), interquartile spread 2a / (1+2a)."""
    return {"argon2": [{"point": "d t=1 m=64 p=1", "results": [
        {"subject": f"s{i}", "mode": "hot",
         "samples_s": samples or [1.0 + k * a for k in range(5)]}
        for i, a in enumerate(steps)]}]}


QUIET = {"cpus": 2, "loadavg": [0.0, 0.0, 0.0], "ticks_total": 1000, "ticks_steal": 0}


def test_spreads_of_a_row():
    samples = [1.0, 1.1, 1.2, 1.3, 1.4]
    assert _bench.spread(samples) == pytest.approx(0.4 / 1.2)
    assert _bench.interquartile(samples) == pytest.approx(0.2 / 1.2)
    assert _bench.interquartile([1.0, 1.0, 1.0, 1.0, 9.0]) == 0   # one outlier: no effect
    assert _bench.Subject("x", lambda: b"", [2.0, 2.0]).spread == 0


def test_noise_report_quiet_machine():
    after = dict(QUIET, ticks_total=2000)
    text, data = _bench.noise_report(table([0.001, 0.001, 0.002]), QUIET, after)
    assert data["median_interquartile"] == pytest.approx(0.002 / 1.002)
    assert data["worst_spread"] == pytest.approx(0.008 / 1.004)
    assert data["worst_row"] == "s2, d t=1 m=64 p=1 hot"
    assert data["steal"] == 0
    assert text.startswith("Noise: spread (max-min)/median: median 0.4 %, worst 0.8 % "
                           "(s2, d t=1 m=64 p=1 hot); interquartile/median: median 0.2 %")
    assert "load average 0.00 before the run on 2 CPUs; CPU steal 0.0 %" in text
    assert text.splitlines()[1] == ("Verdict: quiet: differences between medians above about "
                                    "1 % are real")


def test_noise_report_noisy_spreads_and_steal():
    after = dict(QUIET, ticks_total=2000, ticks_steal=100)
    _, data = _bench.noise_report(table([0.05, 0.1, 0.15]), QUIET, after)
    assert data["verdict"].startswith("noisy: differences below 33 % mean nothing")
    assert data["steal"] == pytest.approx(0.1)
    _, data = _bench.noise_report(table([0.001, 0.001]), QUIET, after)
    assert data["verdict"].startswith("somewhat noisy")  # quiet rows, but 10 % steal
    assert "busy" in data["verdict"]


def test_noise_report_says_when_single_repetitions_were_disturbed():
    _, data = _bench.noise_report(table([0, 0], samples=[1.0, 1.0, 1.0, 1.0, 2.0]), QUIET,
                                 QUIET)
    assert data["verdict"].startswith("quiet")            # the medians are fine
    assert "some repetitions were disturbed" in data["verdict"]


def test_noise_report_with_single_samples_says_so():
    _, data = _bench.noise_report({"argon2": [{"point": "p", "results": [
        {"subject": "s", "mode": "hot", "samples_s": [1.0]}]}]}, QUIET, QUIET)
    assert "too few repetitions" in data["verdict"]


def test_progress_bar_waits_draws_a_count_and_clears():
    now = [0.0]
    stream = io.StringIO()
    progress = _bench.Progress(stream, delay=1.0, width=10, clock=lambda: now[0], columns=80)
    progress.start("argon2", 4)
    progress.step("first")
    assert stream.getvalue() == ""                    # short runs print nothing
    now[0] = 1.5
    progress.step("second")
    assert stream.getvalue() == "\r\033[Kargon2 [##........] 1/4  second"
    now[0] = 1.55
    progress.step("third")                            # at most ten redraws a second
    assert stream.getvalue().count("\r") == 1
    now[0] = 2.0
    progress.step("fourth")
    assert stream.getvalue().endswith("argon2 [#######...] 3/4  fourth")
    progress.clear()
    assert stream.getvalue().endswith("\r\033[K")
    assert len(progress.render("x" * 200)) == 79      # never wider than the terminal


# ---- whole runs ------------------------------------------------------------------------------


def test_bench_argon2_hot_and_cold_tables_for_every_backend():
    out = io.StringIO()
    tables = _bench.bench_argon2([_bench.Point("d", 1, 64, 1)], peers=False, repetitions=2,
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
    real_hash = _bench.argon2_hash

    def recording_hash(*args, **kwargs):
        allocators.append(kwargs.get("allocator"))
        return real_hash(*args, **kwargs)

    class CountingEvictor:
        def __call__(self):
            evictions.append(1)
    monkeypatch.setattr(_bench, "argon2_hash", recording_hash)
    monkeypatch.setattr(_bench, "CacheEvictor", CountingEvictor)
    tables = _bench.bench_argon2([_bench.Point("i", 1, 64, 1)], peers=False, repetitions=3,
                                budget=0.001, modes=("cold",), out=io.StringIO())
    subjects = len(tables[0]["results"])
    assert set(allocators) == {"system"}
    assert len(evictions) == 3 * subjects
    assert len(allocators) == subjects + 3 * subjects   # the tag check, then one per sample


def test_bench_memory_times_every_allocator_with_wipe_on_and_off():
    out = io.StringIO()
    report = _bench.bench_memory(_bench.Point("id", 1, 64, 1), peers=False, repetitions=2,
                                budget=0.001, out=out)
    subjects = {row["subject"] for row in report["results"]}
    for name in ("arena", "system", "hugepages", "locked"):
        assert {f"{name} wipe=on", f"{name} wipe=off"} <= subjects
    assert "vs system wipe=on" in out.getvalue()


def test_cli_bench_json_has_modes_rows_and_noise(capsys, tmp_path):
    path = tmp_path / "_bench.json"
    status, out, err = bench_cli(capsys, *TINY, "--no-blake2b", "--hot", "--cold",
                                 "--json", str(path))
    assert status == 0, err
    assert "\r" not in err                          # no progress bar when stderr is no tty
    assert "Noise: spread (max-min)/median: median" in out and "\nVerdict: " in out
    data = json.loads(path.read_text())
    assert [t["mode"] for t in data["argon2"]] == ["hot", "cold"]
    assert data["noise"]["rows"] == sum(len(t["results"]) for t in data["argon2"])
    assert "blake2b" not in data and data["machine"]


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


def test_cli_bench_plot_draws_a_small_png(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "_bench.png"
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
    monkeypatch.setattr(_bench, "bench_blake2b", interrupted)
    path = tmp_path / "partial.json"
    status, out, _ = bench_cli(capsys, *TINY, "--json", str(path))
    assert status == 130
    assert "Argon2d t=1 m=64 p=1" in out and "interrupted" in out and "Verdict:" in out
    data = json.loads(path.read_text())
    assert data["interrupted"] is True and len(data["argon2"]) == 1


def test_cli_bench_sigint_in_a_real_process():
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    environ["PYTHONUNBUFFERED"] = "1"
    process = subprocess.Popen(
        [sys.executable, "-m", "argonishche", "bench", "--repetitions", "100000", "--budget",
         "0.001", "--point", "d,1,64,1", "--no-blake2b"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
    try:
        assert process.stdout.readline().startswith("core clock")
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
