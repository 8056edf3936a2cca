"""``argonishche bench``'s memory column: whether a row's timed hashes reused work memory or had it
fresh, from argonishche's counters and the process's page faults.  Made-up counters for the
labels; real hashes for the counting (tiny, or one 33 MiB hash per sample); nothing here depends
on how fast anything is."""

from __future__ import annotations

import platform
import sys

import pytest
from argonishche._bench import report, suites
from argonishche._bench.memory_use import Counters, MemoryUse, page_size
from argonishche._bench.points import Point
from argonishche._bench.timing import Subject, time_interleaved

SIZE = 100 * 4096  # bytes per hash in the made-up counts: 100 pages of 4 KiB


def use(hashes=4, maps=0, reuses=0, faults=0):
    return MemoryUse(hashes=hashes, maps=maps, reuses=reuses, faults=faults)


@pytest.mark.parametrize("counts, label", [
    (use(reuses=4), "reused"),
    (use(maps=4, faults=400), "fresh"),
    (use(maps=1, reuses=3), "fresh 1/4"),
    (use(faults=4 * 100), "fresh (per hash)"),
    (use(faults=4 * 60), "fresh (per hash)"),
    (use(faults=4 * 30), "per hash, 30% fresh"),
    (use(faults=4), "per hash, reused"),
    (use(faults=None), "per hash"),
    (use(hashes=0), "-"),
])
def test_labels(counts, label, monkeypatch):
    monkeypatch.setattr("argonishche._bench.memory_use.page_size", lambda: 4096)
    assert counts.label(SIZE) == label


def test_counts_add_up_over_samples_and_lose_faults_where_the_os_gives_none():
    counts = MemoryUse()
    counts.add(Counters(1, 10, 100), Counters(2, 12, 150), hashes=3)
    counts.add(Counters(2, 12, 150), Counters(2, 15, 151), hashes=3)
    assert (counts.hashes, counts.maps, counts.reuses, counts.faults) == (6, 1, 5, 51)
    counts.add(Counters(2, 15, None), Counters(2, 16, None), hashes=1)
    assert counts.faults is None and counts.reuses == 6
    assert counts.as_dict(SIZE)["page_faults_per_hash"] is None


def test_the_report_shows_the_memory_column_and_keeps_it_in_json(monkeypatch):
    monkeypatch.setattr("argonishche._bench.memory_use.page_size", lambda: 4096)
    point = Point("id", 1, 400, 1)   # 400 KiB: 100 pages
    subjects = [Subject("argonishche (x)", None, [0.001, 0.001], use(hashes=8, reuses=8)),
                Subject("  allocator hugepages", None, [0.002, 0.002], use(hashes=4, maps=4)),
                Subject("peer", None, [0.003, 0.003], use(hashes=4, faults=400))]
    text, data = report.argon2_report(point, subjects, clock_hz=1e9)
    header, *rows = text.splitlines()[1:]
    column = header.index("memory")
    assert [row[column:].split("  ")[0] for row in rows] == ["reused", "fresh",
                                                             "fresh (per hash)"]
    assert [row["memory"]["label"] for row in data["results"]] == ["reused", "fresh",
                                                                   "fresh (per hash)"]
    assert data["results"][2]["memory"]["page_faults_per_hash"] == 100
    assert list(data["results"][0]["ratio_vs"]) == ["peer"]   # an allocator row is ours


def test_the_preamble_explains_the_column():
    assert "memory: reused = " in report.argon2_preamble(3e9)


# ---- real counting ----------------------------------------------------------------------------


def test_kept_memory_counts_as_reused_and_hugepages_as_fresh(budget):
    budget(None, idle_seconds=60)
    point = Point("id", 1, 256, 1)
    subjects = [Subject(name, suites.our_hasher(point, allocator=name))
                for name in ("arena", "hugepages")]
    time_interleaved(subjects, 3, 0.001)
    arena, hugepages = (s.memory for s in subjects)
    assert arena.hashes >= 3 and arena.reuses == arena.hashes and arena.maps == 0
    assert hugepages.maps == hugepages.hashes >= 3 and hugepages.reuses == 0
    assert [s.memory.label(point.memory_bytes) for s in subjects] == ["reused", "fresh"]


@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc",
                    reason="glibc's malloc thresholds, and getrusage's page faults")
def test_memory_allocated_per_hash_is_told_by_its_page_faults():
    # 33 MiB: above glibc's largest mmap threshold (32 MiB), so the system allocator's malloc
    # maps fresh memory for every hash, which our counters never see: its faults tell.
    point = Point("id", 1, 33 * 1024, 1)
    subject = Subject("system", suites.our_hasher(point, allocator="system"))
    time_interleaved([subject], 2, 0.0)
    pages = point.memory_bytes // page_size()
    assert subject.memory.maps == subject.memory.reuses == 0
    assert subject.memory.faults >= 2 * pages * 0.9
    assert subject.memory.label(point.memory_bytes) == "fresh (per hash)"
