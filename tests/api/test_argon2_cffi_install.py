"""argonishche.argon2_cffi.install_as_argon2: ``import argon2.*`` answered by the drop-in.

Each case runs in a fresh interpreter, whose sys.modules it changes.  This env has argon2-cffi
installed (the test extra); :data:`WITHOUT_ARGON2_CFFI` makes the child behave as if it were
not, as in an application that depends on argonishche alone.  The same with a real package from
PyPI, in a venv without argon2-cffi: tests/project/test_argon2_cffi_install_apps.py.
"""

from __future__ import annotations

import json

from support import run_python

#: Child code first: ``import argon2`` finds nothing on sys.path, as without argon2-cffi.
WITHOUT_ARGON2_CFFI = """
import importlib.abc, sys

class NoArgon2Cffi(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "argon2" or name.startswith("argon2."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoArgon2Cffi())
"""


def run_child(code: str) -> dict:
    """Run *code* after :data:`WITHOUT_ARGON2_CFFI`; what it printed last, read as JSON."""
    run = run_python(WITHOUT_ARGON2_CFFI + code, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def test_nothing_is_installed_until_the_call_then_argon2_cffis_imports_work():
    result = run_child("""
import json, sys
import argonishche, argonishche.argon2_cffi
from argonishche.argon2_cffi import install_as_argon2
before = sorted(name for name in sys.modules if name.split(".")[0] == "argon2")
try:
    import argon2
    importable_before = True
except ModuleNotFoundError:
    importable_before = False

install_as_argon2()
import argon2
import argon2.low_level
import argon2.exceptions as exceptions
from argon2 import PasswordHasher, Type, profiles, extract_parameters, low_level
from argon2.exceptions import Argon2Error, InvalidHashError, VerificationError
from argon2.exceptions import VerifyMismatchError
from argon2.low_level import ARGON2_VERSION, hash_secret, verify_secret
from argon2.profiles import CHEAPEST, RFC_9106_LOW_MEMORY, get_default_parameters
import importlib, importlib.util

drop_in = argonishche.argon2_cffi
ph = PasswordHasher.from_parameters(CHEAPEST)
stored = ph.hash("right")
try:
    ph.verify(stored, "wrong")
    refused = False
except VerifyMismatchError:
    refused = True
encoded = hash_secret(b"secret", b"somesalt", 1, 8, 1, 16, argon2.low_level.Type.ID)
try:
    import argon2._legacy
    legacy = "imported"
except ModuleNotFoundError as exc:
    legacy = str(exc)
print(json.dumps({
    "before": before, "importable_before": importable_before,
    "same_objects": [argon2.PasswordHasher is drop_in.PasswordHasher,
                     argon2.low_level is drop_in.low_level, exceptions is drop_in.exceptions,
                     profiles is drop_in.profiles, low_level is drop_in.low_level,
                     Type is argonishche.Type, extract_parameters is drop_in.extract_parameters,
                     RFC_9106_LOW_MEMORY is get_default_parameters(),
                     importlib.import_module("argon2.profiles") is drop_in.profiles,
                     issubclass(VerifyMismatchError, Argon2Error),
                     issubclass(InvalidHashError, VerificationError)],
    "verified": ph.verify(stored, "right"), "refused": refused,
    "low_level": verify_secret(encoded, b"secret", Type.ID), "version": ARGON2_VERSION,
    "find_spec": importlib.util.find_spec("argon2") is not None,
    "names": sorted(argon2.__all__), "legacy": legacy,
}))
""")
    assert result["before"] == [] and result["importable_before"] is False
    assert all(result["same_objects"]), result["same_objects"]
    assert result["verified"] is result["refused"] is result["low_level"] is True
    assert result["version"] == 0x13 and result["find_spec"] is True
    assert "install_as_argon2" not in result["names"]
    assert {"PasswordHasher", "Parameters", "Type", "exceptions", "low_level", "profiles",
            "extract_parameters", "DEFAULT_MEMORY_COST"} <= set(result["names"])
    assert result["legacy"] == "No module named 'argon2._legacy'"


def test_a_second_call_and_concurrent_calls_install_one_tree():
    result = run_child("""
import json, sys, threading
from argonishche.argon2_cffi import install_as_argon2

start = threading.Barrier(8)
errors = []

def install():
    start.wait()
    try:
        install_as_argon2()
    except Exception as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=install) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
first = {name: id(module) for name, module in sys.modules.items()
         if name.split(".")[0] == "argon2"}
install_as_argon2()
again = {name: id(module) for name, module in sys.modules.items()
         if name.split(".")[0] == "argon2"}
del sys.modules["argon2"]  # as a test's cleanup might: the next call puts the same one back
install_as_argon2()
restored = {name: id(module) for name, module in sys.modules.items()
            if name.split(".")[0] == "argon2"}
print(json.dumps({"errors": errors, "names": sorted(first), "unchanged": first == again,
                  "restored": first == restored}))
""")
    assert result["errors"] == []
    assert result["names"] == ["argon2", "argon2.exceptions", "argon2.low_level",
                               "argon2.profiles"]
    assert result["unchanged"] is True and result["restored"] is True


def test_refused_when_argon2_cffi_is_already_imported():
    # Not through WITHOUT_ARGON2_CFFI: here argon2-cffi itself (the test extra) is imported.
    run = run_python("""
import json, sys
import argon2.exceptions  # argon2-cffi
from argonishche.argon2_cffi import install_as_argon2
real = argon2.PasswordHasher
try:
    install_as_argon2()
    error = None
except ImportError as exc:
    error = str(exc)
import argon2
print(json.dumps({"error": error, "unchanged": argon2.PasswordHasher is real,
                  "file": argon2.__file__}))
""", timeout=60)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.splitlines()[-1])
    assert result["error"].startswith(f"argon2 is already imported (from {result['file']})")
    assert result["unchanged"] is True


def test_refused_when_only_a_submodule_of_something_else_is_imported():
    result = run_child("""
import json, sys, types
sys.modules["argon2.low_level"] = types.ModuleType("argon2.low_level")  # a stray half tree
from argonishche.argon2_cffi import install_as_argon2
try:
    install_as_argon2()
    error = None
except ImportError as exc:
    error = str(exc)
print(json.dumps({"error": error, "argon2": "argon2" in sys.modules}))
""")
    assert result["error"].startswith("argon2.low_level is already imported")
    assert result["argon2"] is False
