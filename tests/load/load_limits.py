"""A memory limit for one child process of tests/load: a memory cgroup made for it (cgroup v2's
``memory.max``, else v1's ``memory.limit_in_bytes``) and removed afterwards, else ``RLIMIT_AS``;
and, for a cgroup, its counters read back once the child has exited (peak usage, how often the
limit was reached, OOM kills).

Why a cgroup first: it limits what the kernel really charges (resident memory and page cache),
and a process over it is OOM-killed, as a container would be.  ``RLIMIT_AS`` limits address
space instead, which thread stacks and malloc's arenas take whole however little of them is
touched, so it is the stricter stand-in and only the fallback.  Swap is kept out (v1's
``memory.memsw.limit_in_bytes``, v2's ``memory.swap.max``) where the kernel accounts it: a group
that could swap would not be held to the limit at all.

The child joins the limit itself (tools/load_verify.py ``--cgroup DIR`` / ``--rlimit-as``), so
this process, pytest's, is never limited.  ``ARGONISHCHE_LOAD_LIMIT`` picks the mechanism:
``auto`` (the default: cgroup v2, cgroup v1, then RLIMIT_AS), ``cgroup`` (one of the two, or
fail) or ``rlimit`` (RLIMIT_AS even where a cgroup could be made).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_made = itertools.count()


class CannotLimit(Exception):
    """This mechanism cannot be used here; the text says why."""


@dataclass
class MemoryLimit:
    """A limit of *limit* bytes by *mechanism* (``cgroup v2``, ``cgroup v1`` or ``RLIMIT_AS``)."""

    mechanism: str
    limit: int
    #: The cgroup's directory, None for RLIMIT_AS.
    directory: Path | None = None
    #: The cgroup's path as /proc/PID/cgroup shows it (relative to the hierarchy's root).
    relative: str | None = None
    #: How swap is kept from being an escape, in words.
    swap: str = ""
    #: Anything changed outside the group to make it, in words (v2: a controller enabled in
    #: the parent, left so: disabling it again would take it from every sibling group too).
    changed: str = ""

    def describe(self) -> str:
        where = f" at {self.directory}" if self.directory else ""
        changed = f"; {self.changed}" if self.changed else ""
        return f"{self.mechanism} {self.limit / 2**30:g} GiB{where} ({self.swap}{changed})"

    def child_arguments(self) -> list[str]:
        if self.directory is not None:
            return ["--cgroup", str(self.directory)]
        return ["--rlimit-as", str(self.limit)]

    def counters(self) -> dict[str, int]:
        """The cgroup's counters since it was made (empty for RLIMIT_AS): ``peak`` bytes,
        ``limit_reached`` (times a charge met the limit), ``oom_kill``, and v1's ``under_oom``."""
        if self.directory is None:
            return {}
        d = self.directory
        if self.mechanism == "cgroup v1":
            oom = _keyed(d / "memory.oom_control")
            found = {"peak": int(_text(d / "memory.max_usage_in_bytes")),
                     "limit_reached": int(_text(d / "memory.failcnt")),
                     "oom_kill": oom.get("oom_kill", 0), "under_oom": oom.get("under_oom", 0)}
            if (d / "memory.memsw.failcnt").exists():
                found["memsw_limit_reached"] = int(_text(d / "memory.memsw.failcnt"))
            return found
        events = _keyed(d / "memory.events")
        found = {"limit_reached": events.get("max", 0), "oom": events.get("oom", 0),
                 "oom_kill": events.get("oom_kill", 0)}
        if (d / "memory.peak").exists():  # Linux 5.19 and later
            found["peak"] = int(_text(d / "memory.peak"))
        return found

    def remove(self) -> None:
        """Remove the cgroup (its child has exited); retried for a few seconds while the kernel
        finishes with an exiting process.  Raises OSError if it cannot."""
        if self.directory is None or not self.directory.exists():
            return
        for attempt in range(50):
            try:
                self.directory.rmdir()
                break
            except OSError as error:
                if error.errno != errno.EBUSY or attempt == 49:
                    raise
                time.sleep(0.1)


def _text(path: Path) -> str:
    return path.read_text().strip()


def _keyed(path: Path) -> dict[str, int]:
    """A flat-keyed cgroup file ("name value" lines) as a dict."""
    pairs = (line.split() for line in _text(path).splitlines())
    return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}


def _mounts() -> tuple[Path | None, Path | None]:
    """(the cgroup2 mount, the v1 memory controller's mount), from /proc/self/mountinfo."""
    v2 = v1 = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mount_point = line.split()[4]
        fstype, _source, options = (line.split(" - ", 1)[1].split() + ["", ""])[:3]
        if fstype == "cgroup2" and v2 is None:
            v2 = Path(mount_point)
        elif fstype == "cgroup" and "memory" in options.split(",") and v1 is None:
            v1 = Path(mount_point)
    return v2, v1


