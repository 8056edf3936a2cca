"""Real third-party plugin wheels, written from templates, built and installed with pip.

A :class:`Plugin` is a small plugin project: a distribution, one package, its ``argonishche``
entry points, Python files, and compiled kernel modules made from
``tests/trust/bad_plugins/trust/misbehaving.c`` (ref's kernels with the misbehaviour its
``#define`` lines switch on) with the plugin authors' helper,
:func:`argonishche.build.backend_ffibuilder`.
:func:`build_wheels` writes each project into a directory and runs ``pip wheel`` on them, a few
at once; :func:`install` puts a wheel into a directory of its own with ``pip install --target``,
which a fresh interpreter then finds on PYTHONPATH like any installed distribution.

:func:`run` starts a fresh interpreter with PRELUDE (warnings recorded, the reference
implementations, ``report()``) and a probe, with the plugins' directories on PYTHONPATH and a cache
directory of its own; :class:`Probe` is what it printed.

pip runs offline: ``--no-index --no-build-isolation``, with this environment's setuptools and cffi
(and argonishche, whose ``build`` module the projects' build scripts import).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TEMPLATE_C = TESTS / "trust" / "bad_plugins" / "trust" / "misbehaving.c"
REF_SOURCE = TESTS.parent / "backends" / "ref.c"
RUN_TIMEOUT = 180  # seconds for one fresh interpreter (certification included)
USABLE = ("selected", "available")
PIP_TIMEOUT = 300  # seconds for one pip command (several run at once on two cores)
PARALLEL_BUILDS = 3


@dataclass(frozen=True)
class Kernels:
    """A compiled kernel module of a plugin: misbehaving.c with *defines* switched on."""

    module: str                          # name inside the package, e.g. "_kernels"
    defines: tuple[str, ...] = ()        # e.g. ("TRUST_F_RUN_FROM 8193",)
    cpu_features: tuple[str, ...] = ()   # what the module is compiled for (its table records it)


@dataclass(frozen=True)
class Plugin:
    """A plugin distribution: *files* ({path in the package: text}) and *kernels*, and entry
    points {name: "module[:attribute]"} in the ``argonishche`` group, and *declarations* in the
    ``argonishche.backends`` group ({backend name: the plugin's entry point's value})."""

    distribution: str
    package: str
    entry_points: dict[str, str]
    kernels: tuple[Kernels, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    version: str = "1.0"
    declarations: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """How argonishche names the distribution in states and warnings."""
        return f"{self.distribution} {self.version}"


def backend_plugin(name: str, kernel_module: str, *, priority: int = 99,
                   cpu_features: tuple[str, ...] = (), description: str = "",
                   before: str = "") -> str:
    """The text of a plugin module registering one Backend (*before*: code run at its import,
    before the hook is defined)."""
    description = description or f"the {name} trust-test kernels"
    return (f"import argonishche\n{textwrap.dedent(before)}\n"
            f"BACKEND = argonishche.Backend(\n"
            f"    name={name!r}, description={description!r},\n"
            f"    kernel_module={kernel_module!r}, cpu_features=frozenset({cpu_features!r}),\n"
            f"    priority={priority})\n\n\n"
            "@argonishche.hookimpl\n"
            "def argonishche_register_backends(register):\n"
            "    register(BACKEND)\n")


#: For test files whose interpreters run without ARGONISHCHE_* settings (:func:`environment`):
#: every tox env would repeat the same minutes of work, so they run in the envs that set none.
WITHOUT_SETTINGS_ONLY = pytest.mark.skipif(
    any(name.startswith("ARGONISHCHE_") for name in os.environ),
    reason="these tests run their interpreters without ARGONISHCHE_* settings: they run in the "
           "envs that set none (py, py312, py313)")


def build_wheels_or_skip(plugins: dict[str, Plugin], root: Path) -> dict[str, Path]:
    """:func:`build_wheels`, or skip the test without a C compiler or argon2-cffi (which gives
    the right tags to compare with)."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build the plugin wheels")
    pytest.importorskip("argon2", reason="argon2-cffi gives the right tags to compare with")
    return build_wheels(plugins, root)


