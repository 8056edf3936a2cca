"""Build argonishche's wheel and every plugin's wheel under plugins/ into one directory.

    python tools/build_wheelhouse.py DIR

Then ``pip install --find-links DIR "argonishche[avx512]"`` (or ``argonishche-avx512`` by name)
installs from DIR as it will from an index.  Every wheel is built with pip and build isolation
on, as pip builds for users: setuptools and cffi come from the package index, and each plugin's
isolated build gets argonishche (its ``[build-system] requires``) from DIR, where the core's wheel
was put first.  Each project is built from a copy of its sources without build output, so no
stale object file from an earlier build ends up in a wheel, and the source tree stays clean.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Build output and local state that a build must not see, at any depth of a project's tree.
NOT_SOURCE = ("build", "dist", "wheelhouse", "__pycache__", ".git", ".venv", ".tox")
NOT_SOURCE_SUFFIXES = (".egg-info", ".so", ".o", ".whl", ".pyc")


def projects() -> list[tuple[str, Path]]:
    """(distribution, directory) of the core, first (the plugins' builds need its wheel), then
    of each plugin."""
    found = [("argonishche", ROOT)]
    for pyproject in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        found.append((pyproject.parent.name, pyproject.parent))
    return found


def wheel_prefix(distribution: str) -> str:
    """How a wheel's file name starts for *distribution* (``argonishche-avx512`` gives
    ``argonishche_avx512-``)."""
    return re.sub(r"[-_.]+", "_", distribution).lower() + "-"


def copy_sources(source: Path, destination: Path, skip: Path) -> None:
    """Copy *source* to *destination* without build output, local state or *skip* (the
    wheelhouse, when it is inside the tree)."""
    def ignored(directory: str, names: list[str]) -> set[str]:
        return {name for name in names
                if name in NOT_SOURCE or name.endswith(NOT_SOURCE_SUFFIXES)
                or Path(directory, name).resolve() == skip
                # The core's copy does not need the plugins: they are built on their own.
                or (Path(directory) == source == ROOT and name == "plugins")}
    shutil.copytree(source, destination, ignore=ignored)


def build(distribution: str, directory: Path, wheelhouse: Path, scratch: Path) -> Path:
    """Build *distribution*'s wheel from a clean copy of *directory* into *wheelhouse*."""
    copy = scratch / distribution
    copy_sources(directory, copy, wheelhouse)
    for stale in wheelhouse.glob(wheel_prefix(distribution) + "*.whl"):
        print(f"  removing the earlier {stale.name}", flush=True)
        stale.unlink()
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
               "--find-links", str(wheelhouse), "--wheel-dir", str(wheelhouse), str(copy)]
    started = time.monotonic()
    result = subprocess.run(command, check=False)
    if result.returncode != 0:
        sys.exit(f"build_wheelhouse: building {distribution} failed (pip exited with "
                 f"{result.returncode}; its output above says why).  The core needs a C compiler "
                 "and Python's headers (python3-dev), and pip needs the package index for "
                 "setuptools and cffi.")
    wheels = list(wheelhouse.glob(wheel_prefix(distribution) + "*.whl"))
    if len(wheels) != 1:
        sys.exit(f"build_wheelhouse: pip succeeded but left {len(wheels)} wheels of "
                 f"{distribution} in {wheelhouse}, not one")
    print(f"  {wheels[0].name} ({time.monotonic() - started:.0f} s)", flush=True)
    return wheels[0]


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: python tools/build_wheelhouse.py DIR", file=sys.stderr)
        return 2
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True,
                      check=False).returncode != 0:
        sys.exit(f"build_wheelhouse: {sys.executable} has no pip: run this with a Python that "
                 "has (a venv made by `python3 -m venv` does)")
    wheelhouse = Path(argv[0]).resolve()
    wheelhouse.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="argonishche-wheelhouse-") as scratch:
        for number, (distribution, directory) in enumerate(projects(), 1):
            what = "compiles the C core and backends" if directory == ROOT else "a plugin"
            print(f"[{number}/{len(projects())}] building {distribution} ({what}) ...",
                  flush=True)
            build(distribution, directory, wheelhouse, Path(scratch))
    print(f"wheelhouse ready: {wheelhouse}\n"
          f"  pip install --find-links {argv[0]} \"argonishche[avx512]\"", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
