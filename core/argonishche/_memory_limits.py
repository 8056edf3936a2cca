"""How much memory this process may use, and whether huge pages suit it: the work-memory budget's
default size and where it came from.

**The default budget** is half of the least of what the process may really use: its cgroup's
memory limit (v2 ``memory.max`` or ``memory.high``, or v1's limit, of its own cgroup and every
ancestor), physical memory, and what ``RLIMIT_AS`` and ``RLIMIT_DATA`` leave of the address space
when the first hash runs (private anonymous mappings count against both).  Half, because work
memory is never all a process holds: the interpreter, the application and its caches, the lane
threads' stacks and the page cache of a container share the same limit, and a cgroup that reaches
its limit is OOM-killed rather than told no.  A process that runs alone, or a pre-fork server
that wants its workers to share one limit, sets ``ARGONISHCHE_MEMORY_BUDGET_MIB`` (each worker
then the limit's share it should have).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

MIB = 1024 * 1024
#: The share of what the process may use that the default budget takes (see the module's text).
DEFAULT_FRACTION = 0.5
#: Limits at or above this are "unlimited" (cgroup v1 writes 2**63 rounded down to a page).
UNLIMITED = 1 << 62


def _read(path: str) -> str | None:
    # Bytes, decoded here: a text-mode open looks its codec up (importing encodings.ascii) and
    # wraps the file twice, on the first hash's path.
    try:
        with open(path, "rb", buffering=0) as f:
            return f.read().decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None


def _limit_value(text: str | None) -> int | None:
    """A limit file's value in bytes, or None for "max", unlimited or unreadable."""
    if text is None:
        return None
    text = text.strip()
    if not text.isdigit():
        return None
    value = int(text)
    return value if 0 < value < UNLIMITED else None


def _cgroup_mounts(mountinfo: str) -> tuple[str | None, str | None]:
    """(the cgroup v2 mount point, the v1 memory controller's), from /proc/self/mountinfo."""
    v2 = v1 = None
    for line in mountinfo.splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        after = line.split(" - ", 1)[1].split()
        fstype, options = after[0], (after[2] if len(after) > 2 else "")
        if fstype == "cgroup2" and v2 is None:
            v2 = fields[4]
        elif fstype == "cgroup" and "memory" in options.split(",") and v1 is None:
            v1 = fields[4]
    return v2, v1


def _ancestors(mount: str, path: str) -> Iterator[str]:
    """The directories of cgroup *path* under *mount*, itself first, up to the mount's root.  In
    a container the path may name the host's hierarchy, which is not mounted: then the root."""
    directory = os.path.join(mount, path.lstrip("/"))
    if not os.path.isdir(directory):
        directory = mount
    while True:
        yield directory
        if os.path.samefile(directory, mount) or directory == os.path.dirname(directory):
            return
        directory = os.path.dirname(directory)


def cgroup_limit(proc: str = "/proc/self") -> tuple[int, str] | None:
    """(bytes, description) of the memory limit of this process's cgroup, or None if none is
    set (or none can be read: not Linux, no cgroup file system)."""
    groups = _read(f"{proc}/cgroup")
    mountinfo = _read(f"{proc}/mountinfo")
    if groups is None or mountinfo is None:
        return None
    v2_mount, v1_mount = _cgroup_mounts(mountinfo)
    found: list[tuple[int, str]] = []
    for line in groups.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "" and v2_mount:
            for directory in _ancestors(v2_mount, path):
                for name in ("memory.max", "memory.high"):
                    value = _limit_value(_read(os.path.join(directory, name)))
                    if value is not None:
                        found.append((value, f"cgroup v2 {name}, {os.path.join(directory, name)}"))
        elif "memory" in controllers.split(",") and v1_mount:
            for directory in _ancestors(v1_mount, path):
                value = _limit_value(_read(os.path.join(directory, "memory.limit_in_bytes")))
                if value is not None:
                    found.append((value, f"cgroup v1 memory.limit_in_bytes, "
                                         f"{os.path.join(directory, 'memory.limit_in_bytes')}"))
    return min(found) if found else None


