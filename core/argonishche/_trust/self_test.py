"""The quick self-test of one backend's kernels: what start-up runs before a backend may be used.

:func:`run` runs on every backend that passes the CPU gate when the registry starts, so it costs a
fraction of a millisecond per backend and imports nothing that start-up does not already import
(``hashlib`` and ``random`` would cost 1-3 ms each).  It is

1. the known-answer vectors marked ``selftest``, through the same C driver that hashes for users
   (``full=True``: every vector, for ``argonishche selftest`` and the tests), BLAKE2b with the
   tree parameters and the last-node flag included (an F that ignores f1 fails them);
2. the placement check of G (:func:`placement_failures`): G's result may not depend on where its
   blocks lie, and the references of real hashes lie up to a whole lane away;
3. runs of BLAKE2b blocks (:func:`run_failures`): F over 8 to 65 blocks in one call.

Each check names the bug class it is there for.  The certification of a kernel module
(:mod:`argonishche._trust.certification`) runs the slower rest once per module file.
"""

from __future__ import annotations

import functools
import mmap
import os
import sys
from collections.abc import Sequence

from .. import _hash_call
from .._core import ffi
from ..vectors import ARGON2_VECTORS, BLAKE2B_TREE_VECTORS, BLAKE2B_VECTORS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from .._core import CData

BLOCK = 1024  # bytes in an Argon2 block

# ---- 1. known answers -------------------------------------------------------------------------


def known_answer_failures(table: CData, *, full: bool = False) -> list[str]:
    """The known-answer vectors (``full``: all of them, else those marked ``selftest``) on
    *table*; one line per failure."""
    failures = []
    for vector in BLAKE2B_VECTORS:
        if not (full or vector.selftest):
            continue
        state = _hash_call.new_blake2b_state(table, vector.digest_size, vector.key, vector.salt,
                                         vector.person)
        _hash_call.blake2b_update(state, vector.data)
        if _hash_call.blake2b_digest(state) != vector.digest:
            failures.append(f"BLAKE2b-{8 * vector.digest_size} of {len(vector.data)} bytes "
                            f"({vector.source})")
    for tree in BLAKE2B_TREE_VECTORS:
        if not (full or tree.selftest):
            continue
        state = _hash_call.new_blake2b_state(
            table, tree.digest_size, tree.key, tree.salt, tree.person,
            tree={"fanout": tree.fanout, "depth": tree.depth, "leaf_size": tree.leaf_size,
                  "node_offset": tree.node_offset, "node_depth": tree.node_depth,
                  "inner_size": tree.inner_size, "last_node": tree.last_node})
        _hash_call.blake2b_update(state, tree.data)
        if _hash_call.blake2b_digest(state) != tree.digest:
            failures.append(f"BLAKE2b-{8 * tree.digest_size} of {len(tree.data)} bytes with "
                            f"fanout={tree.fanout} depth={tree.depth} "
                            f"last_node={tree.last_node} ({tree.source})")
    for vec in ARGON2_VECTORS:
        if not (full or vec.selftest):
            continue
        tag = _hash_call.argon2(
            table, table, type=vec.type, version=vec.version, time_cost=vec.time_cost,
            memory_cost=vec.memory_cost, parallelism=vec.parallelism, threads=1,
            password=vec.password, salt=vec.salt, secret=vec.secret,
            associated_data=vec.associated_data, hash_len=len(vec.tag))
        if tag != vec.tag:
            failures.append(f"Argon2{vec.type} v={vec.version:#x} t={vec.time_cost} "
                            f"m={vec.memory_cost} p={vec.parallelism} ({vec.source})")
    return failures


# ---- 2. where G's blocks lie ------------------------------------------------------------------
#
# Bug class: a G kernel that takes another path depending on where ref lies (a prefetch or
# "far reference" path, an address comparison) and is wrong on it.  Such third-party kernels were
# wrong whenever ref lay more than 100, or more than 300, blocks behind prev.  The known-answer
# vectors marked selftest (m <= 64 KiB) never put a reference more than 64 blocks away, the full
# set no more than 256, and real hashes reach a whole lane back (m = 64 MiB: 65,536 blocks).
#
# The check needs no reference implementation: G is a function of its blocks' contents, so the
# same contents must give the same result wherever they lie.  The first placement (ref just
# behind prev, next just after it) is the anchor, as the known-answer vectors check it; every other
# placement must give the anchor's result, for both values of xor_into_next (the two paths of a
# typical kernel).  A kernel that is wrong beyond any distance up to the farthest one checked is
# caught there; the powers of two and their neighbours find windows.  The buffer is one anonymous
# mapping, private and (where the OS has the flag) not reserved: only the pages holding the
# blocks used are ever touched, so certification's 4 GiB buffer (the largest lane) costs a few
# hundred page faults and commits no more memory than they do.

