"""The first certification of a third-party kernel module runs in a child interpreter, and its
record holds for the code that runs (argonishche._trust.certification_child,
argonishche._trust.certification).

The kernels are ref's, compiled as a third party's module with one change each (a trap, an
abort, a hang, a wrong F for long runs); a fresh interpreter per step where a real process
boundary matters (a shared object cannot be loaded twice in one process).
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from argonishche import _cli, _settings, hookspecs
from argonishche._trust import (
    certification,
    certification_checks,
    certification_child,
    child_launch,
    code_identity,
    cpu_gate,
    record_store,
    vetting,
)
from argonishche.exceptions import SettingError
from support import (
    REF_SOURCE,
    FakeEntryPoint,
    compiled_backend,
    make_registry,
    run_python,
    state_of,
)

TESTS = pathlib.Path(__file__).resolve().parents[1]  # support.py's folder
BUILTIN = ("ref", "sse2", "ssse3", "sse41", "avx2", "neon")
F_HEADER = "uint64_t last_node_flag) {\n"
G_HEADER = "const argonishche_block *ref, int xor_into_next) {\n"
#: F wrong only for runs of more than 8,192 blocks: the quick self-test passes, the
#: certification does not.
LONG_RUN_BUG = "    if (nblocks > 8192) h[0] ^= 1;\n"


def kernels_with(f_prologue: str = "", g_prologue: str = "") -> str:
    """ref's kernels with C statements put first in F's and in G's body."""
    source = REF_SOURCE.read_text()
    assert F_HEADER in source and G_HEADER in source
    return ("#include <signal.h>\n#include <stdlib.h>\n"
            + source.replace(F_HEADER, F_HEADER + f_prologue)
            .replace(G_HEADER, G_HEADER + g_prologue))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(directory))
    return directory / "argonishche" / "certified"


def registry_with(backend, **environ):
    return make_registry(FakeEntryPoint(backend.name, _plugin(backend)),
                         environ={"ARGONISHCHE_SELECT": "priority", **environ})


def _plugin(backend):
    from support import plugin_registering

    return plugin_registering(backend)


@pytest.mark.parametrize("prologue, died_of", [
    ("    __builtin_trap();\n", "SIGILL" if platform.machine() in ("x86_64", "AMD64") else "SIG"),
    ("    abort();\n", "SIGABRT"),
])
def test_a_kernel_that_crashes_costs_only_its_backend(tmp_path, cache, prologue, died_of):
    module_name = f"crashing_kernels_{'trap' if 'trap' in prologue else 'abort'}"
    with compiled_backend(tmp_path, module_name, kernels_with(f_prologue=prologue),
                          name="crashing", description="dies in F") as backend:
        with pytest.warns(RuntimeWarning, match="died of"):
            reg = registry_with(backend)
        record = state_of(reg, "crashing")
        assert record.state == "certification-failed"
        assert f"the certification child died of {died_of}" in record.reason
        assert module_name not in sys.modules  # never imported by this process
        assert reg.selected_name("argon2") in BUILTIN
        assert not cache.exists()  # nothing to remember: the child could not say what it ran


def test_a_kernel_that_hangs_is_killed_after_the_timeout(tmp_path, cache):
    hang = "    { volatile int forever = 1; while (forever) {} }\n"
    with compiled_backend(tmp_path, "hanging_kernels", kernels_with(g_prologue=hang),
                          name="hanging", description="never returns from G") as backend:
        started = time.perf_counter()
        with pytest.warns(RuntimeWarning, match="did not finish within 2 s"):
            reg = registry_with(backend, ARGONISHCHE_CERTIFY_TIMEOUT="2")
        assert time.perf_counter() - started < 30
        record = state_of(reg, "hanging")
        assert record.state == "certification-failed"
        assert "ARGONISHCHE_CERTIFY_TIMEOUT" in record.reason and "killed" in record.reason
        assert "hanging_kernels" not in sys.modules
        assert reg.selected_name("argon2") in BUILTIN


def test_a_patch_of_the_checks_in_this_process_does_not_certify_a_wrong_kernel(
        tmp_path, cache, monkeypatch):
    # What a second entry point of the same distribution did at import: every kernel "passes".
    monkeypatch.setattr(certification_checks, "failures", lambda table, reference=None: [])
    with compiled_backend(tmp_path, "long_run_kernels", kernels_with(LONG_RUN_BUG),
                          name="longrun", description="F wrong beyond 8,192 blocks") as backend:
        with pytest.warns(RuntimeWarning, match="failed its certification"):
            reg = registry_with(backend)
        record = state_of(reg, "longrun")
        assert record.state == "certification-failed"
        assert "BLAKE2b F over a run of" in record.reason
        assert reg.selected_name("blake2b") in BUILTIN
        # Remembered for its code: the next process refuses it without a child.
        monkeypatch.setattr(certification_child, "certify_in_child", _no_child)
        with pytest.warns(RuntimeWarning, match="remembered from an earlier run"):
            assert state_of(registry_with(backend), "longrun").state == "certification-failed"


def _no_child(*args, **kwargs):
    raise AssertionError("a valid record must spare the child")


