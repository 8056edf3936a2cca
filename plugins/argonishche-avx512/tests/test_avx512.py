"""Tests of the avx512 backend: its discovery here, and argonishche's conformance suite.

The conformance suite (``argonishche.testing``: the kernels against ref's, every known-answer
vector, differential tests against ref and hashlib) is the one every in-tree backend passes.
On a CPU without AVX-512 F and VL the backend must still be discovered (as ``unsupported-cpu``)
and every test that runs its kernels is a skip that says why; ``ARGONISHCHE_REQUIRE_BACKENDS=
avx512`` (or ``all``) turns those skips into failures.
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys

import pytest

import argonishche
import argonishche.testing as conformance
from argonishche._trust import cpu_gate

NAME = "avx512"
#: What the kernels are compiled for (see src/avx512.c); AVX2 and AVX come with the VEX forms.
FEATURES = {"avx", "avx2", "avx512f", "avx512vl"}
USABLE = conformance.USABLE_STATES


def record():
    return next((b for b in argonishche.backends() if b.name == NAME), None)


@pytest.fixture(scope="module")
def backend() -> str:
    """The backend's name, or a skip (a failure where it is required) saying why it cannot run."""
    conformance.usable_or_skip(NAME)
    return NAME


# ---- (a) discovery ------------------------------------------------------------------------


def test_discovered_through_its_entry_point():
    info = record()
    assert info is not None, [b.name for b in argonishche.backends()]
    assert info.distribution.startswith("argonishche-avx512")
    if info.state != "blocked":   # a blocked plugin is never imported, so nothing more is known
        assert set(info.cpu_features) == FEATURES
        assert info.priority == 50


def test_descriptor():
    import argonishche_avx512

    backend = argonishche_avx512.BACKEND
    assert (backend.name, backend.kernel_module, backend.priority) == \
        (NAME, "argonishche_avx512._kernels", 50)
    assert backend.cpu_features == FEATURES


def test_state_follows_the_cpu():
    info = record()
    blocked = NAME in {n.strip().lower() for n in
                       os.environ.get("ARGONISHCHE_DISABLE_BACKENDS", "").split(",")}
    if blocked:
        assert info.state == "blocked"
    elif FEATURES <= cpu_gate.features():
        assert info.state in USABLE, info.reason
        # Selected for each algorithm where the policy says so on this CPU (measured: AVX-512
        # is not the fastest BLAKE2b everywhere; by priority: the top of the ladder).
        for algorithm in ("argon2", "blake2b"):
            if conformance.expected_backend(algorithm) == NAME:
                assert argonishche.selected_backend(algorithm) == NAME
                assert info.state == "selected" and algorithm in info.selected_for
    else:
        assert info.state == "unsupported-cpu"
        assert "lacks" in info.reason


def test_unsupported_cpu_is_reported_not_imported():
    """Hide AVX-512VL from the gate: the backend is listed as unsupported and its compiled
    module is never imported (importing it must also be harmless, but the gate comes first)."""
    code = ("import sys, argonishche; b = {r.name: r for r in argonishche.backends()}['avx512'];"
            "print(b.state, 'argonishche_avx512._kernels' in sys.modules)")
    env = dict(os.environ, ARGONISHCHE_DISABLE_CPU_FEATURES="avx512vl")
    for name in ("ARGONISHCHE_BACKEND", "ARGONISHCHE_DISABLE_BACKENDS"):
        env.pop(name, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["unsupported-cpu", "False"]


def run_with(**environ):
    code = ("import sys, argonishche; b = {r.name: r.state for r in argonishche.backends()};"
            "print(b.get('avx512', 'absent'), 'argonishche_avx512' in sys.modules,"
            " 'argonishche_avx512._kernels' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    env.update(environ)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, timeout=120).stdout.split()


@pytest.mark.parametrize("name", ["avx512", "argonishche-avx512", "ARGONISHCHE_AVX512"])
def test_disabling_the_backend_or_its_distribution_never_imports_the_plugin(name):
    # Declared in the distribution's argonishche.backends entry points: listed, never imported.
    assert run_with(ARGONISHCHE_DISABLE_BACKENDS=name) == ["blocked", "False", "False"]


# ---- (b) conformance ----------------------------------------------------------------------


def test_conforms(backend):
    assert conformance.check_backend(backend, count=96, seed=7693) == []


# The kernel keeps h in registers across a run of blocks and prepares each block's message
# schedule one block ahead: runs of every length, and updates in uneven pieces.
@pytest.mark.parametrize("length", [0, 1, 127, 128, 129, 255, 256, 257, 383, 384, 385,
                                    128 * 17 - 1, 128 * 17, 128 * 17 + 1, 100_003])
def test_blake2b_runs_of_blocks(backend, length):
    data = random.Random(length).randbytes(length)
    h = argonishche.blake2b(backend=backend, key=b"k" * (length % 65))
    for start in range(0, length, 1000):
        h.update(data[start:start + 1000])
    assert h.hexdigest() == hashlib.blake2b(data, key=b"k" * (length % 65)).hexdigest()
    assert argonishche.blake2b(data, backend=backend).digest() == hashlib.blake2b(data).digest()
