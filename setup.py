"""Compiled modules only; everything else about the distribution is in pyproject.toml."""

import importlib.util
import os

from setuptools import setup

_spec = importlib.util.spec_from_file_location(
    "argonishche_backends_table", os.path.join(os.path.dirname(__file__) or ".", "backends",
                                               "table.py"))
_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_table)

setup(
    cffi_modules=[
        "core/build_core.py:ffibuilder",
        "core/build_bench.py:ffibuilder",
        *(f"backends/build_backends.py:{row.name}" for row in _table.BUILTIN_BACKENDS),
    ],
)
