"""The certification child works wherever Python runs (issue 31): in a frozen application, under
an embedding host, in isolated mode, and it never outlives the process that started it.

Real plugin wheels (tests/plugin_wheels.py) installed with pip, run by fresh interpreters that
stand in for the host: a script that sets ``sys.frozen`` and points ``sys.executable`` at a
launcher that would run the "application" again; a ``sys.executable`` that is a host binary
which never exits, or ``/bin/false``; a parent run with ``-I`` whose environment holds a
PYTHONHOME with a sitecustomize that patches the checks; a parent killed while its child
certifies a kernel that hangs.  Each test has a cache directory and a home of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import textwrap
import time
from pathlib import Path

import plugin_wheels
import pytest
from argonishche._trust.child_launch import STARTUP_TIMEOUT
from plugin_wheels import environment, kernel_plugin

RUN_TIMEOUT = 180  # seconds for one fresh interpreter; a hang is a failure
#: Far below the default timeout (120 s) and the one these tests set (60 s), far above a
#: certification (a few seconds) plus the start-up timeout (5 s).
FIRST_HASH_AT_MOST = 30

pytestmark = pytest.mark.skipif(
    any(name.startswith("ARGONISHCHE_") for name in os.environ) or os.name != "posix",
    reason="fresh interpreters without ARGONISHCHE_* settings, POSIX hosts (shell scripts)")

PLUGINS = {
    "right": kernel_plugin("host_right"),
    # F wrong for runs of 8,193 blocks or more: the quick self-test passes, certification not.
    "wrong": kernel_plugin("host_wrong", "TRUST_F_RUN_FROM 8193"),
    "hang": kernel_plugin("host_hang", "TRUST_F_HANG_FROM 8193"),
}

#: The application: its sites on sys.path, *before* (what the host does to sys), then the first
#: hash, timed, and what argonishche says about the plugin's backend.
APP = """
import hashlib, json, os, sys, time
sys.path[:0] = {sites!r}
{before}
import argonishche
started = time.monotonic()
message = bytes(range(256)) * 8192  # 2 MiB: runs of more than 8,192 blocks in one F call
state = argonishche.blake2b()
state.update(message)
right = state.digest() == hashlib.blake2b(message).digest()
seconds = time.monotonic() - started
[record] = [b for b in argonishche.backends() if b.name == {backend!r}]
print("HOST " + json.dumps(dict(seconds=seconds, right=right, state=record.state,
                                reason=record.reason, validation=record.validation,
                                selected=argonishche.selected_backend("blake2b"))))
"""


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    """Each plugin of PLUGINS built and installed with pip, once: {key: its directory}."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build the plugin wheels")
    root = tmp_path_factory.mktemp("host_plugins")
    wheels = plugin_wheels.build_wheels(PLUGINS, root)
    return {key: plugin_wheels.install(wheel, root / f"site-{key}")
            for key, wheel in wheels.items()}


