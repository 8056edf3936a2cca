"""Conformance checks for kernel backends: what this project's tests run, exposed to plugin authors.

A plugin's test suite needs only::

    import argonishche.testing as conformance

    def test_my_backend_conforms():
        assert conformance.check_backend("mine") == []

:func:`check_backend` runs every known-answer vector (``argonishche.vectors``), then differential
tests against the portable ``ref`` backend (Argon2) and ``hashlib`` (BLAKE2b) on seeded random
and boundary inputs.  The case generators are public too, for parametrised tests.
"""

from __future__ import annotations

import hashlib
import random

from . import registry, selftest
from .argon2 import argon2_hash
from .blake2 import blake2b

#: Incremental split points that cross BLAKE2b's block boundary in every way.
SPLITS = (0, 1, 127, 128, 129)


def argon2_cases(count: int = 60, seed: int = 0) -> list[dict]:
    """Keyword arguments for :func:`argonishche.argon2_hash`: every type and version, t 1..4,
    p 1..8, m at 8p, just above it and odd, odd tag lengths, secret and associated data."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        lanes = 1 + index % 8
        memory = rng.choice((8 * lanes, 8 * lanes + 1, 4 * lanes * rng.randint(2, 6) + 3))
        cases.append(dict(
            password=rng.randbytes(rng.choice((0, 1, 16, 64, 129))),
            salt=rng.randbytes(rng.choice((8, 16, 33))),
            type=("d", "i", "id")[index % 3], version=(0x10, 0x13)[index // 3 % 2],
            time_cost=1 + index % 4, memory_cost=memory, parallelism=lanes,
            hash_len=rng.choice((4, 16, 32, 33, 64, 65, 100)),
            secret=rng.randbytes(rng.choice((0, 8, 32))),
            associated_data=rng.randbytes(rng.choice((0, 12, 200))),
            threads=rng.randint(1, lanes)))
    return cases


def blake2b_cases(count: int = 60, seed: int = 0) -> list[dict]:
    """Keyword arguments for ``blake2b``: every digest size, keys, salts, personalization."""
    rng = random.Random(seed)
    return [dict(data=rng.randbytes(rng.choice((0, 1, 127, 128, 129, 256, 1000, 4097))),
                 digest_size=1 + index % 64,
                 key=rng.randbytes(rng.choice((0, 1, 32, 64))),
                 salt=rng.randbytes(rng.randint(0, 16)),
                 person=rng.randbytes(rng.randint(0, 16)))
            for index in range(count)]


def blake2b_failures(backend: str, case: dict) -> list[str]:
    """Compare one-shot, incremental and copied hashing on *backend* with hashlib."""
    data, params = case["data"], {k: v for k, v in case.items() if k != "data"}
    expected = hashlib.blake2b(data, **params).digest()
    failures = []
    if blake2b(data, backend=backend, **params).digest() != expected:
        failures.append(f"BLAKE2b one-shot {len(data)} bytes, {params['digest_size']}-byte digest")
    for split in SPLITS:
        h = blake2b(data[:split], backend=backend, **params)
        clone = h.copy()
        h.update(data[split:])
        clone.update(data[split:])
        if h.digest() != expected or clone.digest() != expected:
            failures.append(f"BLAKE2b split at {split} of {len(data)} bytes")
    return failures


def check_backend(name: str, count: int = 60, seed: int = 0) -> list[str]:
    """Every vector and *count* differential cases on backend *name*; one line per failure.

    :raises argonishche.BackendError: the backend is not usable here (unknown, blocked, the CPU
        lacks its features, or it failed the start-up self-test).
    """
    table = registry.get().kernel_table("argon2", name)
    failures = [f"known answer: {line}" for line in selftest.run(table, full=True)]
    for case in argon2_cases(count, seed):
        if argon2_hash(backend=name, **case) != argon2_hash(backend="ref", **case):
            shown = {k: v for k, v in case.items() if not isinstance(v, bytes)}
            failures.append(f"Argon2 differs from ref: {shown}")
    for case in blake2b_cases(count, seed):
        failures += blake2b_failures(name, case)
    return failures