def physical_memory() -> int | None:
    """Bytes of RAM of the machine, or None where it cannot be told."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        pass
    if os.name == "nt":  # pragma: no cover - Windows
        import ctypes

        class Status(ctypes.Structure):
            _fields_ = [("length", ctypes.c_ulong), ("load", ctypes.c_ulong),
                        ("total", ctypes.c_ulonglong), ("rest", ctypes.c_ulonglong * 6)]

        status = Status(length=ctypes.sizeof(Status))
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):  # type: ignore[attr-defined]
            return int(status.total)
    return None


#: What each resource limit counts, as /proc/self/status names it.
_COUNTED_BY = {"RLIMIT_AS": "VmSize", "RLIMIT_DATA": "VmData"}


def _in_use(field: str) -> int:
    """Bytes of /proc/self/status's *field* (VmSize, VmData), or 0 where it cannot be read."""
    text = _read("/proc/self/status") or ""
    for line in text.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    return 0


def _resource_limits() -> list[tuple[int, str]]:
    """(bytes, description) of what RLIMIT_AS and RLIMIT_DATA leave: the limit less what the
    process has already mapped.  Address space is not memory: every thread's stack and every
    malloc arena glibc makes is reserved whole (64 threads: about 1.5 GiB before any hash)."""
    try:
        import resource
    except ImportError:  # Windows
        return []
    found = []
    for name, field in _COUNTED_BY.items():
        limit = getattr(resource, name, None)
        if limit is None:
            continue
        soft = resource.getrlimit(limit)[0]
        if soft == resource.RLIM_INFINITY or not 0 < soft < UNLIMITED:
            continue
        used = _in_use(field)
        left = max(soft - used, MIB)
        found.append((left, name if not used else
                      f"what {name} leaves ({size_text(left)} of {size_text(soft)})"))
    return found


def size_text(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / MIB:.0f} MiB"


def memory_limit() -> tuple[int, str] | None:
    """(bytes, what it is) of the least of the process's cgroup limit, physical memory and its
    resource limits: the most memory the process can really have; None where none is known."""
    candidates = _resource_limits()
    cgroup = cgroup_limit()
    if cgroup is not None:
        candidates.append(cgroup)
    physical = physical_memory()
    if physical:
        candidates.append((physical, "physical memory"))
    return min(candidates) if candidates else None


def default_budget() -> tuple[int, str]:
    """(bytes, where it came from): :data:`DEFAULT_FRACTION` of :func:`memory_limit`, in whole
    MiB (at least 1)."""
    found = memory_limit()
    if found is None:  # nothing known: a size that still lets RFC 9106's 2 GiB profile run
        return 4096 * MIB, "no limit known: 4 GiB"
    limit, where = found
    budget = max(MIB, int(limit * DEFAULT_FRACTION) // MIB * MIB)
    if not where.startswith("what "):  # "what RLIMIT_AS leaves (...)" says its size already
        where = f"{where} ({size_text(limit)})"
    return budget, f"half of {where}"


# ---- huge pages ---------------------------------------------------------------------------------

#: The virtio-balloon feature bit of free page reporting (VIRTIO_BALLOON_F_REPORTING, the virtio
#: specification 1.2, section 5.5.3).
BALLOON_F_REPORTING = 5


def free_page_reporting(sysfs: str = "/sys") -> str | None:
    """The virtio-balloon device that reports free memory to the hypervisor (its sysfs path), or
    None.  Such a host takes back every free 2 MiB block the guest reports, so a fresh huge page
    faults in from the host, slower than small pages, which come from memory the guest still has
    (docs/memory.md has the figures)."""
    driver = os.path.join(sysfs, "bus", "virtio", "drivers", "virtio_balloon")
    try:
        devices = sorted(name for name in os.listdir(driver) if name.startswith("virtio"))
    except OSError:  # no such driver: not a VM with a balloon, or not Linux
        return None
    for device in devices:
        features = (_read(os.path.join(driver, device, "features")) or "").strip()
        if len(features) > BALLOON_F_REPORTING and features[BALLOON_F_REPORTING] == "1":
            return os.path.join(driver, device)
    return None


def huge_pages(mode: str) -> tuple[bool, str]:
    """(huge pages for kept memory, why) for ARGONISHCHE_MEMORY_HUGE_PAGES's *mode*."""
    if mode != "auto":
        return mode == "on", f"ARGONISHCHE_MEMORY_HUGE_PAGES={mode}"
    reporting = free_page_reporting()
    if reporting is not None:
        return False, (f"auto: off, as this VM reports free memory to its host ({reporting}), "
                       f"which makes fresh huge pages slow to fault in")
    return True, "auto: on"


