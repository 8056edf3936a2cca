"""Every registered backend passes the conformance suite (argonishche.testing)."""

from __future__ import annotations

import os

import argonishche.testing as conformance

CASES = int(os.environ.get("ARGONISHCHE_TEST_CASES", "60"))


def test_backend_conforms(backend):
    assert conformance.check_backend(backend, count=CASES) == []


def test_conformance_detects_a_wrong_answer(monkeypatch):
    """The check can fail: corrupt one Argon2 result and it must be reported."""
    real = conformance.argon2_hash
    state = {"calls": 0}

    def corrupted(*args, backend=None, **kwargs):
        tag = real(*args, backend=backend, **kwargs)
        state["calls"] += 1
        return bytes([tag[0] ^ 1]) + tag[1:] if state["calls"] == 1 else tag  # the tested call
    monkeypatch.setattr(conformance, "argon2_hash", corrupted)
    failures = conformance.check_backend("ref", count=3)
    assert len(failures) == 1 and failures[0].startswith("Argon2 differs from ref")