#: How far behind prev (in blocks) the reference lies in the quick check: as in the same lane, or
#: the previous pass over a later part of it.  100 and 300 are where real kernels went wrong.
BEHIND = (2, 7, 8, 9, 64, 65, 101, 128, 129, 256, 257, 301, 1024, 1025, 4096, 4097, 8192)
#: How far ahead of prev the reference lies: another lane, the previous pass's tail.  Not 1: next
#: is prev + 1 here, as in the driver, and next never aliases ref.
AHEAD = (2, 3, 101, 301, 8191)


def placements(behind: Sequence[int], ahead: Sequence[int]) -> list[tuple[str, int, int, int]]:
    """(what, prev, ref, next) block indices: the anchor first, then ref *behind* and *ahead* of
    prev, and a lane's first block (next far below prev, which is near the lane's last block).

    The indices span max(behind) + 2 and max(ahead) + 1 blocks, as in a lane of that many: the
    farthest a reference lies behind prev in a lane of n blocks is n - 2 (prev is next - 1), the
    farthest ahead n - 1."""
    top = max((*behind, *(d - 1 for d in ahead), 2))  # prev when the reference lies behind it
    return ([("1 block behind prev", top, top - 1, top + 1)]
            + [(f"{d} blocks behind prev", top, top - d, top + 1) for d in behind]
            + [(f"{d} blocks ahead of prev", 0, d, 1) for d in ahead]
            + [(f"{top - 1} blocks behind prev, next {top} blocks below prev", top, 1, 0)])


QUICK_PLACEMENTS = placements(BEHIND, AHEAD)


@functools.lru_cache(maxsize=None)
def data(size: int) -> bytes:
    """*size* bytes that look random, the same on every machine and Python version: the leading
    bytes of the binary expansion of a 64-bit fraction (a prefix of a longer call's result).
    About 40 microseconds for 9 KiB, where importing random or hashlib costs milliseconds."""
    return ((0x243F6A8885A308D3 << (8 * size)) // 0xB7E151628AED2A6B).to_bytes(size, "big")


#: Linux's MAP_NORESERVE on the architectures that take asm-generic/mman-common.h's value
#: (powerpc, sparc, mips and alpha have their own), by os.uname().machine.
_GENERIC_MAP_NORESERVE = 0x4000
_GENERIC_MMAN_MACHINES = frozenset({"x86_64", "i386", "i686", "aarch64", "armv7l", "armv8l",
                                    "riscv64", "s390x", "loongarch64"})


def map_noreserve() -> int:
    """MAP_NORESERVE, or 0 where it is unknown: the mmap module has it from Python 3.13 only,
    so before that Linux's value is taken where it is the generic one."""
    flag = getattr(mmap, "MAP_NORESERVE", None)
    if isinstance(flag, int):
        return flag
    if sys.platform == "linux" and os.uname().machine in _GENERIC_MMAN_MACHINES:
        return _GENERIC_MAP_NORESERVE
    return 0


def sparse_area(size: int) -> mmap.mmap:
    """An anonymous mapping of *size* bytes of which only the pages written will use memory.

    POSIX: private, and MAP_NORESERVE where the OS has it, so that a 4 GiB mapping asks for no
    commit charge (Linux's heuristic overcommit refuses a single mapping larger than RAM and swap
    without it; strict overcommit charges it whole all the same, and may refuse it).  Windows:
    a section backed by the paging file, committed whole (it counts against the commit limit) but
    given physical pages only where written.  Page-aligned, so every block is 64-byte aligned.
    Raises OSError if the address space or the commit charge cannot be had.
    """
    if hasattr(mmap, "MAP_PRIVATE"):  # POSIX; the mmap module adds MAP_ANONYMOUS for -1
        area = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | map_noreserve())
    else:
        area = mmap.mmap(-1, size)
    try:  # no 2 MiB huge page zeroed for each block touched
        area.madvise(mmap.MADV_NOHUGEPAGE)
    except (AttributeError, OSError):  # not Linux, or a kernel without huge pages
        pass
    return area


