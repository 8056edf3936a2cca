"""Warnings that point at the caller's line, not at argonishche's.

A plugin that fails to load is found on the first hash or ``backends()`` call, several frames
deep inside the registry; a fixed ``stacklevel`` would blame whichever internal function happened
to start it.  This walks out of the package instead.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(message: str, category: type[Warning] = RuntimeWarning) -> None:
    """Warn with the location of the first caller outside argonishche."""
    frame: FrameType | None
    level, frame = 2, sys._getframe(1)  # stacklevel 2: warn()'s caller
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)
