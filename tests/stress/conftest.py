"""The stress suite runs in ``tox -e stress`` (ARGONISHCHE_STRESS=1); elsewhere its tests are
skipped, with that reason, so the main suite stays seconds long."""

from __future__ import annotations

import sys
from pathlib import Path

# support (tests/), and from tests/api the programs, scenarios and checks these run at scale:
# safety_scripts, test_server_safety, test_blake2b_threads, test_exceptions_pickle.
_TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_TESTS), str(_TESTS / "api")]



def pytest_collection_modifyitems(config, items):
    from support import skip_folder_unless

    skip_folder_unless(items, Path(__file__).parent, "ARGONISHCHE_STRESS", "stress")
