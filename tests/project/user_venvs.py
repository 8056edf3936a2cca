"""Helpers of the tests that install argonishche as a user does: from a wheelhouse built by
tools/build_wheelhouse.py, into venvs made by ``python -m venv`` with nothing upgraded.

They take minutes (the core's C is compiled, venvs are made, pip reaches the package index), so
they run in ``tox -e doc-commands`` (ARGONISHCHE_DOC_COMMANDS=1); elsewhere a test using the
``wheelhouse`` fixture (tests/project/conftest.py) is skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 1200   # seconds: the core's wheel compiles every backend, on a shared machine
VENV_TIMEOUT = 180     # python -m venv, with ensurepip installing the bundled pip
PIP_TIMEOUT = 600      # one pip install, reaching the package index for the dependencies
SLOW_TESTS_REASON = ("builds wheels and venvs (minutes): runs in tox -e doc-commands "
                     "(ARGONISHCHE_DOC_COMMANDS=1)")
#: What would make a child's pip or Python differ from a user's fresh venv.
NOT_INHERITED = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_NO_BUILD_ISOLATION",
                 "PIP_BUILD_ISOLATION", "PIP_USER", "PIP_REQUIRE_VIRTUALENV", "PIP_NO_DEPS")


def run(command: list[str | Path], *, timeout: float, **kwargs) -> subprocess.CompletedProcess[str]:
    """Run *command*, stdout and stderr together in ``.stdout``.  A hang fails the test, with
    the output so far, after killing the command's whole process group (pip's and bash's
    children too, which would otherwise keep the pipe open)."""
    arguments = [str(part) for part in command]
    with subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True, **kwargs) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            pytest.fail(f"{' '.join(arguments)} took longer than {timeout} s; its output:\n"
                        f"{output}")
    return subprocess.CompletedProcess(arguments, process.returncode, output)


def checked(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """*result*, asserted successful, with its command and output in the failure."""
    assert result.returncode == 0, f"{' '.join(result.args)} exited {result.returncode}:\n" \
                                   f"{result.stdout}"
    return result


def user_environment(venv: Path | None, scratch: Path) -> dict[str, str]:
    """A user's environment: *venv* activated (its bin first on PATH), none of this run's
    ARGONISHCHE_* settings, and a cache directory of its own (no selection remembered)."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("ARGONISHCHE_") and name not in NOT_INHERITED}
    env["XDG_CACHE_HOME"] = str(scratch / "cache")
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


def fresh_venv(path: Path) -> Path:
    """A venv as ``python3 -m venv`` makes it: this Python's bundled pip (and, on 3.11,
    setuptools 65.5), nothing upgraded."""
    checked(run([sys.executable, "-m", "venv", path], timeout=VENV_TIMEOUT,
                env=user_environment(None, path.parent)))
    return path


def pip_install(venv: Path, *arguments: str | Path, cwd: Path | None = None):
    """``pip install ARGUMENTS`` in *venv*, as its user runs it (not checked)."""
    return run([venv / "bin" / "python", "-m", "pip", "install", *arguments],
               timeout=PIP_TIMEOUT, cwd=cwd, env=user_environment(venv, venv.parent))


def skip_unless_slow_tests_run() -> None:
    """Skip the calling test outside ``tox -e doc-commands``, saying why."""
    if not os.environ.get("ARGONISHCHE_DOC_COMMANDS"):
        pytest.skip(SLOW_TESTS_REASON)


def copy_of_the_repository(destination: Path) -> Path:
    """The files a fresh clone has (git's tracked files, and new ones not ignored), as they are
    in the working tree, without .git, build output or local venvs."""
    listed = run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                  "--exclude-standard"], timeout=60)
    assert listed.returncode == 0, f"git ls-files failed (not a git checkout?):\n{listed.stdout}"
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():  # tracked but deleted in the working tree: a clone would have it,
            target = destination / name  # this change has not
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination
