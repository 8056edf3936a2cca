"""Warnings that point at the caller's line, not at argonishche's, and that can wait.

A plugin that fails to load is found on the first hash or ``backends()`` call, several frames
deep inside the registry; a fixed ``stacklevel`` would blame whichever internal function happened
to start it.  This walks out of the package instead.

A warning can run anyone's code (``logging.captureWarnings`` sends it to logging, whose lock
``fork()`` holds while it waits for the registry's), so the registry build must not warn while
it holds a lock: within :func:`collected`, this thread's warnings are kept, and given with
:func:`emit` once every lock is released.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import sys
import warnings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

Collected = list[tuple[str, type[Warning]]]

# Per thread: another thread's warnings (a hash's, while this one builds) are not kept.
_kept = _thread._local()


def warn(message: str, category: type[Warning] = RuntimeWarning) -> None:
    """Warn with the location of the first caller outside argonishche (or keep the warning,
    within :func:`collected`)."""
    kept: Collected | None = getattr(_kept, "warnings", None)
    if kept is not None:
        kept.append((message, category))
        return
    frame: FrameType | None
    level, frame = 2, sys._getframe(1)  # stacklevel 2: warn()'s caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)


@contextlib.contextmanager
def collected() -> Iterator[Collected]:
    """Keep this thread's :func:`warn` calls in the list yielded, in order, instead of giving
    them (nested: the inner list keeps them, and the outer does not see them)."""
    outer = getattr(_kept, "warnings", None)
    kept: Collected = []
    _kept.warnings = kept
    try:
        yield kept
    finally:
        _kept.warnings = outer


def emit(kept: Collected) -> None:
    """Give the warnings :func:`collected` kept (call it holding no lock)."""
    for message, category in kept:
        warn(message, category)
