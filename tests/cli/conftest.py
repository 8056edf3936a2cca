"""The ``argonishche tune`` tests' fixtures: the timed batch replaced by a model, and the kernel
measurement skipped."""

from __future__ import annotations

import os

import pytest
from argonishche import _tune, _tune_search
from tune_model import Model


@pytest.fixture
def timing(monkeypatch):
    """``timing(**model)``: the timed batch replaced by a :class:`tune_model.Model`, which is
    returned; the machine has 2 CPUs (the lanes, and so Argon2's rounding of m, are the same
    everywhere)."""
    def install(**kwargs):
        model = Model(**kwargs)
        monkeypatch.setattr(_tune_search, "timed_batch", model)
        monkeypatch.setattr(os, "cpu_count", lambda: 2)
        return model
    return install


@pytest.fixture
def no_kernels(monkeypatch):
    """The command's kernel measurement skipped (these tests are about the parameters)."""
    monkeypatch.setattr(_tune, "tune_kernels", lambda rounds, step=None: {
        "machine": "a test", "core_clock_ghz": 1.0, "kernels": {}})
