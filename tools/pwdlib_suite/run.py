"""Fetch pwdlib's own tests from its sdist on PyPI and run them against argonishche's hasher.

    python tools/pwdlib_suite/run.py WORKDIR [pytest options]

For tox -e pwdlib-suite and -e pwdlib-suite-newest: an env with pwdlib (without its argon2
extra) at one of VERSIONS, and bcrypt, and no argon2-cffi.  The sdist's ``tests/`` are
extracted under WORKDIR (never into this repository) and run with pwdlib_redirect.py, which
makes ``pwdlib.hashers.argon2.Argon2Hasher`` ``argonishche.contrib.pwdlib.Argon2Hasher``.
Run: tests/hashers/test_argon2.py (the hasher) and tests/test_hash.py (``PasswordHash`` with it
and pwdlib's bcrypt hasher).  The counts (passed, skipped with reasons, failed,
expected-different with explanations) are printed and written to WORKDIR/pwdlib-suite.json.
The versions are pinned, as in tox.ini's deps (the oldest and the newest release the hasher
follows): the plugin's lists are written against those releases' tests; move a pin here and in
tox.ini together, deliberately.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

# pwdlib 0.3.1: verify answers False for a malformed hash; 0.4.2: HashVerificationError.
VERSIONS = ("0.3.1", "0.4.2")
TEST_FILES = ("tests/hashers/test_argon2.py", "tests/test_hash.py")
HERE = Path(__file__).resolve().parent


def installed_version() -> str | None:
    try:
        return importlib.metadata.version("pwdlib")
    except importlib.metadata.PackageNotFoundError:
        return None


def check_environment() -> str | None:
    """Why this env cannot prove the hasher works without argon2-cffi, or None if it can."""
    installed = installed_version()
    if installed is None:
        return "pwdlib is not installed"
    if installed not in VERSIONS:
        return (f"pwdlib {installed} is installed; the suite's lists are written for "
                f"{', '.join(VERSIONS)}")
    if importlib.util.find_spec("argon2") is not None:
        return "argon2 is importable here: the env must not have argon2-cffi"
    try:
        importlib.metadata.distribution("argon2-cffi")
    except importlib.metadata.PackageNotFoundError:
        return None
    return "argon2-cffi's metadata is installed: the env must not have argon2-cffi"


def fetch(workdir: Path, version: str) -> Path:
    """The directory holding the sdist's tests/ (downloaded once)."""
    root = workdir / f"pwdlib-{version}"
    if not (root / "tests").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--no-binary", ":all:", "--dest", str(workdir), f"pwdlib=={version}"],
                       check=True, timeout=600)
        with tarfile.open(workdir / f"pwdlib-{version}.tar.gz") as sdist:
            members = [member for member in sdist.getmembers()
                       if member.name.startswith(f"{root.name}/tests/")]
            sdist.extractall(workdir, members=members, filter="data")
    return root


def summarize(outcomes: dict[str, dict[str, str]], version: str) -> str:
    counts = Counter(entry["outcome"] for entry in outcomes.values())
    lines = [f"pwdlib {version}'s tests against argonishche.contrib.pwdlib.Argon2Hasher: "
             + ", ".join(f"{counts[name]} {name}" for name in
                         ("passed", "skipped", "failed", "expected-different"))]
    for name in ("skipped", "expected-different", "failed"):
        lines += [f"  {name}: {test_id}: {entry['reason']}".rstrip(": ")
                  for test_id, entry in sorted(outcomes.items()) if entry["outcome"] == name]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    problem = check_environment()
    if problem:
        print(f"pwdlib-suite: {problem}", file=sys.stderr)
        return 2
    workdir = Path(argv[0]).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    version = installed_version()
    assert version is not None  # check_environment saw it
    root = fetch(workdir, version)
    report = workdir / "pwdlib-suite.json"
    report.unlink(missing_ok=True)
    # pwdlib's pyproject.toml is not used: its addopts need pytest-cov.  Strict xfails, so an
    # expected difference that stops differing is reported.
    ini = workdir / "pytest.ini"
    ini.write_text("[pytest]\nxfail_strict = true\n")
    env = dict(os.environ, PWDLIB_SUITE_REPORT=str(report), PYTHONPATH=os.pathsep.join(
        filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    # cwd: test_identify_large_hash opens tests/data/argon2id_large_hash relative to it.
    command = [sys.executable, "-m", "pytest", "-p", "pwdlib_redirect", "-p", "no:cacheprovider",
               "--rootdir", str(root), "-c", str(ini), *TEST_FILES, *argv[1:]]
    status = subprocess.run(command, cwd=root, env=env, timeout=1800).returncode
    if not report.exists():
        print("pwdlib-suite: no report was written", file=sys.stderr)
        return status or 1
    outcomes = json.loads(report.read_text())
    print(summarize(outcomes, version))
    if not any(entry["outcome"] == "passed" for entry in outcomes.values()):
        return status or 1  # nothing ran: never a pass
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
