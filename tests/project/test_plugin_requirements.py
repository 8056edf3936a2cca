"""The plugins and the core name each other within one release series, tied to the kernel ABI.

A plugin compiles against argonishche's kernel header (ARGONISHCHE_KERNEL_ABI), and the core
refuses a module built for another ABI.  argonishche changes the ABI only in a new minor release
(0.x), so each plugin builds against and requires the core's series (``>=0.N,<0.N+1``) and the
core's ``avx512`` extra requires the plugin's same series.  The build requirements are what pip
installs into the isolated build: setuptools 77.0.3 or later (PEP 639 metadata), cffi, and
argonishche.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import argonishche
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = sorted(path.parent for path in (ROOT / "plugins").glob("*/pyproject.toml"))
#: The kernel ABI of each release series: a new ABI needs a new series (and the plugins'
#: requirements moved to it), so add a row when the ABI changes, never edit one.
KERNEL_ABI_OF_SERIES = {"0.1": 3}


def pyproject(directory: Path) -> dict:
    with open(directory / "pyproject.toml", "rb") as file:
        return tomllib.load(file)


def series_of(version: str) -> str:
    release = Version(version).release
    return f"{release[0]}.{release[1]}"


def the_series_range(series: str) -> set[str]:
    major, minor = (int(part) for part in series.split("."))
    return {f">={major}.{minor}", f"<{major}.{minor + 1}"}


def requirement(texts: list[str], name: str) -> Requirement:
    found = [Requirement(text) for text in texts if Requirement(text).name == name]
    assert len(found) == 1, f"{name} in {texts}"
    return found[0]


def test_the_kernel_abi_changes_only_with_the_release_series():
    assert KERNEL_ABI_OF_SERIES.get(series_of(argonishche.__version__)) == argonishche.KERNEL_ABI, (
        "a new kernel ABI needs a new minor release, and the plugins' requirements moved to it")


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda path: path.name)
def test_a_plugin_builds_against_and_requires_the_cores_series(plugin):
    config = pyproject(plugin)
    series = the_series_range(series_of(argonishche.__version__))
    build = config["build-system"]["requires"]
    assert {str(s) for s in requirement(build, "argonishche").specifier} == series
    assert requirement(build, "setuptools").specifier.contains("77.0.3")
    assert not requirement(build, "setuptools").specifier.contains("77.0.2")
    requirement(build, "cffi")
    runtime = config["project"]["dependencies"]
    assert {str(s) for s in requirement(runtime, "argonishche").specifier} == series


def test_the_avx512_extra_requires_the_plugins_series():
    extra = pyproject(ROOT)["project"]["optional-dependencies"]["avx512"]
    plugin_version = next(
        line.split('"')[1] for line in
        (ROOT / "plugins/argonishche-avx512/argonishche_avx512/__init__.py").read_text()
        .splitlines() if line.startswith("__version__ = "))
    wanted = requirement(extra, "argonishche-avx512")
    assert {str(s) for s in wanted.specifier} == the_series_range(series_of(plugin_version))
    assert series_of(plugin_version) == series_of(argonishche.__version__)
