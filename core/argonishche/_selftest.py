"""Known-answer tests of one backend's kernels, through the same C driver that hashes for users.

The quick set (vectors marked ``selftest``) runs on every backend that passes the CPU gate when the
registry starts; ``full=True`` runs every vector, for ``argonishche selftest`` and the tests.
"""

from __future__ import annotations

from . import _driver
from .vectors import ARGON2_VECTORS, BLAKE2B_VECTORS


def run(table, *, full: bool = False) -> list[str]:
    """Run the known-answer vectors on *table*; return one line per failure (empty: all passed)."""
    failures = []
    for vector in BLAKE2B_VECTORS:
        if not (full or vector.selftest):
            continue
        state = _driver.new_blake2b_state(table, vector.digest_size, vector.key, vector.salt,
                                         vector.person)
        _driver.blake2b_update(state, vector.data)
        if _driver.blake2b_digest(state) != vector.digest:
            failures.append(f"BLAKE2b-{8 * vector.digest_size} of {len(vector.data)} bytes "
                            f"({vector.source})")
    for vector in ARGON2_VECTORS:
        if not (full or vector.selftest):
            continue
        tag = _driver.argon2(
            table, table, type=vector.type, version=vector.version, time_cost=vector.time_cost,
            memory_cost=vector.memory_cost, parallelism=vector.parallelism, threads=1,
            password=vector.password, salt=vector.salt, secret=vector.secret,
            associated_data=vector.associated_data, hash_len=len(vector.tag))
        if tag != vector.tag:
            failures.append(f"Argon2{vector.type} v={vector.version:#x} t={vector.time_cost} "
                            f"m={vector.memory_cost} p={vector.parallelism} ({vector.source})")
    return failures
