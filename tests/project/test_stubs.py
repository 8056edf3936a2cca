"""The type stubs of the cffi modules name exactly what the compiled modules export.

``_core.pyi`` and ``_bench/_clock.pyi`` are written by hand from the cdef (mypy cannot read a
compiled cffi module); a function added to or removed from a C header must show up here.
"""

from __future__ import annotations

import ast
import pathlib

import argonishche
import pytest
from argonishche import _core
from argonishche._bench import _clock

PACKAGE = pathlib.Path(argonishche.__file__).parent


def stub_names(path: pathlib.Path) -> set[str]:
    """The attributes the stub's ``_Lib`` class declares."""
    lib_class = next(node for node in ast.parse(path.read_text()).body
                     if isinstance(node, ast.ClassDef) and node.name == "_Lib")
    names = set()
    for node in lib_class.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@pytest.mark.parametrize(("module", "stub"), [(_core, "_core.pyi"),
                                              (_clock, "_bench/_clock.pyi")])
def test_the_stub_declares_what_the_compiled_module_exports(module, stub):
    exported = {name for name in dir(module.lib) if not name.startswith("__")}
    assert stub_names(PACKAGE / stub) == exported
