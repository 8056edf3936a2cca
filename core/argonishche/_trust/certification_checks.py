"""Certification's checks: what a kernel module's code must pass once before it is trusted.

The start-up self-test (:mod:`argonishche._trust.self_test`) can afford a fraction of a
millisecond per backend.  These checks cost more and are run once per code (see
:mod:`argonishche._trust.certification`), each aimed at a bug class the quick checks cannot reach:

* G's placement across the largest lane the default Limits admit: ref at every distance from
  prev a hash within them can produce, in one sparse mapping of which a few MiB are touched;
* BLAKE2b against ref (:mod:`argonishche._trust.certification_blake2b`): long runs, every
  parameter, and the byte counter at every carry.  F is never called with more than 16384
  blocks (ARGONISHCHE_BLAKE2B_MAX_RUN): the core splits a longer run, and the runs checked
  include exactly that many and one more;
* Argon2 against ref's kernels through the driver, every type and version, 1 to 4 lanes on as
  many threads (kernels that are not thread-safe);
* Argon2 known answers computed with argon2-cffi, which do not depend on ref, so that ref itself
  is certified too.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .. import _hash_call
from .._core import ffi
from . import certification_blake2b, kernel_table, self_test

if TYPE_CHECKING:
    from .._core import CData

def largest_lane() -> int:
    """The blocks of the largest lane the default :class:`~argonishche.Limits` admit: all of
    max_memory_cost (KiB, a block each) in one lane (parallelism 1).  References lie at most a
    whole memory away, so no hash within the default limits puts one farther from prev."""
    from .._parameter_checks import Limits  # here: only the full check needs it

    max_memory_cost = Limits().max_memory_cost
    if max_memory_cost is None:  # not with these defaults: unbounded, the check needs a bound
        raise RuntimeError("the default Limits do not bound memory_cost: no lane to certify")
    return max_memory_cost


def _far_distances(farthest: int) -> list[int]:
    """Every distance up to 1,100 blocks (past the 100 and 300 where real kernels failed, and a
    KiB-sized window's edges), then the powers of two from 2,048 and their neighbours, then
    *farthest* itself: none beyond it."""
    powers = {d for k in range(11, farthest.bit_length() + 1) for d in (2**k - 1, 2**k, 2**k + 1)}
    return sorted({*range(2, 1101), *(d for d in powers if d <= farthest), farthest})


@functools.lru_cache(maxsize=1)
def full_distances() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(behind, ahead): the distances (blocks) of ref from prev for the full placement check,
    as far as a lane of :func:`largest_lane` blocks reaches: n - 2 behind prev, n - 1 ahead."""
    lane = largest_lane()
    return tuple(_far_distances(lane - 2)), tuple(_far_distances(lane - 1))


#: Argon2 shapes (memory_cost KiB, time_cost, lanes) compared with ref, for every type and version.
ARGON2_SHAPES = ((4096, 1, 1), (2048, 2, 2), (1024, 3, 4))

#: (type, version, memory_cost, time_cost, parallelism, tag): password b"argonishche
#: certification", salt b"far references!!", 32-byte tag, no secret or associated data.  Computed
#: with argon2-cffi 25.1.0 (argon2.low_level.hash_secret_raw, phc-winner-argon2 inside);
#: tests/trust/test_self_test.py recomputes them where argon2-cffi is installed.
ARGON2_KNOWN_ANSWERS = (
    ("d", 0x13, 4096, 1, 1, "694b3a39d22aafcd350152fdf22c4ea092ce70622330913584069a7628d2b5c8"),
    ("i", 0x13, 2048, 2, 2, "1c093fadf3e5d48b3ed5746ce17533f0cbaf200c1fafd675a26a318d7c13f62a"),
    ("id", 0x13, 3072, 1, 4, "e4bfa42b8828e59ae0a21e6e0937b03215adda02ececd2651c729abecf8f5d17"),
    ("d", 0x10, 2048, 2, 1, "43343a102d1784f0945b91ee270d076c3d99c3b4c69ebe59de920fc755cddb89"),
    ("i", 0x10, 4096, 1, 2, "c941d0b0e53c35b6b79fc1352c73698a7538a38b2e0103ae15420453e09ec598"),
    ("id", 0x10, 1024, 3, 8, "70d2fc5598a9e99bb01845b26b6967ebaab779d761a0e008dcc37ec3a4ff3786"),
)
KNOWN_ANSWER_INPUTS = dict(password=b"argonishche certification", salt=b"far references!!",
                           secret=b"", associated_data=b"")


@functools.lru_cache(maxsize=1)
def full_placements() -> list[tuple[str, int, int, int]]:
    """The full placement check's placements (made on first use: importing this module is part
    of argonishche's start-up): ref at every distance from prev a hash within the default limits
    can put it, in one buffer of the largest lane's size, of which a few MiB are touched."""
    return self_test.placements(*full_distances())



def _argon2(table: CData, type: str, version: int, memory_cost: int, time_cost: int, lanes: int,
            inputs: dict[str, bytes], hash_len: int = 32) -> bytes:
    return _hash_call.argon2(table, table, type=type, version=version, time_cost=time_cost,
                          memory_cost=memory_cost, parallelism=lanes, threads=lanes,
                          hash_len=hash_len, password=inputs["password"], salt=inputs["salt"],
                          secret=inputs["secret"], associated_data=inputs["associated_data"])


def _argon2_cases() -> Iterator[tuple[str, int, int, int, int, dict[str, bytes], int]]:
    import random  # here: it costs a millisecond to import

    rng = random.Random(9106)
    for memory_cost, time_cost, lanes in ARGON2_SHAPES:
        for type in ("d", "i", "id"):
            for version in (0x10, 0x13):
                inputs = dict(password=rng.randbytes(24), salt=rng.randbytes(16),
                              secret=rng.randbytes(8), associated_data=rng.randbytes(12))
                yield type, version, memory_cost, time_cost, lanes, inputs, rng.choice((32, 65))


@functools.lru_cache(maxsize=None)
def _reference_tags(address: int) -> tuple[bytes, ...]:
    """ref's tags for _argon2_cases(), computed once per process (certify() is often called for
    every backend in turn)."""
    table = ffi.cast("const argonishche_kernel_table *", address)
    return tuple(_argon2(table, *case) for case in _argon2_cases())


def _kernels_of(table: CData) -> tuple[int, ...]:
    return tuple(int(ffi.cast("uintptr_t", kernel))
                 for kernel in (table.blake2b_compress, table.argon2_fill_block))


def argon2_failures(table: CData, reference: CData) -> list[str]:
    """Argon2 through *table* against *reference* (ref's kernels) and the known answers."""
    failures = []
    for type, version, memory_cost, time_cost, lanes, known in ARGON2_KNOWN_ANSWERS:
        if _argon2(table, type, version, memory_cost, time_cost, lanes,
                   KNOWN_ANSWER_INPUTS).hex() != known:
            failures.append(f"Argon2{type} v={version:#x} m={memory_cost} t={time_cost} "
                            f"p={lanes} (known answer computed with argon2-cffi)")
    if _kernels_of(table) == _kernels_of(reference):
        return failures  # ref itself: nothing to compare with
    expected = _reference_tags(int(ffi.cast("uintptr_t", reference)))
    for case, tag in zip(_argon2_cases(), expected, strict=True):
        if _argon2(table, *case) != tag:
            type, version, memory_cost, time_cost, lanes = case[:5]
            failures.append(f"Argon2{type} v={version:#x} m={memory_cost} t={time_cost} "
                            f"p={lanes} on {lanes} threads differs from ref")
    return failures


def failures(table: CData, reference: CData | None = None) -> list[str]:
    """Every check of the certification on *table*, uncached; one line per failure.

    :param reference: ref's kernel table (default: :func:`reference_table`).
    """
    reference = kernel_table.reference_table() if reference is None else reference
    return (self_test.run(table, full=True)
            + self_test.placement_failures(table, full_placements(), raise_if_unmapped=True)
            + certification_blake2b.failures(table, reference) + argon2_failures(table, reference))
