"""A pytest plugin that runs pwdlib's own tests against ``argonishche.contrib.pwdlib``.

Loaded with ``-p pwdlib_redirect`` before the tests are collected, it serves
``pwdlib.hashers.argon2`` (the module pwdlib's tests, and ``PasswordHash.recommended()``, import
``Argon2Hasher`` from) as a module holding argonishche's hasher.  The env has no argon2-cffi
(the session fails if ``argon2`` is importable), so pwdlib's own module could not have loaded.

pwdlib 0.4's tests/test_hash.py imports argon2-cffi's names (``PasswordHasher``, ``HashingError``,
``InvalidHashError``, ``VerificationError``) to patch and compare with: for that release ``argon2``
is served as ``argonishche.argon2_cffi``, argonishche's argon2-cffi API, once the hasher has been
seen to hash, verify and refuse a malformed hash without importing ``argon2``.  The session fails
if any other ``argon2`` was imported.

Tests that do not run as they are are listed per pwdlib release, with their reason: SKIP for a
test of something argonishche's hasher has no counterpart of, DIFFERENT (strict xfails, so one
that starts passing is reported) where it deliberately answers otherwise: such a test may fail
only on an assert (``raises=AssertionError``), so one that fails some other way (an exception
leaking, an exception not raised) is a failure, not an expected difference.  A key is a test's id
(file::name) or, for one parametrization only, the id with its brackets.  The outcomes are
written as JSON to the file named by PWDLIB_SUITE_REPORT, for run.py's counts.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import sys
import types

import pwdlib.exceptions
import pwdlib.hashers  # the package only: it imports no hasher, so no argon2
import pytest

assert importlib.util.find_spec("argon2") is None, \
    "argon2 is importable: this env must not have argon2-cffi installed"

from argonishche.contrib.pwdlib import Argon2Hasher  # noqa: E402

# pwdlib 0.4's tests end with `assert type(exc_info.value.__cause__) is <argon2-cffi's class>`.
_CAUSE_DIFFERS = ("raises {raised} as pwdlib 0.4's hasher does; its __cause__ is argonishche's "
                  "{ours}, where the test asserts exactly argon2-cffi's {theirs}")
_PATCHES_ARGON2_CFFI = ("patches argon2-cffi's PasswordHasher.verify to raise: argonishche's "
                        "hasher calls no argon2-cffi code (its 0.4 answers to a hash it cannot "
                        "check are tests/api/test_pwdlib.py's)")

SKIP: dict[str, dict[str, str]] = {
    "0.3.1": {},
    "0.4.2": {"test_hash.py::test_verify_argon2_backend_error": _PATCHES_ARGON2_CFFI},
}
DIFFERENT: dict[str, dict[str, str]] = {
    "0.3.1": {},
    "0.4.2": {
        "test_hash.py::test_hash_generation_error[argon2-invalid-salt]": _CAUSE_DIFFERS.format(
            raised="HashGenerationError", ours="ParameterError (naming the salt's length)",
            theirs="HashingError"),
        **{f"test_hash.py::test_verify_malformed_hash[argon2-{method}]": _CAUSE_DIFFERS.format(
            raised="HashVerificationError", ours="InvalidHashError (saying why it is unreadable)",
            theirs="VerificationError")
           for method in ("verify", "verify_and_update")},
    },
}

VERSION = importlib.metadata.version("pwdlib")
assert VERSION in SKIP and VERSION in DIFFERENT, f"no lists for pwdlib {VERSION}"

_redirect = types.ModuleType("pwdlib.hashers.argon2", "argonishche.contrib.pwdlib's Argon2Hasher")
_redirect.Argon2Hasher = Argon2Hasher  # type: ignore[attr-defined]
sys.modules[_redirect.__name__] = _redirect
pwdlib.hashers.argon2 = _redirect  # type: ignore[attr-defined]


def _serve_argonishche_as_argon2() -> types.ModuleType:
    """``argon2`` (and its submodules) as argonishche.argon2_cffi, for pwdlib 0.4's test imports."""
    hasher = Argon2Hasher(time_cost=1, memory_cost=64, parallelism=1)
    assert hasher.verify("pw", hasher.hash("pw"))
    try:
        hasher.verify("pw", "$argon2id$v=19$m=64,t=1,p=1$invalid$invalid")
    except pwdlib.exceptions.PwdlibError:
        pass
    assert "argon2" not in sys.modules, "argonishche.contrib.pwdlib imported argon2"
    import argonishche.argon2_cffi as stand_in

    for name in ("exceptions", "low_level", "profiles"):
        sys.modules[f"argon2.{name}"] = getattr(stand_in, name)
    sys.modules["argon2"] = stand_in
    return stand_in


_ARGON2_STAND_IN = (_serve_argonishche_as_argon2()
                    if hasattr(pwdlib.exceptions, "HashVerificationError") else None)

_outcomes: dict[str, dict[str, str]] = {}


def _test_id(nodeid: str) -> str:
    return nodeid.split("tests/", 1)[-1]


def pytest_sessionstart(session: pytest.Session) -> None:
    from pwdlib.hashers.argon2 import Argon2Hasher as imported

    assert imported is Argon2Hasher, "the redirect is not in place"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    skip, different = SKIP[VERSION], DIFFERENT[VERSION]
    for item in items:
        test_id = _test_id(item.nodeid)
        for key in (test_id, test_id.split("[")[0]):
            if key in skip:
                item.add_marker(pytest.mark.skip(reason=skip[key]))
                break
            if key in different:
                item.add_marker(pytest.mark.xfail(reason=different[key], strict=True,
                                                  raises=AssertionError))
                break


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    test_id = _test_id(report.nodeid)
    if report.when == "call" or report.outcome != "passed":
        if hasattr(report, "wasxfail"):
            outcome, reason = ("expected-different", report.wasxfail) if report.skipped \
                else ("failed", f"passes, but is listed as different: {report.wasxfail}")
        elif report.skipped:
            outcome, reason = "skipped", str(report.longrepr[2]) if isinstance(
                report.longrepr, tuple) else str(report.longrepr)
        else:
            outcome, reason = report.outcome, ""
        if _outcomes.get(test_id, {}).get("outcome") in (None, "passed"):
            _outcomes[test_id] = {"outcome": outcome, "reason": reason}


def pytest_sessionfinish(session: pytest.Session) -> None:
    imported = sys.modules.get("argon2")
    if imported is not None and imported is not _ARGON2_STAND_IN:
        _outcomes["<session>"] = {"outcome": "failed",
                                  "reason": f"argon2 was imported: {imported!r}"}
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    path = os.environ.get("PWDLIB_SUITE_REPORT")
    if path:
        with open(path, "w") as report:
            json.dump(_outcomes, report, indent=1, sort_keys=True)


def pytest_report_header() -> str:
    served = ("; argon2 -> argonishche.argon2_cffi (the tests' argon2-cffi names)"
              if _ARGON2_STAND_IN is not None else "")
    return (f"pwdlib {VERSION}: pwdlib.hashers.argon2.Argon2Hasher -> "
            f"argonishche.contrib.pwdlib.Argon2Hasher{served}")