def host_environment(tmp_path: Path, cache: Path, **variables: str) -> dict[str, str]:
    """A clean environment with a home of the test's own (nothing may land in it)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return environment(cache, [], **{"HOME": str(home), "ARGONISHCHE_SELECT": "priority",
                                            "ARGONISHCHE_CERTIFY_TIMEOUT": "60", **variables})


def run_app(tmp_path: Path, cache: Path, site: Path, backend: str, before: str,
            *flags: str, **variables: str) -> dict:
    """Run APP in a fresh interpreter; what it printed (a hang or a crash fails the test)."""
    app = tmp_path / "app.py"
    app.write_text(APP.format(sites=[str(site)], before=textwrap.dedent(before),
                              backend=backend))
    try:
        done = subprocess.run([sys.executable, *flags, str(app)], capture_output=True,
                              text=True, timeout=RUN_TIMEOUT,
                              env=host_environment(tmp_path, cache, **variables))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the application did not finish within {RUN_TIMEOUT} s (a hang)")
    lines = [line for line in done.stdout.splitlines() if line.startswith("HOST ")]
    assert done.returncode == 0 and lines, f"exit {done.returncode}:\n{done.stderr[-3000:]}"
    return json.loads(lines[-1][len("HOST "):])


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


# ---- a frozen application -------------------------------------------------------------------


def test_a_frozen_application_is_not_run_again_to_certify(sites, tmp_path, cache):
    # sys.executable is the application: run with any arguments, it runs its main again, which
    # hashes, which would certify again...  The depth file counts the runs; a guard stops them
    # at 4 (before the fix: 4).
    depth = tmp_path / "depth"
    app = tmp_path / "app.py"
    launcher = script(tmp_path / "frozen-app", f"exec {sys.executable} {app}\n")
    before = f"""
        with open({str(depth)!r}, "a") as runs:
            runs.write(f"{{os.getpid()}}\\n")
        if len(open({str(depth)!r}).read().splitlines()) > 3:
            sys.exit(0)
        sys.frozen = True
        sys.executable = sys._base_executable = {str(launcher)!r}
        """
    out = run_app(tmp_path, cache, sites["right"], "host_right", before)
    assert depth.read_text().count("\n") == 1, "the certification ran the application again"
    assert out["right"]
    assert out["state"] in ("selected", "available") or (
        "ARGONISHCHE_CERTIFY_PYTHON" in out["reason"]), out
    if out["state"] in ("selected", "available"):
        assert plugin_wheels.certification_records(cache, "yes"), (
            "the record goes to the test's cache")
    assert not (tmp_path / "home" / ".cache").exists(), "nothing written into the home"


# ---- an embedding host ----------------------------------------------------------------------


def host_binaries(tmp_path: Path, name: str = "uwsgi") -> dict[str, tuple[Path, Path]]:
    """{kind: (a host binary called *name* that counts its runs, the count file)}."""
    runs = tmp_path / "host-runs"
    return {"never-exits": (script(tmp_path / name, f"echo run >> {runs}\nexec sleep 600\n"),
                            runs),
            "false": (script(tmp_path / f"{name}-false", f"echo run >> {runs}\nexec /bin/false\n"),
                      runs)}


@pytest.mark.parametrize("kind", ["never-exits", "false"])
def test_an_embedding_hosts_binary_is_tried_once_then_this_python_certifies(
        sites, tmp_path, cache, kind):
    # Named like a Python, so it is tried first (a host named otherwise is tried last: below).
    host, runs = host_binaries(tmp_path, "python3-embedded")[kind]
    before = f"sys.executable = {str(host)!r}\n"
    first = run_app(tmp_path, cache, sites["right"], "host_right", before)
    assert first["seconds"] < FIRST_HASH_AT_MOST, first
    assert first["state"] == "selected" and first["right"], first
    assert str(host) in first["validation"], "the validation names the host binary it skipped"
    # Another process, the kernel's record gone: the host binary is not tried again.
    shutil.rmtree(cache / "argonishche" / "certified")
    second = run_app(tmp_path, cache, sites["right"], "host_right", before)
    assert second["state"] == "selected" and second["right"], second
    assert runs.read_text().count("run") == 1, (
        f"the host binary was tried again: {first}, {second}, "
        f"{sorted(p.name for p in (cache / 'argonishche').rglob('*'))}")


def test_a_host_binary_not_named_like_a_python_is_tried_last(sites, tmp_path):
    # Without a writable cache nothing is remembered: every process would pay the handshake's
    # timeout for uwsgi's binary if it were tried first.
    host, runs = host_binaries(tmp_path)["never-exits"]
    unwritable = tmp_path / "a-file"
    unwritable.write_text("")
    for _ in range(2):
        out = run_app(tmp_path, unwritable / "cache", sites["right"], "host_right",
                      f"sys.executable = {str(host)!r}\n")
        assert out["state"] == "selected" and out["right"], out
        assert out["seconds"] < STARTUP_TIMEOUT, out
    assert not runs.exists(), "the host binary was run"


@pytest.mark.parametrize("kind, why", [("never-exits", "did not answer within 5 s"),
                                       ("false", "exited with status 1")])
def test_without_a_usable_interpreter_the_reason_names_it_and_what_to_set(
        sites, tmp_path, cache, kind, why):
    host, _ = host_binaries(tmp_path)[kind]
    out = run_app(tmp_path, cache, sites["right"], "host_right",
                  f"sys.executable = sys._base_executable = {str(host)!r}\n",
                  ARGONISHCHE_CERTIFY_PYTHON=str(host))
    assert out["seconds"] < FIRST_HASH_AT_MOST, out
    assert out["state"] == "certification-failed" and out["right"], out
    assert str(host) in out["reason"] and why in out["reason"], out["reason"]
    assert "ARGONISHCHE_CERTIFY_PYTHON" in out["reason"], out["reason"]


# ---- isolated mode --------------------------------------------------------------------------

#: Found through PYTHONHOME by an interpreter that honours it: every check passes.
PATCH_THE_CHECKS = """\
import argonishche._trust.certification_checks, argonishche._trust.self_test
argonishche._trust.certification_checks.failures = lambda *args, **kwargs: []
argonishche._trust.self_test.run = lambda *args, **kwargs: []
"""


def python_home_with_a_trap(directory: Path) -> Path:
    """A PYTHONHOME whose standard library is this Python's (linked file by file) plus a
    sitecustomize.py that patches the checks."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    lib = directory / "lib" / stdlib.name
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name not in ("sitecustomize.py", "site-packages"):
            (lib / entry.name).symlink_to(entry)
    (lib / "sitecustomize.py").write_text(PATCH_THE_CHECKS)
    return directory


