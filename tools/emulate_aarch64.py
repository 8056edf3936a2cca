#!/usr/bin/env python3
"""Run the suite on an emulated aarch64 CPython: QEMU user mode, Debian's arm64 Python 3.11.

    python tools/emulate_aarch64.py [--cache DIR] CPU [PYTHON ARGS...]

like ``python ARGS...``, but the interpreter is Debian 12's arm64 ``python3.11`` run by
``qemu-aarch64`` with argonishche built for aarch64 and installed in a virtual environment of
its own.  CPU (an ``emu-`` prefix, as in tox env names, is ignored) picks QEMU's CPU model:

    aarch64        ``-cpu max``: ASIMD and SHA3 (HWCAP 0xecfffffb), so neon_sha3 is selected
    aarch64nosha3  ``-cpu cortex-a57``: ASIMD, no SHA3 (HWCAP 0x8fb), so neon is selected

(HWCAP values observed with QEMU 7.2, Debian 12's qemu-user, through getauxval(AT_HWCAP) in
a static aarch64 binary: cortex-a53/a57/a72 report no SHA3, a64fx and neoverse-n1 neither,
``max`` does; TCG enforces the model, so a SHA3 instruction on cortex-a57 is SIGILL.)

What it needs on the host (the error says so when something is missing)::

    dpkg --add-architecture arm64 && apt-get update
    apt-get install -y qemu-user gcc-aarch64-linux-gnu

Everything else is made under the cache directory (``--cache``, else
``$ARGONISHCHE_AARCH64_CACHE``, else ``~/.cache/argonishche-aarch64``) and reused:

- ``sysroot/``: the arm64 .debs of python3.11 and the libraries it loads (``apt-get download``,
  unpacked with ``dpkg -x``; no root needed, nothing installed on the host), passed to QEMU
  as ``-L``;
- ``env/``: a virtual environment for that interpreter (its ``pyvenv.cfg`` says ``home =
  /usr/bin``, which QEMU resolves inside the sysroot), with the test dependencies installed by
  the host's pip from PyPI's manylinux aarch64 wheels (``pip install --platform ... --target``);
- argonishche itself, built by pip *under emulation* from a copy of the source tree (so no
  aarch64 object lands in the checkout), its C compiled by the x86-64 cross compiler that the
  emulated Python's subprocess starts natively, against the arm64 Python headers in the
  sysroot.  Rebuilt only when a source file changed.

The interpreter runs through a wrapper script ``env/bin/python-emu-CPU`` which QEMU reports as
``sys.executable`` (``-0``), so the child Pythons the tests start are emulated too.  The
wrapper also sets CC (and friends) to the cross compiler, for the tests that compile backends,
and PYTHONSAFEPATH, so that the current directory is not on sys.path.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: CPU -> QEMU -cpu model (see the module docstring for what each reports).
CPUS = {"aarch64": "max", "aarch64nosha3": "cortex-a57"}

#: Debian 12's arm64 packages of python3.11 and the shared libraries its standard library loads
#: (the Depends of python3.11, libpython3.11-stdlib and -minimal), and the headers for building.
PACKAGES = (
    "python3.11", "python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib",
    "libpython3.11-dev", "libc6", "libgcc-s1", "libexpat1", "zlib1g", "libffi8", "libssl3",
    "libbz2-1.0", "liblzma5", "libuuid1", "libcrypt1", "libncursesw6", "libtinfo6",
    "libsqlite3-0", "libreadline8", "libdb5.3", "libnsl2", "libtirpc3", "libgssapi-krb5-2",
    "libkrb5-3", "libk5crypto3", "libkrb5support0", "libcom-err2", "libkeyutils1",
)
PYTHON = "/usr/bin/python3.11"  # inside the sysroot
#: What the suite needs in the emulated interpreter (pyproject's ``test`` extra, trimmed to what
#: the aarch64 envs run), and what pip needs to build argonishche there.
REQUIREMENTS = ("cffi>=1.16", "pluggy>=1.3", "py-cpuinfo>=9", "pytest>=7", "hypothesis>=6",
                "pytest-timeout>=2.1", "setuptools>=77.0.3", "pip")
WHEEL_PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64", "linux_aarch64")
CROSS_CC = "aarch64-linux-gnu-gcc"
#: Not copied into the build's source tree: VCS data, other builds, caches, compiled modules.
_IGNORED = shutil.ignore_patterns(".git", ".tox", "build", "dist", "*.egg-info", "__pycache__",
                                  "*.so", "*.pyd", "*.o", ".mypy_cache", ".ruff_cache",
                                  ".hypothesis", ".pytest_cache", "plugins")


def log(message: str) -> None:
    print(f"emulate_aarch64.py: {message}", file=sys.stderr, flush=True)


def tool(name: str, package: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SystemExit(f"emulate_aarch64.py: {name} not found: apt-get install -y {package} "
                         f"(and see this script's docstring)")
    return path


def run(command: list[str], **kwargs: object) -> None:
    result = subprocess.run(command, **kwargs)  # type: ignore[call-overload]
    if result.returncode:
        raise SystemExit(f"emulate_aarch64.py: failed ({result.returncode}): "
                         f"{' '.join(command)}")


@contextlib.contextmanager
def locked(cache: str) -> Iterator[None]:
    """One setup at a time per cache (tox -p runs both aarch64 envs at once)."""
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _key(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def sysroot(cache: str) -> str:
    """The unpacked arm64 packages, downloaded once."""
    root = os.path.join(cache, "sysroot")
    marker = os.path.join(root, ".complete-" + _key(PACKAGES))
    if os.path.exists(marker):
        return root
    foreign = subprocess.run(["dpkg", "--print-foreign-architectures"], capture_output=True,
                             text=True).stdout.split()
    if "arm64" not in foreign:
        raise SystemExit("emulate_aarch64.py: apt has no arm64 packages: run (as root) "
                         "dpkg --add-architecture arm64 && apt-get update")
    debs = os.path.join(cache, "debs")
    shutil.rmtree(debs, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(debs)
    started = time.monotonic()
    run(["apt-get", "download", "-q", *(f"{name}:arm64" for name in PACKAGES)], cwd=debs)
    for name in sorted(os.listdir(debs)):
        run(["dpkg", "-x", os.path.join(debs, name), root])
    shutil.rmtree(debs)
    open(marker, "w").close()
    log(f"arm64 sysroot made in {time.monotonic() - started:.0f} s: {root}")
    return root


def environment(cache: str) -> str:
    """The emulated interpreter's virtual environment, with the test dependencies."""
    env = os.path.join(cache, "env")
    site = os.path.join(env, "lib", "python3.11", "site-packages")
    marker = os.path.join(env, ".complete-" + _key(REQUIREMENTS, WHEEL_PLATFORMS))
    if os.path.exists(marker):
        return env
    shutil.rmtree(env, ignore_errors=True)
    os.makedirs(os.path.join(env, "bin"))
    os.makedirs(site)
    with open(os.path.join(env, "pyvenv.cfg"), "w", encoding="utf-8") as f:
        # Read by the emulated interpreter, whose /usr/bin is the sysroot's.
        f.write("home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11\n")
    started = time.monotonic()
    platforms = [arg for platform in WHEEL_PLATFORMS for arg in ("--platform", platform)]
    run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--root-user-action=ignore", "--target", site, *platforms, "--python-version", "3.11",
         "--implementation", "cp", "--abi", "cp311", "--abi", "abi3", "--abi", "none",
         "--only-binary=:all:",
         *REQUIREMENTS])
    open(marker, "w").close()
    log(f"aarch64 test dependencies installed in {time.monotonic() - started:.0f} s: {site}")
    return env