def _own_group(v2: bool) -> str:
    """This process's cgroup path in the v2 hierarchy or the v1 memory hierarchy."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if (v2 and hierarchy == "0" and controllers == "") or \
                (not v2 and "memory" in controllers.split(",")):
            return path
    return "/"


def _parents(mount: Path, own: str) -> list[Path]:
    """Where to make the group: under this process's own group, so that any limit above it
    still applies, else under the hierarchy's root (a container may show the host's path)."""
    own_directory = mount / own.lstrip("/")
    return [own_directory, mount] if own_directory != mount and own_directory.is_dir() \
        else [mount]


def _swap_total() -> int:
    lines = Path("/proc/swaps").read_text().splitlines()[1:]
    return sum(int(line.split()[2]) for line in lines if line.split()) * 1024


def _make_group(parent: Path, name: str) -> Path:
    directory = parent / name
    try:
        directory.mkdir()
    except OSError as error:
        raise CannotLimit(f"cannot make {directory}: {error}") from None
    return directory


def cgroup_v2(limit: int, name: str) -> MemoryLimit:
    v2, _ = _mounts()
    if v2 is None:
        raise CannotLimit("no cgroup2 file system is mounted")
    reasons = []
    for parent in _parents(v2, _own_group(v2=True)):
        controllers = _text(parent / "cgroup.controllers").split()
        if "memory" not in controllers:
            reasons.append(f"{parent} has no memory controller (cgroup.controllers: "
                           f"{' '.join(controllers) or 'none'})")
            continue
        changed = ""
        if "memory" not in _text(parent / "cgroup.subtree_control").split():
            # Only a group without processes of its own (or the real root) may hand a
            # controller down, so this fails in most groups: then the next parent.
            try:
                (parent / "cgroup.subtree_control").write_text("+memory")
            except OSError as error:
                reasons.append(f"cannot enable the memory controller below {parent}: {error}")
                continue
            changed = f"memory controller enabled in {parent}/cgroup.subtree_control"
        directory = _make_group(parent, name)
        group = MemoryLimit("cgroup v2", limit, directory,
                            "/" + str(directory.relative_to(v2)).lstrip("."), changed=changed)
        with _removed_on_failure(group):
            (directory / "memory.max").write_text(str(limit))
            if (directory / "memory.swap.max").exists():
                (directory / "memory.swap.max").write_text("0")
                group.swap = "memory.swap.max 0"
            else:
                group.swap = _no_swap_accounting()
        return group
    raise CannotLimit("; ".join(reasons))


def cgroup_v1(limit: int, name: str) -> MemoryLimit:
    _, v1 = _mounts()
    if v1 is None:
        raise CannotLimit("no cgroup v1 memory controller is mounted")
    reasons = []
    for parent in _parents(v1, _own_group(v2=False)):
        try:
            directory = _make_group(parent, name)
        except CannotLimit as error:
            reasons.append(str(error))
            continue
        group = MemoryLimit("cgroup v1", limit, directory,
                            "/" + str(directory.relative_to(v1)).lstrip("."))
        with _removed_on_failure(group):
            (directory / "memory.limit_in_bytes").write_text(str(limit))
            # After the memory limit: memsw (memory + swap) may never be set below it.
            if (directory / "memory.memsw.limit_in_bytes").exists():
                (directory / "memory.memsw.limit_in_bytes").write_text(str(limit))
                group.swap = "memory.memsw.limit_in_bytes = the limit"
            else:
                (directory / "memory.swappiness").write_text("0")
                group.swap = _no_swap_accounting() + ", memory.swappiness 0"
        return group
    raise CannotLimit("; ".join(reasons))


@contextlib.contextmanager
def _removed_on_failure(group: MemoryLimit) -> Iterator[None]:
    """Setting *group* up: on any failure it is removed; a file that cannot be written makes the
    mechanism unusable here (CannotLimit: the next one is tried), anything else propagates."""
    try:
        yield
    except OSError as error:
        group.remove()
        raise CannotLimit(f"cannot set up {group.directory}: {error}") from None
    except BaseException:
        group.remove()
        raise


def _no_swap_accounting() -> str:
    swap = _swap_total()
    return "no swap on this machine" if swap == 0 else \
        f"swap not accounted by this kernel: {swap / 2**30:.1f} GiB of swap could be used"


def rlimit_as(limit: int) -> MemoryLimit:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and hard < limit:
        raise CannotLimit(f"the hard RLIMIT_AS ({hard} bytes) is below {limit}")
    if soft != resource.RLIM_INFINITY and soft < limit:
        raise CannotLimit(f"this process's RLIMIT_AS ({soft} bytes) is already below {limit}")
    return MemoryLimit("RLIMIT_AS", limit,
                       swap="address space beyond what the process has reserved when the burst "
                            "starts (its 64 threads' stacks and malloc arenas reserve about "
                            "1.5 GiB of it before any hash); swap does not enter into it")


def choice() -> str:
    chosen = os.environ.get("ARGONISHCHE_LOAD_LIMIT", "auto").strip() or "auto"
    if chosen not in ("auto", "cgroup", "rlimit"):
        raise ValueError(f"ARGONISHCHE_LOAD_LIMIT must be auto, cgroup or rlimit, not {chosen!r}")
    return chosen


def available(limit: int, name: str) -> MemoryLimit:
    """A fresh limit by the first mechanism ``ARGONISHCHE_LOAD_LIMIT`` allows that works here.

    :raises CannotLimit: none works; the text gives each one's reason.
    """
    chosen = choice()
    makers = {"auto": [cgroup_v2, cgroup_v1, None], "cgroup": [cgroup_v2, cgroup_v1],
              "rlimit": [None]}[chosen]
    reasons = []
    for make in makers:
        try:
            return make(limit, name) if make is not None else rlimit_as(limit)
        except CannotLimit as error:
            label = "RLIMIT_AS" if make is None else make.__name__.replace("_", " ")
            reasons.append(f"{label}: {error}")
    raise CannotLimit(f"ARGONISHCHE_LOAD_LIMIT={chosen}: " + "; ".join(reasons))


@contextlib.contextmanager
def memory_limit(limit: int, label: str) -> Iterator[MemoryLimit]:
    """A fresh limit for one child (see :func:`available`), removed afterwards, also when the
    test fails."""
    group = available(limit, f"argonishche-load-{os.getpid()}-{next(_made)}-{label}")
    try:
        yield group
    finally:
        group.remove()
