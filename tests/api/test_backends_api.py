"""The backends through the public API: ``backend=`` picks one, an unknown name lists the usable
ones, and ``backends()`` and ``selected_backend()`` report the registry's choice."""

from __future__ import annotations

import os

import argonishche
import pytest
from argonishche import (
    ArgonishcheError,
    BackendError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
    blake2b,
    testing,
)
from support import PASSWORD, SALT, SMALL, VALID, make_registry, state_of, usable_backend_names


def test_backend_keyword_selects_a_backend(backend):
    assert argon2_hash(PASSWORD, SALT, backend=backend, **SMALL) == argon2_hash(
        PASSWORD, SALT, **SMALL)
    assert argon2_hash(PASSWORD, SALT, backend=backend.upper(), **SMALL) == argon2_hash(
        PASSWORD, SALT, **SMALL)


def test_unknown_backend_is_backend_error_listing_available():
    available = usable_backend_names()
    assert available
    calls = [
        lambda: argon2_hash(PASSWORD, SALT, backend="no-such-backend", **SMALL),
        lambda: argon2_hash_encoded(PASSWORD, SALT, backend="no-such-backend", **SMALL),
        lambda: argon2_verify(VALID, PASSWORD, backend="no-such-backend"),
        lambda: blake2b(b"abc", backend="no-such-backend"),
    ]
    for call in calls:
        with pytest.raises(BackendError) as info:
            call()
        assert isinstance(info.value, RuntimeError)
        assert isinstance(info.value, ArgonishcheError)
        message = str(info.value)
        assert "no-such-backend" in message
        for name in available:
            assert name in message, message


def test_backends_report():
    records = argonishche.backends()
    assert records
    assert isinstance(records[0], argonishche.BackendInfo)
    names = [r.name for r in records]
    assert "ref" in names
    ref = records[names.index("ref")]
    assert ref.state in ("selected", "available")
    assert ref.cpu_features == ()  # portable C runs everywhere
    # Each algorithm has one backend, maybe not the same one (BLAKE2b from ref, Argon2 from a
    # vector kernel, say): what the policy must choose on this CPU.
    selected = [r for r in records if r.state == "selected"]
    assert sorted(a for r in selected for a in r.selected_for) == ["argon2", "blake2b"]
    for algorithm in ("argon2", "blake2b"):
        [chosen] = [r.name for r in selected if algorithm in r.selected_for]
        assert chosen == testing.expected_backend(algorithm)
    forced = os.environ.get("ARGONISHCHE_BACKEND")
    if forced:  # the tox backend-* envs
        assert [r.name for r in selected] == [forced.lower()]
    # Listed by priority, the ladder's order.
    priorities = [r.priority for r in records if r.description]
    assert priorities == sorted(priorities, reverse=True)
    # Every backend that is not usable says why.  Here all may be usable, so ref is blocked too.
    blocked = state_of(make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": "ref"}), "ref")
    unusable = [r for r in [*records, blocked] if r.state not in ("selected", "available")]
    assert blocked in unusable
    for r in unusable:
        assert r.reason, f"{r.name} is {r.state} without a reason"


def test_selected_backend():
    selected_for = {a: r.name for r in argonishche.backends() for a in r.selected_for}
    assert argonishche.selected_backend() == selected_for["argon2"]
    assert argonishche.selected_backend("argon2") == selected_for["argon2"]
    assert argonishche.selected_backend("blake2b") == selected_for["blake2b"]
    with pytest.raises(ValueError, match="algorithm"):
        argonishche.selected_backend("sha256")
