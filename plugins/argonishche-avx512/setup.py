"""The compiled kernel module only; everything else about the distribution is in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=["build_avx512.py:ffibuilder"])
