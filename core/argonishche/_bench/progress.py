"""The progress bar ``argonishche bench`` draws on stderr when it is a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO


class Progress:
    """A progress bar on one line of *stream*: ``argon2 [#######.........]  12/63  label``.

    Nothing is drawn until *delay* seconds after it was made, so short runs stay silent, and it
    is redrawn at most ten times a second.  Each section of a run calls :meth:`start` with its
    number of steps, then :meth:`step` before each one.
    """

    def __init__(self, stream: TextIO = sys.stderr, *, delay: float = 1.0, width: int = 24,
                 clock: Callable[[], float] = time.monotonic, columns: int | None = None) -> None:
        self.stream, self.delay, self.width, self.clock = stream, delay, width, clock
        if columns is None:
            import shutil
            columns = shutil.get_terminal_size().columns
        self.columns = max(columns - 1, 20)
        self.created = clock()
        self.last_draw = float("-inf")
        self.title, self.total, self.done = "", 1, 0
        self.drawn = False

    def start(self, title: str, total: int) -> None:
        self.title, self.total, self.done = title, max(total, 1), 0

    def render(self, label: str = "") -> str:
        filled = self.width * min(self.done, self.total) // self.total
        text = (f"{self.title} [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{self.done:>{len(str(self.total))}}/{self.total}  {label}")
        return text[:self.columns]

    def step(self, label: str = "") -> None:
        now = self.clock()
        if now - self.created >= self.delay and now - self.last_draw >= 0.1:
            self.stream.write("\r\033[K" + self.render(label))
            self.stream.flush()
            self.last_draw, self.drawn = now, True
        self.done += 1

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False
