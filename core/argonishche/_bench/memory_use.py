"""Whether a subject's timed hashes reused work memory or had it fresh: the benchmark's memory
column.

A hash that reuses kept memory skips a page fault and the kernel's zeroing per page, the largest
cost of a hash from 32 MiB up; so a time means little without saying which it was.  Two sources
tell, read before and after each timed sample (outside the timed part):

- argonishche's own counters (:func:`argonishche.memory_budget`'s ``maps``, fresh mappings made,
  and ``reuses``, hashes served from kept memory).  They are exact, but see only the memory the
  process's work-memory pool hands out: not the ``system`` allocator's ``malloc`` nor a peer's;
- the process's minor page faults (``getrusage``, every thread's), where the OS counts them (not
  on Windows).  A hash whose memory is fresh faults in each of its pages once; one whose memory
  was reused, by us or by the C library's heap, faults in next to none.  This is how the column
  tells a peer's or ``system``'s per-hash allocation that glibc served from memory it kept
  (below its 32 MiB ``mmap`` threshold) from one mapped afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .._work_memory import memory_budget


def minor_page_faults() -> int | None:
    """Minor page faults of the whole process so far, or None where the OS does not say."""
    try:
        import resource
    except ImportError:  # Windows: no getrusage
        return None
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)


def page_size() -> int:
    import mmap

    return mmap.PAGESIZE


class Counters(NamedTuple):
    """What the counters read at one moment."""

    maps: int
    reuses: int
    faults: int | None


def read_counters() -> Counters:
    state = memory_budget()
    return Counters(state.maps, state.reuses, minor_page_faults())


#: A hash whose page faults are at least this share of its pages had its memory fresh; at most
#: :data:`REUSED_SHARE`, it found its pages already there.
FRESH_SHARE, REUSED_SHARE = 0.5, 0.05


@dataclass
class MemoryUse:
    """The counters' differences over a subject's timed hashes, summed over its samples."""

    hashes: int = 0
    maps: int = 0
    reuses: int = 0
    faults: int | None = 0

    def add(self, before: Counters, after: Counters, hashes: int) -> None:
        """Count *hashes* timed between the two readings."""
        self.hashes += hashes
        self.maps += after.maps - before.maps
        self.reuses += after.reuses - before.reuses
        if self.faults is None or before.faults is None or after.faults is None:
            self.faults = None
        else:
            self.faults += after.faults - before.faults

    def fault_share(self, bytes_per_hash: int) -> float | None:
        """Page faults per hash over the pages of one hash's memory: about 1 when every page
        was fresh, about 0 when none was; None where faults are not counted."""
        if self.faults is None or not self.hashes:
            return None
        pages = max(1, bytes_per_hash // page_size())
        return self.faults / self.hashes / pages

    def label(self, bytes_per_hash: int) -> str:
        """The memory column: ``reused``, ``fresh`` or ``fresh 2/7`` from our counters where
        they saw the hashes; else, for memory allocated per hash (``system``, the peers),
        ``fresh (per hash)``, or ``per hash, 3% fresh`` where the C library reused its heap."""
        if not self.hashes:
            return "-"
        if self.maps or self.reuses:
            if self.reuses >= self.hashes and not self.maps:
                return "reused"
            if self.maps >= self.hashes and not self.reuses:
                return "fresh"
            return f"fresh {self.maps}/{self.hashes}"
        share = self.fault_share(bytes_per_hash)
        if share is None:
            return "per hash"
        if share >= FRESH_SHARE:
            return "fresh (per hash)"
        if share <= REUSED_SHARE:
            return "per hash, reused"
        return f"per hash, {share:.0%} fresh"

    def as_dict(self, bytes_per_hash: int) -> dict[str, object]:
        share = self.fault_share(bytes_per_hash)
        return {"label": self.label(bytes_per_hash), "hashes": self.hashes, "maps": self.maps,
                "reuses": self.reuses,
                "page_faults_per_hash": None if self.faults is None or not self.hashes
                else self.faults / self.hashes,
                "fault_share": share}


#: The memory column's legend, printed under each Argon2 table's header.
LEGEND = ("memory: reused = every timed hash reused work memory argonishche kept; fresh = every "
          "one mapped it afresh (fresh k/n: k of n did); per hash = allocated for each hash "
          "(the system allocator, the peers), fresh when its pages fault in anew, reused when "
          "the C library's heap kept them (page faults per hash against its pages)")