def test_a_remembered_certification_spares_the_child(tmp_path, cache, monkeypatch):
    with compiled_backend(tmp_path, "right_kernels", kernels_with(), name="right",
                          description="ref's kernels") as backend:
        first = state_of(registry_with(backend), "right")
        assert first.state == "selected" and "certified now in a child" in first.validation
        [record] = cache.iterdir()
        text = record.read_text()
        assert "code: " in text and "cpu: " in text and "key: " in text
        monkeypatch.setattr(certification_child, "certify_in_child", _no_child)
        again = state_of(registry_with(backend), "right")
        assert again.state == "selected" and "remembered" in again.validation


def test_a_forged_record_is_ignored_and_noted(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(record_store, "ignored", {})
    with compiled_backend(tmp_path, "forged_kernels", kernels_with(LONG_RUN_BUG),
                          name="forged", description="F wrong beyond 8,192 blocks") as backend:
        # A "passed: yes" record for exactly this code, planted where anyone could have written.
        right = code_identity.Code.from_json(_child_code("forged_kernels"))
        origin = code_identity.module_origin("forged_kernels")
        certification.remember("forged_kernels", origin, right, passed=True, failures=[],
                          seconds=0.0)
        path = certification.record_path("forged_kernels", origin)
        assert certification.recall("forged_kernels", origin).passed  # as written: it would count
        os.chmod(path, 0o666)
        with pytest.warns(RuntimeWarning, match="failed its certification"):
            reg = registry_with(backend)
        assert state_of(reg, "forged").state == "certification-failed"
        assert "writable by others" in record_store.ignored[path]


def _child_code(module_name):
    verdict = certification_child.certify_in_child(module_name, frozenset(), settings={},
                                              timeout=120)
    assert verdict.code is not None, verdict
    return verdict.code.as_json()


def test_a_file_changed_while_the_module_loads_is_not_used_or_remembered(tmp_path, cache):
    # A Python module re-exporting compiled kernels, whose import touches the shared object, as
    # a concurrent `pip install -U` replacing it during start-up would.
    with compiled_backend(tmp_path, "_touched_impl", kernels_with(), name="impl",
                          description="ref's kernels"):
        (tmp_path / "touched_kernels.py").write_text(textwrap.dedent("""
            import os
            import _touched_impl
            from _touched_impl import ffi, lib
            status = os.stat(_touched_impl.__file__)
            os.utime(_touched_impl.__file__,
                     ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))
        """))
        backend = hookspecs.Backend(name="touched", description="a shim",
                                    kernel_module="touched_kernels", priority=99)
        with pytest.warns(RuntimeWarning, match="changed since it was certified"):
            reg = registry_with(backend)
        record = state_of(reg, "touched")
        assert record.state == "certification-failed" and "a new process" in record.reason
        assert not cache.exists() or not list(cache.iterdir())


SHIM_PROBE = """
    import json, sys
    sys.path[:0] = [sys.argv[1], sys.argv[2]]
    from support import FakeEntryPoint, make_registry, plugin_registering, state_of
    from argonishche import hookspecs
    backend = hookspecs.Backend(name="shimmed", description="a shim", priority=99,
                                kernel_module="shimmed_kernels")
    reg = make_registry(FakeEntryPoint("shimmed", plugin_registering(backend)),
                        environ={"ARGONISHCHE_SELECT": "priority"})
    record = state_of(reg, "shimmed")
    print(json.dumps(dict(state=record.state, validation=record.validation,
                          reason=record.reason)))
"""


def test_a_changed_shared_object_under_an_unchanged_shim_is_certified_again(tmp_path, cache):
    built = {}
    for version, source in (("right", kernels_with()), ("wrong", kernels_with(LONG_RUN_BUG))):
        directory = tmp_path / version
        directory.mkdir()
        with compiled_backend(directory, "_shimmed_impl", source, name="x", description="x"):
            pass
        [built[version]] = directory.glob("_shimmed_impl.*.so")
    installed = tmp_path / "site"
    installed.mkdir()
    (installed / "shimmed_kernels.py").write_text("from _shimmed_impl import ffi, lib\n")
    target = installed / built["right"].name

    def start_up():
        result = run_python(textwrap.dedent(SHIM_PROBE), str(installed), str(TESTS),
                            timeout=240)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])

    shutil.copy(built["right"], target)
    first = start_up()
    assert first["state"] == "selected" and "certified now" in first["validation"]
    assert "(remembered from an earlier run)" in start_up()["validation"]
    os.replace(shutil.copy(built["wrong"], installed / "upgrade.tmp"), target)  # the upgrade
    upgraded = start_up()
    assert upgraded["state"] == "certification-failed", upgraded
    assert "BLAKE2b F over a run of" in upgraded["reason"]


