"""The selection tests' helpers (their ``cache`` and ``samples`` fixtures are conftest.py's)."""

from __future__ import annotations

import os
import pathlib

import pytest
from argonishche import _selection
from support import make_registry


def usable_names(reg) -> list[str]:
    """The usable backends, the ladder's pick first."""
    return [b.name for b in reg.report() if b.state in ("selected", "available")]


def forbid_measuring(monkeypatch):
    def refuse(entry, algorithm, scratch):
        raise AssertionError("measured although a record should have been used")
    monkeypatch.setattr(_selection, "sample", refuse)


def only_record(cache: pathlib.Path) -> pathlib.Path:
    files = [p for p in cache.iterdir() if not p.name.endswith(".tmp")]
    assert len(files) == 1, files
    return files[0]


def without_settings(**environ) -> dict[str, str]:
    """This process's environment without the ARGONISHCHE_* variables a tox env sets (a forced
    backend, say), plus *environ*: for a child that must select as the default does."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")},
            **environ}


def multi_backend_registry(installed=False, **environ):
    reg = make_registry(environ=environ, installed=installed)
    if len(reg.usable()) < 2:
        pytest.skip(f"only {usable_names(reg)} can run here: nothing is measured")
    return reg