def test_an_isolated_parent_certifies_in_an_isolated_child(sites, tmp_path, cache):
    home = python_home_with_a_trap(tmp_path / "trap")
    # The application's own path, since -I ignores PYTHONPATH: the venv's site-packages (the
    # editable argonishche) comes with the interpreter.
    out = run_app(tmp_path, cache, sites["wrong"], "host_wrong", "", "-I",
                  PYTHONHOME=str(home))
    assert out["right"], f"a wrong BLAKE2b digest in an isolated process: {out}"
    assert out["state"] == "certification-failed", out
    assert "BLAKE2b F over a run of" in out["reason"], out["reason"]


# ---- a killed parent ------------------------------------------------------------------------

CERTIFY_A_HANGING_KERNEL = """
import signal, sys
signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a runner may have changed it
sys.path[:0] = {sites!r}
import argonishche
argonishche.backends()
"""


def children_certifying(module: str, parent: int) -> list[int]:
    """The pids of the certification children of *parent* checking *module* (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:
            continue
        ppid = next((line.split()[1] for line in status.splitlines()
                     if line.startswith("PPid:")), "")
        if module.encode() in command and ppid == str(parent):
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether *pid* still runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return not any(line.startswith("State:") and "Z" in line.split()[1:2]
                   for line in status.splitlines())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the child in /proc")
@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_parent_takes_its_certification_child_with_it(sites, tmp_path, cache,
                                                               signal_number):
    module = "trust_host_hang._kernels"
    parent = subprocess.Popen(
        [sys.executable, "-c", CERTIFY_A_HANGING_KERNEL.format(sites=[str(sites["hang"])])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=host_environment(tmp_path, cache, ARGONISHCHE_CERTIFY_TIMEOUT="600"))
    children: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not children and time.monotonic() < deadline and parent.poll() is None:
            time.sleep(0.1)
            children = children_certifying(module, parent.pid)
        assert children, "the parent never started its certification child"
        time.sleep(1.0)  # into the checks, if not into the kernel that hangs
        parent.send_signal(signal_number)
        assert parent.wait(timeout=30) == -signal_number
        deadline = time.monotonic() + 5
        while any(map(alive, children)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(alive, children)), "the certification child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=30)
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass


#: A parent that starts a child as certify_in_child does (its own session, stdin a pipe from
#: it), prints the child's pid and waits to be killed.
PARENT_OF_A_PIPE_WATCHER = """
import os, subprocess, sys, time
read_end, write_end = os.pipe()
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid()), sys.argv[2]],
                         stdin=read_end, start_new_session=True)
print(child.pid, flush=True)
time.sleep(600)
"""
#: The child, as on a system without PR_SET_PDEATHSIG: only its stdin tells it that its parent
#: is gone.  It spins in Python (a kernel spins in C with the GIL released).
PIPE_WATCHER = """
import pathlib, sys
sys.platform = "darwin"
from argonishche._trust.certification_child import die_with_parent
die_with_parent(int(sys.argv[1]))
pathlib.Path(sys.argv[2]).write_text("watching")
while True:
    pass
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the child in /proc")
def test_without_pdeathsig_the_stdin_pipe_ends_the_child(tmp_path):
    ready = tmp_path / "ready"
    parent = subprocess.Popen([sys.executable, "-c", PARENT_OF_A_PIPE_WATCHER, PIPE_WATCHER,
                               str(ready)], stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline and alive(child):
            time.sleep(0.05)
        assert ready.exists(), "the child never started watching its stdin"
        parent.kill()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 5
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child), "the child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=30)
        if child:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass


def test_the_isolation_flags_follow_the_parents(monkeypatch):
    from argonishche._trust import child_launch

    class Flags:
        isolated, ignore_environment, no_user_site, no_site = 1, 1, 1, 0

    monkeypatch.setattr(sys, "flags", Flags)
    monkeypatch.setenv("PYTHONHOME", "/somewhere")
    assert "-I" in child_launch.interpreter_flags()
    assert "PYTHONHOME" not in child_launch.child_environment({})


def test_a_certification_child_never_starts_another(monkeypatch):
    from argonishche import _settings
    from argonishche._trust import certification_child

    monkeypatch.setenv(_settings.CERTIFICATION_CHILD_MARKER, "1234")
    monkeypatch.setattr(subprocess, "Popen", None)  # nothing may be started
    verdict = certification_child.certify_in_child("any_kernels", frozenset(), settings={},
                                              timeout=60)
    assert verdict.stage == "died" and "never starts another" in verdict.failures[0]


@pytest.mark.parametrize("value", ["python3", "./python3", "/usr/bin/pyth\u00f6n"])
def test_the_certification_python_is_an_absolute_ascii_path(value):
    from argonishche import _settings
    from argonishche.exceptions import SettingError

    with pytest.raises(SettingError, match="ARGONISHCHE_CERTIFY_PYTHON"):
        _settings.parse({"ARGONISHCHE_CERTIFY_PYTHON": value})
    assert _settings.parse({"ARGONISHCHE_CERTIFY_PYTHON": " /usr/bin/python3 "}
                           ).certify_python == "/usr/bin/python3"
