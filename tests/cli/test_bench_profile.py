"""``argonishche bench --profile NAME [--pause SECONDS]``: a profile's points, each timed in
steady state and as the first hash in a new process.  The profile's points are swapped for tiny
ones and every run is one or two repetitions; nothing here depends on how fast anything is."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import json

import argonishche
import pytest
from argonishche import _registry
from argonishche._bench import command, fresh_process, profiles
from argonishche._bench.points import Point
from argonishche.exceptions import MemoryBudgetError
from support import bench_cli

TINY_POINTS = (profiles.ProfilePoint(Point("id", 1, 64, 1), "tiny, one lane"),
               profiles.ProfilePoint(Point("id", 1, 128, 2), "tiny, two lanes", 1))
FAST = ("--repetitions", "2", "--budget", "0.001", "--no-blake2b")


@pytest.fixture
def tiny_profile(monkeypatch):
    """The deployed profile with two tiny points, the second capped at one repetition."""
    profile = dataclasses.replace(profiles.PROFILES["deployed"], points=TINY_POINTS)
    monkeypatch.setitem(profiles.PROFILES, "deployed", profile)
    return profile


def subjects_of(table):
    return [row["subject"] for row in table["results"]]


# ---- the profiles ------------------------------------------------------------------------------


def test_the_deployed_profile_holds_the_points_people_deploy():
    points = [(entry.point.type, entry.point.time_cost, entry.point.memory_cost,
               entry.point.parallelism) for entry in profiles.PROFILES["deployed"].points]
    assert points == [("id", 2, 19456, 1), ("id", 3, 65536, 4), ("id", 1, 64512, 1),
                      ("id", 1, 66560, 1), ("id", 2, 102400, 8), ("id", 2, 262144, 4),
                      ("id", 1, 1048576, 4), ("id", 1, 2097152, 4)]
    largest = profiles.PROFILES["deployed"].points[-1]
    assert largest.repetitions(7) == profiles.LARGE < 7
    assert largest.repetitions(2) == 2


def test_the_parser_offers_every_profile():
    # command.py names them so that building the parser imports no profile.
    assert tuple(sorted(command.PROFILE_NAMES)) == tuple(sorted(profiles.PROFILES))


# ---- a whole run -------------------------------------------------------------------------------


def test_cli_profile_times_each_point_steady_and_in_new_processes(capsys, tmp_path, tiny_profile):
    pytest.importorskip("matplotlib")
    path, figure = tmp_path / "profile.json", tmp_path / "profile.png"
    status, out, err = bench_cli(capsys, "--profile", "deployed", *FAST, "--json", str(path),
                                 "--plot", str(figure))
    assert status == 0, err
    assert figure.read_bytes().startswith(b"\x89PNG")
    data = json.loads(path.read_text())
    assert [(t["point"], t["mode"]) for t in data["argon2"]] == [
        ("id t=1 m=64 p=1", "hot"), ("id t=1 m=64 p=1", "first"),
        ("id t=1 m=128 p=2", "hot"), ("id t=1 m=128 p=2", "first")]
    assert [t["repetitions"] for t in data["argon2"]] == [2, 2, 1, 1]   # the second is capped
    selected = f"argonishche ({argonishche.selected_backend('argon2')})"
    hot, first = data["argon2"][0], data["argon2"][1]
    assert subjects_of(hot)[:4] == [selected, "allocator arena", "allocator system",
                                    "allocator hugepages"]
    cffi = [] if importlib.util.find_spec("argon2") is None else ["argon2-cffi"]
    assert subjects_of(first) == [selected, "allocator system", *cffi]
    assert cffi == [name for name in subjects_of(hot) if name == "argon2-cffi"]
    assert hot["title"] == "tiny, one lane" and "no pause" in first["protocol"]
    assert data["profile"] == {"name": "deployed", "pause_s": 0.0, "skipped": []}
    # The headings say which is which.
    assert "Argon2id t=1 m=64 p=1 - tiny, one lane  (hot: steady state" in out
    assert "Argon2id t=1 m=64 p=1 - tiny, one lane  (first hash in a new process" in out


def test_the_memory_column_tells_reused_from_fresh(capsys, tmp_path, tiny_profile, budget):
    budget(None, idle_seconds=60)  # whatever the environment says, kept memory stays kept
    path = tmp_path / "profile.json"
    status, _, err = bench_cli(capsys, "--profile", "deployed", *FAST, "--json", str(path))
    assert status == 0, err
    hot, first = json.loads(path.read_text())["argon2"][:2]
    memory = {row["subject"]: row["memory"] for row in hot["results"]}
    selected = f"argonishche ({argonishche.selected_backend('argon2')})"
    if _registry.get().settings.allocator_name == "arena":    # the default, unless changed
        assert memory[selected]["label"] == "reused" and memory[selected]["maps"] == 0
    assert memory["allocator arena"]["label"] == "reused"
    assert memory["allocator arena"]["reuses"] == memory["allocator arena"]["hashes"] > 0
    assert memory["allocator hugepages"]["label"] == "fresh"     # never kept, by design
    assert memory["allocator hugepages"]["maps"] == memory["allocator hugepages"]["hashes"]
    # A new process has nothing kept: its first hash at the point maps memory afresh.
    assert {row["subject"]: row["memory"]["label"] for row in first["results"]}[selected] \
        == "fresh"


def test_cli_profile_pause_sleeps_before_each_new_process(capsys, tmp_path, tiny_profile,
                                                          monkeypatch):
    sleeps = []
    monkeypatch.setattr(fresh_process.time, "sleep", sleeps.append)
    path = tmp_path / "profile.json"
    status, out, err = bench_cli(capsys, "--profile", "deployed", *FAST, "--pause", "2.5",
                                 "--json", str(path))
    assert status == 0, err
    data = json.loads(path.read_text())
    timed = sum(len(t["results"]) * t["repetitions"] for t in data["argon2"]
                if t["mode"] == "first")
    assert sleeps == [2.5] * timed
    assert data["profile"]["pause_s"] == 2.5
    assert "a 2.5 s pause before each process" in out


def test_a_point_beyond_the_work_memory_budget_is_skipped(capsys, tmp_path, monkeypatch,
                                                          budget):
    profile = dataclasses.replace(profiles.PROFILES["deployed"], points=(
        profiles.ProfilePoint(Point("id", 1, 4096, 1), "larger than the budget"),
        TINY_POINTS[0]))
    monkeypatch.setitem(profiles.PROFILES, "deployed", profile)
    budget(3)  # MiB: the 4 MiB point cannot be admitted (hugepages round 64 KiB up to 2)
    path = tmp_path / "profile.json"
    status, out, err = bench_cli(capsys, "--profile", "deployed", *FAST, "--json", str(path))
    assert status == 0, err
    data = json.loads(path.read_text())
    assert [skipped["point"] for skipped in data["profile"]["skipped"]] == ["id t=1 m=4096 p=1"]
    assert "work-memory budget" in data["profile"]["skipped"][0]["reason"]
    assert [t["point"] for t in data["argon2"]] == ["id t=1 m=64 p=1"] * 2
    assert "Argon2id t=1 m=4096 p=1 - larger than the budget: skipped:" in out
    with pytest.raises(MemoryBudgetError):      # the reason is real: the point cannot run
        argonishche.argon2_hash(b"pw", b"saltsalt", time_cost=1, memory_cost=4096,
                                parallelism=1)


def test_cli_profile_ctrl_c_keeps_the_tables_measured(capsys, tmp_path, tiny_profile,
                                                      monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(profiles, "time_in_new_processes", interrupted)
    path = tmp_path / "partial.json"
    status, out, _ = bench_cli(capsys, "--profile", "deployed", *FAST, "--json", str(path))
    assert status == 130
    data = json.loads(path.read_text())
    assert [(t["point"], t["mode"]) for t in data["argon2"]] == [("id t=1 m=64 p=1", "hot")]
    assert data["interrupted"] is True and "Verdict:" in out
    assert data["profile"]["name"] == "deployed"


@pytest.mark.parametrize("args, message", [
    (("--profile", "deployed", "--point", "id,1,64,1"), "drop --point"),
    (("--profile", "deployed", "--cold"), "drop --cold"),
    (("--pause", "1"), "--pause applies to --profile"),
    (("--profile", "deployed", "--pause", "-1"), "expected seconds from 0 to 3600"),
    (("--profile", "nonesuch"), "invalid choice"),
])
def test_cli_profile_refuses_flags_that_do_not_go_with_it(capsys, args, message):
    status, out, err = bench_cli(capsys, *args)
    assert status == 2
    assert out == "" and message in err


# ---- new processes -----------------------------------------------------------------------------


def printing(tag: str, seconds: float = 0.001, faults: tuple[int, int] = (10, 30)) -> str:
    """A child that prints what a first-hash child prints, without hashing."""
    result = {"seconds": seconds, "tag": tag, "before": [0, 0, faults[0]],
              "after": [1, 0, faults[1]]}
    return f"import json; print(json.dumps({result!r}))"


def test_new_process_samples_and_memory_come_from_the_child():
    subjects = [fresh_process.NewProcessSubject(name, lambda: b"", code=printing("ab", s))
                for name, s in (("one", 0.25), ("two", 0.5))]
    fresh_process.time_in_new_processes(subjects, 2)
    assert [s.samples for s in subjects] == [[0.25, 0.25], [0.5, 0.5]]
    assert subjects[0].memory.hashes == 2 and subjects[0].memory.maps == 2
    assert subjects[0].memory.faults == 40


def test_a_new_process_with_another_tag_is_refused():
    subjects = [fresh_process.NewProcessSubject("one", lambda: b"", code=printing("ab")),
                fresh_process.NewProcessSubject("two", lambda: b"", code=printing("cd"))]
    with pytest.raises(RuntimeError, match="disagree"):
        fresh_process.time_in_new_processes(subjects, 1)


def test_a_failing_new_process_says_why():
    subject = fresh_process.NewProcessSubject("broken", lambda: b"",
                                              code="raise SystemExit('no memory here')")
    with pytest.raises(RuntimeError, match="broken: the new process failed.*no memory here"):
        subject.spawn()


def test_first_hash_children_hash_what_the_steady_subjects_hash():
    point = Point("id", 1, 64, 2)
    subjects = fresh_process.first_hash_subjects(point, (None, "system"), peer=True)
    expected = argonishche.argon2_hash(b"correct horse battery staple", bytes(range(16)),
                                       **point.costs)
    cffi = [] if importlib.util.find_spec("argon2") is None else ["argon2-cffi"]
    selected = f"argonishche ({argonishche.selected_backend('argon2')})"
    assert [s.name for s in subjects] == [selected, "  allocator system", *cffi]
    for subject in subjects:
        assert subject.run() == expected, subject.name


def test_progress_counts_every_sample_of_a_profile(tiny_profile):
    class Counting:
        def __init__(self):
            self.total, self.steps = 0, 0

        def start(self, title, total):
            self.total += total

        def step(self, label=""):
            self.steps += 1

    progress = Counting()
    summary = profiles.bench_profile(tiny_profile, repetitions=1, budget=0.001,
                                     progress=progress, out=io.StringIO())
    assert summary["skipped"] == []
    assert progress.steps == progress.total > 0
