"""Packaging and typing conventions: what a release must keep.

Type hints on every public callable, the version written once, the ``py.typed`` marker installed,
and the MIT license shipped and declared the PEP 639 way.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import re
import sys
import typing
from pathlib import Path

import argonishche
import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugins" / "argonishche-avx512"
EXAMPLE = ROOT / "plugins" / "argonishche-example"
PROJECTS = {"argonishche": ROOT, "argonishche-avx512": PLUGIN, "argonishche-example": EXAMPLE}
#: The one place each project's version is written: what setuptools reads, and its file.
VERSION_SOURCES = {
    "argonishche": ("argonishche._version.__version__", ROOT / "core/argonishche/_version.py"),
    "argonishche-avx512": ("argonishche_avx512.__version__",
                           PLUGIN / "argonishche_avx512/__init__.py"),
    "argonishche-example": ("argonishche_example.__version__",
                            EXAMPLE / "argonishche_example/__init__.py"),
}

#: Modules whose public names (all of them, or ``__all__``) must be annotated.
PUBLIC_MODULES = ("argonishche", "argonishche.hookspecs", "argonishche.build",
                  "argonishche.testing", "argonishche.vectors", "argonishche.exceptions")
#: Known gaps, each with its reason: remove an entry once its hints resolve.
KNOWN_UNANNOTATED: set[str] = {
    # Parameters is a dataclass (argon2-cffi's): _password_hasher imports _extract_parameters
    # at first use, so that the first hash imports no dataclasses; until Parameters is made
    # without them, get_type_hints cannot resolve it here.
    "argonishche._password_hasher.PasswordHasher.from_parameters: "
    "name 'Parameters' is not defined",
}


def _pyproject(project: str) -> dict:
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    with open(PROJECTS[project] / "pyproject.toml", "rb") as file:
        return tomllib.load(file)


def _public_objects(module_name: str):
    """(qualified name where defined, object) of each public function and class of
    *module_name*: its ``__all__``, else the public names it defines."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")
                 and getattr(vars(module)[n], "__module__", None) == module_name]
    for name in names:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield f"{obj.__module__}.{obj.__qualname__}", obj


def _callables_of(qualname: str, obj):
    """(qualified name, function, skip the first parameter) for *obj* and, for a class, each
    public method, property, ``__init__`` and ``__call__`` our package defines on it."""
    if inspect.isfunction(obj):
        yield qualname, obj, False
        return
    for cls in obj.__mro__:
        if not cls.__module__.startswith("argonishche"):
            continue
        for name, member in vars(cls).items():
            if name.startswith("_") and name not in ("__init__", "__call__"):
                continue
            if isinstance(member, property):
                functions = [f for f in (member.fget, member.fset) if f is not None]
                yield from ((f"{qualname}.{name}", f, True) for f in functions)
            elif isinstance(member, staticmethod):
                yield f"{qualname}.{name}", member.__func__, False
            elif isinstance(member, classmethod):
                yield f"{qualname}.{name}", member.__func__, True
            elif inspect.isfunction(member):
                yield f"{qualname}.{name}", member, True


def _missing_annotations(qualname: str, function, bound: bool) -> list[str]:
    parameters = list(inspect.signature(function).parameters.values())[1 if bound else 0:]
    missing = [f"{qualname}: {p.name}" for p in parameters if p.annotation is p.empty]
    if inspect.signature(function).return_annotation is inspect.Signature.empty:
        missing.append(f"{qualname}: return")
    try:  # they are strings (PEP 563): each name must exist at run time too, not only for mypy,
        # typing's own included, which the start-up path does not import
        # (test_startup_imports.py): typing.get_type_hints must resolve them as they are
        typing.get_type_hints(function)
    except NameError as exc:
        missing.append(f"{qualname}: {exc}")
    return missing


def test_public_functions_and_methods_are_annotated():
    missing = set()
    for module_name in PUBLIC_MODULES:
        for qualname, obj in _public_objects(module_name):
            for name, function, bound in _callables_of(qualname, obj):
                missing.update(_missing_annotations(name, function, bound))
    assert missing - KNOWN_UNANNOTATED == set(), "public callables without annotations"
    assert KNOWN_UNANNOTATED - missing == set(), (
        "annotated now: remove from KNOWN_UNANNOTATED in tests/project/test_conventions.py")


@pytest.mark.parametrize("project", sorted(PROJECTS))
def test_version_is_written_once(project):
    config = _pyproject(project)
    assert "version" not in config["project"], "the version belongs in the package, not here"
    assert "version" in config["project"]["dynamic"]
    attr, source = VERSION_SOURCES[project]
    assert config["tool"]["setuptools"]["dynamic"]["version"]["attr"] == attr
    # A literal, so that setuptools reads it without importing the package (and its C modules),
    # and the only one in the package.
    assignment = re.compile(r'^__version__ = "[0-9][^"]*"$', re.MULTILINE)
    assert assignment.search(source.read_text()), source
    written = [path for path in source.parent.rglob("*.py") if assignment.search(path.read_text())]
    assert written == [source]


def test_version_matches_the_installed_distribution():
    assert argonishche.__version__ == importlib.metadata.version("argonishche")


def test_plugin_version_matches_its_distribution():
    try:
        installed = importlib.metadata.version("argonishche-avx512")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("argonishche-avx512 is not installed")
    assert importlib.import_module("argonishche_avx512").__version__ == installed


def test_py_typed_is_installed():
    assert (Path(argonishche.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("project", sorted(PROJECTS))
def test_license_is_shipped_and_declared(project):
    text = (PROJECTS[project] / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the argonishche authors" in text
    config = _pyproject(project)
    assert config["project"]["license"] == "MIT"  # PEP 639: an SPDX expression, not a table
    assert config["project"]["license-files"] == ["LICENSE"]
    assert not [c for c in config["project"].get("classifiers", []) if c.startswith("License ::")]
    setuptools = next(Requirement(r) for r in config["build-system"]["requires"]
                      if Requirement(r).name == "setuptools")
    # setuptools before 77 cannot read a license expression; 77.0.3 fixed the first 77.0.x.
    assert not setuptools.specifier.contains("77.0.1")
    assert setuptools.specifier.contains("77.0.3")


def test_installed_metadata_declares_the_license():
    distribution = importlib.metadata.distribution("argonishche")
    described = Path(distribution.locate_file("argonishche/__init__.py"))
    if not described.is_file() or not described.samefile(argonishche.__file__):
        pytest.skip("argonishche is not installed from a wheel here (editable, or a source "
                    "tree's egg-info): its metadata is only as new as its install")
    assert distribution.metadata["License-Expression"] == "MIT"
    assert distribution.metadata.get_all("License-File") == ["LICENSE"]
    assert any(path.name == "LICENSE" and "licenses" in path.parts
               for path in distribution.files or ())
