"""A pytest plugin that runs pwdlib's own tests against ``argonishche.contrib.pwdlib``.

Loaded with ``-p pwdlib_redirect`` before the tests are collected, it serves
``pwdlib.hashers.argon2`` (the module pwdlib's tests, and ``PasswordHash.recommended()``, import
``Argon2Hasher`` from) as a module holding argonishche's hasher.  Only that one pwdlib module is
replaced: ``argon2`` is left alone, and the session fails if anything imported it, or if it is
importable at all (the env has no argon2-cffi, so pwdlib's own module could not have loaded).

Tests that do not run as they are would be listed here with their reason (none do for the pinned
release): SKIP for a test of something argonishche's hasher has no counterpart of, DIFFERENT
(strict xfails, so one that starts passing is reported) where it deliberately answers otherwise.
The outcomes are written as JSON to the file named by PWDLIB_SUITE_REPORT, for run.py's counts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import types

import pytest

import pwdlib.hashers  # the package only: it imports no hasher, so no argon2
from argonishche.contrib.pwdlib import Argon2Hasher

SKIP: dict[str, str] = {}
DIFFERENT: dict[str, str] = {}

_redirect = types.ModuleType("pwdlib.hashers.argon2", "argonishche.contrib.pwdlib's Argon2Hasher")
_redirect.Argon2Hasher = Argon2Hasher  # type: ignore[attr-defined]
sys.modules[_redirect.__name__] = _redirect
pwdlib.hashers.argon2 = _redirect  # type: ignore[attr-defined]

_outcomes: dict[str, dict[str, str]] = {}


def _test_id(nodeid: str) -> str:
    return nodeid.split("tests/", 1)[-1]


def pytest_sessionstart(session: pytest.Session) -> None:
    assert importlib.util.find_spec("argon2") is None, \
        "argon2 is importable: this env must not have argon2-cffi installed"
    from pwdlib.hashers.argon2 import Argon2Hasher as imported

    assert imported is Argon2Hasher, "the redirect is not in place"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        test_id = _test_id(item.nodeid).split("[")[0]
        if test_id in SKIP:
            item.add_marker(pytest.mark.skip(reason=SKIP[test_id]))
        elif test_id in DIFFERENT:
            item.add_marker(pytest.mark.xfail(reason=DIFFERENT[test_id], strict=True))


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
    hijacked = sys.modules.get("argon2")
    if hijacked is not None:
        _outcomes["<session>"] = {"outcome": "failed",
                                  "reason": f"argon2 was imported: {hijacked!r}"}
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    path = os.environ.get("PWDLIB_SUITE_REPORT")
    if path:
        with open(path, "w") as report:
            json.dump(_outcomes, report, indent=1, sort_keys=True)


def pytest_report_header() -> str:
    return "pwdlib.hashers.argon2.Argon2Hasher -> argonishche.contrib.pwdlib.Argon2Hasher"
