"""The command line's argument types, and its way of failing.

Each flag's value is checked by argparse as it is parsed, so a bad one is a usage error (status 2,
argparse's message on stderr) before anything runs.

Written once for every subcommand: ``float()`` alone takes ``nan``, ``inf`` and ``1e300``, and
``int()`` any size, and such values made tracebacks, endless runs or negative rates.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable


def fail(message: str, status: int) -> int:
    """Say *message* on stderr in the reference ``argon2`` program's wording for every failure
    ("Error: <message>"), and return the exit *status*."""
    print(f"Error: {message}", file=sys.stderr)
    return status


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """A decimal integer in *low*..*high*."""
    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:  # also more digits than int() reads (sys.get_int_max_str_digits)
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be in {low}..{high}, got {value}")
        return value
    return parse


def real_number(unit: str, upper: float, *, zero: bool = False) -> Callable[[str], float]:
    """A finite number of *unit* above 0 (from 0 if *zero*) and at most *upper*."""
    lowest = "from 0" if zero else "above 0"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (0 <= value if zero else 0 < value) and value <= upper):
            raise argparse.ArgumentTypeError(
                f"expected {unit} {lowest} to {upper:g}, not {text!r}")
        return value
    return parse


def output_file(text: str) -> str:
    """A file that can be written: checked before the run, not after its minutes of work."""
    directory = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    if not os.path.isdir(directory):
        raise argparse.ArgumentTypeError(f"no such directory: {directory!r}")
    if not os.access(directory, os.W_OK) or (os.path.exists(text) and
                                             not os.access(text, os.W_OK)):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: permission denied")
    return text
