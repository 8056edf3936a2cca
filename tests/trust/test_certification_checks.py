"""Certification covers what users' inputs can reach (issue 23, item 3).

- G: certification places ref at every distance from prev that a lane of the default Limits
  (4 GiB, parallelism 1: 4,194,304 blocks) allows, in one sparse mapping of that size of which
  only the blocks placed are touched.
- F: the core never passes F a run longer than ARGONISHCHE_BLAKE2B_MAX_RUN blocks, and
  certification runs F over exactly that many and one more.
- F's counter and flags: a message cannot be long enough to reach every counter, so F is called
  directly at every carry of t0 and t1, with f0 and f1 (issue 31, item 6; the cases' coverage
  and the bugs they catch are tests/trust/test_certification_blake2b.py's).

The first tests state it with ref's kernels wrapped in Python (as tests/trust/test_self_test.py
does); the last ones build real broken kernels as wheels, install them with pip and use them from
a fresh interpreter, as a user would (the machinery of tests/trust/test_bad_kernels.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import argonishche
import pytest
from argonishche import _hash_call
from argonishche._core import lib
from argonishche._trust import (
    certification_blake2b,
    certification_checks,
    kernel_table,
    self_test,
)
from test_bad_kernels import build_and_install, run_with_plugin
from test_self_test import WrappedKernels

LANE = 4 * 1024 * 1024  # blocks: 4 GiB, the default Limits' max_memory_cost, in one lane
MAX_RUN = 16384         # blocks: ARGONISHCHE_BLAKE2B_MAX_RUN


@pytest.fixture(scope="module")
def ref():
    return kernel_table.reference_table()


# ---- G: every distance the limits allow ---------------------------------------------------


def test_placements_reach_across_the_largest_lane_the_default_limits_admit():
    assert argonishche.Limits().max_memory_cost == LANE  # KiB: a block each
    assert certification_checks.largest_lane() == LANE
    behind, ahead = certification_checks.full_distances()
    # In a lane of n blocks ref lies at most n - 2 behind prev (prev is next - 1), n - 1 ahead.
    assert max(behind) == LANE - 2 and max(ahead) == LANE - 1
    for distances, farthest in ((behind, LANE - 2), (ahead, LANE - 1)):
        assert set(range(2, 1101)) <= set(distances)
        for k in range(11, 23):
            assert {d for d in (2**k - 1, 2**k, 2**k + 1) if d <= farthest} <= set(distances)
    placements = certification_checks.full_placements()
    # One buffer of the lane's size: no index beyond it.
    assert max(max(p[1:]) for p in placements) == LANE - 1
    assert ("4194302 blocks behind prev", LANE - 2, 0, LANE - 1) in placements
    assert ("4194303 blocks ahead of prev", 0, LANE - 1, 1) in placements


@pytest.mark.parametrize("wrong_beyond", [70_000, 1_000_000, LANE - 3])
def test_a_g_wrong_only_for_far_references_fails_certification(ref, wrong_beyond):
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: ref_at < -wrong_beyond)
    assert self_test.run(wrapped.table) == []  # the quick check cannot reach that far
    found = self_test.placement_failures(wrapped.table, certification_checks.full_placements())
    assert len(found) == 1 and "blocks behind prev" in found[0], found
    first = int(re.search(r"reference (\d+) blocks behind prev", found[0])[1])
    assert wrong_beyond < first <= 2 * wrong_beyond + 1


def test_a_g_wrong_only_far_ahead_fails_certification(ref):
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: ref_at > 3_000_000)
    found = self_test.placement_failures(wrapped.table, certification_checks.full_placements())
    assert found == ["Argon2 G (xor_into_next=0 and 1) with the reference 4194303 blocks ahead of "
                     "prev, unlike the same blocks side by side"]


# The full placement check in a fresh process, with what it cost: a 4 GiB mapping of which only
# the pages of the blocks placed may be touched.
PLACEMENT_COST = """
    import json, resource, time
    from argonishche._trust import certification
    from argonishche._trust import certification_checks
    from argonishche._trust import kernel_table
    from argonishche._trust import self_test
    table, placements = kernel_table.reference_table(), certification_checks.full_placements()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    found = self_test.placement_failures(table, placements)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(found=found, seconds=seconds, grown_kib=after - before)))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
def test_the_lane_sized_check_touches_a_few_mib_and_takes_little_time():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(PLACEMENT_COST)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["found"] == []
    # ~2,300 placements: 1,100 blocks near each end (2.2 MiB) and a few pages per far one.
    assert out["grown_kib"] < 16 * 1024, out
    assert out["seconds"] < 5, out


