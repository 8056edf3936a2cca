"""A user's type checker on the installed wheel: ``mypy --strict -p argonishche`` reports nothing.

Checked as a user runs it: in a fresh venv holding only the wheel (with its dependencies) and
mypy, from an empty directory, without this project's config (an explicit empty one, so that
mypy finds no other on its way up the tree), and once more in a venv that also has every
optional dependency argonishche imports when asked (the benchmark's peers, its plot, Django,
pwdlib, pytest for argonishche.testing): an optional import must type-check whether or not it is
installed, and never through a ``type: ignore`` that becomes an "unused ignore" error when it is.
There, too, typing_usage_argon2_cffi.py (an argon2-cffi user's code) must pass on the drop-in and
on argon2-cffi itself.

tox -e lint runs this (ARGONISHCHE_TYPING_CHECK=1) on the wheel tox built for it (TOX_PACKAGE);
run by hand with that variable set, it builds the wheel itself.  Elsewhere it is skipped: it
makes two venvs and installs packages from the index, work the other envs need not repeat.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ENABLE_ENV = "ARGONISHCHE_TYPING_CHECK"

pytestmark = pytest.mark.skipif(
    not os.environ.get(ENABLE_ENV),
    reason=f"the installed wheel's typing check runs in tox -e lint ({ENABLE_ENV}=1)")

#: What argonishche imports only when asked, as pip names them, and the module each provides.
OPTIONAL = {"argon2-cffi": "argon2", "pynacl": "nacl", "cryptography": "cryptography",
            "matplotlib": "matplotlib", "django": "django", "pwdlib": "pwdlib",
            "pytest": "pytest"}

#: An argon2-cffi user's script on the drop-in, and the line that makes it argon2-cffi's.
ARGON2_CFFI_USAGE = ROOT / "tests" / "project" / "typing_usage_argon2_cffi.py"
DROP_IN_IMPORT = "import argonishche.argon2_cffi as argon2"

#: A hang (pip on a dead index, mypy) fails the test instead of stalling the run.
INSTALL_TIMEOUT = 600
MYPY_TIMEOUT = 300


def _child_environ() -> dict[str, str]:
    """This environment without what would point a child at the tox env's packages or config."""
    return {name: value for name, value in os.environ.items()
            if name not in ("PYTHONPATH", "PYTHONHOME", "MYPYPATH", "VIRTUAL_ENV",
                            "MYPY_CONFIG_FILE_DIR")}


def _run(args: list[str], timeout: float,
         cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=_child_environ())


def _wheel(tmp: Path) -> Path:
    """The wheel under test: the one tox installed in this env, else (by hand) one built now."""
    given = [Path(p) for p in os.environ.get("TOX_PACKAGE", "").split(os.pathsep) if p]
    wheels = [p for p in given if p.name.startswith("argonishche-") and p.suffix == ".whl"]
    if os.environ.get("TOX_ENV_NAME"):
        assert len(wheels) == 1, f"this tox env must install the argonishche wheel " \
            f"(package = wheel), so that TOX_PACKAGE names it; TOX_PACKAGE={given}"
    if wheels:
        return wheels[0]
    run = _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp),
                str(ROOT)], INSTALL_TIMEOUT)
    assert run.returncode == 0, f"building the wheel failed:\n{run.stdout}\n{run.stderr}"
    built = sorted(tmp.glob("argonishche-*.whl"))
    assert len(built) == 1, built
    return built[0]


def _make_venv(path: Path, packages: list[str]) -> Path:
    """A venv at *path* (``python -m venv``) with *packages* installed; its python."""
    run = _run([sys.executable, "-m", "venv", str(path)], INSTALL_TIMEOUT)
    assert run.returncode == 0, f"venv failed:\n{run.stdout}\n{run.stderr}"
    python = path / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    run = _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                *packages], INSTALL_TIMEOUT)
    assert run.returncode == 0, f"pip install {packages} failed:\n{run.stdout}\n{run.stderr}"
    return python


