"""Selection: which usable backend hashes each algorithm.

- ``ARGONISHCHE_BACKEND`` forces one backend for both algorithms.  A forced name that is not
  registered, or cannot run here, is an error that says why and lists what is available; never a
  silent fallback.
- Otherwise the usable backend with the highest priority (ties: the name decides, so the choice is
  the same in every process).
- ``ARGONISHCHE_SELECT=measure`` (or :func:`calibrate`) instead times every usable backend
  briefly and takes the fastest per algorithm: some CPUs run a narrower ISA faster.

The result is two kernel-table pointers; hashing never calls pluggy or this module again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from . import _driver
from ._discovery import AVAILABLE, SELECTED, BackendEntry
from ._settings import Settings
from .exceptions import BackendError, SettingError

ALGORITHMS = ("argon2", "blake2b")
#: Backends that come in wheels of their own, for the hint when one is asked for but missing.
PLUGIN_DISTRIBUTIONS = {"avx512": "argonishche-avx512"}


def summary(entries: Iterable[BackendEntry]) -> str:
    """Every backend with its state and reason, for error messages."""
    return "; ".join(f"{e.name} ({e.state}{': ' + e.reason if e.reason else ''})"
                     for e in entries) or "no backends registered"


def usable(entries: Iterable[BackendEntry]) -> list[BackendEntry]:
    return [e for e in entries if e.table is not None]


def by_priority(settings: Settings,
                entries: dict[str, BackendEntry]) -> dict[str, BackendEntry]:
    """{algorithm: entry} as the settings ask, without measuring.

    :raises SettingError: the forced backend is not registered.
    :raises BackendError: the forced backend cannot run here, or no backend can.
    """
    candidates = usable(entries.values())
    if settings.backend is not None:
        entry = entries.get(settings.backend)
        if entry is None:
            wheel = PLUGIN_DISTRIBUTIONS.get(settings.backend)
            hint = f" ({settings.backend} comes with pip install {wheel})" if wheel else ""
            raise SettingError("ARGONISHCHE_BACKEND", settings.backend,
                               f"a registered backend{hint}; registered: "
                               f"{summary(entries.values())}")
        if entry.table is None:
            raise BackendError(
                f"ARGONISHCHE_BACKEND={settings.backend} cannot be used: {entry.state}: "
                f"{entry.reason}. Available: {', '.join(e.name for e in candidates) or 'none'}")
        return dict.fromkeys(ALGORITHMS, entry)
    if not candidates:
        raise BackendError(f"no usable backend. {summary(entries.values())}")
    best = max(candidates, key=lambda e: (e.backend.priority, e.name))
    return dict.fromkeys(ALGORITHMS, best)


def mark(entries: Iterable[BackendEntry], choice: dict[str, BackendEntry]) -> None:
    """Record *choice* in the entries' states, for ``backends()`` and ``info``."""
    for entry in entries:
        entry.selected_for.clear()
        if entry.state == SELECTED:
            entry.state = AVAILABLE
    for algorithm, entry in choice.items():
        entry.selected_for.append(algorithm)
        entry.state = SELECTED


def _workloads() -> dict[str, Callable[[Any], object]]:
    message = bytes(65536)
    return {
        "argon2": lambda t: _driver.argon2(
            t, t, type="d", version=0x13, time_cost=1, memory_cost=256, parallelism=1,
            threads=1, password=b"calibrate", salt=bytes(16), secret=b"",
            associated_data=b"", hash_len=32),
        "blake2b": lambda t: _driver.blake2b_update(
            _driver.new_blake2b_state(t, 64, b"", b"", b""), message),
    }


def measure(candidates: list[BackendEntry], repetitions: int) -> dict[str, BackendEntry]:
    """Time every candidate and return the fastest per algorithm.

    Each backend hashes a small Argon2d (t=1, 256 KiB) and 64 KiB of BLAKE2b, interleaved with
    the others, *repetitions* times; the best time counts (noise only adds time).  The times are
    kept in each entry's ``measured_us``.
    """
    work = _workloads()
    for _ in range(repetitions):
        for entry in candidates:
            for algorithm, run in work.items():
                started = time.perf_counter()
                run(entry.table)
                elapsed = (time.perf_counter() - started) * 1e6
                best = entry.measured_us.get(algorithm, float("inf"))
                entry.measured_us[algorithm] = min(best, elapsed)
    return {algorithm: min(candidates, key=lambda e: e.measured_us[algorithm])
            for algorithm in ALGORITHMS}
