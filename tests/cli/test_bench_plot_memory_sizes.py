"""tools/plot_memory_sizes.py: time per hash against memory size, measured with whichever
argonishche a Python imports, drawn before/after.  A tiny real measurement (1 MiB, one
repetition) and a drawing from a small made-up run; nothing here depends on how fast anything
is."""

from __future__ import annotations

import json

import argonishche
import pytest
from support import load_tool

plot_memory_sizes = load_tool("plot_memory_sizes")


def made_up_run(label, slow_above_mib=None):
    """A run at 16, 63, 65 and 128 MiB whose default allocator is 4x slower above
    *slow_above_mib* (the cliff), or never."""
    sizes = []
    for mib in (16, 63, 65, 128):
        base = mib * 1e-4
        slow = slow_above_mib is not None and mib > slow_above_mib
        subjects = {name: {"parallelism": 4, "median_s": base * factor,
                           "min_s": base * factor * 0.9, "max_s": base * factor * 1.1,
                           "samples_s": [base * factor], "faults_per_hash": 0.0}
                    for name, factor in (("argonishche default", 4 if slow else 1),
                                         ("arena", 4 if slow else 1), ("system", 3),
                                         ("hugepages", 1.5), ("argon2-cffi", 5))}
        subjects["PyNaCl (p=1)"] = dict(subjects["argon2-cffi"], parallelism=1)
        sizes.append({"memory_mib": mib, "memory_kib": mib * 1024, "subjects": subjects})
    return {"label": label, "cpu": {"model name": "Made-up CPU", "cpus": 2},
            "argonishche": {"git_commit": "0123456789abcdef", "argon2_backend": "ref"},
            "type": "id", "time_cost": 1, "parallelism": 4, "repetitions": 1, "sizes": sizes}


def test_draw_puts_before_and_after_in_one_png(tmp_path):
    pytest.importorskip("matplotlib")
    paths = []
    for label, cliff in (("before", 64), ("after", None)):
        paths.append(tmp_path / f"{label}.json")
        paths[-1].write_text(json.dumps(made_up_run(label, cliff)))
    out = tmp_path / "sizes.png"
    assert plot_memory_sizes.main(["draw", *map(str, paths), "--out", str(out),
                                   "--note", "made up"]) == 0
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width = int.from_bytes(data[16:20], "big")
    one = tmp_path / "one.png"
    plot_memory_sizes.main(["draw", str(paths[0]), "--out", str(one)])
    assert width > int.from_bytes(one.read_bytes()[16:20], "big")  # two panels side by side


def test_draw_takes_at_most_two_runs(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        plot_memory_sizes.main(["draw", "a.json", "b.json", "c.json", "--out", "x.png"])
    assert exc.value.code == 2 and "one or two" in capsys.readouterr().err


def test_measure_writes_every_subject_at_every_size(tmp_path):
    out = tmp_path / "run.json"
    assert plot_memory_sizes.main(["measure", str(out), "--label", "now", "--sizes-mib", "1,2",
                                   "--repetitions", "2", "--budget", "0"]) == 0
    run = json.loads(out.read_text())
    assert run["label"] == "now" and run["cpu"]["cpus"] >= 1
    assert run["argonishche"]["argon2_backend"] == argonishche.selected_backend("argon2")
    assert [size["memory_kib"] for size in run["sizes"]] == [1024, 2048]
    for size in run["sizes"]:
        subjects = size["subjects"]
        assert {"argonishche default", "arena", "system", "hugepages"} <= set(subjects)
        for name, subject in subjects.items():
            assert len(subject["samples_s"]) == 2, name
            assert subject["min_s"] <= subject["median_s"] <= subject["max_s"]
            assert subject["parallelism"] == (1 if name.startswith("PyNaCl") else 4)


def test_measure_rounds_memory_to_what_the_lanes_use(tmp_path):
    out = tmp_path / "run.json"
    plot_memory_sizes.main(["measure", str(out), "--label", "p=3", "--parallelism", "3",
                            "--sizes-mib", "1", "--repetitions", "1", "--budget", "0"])
    # 1024 KiB rounded down to a multiple of 4p = 12 KiB, so every library fills the same.
    assert json.loads(out.read_text())["sizes"][0]["memory_kib"] == 1020