@pytest.fixture(scope="module")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``bare`` (the wheel and mypy) and ``optional`` (those and :data:`OPTIONAL`), made side by
    side: the two installs are mostly waiting on the index."""
    tmp = tmp_path_factory.mktemp("typing-wheel")
    wheel = str(_wheel(tmp / "dist"))
    wanted = {"bare": [wheel, "mypy"], "optional": [wheel, "mypy", *OPTIONAL]}
    with ThreadPoolExecutor(len(wanted)) as pool:
        futures = {name: pool.submit(_make_venv, tmp / name, packages)
                   for name, packages in wanted.items()}
        return {name: future.result() for name, future in futures.items()}


def _importable(python: Path) -> set[str]:
    """Which of :data:`OPTIONAL`'s modules *python* can find."""
    code = ("import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] "
            "if importlib.util.find_spec(m)))")
    run = _run([str(python), "-c", code, *OPTIONAL.values()], 60)
    assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


def _mypy_strict(python: Path, package: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict -p package`` in *python*'s venv, from an empty directory."""
    return _mypy_strict_on(python, ["-p", package], tmp)


def _mypy_strict_on(python: Path, targets: list[str],
                    tmp: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict targets`` in *python*'s venv, from an empty directory under *tmp*."""
    empty = tmp / "empty"
    empty.mkdir(exist_ok=True)
    config = tmp / "mypy.ini"
    config.write_text("[mypy]\n")  # mypy's defaults: no config of this project's
    return _run([str(python), "-m", "mypy", "--strict", "--config-file", str(config),
                 "--cache-dir", str(tmp / "cache"), *targets], MYPY_TIMEOUT, cwd=empty)


def _assert_clean(run: subprocess.CompletedProcess[str]) -> None:
    """Exit status 0 and mypy's own word for no errors; else a failure showing all it said."""
    if run.returncode != 0 or "Success: no issues found" not in run.stdout:
        found = re.search(r"Found (\d+) errors?", run.stdout)
        count = found.group(1) if found else "no count of"
        pytest.fail(f"mypy --strict exited {run.returncode} with {count} errors:\n"
                    f"{run.stdout}{run.stderr}", pytrace=False)


@pytest.mark.parametrize("variant", ["bare", "optional"])
def test_mypy_strict_passes_on_the_installed_wheel(venvs, variant, tmp_path):
    python = venvs[variant]
    # The venvs hold what they claim, so a pass means what this test says it means.
    expected = set() if variant == "bare" else set(OPTIONAL.values())
    assert _importable(python) == expected
    _assert_clean(_mypy_strict(python, "argonishche", tmp_path))


def test_mypy_strict_passes_on_the_installed_builtin_backends(venvs, tmp_path):
    # argonishche_backends ships py.typed, a promise that its own code type-checks too (mypy
    # follows argonishche's import of it silently, so the test above would not see its errors).
    _assert_clean(_mypy_strict(venvs["bare"], "argonishche_backends", tmp_path))


@pytest.mark.parametrize("library", ["argonishche.argon2_cffi", "argon2-cffi"])
def test_an_argon2_cffi_users_script_passes_mypy_strict(venvs, library, tmp_path):
    # The same script on the drop-in and on argon2-cffi 25.1 itself (in the venv with the
    # optional dependencies): code that type-checks with one must with the other.
    source = ARGON2_CFFI_USAGE.read_text(encoding="utf-8")
    assert source.count(DROP_IN_IMPORT) == 1, f"{ARGON2_CFFI_USAGE.name} lost its import line"
    if library == "argon2-cffi":
        source = source.replace(DROP_IN_IMPORT, "import argon2")
    script = tmp_path / "argon2_cffi_user.py"
    script.write_text(source, encoding="utf-8")
    _assert_clean(_mypy_strict_on(venvs["optional"], [str(script)], tmp_path))
