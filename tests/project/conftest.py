"""The session's wheelhouse, shared by the tests that install argonishche as a user does
(tests/project/user_venvs.py has their helpers)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from user_venvs import (
    BUILD_TIMEOUT,
    ROOT,
    checked,
    run,
    skip_unless_slow_tests_run,
    user_environment,
)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """The wheelhouse tools/build_wheelhouse.py builds (core and every plugin), once a session."""
    skip_unless_slow_tests_run()
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.fail("no C compiler: the wheelhouse cannot be built")
    directory = tmp_path_factory.mktemp("wheelhouse")
    scratch = tmp_path_factory.mktemp("wheelhouse-build")
    checked(run([sys.executable, ROOT / "tools" / "build_wheelhouse.py", directory],
                timeout=BUILD_TIMEOUT, cwd=scratch, env=user_environment(None, scratch)))
    return directory
