"""The stress suite runs in ``tox -e stress`` (ARGONISHCHE_STRESS=1); elsewhere its tests are
skipped, with that reason, so the main suite stays seconds long."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# support (tests/), and from tests/api the programs, scenarios and checks these run at scale:
# safety_scripts, test_server_safety, test_blake2b_threads, test_exceptions_pickle.
_TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_TESTS), str(_TESTS / "api")]

SCALE = int(os.environ.get("ARGONISHCHE_STRESS_SCALE", "10"))


def pytest_collection_modifyitems(config, items):
    if os.environ.get("ARGONISHCHE_STRESS"):
        return
    skip = pytest.mark.skip(reason="stress test: runs in tox -e stress (ARGONISHCHE_STRESS=1)")
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(skip)
