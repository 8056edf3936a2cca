"""No process-wide stalls (issue 24, item 6), checked without timing.

Faulting memory in with MADV_POPULATE_WRITE or MAP_POPULATE holds the process's memory-map lock
until the system call returns, and every other thread's mmap, munmap and mprotect waits
meanwhile (an event loop starting an executor thread maps its stack).  One call for a whole
64 MiB mapping stalled such a loop, and so did 2 MiB steps on a busy machine; so memory is
faulted in a page at a time (a page fault takes only its own range's lock), whatever the
allocator or path.  tools/bench_async_stall.py measures the
stalls themselves."""

from __future__ import annotations

import mmap
import re
import shutil
import subprocess
import sys
import threading

import argonishche
import pytest
from argonishche import argon2_hash
from argonishche._core import lib
from support import PASSWORD, SALT

PAGE = mmap.PAGESIZE  # the most one pre-fault may fault in at a time
COSTS = dict(time_cost=1, memory_cost=16384, parallelism=4)  # 16 MiB: 8 steps at least


def on_a_new_thread(**kwargs: object) -> None:
    """A hash on a thread of its own (an event loop's executor thread, say)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            argon2_hash(PASSWORD, SALT, **COSTS, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised on the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive() and not errors, errors


def largest_populate_after(**kwargs: object) -> int:
    lib.argonishche_largest_populate(1)
    on_a_new_thread(**kwargs)
    return int(lib.argonishche_largest_populate(0))


@pytest.mark.parametrize("path", ["arena", "hugepages", "wipe"])
def test_memory_is_faulted_in_a_page_at_a_time(trimmed, path):
    if path == "wipe":  # a wipe callback: a mapping Python sees, faulted in before the hash
        kwargs: dict[str, object] = {"allocator": "arena", "wipe": lambda view: None}
    else:  # nothing kept (trimmed): a fresh mapping
        kwargs = {"allocator": path}
    largest = largest_populate_after(**kwargs)
    assert largest <= PAGE, f"{path}: one pre-fault faulted in {largest} bytes at once"
    if sys.platform.startswith("linux") and path != "hugepages":  # hugepages faults on use
        assert largest > 0, f"{path}: nothing was faulted in ahead (or the counter is dead)"


def test_locked_memory_is_faulted_in_a_page_at_a_time_before_mlock(trimmed):
    import resource
    if resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] < 64 * 1024 * 1024:
        pytest.skip("RLIMIT_MEMLOCK below 64 MiB: cannot lock a 16 MiB arena here reliably")
    largest = largest_populate_after(allocator="locked")
    assert 0 < largest <= PAGE
    argonishche.trim_memory()


TRACED = """
import threading, argonishche
def hash_once():
    argonishche.argon2_hash(b"password", b"saltsalt", time_cost=1, memory_cost=65536,
                            parallelism=4)
thread = threading.Thread(target=hash_once); thread.start(); thread.join()
argonishche.argon2_hash(b"password", b"saltsalt", time_cost=1, memory_cost=65536,
                        parallelism=4, wipe=lambda view: None)
print("hashed")
"""


def test_no_system_call_populates_memory(tmp_path):
    """End to end, as the kernel sees it: under strace, no MADV_POPULATE_WRITE and no
    MAP_POPULATE mapping (before: one call of 64 MiB, then calls of 2 MiB)."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("no strace here to watch the system calls")
    log = tmp_path / "trace"
    result = subprocess.run([strace, "-f", "-qq", "-e", "trace=mmap,madvise", "-o", str(log),
                             sys.executable, "-c", TRACED],
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0 and "ptrace" in result.stderr:
        pytest.skip(f"strace cannot trace here: {result.stderr.strip()[:200]}")
    assert result.returncode == 0 and "hashed" in result.stdout, result.stderr[-2000:]
    trace = log.read_text()
    populates = re.findall(r"madvise\(0x[0-9a-f]+, \d+, MADV_POPULATE_WRITE", trace)
    mapped = re.findall(r"mmap\(NULL, \d+, [^)]*MAP_POPULATE", trace)
    assert "madvise(" in trace, "strace saw no madvise at all (MADV_DONTDUMP): a dead trace"
    assert not populates and not mapped, (populates[:5], mapped[:5])
