"""Shared fixtures: every test that takes ``backend`` runs once per registered backend.

Backends this CPU cannot run (or that are blocked or broken) show up as skips with the reason.
``ARGONISHCHE_REQUIRE_BACKENDS=sse2,avx2`` (or ``all``) lists backends that must be usable: their
tests are not skipped but run, and fail with the registry's reason, so a run on an emulated CPU
cannot go green by skipping what it was meant to prove.

The allocator fixtures (``trimmed``, ``acquire_log``, ``install``) serve the work-memory tests;
``recorder`` and ``no_work`` stand in for the hashing C call in the limits tests.

No test may leave process-wide state changed for the tests after it (:func:`process_state`):
the registry, its selection and the parsed settings are checked after every test, and a test
that changed them fails, after they are put back.  Records (certifications, the remembered
selection) go to a cache directory of each test's own, which starts as a copy of the one the
process registry was built with; subprocesses inherit it.
"""

from __future__ import annotations

import itertools
import os
import shutil
import sys
import tempfile

import argonishche
import pytest
from argonishche import _process_registry, _registry, _settings, _work_memory
from argonishche._core import ffi
from argonishche.exceptions import ArgonishcheError
from argonishche.testing import USABLE_STATES as USABLE
from argonishche.testing import required_backends

# The test files sit in subject folders (tests/registry, tests/trust, ...), which are not
# packages: they import the shared helpers (support, plugin_wheels) from this folder, put on
# sys.path here whatever pytest's import mode.
_TESTS = os.path.dirname(os.path.abspath(__file__))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)


def pytest_configure(config):
    # Before any registry starts: subprocesses inherit it too.
    config.argonishche_cache = tempfile.mkdtemp(prefix="argonishche-test-cache-")
    os.environ["XDG_CACHE_HOME"] = config.argonishche_cache
    try:  # the process registry, built now, remembers its selection in the run's cache
        _registry.get()
        _work_memory.config()  # decided now, so that a test that changes it is told
    except ArgonishcheError:  # an invalid setting: the tests that need the registry say so
        pass


_test_numbers = itertools.count()


def _snapshot():
    """Everything about the process registry, the selection and the settings that a test could
    leave changed, with what is needed to put it back."""
    registry = _process_registry._instance
    state = {"registry": registry, "settings": _settings._current,
             "memory_budget": _work_memory._config,
             "environment": {k: v for k, v in os.environ.items()
                             if k.startswith("ARGONISHCHE_") or k == "XDG_CACHE_HOME"}}
    if registry is not None:
        state["tables"], state["choices"] = registry.tables, registry.choices
        state["selection_error"] = registry.selection_error
        state["entries"] = [(entry, entry.state, list(entry.selected_for))
                            for entry in registry.entries.values()]
    return state


def _comparable(state):
    entries = [(entry.name, s, tuple(selected_for))
               for entry, s, selected_for in state.get("entries", ())]
    return {"registry": id(state["registry"]), "settings": id(state["settings"]),
            "memory_budget": state["memory_budget"],
            "environment": state["environment"],
            "tables": {a: int(ffi.cast("uintptr_t", t))
                       for a, t in state.get("tables", {}).items()},
            "choices": state.get("choices"), "entries": entries,
            "selection_error": id(state.get("selection_error"))}


def _restore(state):
    _process_registry._instance, _settings._current = state["registry"], state["settings"]
    _put_back_budget(state["memory_budget"])
    for name in [k for k in os.environ if k.startswith("ARGONISHCHE_")]:
        del os.environ[name]
    os.environ.update(state["environment"])
    registry = state["registry"]
    if registry is not None:
        registry.tables, registry.choices = state["tables"], state["choices"]
        registry.selection_error = state["selection_error"]
        for entry, entry_state, selected_for in state["entries"]:
            entry.state, entry.selected_for[:] = entry_state, selected_for


@pytest.fixture(autouse=True)
def process_state(request):
    """A cache directory of the test's own; afterwards, the process-wide state as it was
    before, or the test fails (see the module docstring).  Autouse fixtures are set up first
    and torn down last: what monkeypatch undoes is undone before this compares."""
    session_cache = request.config.argonishche_cache
    cache = os.path.join(session_cache, "tests", str(next(_test_numbers)))
    if os.path.isdir(os.path.join(session_cache, "argonishche")):
        shutil.copytree(os.path.join(session_cache, "argonishche"),
                        os.path.join(cache, "argonishche"))
    os.environ["XDG_CACHE_HOME"] = cache
    before = _snapshot()
    yield cache
    after = _snapshot()
    os.environ["XDG_CACHE_HOME"] = session_cache
    changed = [key for key, value in _comparable(before).items()
               if _comparable(after)[key] != value]
    shutil.rmtree(cache, ignore_errors=True)
    if changed:
        _restore(before)
        os.environ["XDG_CACHE_HOME"] = session_cache
    # monkeypatch put back a registry or its tables without pushing them to the C blake2b
    # type (core/ext/blake2b_type.c): push the selection as it is now.
    _process_registry.publish()
    if changed:
        pytest.fail(f"the test left process-wide state changed ({', '.join(changed)}); it has "
                    f"been put back, but the test must not change it (use monkeypatch, the "
                    f"install fixture or a registry of its own)", pytrace=False)


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


def _put_back_budget(config):
    _work_memory._config = config
    if config is not None:
        config.apply()


@pytest.fixture
def budget():
    """``budget(mib, idle_seconds=..., wait_seconds=...)`` sets the process's work-memory budget
    (:func:`argonishche.set_memory_budget`) for the test; the one before is put back after it,
    and the memory the test left idle is given back."""
    before = _work_memory.config()
    yield argonishche.set_memory_budget
    _put_back_budget(before)
    argonishche.trim_memory()


@pytest.fixture
def busy(budget):
    """A server at its work-memory budget: all of it reserved by the test, and no waiting, so
    that every hash that needs memory raises MemoryBudgetTimeout at once."""
    budget(16, wait_seconds=0)
    held = _work_memory.reserve(16 * 2**20)
    yield
    held.close()


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
    """Make a registry the process-wide one for the test, its selection pushed to the C
    blake2b type as a build pushes it (process_state pushes the one put back afterwards)."""
    def installer(reg):
        monkeypatch.setattr(_process_registry, "_instance", reg)
        _process_registry.publish()
        return reg
    return installer


# The limits tests' stand-ins for the hashing C call (tests/api/test_hardening.py and
# tests/memory/test_limits.py).
@pytest.fixture
def recorder(monkeypatch):
    """Replace the C call with a recorder returning a zero tag: costs reach it, nothing runs."""
    calls = []

    def record(argon2_table, blake2b_table, **request):
        calls.append(request)
        return bytes(request["hash_len"])

    argonishche._registry.get()  # its self-test needs the real driver: initialise it first
    monkeypatch.setattr(argonishche._hash_call, "argon2", record)
    return calls


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if anything is allocated or computed (the step after the limits)."""
    def refuse(*args, **kwargs):
        raise AssertionError("work memory was requested for a hash over the limits")

    monkeypatch.setattr(sys.modules["argonishche._argon2"], "_compute", refuse)
