"""The kernel plugin an author starts from works as documented: built with pip, installed, tested.

Three real wheels, built at once with ``pip wheel --no-build-isolation`` (the route the plugin guide
and the template's README gave) and installed with ``pip install --target`` into directories
of their own, each then used from a fresh interpreter with that directory on PYTHONPATH, where
argonishche finds the plugin through its entry point like any installed one:

- ``plugins/argonishche-example``, the template: a ``cp311-abi3`` wheel, whose own tests pass
  installed, and whose backend the ladder never prefers to a built-in;
- the same template with one rotation of its G wrong: its own tests must fail, not skip;
- the kernel plugin docs/plugins.md spells out (its pyproject.toml, setup.py, plugin module and
  build script, with the template's C file): a ``cp311-abi3`` wheel whose backend loads.

The template's and the guide's wheels must also pass ``auditwheel show`` and ``repair`` as
manylinux wheels.

Like tests/project/test_packaging.py, these build wheels (about ten seconds on two cores).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from plugin_wheels import pip, wait_all
from wheel_audit import assert_kernel_wheel_is_manylinux_ready

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "plugins" / "argonishche-example"
GUIDE = ROOT / "docs" / "plugins.md"
RUN_TIMEOUT = 300
NOT_SOURCE = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", "*.so", "*.o")
#: One rotation of the template's GB (RFC 9106 section 3.6) changed: every Argon2 hash is wrong.
ROTATION = "w[b] = argonishche_rotr64(w[b] ^ w[c], 63);"


def guide_block(pattern: str) -> str:
    """The block of the plugin guide (docs/plugins.md) that *pattern* (one regex group) finds."""
    match = re.search(pattern, GUIDE.read_text(), re.S)
    assert match, f"docs/plugins.md has no block matching {pattern!r}"
    return match.group(1) + "\n"


def the_guides_project(directory: Path) -> Path:
    """The guide's kernel plugin, file by file as the guide gives it, with the template's C."""
    files = {
        "pyproject.toml": guide_block(r"`pyproject.toml`:\n\n```toml\n(.*?)\n```"),
        "setup.py": guide_block(r"```\{code-block\} python\n:caption: setup\.py[^\n]*\n\n"
                                r"(from setuptools import setup\n.*?)\n```"),
        "mykernels/__init__.py": guide_block(
            r"`mykernels/__init__.py`:\n\n```\{testcode\}\n(.*?)\n```"),
        "build_mykernels.py": guide_block(
            r"```\{testcode\} build-script\n"
            r"(from argonishche\.build import backend_ffibuilder\n.*?)\n```"),
    }
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    (directory / "src").mkdir()
    shutil.copy(TEMPLATE / "src" / "example.c", directory / "src" / "mykernels.c")
    return directory


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """Project -> (its wheel, the directory it is installed in)."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build the plugin wheels")
    root = tmp_path_factory.mktemp("plugin_template")
    projects = {"template": root / "template", "broken": root / "broken",
                "guide": root / "guide"}
    for name in ("template", "broken"):
        shutil.copytree(TEMPLATE, projects[name], ignore=NOT_SOURCE)
    source = projects["broken"] / "src" / "example.c"
    assert ROTATION in source.read_text()
    source.write_text(source.read_text().replace(ROTATION, ROTATION.replace("63", "62")))
    projects["guide"].mkdir()
    the_guides_project(projects["guide"])
    # pip builds a local directory in place, relative paths from it (the guide's build script
    # names "src/mykernels.c").
    wait_all({name: pip("wheel", "--wheel-dir", root / f"{name}-dist", ".", cwd=project)
              for name, project in projects.items()}, "pip wheel")
    wheels = {name: next((root / f"{name}-dist").glob("*.whl")) for name in projects}
    wait_all({name: pip("install", "--target", root / f"{name}-site", wheels[name])
              for name in projects}, "pip install --target")
    return {name: (wheels[name], root / f"{name}-site") for name in projects}


def fresh_env(site: Path, cache: Path, **variables: str) -> dict[str, str]:
    """The environment of a fresh interpreter that has *site* installed: none of this run's
    ARGONISHCHE_* settings, and a cache directory of its own (no certification remembered)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env["XDG_CACHE_HOME"] = str(cache)
    env.update(variables)
    return env


def run_template_tests(site: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The template's own tests (as its README runs them), against the plugin in *site*."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-W", "ignore::RuntimeWarning", str(TEMPLATE / "tests")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          env=fresh_env(site, tmp_path / "cache"))


def abi3_tag(wheel: Path) -> str:
    """The wheel's Python and ABI tags, e.g. ``"cp311-abi3"``."""
    return "-".join(wheel.name[:-len(".whl")].split("-")[-3:-1])


