"""The remembered selection: what a measurement chose, kept per CPU and per set of backend modules.

A record lives in ``<the user's cache directory>/argonishche/selection/`` (written and read as
:mod:`argonishche._trust.record_store` says: owner-only, atomic, never trusted if odd).  It counts
only for the exact key it was made under:

- the CPU (:func:`argonishche._trust.cpu_gate.identity`: vendor, family/model/stepping, the
  feature words the gate reads), so a home directory shared between machines never carries a
  choice from one
  CPU to another;
- every candidate backend: its name, module and the module file's path, size and modification
  time, so an upgraded or added backend is measured again;
- argonishche's version and kernel ABI.

The file is named after a CRC-32 of the key, so that a machine with several environments (or a
shared home directory with several CPUs) keeps a record for each instead of measuring in turn.
The CRC only spreads the records out; the key itself is compared whole.  A stale record costs
nothing but a measurement: whatever it says, only backends that passed their checks in this
process can be chosen, and a choice its own times do not make is measured over
(:func:`argonishche._selection.contradiction`).
"""

from __future__ import annotations

import binascii
import os
from collections.abc import Iterable, Mapping

from ._core import lib
from ._trust import cpu_gate, record_store
from ._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ._named_tuple import NamedTuple

if TYPE_CHECKING:
    from ._discovery import BackendEntry

RECORD_KIND = "selection"
#: The record format; a reader of another format ignores the record.
FORMAT = "argonishche selection 1"


class Remembered(NamedTuple):
    """A record's content that matched the key."""

    choices: dict[str, str]                   # algorithm -> backend
    ns_per_kib: dict[str, dict[str, float]]   # algorithm -> backend -> ns per KiB
    noise: dict[str, dict[str, float]]        # algorithm -> backend -> noise in that time
    measured_at: str
    path: str


def module_identity(entry: BackendEntry) -> str:
    """``name module path size mtime_ns`` of *entry*'s loaded kernel module."""
    path = getattr(entry.module, "__file__", None) or "-"
    try:
        status = os.stat(path)
        size, mtime = status.st_size, status.st_mtime_ns
    except (OSError, ValueError):
        size = mtime = -1
    return " ".join(str(part) for part in (entry.name, entry.backend.kernel_module, path, size,
                                           mtime))


def key(candidates: Iterable[BackendEntry]) -> list[tuple[str, str]]:
    """The fields a record must carry, exactly, to be used for *candidates* on this CPU (with
    whitespace as a record keeps it: a module path may hold any)."""
    fields = [("record", FORMAT), ("argonishche", __version__),
              ("kernel_abi", str(lib.ARGONISHCHE_KERNEL_ABI)), ("cpu", cpu_gate.identity()),
              *(("backend", module_identity(e))
                for e in sorted(candidates, key=lambda e: e.name))]
    return [(name, " ".join(value.split())) for name, value in fields]


def path_for(directory: str, fields: list[tuple[str, str]]) -> str:
    text = "".join(f"{k}: {v}\n" for k, v in fields)
    return os.path.join(directory, f"{binascii.crc32(text.encode('utf-8')):08x}")


def writable_directory() -> tuple[str | None, str]:
    return record_store.writable_directory(RECORD_KIND)


def recall(fields: list[tuple[str, str]], names: Iterable[str]) -> Remembered | None:
    """The record made under exactly *fields* for the backends *names*, if there is one that
    reads back whole."""
    directory = record_store.directory(RECORD_KIND)
    if directory is None:
        return None
    path = path_for(directory, fields)
    record = record_store.read(path)
    if record is None:
        return None
    expected: dict[str, list[str]] = {}
    for k, v in fields:
        expected.setdefault(k, []).append(v)
    if any(record.get(k) != v for k, v in expected.items()):
        return None
    names = set(names)
    choices: dict[str, str] = {}
    times: dict[str, dict[str, float]] = {}
    noise: dict[str, dict[str, float]] = {}
    try:
        for algorithm in ("argon2", "blake2b"):
            [choices[algorithm]] = record[algorithm]
            rows = [line.split(" ") for line in record[f"{algorithm} time"]]
            times[algorithm] = {name: float(ns) for name, ns, _ in rows}
            noise[algorithm] = {name: float(gap) for name, _, gap in rows}
        [measured_at] = record["measured_at"]
    except (KeyError, ValueError):  # missing, repeated or malformed fields
        return None
    values = [v for by_name in (*times.values(), *noise.values()) for v in by_name.values()]
    if (set(choices.values()) - names or any(set(t) != names for t in times.values())
            or not all(0 < t < float("inf") for by_name in times.values()
                       for t in by_name.values())
            or not all(0 <= v < float("inf") for v in values)):
        return None
    return Remembered(choices, times, noise, measured_at, path)


def remember(directory: str, fields: list[tuple[str, str]], choices: Mapping[str, str],
             ns_per_kib: Mapping[str, Mapping[str, float]],
             noise: Mapping[str, Mapping[str, float]], measured_at: str, rounds: int,
             seconds: float) -> tuple[str, str]:
    """Write the record; (its path, "") or ("", why it could not be written)."""
    path = path_for(directory, fields)
    body = [("measured_at", measured_at), ("rounds", str(rounds)), ("seconds", f"{seconds:.4f}")]
    for algorithm, backend in choices.items():
        body.append((algorithm, backend))
        body += [(f"{algorithm} time", f"{name} {ns:.2f} {noise[algorithm][name]:.4f}")
                 for name, ns in sorted(ns_per_kib[algorithm].items())]
    error = record_store.write(path, [*fields, *body])
    return ("", error) if error else (path, "")
