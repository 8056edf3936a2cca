"""The compiled kernel module only; everything else about the distribution is in pyproject.toml.

cffi builds the module against CPython's stable ABI (``_kernels.abi3.so``, ``Py_LIMITED_API``
defined); ``py_limited_api`` tags the wheel to match, ``cp311-abi3``: one wheel for CPython 3.11
and later.  Without it setuptools tags the wheel ``cp311-cp311``, for one Python version only,
around a module that would run on all of them.
"""

from setuptools import setup

setup(cffi_modules=["build_example.py:ffibuilder"],
      options={"bdist_wheel": {"py_limited_api": "cp311"}})