def kernel_plugin(key: str, *defines: str, version: str = "1.0", backend: str | None = None,
                  entry_point: str | None = None, cpu_features: tuple[str, ...] = (),
                  before: str = "") -> Plugin:
    """A distribution trust-KEY whose package trust_KEY registers backend *backend* (default
    KEY) from trust_KEY._kernels, built with *defines*, at priority 99."""
    package = f"trust_{key}"
    return Plugin(f"trust-{key}", package, {entry_point or backend or key: package},
                  kernels=(Kernels("_kernels", defines, cpu_features),),
                  files={"__init__.py": backend_plugin(backend or key, f"{package}._kernels",
                                                       cpu_features=cpu_features,
                                                       before=before)},
                  version=version)


def write_project(plugin: Plugin, directory: Path) -> Path:
    """Write *plugin*'s project (pyproject.toml, setup.py, build scripts, C, package)."""
    directory.mkdir(parents=True)
    entry_points = "\n".join(f"{name} = {value!r}".replace("'", '"')
                             for name, value in plugin.entry_points.items())
    if plugin.declarations:
        entry_points += '\n\n[project.entry-points."argonishche.backends"]\n' + "\n".join(
            f"{name} = {value!r}".replace("'", '"') for name, value in plugin.declarations.items())
    (directory / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools", "cffi"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{plugin.distribution}"
        version = "{plugin.version}"
        requires-python = ">=3.10"

        [project.entry-points.argonishche]
        """) + entry_points + textwrap.dedent(f"""

        [tool.setuptools]
        packages = ["{plugin.package}"]
        """))
    modules = [f"build_{k.module.lstrip('_')}.py:ffibuilder" for k in plugin.kernels]
    (directory / "setup.py").write_text(
        f"from setuptools import setup\n\nsetup(cffi_modules={modules!r})\n")
    source = directory / "src"
    source.mkdir()
    shutil.copy(REF_SOURCE, source / "ref.c")
    shutil.copy(TEMPLATE_C, source / "misbehaving.c")
    for kernels in plugin.kernels:
        c_file = source / f"{kernels.module.lstrip('_')}_kernels.c"
        c_file.write_text("".join(f"#define {d}\n" for d in kernels.defines)
                          + '#include "misbehaving.c"\n')
        (directory / f"build_{kernels.module.lstrip('_')}.py").write_text(textwrap.dedent(f"""\
            from argonishche.build import backend_ffibuilder

            ffibuilder = backend_ffibuilder(
                "{plugin.package}.{kernels.module}", ["src/{c_file.name}"],
                cpu_features={kernels.cpu_features!r})
            # The call counter every misbehaving module exports (see misbehaving.c).
            ffibuilder.cdef("unsigned long long trust_g_calls(void);")
            """))
    package = directory / plugin.package
    package.mkdir()
    files = {"__init__.py": "", **plugin.files}
    for relative, text in files.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text)
    return directory


def pip(*args: str | Path, cwd: Path | None = None) -> subprocess.Popen[str]:
    """Start ``pip *args`` offline, without dependencies or build isolation (this environment's
    setuptools, cffi and argonishche build the project), with no ARGONISHCHE_* setting."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ARGONISHCHE_", "PIP_"))}
    return subprocess.Popen(
        [sys.executable, "-m", "pip", *map(str, args), "--no-deps", "--no-index",
         "--no-build-isolation", "--no-cache-dir", "--disable-pip-version-check", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env)


def wait(process: subprocess.Popen[str], what: str) -> None:
    """Wait for a :func:`pip` command; AssertionError (with its output) if it failed or took
    over PIP_TIMEOUT seconds."""
    try:
        output, _ = process.communicate(timeout=PIP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"{what} took over {PIP_TIMEOUT} s") from None
    if process.returncode != 0:
        raise AssertionError(f"{what} failed (exit {process.returncode}):\n{output[-4000:]}")


def wait_all(processes: dict[str, subprocess.Popen[str]], what: str) -> None:
    """:func:`wait` for each of *processes* ({name: process}), started together."""
    for name, process in processes.items():
        wait(process, f"{what} of {name}")


def build_wheels(plugins: dict[str, Plugin], root: Path) -> dict[str, Path]:
    """Build every plugin's wheel under *root*, a few at once: {key: the wheel file}."""
    wheels: dict[str, Path] = {}
    pending = list(plugins.items())
    running: list[tuple[str, Path, subprocess.Popen[str]]] = []
    while pending or running:
        while pending and len(running) < PARALLEL_BUILDS:
            key, plugin = pending.pop(0)
            project = write_project(plugin, root / f"project-{key}")
            running.append((key, project, pip("wheel", "--wheel-dir", project / "dist",
                                                  project, cwd=project)))
        key, project, process = running.pop(0)
        wait(process, f"pip wheel of the {key!r} plugin ({plugins[key].label})")
        (wheel,) = (project / "dist").glob("*.whl")
        wheels[key] = wheel
    return wheels


def install(wheel: Path, target: Path, *, upgrade: bool = False) -> Path:
    """``pip install --target`` *wheel* into *target* (over what is there with *upgrade*)."""
    wait(pip("install", "--target", target, *(["--upgrade"] if upgrade else []), wheel),
          f"pip install --target {target} {wheel.name}")
    return target


def installed_file(target: Path, package: str, module: str) -> Path:
    """The compiled file of *package*.*module* installed in *target*."""
    (path,) = (target / package).glob(f"{module}.*.so")
    return path


def make_venv(directory: Path) -> Path:
    """A virtual environment at *directory* that also sees this one's packages (argonishche, pip,
    setuptools, cffi), so that pip can install into it, and upgrade in it, as a user's pip does;
    its interpreter.  (``--system-site-packages`` would show the base interpreter's packages, not
    this environment's.)"""
    import sysconfig
    import venv

    venv.EnvBuilder(with_pip=False).create(directory)
    python = directory / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True, check=True,
                             timeout=60).stdout.strip()
    ours = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    # addsitedir, not a bare path line: this environment's own .pth files (the editable install
    # of argonishche) must run too.
    (Path(purelib) / "_outer_environment.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in ours) + "\n")
    return python


def venv_install(python: Path, wheel: Path) -> None:
    """``pip install --upgrade`` *wheel* with the venv's interpreter *python*: an upgrade
    uninstalls the version there first, as ``pip install -U`` does for users."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGONISHCHE_", "PIP_"))}
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen(
        [python, "-m", "pip", "install", "--upgrade", "--no-deps", "--no-index",
         "--no-cache-dir", "--disable-pip-version-check", "--quiet", wheel],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    wait(process, f"{python} -m pip install --upgrade {wheel.name}")


# ---- fresh interpreters with plugins installed --------------------------------------------------

# Run first in every probe: warnings recorded (from any thread), the reference implementations,
# and report(), which prints what argonishche says about every backend and plugin.
PRELUDE = '''
import hashlib, importlib, json, os, sys, warnings
_recording = warnings.catch_warnings(record=True)
CAUGHT = _recording.__enter__()
warnings.simplefilter("always")
import argon2
import argonishche

out = {}
MESSAGE = bytes(range(256)) * (1 << 14)  # 4 MiB


def expected_tag(password, salt, t, m, p):
    return argon2.low_level.hash_secret_raw(password, salt, t, m, p, 32,
                                            argon2.low_level.Type.ID, 0x13)


def tag(password, salt, t, m, p):
    return argonishche.argon2_hash(password, salt, type="id", time_cost=t, memory_cost=m,
                                   parallelism=p, hash_len=32)


def argon2_right(m=2048, t=1, p=1):
    password, salt = b"correct horse", b"somesalt" * 2
    return tag(password, salt, t, m, p) == expected_tag(password, salt, t, m, p)


def blake2b_right(size):
    """A message of *size* bytes given to one update() of argonishche.blake2b."""
    data = MESSAGE[:size]
    state = argonishche.blake2b()
    state.update(data)
    return state.digest() == hashlib.blake2b(data).digest()


def warnings_text(since=0):
    return [f"{w.category.__name__}: {w.message}" for w in CAUGHT[since:]]


def report():
    out["backends"] = [dict(name=b.name, state=b.state, reason=b.reason,
                            distribution=b.distribution) for b in argonishche.backends()]
    plugins = getattr(argonishche, "plugins", None)
    out["plugins"] = None if plugins is None else [
        dict(name=p.name, distribution=p.distribution, state=p.state, reason=p.reason)
        for p in plugins()]
    out["selected"] = {}
    for algorithm in ("argon2", "blake2b"):
        try:
            out["selected"][algorithm] = argonishche.selected_backend(algorithm)
        except argonishche.ArgonishcheError as exc:
            out["selected"][algorithm] = f"none: {exc}"
    out["warnings"] = warnings_text()
    print("PROBE " + json.dumps(out))
'''


class Probe:
    """What one fresh interpreter printed and how it ended."""

    def __init__(self, done: subprocess.CompletedProcess[str], seconds: float) -> None:
        self.returncode, self.stdout, self.stderr = done.returncode, done.stdout, done.stderr
        self.seconds = seconds
        lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
        self.out: dict = json.loads(lines[-1][len("PROBE "):]) if lines else {}

    def ok(self) -> dict:
        assert self.returncode == 0, (
            f"the interpreter exited with {self.returncode}"
            f"{' (killed by signal %d)' % -self.returncode if self.returncode < 0 else ''}:\n"
            f"{self.stderr[-3000:]}")
        assert self.out, f"no report printed:\n{self.stdout[-2000:]}\n{self.stderr[-2000:]}"
        return self.out

    def backend(self, name: str) -> dict:
        """The one record of backend *name*."""
        records = [b for b in self.ok()["backends"] if b["name"] == name]
        assert len(records) == 1, f"expected one backend named {name!r}: {self.out['backends']}"
        return records[0]


def environment(cache: Path, sites: list[Path], **variables: str) -> dict[str, str]:
    """This environment without its ARGONISHCHE_* variables (tox's backend-X envs force one),
    with *sites* on PYTHONPATH, *cache* as the user's cache directory, and *variables*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    env["PYTHONPATH"] = os.pathsep.join(
        [*map(str, sites), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["XDG_CACHE_HOME"] = str(cache)
    env.update(variables)
    return env


def run(code: str, cache: Path, sites: list[Path], *, python: str | Path = sys.executable,
        timeout: float = RUN_TIMEOUT, **variables: str) -> Probe:
    """Run PRELUDE and *code* in a fresh interpreter; a hang is a test failure."""
    started = time.monotonic()
    try:
        done = subprocess.run([str(python), "-c", PRELUDE + textwrap.dedent(code)],
                              capture_output=True, text=True, timeout=timeout,
                              env=environment(cache, sites, **variables))
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the interpreter did not finish within {timeout} s (a hang); it printed:\n"
                    f"{exc.stderr and exc.stderr[-2000:]!s}")
    return Probe(done, time.monotonic() - started)


def run_command(args: list[str | Path], cache: Path, sites: list[Path], *,
                timeout: float = RUN_TIMEOUT, **variables: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(list(map(str, args)), capture_output=True, text=True,
                              timeout=timeout, env=environment(cache, sites, **variables))
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(map(str, args))} did not finish within {timeout} s (a hang)")


def records(cache: Path) -> dict[Path, str]:
    """Every record file argonishche left under *cache* and its text ({} if none)."""
    found = {}
    for path in sorted((cache / "argonishche").rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[path] = path.read_text(errors="replace")
    return found


def certification_records(cache: Path, passed: str) -> list[Path]:
    """The records under *cache* that say ``passed: <passed>``."""
    return [path for path, text in records(cache).items()
            if f"passed: {passed}" in text.splitlines()]


# Probes: code run after PRELUDE.
BLAKE2B_2MIB = """
    out["blake2b_2mib_right"] = blake2b_right(2 << 20)
    out["argon2_right"] = argon2_right()
    report()
"""

INFO_AND_HASHES = """
    import contextlib, io
    from argonishche import _cli
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        out["info_exit"] = _cli.main(["info", "--fast"])
    out["info"] = text.getvalue()
    out["blake2b_2mib_right"] = blake2b_right(2 << 20)
    out["argon2_right"] = argon2_right()
    report()
"""
