"""``hash_many`` and ``PasswordHasher.hash_many``: many passwords hashed on a pool of workers,
in order, each with a fresh salt, with at most one hash's memory per worker."""

from __future__ import annotations

import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

import argonishche
from argonishche import (
    BackendError,
    ParameterError,
    PasswordHasher,
    VerifyMismatchError,
    argon2_verify,
)
from argonishche._argon2 import params_of

from support import run_python

MANY_COSTS = dict(time_cost=1, memory_cost=64, parallelism=2)
PASSWORDS = ["alpha", b"beta", "gämma", b"", "", "pässwörd ☃", b"\x00\xff", "x" * 100, "9",
             b"10"]


def check_hashes(passwords, encoded, costs=MANY_COSTS, salt_len=16):
    argon2 = pytest.importorskip("argon2")
    assert len(encoded) == len(passwords)
    prefix = "$argon2id$v=19$m={memory_cost},t={time_cost},p={parallelism}$".format(**costs)
    salts = set()
    for password, phc in zip(passwords, encoded, strict=True):
        assert phc.startswith(prefix)
        assert argon2_verify(phc, password) is True
        assert argon2.PasswordHasher().verify(phc, password) is True
        salt = params_of(phc)[1]
        assert len(salt) == salt_len
        salts.add(salt)
    assert len(salts) == len(passwords)  # a fresh salt each


def test_hash_many_results_in_order_and_verifiable():
    encoded = argonishche.hash_many(PASSWORDS, workers=3, chunk_size=2, **MANY_COSTS)
    check_hashes(PASSWORDS, encoded)
    with pytest.raises(VerifyMismatchError):  # each result belongs to its own password
        argon2_verify(encoded[0], PASSWORDS[1])


def test_hash_many_accepts_any_iterable_and_empty_input():
    progress = []
    assert argonishche.hash_many([], progress=lambda *a: progress.append(a)) == []
    assert argonishche.hash_many(iter(()), **MANY_COSTS) == []
    assert progress == []
    generated = (f"pw{i}" for i in range(5))
    check_hashes([f"pw{i}" for i in range(5)],
                 argonishche.hash_many(generated, workers=2, **MANY_COSTS))


def test_hash_many_progress_counts_up_to_the_total():
    calls = []
    lock = threading.Lock()

    def progress(done, total):
        with lock:
            calls.append((done, total))

    argonishche.hash_many([f"pw{i}" for i in range(11)], workers=2, chunk_size=3,
                          progress=progress, **MANY_COSTS)
    dones = [done for done, _ in calls]
    assert {total for _, total in calls} == {11}
    assert dones == sorted(set(dones)) and dones[-1] == 11
    assert len(calls) == 4  # one per chunk: 3 + 3 + 3 + 2


def test_hash_many_on_a_thread_pool_leaves_the_pool_running():
    with ThreadPoolExecutor(max_workers=2) as pool:
        encoded = argonishche.hash_many(PASSWORDS, executor=pool, **MANY_COSTS)
        assert pool.submit(len, "still open").result() == 10
    check_hashes(PASSWORDS, encoded)


def test_hash_many_on_a_process_pool():
    with ProcessPoolExecutor(2) as pool:
        encoded = argonishche.hash_many(PASSWORDS[:6], executor=pool, chunk_size=2,
                                        **MANY_COSTS)
    check_hashes(PASSWORDS[:6], encoded)


@pytest.mark.parametrize("option", [dict(workers=0), dict(chunk_size=0), dict(workers=-1),
                                    dict(chunk_size=-3), dict(salt_len=7)])
def test_hash_many_refuses_bad_options(option):
    with pytest.raises(ParameterError, match=next(iter(option))):
        argonishche.hash_many(["a", "b"], **MANY_COSTS, **option)


def test_hash_many_chunk_size_larger_than_the_input_is_one_chunk():
    check_hashes(["a", "b"], argonishche.hash_many(["a", "b"], chunk_size=8, **MANY_COSTS))


def test_hash_many_passes_allocator_and_wipe_through():
    with pytest.raises(BackendError, match="'nosuch'"):
        argonishche.hash_many(["a"], allocator="nosuch", **MANY_COSTS)
    with pytest.raises(ParameterError, match="'system' allocates in C"):
        argonishche.hash_many(["a"], allocator="system", wipe=lambda view: None, **MANY_COSTS)


def test_password_hasher_hash_many_uses_the_hasher_parameters(acquire_log):
    hasher = PasswordHasher(time_cost=1, memory_cost=48, parallelism=3, hash_len=20,
                            salt_len=12, type="i", allocator="hugepages")
    encoded = hasher.hash_many(PASSWORDS, workers=2)
    assert len(encoded) == len(PASSWORDS)
    for password, phc in zip(PASSWORDS, encoded, strict=True):
        assert phc.startswith("$argon2i$v=19$m=48,t=1,p=3$")
        assert hasher.check_needs_rehash(phc) is False
        assert hasher.verify(phc, password) is True
        params, salt, tag = params_of(phc)
        assert len(salt) == 12 and len(tag) == 20
    assert acquire_log == ["hugepages"] * (2 * len(PASSWORDS))


def test_hash_many_peak_memory_is_one_hash_per_worker():
    result = run_python("""
        import resource
        import argonishche
        costs = dict(time_cost=1, memory_cost=4096, parallelism=1)
        argonishche.argon2_hash(b"warm-up", b"somesalt", **costs)
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        encoded = argonishche.hash_many([f"pw{i}" for i in range(300)], workers=2, **costs)
        assert len(encoded) == 300 and len(set(encoded)) == 300
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline)
        """)
    assert result.returncode == 0, result.stderr
    growth_kib = int(result.stdout)
    assert growth_kib < 3 * (2 * 4096) + 16 * 1024
