"""Shared fixtures: every test that takes ``backend`` runs once per registered backend.

Backends this CPU cannot run (or that are blocked or broken) show up as skips with the reason.
``ARGONISHCHE_REQUIRE_BACKENDS=sse2,avx2`` (or ``all``) lists backends that must be usable: their
tests are not skipped but run, and fail with the registry's reason, so a run on an emulated CPU
cannot go green by skipping what it was meant to prove.

The allocator fixtures (``trimmed``, ``acquire_log``, ``install``) serve the work-memory tests.
Certification records go to a cache directory of the test run's own, not the user's.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

import argonishche
from argonishche import _registry
from argonishche.testing import USABLE_STATES as USABLE
from argonishche.testing import required_backends


def pytest_configure(config):
    # Before any registry starts: subprocesses inherit it too.
    config.argonishche_cache = tempfile.mkdtemp(prefix="argonishche-test-cache-")
    os.environ["XDG_CACHE_HOME"] = config.argonishche_cache


def pytest_unconfigure(config):
    shutil.rmtree(getattr(config, "argonishche_cache", ""), ignore_errors=True)


def pytest_generate_tests(metafunc):
    if "backend" not in metafunc.fixturenames:
        return
    required = required_backends()
    params = []
    for record in argonishche.backends():
        marks = []
        if record.state not in USABLE and record.name not in required:
            marks.append(pytest.mark.skip(
                reason=f"backend {record.name} is {record.state}: {record.reason}"))
        params.append(pytest.param(record.name, id=record.name, marks=marks))
    metafunc.parametrize("backend", params)


@pytest.fixture
def trimmed():
    """Every allocator's cache returned to the OS before (and after) the test, so that what
    other tests left cached cannot blur what this one sees inside an arena."""
    argonishche.trim_memory()
    yield
    argonishche.trim_memory()


@pytest.fixture
def acquire_log(monkeypatch):
    """Names of the allocators hashes took their memory from, in order (the C arenas lend it
    inside the hashing C call, so the log is kept where a hash picks its allocator)."""
    log = []

    def spy(self, name=None, _original=_registry.Registry.allocator):
        allocator = _original(self, name)
        log.append(allocator.name)
        return allocator
    monkeypatch.setattr(_registry.Registry, "allocator", spy)
    return log


@pytest.fixture
def install(monkeypatch):
    """Make a registry the process-wide one for the test."""
    def installer(reg):
        monkeypatch.setattr(_registry, "_instance", reg)
        return reg
    return installer
