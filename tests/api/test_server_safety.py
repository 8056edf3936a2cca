"""Threads, fork() and signals: a right tag or an exception, never a crash, a hang or a wrong tag.

Each test runs one program of tests/api/safety_scripts.py in a fresh interpreter with a timeout,
at a size that takes seconds; ``tox -e stress`` runs the same programs many times larger.
"""

from __future__ import annotations

import os
import resource
import threading

import argonishche
import pytest
from safety_scripts import run_script


def fields(line: str) -> dict[str, str]:
    words = line.split()
    return dict(zip(words[::2], words[1::2], strict=True))


def test_trim_racing_hashes_never_takes_memory_a_hash_uses():
    assert fields(run_script("trim_race")) == {"wrong": "0", "errors": "0"}


@pytest.mark.parametrize("attempt", range(3))
def test_fork_while_another_thread_starts_the_registry(attempt):
    assert run_script("fork_during_startup") == "child ok"


def test_fork_while_another_thread_imports_a_lazy_name():
    assert run_script("fork_during_lazy_import") == "ok 10"


def test_fork_while_another_thread_trims():
    assert run_script("fork_during_trim") == "ok 5"


def test_fork_while_another_thread_hashes():
    assert run_script("fork_mid_hash") == "ok 5"


def test_fork_drops_locked_memory_the_child_did_not_inherit_the_lock_of():
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    if os.geteuid() != 0 and soft != resource.RLIM_INFINITY and soft < 2**20:
        pytest.skip("RLIMIT_MEMLOCK below 1 MiB and not root: nothing can be locked here")
    assert run_script("fork_locked") == "child ok"


def test_signal_handler_exceptions_never_leave_memory_taken():
    assert fields(run_script("signals")) == {"wrong": "0", "trimmed_left": "0",
                                             "reused": "True", "interrupted": "True"}


def test_memory_of_threads_not_started_by_threading_goes_back_after_the_idle_time():
    out = fields(run_script("thread_churn"))
    assert out["cached"] == "0"
    assert int(out["grew_mib"]) < 64  # ten 16 MiB hashes ran; none of it is kept


def test_a_burst_of_costly_verifications_is_bounded_and_not_kept():
    out = fields(run_script("verify_burst"))
    assert out["verified"] == "True" and out["kept_mib"] == "0"
    assert int(out["high_water_mib"]) <= 600  # the budget: two of the four at once
    assert int(out["grew_mib"]) < 128  # four 256 MiB hashes ran on threads still alive


def test_a_salt_changed_mid_hash_never_gives_a_string_that_does_not_verify():
    assert run_script("salt_mutation") == "unverifiable 0"


def test_one_memory_buffer_shared_by_two_hashes_never_gives_wrong_tags():
    assert fields(run_script("shared_memory"))["wrong"] == "0"


def test_memory_in_use_by_a_running_hash_is_refused():
    costs = dict(time_cost=1, memory_cost=131072, parallelism=1)
    buffer = bytearray(argonishche.memory_size(costs["memory_cost"]))
    def first_hash(started, results):
        started.set()
        results.append(argonishche.argon2_hash(b"a", b"somesalt", memory=buffer, **costs))

    for _ in range(5):  # the first hash must still be running: it outlasts the 20 ms we wait
        started, results = threading.Event(), []
        first = threading.Thread(target=first_hash, args=(started, results))
        first.start()
        started.wait(10)
        threading.Event().wait(0.02)
        try:
            argonishche.argon2_hash(b"b", b"somesalt", memory=buffer, **costs)
            refused = False
        except argonishche.ParameterError as exc:
            assert "memory is in use by another hash running now" in str(exc)
            refused = True
        first.join(60)
        assert results == [argonishche.argon2_hash(b"a", b"somesalt", allocator="system",
                                                   **costs)]
        if refused:
            return
    pytest.fail("the second hash never ran while the first was running")
