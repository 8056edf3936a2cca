"""The stress suite runs in ``tox -e stress`` (ARGONISHCHE_STRESS=1); elsewhere its tests are
skipped, with that reason, so the main suite stays seconds long."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # safety_scripts, support

SCALE = int(os.environ.get("ARGONISHCHE_STRESS_SCALE", "10"))


def pytest_collection_modifyitems(config, items):
    if os.environ.get("ARGONISHCHE_STRESS"):
        return
    skip = pytest.mark.skip(reason="stress test: runs in tox -e stress (ARGONISHCHE_STRESS=1)")
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(skip)
