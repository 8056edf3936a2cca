"""The CPython blake2b harness (tools/cpython_hashlib/run.py) on the selected backend, where
CPython's test_hashlib is installed (``tox -e hashlib-suite`` runs it on every backend), and its
KAT file: the BLAKE2 reference's 512 BLAKE2b answers, which hashlib must give too."""

from __future__ import annotations

import hashlib
import importlib.util
import pathlib
import subprocess
import sys

import argonishche
import pytest

HARNESS = pathlib.Path(__file__).resolve().parents[2] / "tools" / "cpython_hashlib" / "run.py"


def load_harness():
    spec = importlib.util.spec_from_file_location("cpython_hashlib_run", HARNESS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_kat_file_is_the_reference_kat_and_hashlib_agrees():
    lines = load_harness().kat_lines()
    assert len(lines) == 512
    keyed = [line for line in lines if line.split(",")[1]]
    assert len(keyed) == 256 and all(len(bytes.fromhex(line.split(",")[1])) == 64
                                     for line in keyed)
    for line in lines:
        message, key, digest = (bytes.fromhex(part) for part in line.split(","))
        assert hashlib.blake2b(message, key=key).digest() == digest
        assert argonishche.blake2b(message, key=key).digest() == digest


@pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                    reason="the documented differences are from hashlib 3.11's tests")
def test_cpython_blake2b_tests_pass_on_the_selected_backend():
    if importlib.util.find_spec("test.test_hashlib") is None and \
            not load_harness().DEBIAN_TEST_HASHLIB.exists():
        pytest.skip("CPython's test_hashlib is not installed (Debian: libpython3.11-testsuite)")
    backend = argonishche.selected_backend("blake2b")
    done = subprocess.run([sys.executable, str(HARNESS), "--backend", backend],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert (f"ok {backend}: 18 run, 0 failed, 0 errors, 0 skipped, 1 expected failures, "
            "0 unexpected successes") in done.stdout, done.stdout
