"""A pytest plugin that runs argon2-cffi's own tests against ``argonishche.argon2_cffi``.

Loaded with ``-p argon2_cffi_shim`` before the tests are collected, it puts argonishche's modules
in ``sys.modules`` under argon2-cffi's names, so ``from argon2 import PasswordHasher`` in those
tests gets argonishche's (argon2-cffi itself may be installed too: it is never imported).

Two kinds of test do not run as they are, each listed below with its reason:
- SKIP: tests of argon2-cffi's C bindings (``ffi``, ``lib``, ``core``, cffi's messages), of a
  private helper argonishche has no counterpart of, or of its WebAssembly build;
- DIFFERENT: argonishche deliberately behaves otherwise (docs/migration/argon2-cffi.md);
  these are strict xfails, so a test that starts passing is reported.
"""

from __future__ import annotations

import sys
import types

import argonishche
import argonishche.argon2_cffi as compat
import pytest
from argonishche import _extract_parameters, _password_hasher

SKIP = {
    "test_low_level.py::test_core":
        "calls argon2-cffi's C library through ffi/lib/core, which argonishche does not have",
    "test_low_level.py::TestVerify::test_wrong_arg_type":
        "asserts cffi's own TypeError message (\"initializer for ctype 'uint8_t[]'\"); "
        "argonishche raises a TypeError with its own message",
    "test_utils.py::TestCheckTypes::test_success":
        "tests argon2-cffi's private helper _check_types; argonishche has none",
    "test_utils.py::TestCheckTypes::test_fail":
        "tests argon2-cffi's private helper _check_types; argonishche has none",
    "test_password_hasher.py::TestPasswordHasher::test_params_on_wasm":
        "argon2-cffi's WebAssembly rule (parallelism must be 1); argonishche has no WebAssembly "
        "build",
}

DIFFERENT = {
    "test_password_hasher.py::TestPasswordHasher::test_check":
        "same TypeError; argonishche's message names the allowed range "
        "('time_cost must be an int in 1..4294967295, not str')",
    "test_utils.py::TestExtractParameters::test_valid_hash_v18":
        "a hash without v= is version 16 (0x10), as the reference decoder reads it; "
        "argon2-cffi reports 18, which names no Argon2 version",
}


def _module(name: str, **names: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(names)
    return module


def _not_provided(name: str):
    def missing(*args: object, **kwargs: object) -> object:
        raise AssertionError(f"argon2-cffi's {name} was called; its tests are in SKIP")
    return missing


class _ReferenceLimits:
    """The constants of argon2-cffi's ``lib`` its hypothesis test draws parameters from (the
    reference argon2.h's ARGON2_MIN_* values); nothing else of ``lib`` exists here."""

    ARGON2_MIN_PWD_LENGTH = 0
    ARGON2_MIN_TIME = 1
    ARGON2_MIN_LANES = 1
    ARGON2_MIN_OUTLEN = 4
    ARGON2_MIN_SALT_LENGTH = 8


sys.modules.update({
    "argon2": compat,
    "argon2.exceptions": compat.exceptions,
    "argon2.profiles": compat.profiles,
    "argon2.low_level": _module(
        "argon2.low_level", **{name: getattr(compat.low_level, name)
                               for name in compat.low_level.__all__},
        lib=_ReferenceLimits, ffi=_not_provided("ffi"), core=_not_provided("core")),
    "argon2._utils": _module(
        "argon2._utils", Parameters=compat.Parameters,
        extract_parameters=compat.extract_parameters, NoneType=type(None),
        _decoded_str_len=_extract_parameters.decoded_len,
        _check_types=_not_provided("_check_types")),
    "argon2._password_hasher": _module(
        "argon2._password_hasher", PasswordHasher=compat.PasswordHasher,
        _ensure_bytes=_password_hasher.encode_password),
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        test_id = item.nodeid.split("/")[-1].split("[")[0]
        if test_id in SKIP:
            item.add_marker(pytest.mark.skip(reason=SKIP[test_id]))
        elif test_id in DIFFERENT:
            item.add_marker(pytest.mark.xfail(reason=DIFFERENT[test_id], strict=True,
                                               raises=AssertionError))


def pytest_sessionstart(session: pytest.Session) -> None:
    import argon2  # what the tests will import

    assert argon2.PasswordHasher is compat.PasswordHasher, "the shim is not in place"


def pytest_report_header() -> str:
    return f"argon2 -> argonishche {argonishche.__version__} (argonishche.argon2_cffi)"
