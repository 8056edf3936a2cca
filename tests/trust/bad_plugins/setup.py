"""The compiled kernel module; everything else is in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=["build_kernels.py:ffibuilder"])
