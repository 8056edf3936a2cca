"""``argonishche bench``'s measuring: points, peers, interleaving, hot and cold modes, spreads,
the progress bar.  Fake subjects; nothing here depends on how fast anything is."""

from __future__ import annotations

import io
import platform

import pytest
from argonishche._bench import machine, peers, timing
from argonishche._bench.points import DEFAULT_POINTS, Point
from argonishche._bench.progress import Progress
from argonishche._bench.timing import Subject


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
        return Subject(name, run)
    return [make(name) for name in names]


# ---- points --------------------------------------------------------------------------------


def test_point_parses_the_rfc_order_and_refuses_junk():
    assert Point.parse("argon2id, 3,65536 ,4") == Point("id", 3, 65536, 4)
    assert str(Point("d", 1, 2048, 1)) == "d t=1 m=2048 p=1"
    with pytest.raises(ValueError, match="expected TYPE,T,M_KIB,P"):
        Point.parse("id,3,65536")


def test_default_points_hold_the_headline_point_and_rfc_9106_low_memory():
    assert Point("d", 1, 2048, 1) in DEFAULT_POINTS
    assert Point("id", 3, 65536, 4) in DEFAULT_POINTS


def test_pynacl_is_left_out_where_libsodium_refuses_the_point():
    pytest.importorskip("nacl")
    names = {s.name for s in peers.peer_argon2_subjects(Point("i", 1, 64, 1))}
    assert "PyNaCl" not in names            # libsodium's Argon2i needs t >= 3
    names = {s.name for s in peers.peer_argon2_subjects(Point("i", 3, 64, 1))}
    assert "PyNaCl" in names
    names = {s.name for s in peers.peer_argon2_subjects(Point("id", 1, 64, 2))}
    assert "PyNaCl" not in names            # one lane only


# ---- timing --------------------------------------------------------------------------------


def test_hot_timing_interleaves_and_rotates_the_order():
    log = []
    subjects = fake_subjects("abc", log)
    timing.time_interleaved(subjects, repetitions=3, budget=0.0)
    assert [len(s.samples) for s in subjects] == [3, 3, 3]
    # one sizing call each, then one call per subject per round, rotated each round
    assert log == list("abc") + list("abc") + list("bca") + list("cab")


def test_cold_timing_evicts_before_every_single_call():
    log = []
    subjects = fake_subjects("ab", log)
    timing.time_interleaved(subjects, repetitions=2, budget=10.0,
                            evict=lambda: log.append("evict"))
    assert log == ["evict", "a", "evict", "b", "evict", "b", "evict", "a"]
    assert [len(s.samples) for s in subjects] == [2, 2]


def test_interrupted_timing_keeps_only_rounds_every_subject_finished():
    # calls 1-3 size the samples; 4-6 are round one; the 8th call is interrupted
    subjects = fake_subjects("abc", fail_at=8)
    with pytest.raises(KeyboardInterrupt):
        timing.time_interleaved(subjects, repetitions=5, budget=0.0)
    assert [len(s.samples) for s in subjects] == [1, 1, 1]


def test_subjects_that_disagree_are_not_timed():
    subjects = fake_subjects("ab")
    subjects.append(Subject("wrong", lambda: b"other"))
    with pytest.raises(RuntimeError, match="disagree"):
        timing.check_same_tags(subjects)


def test_cache_evictor_is_larger_than_the_last_level_cache():
    evictor = timing.CacheEvictor()
    assert evictor.size >= 64 << 20
    assert evictor.size >= 2 * machine.last_level_cache_bytes()
    evictor()  # reads it all; must not fail
    assert timing.CacheEvictor(size=4096).size == 4096


def test_spreads_of_a_row():
    samples = [1.0, 1.1, 1.2, 1.3, 1.4]
    assert timing.spread(samples) == pytest.approx(0.4 / 1.2)
    assert timing.interquartile(samples) == pytest.approx(0.2 / 1.2)
    assert timing.interquartile([1.0, 1.0, 1.0, 1.0, 9.0]) == 0   # one outlier: no effect
    assert Subject("x", lambda: b"", [2.0, 2.0]).spread == 0


# ---- progress --------------------------------------------------------------------------------


def test_progress_bar_waits_draws_a_count_and_clears():
    now = [0.0]
    stream = io.StringIO()
    progress = Progress(stream, delay=1.0, width=10, clock=lambda: now[0], columns=80)
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


def test_core_clock_is_a_clock_any_x86_64_core_can_run_at():
    # Timed with `add $1` chains, a core whose renamer folds immediate adds read several times
    # its real clock.  No x86-64 core runs at 7 GHz, and the fastest of 30 short runs is not one
    # a busy machine slowed down 10-fold.
    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the clock's bounds are those of x86-64 cores")
    hz = timing.core_clock_hz()
    assert 0.4e9 < hz < 7e9, f"{hz / 1e9:.2f} GHz"
