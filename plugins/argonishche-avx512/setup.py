"""The compiled kernel module only; everything else about the distribution is in pyproject.toml.

cffi builds the module against CPython's stable ABI (``_kernels.abi3.so``, ``Py_LIMITED_API``
defined), so the wheel is tagged ``cp311-abi3``: one wheel for CPython 3.11 and later, like
argonishche's own.
"""

from setuptools import setup

setup(cffi_modules=["build_avx512.py:ffibuilder"],
      options={"bdist_wheel": {"py_limited_api": "cp311"}})
