"""install_as_argon2 with a real package from PyPI that imports ``argon2.*``, without argon2-cffi.

advanced-alchemy's ``PasswordHash`` column with its ``Argon2Hasher`` (its argon2 extra is
argon2-cffi; here it is not installed): ``from argon2 import PasswordHasher``, ``from
argon2.exceptions import InvalidHash, VerificationError, VerifyMismatchError``, and a
``find_spec("argon2")`` when advanced_alchemy is imported.  In a fresh venv holding the
argonishche wheel and advanced-alchemy (pinned, with its dependencies), by a user's script run
with ``python -I`` in a subprocess.

libpass's ``passlib.hash.argon2`` reads argon2-cffi's package metadata, which the call does not
fake: it fails as docs/migration/argon2-cffi.md says (argonishche.contrib.passlib is the way).

It makes a venv and installs from the package index, so it runs in ``tox -e argon2-apps``
(ARGONISHCHE_ARGON2_APPS=1) on the wheel tox built (TOX_PACKAGE); by hand with that variable set
it builds the wheel itself.  The same without a network: tests/api/test_argon2_cffi_install.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from user_venvs import ROOT, checked, fresh_venv, pip_install, run, user_environment

ENABLE_ENV = "ARGONISHCHE_ARGON2_APPS"
#: The releases whose imports of argon2 this was written against.
ADVANCED_ALCHEMY = "advanced-alchemy==1.12.0"
LIBPASS = "libpass==1.9.4"
SCRIPT_TIMEOUT = 120

pytestmark = pytest.mark.skipif(
    not os.environ.get(ENABLE_ENV),
    reason=f"installs from the package index: runs in tox -e argon2-apps ({ENABLE_ENV}=1)")

#: A user's application: a table with advanced-alchemy's PasswordHash(Argon2Hasher) column.
APPLICATION = """
import importlib.metadata, json, sys
INSTALL = sys.argv[1] == "install"
if INSTALL:
    from argonishche.argon2_cffi import install_as_argon2
    install_as_argon2()  # before advanced_alchemy, which looks for argon2 when imported

from sqlalchemy import create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from advanced_alchemy.types import PasswordHash
from advanced_alchemy.types.password_hash.argon2 import Argon2Hasher

try:
    hasher = Argon2Hasher(time_cost=1, memory_cost=64, parallelism=1)
except Exception as exc:  # advanced-alchemy's MissingDependencyError without argon2
    print(json.dumps({"error": type(exc).__name__}))
    sys.exit(0)


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    password: Mapped[str] = mapped_column(PasswordHash(backend=hasher))


engine = create_engine("sqlite://")
Base.metadata.create_all(engine)
with Session(engine) as session:
    session.add(User(id=1, password="correct horse"))
    session.commit()
with Session(engine) as session:
    stored = session.scalars(select(User)).one().password
try:
    importlib.metadata.version("argon2-cffi")
    metadata = "found"
except importlib.metadata.PackageNotFoundError:
    metadata = "PackageNotFoundError"
import argon2, argonishche.argon2_cffi
print(json.dumps({
    "hash": stored.hash_string, "right": stored.verify("correct horse"),
    "wrong": stored.verify("wrong"), "garbage": hasher.verify("x", "not a hash"),
    "needs_rehash": hasher.needs_rehash(stored.hash_string),
    "drop_in": argon2.PasswordHasher is argonishche.argon2_cffi.PasswordHasher,
    "argon2_cffi_metadata": metadata,
}))
"""


def _wheel(tmp: Path) -> Path:
    """The wheel under test: the one tox installed in this env, else (by hand) one built now."""
    given = [Path(p) for p in os.environ.get("TOX_PACKAGE", "").split(os.pathsep) if p]
    wheels = [p for p in given if p.name.startswith("argonishche-") and p.suffix == ".whl"]
    if wheels:
        return wheels[0]
    checked(run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", tmp, ROOT],
                timeout=1200))
    return next(tmp.glob("argonishche-*.whl"))


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("argon2-apps")
    path = fresh_venv(tmp / "venv")
    checked(pip_install(path, "--quiet", "--disable-pip-version-check", _wheel(tmp / "dist"),
                        ADVANCED_ALCHEMY, LIBPASS))
    return path


def _application(venv: Path, mode: str, tmp: Path) -> dict:
    script = tmp / "app.py"
    script.write_text(APPLICATION, encoding="utf-8")
    result = checked(run([venv / "bin" / "python", "-I", script, mode], timeout=SCRIPT_TIMEOUT,
                         cwd=tmp, env=user_environment(venv, tmp)))
    return json.loads(result.stdout.splitlines()[-1])


def test_the_venv_has_no_argon2_cffi(venv, tmp_path):
    # Else the application below could be running argon2-cffi.
    code = ("import importlib.util, importlib.metadata as m; "
            "print(importlib.util.find_spec('argon2'), "
            "[d.metadata['Name'] for d in m.distributions()])")
    result = checked(run([venv / "bin" / "python", "-I", "-c", code], timeout=SCRIPT_TIMEOUT,
                         env=user_environment(venv, tmp_path)))
    found, names = result.stdout.split(" ", 1)
    names = names.lower().replace("_", "-")
    assert found == "None"
    assert "argon2-cffi" not in names and "advanced-alchemy" in names


def test_without_the_call_advanced_alchemy_finds_no_argon2(venv, tmp_path):
    assert _application(venv, "plain", tmp_path) == {"error": "MissingDependencyError"}


def test_advanced_alchemys_argon2_column_runs_on_the_drop_in(venv, tmp_path):
    result = _application(venv, "install", tmp_path)
    assert result["hash"].startswith("$argon2id$v=19$m=64,t=1,p=1$")
    assert result["right"] is True
    assert result["wrong"] is False and result["garbage"] is False
    assert result["needs_rehash"] is False
    assert result["drop_in"] is True
    # No argon2-cffi is installed, and install_as_argon2 does not pretend one is.
    assert result["argon2_cffi_metadata"] == "PackageNotFoundError"


def test_libpass_argon2_fails_on_argon2_cffis_missing_metadata(venv, tmp_path):
    # What docs/migration/argon2-cffi.md says: nothing pretends argon2-cffi is installed.
    code = """
from argonishche.argon2_cffi import install_as_argon2
install_as_argon2()
from passlib.hash import argon2
try:
    argon2.using(rounds=1, memory_cost=64, parallelism=1).hash("x")
except Exception as exc:
    print(type(exc).__name__)
"""
    result = checked(run([venv / "bin" / "python", "-I", "-c", code], timeout=SCRIPT_TIMEOUT,
                         cwd=tmp_path, env=user_environment(venv, tmp_path)))
    assert result.stdout.splitlines()[-1] == "PackageNotFoundError"
