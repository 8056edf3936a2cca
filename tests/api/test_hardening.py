"""Hostile input, concurrency and leaks: limits on the costs a hash string may ask for, many
threads hashing at once with every backend and allocator, and memory that stays flat.

The leak workload itself is in tools/leak_workload.py (the ``leaks`` tox env runs it under valgrind;
the RSS test below runs it in a subprocess).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading

import argonishche
import pytest
from argonishche import _record
from argonishche import (
    InvalidHashError,
    LimitExceededError,
    Limits,
    ParameterError,
    ParameterTypeError,
    PasswordHasher,
    VerifyMismatchError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
)
from support import (
    BUILTIN_NAMES,
    TOOLS,
    b64,
    encoded_with,
    load_tool,
    run_python,
    usable_backend_names,
)

valgrind_findings = load_tool("leak_workload").valgrind_findings  # the leaks env's report


# ---- Limits ---------------------------------------------------------------------------------


def test_default_limits_are_the_documented_ones_and_frozen():
    limits = Limits()
    assert tuple(_record.asdict(limits).values()) == (4 * 2**20, 64, 64, 4096, 4096, 8 * 2**20)
    with pytest.raises(_record.FrozenRecordError):
        limits.max_memory_cost = 1
    assert tuple(_record.asdict(Limits.none()).values()) == (None,) * 6
    assert PasswordHasher().limits == Limits()


# (m KiB, t, p): RFC 9106 section 4's two recommended profiles, argon2-cffi's and libsodium's
# presets, Django's default, OWASP's cheat-sheet options: all must verify under the default
# limits (t x m goes up to 4194304 KiB-passes, libsodium's SENSITIVE presets).
PUBLISHED_PROFILES = {
    "rfc9106-first-2GiB": (2 * 2**20, 1, 4),
    "rfc9106-second-64MiB": (64 * 2**10, 3, 4),
    "argon2-cffi-low-memory": (64 * 2**10, 3, 4),
    "argon2-cffi-25.1-PasswordHasher()": (65536, 3, 4),
    "django-Argon2PasswordHasher": (102400, 2, 8),
    "libsodium-argon2id-sensitive": (2**20, 4, 1),
    "libsodium-argon2i-sensitive": (2**19, 8, 1),
    "owasp-46MiB": (46 * 2**10, 1, 1),
    "owasp-19MiB": (19 * 2**10, 2, 1),
    "owasp-12MiB": (12 * 2**10, 3, 1),
    "owasp-9MiB": (9 * 2**10, 4, 1),
    "owasp-7MiB": (7 * 2**10, 5, 1),
}


@pytest.mark.parametrize("profile", PUBLISHED_PROFILES.values(), ids=PUBLISHED_PROFILES.keys())
def test_published_profiles_pass_the_default_limits(profile, recorder):
    m, t, p = profile
    encoded = encoded_with(m=m, t=t, p=p, salt=os.urandom(16))
    # allocator="system": the C driver (here the recorder) allocates, so nothing is mapped
    assert argon2_verify(encoded, b"password", allocator="system") is True
    assert PasswordHasher(memory_cost=m, time_cost=t, parallelism=p,
                          allocator="system").verify(encoded, "pw")
    assert PasswordHasher(memory_cost=m, time_cost=t, parallelism=p).check_needs_rehash(
        encoded) is False
    assert [(c["memory_cost"], c["time_cost"], c["parallelism"]) for c in recorder] == [
        (m, t, p)] * 2


OVER = {  # field: (string over the default limit by one, the message's field, value, limit)
    "max_memory_cost": (encoded_with(m=4 * 2**20 + 1), "memory_cost", 4 * 2**20 + 1, 4 * 2**20),
    "max_time_cost": (encoded_with(t=65), "time_cost", 65, 64),
    "max_parallelism": (encoded_with(m=520, p=65), "parallelism", 65, 64),
    "max_hash_len": (encoded_with(tag=bytes(4097)), "hash_len", 4097, 4096),
    "max_salt_len": (encoded_with(salt=bytes(4097)), "salt_len", 4097, 4096),
}


@pytest.mark.parametrize("name", OVER)
def test_hash_over_a_default_limit_is_refused_before_any_work(name, no_work):
    encoded, field, value, limit = OVER[name]
    checks = [lambda: argon2_verify(encoded, b"password"),
              lambda: PasswordHasher().verify(encoded, b"password")]
    assert PasswordHasher().check_needs_rehash(encoded) is True  # answered, as argon2-cffi does
    for check in checks:
        with pytest.raises(LimitExceededError) as info:
            check()
        message = str(info.value)
        assert f"{field} {value}" in message
        assert f"over the limit of {limit}" in message and f"Limits.{name}" in message
        assert f"Limits({name}={value})" in message and "Limits.none()" in message  # how to raise
        # existing `except InvalidHashError` / `except ValueError` handlers still catch it
        assert isinstance(info.value, InvalidHashError) and isinstance(info.value, ValueError)


def test_the_4_tib_and_2_32_passes_hashes_are_refused_for_real():
    # No stand-ins: were the limits not applied, the first would ask for 4 TiB, the second
    # would run for ever.
    for encoded in (encoded_with(m=2**32 - 1), encoded_with(m=8, t=2**32 - 1),
                    encoded_with(m=2**32 - 1, t=2**32 - 1, p=2**24 - 1)):
        with pytest.raises(LimitExceededError):
            argon2_verify(encoded, b"password")
        with pytest.raises(LimitExceededError):
            PasswordHasher().verify(encoded.encode("ascii"), b"password")


@pytest.mark.parametrize("name", OVER)
def test_a_hash_exactly_at_a_limit_is_run(name, recorder):
    encoded, field, value, limit = OVER[name]
    at_limit = {"max_memory_cost": encoded_with(m=limit), "max_time_cost": encoded_with(t=limit),
                "max_parallelism": encoded_with(m=8 * limit, p=limit),
                "max_hash_len": encoded_with(tag=bytes(limit)),
                "max_salt_len": encoded_with(salt=bytes(limit))}[name]
    assert argon2_verify(at_limit, b"password", allocator="system") is True
    assert len(recorder) == 1


def test_raised_or_disabled_limits_let_the_hash_run(recorder):
    encoded = encoded_with(m=2**32 - 1, t=100)
    assert argon2_verify(encoded, b"pw", limits=Limits.none()) is True
    assert argon2_verify(encoded, b"pw", limits=Limits(max_memory_cost=2**32 - 1,
                                                       max_time_cost=100,
                                                       max_work=100 * (2**32 - 1))) is True
    with pytest.raises(LimitExceededError, match="time_cost 100"):
        argon2_verify(encoded, b"pw", limits=Limits(max_memory_cost=None))
    assert PasswordHasher(limits=Limits.none()).verify(encoded, b"pw") is True
    assert [c["memory_cost"] for c in recorder] == [2**32 - 1] * 3


def test_lower_limits_protect_a_service_that_knows_its_costs(no_work):
    tight = Limits(max_memory_cost=64, max_time_cost=2, max_parallelism=1, max_hash_len=32,
                   max_salt_len=16)
    ph = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1, limits=tight)
    for encoded, field in [(encoded_with(m=65), "memory_cost"), (encoded_with(t=3), "time_cost"),
                           (encoded_with(m=16, p=2), "parallelism"),
                           (encoded_with(tag=bytes(33)), "hash_len"),
                           (encoded_with(salt=bytes(17)), "salt_len")]:
        for check in (lambda e: argon2_verify(e, b"pw", limits=tight),
                      lambda e: ph.verify(e, b"pw")):
            with pytest.raises(LimitExceededError, match=f"hash has {field} "):
                check(encoded)
        assert ph.check_needs_rehash(encoded) is True


def test_within_limits_verification_is_real():
    tight = Limits(max_memory_cost=64, max_time_cost=2, max_parallelism=2, max_hash_len=32,
                   max_salt_len=16)
    ph = PasswordHasher(time_cost=2, memory_cost=64, parallelism=2, limits=tight)
    encoded = ph.hash("s3cret")
    assert ph.verify(encoded, "s3cret") is True
    assert argon2_verify(encoded, "s3cret", limits=tight) is True
    with pytest.raises(VerifyMismatchError):
        ph.verify(encoded, "s3creT")
    assert ph.check_needs_rehash(encoded) is False


def test_argon2_hash_trusts_its_caller_and_applies_no_limits():
    # Over every default limit except memory (cheap to compute): hashing works; verifying the
    # result needs the limits raised.
    kwargs = dict(time_cost=65, memory_cost=8 * 65, parallelism=65, hash_len=4097)
    encoded = argon2_hash_encoded(b"pw", bytes(4097), **kwargs)
    assert len(argon2_hash(b"pw", bytes(4097), **kwargs)) == 4097
    with pytest.raises(LimitExceededError, match="time_cost 65"):
        argon2_verify(encoded, b"pw")
    assert argon2_verify(encoded, b"pw", limits=Limits.none()) is True
    assert argonishche.hash_many([b"a"], time_cost=65, memory_cost=8, parallelism=1)[0].startswith(
        "$argon2id$v=19$m=8,t=65,p=1$")


@pytest.mark.parametrize(("kwargs", "field"), [
    (dict(memory_cost=4 * 2**20 + 1), "memory_cost"),
    (dict(time_cost=65), "time_cost"),
    (dict(parallelism=65, memory_cost=8 * 65), "parallelism"),
    (dict(hash_len=4097), "hash_len"),
    (dict(salt_len=4097), "salt_len"),
])
def test_password_hasher_parameters_must_be_within_its_limits(kwargs, field):
    with pytest.raises(ParameterError, match=f"^{field}=.* over this hasher's limit") as info:
        PasswordHasher(**kwargs)
    assert not isinstance(info.value, InvalidHashError)
    ph = PasswordHasher(**kwargs, limits=Limits.none())
    assert getattr(ph, field) == next(iter(kwargs.values()))


def test_limits_and_limits_argument_are_checked():
    with pytest.raises(ParameterError, match=r"Limits.max_time_cost must be in 1\.\."):
        Limits(max_time_cost=0)
    with pytest.raises(ParameterTypeError, match="Limits.max_memory_cost"):
        Limits(max_memory_cost="4GiB")
    with pytest.raises(ParameterTypeError, match="Limits.max_parallelism"):
        Limits(max_parallelism=True)
    with pytest.raises(ParameterTypeError, match="limits must be argonishche.Limits"):
        argon2_verify(encoded_with(), b"pw", limits={"max_memory_cost": 8})
    with pytest.raises(ParameterTypeError, match="limits must be argonishche.Limits"):
        PasswordHasher(limits=64)


def test_malformed_strings_are_still_reported_as_malformed_not_as_limits():
    # Validity is judged first: an invalid hash is an InvalidHashError but no limits error.
    for encoded in (encoded_with(m=2**32 - 1, t=0), encoded_with(m=2**32 - 1, p=0),
                    "$argon2id$v=19$m=4294967296,t=1,p=1$c29tZXNhbHQ$" + b64(bytes(32))):
        with pytest.raises(InvalidHashError) as info:
            argon2_verify(encoded, b"pw")
        assert not isinstance(info.value, LimitExceededError)


# ---- concurrency ----------------------------------------------------------------------------


KINDS = ("hash", "verify-ok", "verify-wrong", "blake2b")


def concurrent_tasks():
    """(kind, arguments) of many small jobs: every kind on every usable backend with every
    allocator (the first 16 jobs a backend, for up to 15 backends), then more of the same."""
    backends = usable_backend_names()
    tasks = []
    for i in range(240):
        backend = backends[i % len(backends)]
        kind = KINDS[(i // len(backends)) % len(KINDS)]
        allocator = BUILTIN_NAMES[(i // (len(backends) * len(KINDS))) % len(BUILTIN_NAMES)]
        costs = dict(type=("id", "i", "d")[i % 3], time_cost=1 + i % 2,
                     memory_cost=16 + 8 * (i % 5), parallelism=1 + i % 2)
        password, salt = b"password %d" % i, b"salt%06d" % i
        tasks.append((kind, dict(password=password, salt=salt, costs=costs, backend=backend,
                                 allocator=allocator, threads=1 + i % 2, data=b"d" * (i * 37))))
    return tasks


def run_task(kind, args):
    costs, backend, allocator = args["costs"], args["backend"], args["allocator"]
    if kind == "blake2b":
        return argonishche.blake2b(args["data"], digest_size=1 + len(args["data"]) % 64,
                                   key=args["salt"], backend=backend).hexdigest()
    encoded = argon2_hash_encoded(args["password"], args["salt"], backend=backend,
                                  allocator=allocator, threads=args["threads"], **costs)
    if kind == "hash":
        return encoded
    try:
        return argon2_verify(encoded, args["password"] + (b"x" if kind == "verify-wrong" else b""),
                             backend=backend, allocator=allocator, threads=args["threads"])
    except VerifyMismatchError:
        return "mismatch"


def expected_result(kind, args):
    """The single-threaded answer, from the portable backend, the system allocator and hashlib."""
    if kind == "blake2b":
        return hashlib.blake2b(args["data"], digest_size=1 + len(args["data"]) % 64,
                               key=args["salt"]).hexdigest()
    return run_task(kind, {**args, "backend": "ref", "allocator": "system", "threads": 1})


def test_many_threads_hashing_verifying_and_blake2b_at_once_give_single_threaded_results():
    tasks = concurrent_tasks()
    assert {(kind, args["backend"], args["allocator"]) for kind, args in tasks} == set(
        itertools.product(KINDS, usable_backend_names(), BUILTIN_NAMES))
    expected = [expected_result(kind, args) for kind, args in tasks]
    # The single-threaded verifies decide for real: every right password verifies, no wrong one.
    assert {(kind, result) for (kind, _), result in zip(tasks, expected, strict=True)
            if kind.startswith("verify")} == {("verify-ok", True), ("verify-wrong", "mismatch")}
    workers = 24
    barrier = threading.Barrier(workers)
    results: dict[int, object] = {}
    errors = []

    def worker(index):
        barrier.wait()  # all threads start together
        for n in range(index, len(tasks), workers):
            try:
                results[n] = run_task(*tasks[n])
            except Exception as exc:  # noqa: BLE001 - reported below with the task
                errors.append((tasks[n], exc))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert [results[n] for n in range(len(tasks))] == expected


def test_one_password_hasher_shared_by_many_threads():
    ph = PasswordHasher(time_cost=1, memory_cost=32, parallelism=2)
    outcomes = [None] * 32

    def work(i):
        encoded = ph.hash(f"pw{i}")
        ok = ph.verify(encoded, f"pw{i}")
        try:
            ph.verify(encoded, f"pw{i + 1}")
            wrong = "verified"
        except VerifyMismatchError:
            wrong = "mismatch"
        outcomes[i] = (ok, wrong, ph.check_needs_rehash(encoded), encoded)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(o[:3] == (True, "mismatch", False) for o in outcomes)
    assert len({o[3] for o in outcomes}) == 32  # fresh salts
    for i, outcome in enumerate(outcomes):  # and each verifies single-threaded afterwards
        assert argon2_verify(outcome[3], f"pw{i}") is True


# ---- leaks ----------------------------------------------------------------------------------


VALGRIND_LOG = """\
==1== 104 bytes in 1 blocks are definitely lost in loss record 106 of 277
==1==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==1==    by 0x7AEF4DB: _my_Py_InitModule (in /usr/lib/python3/_cffi_backend.so)
==1==    by 0x7AC3D06: _cffi_init (/work/main/build/argonishche._core.c:442)
==1==
==1== 1,024 bytes in 1 blocks are definitely lost in loss record 107 of 277
==1==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==1==    by 0x7AC3D06: argonishche_argon2_hash (/work/main/core/csrc/argon2.c:300)
==1==
==1== Invalid read of size 8
==1==    at 0x7AC3D06: fill_block (/work/main/backends/ref.c:80)
==1==
==1==    definitely lost: 1,128 bytes in 2 blocks
"""


def test_valgrind_report_blames_only_records_in_our_code():
    findings = valgrind_findings(VALGRIND_LOG)
    assert len(findings["others"]) == 1 and "_my_Py_InitModule" in findings["others"][0]
    assert [r.splitlines()[0] for r in findings["ours"]] == [
        "1,024 bytes in 1 blocks are definitely lost in loss record 107 of 277",
        "Invalid read of size 8"]


def test_rss_is_flat_over_thousands_of_small_hashes_and_errors():
    result = run_python(f"""
        import os, sys
        sys.path[:0] = [{str(TOOLS)!r}, {os.path.dirname(os.path.dirname(__file__))!r}]
        from leak_workload import leak_workload
        page = os.sysconf("SC_PAGE_SIZE")
        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * page
        leak_workload(5000)            # warm-up: arenas, caches, interned objects
        before = rss()
        leak_workload(5000)
        print(before, rss())
        """, timeout=600)
    assert result.returncode == 0, result.stderr
    before, after = map(int, result.stdout.split())
    # 5,000 hashes + 5,000 BLAKE2b + 10,000 errors: a leak of 256 bytes per call would show
    assert after - before < 3 * 2**20, f"RSS grew by {(after - before) / 2**20:.1f} MiB"
