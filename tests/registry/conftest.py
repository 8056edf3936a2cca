"""The registry tests' fixtures (the selection tests' helpers are selection_support.py's)."""

from __future__ import annotations

import pathlib
import shutil

import pytest
from argonishche import _selection
from support import REF_SOURCE, compiled_backend


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


@pytest.fixture(scope="module")  # its directory leaves sys.path with the module's tests
def wrong_kernels(tmp_path_factory):
    """A real compiled backend named ``wrong``, built with the plugin authors' helper, whose G
    has one rotation off: it fails the start-up self-test (the vetting tests, and the plugin
    authors' helper's)."""
    source = REF_SOURCE.read_text()
    rotation = "b = argonishche_rotr64(b ^ c, 63);"
    assert rotation in source
    with compiled_backend(tmp_path_factory.mktemp("wrong_kernels"), "wrong_kernels_mod",
                          source.replace(rotation, rotation.replace("63", "62")), name="wrong",
                          description="G with one rotation off") as backend:
        yield backend
