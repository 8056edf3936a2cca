"""The trust tests' fixtures: the misbehaving plugins of trust_plugins.py built into wheels and
installed (test_plugin_trust*.py), and a cache directory of the test's own."""

from __future__ import annotations

from pathlib import Path

import plugin_wheels
import pytest
from trust_plugins import PLUGINS

# ---- the wheels ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def wheels(tmp_path_factory) -> dict[str, Path]:
    """Every plugin of PLUGINS built into a wheel, once per session."""
    return plugin_wheels.build_wheels_or_skip(PLUGINS, tmp_path_factory.mktemp("plugin_wheels"))


@pytest.fixture(scope="session")
def installed(wheels, tmp_path_factory):
    """The directory a plugin's wheel is installed in, with pip (once per session); tests that
    change the files install their own copy with ``fresh_site``."""
    directories: dict[str, Path] = {}

    def get(key: str) -> Path:
        if key not in directories:
            directories[key] = plugin_wheels.install(
                wheels[key], tmp_path_factory.mktemp(f"site-{key}"))
        return directories[key]
    return get


@pytest.fixture
def fresh_site(wheels, tmp_path):
    """A plugin's wheel installed in a directory of the test's own, whose files it may change."""
    def get(key: str) -> Path:
        return plugin_wheels.install(wheels[key], tmp_path / f"site-{key}")
    return get


@pytest.fixture
def cache(tmp_path) -> Path:
    """An empty cache directory (XDG_CACHE_HOME) for the interpreters a test starts; test files
    that look at the records' directory itself define a ``cache`` of their own."""
    path = tmp_path / "cache"
    path.mkdir(mode=0o700)
    return path
