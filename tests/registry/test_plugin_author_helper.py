"""``argonishche.testing.usable_or_skip``, the first line of a plugin's tests: it must fail on a
backend argonishche refused, so that a plugin's CI cannot go green on a kernel users never get,
and skip only where the backend cannot run here through no fault of its own (the CPU lacks a
declared feature, or the user blocked it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import argonishche.testing as conformance
import pytest
from argonishche import _settings
from argonishche._trust import cpu_gate
from argonishche.hookspecs import CPU_FEATURE_NAMES, Backend
from support import (
    REF_SOURCE,
    FakeEntryPoint,
    compiled_backend,
    make_registry,
    plugin_registering,
    state_of,
)

FAILED, SKIPPED = pytest.fail.Exception, pytest.skip.Exception
RUN_TIMEOUT = 120


def outcome(name):
    """What ``usable_or_skip(name)`` did to the calling test: ("failed" or "skipped", the
    message) or ("returned", ""), caught here so that a wrong outcome fails this test."""
    try:
        conformance.usable_or_skip(name)
    except FAILED as exc:
        return "failed", str(exc)
    except SKIPPED as exc:
        return "skipped", str(exc)
    return "returned", ""


def assert_outcome(name, expected, pattern):
    got, message = outcome(name)
    assert got == expected, f"{got}, not {expected}: {message}"
    assert re.search(pattern, message), message


@pytest.fixture
def settings_without_requirements(monkeypatch):
    """The helper's settings without ARGONISHCHE_REQUIRE_BACKENDS (a tox env may set it), or
    with the variables given."""
    def use(environ=None):
        monkeypatch.setattr(_settings, "_current", _settings.parse(environ or {}))
    use()
    return use


def registry_with(install, backend, environ=None, entry_point=None):
    """The process registry, for the test: the built-ins and a plugin registering *backend*
    under an entry point named after it (or *entry_point*)."""
    plugin = FakeEntryPoint(entry_point or backend.name, plugin_registering(backend))
    return install(make_registry(plugin, environ=environ, installed=False))


def missing_module(name):
    return Backend(name=name, description="its module is not installed",
                   kernel_module=f"{name}_no_such_module")


@pytest.fixture(scope="module")
def right_kernels(tmp_path_factory):
    """ref's kernels in a module of a third party's: right, but certified only against ref."""
    with compiled_backend(tmp_path_factory.mktemp("helper_right"), "helper_right_kernels",
                          REF_SOURCE.read_text(), name="uncertified",
                          description="ref's kernels, with nothing to certify them") as backend:
        yield backend


# ---- failures ----------------------------------------------------------------------------


def test_fails_on_a_backend_whose_module_does_not_load(install, settings_without_requirements):
    with pytest.warns(RuntimeWarning, match="is not used"):
        reg = registry_with(install, missing_module("broken"))
    assert state_of(reg, "broken").state == "load-failed"
    assert_outcome("broken", "failed", "backend broken is load-failed: kernel module "
                                     "broken_no_such_module")


def test_fails_on_a_backend_that_failed_its_self_test(install, settings_without_requirements,
                                                      wrong_kernels):
    with pytest.warns(RuntimeWarning, match="failed its self-test"):
        reg = registry_with(install, wrong_kernels)
    assert state_of(reg, "wrong").state == "selftest-failed"
    assert_outcome("wrong", "failed", "backend wrong is selftest-failed: wrong result for")


def test_fails_on_a_backend_that_failed_certification(install, settings_without_requirements,
                                                      right_kernels):
    # ref blocked: nothing can certify a third party's kernels, so they are not used.
    with pytest.warns(RuntimeWarning, match="not certified"):
        reg = registry_with(install, right_kernels,
                            environ={"ARGONISHCHE_DISABLE_BACKENDS": "ref"})
    assert state_of(reg, "uncertified").state == "certification-failed"
    assert_outcome("uncertified", "failed", "backend uncertified is certification-failed")


@pytest.mark.parametrize("state", ["name-conflict", "quarantined", "a-state-added-later"])
def test_fails_on_every_other_state_not_usable(install, settings_without_requirements, state):
    # States other parts of argonishche set (two plugins claiming one name, a kernel caught
    # disagreeing with the built-in): the helper compares by name, and only the states it knows
    # to be harmless are skips.
    with pytest.warns(RuntimeWarning, match="is not used"):
        reg = registry_with(install, missing_module("odd"))
    reg.entries["odd"].state, reg.entries["odd"].reason = state, "why it is so"
    assert_outcome("odd", "failed", f"backend odd is {state}: why it is so")


def test_fails_on_a_backend_no_plugin_registers(install, settings_without_requirements):
    install(make_registry(installed=False))
    assert_outcome("mine", "failed", "backend mine is not registered: no installed plugin "
                                     "registers it.*argonishche info")


def test_fails_naming_the_plugin_that_failed_to_import(install, settings_without_requirements):
    plugin = FakeEntryPoint("mine", error=ImportError("mykernels needs libfoo"),
                            dist=("mykernels", "1.0"))
    with pytest.warns(RuntimeWarning, match="failed to load"):
        install(make_registry(plugin, installed=False))
    assert_outcome("mine", "failed", r"backend mine is not registered, and plugins failed: "
                                     r"plugin 'mine' from mykernels 1.0: failed to load: "
                                     r"ImportError\('mykernels needs libfoo'\)")


# ---- skips, and what is usable -----------------------------------------------------------


def test_skips_a_backend_this_cpu_cannot_run(install, settings_without_requirements):
    lacking = sorted(set(CPU_FEATURE_NAMES) - cpu_gate.features())
    if not lacking:
        pytest.skip("this CPU has every feature argonishche knows: none to lack")
    registry_with(install, Backend(name="future", description="needs what this CPU lacks",
                                   kernel_module="future_kernels",
                                   cpu_features={lacking[0]}))
    assert_outcome("future", "skipped", f"backend future is unsupported-cpu: .*{lacking[0]}")
    # ... unless the run requires it.
    settings_without_requirements({"ARGONISHCHE_REQUIRE_BACKENDS": "future"})
    assert_outcome("future", "failed", "unsupported-cpu.*required by ARGONISHCHE_REQUIRE_BACKENDS")


def test_skips_a_blocked_backend(install, settings_without_requirements):
    # Under an entry point of another name, the plugin is imported and its backend blocked.
    with pytest.warns(RuntimeWarning, match="under another name"):
        registry_with(install, missing_module("held"), entry_point="held_kernels",
                      environ={"ARGONISHCHE_DISABLE_BACKENDS": "held"})
    assert_outcome("held", "skipped", "backend held is blocked by "
                                      "ARGONISHCHE_DISABLE_BACKENDS")


def test_skips_a_backend_whose_plugin_is_blocked(install, settings_without_requirements):
    # The entry point named after the backend: blocked before it is imported, so nothing of
    # it is registered, and the plugin's record says why.
    never = FakeEntryPoint("held", error=AssertionError("a blocked plugin is never imported"))
    install(make_registry(never, environ={"ARGONISHCHE_DISABLE_BACKENDS": "held"},
                          installed=False))
    assert_outcome("held", "skipped", "backend held is not registered: plugin 'held' .* is "
                                      "blocked")
    settings_without_requirements({"ARGONISHCHE_REQUIRE_BACKENDS": "held"})
    assert_outcome("held", "failed", "required by ARGONISHCHE_REQUIRE_BACKENDS")


def test_skips_a_backend_whose_plugin_waits_behind_a_forced_built_in(
        install, settings_without_requirements):
    later = FakeEntryPoint("mine", error=AssertionError("not imported while ref is forced"))
    install(make_registry(later, environ={"ARGONISHCHE_BACKEND": "ref"}, installed=False))
    assert_outcome("mine", "skipped", "backend mine is not registered: plugin 'mine' .* is "
                                      "deferred: not imported: ARGONISHCHE_BACKEND=ref")


def test_returns_for_a_usable_backend(install, settings_without_requirements):
    install(make_registry(installed=False))
    assert outcome("ref") == ("returned", "")


# ---- what a plugin's CI sees ---------------------------------------------------------------


PLUGIN_MODULE = """
import argonishche