def test_selftest_full_certifies_a_refused_backend_again(tmp_path, cache, monkeypatch, capsys):
    with compiled_backend(tmp_path, "witnessed_kernels", kernels_with(), name="witnessed",
                          description="ref's kernels") as backend:
        reg = registry_with(backend)
        entry = reg.entries["witnessed"]
        certification.remember_failure(entry.module, entry.table, ["Argon2id differs from ref"])
        with pytest.warns(RuntimeWarning, match="Argon2id differs from ref"):
            refused = registry_with(backend)
        assert state_of(refused, "witnessed").state == "certification-failed"
        monkeypatch.setattr(_cli._registry, "get", lambda: refused)
        assert _cli.main(["selftest", "--full"]) == 0
        assert "witnessed  ok" in capsys.readouterr().out
        assert state_of(registry_with(backend), "witnessed").state == "selected"


@pytest.mark.parametrize("source, why", [
    ("import sys\nsys.exit(3)\n", "exited with status 3"),
    ("print('argonishche-certification: {\"stage\": \"passed\"}')\nraise SystemExit(0)\n",
     "answer could not be read"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "died of SIGSEGV"),
])
def test_a_child_that_does_not_answer_properly_fails_the_backend(tmp_path, monkeypatch,
                                                                 source, why):
    (tmp_path / "odd_kernels.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    verdict = certification_child.certify_in_child("odd_kernels", frozenset(), settings={},
                                              timeout=60)
    assert verdict.stage == "died" and why in verdict.failures[0], verdict
    assert "odd_kernels" not in sys.modules


def test_the_child_gets_the_settings_and_the_path_it_needs(monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "not for plugins")
    environ = child_launch.child_environment({"ARGONISHCHE_DISABLE_CPU_FEATURES": "avx2"})
    assert environ["ARGONISHCHE_DISABLE_CPU_FEATURES"] == "avx2"
    assert "SECRET_TOKEN" not in environ
    assert "PYTHONPATH" not in environ  # the path is an argument: -I would ignore PYTHONPATH
    path = json.loads(child_launch.parent_path())["path"]
    assert path[0] == os.path.abspath(sys.path[0] or ".")


@pytest.mark.parametrize("value", ["0", "abc", "1.5", "\uff11\uff12", "86401", "-3"])
def test_an_invalid_certification_timeout_is_a_setting_error(value):
    with pytest.raises(SettingError, match="ARGONISHCHE_CERTIFY_TIMEOUT"):
        _settings.parse({"ARGONISHCHE_CERTIFY_TIMEOUT": value})


def test_the_certification_timeout_defaults_to_two_minutes():
    assert _settings.parse({}).certify_timeout == 120
    assert _settings.parse({"ARGONISHCHE_CERTIFY_TIMEOUT": " 30 "}).certify_timeout == 30


def test_the_child_is_used_only_for_third_party_backends(monkeypatch):
    monkeypatch.setattr(certification_child, "certify_in_child", _no_child)
    reg = make_registry()
    assert all(record.builtin for record in reg.report())
    assert vetting.needs_certification(reg.entries["ref"]) is False


@pytest.mark.parametrize("unchanged", [True, False])
def test_without_dladdr_the_module_file_must_be_the_one_the_child_loaded(
        tmp_path, cache, monkeypatch, unchanged):
    with compiled_backend(tmp_path, f"unidentified_kernels_{unchanged}", kernels_with(),
                          name="unidentified", description="ref's kernels") as backend:
        origin = code_identity.module_origin(backend.kernel_module)
        seen = code_identity.signature(origin)
        if not unchanged:
            seen = (*seen[:3], seen[3] - 1)  # the child saw an older file

        def child_without_dladdr(module_name, declared, *, settings, timeout):
            return certification_child.Verdict("passed", [], 0.1, 0.1, cpu_gate.identity(),
                                          None, "no dladdr here", seen)
        monkeypatch.setattr(certification_child, "certify_in_child", child_without_dladdr)
        if unchanged:
            record = state_of(registry_with(backend), "unidentified")
            assert record.state == "selected" and "certified now" in record.validation
            assert not cache.exists()  # no record possible
        else:
            with pytest.warns(RuntimeWarning, match="cannot be identified"):
                record = state_of(registry_with(backend), "unidentified")
            assert record.state == "certification-failed"


def test_an_interrupted_parent_kills_its_certification_child(tmp_path, cache, monkeypatch):
    # Ctrl-C never reaches the child (a session of its own): the parent must kill it, or a
    # hanging kernel outlives the process that started it.
    hang = "    { volatile int forever = 1; while (forever) {} }\n"
    children = []
    real_communicate = subprocess.Popen.communicate

    def interrupted(self, *args, **kwargs):
        if kwargs.get("timeout") is not None and not children:  # the wait for the verdict
            children.append(self)
            time.sleep(0.5)  # the child is in its checks by now
            raise KeyboardInterrupt
        return real_communicate(self, *args, **kwargs)

    with compiled_backend(tmp_path, "hanging_kernels_interrupted",
                          kernels_with(g_prologue=hang), name="hanging",
                          description="never returns from G"):
        monkeypatch.setattr(subprocess.Popen, "communicate", interrupted)
        with pytest.raises(KeyboardInterrupt):
            certification_child.certify_in_child("hanging_kernels_interrupted", frozenset(),
                                            settings={}, timeout=600)
    (child,) = children
    assert child.poll() is not None, "the certification child was left running"