def placement_failures(table: CData, where: Sequence[tuple[str, int, int, int]] = QUICK_PLACEMENTS,
                       *, raise_if_unmapped: bool = False) -> list[str]:
    """G on the same three blocks (prev, ref, the old next) at each of the placements *where*,
    which must all give the first one's result; a line per xor_into_next value for which some do
    not (one line if both fail at the same placements), naming the first wrong placement.

    :param where: (what, prev, ref, next) block indices in one 64-byte aligned buffer, from
        :func:`placements`; the buffer spans the largest index, and only the pages of the blocks
        placed are touched (:func:`sparse_area`).
    :param raise_if_unmapped: raise MemoryError if the buffer cannot be mapped (certification: a
        check that could not run is not remembered), instead of returning a failure line.
    """
    contents = data(3 * BLOCK)
    prev_in, ref_in, next_in = (contents[i * BLOCK:(i + 1) * BLOCK] for i in range(3))
    size = BLOCK * (1 + max(max(placement[1:]) for placement in where))
    wrong: dict[int, list[str]] = {0: [], 1: []}  # xor_into_next -> where it was wrong
    try:
        area = sparse_area(size)
    except OSError as exc:  # no address space for it: unchecked, so not trusted
        what = f"Argon2 G placement check not run: cannot map {size >> 20} MiB ({exc})"
        if raise_if_unmapped:
            raise MemoryError(what) from exc
        return [what]
    with area:
        pointer = ffi.from_buffer(area)
        try:
            blocks = ffi.cast("argonishche_block *", pointer)
            for xor_into_next in (0, 1):
                expected = None
                for what, prev, ref, next_ in where:
                    ffi.memmove(blocks + prev, prev_in, BLOCK)
                    ffi.memmove(blocks + ref, ref_in, BLOCK)
                    ffi.memmove(blocks + next_, next_in, BLOCK)
                    table.argon2_fill_block(blocks + next_, blocks + prev, blocks + ref,
                                            xor_into_next)
                    result = ffi.buffer(blocks + next_, BLOCK)[:]
                    if expected is None:
                        expected = result
                    elif result != expected:
                        wrong[xor_into_next].append(what)
        finally:
            ffi.release(pointer)
    paths = {"0 and 1": wrong[0]} if wrong[0] == wrong[1] else {"0": wrong[0], "1": wrong[1]}
    return [f"Argon2 G (xor_into_next={xor}) with the reference "
            f"{first_and_count(found, len(where) - 1, 'placements')}, unlike the same blocks "
            f"side by side" for xor, found in paths.items() if found]


def first_and_count(wrong: Sequence[str], checked: int, what: str) -> str:
    """The first of *wrong*, and how many more of the *checked* *what* were wrong, if any."""
    more = f" (and {len(wrong) - 1} more of {checked} {what})" if len(wrong) > 1 else ""
    return f"{wrong[0]}{more}"


# ---- 3. runs of BLAKE2b blocks ----------------------------------------------------------------
#
# Bug class: an F kernel with its own path for longer runs of blocks (unrolled, interleaved,
# prefetching) that is wrong on it.  A third-party kernel was wrong for runs of 8 or more blocks;
# no selftest vector makes the core pass a run longer than 7 (a message's last block is always
# compressed alone).  Hashed in one update, the first 128 * (n + 1) + 1 bytes of data() make the
# core compress one block from its buffer, then n blocks in one call, then the final block.

#: BLAKE2b-256 (unkeyed) of data(128 * (n + 1) + 1), for runs of n blocks.  Computed with
#: CPython 3.11's hashlib.blake2b; tests/trust/test_self_test.py recomputes them.
RUN_DIGESTS = {
    8: "ada0819f4025a415ebac7e243fc34a39d67406240fcf0e6024dcd0844f8b8d96",
    9: "4cf9846fc9a8f8e1074312c21d6b384b2acbc0824f5bd01360197a67722e1535",
    16: "89cfc8860acecbeef3c5d903290b156ec88afe5572f8cb19a8eca4c7cd585511",
    17: "1a9c6fe0d6ba102bbecd1a842a252d410759fcb9ad08da047d9c7c0031f836fe",
    64: "2b5f604d78941dd9c10dd59616a890b5aa519aaee99eed3851c49807d0c853ec",
    65: "de343501b54b34fe85cf6f172e52730c43593f524c8ff1211533728450031c31",
}


def run_message(blocks: int) -> bytes:
    """The message whose one update makes the core pass a run of *blocks* blocks to F."""
    return data(128 * (max(RUN_DIGESTS) + 1) + 1)[:128 * (blocks + 1) + 1]


def run_failures(table: CData) -> list[str]:
    """BLAKE2b through *table*'s F over each run length of RUN_DIGESTS; a line if any is wrong."""
    wrong = []
    for blocks, digest in RUN_DIGESTS.items():
        state = _hash_call.new_blake2b_state(table, 32, b"", b"", b"")
        _hash_call.blake2b_update(state, run_message(blocks))
        if _hash_call.blake2b_digest(state).hex() != digest:
            wrong.append(blocks)
    return runs_line(wrong, len(RUN_DIGESTS))


def runs_line(wrong: Sequence[int], checked: int) -> list[str]:
    """The failure line for runs of *wrong* blocks (none: no line), *checked* run lengths."""
    if not wrong:
        return []
    return [f"BLAKE2b F over a run of "
            f"{first_and_count([f'{n} blocks' for n in wrong], checked, 'run lengths')} "
            f"in one call"]


# ---- the quick self-test ----------------------------------------------------------------------


def run(table: CData, *, full: bool = False) -> list[str]:
    """The quick self-test of *table* (``full``: with every known-answer vector); one line per
    failure, empty if all passed.  Never raises for a wrong kernel."""
    return (known_answer_failures(table, full=full) + placement_failures(table)
            + run_failures(table))
