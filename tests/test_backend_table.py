"""backends/table.py is the one list of built-in backends: everything that cannot read it (the
entry points in pyproject.toml, the envs in tox.ini) is checked against it here, and everything
that can (the build, the plugin objects) is checked to agree."""

from __future__ import annotations

import configparser
import importlib.util
import pathlib
import re
import tomllib

import argonishche_backends
from argonishche_backends.table import BUILTIN_BACKENDS, kernel_module

ROOT = pathlib.Path(__file__).resolve().parents[1]
NAMES = [row.name for row in BUILTIN_BACKENDS]


def test_rows_are_a_ladder_with_sources():
    assert NAMES[0] == "ref" and len(set(NAMES)) == len(NAMES)
    priorities = [row.priority for row in BUILTIN_BACKENDS]
    assert priorities == sorted(set(priorities))
    for row in BUILTIN_BACKENDS:
        assert (ROOT / "backends" / row.source).is_file(), row


def test_pyproject_entry_points_are_the_table():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    entry_points = pyproject["project"]["entry-points"]["argonishche"]
    assert entry_points == {name: f"argonishche_backends:{name}" for name in NAMES}


def test_plugin_objects_register_exactly_the_rows():
    for row in BUILTIN_BACKENDS:
        backend = getattr(argonishche_backends, row.name).backend
        assert (backend.name, backend.description, backend.priority) == \
            (row.name, row.description, row.priority)
        assert backend.cpu_features == frozenset(row.cpu_features)
        assert backend.kernel_module == kernel_module(row)


def test_build_has_one_builder_per_row_compiled_for_its_features():
    spec = importlib.util.spec_from_file_location("build_backends_under_test",
                                                  ROOT / "core" / "build_backends.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for row in BUILTIN_BACKENDS:
        builder = getattr(module, row.name)
        module_name, _, _, options = builder._assigned_source
        assert module_name == kernel_module(row)
        assert options["sources"][-1].endswith(row.source)
        defines = dict(options.get("define_macros", []))
        expected = module._build.kernel_target(row.cpu_features)
        assert defines.get("ARGONISHCHE_KERNEL_TARGET") == (f'"{expected}"' if expected else None)


def tox_factors(envlist_prefix: str) -> list[str]:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    envlist = tox["tox"]["envlist"]
    match = re.search(rf"^\s*{envlist_prefix}-\{{([^}}]*)\}}", envlist, re.M)
    assert match, f"{envlist_prefix}-{{...}} not in tox.ini's envlist"
    return match.group(1).split(",")


def test_tox_forces_every_backend_and_peels_every_rung_but_ref():
    assert sorted(tox_factors("backend")) == sorted(NAMES)
    assert sorted(tox_factors("peel")) == sorted(NAMES[1:])
    text = (ROOT / "tox.ini").read_text()
    for name in NAMES:
        assert re.search(rf"^\s*{name}: ARGONISHCHE_BACKEND = {name}$", text, re.M), name
