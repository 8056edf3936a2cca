"""Shared fixtures: every test that takes ``backend`` runs once per registered backend.

Backends this CPU cannot run (or that are blocked or broken) show up as skips with the reason.
``ARGONISHCHE_REQUIRE_BACKENDS=sse2,avx2`` (or ``all``) lists backends that must be usable: their
tests are not skipped but run, and fail with the registry's reason, so a run on an emulated CPU
cannot go green by skipping what it was meant to prove.
"""

from __future__ import annotations

import pytest

import argonishche
from argonishche.testing import USABLE_STATES as USABLE
from argonishche.testing import required_backends


def pytest_generate_tests(metafunc):
    if "backend" not in metafunc.fixturenames:
        return
    required = required_backends()
    params = []
    for record in argonishche.backends():
        if record.state == "load-failed" and not record.description:
            continue  # a plugin that registered nothing: no backend to run tests on
        marks = []
        if record.state not in USABLE and record.name not in required:
            marks.append(pytest.mark.skip(
                reason=f"backend {record.name} is {record.state}: {record.reason}"))
        params.append(pytest.param(record.name, id=record.name, marks=marks))
    metafunc.parametrize("backend", params)
