"""Fetch argon2-cffi's own tests from its sdist on PyPI and run them against argonishche.

    python tools/argon2_cffi_suite/run.py WORKDIR [pytest options]

The sdist's ``tests/`` are extracted under WORKDIR (never into this repository) and run with
argon2_cffi_shim.py, which maps ``argon2`` to ``argonishche.argon2_cffi``.  The version is
pinned: the shim's lists of skipped and different tests are written against this release's
tests, and a new release may test features argonishche has not got; move the pin deliberately.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

VERSION = "25.1.0"
TEST_FILES = ("test_password_hasher.py", "test_low_level.py", "test_utils.py")
HERE = Path(__file__).resolve().parent


def fetch(workdir: Path) -> Path:
    """The directory holding the sdist's tests/ and pyproject.toml (downloaded once)."""
    root = workdir / f"argon2_cffi-{VERSION}"
    if not (root / "tests").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--no-binary", ":all:", "--dest", str(workdir),
                        f"argon2-cffi=={VERSION}"], check=True)
        with tarfile.open(workdir / f"argon2_cffi-{VERSION}.tar.gz") as sdist:
            members = [member for member in sdist.getmembers()
                       if member.name.startswith(f"{root.name}/tests/")
                       or member.name == f"{root.name}/pyproject.toml"]
            sdist.extractall(workdir, members=members, filter="data")
    return root


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    workdir = Path(argv[0]).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    root = fetch(workdir)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    # argon2-cffi's own pytest settings (strict markers and config, strict xfail) apply.
    command = [sys.executable, "-m", "pytest", "-p", "argon2_cffi_shim", "-p", "no:cacheprovider",
               "--rootdir", str(root), "-c", str(root / "pyproject.toml"),
               *(str(root / "tests" / name) for name in TEST_FILES), *argv[1:]]
    return subprocess.run(command, cwd=root, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
