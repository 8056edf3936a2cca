"""Differential tests: every backend against argon2-cffi (phc-winner-argon2) and hashlib.blake2b.

The inputs are seeded-random, so every run (and every machine) checks the same cases, and a
failure's test id reproduces it.  ``ARGONISHCHE_TEST_CASES`` shrinks (or grows) the random sets,
e.g. to 10 under CPU emulation; the systematic cases below it are always run.
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import threading
from typing import NamedTuple

import argonishche
import pytest

argon2 = pytest.importorskip("argon2")
from argon2 import low_level  # noqa: E402 - after importorskip on purpose

#: Size of each seeded-random set (Argon2 cases, BLAKE2b data lengths, split patterns).
CASES = int(os.environ.get("ARGONISHCHE_TEST_CASES", "60"))

MAX_MEMORY_COST = 256  # KiB per Argon2 case, so the file stays fast under emulation

TYPES = ("d", "i", "id")
VERSIONS = (0x10, 0x13)
HASH_LENS = (4, 16, 31, 32, 33, 64, 65, 100, 513)
MEMORY_KINDS = ("8p", "8p+1", "4pk+3")
REFERENCE_TYPES = {"d": low_level.Type.D, "i": low_level.Type.I, "id": low_level.Type.ID}


class Argon2Case(NamedTuple):
    type: str
    version: int
    time_cost: int
    memory_cost: int
    parallelism: int
    hash_len: int
    password: bytes
    salt: bytes
    secret: bytes
    associated_data: bytes
    threads: int

    def kwargs(self) -> dict:
        return dict(type=self.type, version=self.version, time_cost=self.time_cost,
                    memory_cost=self.memory_cost, parallelism=self.parallelism,
                    hash_len=self.hash_len, secret=self.secret,
                    associated_data=self.associated_data)


def _memory_cost(kind: str, p: int, rng: random.Random) -> int:
    if kind == "8p":
        return 8 * p  # the minimum: exactly two blocks per segment
    if kind == "8p+1":
        return 8 * p + 1  # one KiB the rounding to 4p must drop
    k = rng.randint(2, (MAX_MEMORY_COST - 3) // (4 * p))
    return 4 * p * k + 3  # not a multiple of 4p: rounded down to 4pk


def _random_bytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def _argon2_case(i: int) -> Argon2Case:
    """Case *i*: the discrete parameters cycle so that any 9 consecutive cases cover every
    hash length, 8 every parallelism, 6 every type/version pair; the rest is seeded-random."""
    rng = random.Random(f"argon2-cross-check-{i}")
    p = 1 + i % 8
    kind = MEMORY_KINDS[(i // 2) % len(MEMORY_KINDS)]
    return Argon2Case(
        type=TYPES[i % 3],
        version=VERSIONS[(i // 3) % 2],
        time_cost=1 + (i // 4) % 4,
        memory_cost=_memory_cost(kind, p, rng),
        parallelism=p,
        hash_len=HASH_LENS[i % len(HASH_LENS)],
        password=_random_bytes(rng, 0 if i % 7 == 0 else rng.randint(0, 200)),
        salt=_random_bytes(rng, rng.randint(8, 64)),
        secret=_random_bytes(rng, 0 if i % 5 == 0 else rng.randint(0, 64)),
        associated_data=_random_bytes(rng, 0 if i % 5 == 1 else rng.randint(0, 64)),
        threads=rng.randint(1, p),
    )


ARGON2_CASES = [_argon2_case(i) for i in range(CASES)]


def _case_id(case: Argon2Case) -> str:
    return (f"{case.type}-v{case.version:x}-t{case.time_cost}-m{case.memory_cost}"
            f"-p{case.parallelism}-T{case.hash_len}-pw{len(case.password)}-s{len(case.salt)}"
            f"-k{len(case.secret)}-x{len(case.associated_data)}-th{case.threads}")


def _bytes_arg(data: bytes):
    # NULL with length 0 is what the reference expects for an absent input.
    return low_level.ffi.new("uint8_t[]", data) if data else low_level.ffi.NULL


@functools.lru_cache(maxsize=None)
def reference_tag(case: Argon2Case) -> bytes:
    """The tag phc-winner-argon2 (through argon2-cffi's raw context API) computes."""
    ffi = low_level.ffi
    out = ffi.new("uint8_t[]", case.hash_len)
    keep_alive = [_bytes_arg(b) for b in (case.password, case.salt, case.secret,
                                          case.associated_data)]
    pwd, salt, secret, ad = keep_alive
    ctx = ffi.new("argon2_context *", dict(
        out=out, outlen=case.hash_len,
        pwd=pwd, pwdlen=len(case.password),
        salt=salt, saltlen=len(case.salt),
        secret=secret, secretlen=len(case.secret),
        ad=ad, adlen=len(case.associated_data),
        t_cost=case.time_cost, m_cost=case.memory_cost,
        lanes=case.parallelism, threads=case.parallelism, version=case.version,
        allocate_cbk=ffi.NULL, free_cbk=ffi.NULL, flags=low_level.lib.ARGON2_DEFAULT_FLAGS))
    status = low_level.core(ctx, REFERENCE_TYPES[case.type].value)
    assert status == low_level.lib.ARGON2_OK, low_level.error_to_str(status)
    return bytes(ffi.buffer(out, case.hash_len))


def test_reference_harness_reproduces_rfc9106():
    # The harness itself must be right, or every comparison below is meaningless.
    case = Argon2Case("id", 0x13, 3, 32, 4, 32, b"\x01" * 32, b"\x02" * 16, b"\x03" * 8,
                      b"\x04" * 12, 4)
    assert reference_tag(case).hex() == (
        "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")


@pytest.mark.parametrize("case", ARGON2_CASES, ids=_case_id)
def test_argon2_matches_reference(case, backend):
    ours = argonishche.argon2_hash(case.password, case.salt, threads=case.threads,
                                   backend=backend, **case.kwargs())
    assert len(ours) == case.hash_len
    assert ours == reference_tag(case), f"{backend} differs from phc-winner-argon2"


# Systematic cases, run whatever ARGONISHCHE_TEST_CASES says: every type x version at each kind
# of memory size (8p, 8p+1, 4pk+3), with secret and associated data; every hash length, with
# t = 1..4 and p = 1..8 going round.
SYSTEMATIC_CASES = [
    Argon2Case(t, v, 2, m, 2, 32, b"password", b"somesalt", b"k" * 8, b"ad" * 3, 2)
    for t in TYPES for v in VERSIONS for m in (16, 17, 4 * 2 * 5 + 3)
] + [
    Argon2Case(TYPES[i % 3], VERSIONS[i % 2], 1 + i % 4, 8 * (1 + i % 8) + 3, 1 + i % 8, n,
               bytes(range(i)), b"salt%04d" % i, b"", b"x" * i, 1 + i % 8)
    for i, n in enumerate(HASH_LENS)
]


@pytest.mark.parametrize("case", SYSTEMATIC_CASES, ids=_case_id)
def test_argon2_systematic_matches_reference(case, backend):
    ours = argonishche.argon2_hash(case.password, case.salt, threads=case.threads,
                                   backend=backend, **case.kwargs())
    assert ours == reference_tag(case)


def test_always_run_cases_cover_every_parameter_value():
    # Whatever CASES is, the systematic cases (plus the thread-count test's p = 1..8) reach
    # every value the brief of this file names; the random cases add combinations.
    cases = SYSTEMATIC_CASES
    assert {(c.type, c.version) for c in cases} == {(t, v) for t in TYPES for v in VERSIONS}
    assert {c.time_cost for c in cases} == {1, 2, 3, 4}
    assert {c.parallelism for c in cases} == set(range(1, 9))
    assert {c.hash_len for c in cases} == set(HASH_LENS)
    assert {c.memory_cost - 8 * c.parallelism for c in cases} >= {0, 1}
    assert any(c.memory_cost % (4 * c.parallelism) == 3 and c.memory_cost > 8 * c.parallelism + 3
               for c in cases)
    assert all(c.memory_cost <= MAX_MEMORY_COST for c in cases + ARGON2_CASES)
    assert any(c.password == b"" for c in cases)
    assert any(c.secret == b"" for c in cases) and any(c.secret for c in cases)
    assert any(c.associated_data == b"" for c in cases) and any(c.associated_data for c in cases)
    assert len(ARGON2_CASES) == CASES


@pytest.mark.parametrize("parallelism", range(1, 9))
def test_argon2_every_thread_count_matches_reference(parallelism, backend):
    rng = random.Random(f"threads-{parallelism}")
    case = Argon2Case("id", 0x13, 2, 4 * parallelism * 3 + 3, parallelism, 32,
                      _random_bytes(rng, 20), _random_bytes(rng, 16), _random_bytes(rng, 5),
                      _random_bytes(rng, 7), 1)
    expected = reference_tag(case)
    for threads in range(1, parallelism + 1):
        tag = argonishche.argon2_hash(case.password, case.salt, threads=threads,
                                      backend=backend, **case.kwargs())
        assert tag == expected, f"threads={threads} of p={parallelism}"


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize(("parallelism", "threads"), [(2, 1), (3, 1), (4, 2), (5, 2), (8, 3)])
def test_argon2_lanes_filled_in_turn_match_reference(kind, parallelism, threads, backend):
    # A thread with two lanes of a slice fills them a block of each in turn, loading each next
    # reference early (argon2.c, fill_segment_pair).  Segments of 260 blocks cross two address
    # blocks of data-independent addressing (128 references each), where the early load must
    # wait for the next address block; the cases above have segments of at most 64 blocks.
    rng = random.Random(f"pairs-{kind}-{parallelism}")
    case = Argon2Case(kind, 0x13, 2, 4 * parallelism * 260 + 3, parallelism, 32,
                      _random_bytes(rng, 20), _random_bytes(rng, 16), b"", b"", threads)
    tag = argonishche.argon2_hash(case.password, case.salt, threads=threads, backend=backend,
                                  **case.kwargs())
    assert tag == reference_tag(case), f"p={parallelism} on {threads} thread(s)"


# ---- BLAKE2b against hashlib ----------------------------------------------------------------


def _hashlib(data=b"", **params):
    return hashlib.blake2b(data, **params)


def _ours(backend, data=b"", **params):
    return argonishche.blake2b(data, backend=backend, **params)


BOUNDARY_LENGTHS = (0, 1, 63, 64, 65, 127, 128, 129, 255, 256, 257, 383, 384, 385, 1023, 1024,
                    1025, 2000)
RANDOM_LENGTHS = [random.Random(f"blake2b-length-{i}").randint(0, 2000) for i in range(CASES)]


@pytest.mark.parametrize("length", sorted(set(BOUNDARY_LENGTHS + tuple(RANDOM_LENGTHS))))
def test_blake2b_data_lengths(length, backend):
    rng = random.Random(f"blake2b-data-{length}")
    data = _random_bytes(rng, length)
    assert _ours(backend, data).digest() == _hashlib(data).digest()
    key = _random_bytes(rng, 32)
    assert (_ours(backend, data, key=key, digest_size=32).digest()
            == _hashlib(data, key=key, digest_size=32).digest())


def test_blake2b_one_mebibyte(backend):
    data = random.Random("blake2b-1MiB").randbytes(2**20)
    assert _ours(backend, data).digest() == _hashlib(data).digest()
    h = _ours(backend)
    for start in range(0, len(data), 100_000):  # chunks that are not a multiple of 128
        h.update(data[start:start + 100_000])
    assert h.digest() == _hashlib(data).digest()


@pytest.mark.parametrize("digest_size", range(1, 65))
def test_blake2b_every_digest_size(digest_size, backend):
    rng = random.Random(f"blake2b-digest-size-{digest_size}")
    data = _random_bytes(rng, rng.randint(0, 300))
    ours = _ours(backend, data, digest_size=digest_size)
    assert ours.digest_size == digest_size
    assert ours.digest() == _hashlib(data, digest_size=digest_size).digest()
    key = _random_bytes(rng, rng.randint(1, 64))
    assert (_ours(backend, data, digest_size=digest_size, key=key).digest()
            == _hashlib(data, digest_size=digest_size, key=key).digest())


@pytest.mark.parametrize("key_len", range(0, 65))
def test_blake2b_every_key_length(key_len, backend):
    rng = random.Random(f"blake2b-key-{key_len}")
    key = _random_bytes(rng, key_len)
    for data in (b"", _random_bytes(rng, rng.randint(1, 400))):
        assert _ours(backend, data, key=key).digest() == _hashlib(data, key=key).digest()


@pytest.mark.parametrize("length", range(0, 17))
def test_blake2b_every_salt_and_person_length(length, backend):
    rng = random.Random(f"blake2b-salt-person-{length}")
    data = _random_bytes(rng, rng.randint(0, 300))
    salt, person = _random_bytes(rng, length), _random_bytes(rng, length)
    other = _random_bytes(rng, rng.randint(0, 16))
    for params in (dict(salt=salt), dict(person=person), dict(salt=salt, person=other),
                   dict(salt=other, person=person, key=b"key", digest_size=20)):
        assert _ours(backend, data, **params).digest() == _hashlib(data, **params).digest(), params


@pytest.mark.parametrize("seed", range(CASES))
def test_blake2b_random_params_and_incremental_splits(seed, backend):
    rng = random.Random(f"blake2b-splits-{seed}")
    data = _random_bytes(rng, rng.randint(0, 2000))
    params = dict(digest_size=rng.randint(1, 64), key=_random_bytes(rng, rng.randint(0, 64)),
                  salt=_random_bytes(rng, rng.randint(0, 16)),
                  person=_random_bytes(rng, rng.randint(0, 16)))
    expected = _hashlib(data, **params).digest()
    cuts = sorted(rng.randint(0, len(data)) for _ in range(rng.randint(1, 8)))
    h = _ours(backend, **params)
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        h.update(data[start:end])  # includes empty pieces where cuts coincide
    assert h.digest() == expected, (params, cuts)


def test_blake2b_copy_is_independent(backend):
    rng = random.Random("blake2b-copy")
    for key in (b"", _random_bytes(rng, 64)):
        prefix, a, b = (_random_bytes(rng, n) for n in (200, 77, 300))
        original = _ours(backend, prefix, key=key, digest_size=48)
        clone = original.copy()
        assert clone.digest_size == 48
        assert clone.digest() == original.digest()
        original.update(a)
        clone.update(b)
        ref = _hashlib(prefix, key=key, digest_size=48)
        ref_clone = ref.copy()
        ref.update(a)
        ref_clone.update(b)
        assert original.digest() == ref.digest()
        assert clone.digest() == ref_clone.digest()
        assert original.digest() != clone.digest()
        # The clone outlives its original (it owns its own state).
        del original
        clone.update(a)
        ref_clone.update(a)
        assert clone.digest() == ref_clone.digest()


def test_blake2b_digest_is_not_destructive(backend):
    rng = random.Random("blake2b-digest-twice")
    for key in (b"", b"secret key"):
        for a_len, b_len in ((0, 0), (0, 5), (100, 28), (128, 128), (129, 1000), (256, 1)):
            a, b = _random_bytes(rng, a_len), _random_bytes(rng, b_len)
            h = _ours(backend, a, key=key)
            first = h.digest()
            assert first == _hashlib(a, key=key).digest()
            assert h.digest() == first  # digest() twice gives the same answer
            h.update(b)
            assert h.digest() == _hashlib(a + b, key=key).digest(), (a_len, b_len)


# ---- BLAKE2b through the default path (selected backend, no backend= keyword) ----------------
# Plain bytes without key/salt/person take a different route (the one-shot C call, no state
# until update() or copy() needs one), so it gets its own differential tests.


@pytest.mark.parametrize("length", sorted(set(BOUNDARY_LENGTHS + tuple(RANDOM_LENGTHS))))
def test_blake2b_default_path_data_lengths(length):
    rng = random.Random(f"blake2b-default-{length}")
    data = _random_bytes(rng, length)
    digest_size = rng.randint(1, 64)
    assert argonishche.blake2b(data).digest() == _hashlib(data).digest()
    assert (argonishche.blake2b(data, digest_size=digest_size).digest()
            == _hashlib(data, digest_size=digest_size).digest())
    assert argonishche.blake2b(data).hexdigest() == _hashlib(data).hexdigest()


def test_blake2b_default_path_one_mebibyte():
    data = random.Random("blake2b-default-1MiB").randbytes(2**20)
    assert argonishche.blake2b(data).digest() == _hashlib(data).digest()


@pytest.mark.parametrize("seed", range(CASES))
def test_blake2b_default_path_then_update_copy_and_digest(seed):
    rng = random.Random(f"blake2b-default-mixed-{seed}")
    first = _random_bytes(rng, rng.randint(0, 400))
    more = [_random_bytes(rng, rng.randint(0, 300)) for _ in range(rng.randint(0, 3))]
    digest_size = rng.randint(1, 64)
    ours = argonishche.blake2b(first, digest_size=digest_size)
    ref = _hashlib(first, digest_size=digest_size)
    if seed % 2:
        assert ours.digest() == ref.digest()  # digest before any state exists
    if seed % 3 == 0:
        clone, ref_clone = ours.copy(), ref.copy()  # copy of an object still without state
        clone.update(b"clone")
        ref_clone.update(b"clone")
        assert clone.digest() == ref_clone.digest()
    for piece in more:
        ours.update(piece)
        ref.update(piece)
        assert ours.digest() == ref.digest()
    assert ours.digest() == ref.digest()
    assert ours.digest_size == digest_size


def test_blake2b_default_path_from_many_python_threads():
    # Concurrent one-shot digests must not share an output buffer.
    rng = random.Random("blake2b-threads")
    inputs = [_random_bytes(rng, rng.randint(0, 5000)) for _ in range(16)]
    expected = [_hashlib(d).digest() for d in inputs]
    failures = []

    def work(k):
        for _ in range(200):
            i = (k * 7 + _) % len(inputs)
            if argonishche.blake2b(inputs[i]).digest() != expected[i]:
                failures.append(i)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
