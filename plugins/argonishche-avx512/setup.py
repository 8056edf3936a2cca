"""The compiled kernel module only; everything else about the distribution is in pyproject.toml.

cffi builds the module against CPython's stable ABI (``_kernels.abi3.so``, ``Py_LIMITED_API``
defined), so the wheel is tagged ``cp311-abi3``: one wheel for CPython 3.11 and later, like
argonishche's own.

Before anything is built it checks the build's requirements (pyproject.toml's [build-system]
requires): pip installs them into an isolated build environment, but with build isolation off
(``--no-build-isolation``) it checks nothing, and an old setuptools then stops at the license
metadata with an error that does not say what to do.
"""

import importlib.metadata
import os
import tomllib

from setuptools import setup

try:
    from packaging.requirements import Requirement
except ImportError:  # setuptools before 71 keeps its own packaging off sys.path
    from setuptools.extern.packaging.requirements import Requirement

HERE = os.path.dirname(os.path.abspath(__file__))


def unmet_build_requirements() -> dict[str, str]:
    """{requirement: the version installed, or "none"} for each unmet build requirement."""
    with open(os.path.join(HERE, "pyproject.toml"), "rb") as file:
        required = tomllib.load(file)["build-system"]["requires"]
    unmet = {}
    for text in required:
        requirement = Requirement(text)
        try:
            found = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            found = "none"
        if found == "none" or not requirement.specifier.contains(found, prereleases=True):
            unmet[text] = found
    return unmet


UNMET = unmet_build_requirements()
if UNMET:
    raise SystemExit(
        "argonishche-avx512 cannot be built in this environment: it needs "
        + ", ".join(f"{text} (found {found})" for text, found in UNMET.items()) + ".\n"
        "With build isolation on (pip's default), pip installs them for the build itself: "
        "leave out --no-build-isolation and give pip a place to find argonishche, e.g. "
        "`pip install --find-links wheelhouse argonishche-avx512` after "
        "`python tools/build_wheelhouse.py wheelhouse` in argonishche's repository.\n"
        "To build with --no-build-isolation, install them here first: pip install "
        + " ".join(f'"{text}"' for text in UNMET))

setup(cffi_modules=["build_avx512.py:ffibuilder"],
      options={"bdist_wheel": {"py_limited_api": "cp311"}})