@pytest.mark.parametrize("project, module", [
    ("template", "argonishche_example/_kernels"), ("guide", "mykernels/_kernels")])
def test_the_wheel_is_one_abi3_wheel_around_an_abi3_module(built, project, module):
    wheel, _ = built[project]
    assert abi3_tag(wheel) == "cp311-abi3", wheel.name
    with zipfile.ZipFile(wheel) as archive:
        modules = [name for name in archive.namelist() if name.startswith(module)]
    assert modules and all(name.endswith(".abi3.so") for name in modules), modules


@pytest.mark.parametrize("project", ["template", "guide"])
def test_auditwheel_repairs_the_wheel_to_a_manylinux_tag(built, project, tmp_path):
    # What a plugin author's release runs (cibuildwheel's repair): argonishche.build links every
    # kernel module against libc, without which auditwheel cannot tell the wheel's libc at all.
    assert_kernel_wheel_is_manylinux_ready(built[project][0], tmp_path)


def test_the_templates_own_tests_pass_installed(built, tmp_path):
    run = run_template_tests(built["template"][1], tmp_path)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"\b6 passed\b", run.stdout) and "skipped" not in run.stdout, run.stdout


def test_a_broken_kernel_fails_the_templates_tests(built, tmp_path):
    # Refused at start-up (its self-test fails), so its CI must be red: a failure per test that
    # needs the backend, and no skip.
    run = run_template_tests(built["broken"][1], tmp_path)
    output = run.stdout + run.stderr
    assert run.returncode == 1, output[-4000:]
    assert "backend example is selftest-failed" in output, output[-4000:]
    assert "skipped" not in run.stdout, run.stdout[-4000:]


INFO = """
import argonishche
for b in argonishche.backends():
    print(b.name, b.state, b.priority, b.distribution, "builtin" if b.builtin else "third-party")
print("selected", argonishche.selected_backend("argon2"), argonishche.selected_backend("blake2b"))
"""


def backends_seen(site: Path, tmp_path: Path, **variables: str) -> dict[str, list[str]]:
    run = subprocess.run([sys.executable, "-c", INFO], capture_output=True, text=True,
                         timeout=RUN_TIMEOUT, env=fresh_env(site, tmp_path / "cache",
                                                            **variables))
    assert run.returncode == 0, run.stderr
    return {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines()}


def test_the_template_is_third_party_and_below_every_built_in_rung(built, tmp_path):
    seen = backends_seen(built["template"][1], tmp_path, ARGONISHCHE_SELECT="priority")
    state, priority, distribution, version, kind = seen["example"]
    assert (state, distribution, version, kind) == (
        "available", "argonishche-example", "0.1.0", "third-party")
    builtin_priorities = [int(fields[1]) for name, fields in seen.items()
                          if fields[-1:] == ["builtin"]]
    assert builtin_priorities and int(priority) < min(builtin_priorities)
    assert "example" not in seen["selected"]


def test_the_guides_plugin_loads(built, tmp_path):
    seen = backends_seen(built["guide"][1], tmp_path)
    state, priority, distribution, version, kind = seen["mine"]
    assert (distribution, version, kind) == ("mykernels", "1.0", "third-party")
    # Its descriptor declares AVX2: on a CPU without it, argonishche says so.
    assert state in ("selected", "available", "unsupported-cpu"), seen["mine"]


BLOCKED = """
import sys
import argonishche
states = {b.name: (b.state, b.reason) for b in argonishche.backends()}
print(states[sys.argv[1]][0], sys.argv[2] in sys.modules)
"""


@pytest.mark.parametrize("project, declared, package", [
    ("template", "example", "argonishche_example"), ("guide", "mine", "mykernels")])
def test_blocking_the_declared_backend_keeps_the_plugin_unimported(built, tmp_path, project,
                                                                   declared, package):
    # The template and the guide's plugin declare their backend (argonishche.backends), so the
    # backend is listed blocked though its plugin was never imported.
    run = subprocess.run([sys.executable, "-c", BLOCKED, declared, package],
                         capture_output=True, text=True, timeout=RUN_TIMEOUT,
                         env=fresh_env(built[project][1], tmp_path / "cache",
                                       ARGONISHCHE_DISABLE_BACKENDS=declared))
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["blocked", "False"], run.stdout
