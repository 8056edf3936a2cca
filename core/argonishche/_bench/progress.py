"""The progress bar ``argonishche bench`` draws on stderr when it is a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO


class Progress:
    """A progress bar on one line of *stream*: ``argon2 [#######.........]  12/63  label``.

    Nothing is drawn until *delay* seconds after it was made, so short runs stay silent, and it
    is redrawn at most ten times a second.  Each section of a run calls :meth:`start` with its
    number of steps, then :meth:`step` before each one.  Output written meanwhile (a table on
    stdout, the same terminal) goes through :func:`printing_above`, which clears the bar first.
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
        self.hidden = False  # cleared for output: the next step draws it again, however soon

    def start(self, title: str, total: int) -> None:
        self.title, self.total, self.done = title, max(total, 1), 0

    def render(self, label: str = "") -> str:
        filled = self.width * min(self.done, self.total) // self.total
        text = (f"{self.title} [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{self.done:>{len(str(self.total))}}/{self.total}  {label}")
        return text[:self.columns]

    def step(self, label: str = "") -> None:
        now = self.clock()
        if self.hidden or (now - self.created >= self.delay and now - self.last_draw >= 0.1):
            self.stream.write("\r\033[K" + self.render(label))
            self.stream.flush()
            self.last_draw, self.drawn, self.hidden = now, True, False
        self.done += 1

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.drawn = False

    def hide(self) -> None:
        """Clear the bar for other output on its terminal; the next :meth:`step`, if the work
        goes on, draws it again below that output."""
        if self.drawn:
            self.clear()
            self.hidden = True


class OutputAbove:
    """A text stream (stdout) that clears *progress*'s bar before each write, so that nothing
    printed starts on the bar's line (``...rep 7/7 backenArgon2d t=1``)."""

    def __init__(self, stream: TextIO, progress: Progress) -> None:
        self.stream, self.progress = stream, progress

    def write(self, text: str) -> int:
        self.progress.hide()
        written = self.stream.write(text)
        # Out before the bar is drawn again on the other stream: a pipe's buffer would not be.
        self.stream.flush()
        return written

    def __getattr__(self, name: str) -> object:  # flush, fileno, isatty, encoding...
        return getattr(self.stream, name)


@contextmanager
def printing_above(progress: Progress | None) -> Iterator[None]:
    """Within: sys.stdout clears *progress*'s bar before anything is written to it (the suites
    print to sys.stdout as they find it); without a bar, sys.stdout as it is."""
    if progress is None:
        yield
        return
    above: TextIO = OutputAbove(sys.stdout, progress)  # type: ignore[assignment]
    with redirect_stdout(above):
        yield
