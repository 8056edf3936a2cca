"""Compiled modules only; everything else about the distribution is in pyproject.toml.

Every module is built by cffi against CPython's stable ABI (cffi sets ``py_limited_api`` on each
extension and defines ``Py_LIMITED_API``, so they are ``*.abi3.so``), and the wheel says so: it is
tagged ``cp311-abi3`` (requires-python's lowest version), one wheel for CPython 3.11 and later.
tests/project/test_packaging.py checks the tag, the file names and the symbols the modules import.
"""

import importlib.util
import os

from setuptools import Extension, find_packages, setup

#: The wheel's Python tag: the oldest CPython the one abi3 wheel installs on.
LIMITED_API = "cp311"

# The backends to build are those of the target architecture: build_backends.py decides (from
# backends/table.py), and is loaded here to name its builders.
_spec = importlib.util.spec_from_file_location(
    "argonishche_build_backends", os.path.join(os.path.dirname(__file__) or ".", "core",
                                               "build_backends.py"))
_backends = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_backends)

setup(
    # The blake2b type (core/ext/blake2b_type.c): a plain CPython extension, not cffi, for its
    # boundary cost; limited API of 3.11 like the cffi modules.
    ext_modules=[Extension(
        "argonishche._blake2b_type", sources=["core/ext/blake2b_type.c"],
        include_dirs=["core/csrc", "core/argonishche/include"], py_limited_api=True,
        # Rebuilt when a header changes, not only its .c file (argonishche.build.headers_beside).
        depends=[os.path.join(d, name) for d in ("core/csrc", "core/argonishche/include")
                 for name in sorted(os.listdir(d)) if name.endswith(".h")],
        define_macros=[("Py_LIMITED_API", "0x030B0000")],
        extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra"],
        # It calls nothing in libc, so the linker would record no libc at all, and auditwheel
        # (which manylinux repair runs) refuses a module whose libc it cannot tell: linked as
        # every kernel module is (argonishche.build, loaded by build_backends.py).
        extra_link_args=_backends._build.libc_link_args())],
    cffi_modules=[
        "core/build_core.py:ffibuilder",
        "core/build_bench.py:ffibuilder",
        *(f"core/build_backends.py:{row.name}" for row in _backends.BUILT),
    ],
    # Every package under core/ (argonishche and its subpackages, found, so a new subpackage
    # cannot be left out of the wheel) and backends/ as argonishche_backends; package-dir in
    # pyproject.toml maps the names to the directories.
    packages=[*find_packages("core"), "argonishche_backends"],
    options={"bdist_wheel": {"py_limited_api": LIMITED_API}},
)