@argonishche.hookimpl
def argonishche_register_backends(register):
    register(argonishche.Backend(name="broken", description="its kernel module is missing",
                                 kernel_module="broken_kernels_never_built"))
"""

PLUGIN_TESTS = """
import argonishche.testing as conformance

def test_the_backend_conforms():
    conformance.usable_or_skip({name!r})
    assert conformance.check_backend({name!r}, count=2) == []
"""


def run_plugin_tests(tmp_path, name):
    """A plugin installed as pip leaves one (its module and a .dist-info with the entry point)
    and a test suite as docs/plugins.md writes it, run by pytest in a fresh interpreter."""
    site = tmp_path / "site"
    dist_info = site / "brokenkernels-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenkernels\n"
                                        "Version: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[argonishche]\nbroken = broken_plugin\n")
    (site / "broken_plugin.py").write_text(PLUGIN_MODULE)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_plugin.py").write_text(PLUGIN_TESTS.format(name=name))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-W", "ignore::RuntimeWarning", str(tests)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)


def test_a_plugin_suite_on_a_broken_backend_exits_non_zero(tmp_path):
    run = run_plugin_tests(tmp_path, "broken")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "1 failed" in output and "skipped" not in output
    assert "backend broken is load-failed" in output


def test_the_same_suite_on_a_working_backend_passes(tmp_path):
    # The harness above can pass: the same installed plugin, the suite run on ref.
    run = run_plugin_tests(tmp_path, "ref")
    assert run.returncode == 0, textwrap.shorten(run.stdout + run.stderr, 3000)
    assert "1 passed" in run.stdout
