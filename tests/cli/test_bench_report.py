"""``argonishche bench``'s reports: the Argon2 table and its JSON, and the noise verdict.
Made-up samples; nothing here measures anything."""

from __future__ import annotations

import pytest
from argonishche._bench import report
from argonishche._bench.points import Point
from argonishche._bench.timing import Subject


def test_argon2_report_labels_every_row_with_its_mode_and_compares_to_peers():
    point = Point("d", 1, 64, 1)
    subjects = [Subject("argonishche (x)", None, [0.001, 0.001, 0.0012]),
                Subject("peer", None, [0.002, 0.002, 0.002])]
    text, data = report.argon2_report(point, subjects, clock_hz=1e9, mode="cold")
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


def test_argon2_report_keeps_a_long_subject_name_apart_from_its_mode():
    name = "  backend example (third-party, witnessed)"
    subjects = [Subject("argonishche (x)", None, [0.001]), Subject(name, None, [0.002])]
    text, _ = report.argon2_report(Point("id", 1, 64, 1), subjects, clock_hz=1e9)
    row = text.splitlines()[3]
    assert row.split()[:5] == ["backend", "example", "(third-party,", "witnessed)", "hot"], row
    header = text.splitlines()[1]
    assert header.index("mode") == row.index("hot")  # the columns still line up


def test_argon2_report_says_when_it_was_interrupted():
    subjects = [Subject("argonishche (x)", None, [0.001])]
    text, data = report.argon2_report(Point("d", 1, 64, 1), subjects, 1e9, "hot", planned=7)
    assert "interrupted after 1 of 7 interleaved repetitions" in text
    assert data["interrupted"] is True


# ---- noise -----------------------------------------------------------------------------------


def table(steps, samples=None):
    """One Argon2 table whose row i has samples 1, 1+a, 1+2a, 1+3a, 1+4a for a = steps[i]:
    spread 4a / (1+2a), interquartile spread 2a / (1+2a)."""
    return {"argon2": [{"point": "d t=1 m=64 p=1", "results": [
        {"subject": f"s{i}", "mode": "hot",
         "samples_s": samples or [1.0 + k * a for k in range(5)]}
        for i, a in enumerate(steps)]}]}


QUIET = {"cpus": 2, "loadavg": [0.0, 0.0, 0.0], "ticks_total": 1000, "ticks_steal": 0}


def test_noise_report_quiet_machine():
    after = dict(QUIET, ticks_total=2000)
    text, data = report.noise_report(table([0.001, 0.001, 0.002]), QUIET, after)
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
    _, data = report.noise_report(table([0.05, 0.1, 0.15]), QUIET, after)
    assert data["verdict"].startswith("noisy: differences below 33 % mean nothing")
    assert data["steal"] == pytest.approx(0.1)
    _, data = report.noise_report(table([0.001, 0.001]), QUIET, after)
    assert data["verdict"].startswith("somewhat noisy")  # quiet rows, but 10 % steal
    assert "busy" in data["verdict"]


def test_noise_report_says_when_single_repetitions_were_disturbed():
    _, data = report.noise_report(table([0, 0], samples=[1.0, 1.0, 1.0, 1.0, 2.0]), QUIET,
                                  QUIET)
    assert data["verdict"].startswith("quiet")            # the medians are fine
    assert "some repetitions were disturbed" in data["verdict"]


def test_noise_report_with_single_samples_says_so():
    _, data = report.noise_report({"argon2": [{"point": "p", "results": [
        {"subject": "s", "mode": "hot", "samples_s": [1.0]}]}]}, QUIET, QUIET)
    assert "too few repetitions" in data["verdict"]


def test_startup_report_compares_ours_with_argon2_cffi():
    samples = {"python -c pass": [0.02, 0.02, 0.021, 0.02],
               "import argonishche + first hash": [0.05, 0.05, 0.06, 0.05],
               "import argon2 + first hash": [0.04, 0.04, 0.04, 0.04]}
    text = report.startup_report(samples, 4)
    lines = text.splitlines()
    assert lines[0].startswith("Start-up (cold") and "4 interleaved repetitions" in lines[0]
    assert lines[2].split()[:4] == ["import", "argonishche", "+", "first"]
    assert lines[-1] == ("  argonishche / argon2-cffi: 1.25x (medians); per repetition 1.25x, "
                         "middle half 1.25..1.31x")
    without_peer = report.startup_report({k: v for k, v in samples.items()
                                          if "argon2 " not in k}, 4)
    assert "argon2-cffi" not in without_peer
