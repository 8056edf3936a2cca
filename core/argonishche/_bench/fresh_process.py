"""The first hash in a new process: what a server's first login after a start or a deploy costs.

Steady state hides it: there the work memory of the last hash is kept, and every page of it is
already mapped and zeroed.  A new process has none.  Each sample here is a new interpreter
(``python -E -c``, this one's executable) that imports the library, hashes once at tiny memory
with the point's type and lanes (so that imports, the backend's selection and the lane threads
are warm and what is timed is the memory, not the start-up), then times one hash at the point
and prints the time, the tag, and the work-memory counters and page faults around that hash,
for the memory column (see :mod:`argonishche._bench.memory_use`).

Subjects are interleaved, one process each in turn, the order rotating every repetition, so
that drift hits them alike.  ``pause`` sleeps before each process: on a VM with free page
reporting, memory freed a few seconds ago has gone back to the host and faults in much slower
than memory freed a moment ago, so the protocol (which the table prints) matters.

A subject's ``run`` starts one such process and returns its tag, so that the suite's tag check
(:func:`argonishche._bench.timing.check_same_tags`) runs each once, uncounted, before any is timed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .memory_use import Counters
from .points import PASSWORD, SALT, Point
from .timing import Subject, kept_whole_rounds, rounds

if TYPE_CHECKING:
    from typing import Any

    from .progress import Progress

#: The child: *prepare* defines ``hash_at(memory_cost)`` and ``pool_counters()``.
CHILD = """\
import json, time
try:
    import resource
    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
except ImportError:
    def faults():
        return None
{prepare}
def counters():
    return [*pool_counters(), faults()]
hash_at({tiny})
before = counters()
started = time.perf_counter()
tag = hash_at({memory_cost})
elapsed = time.perf_counter() - started
print(json.dumps({{"seconds": elapsed, "tag": tag.hex(), "before": before,
                  "after": counters()}}))
"""

OURS = """\
import argonishche
def hash_at(memory_cost):
    return argonishche.argon2_hash({password!r}, {salt!r}, type={type!r}, time_cost={t},
                                   memory_cost=memory_cost, parallelism={p},
                                   allocator={allocator!r})
def pool_counters():
    state = argonishche.memory_budget()
    return [state.maps, state.reuses]
"""

ARGON2_CFFI = """\
import argon2.low_level as low
def hash_at(memory_cost):
    return low.hash_secret_raw({password!r}, {salt!r}, time_cost={t}, memory_cost=memory_cost,
                               parallelism={p}, hash_len=32, type=low.Type.{type})
def pool_counters():
    return [0, 0]
"""


@dataclass
class NewProcessSubject(Subject):
    """A subject whose samples each come from a new process running *code*."""

    code: str = ""

    def spawn(self) -> dict[str, Any]:
        """Run one process; its result: seconds, the tag in hex, and the counters (maps,
        reuses, page faults) before and after its hash.  RuntimeError, with the end of its
        stderr (a MemoryBudgetError in it, say), if it failed."""
        process = subprocess.run([sys.executable, "-E", "-c", self.code], capture_output=True,
                                 text=True)
        if process.returncode != 0:
            tail = process.stderr.strip().splitlines()[-3:]
            raise RuntimeError(f"{self.name.strip()}: the new process failed "
                               f"(exit {process.returncode}): {' / '.join(tail)}")
        result: dict[str, Any] = json.loads(process.stdout.strip().splitlines()[-1])
        return result

    def spawn_for_tag(self) -> bytes:
        return bytes.fromhex(self.spawn()["tag"])


def _new_process_subject(name: str, code: str) -> NewProcessSubject:
    subject = NewProcessSubject(name, lambda: b"", code=code)
    subject.run = subject.spawn_for_tag
    return subject


def child_code(prepare: str, point: Point) -> str:
    return CHILD.format(prepare=prepare, tiny=8 * point.parallelism,
                        memory_cost=point.memory_cost)


def first_hash_subjects(point: Point, allocators: tuple[str | None, ...], *,
                        peer: bool = True) -> list[NewProcessSubject]:
    """Ours with each of *allocators* (None: the default, named as the steady table's first
    row), then argon2-cffi's if *peer* and it is installed."""
    from .. import _registry

    selected = _registry.get().selected_name("argon2")
    values = dict(password=PASSWORD, salt=SALT, t=point.time_cost, p=point.parallelism)
    subjects = []
    for allocator in allocators:
        name = f"argonishche ({selected})" if allocator is None else f"  allocator {allocator}"
        prepare = OURS.format(**values, type=point.type, allocator=allocator)
        subjects.append(_new_process_subject(name, child_code(prepare, point)))
    if peer and importlib.util.find_spec("argon2") is not None:
        prepare = ARGON2_CFFI.format(**values, type=point.type.upper())
        subjects.append(_new_process_subject("argon2-cffi", child_code(prepare, point)))
    return subjects


def time_in_new_processes(subjects: list[NewProcessSubject], repetitions: int, *,
                          pause: float = 0.0, progress: Progress | None = None,
                          label: str = "") -> None:
    """Fill each subject's samples (and memory counts): *repetitions* rounds, one new process
    per subject per round, the order rotating, after *pause* seconds each.  A process whose tag
    differs from the others' is refused (RuntimeError).  Interrupted (Ctrl-C), every subject
    keeps the rounds all of them finished, and KeyboardInterrupt propagates."""
    agreed: str | None = None
    with kept_whole_rounds(subjects):
        for index in rounds(subjects, repetitions, progress, label):
            subject = subjects[index]
            if pause:
                time.sleep(pause)
            result = subject.spawn()
            agreed = agreed or result["tag"]
            if result["tag"] != agreed:
                raise RuntimeError(f"subjects disagree in new processes, nothing kept: "
                                   f"{subject.name.strip()}: {result['tag'][:16]}, "
                                   f"others {agreed[:16]}")
            subject.memory.add(Counters(*result["before"]), Counters(*result["after"]), 1)
            subject.samples.append(result["seconds"])
