"""``argonishche bench --profile NAME``: a named set of points, each measured two ways.

A profile answers "how fast is it where people deploy it", which the default points (chosen to
compare kernels) do not.  At each point it measures

- **steady state** in one process (mode ``hot``): our default allocator, each built-in allocator
  forced, and the peers, interleaved; the memory column says whose work memory was reused;
- **the first hash in a new process** (mode ``first``): a server's first login after a start or
  a deploy, when no memory is kept yet (see :mod:`argonishche._bench.fresh_process`).

Both tables are checked first: every subject must produce the same tag.  A point that the
process's work-memory budget cannot hold is skipped with the reason, not the whole run.

To add a profile, add a :class:`Profile` to :data:`PROFILES`; ``--profile`` offers its name.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from .. import _registry, trim_memory
from ..exceptions import MemoryBudgetError
from .fresh_process import first_hash_subjects, time_in_new_processes
from .peers import peer_argon2_subjects
from .points import Point
from .report import argon2_preamble, argon2_report
from .suites import our_hasher
from .timing import Subject, check_same_tags, core_clock_hz, time_interleaved

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TextIO

    from .progress import Progress


@dataclass(frozen=True)
class ProfilePoint:
    point: Point
    #: What the point is, in the table's heading.
    title: str
    #: At most this many repetitions here (None: as many as asked): a 2 GiB hash takes a
    #: second or more, so a run of seven subjects at seven repetitions would take minutes.
    max_repetitions: int | None = None

    def repetitions(self, asked: int) -> int:
        return min(asked, self.max_repetitions or asked)


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    points: tuple[ProfilePoint, ...]
    #: The allocators timed in steady state beside the default one.
    allocators: tuple[str, ...] = ("arena", "system", "hugepages")
    #: The allocators whose first hash in a new process is timed (None: the default), and
    #: whether argon2-cffi's is too (where it is installed).
    first_hash_allocators: tuple[str | None, ...] = (None, "system")
    first_hash_peer: bool = True


#: Few repetitions at 1 GiB and more (see ProfilePoint.max_repetitions).
LARGE = 3

PROFILES = {
    "deployed": Profile(
        "deployed", "the Argon2id points people deploy",
        (ProfilePoint(Point("id", 2, 19456, 1), "OWASP minimum"),
         ProfilePoint(Point("id", 3, 65536, 4),
                      "argon2-cffi and pwdlib default, RFC 9106 second profile"),
         ProfilePoint(Point("id", 1, 64512, 1), "63 MiB: below the old 64 MiB per-thread bound"),
         ProfilePoint(Point("id", 1, 66560, 1), "65 MiB: above the old 64 MiB per-thread bound"),
         ProfilePoint(Point("id", 2, 102400, 8), "Django's Argon2PasswordHasher"),
         ProfilePoint(Point("id", 2, 262144, 4), "256 MiB"),
         ProfilePoint(Point("id", 1, 1048576, 4), "1 GiB", LARGE),
         ProfilePoint(Point("id", 1, 2097152, 4), "RFC 9106 first profile", LARGE))),
}


def steady_subjects(point: Point, profile: Profile) -> list[Subject]:
    """Our default allocator (the selected backend), each of the profile's allocators forced,
    then the peers where they support the point."""
    selected = _registry.get().selected_name("argon2")
    subjects = [Subject(f"argonishche ({selected})", our_hasher(point))]
    subjects += [Subject(f"  allocator {name}", our_hasher(point, allocator=name))
                 for name in profile.allocators]
    return subjects + peer_argon2_subjects(point)


def bench_profile(profile: Profile, *, repetitions: int, budget: float, pause: float = 0.0,
                  progress: Progress | None = None, out: TextIO | None = None,
                  results: list[dict[str, Any]] | None = None,
                  summary: dict[str, Any] | None = None) -> dict[str, Any]:
    """The profile's steady and first-hash tables, point by point, appended to *results* (the
    run's Argon2 tables) as each is finished; in *summary* (returned), filled first so that an
    interrupted run keeps it too, the profile's name, the pause and the points skipped."""
    out = sys.stdout if out is None else out
    results = [] if results is None else results
    summary = {} if summary is None else summary
    summary.update(name=profile.name, pause_s=pause, skipped=[])
    reg = _registry.get()
    clock_hz = core_clock_hz()
    pause_note = (f"a {pause:g} s pause before each process" if pause
                  else "no pause between processes")
    why = (" (on a VM with free page reporting, memory freed that long ago may be back with "
           "the host, and faults in slower)" if pause else "")
    print(f"Profile {profile.name}: {profile.description}.  argonishche "
          f"({reg.selected_name('argon2')}) is the default allocator "
          f"({reg.settings.allocator_name}); hot: steady state in this process; first: the "
          f"first hash in a new process, {pause_note}{why}", file=out)
    print(argon2_preamble(clock_hz), file=out)
    plan = []
    for entry in profile.points:
        steady = steady_subjects(entry.point, profile)
        first = first_hash_subjects(entry.point, profile.first_hash_allocators,
                                    peer=profile.first_hash_peer)
        plan.append((entry, steady, first, entry.repetitions(repetitions)))
    if progress:
        progress.start(f"profile {profile.name}", sum(
            (len(steady) + len(first)) * count for _, steady, first, count in plan))
    for entry, steady, first, count in plan:
        try:
            check_same_tags([*steady, *first])  # the new processes' too: an uncounted warm-up
        except MemoryBudgetError as exc:
            print(f"Argon2{entry.point} - {entry.title}: skipped: {exc}", file=out)
            summary["skipped"].append({"point": str(entry.point), "reason": str(exc)})
            continue
        steady_timing = partial(time_interleaved, steady, count, budget, progress,
                                label=f"{entry.point} hot: ")
        _measure(steady_timing, entry, steady, "hot", count, clock_hz, out, results)
        trim_memory()  # the new processes find the machine's memory, not our idle arenas
        first_timing = partial(time_in_new_processes, first, count, pause=pause,
                               progress=progress, label=f"{entry.point} first: ")
        _measure(first_timing, entry, first, "first", count, clock_hz, out, results,
                 protocol=pause_note)
    return summary


def _measure(timed: Callable[[], None], entry: ProfilePoint, subjects: Sequence[Subject],
             mode: str, count: int, clock_hz: float, out: TextIO,
             results: list[dict[str, Any]], protocol: str = "") -> None:
    """Run *timed*, then print and keep the table; interrupted, the repetitions every subject
    finished are printed and kept before KeyboardInterrupt goes on."""
    try:
        timed()
    except KeyboardInterrupt:
        if subjects and subjects[0].samples:
            text, data = argon2_report(entry.point, subjects, clock_hz, mode, planned=count,
                                       title=entry.title, protocol=protocol)
            print(text, file=out)
            results.append(data)
        raise
    text, data = argon2_report(entry.point, subjects, clock_hz, mode, title=entry.title,
                               protocol=protocol)
    print(text, file=out)
    results.append(data)
