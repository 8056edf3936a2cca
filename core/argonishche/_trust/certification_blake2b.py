"""Certification's BLAKE2b checks (see :mod:`argonishche._trust.certification`): F's runs, its
byte counter and its final-block flags.

Messages, against hashlib: runs of 0 to 70 blocks and of 8,191 to 24,577 blocks, and 3 MiB
messages in one update and in uneven pieces, keyed, salted and personalised, and as a tree's last
node (every parameter-block field, F's f1 word): kernels with their own path for long runs.  F is
never called with more than ARGONISHCHE_BLAKE2B_MAX_RUN blocks: the core splits a longer run, and
the runs checked include exactly that many and one more.

The counter, against ref's F called directly: F takes the 128-bit byte counter (t0 low, t1 high)
as an input, so a kernel wrong only past some counter (past 4 MiB, past 2^32 bytes, once t1 is
not 0) is reached without hashing that much.  :func:`counter_cases` starts F just below every
carry out of every bit of both words, so that it carries inside a run and in a last block,
with the flags f0 and f1; a few long runs carry in their middle.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

from .. import _hash_call
from .._core import ffi, lib
from . import self_test

if TYPE_CHECKING:
    from .._core import CData

#: Runs of blocks the core passes to F in one call: short ones, around the 8,192 beyond which a
#: kernel failed (a message of more than 1 MiB), and the longest the core ever passes,
#: ARGONISHCHE_BLAKE2B_MAX_RUN (a longer run is split: F is never called with more than that
#: many blocks), and one more, which the core splits into that and 1.
BLAKE2B_MAX_RUN = int(lib.ARGONISHCHE_BLAKE2B_MAX_RUN)
BLAKE2B_RUNS = tuple(range(0, 71)) + (127, 128, 129, 1023, 1024, 1025, 8191, 8192, 8193,
                                      BLAKE2B_MAX_RUN - 1, BLAKE2B_MAX_RUN, BLAKE2B_MAX_RUN + 1,
                                      24577)

BLOCK = 128
ALL_ONES = 2**64 - 1
#: (blocks before the carry, blocks in the run): where inside a run of full blocks the counter
#: crosses a carry, for kernels that compute several blocks' counters at once.
CARRY_POSITIONS = ((1, 1), (1, 2), (2, 4), (3, 8), (8, 17))
#: Last blocks' sizes (F's increment): the empty message's 0, one byte, half, one short, full.
LAST_BLOCK_SIZES = (0, 1, 64, 127, 128)
#: Carries crossed in the middle of a long run (the core's longest, and 8,193 blocks): 4 MiB,
#: 2^32 bytes, and t0's wrap into t1.
LONG_RUN_CARRIES = (2**22, 2**32, 2**64)


class CounterCase(NamedTuple):
    """One call of F: the counter before it (t0, t1), its blocks, and its other arguments."""

    t0: int
    t1: int
    nblocks: int
    increment: int
    final_flag: int       # f0: all ones for the last block
    last_node_flag: int   # f1: all ones for a tree's last node
    carry: int            # the power of two the call's counters reach or cross (0: none)

    def describe(self) -> str:
        start = f"t0={self.t0:#x} t1={self.t1:#x}"
        if self.carry:
            where = (f"the byte counter at its carry to 2^{self.carry.bit_length() - 1} "
                     f"(t0={self.carry & ALL_ONES:#x} t1={self.carry >> 64:#x}): ")
        else:
            where = "the byte counter at "
        if not self.final_flag:
            return f"{where}a run of {self.nblocks} blocks from {start}"
        flags = "f0 (last block) and f1 (last node) set" if self.last_node_flag else "f0 set"
        return f"{where}a last block of {self.increment} bytes after {start} with {flags}"


def _case(counter: int, nblocks: int, increment: int = BLOCK, final: bool = False,
          last_node: bool = False, carry: int = 0) -> CounterCase:
    return CounterCase(counter & ALL_ONES, counter >> 64, nblocks, increment,
                       ALL_ONES if final else 0, ALL_ONES if last_node else 0, carry)


@functools.lru_cache(maxsize=1)
def counter_cases() -> tuple[CounterCase, ...]:
    """The counters F is checked at, lowest first: around 2^k for k = 7 to 127 (every carry out
    of every bit of t0 and t1: 4 MiB is 2^22, t0's wrap into t1 is 2^64), runs of full blocks
    crossing it at several positions, last blocks of every size just below, at and past it with
    f1 clear and set; then long runs carrying in their middle, and random large counters."""
    cases = [_case(0, 1, size, final=True, last_node=f1)
             for size in LAST_BLOCK_SIZES for f1 in (False, True)]
    for bit in range(7, 128):
        boundary = 2**bit
        cases += [_case(boundary - BLOCK * before, n, carry=boundary)
                  for before, n in CARRY_POSITIONS if boundary >= BLOCK * before]
        cases += [_case(start, 1, size, final=True, last_node=f1, carry=boundary)
                  for start in (boundary - BLOCK, boundary) for size in LAST_BLOCK_SIZES[1:]
                  for f1 in (False, True)]
    for carry in LONG_RUN_CARRIES:
        cases += [_case(carry - BLOCK * (n // 2), n, carry=carry)
                  for n in (8193, BLAKE2B_MAX_RUN)]
    import random  # here: it costs a millisecond to import, and this module is part of start-up

    rng = random.Random(7693)
    for _ in range(16):  # counters with many bits set in both words
        counter = rng.getrandbits(121) * BLOCK
        cases += [_case(counter, 17), _case(counter, 1, rng.randint(1, 128), final=True,
                                            last_node=rng.random() < 0.5)]
    # By carry, then counter: the first wrong case names the lowest carry the kernel fails at.
    return tuple(sorted(cases, key=lambda case: (case.carry or 2**128, case.t1, case.t0,
                                                 case.nblocks)))


def _run_f(table: CData, case: CounterCase, h_in: CData, blocks: CData) -> tuple[bytes, int, int]:
    h = ffi.new("uint64_t[8]")
    ffi.memmove(h, h_in, 64)
    t = ffi.new("uint64_t[2]", [case.t0, case.t1])
    table.blake2b_compress(h, t, blocks, case.nblocks, case.increment, case.final_flag,
                           case.last_node_flag)
    return ffi.buffer(h)[:], int(t[0]), int(t[1])


def counter_failures(table: CData, reference: CData) -> list[str]:
    """*table*'s F against *reference*'s (ref's) at every :func:`counter_cases` counter: the
    chaining value h and the counter it leaves must be the same.  One line at most, naming the
    lowest counter at which they differ."""
    import random

    rng = random.Random(7693)
    longest = max(case.nblocks for case in counter_cases())
    blocks = ffi.new("uint8_t[]", rng.randbytes(BLOCK * longest))
    h_in = ffi.new("uint64_t[8]", [rng.getrandbits(64) for _ in range(8)])
    wrong: list[str] = []
    for case in counter_cases():
        got, expected = _run_f(table, case, h_in, blocks), _run_f(reference, case, h_in, blocks)
        if got[0] != expected[0]:
            wrong.append(f"{case.describe()}: h differs")
        elif got[1:] != expected[1:]:
            wrong.append(f"{case.describe()}: the counter it leaves differs "
                         f"(t0={got[1]:#x} t1={got[2]:#x})")
    if not wrong:
        return []
    return [f"BLAKE2b F unlike ref's with "
            f"{self_test.first_and_count(wrong, len(counter_cases()), 'counter cases')}"]


@functools.lru_cache(maxsize=1)
def _message() -> bytes:
    import random

    return random.Random(7693).randbytes(BLOCK * (max(BLAKE2B_RUNS) + 1) + 1)


def blake2b_failures(table: CData) -> list[str]:
    """BLAKE2b through *table*'s F against hashlib: every run of BLAKE2B_RUNS in one call, and
    the whole message keyed, salted and personalised, in one update and in uneven pieces."""
    import hashlib

    message, wrong = _message(), []
    for blocks in BLAKE2B_RUNS:
        data = message[:BLOCK * (blocks + 1) + 1]
        state = _hash_call.new_blake2b_state(table, 64, b"", b"", b"")
        _hash_call.blake2b_update(state, data)
        if _hash_call.blake2b_digest(state) != hashlib.blake2b(data).digest():
            wrong.append(blocks)
    failures = self_test.runs_line(wrong, len(BLAKE2B_RUNS))
    digest_size, key, salt, person = 48, bytes(range(64)), b"certified salt!!", b"argonishche cert"
    expected = hashlib.blake2b(message, digest_size=digest_size, key=key, salt=salt,
                               person=person).digest()
    for pieces in ((len(message),), (1, 2**20 + 1, 2**20 + 78, 2**21 - 1, len(message))):
        state = _hash_call.new_blake2b_state(table, digest_size, key, salt, person)
        start = 0
        for end in pieces:
            _hash_call.blake2b_update(state, message[start:end])
            start = end
        if _hash_call.blake2b_digest(state) != expected:
            failures.append(f"keyed BLAKE2b of {len(message)} bytes in updates ending at "
                            f"{', '.join(map(str, pieces))}")
    # A tree node: every parameter-block field and the last-node flag (f1) after a long run.
    tree = {"fanout": 4, "depth": 2, "leaf_size": 2**22, "node_offset": 2**63 + 3,
            "node_depth": 1, "inner_size": 64, "last_node": True}
    state = _hash_call.new_blake2b_state(table, 64, key, salt, person, tree=tree)
    _hash_call.blake2b_update(state, message)
    expected = hashlib.blake2b(message, key=key, salt=salt, person=person, fanout=4, depth=2,
                               leaf_size=2**22, node_offset=2**63 + 3, node_depth=1,
                               inner_size=64, last_node=True).digest()
    if _hash_call.blake2b_digest(state) != expected:
        failures.append(f"BLAKE2b tree node (last node) of {len(message)} bytes")
    return failures


def failures(table: CData, reference: CData) -> list[str]:
    """Every BLAKE2b check of the certification on *table*; one line per failure."""
    return blake2b_failures(table) + counter_failures(table, reference)