def compiler_environment(root: str) -> dict[str, str]:
    """Variables that make setuptools/cffi in the emulated interpreter use the cross compiler
    (run natively by the emulated Python's subprocess) with the sysroot's Python headers.  The
    interpreter's sysconfig names ``/usr/include/python3.11``, which the native compiler would
    look for on the host: -I the sysroot's copy first (pyconfig.h includes the arm64 one from
    ``aarch64-linux-gnu/``, found through -idirafter)."""
    cc = tool(CROSS_CC, "gcc-aarch64-linux-gnu")
    return {"CC": cc, "LDSHARED": f"{cc} -shared",
            "CFLAGS": f"-I{root}/usr/include/python3.11 -idirafter {root}/usr/include"}


def wrapper(cpu: str, root: str, env: str) -> str:
    """``env/bin/python-emu-CPU``: runs the sysroot's python3.11 under QEMU as itself."""
    qemu = tool("qemu-aarch64", "qemu-user")
    path = os.path.join(env, "bin", f"python-emu-{cpu}")
    # PYTHONSAFEPATH: the current directory is not on sys.path, so a checkout's stale
    # argonishche.egg-info (left by an x86 editable install) cannot shadow the installed
    # distribution's metadata (its entry points).
    variables = {**compiler_environment(root), "PYTHONSAFEPATH": "1"}
    exports = "".join(f"export {name}='{value}'\n" for name, value in variables.items())
    # -0 sets argv[0], from which Python derives sys.executable (children come back here) and
    # finds env/pyvenv.cfg.
    line = f'exec {qemu} -L {root} -cpu {CPUS[cpu]} -0 "$0" {root}{PYTHON} "$@"'
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"#!/bin/sh\n# made by tools/emulate_aarch64.py\n{exports}{line}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _source_digest(tree: str) -> str:
    digest = hashlib.sha256()
    for directory, dirs, files in sorted(os.walk(tree)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(directory, name)
            digest.update(os.path.relpath(path, tree).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


def install_argonishche(python: str, cache: str) -> None:
    """Build argonishche under emulation from a copy of the checkout, unless unchanged."""
    source = os.path.join(cache, "src")
    shutil.rmtree(source, ignore_errors=True)
    shutil.copytree(ROOT, source, ignore=_IGNORED, symlinks=True)
    digest = _source_digest(source)
    marker = os.path.join(cache, "env", ".argonishche-" + digest[:16])
    if os.path.exists(marker):
        log("argonishche for aarch64 is up to date")
        return
    started = time.monotonic()
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--root-user-action=ignore",
         "--no-build-isolation", "--no-index", "--force-reinstall", source])
    for name in os.listdir(os.path.join(cache, "env")):
        if name.startswith(".argonishche-"):
            os.remove(os.path.join(cache, "env", name))
    open(marker, "w").close()
    log(f"argonishche built and installed for aarch64 in {time.monotonic() - started:.0f} s")


def default_cache() -> str:
    return os.environ.get("ARGONISHCHE_AARCH64_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "argonishche-aarch64")


def main(argv: list[str]) -> int:
    cache = default_cache()
    if argv[:1] == ["--cache"] and len(argv) > 1:
        cache, argv = argv[1], argv[2:]
    if not argv or argv[0].removeprefix("emu-") not in CPUS:
        print(f"usage: {sys.argv[0]} [--cache DIR] CPU [PYTHON ARGS...]; CPU is one of "
              f"{', '.join(CPUS)}", file=sys.stderr)
        return 2
    cpu = argv[0].removeprefix("emu-")
    cache = os.path.abspath(cache)
    with locked(cache):
        root = sysroot(cache)
        env = environment(cache)
        program = wrapper(cpu, root, env)
        install_argonishche(program, cache)
    log(f"{cpu} via qemu-aarch64 -cpu {CPUS[cpu]}")
    os.execv(program, [program, *argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