def _vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping holding *address*, from /proc/self/smaps."""
    flags, inside = None, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and ":" not in head:  # a mapping's first line: start-end perms ...
                start, end = (int(x, 16) for x in head.split("-"))
                inside = start <= address < end
            elif inside and head == "VmFlags:":
                flags = line.split()[1:]
    assert flags is not None, f"no mapping holds {address:#x}"
    return flags


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine not in ("x86_64", "aarch64"),
                    reason="smaps' VmFlags are Linux's; MAP_NORESERVE's value is known for "
                           "x86_64 and aarch64 (other architectures may map without it)")
def test_the_lane_sized_buffer_reserves_no_commit_charge():
    # Without MAP_NORESERVE Linux charges the whole 4 GiB to the commit limit while it is mapped
    # (Committed_AS), and its heuristic refuses it outright on a machine with less RAM and swap.
    from argonishche._core import ffi

    with self_test.sparse_area(LANE * 1024) as area:
        pointer = ffi.from_buffer(area)
        try:
            flags = _vm_flags(int(ffi.cast("uintptr_t", pointer)))
        finally:
            ffi.release(pointer)
    assert "nr" in flags, flags           # swap space not reserved: no commit charge
    assert "sh" not in flags, flags       # private, not a shared memory object
    if (Path("/sys/kernel/mm/transparent_hugepage/enabled")).exists():
        assert "nh" in flags, flags       # no 2 MiB huge page for each block touched


def test_an_unmappable_buffer_is_a_check_that_could_not_run(ref, monkeypatch):
    def refuse(size):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(self_test, "sparse_area", refuse)
    # The quick check: a failure line (the backend is not used).
    assert self_test.placement_failures(ref)[0].startswith(
        "Argon2 G placement check not run: cannot map 8 MiB")
    # Certification: MemoryError, which certify() reports as not run and does not remember.
    with pytest.raises(MemoryError, match="cannot map 4096 MiB"):
        certification_checks.failures(ref, ref)


# ---- F: never a longer run than certification checked -------------------------------------


def test_the_longest_run_is_the_headers_and_certification_checks_it_and_one_more():
    assert lib.ARGONISHCHE_BLAKE2B_MAX_RUN == MAX_RUN == certification_blake2b.BLAKE2B_MAX_RUN
    assert {MAX_RUN, MAX_RUN + 1} <= set(certification_blake2b.BLAKE2B_RUNS)
    header = (Path(argonishche.__file__).parent / "include" / "argonishche_kernel.h").read_text()
    assert re.search(rf"#define ARGONISHCHE_BLAKE2B_MAX_RUN {MAX_RUN}\b", header)
    assert "F is never called with more than ARGONISHCHE_BLAKE2B_MAX_RUN blocks" in header
    assert f"F is never called with more than {MAX_RUN} blocks" in " ".join(
        certification_checks.__doc__.split())
    plugins = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
    assert f"F is never called with more than {MAX_RUN:,} blocks" in " ".join(
        plugins.read_text().split())  # wherever the paragraph's lines break


def _runs_seen(ref, message: bytes, pieces: int = 1) -> list[int]:
    """The nblocks of every F call hashing *message* in *pieces* updates through the core."""
    seen: list[int] = []

    def record(nblocks: int) -> bool:
        seen.append(nblocks)
        return False  # never wrong: only watched

    wrapped = WrappedKernels(ref, f_wrong=record)
    state = _hash_call.new_blake2b_state(wrapped.table, 64, b"", b"", b"")
    step = -(-len(message) // pieces)
    for start in range(0, len(message), step):
        _hash_call.blake2b_update(state, message[start:start + step])
    assert _hash_call.blake2b_digest(state) == hashlib.blake2b(message).digest()
    return seen


@pytest.mark.parametrize("blocks", [MAX_RUN, MAX_RUN + 1, 2 * MAX_RUN + 5, 4 * MAX_RUN])
def test_the_core_splits_a_longer_run(ref, blocks):
    # One block from the buffer, then the run, then the final block (see self_test.run_message).
    runs = _runs_seen(ref, bytes(128 * (blocks + 1) + 1))
    assert max(runs) == MAX_RUN and sum(runs) == blocks + 2
    assert runs[1:-1] == [MAX_RUN] * (blocks // MAX_RUN) + [blocks % MAX_RUN] * (
        blocks % MAX_RUN > 0)


def test_an_f_wrong_only_for_longer_runs_is_never_reached(ref):
    wrapped = WrappedKernels(ref, f_wrong=lambda nblocks: nblocks > MAX_RUN)
    assert certification_blake2b.blake2b_failures(wrapped.table) == []
    message = bytes(range(256)) * (64 * 1024 + 7)  # 16 MiB and a bit, in one update
    state = _hash_call.new_blake2b_state(wrapped.table, 64, b"", b"", b"")
    _hash_call.blake2b_update(state, message)
    assert _hash_call.blake2b_digest(state) == hashlib.blake2b(message).digest()


def test_an_f_wrong_at_the_longest_run_fails_certification(ref):
    wrapped = WrappedKernels(ref, f_wrong=lambda nblocks: nblocks == MAX_RUN)
    assert certification_blake2b.blake2b_failures(wrapped.table)[0] == (
        f"BLAKE2b F over a run of {MAX_RUN} blocks (and 2 more of "
        f"{len(certification_blake2b.BLAKE2B_RUNS)} run lengths) in one call")


def test_certification_runs_the_counter_checks(ref, monkeypatch):

    called = []
    monkeypatch.setattr(certification_blake2b, "counter_failures",
                        lambda table, reference: called.append(reference) or ["counter"])
    monkeypatch.setattr(certification_blake2b, "blake2b_failures", lambda table: [])
    monkeypatch.setattr(certification_checks, "argon2_failures", lambda table, reference: [])
    monkeypatch.setattr(self_test, "placement_failures", lambda *args, **kwargs: [])
    assert certification_checks.failures(ref, ref) == ["counter"] and called == [ref]
    # Every carry out of every bit of both words, 4 MiB's and t0's wrap into t1 among them.
    carries = {case.carry for case in certification_blake2b.counter_cases()}
    assert {2**bit for bit in range(7, 128)} <= carries


# ---- real wheels, installed with pip, in a fresh interpreter -------------------------------

BUGS = {
    "G wrong for ref > 70,000 blocks behind prev": "#define BAD_G_BEHIND 70000",
    "F wrong for runs of >= 32,000 blocks": "#define BAD_F_RUN_FROM 32000",
}
G_70000, F_32000 = BUGS

# What a user sees: the bad backend's state and reason, what is selected, and whether hashes
# are right: Argon2 at m = 128 MiB (references up to 131,070 blocks back) against argon2-cffi,
# BLAKE2b of 4 MiB in one update (a run of 32,767 blocks) against hashlib.
USER_VIEW = """
    import hashlib, json
    import argon2
    import argonishche

    bad = {b.name: b for b in argonishche.backends()}["bad"]
    password, salt = b"correct horse", b"somesalt"
    expected = argon2.low_level.hash_secret_raw(password, salt, 1, 131072, 1, 32,
                                                argon2.low_level.Type.ID, 0x13)
    message = bytes(range(256)) * 16384
    one_update = argonishche.blake2b()
    one_update.update(message)
    print(json.dumps(dict(
        state=bad.state, reason=bad.reason,
        selected=[argonishche.selected_backend(kind) for kind in ("argon2", "blake2b")],
        argon2_right=argonishche.argon2_hash(password, salt, type="id", time_cost=1,
                                             memory_cost=131072, parallelism=1,
                                             hash_len=32) == expected,
        blake2b_right=[argonishche.blake2b(message).digest() == hashlib.blake2b(message).digest(),
                       one_update.hexdigest() == hashlib.blake2b(message).hexdigest()])))
"""


@pytest.fixture(scope="module")
def user_view(tmp_path_factory):
    pytest.importorskip("argon2", reason="argon2-cffi gives the right hashes to compare with")
    sites = build_and_install(BUGS, tmp_path_factory.mktemp("bad_plugins"))
    # Selected by priority, as a kernel that measures faster than the built-ins would be.
    return {bug: run_with_plugin(site, USER_VIEW, tmp_path_factory.mktemp("cache"),
                                 ARGONISHCHE_SELECT="priority")
            for bug, site in sites.items()}


def test_an_installed_g_wrong_beyond_70000_blocks_fails_certification(user_view):
    out = user_view[G_70000]
    assert out["state"] == "certification-failed", out
    assert ("Argon2 G (xor_into_next=0 and 1) with the reference 131071 blocks behind prev"
            in out["reason"]), out["reason"]
    assert out["selected"][0] != "bad" and out["argon2_right"], out


def test_an_installed_f_wrong_for_long_runs_hashes_4_mib_right(user_view):
    out = user_view[F_32000]
    # Certified (no run it is given is that long) and selected: the core splits 4 MiB's run.
    assert out["state"] == "selected" and out["selected"] == ["bad", "bad"], out
    assert out["blake2b_right"] == [True, True], out

