"""The selection tests' fixtures (their helpers are selection_support.py's)."""

from __future__ import annotations

import pathlib
import shutil

import pytest
from argonishche import _selection


@pytest.fixture
def cache(process_state):
    """The test's selection records' directory, empty: tests/conftest.py's process_state gave the
    test a cache of its own, seeded with the process registry's record."""
    path = pathlib.Path(process_state, "argonishche", "selection")
    shutil.rmtree(path, ignore_errors=True)
    return path


@pytest.fixture
def samples(monkeypatch):
    """Every timed workout, as (backend, algorithm), in the order the measurement made them."""
    made = []
    real = _selection.sample

    def spy(entry, algorithm, scratch):
        made.append((entry.name, algorithm))
        return real(entry, algorithm, scratch)
    monkeypatch.setattr(_selection, "sample", spy)
    return made
