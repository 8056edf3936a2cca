"""Tests of the example backend: what every kernel plugin's tests should check.

Copy this file with the template.  ``argonishche.testing`` is the conformance suite every
in-tree backend passes: :func:`usable_or_skip` first (it fails the test if argonishche refused
the backend: it did not load, or failed its self-test or certification; it skips only where the
CPU lacks a declared feature or the user blocked the backend), then :func:`check_backend` (the
kernels against ref's, every known-answer vector, differential tests against ref and hashlib)
and :func:`certify_backend` (the slower checks argonishche runs once per kernel module before
trusting a third party's kernels).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

import argonishche
import argonishche.testing as conformance

NAME = "example"


def record():
    return next((b for b in argonishche.backends() if b.name == NAME), None)


@pytest.fixture(scope="module")
def backend() -> str:
    """The backend's name, once argonishche has found it usable (else a failure saying why)."""
    conformance.usable_or_skip(NAME)
    return NAME


# ---- discovery: argonishche finds the plugin through its entry point -----------------------


def test_discovered_through_its_entry_point(backend):
    info = record()
    assert info.distribution.startswith("argonishche-example ")
    assert not info.builtin                    # a third party's, as far as argonishche knows
    assert (info.priority, info.cpu_features) == (-10, ())


def test_descriptor():
    import argonishche_example

    assert argonishche_example.BACKEND.kernel_module == "argonishche_example._kernels"
    assert argonishche_example.BACKEND.name == NAME


# ---- conformance: the kernels are right ---------------------------------------------------


def test_conforms(backend):
    assert conformance.check_backend(backend) == []


def test_passes_certification(backend):
    assert conformance.certify_backend(backend) == []


def test_hashes_as_ref_and_hashlib_do(backend):
    kwargs = dict(type="id", time_cost=2, memory_cost=256, parallelism=2, hash_len=32)
    assert argonishche.argon2_hash(b"password", b"somesalt", backend=backend, **kwargs) == \
        argonishche.argon2_hash(b"password", b"somesalt", backend="ref", **kwargs)
    data = bytes(range(256)) * 40
    assert argonishche.blake2b(data, backend=backend).digest() == hashlib.blake2b(data).digest()


# ---- selection: installing the template changes nothing ---------------------------------


def test_the_ladder_prefers_every_built_in(backend):
    # Its priority is below ref's: where the ladder decides, a built-in hashes.  A fresh
    # interpreter, so that the process's own selection (maybe measured) is not in the way.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    env["ARGONISHCHE_SELECT"] = "priority"
    code = ("import argonishche; print(argonishche.selected_backend('argon2'), "
            "argonishche.selected_backend('blake2b'))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert NAME not in run.stdout.split(), run.stdout
