"""``python -m argonishche info`` and ``selftest``: exit codes and what they print."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import argonishche


def run(*args, **env):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "argonishche", *args], env=environ,
                          capture_output=True, text=True, timeout=120)


def test_info_lists_cpu_features_every_backend_and_the_selection():
    out = run("info")
    assert out.returncode == 0, out.stderr
    assert "CPU features (CPUID/XGETBV in-process):" in out.stdout
    assert "py-cpuinfo flags" in out.stdout
    for backend in argonishche.backends():
        assert backend.name in out.stdout
    assert f"Selected for argon2: {argonishche.selected_backend('argon2')}" in out.stdout


def test_info_json_is_machine_readable():
    out = run("info", "--json", "--fast")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["selected"]["argon2"] == argonishche.selected_backend("argon2")
    assert {b["name"] for b in report["backends"]} >= {"ref"}
    assert "py_cpuinfo" not in report["cpu"]


def test_info_shows_a_forced_backend_error_and_fails():
    out = run("info", "--fast", ARGONISHCHE_BACKEND="nosuch")
    assert out.returncode == 1
    assert "ERROR: ARGONISHCHE_BACKEND=nosuch: no such backend" in out.stdout


def test_info_shows_blocked_backends():
    out = run("info", "--json", "--fast", ARGONISHCHE_DISABLE_BACKENDS="ref")
    states = {b["name"]: b["state"] for b in json.loads(out.stdout)["backends"]}
    assert states["ref"] == "blocked"


def test_selftest_runs_every_vector_on_every_usable_backend():
    out = run("selftest")
    assert out.returncode == 0, out.stdout + out.stderr
    for backend in argonishche.backends():
        if backend.state in ("selected", "available"):
            assert f"{backend.name:<10} ok" in out.stdout


def test_bad_subcommand_is_a_usage_error():
    out = run("frobnicate")
    assert out.returncode == 2
    assert "usage:" in out.stderr
