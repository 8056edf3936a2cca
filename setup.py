"""Compiled modules only; everything else about the distribution is in pyproject.toml."""

from setuptools import setup

setup(
    cffi_modules=[
        "core/build_core.py:ffibuilder",
        "core/build_bench.py:ffibuilder",
        "backends/build_backends.py:ref",
        "backends/build_backends.py:sse2",
        "backends/build_backends.py:ssse3",
        "backends/build_backends.py:sse41",
        "backends/build_backends.py:avx2",
    ],
)
