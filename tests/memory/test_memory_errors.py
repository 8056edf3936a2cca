"""A stored hash within the limits that asks for more memory than the process can get.

A tampered row at ``m=1048576`` (1 GiB, inside the default ``Limits``) checked by a worker capped
at 768 MiB (``RLIMIT_AS``, set at the start of a child process).  Two ways to meet it: the
work-memory budget, whose default is half of ``RLIMIT_AS``, refuses it at once
(``MemoryBudgetError``); with the budget raised above the cap, the OS refuses the mapping.
Either way argonishche's own API raises ``ArgonishcheMemoryError``; each adapter answers as the
library it stands in for does:
``argonishche.argon2_cffi`` with argon2-cffi's ``VerificationError("Memory allocation error")``
(``HashingError`` when hashing), the Django hasher with False, as Django's own.  Where argon2-cffi
or Django is installed, the child asks the peer too, and its answer must be the same.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from support import run_python

pytestmark = pytest.mark.skipif(sys.platform != "linux",
                                reason="RLIMIT_AS caps mappings only on Linux")

TESTS = str(Path(__file__).resolve().parents[1])  # support.py's folder
ONE_GIB_KIB = 1 << 20
CAP = 768 << 20

# The child's first lines: the cap, then a valid hash at 64 KiB whose m is rewritten to 1 GiB
# (the tag no longer matches any password; what matters is the memory verify asks for), and
# ``answer(call)``: what a call returned or raised, as JSON-friendly data.
PRELUDE = f"""
import json, os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({CAP}, {CAP}))
sys.path.insert(0, {TESTS!r})
import argonishche
if os.environ["REFUSED_BY"] == "the OS":  # a budget above the cap: the mapping is refused
    argonishche.set_memory_budget(4096)
VALID = argonishche.argon2_hash_encoded(b"password", b"somesalt", time_cost=1, memory_cost=64,
                                        parallelism=1)
TAMPERED = VALID.replace("m=64,", "m={ONE_GIB_KIB},")
assert TAMPERED != VALID
argonishche._argon2.params_of(TAMPERED)  # within the default limits: nothing refuses it unread

def answer(call):
    try:
        return {{"returned": repr(call())}}
    except BaseException as exc:
        cause = exc.__cause__
        return {{"raised": type(exc).__module__ + "." + type(exc).__qualname__,
                 "message": str(exc),
                 "memory_error": isinstance(exc, MemoryError),
                 "verification_error": isinstance(exc, argonishche.VerificationError),
                 "cause": None if cause is None else type(cause).__qualname__,
                 "cause_message": None if cause is None else str(cause)}}
"""


#: Who refuses the 1 GiB: the work-memory budget (half of the cap: its default) or the OS.
REFUSERS = ["the budget", "the OS"]
#: What argonishche's own error says, and its class, for each refuser.
OWN_ERROR = {"the budget": ("MemoryBudgetError", "needs 1.0 GiB of work memory"),
             "the OS": ("ArgonishcheMemoryError", f"{1 << 30} bytes")}


@pytest.fixture(params=REFUSERS)
def refused_by(request):
    return request.param


def run_capped(body: str, refused_by: str) -> dict:
    result = run_python(PRELUDE + body + "\nprint(json.dumps(answers))", timeout=120,
                        REFUSED_BY=refused_by)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def test_the_librarys_own_api_raises_argonishche_memory_error(refused_by):
    answers = run_capped("""
answers = {
    "argon2_verify": answer(lambda: argonishche.argon2_verify(TAMPERED, b"password")),
    "PasswordHasher.verify": answer(
        lambda: argonishche.PasswordHasher().verify(TAMPERED, b"password")),
    "system allocator": answer(
        lambda: argonishche.argon2_verify(TAMPERED, b"password", allocator="system")),
    "argon2_hash": answer(lambda: argonishche.argon2_hash(
        b"password", b"somesalt", time_cost=1, memory_cost=1 << 20, parallelism=1)),
}
""", refused_by)
    error, says = OWN_ERROR[refused_by]
    for call, got in answers.items():
        assert got.get("raised") == f"argonishche.exceptions.{error}", (call, got)
        assert got["memory_error"], call  # an ArgonishcheMemoryError either way
        # Not a VerificationError: an application using argonishche's API can tell "no memory
        # now" (retry, HTTP 503) from "wrong password".
        assert not got["verification_error"], call
        assert says in got["message"], (call, got["message"])


def test_argon2_cffi_adapter_answers_as_argon2_cffi(refused_by):
    answers = run_capped(f"""
import argonishche.argon2_cffi as adapter
from argonishche.argon2_cffi import low_level
answers = {{
    "verify": answer(lambda: adapter.PasswordHasher().verify(TAMPERED, b"password")),
    "verify_secret": answer(
        lambda: low_level.verify_secret(TAMPERED.encode(), b"password", adapter.Type.ID)),
    "hash": answer(lambda: adapter.PasswordHasher(memory_cost={ONE_GIB_KIB}).hash("password")),
    "hash_secret_raw": answer(lambda: low_level.hash_secret_raw(
        b"password", b"somesalt", 1, {ONE_GIB_KIB}, 1, 32, adapter.Type.ID)),
}}
# What code written for argon2-cffi does around a login, on the adapter's names.
try:
    adapter.PasswordHasher().verify(TAMPERED, b"password")
except adapter.exceptions.VerificationError:
    answers["login"] = False
try:
    import argon2
except ImportError:
    pass
else:
    answers["argon2-cffi verify"] = answer(lambda: argon2.PasswordHasher().verify(TAMPERED,
                                                                                 b"password"))
    answers["argon2-cffi hash"] = answer(
        lambda: argon2.PasswordHasher(memory_cost={ONE_GIB_KIB}).hash("password"))
""", refused_by)
    own_error, says = OWN_ERROR[refused_by]
    expected = {"verify": "VerificationError", "verify_secret": "VerificationError",
                "hash": "HashingError", "hash_secret_raw": "HashingError"}
    for call, error in expected.items():
        got = answers[call]
        assert got.get("raised") == f"argonishche.exceptions.{error}", (call, got)
        assert got["message"] == "Memory allocation error", (call, got)
        assert not got["memory_error"], call  # argon2-cffi's are not MemoryErrors either
        # argonishche's error, with the size asked for, is kept as the cause.
        assert got["cause"] == own_error, (call, got)
        assert says in got["cause_message"], (call, got)
    assert answers["login"] is False
    if installed("argon2"):  # the peer's own answers, in the same capped process
        assert answers["argon2-cffi verify"]["raised"] == "argon2.exceptions.VerificationError"
        assert answers["argon2-cffi verify"]["message"] == "Memory allocation error"
        assert answers["argon2-cffi hash"]["raised"] == "argon2.exceptions.HashingError"
        assert answers["argon2-cffi hash"]["message"] == "Memory allocation error"


DJANGO = """
from django.conf import settings
settings.configure(SECRET_KEY="tests", INSTALLED_APPS=[], USE_I18N=False,
                   PASSWORD_HASHERS=[HASHER])
import django
django.setup()
from django.contrib.auth.hashers import check_password, get_hasher
"""


@pytest.fixture
def django_here():
    """Skip without Django, except in ``tox -e django`` (ARGONISHCHE_REQUIRE_DJANGO=1): there a
    missing Django fails, as in tests/api/test_django.py."""
    if installed("django"):
        return
    if os.environ.get("ARGONISHCHE_REQUIRE_DJANGO", "").strip() not in ("", "0"):
        pytest.fail("ARGONISHCHE_REQUIRE_DJANGO is set and django cannot be imported")
    pytest.skip("django is not installed (the hasher is tested through Django)")


@pytest.mark.usefixtures("django_here")
def test_django_check_password_is_false_only_for_a_hash_it_can_never_run(refused_by):
    """Over the whole budget, the hash can never be checked here: False, as Django's own hasher
    answers.  Refused by the OS within the budget, memory is only not there now: it raises
    (before, False: a right password answered wrong, and under RLIMIT_AS with 64 login threads
    34 of 64 right passwords were)."""
    answers = run_capped('HASHER = "argonishche.contrib.django.Argon2PasswordHasher"' + DJANGO + """
stored = "argon2" + TAMPERED
answers = {"check_password": answer(lambda: check_password("password", stored)),
           "wrong password": answer(lambda: check_password("wrong", stored))}
try:
    import argon2  # Django's own hasher needs argon2-cffi
except ImportError:
    pass
else:
    from django.contrib.auth.hashers import Argon2PasswordHasher
    answers["django's own"] = answer(lambda: Argon2PasswordHasher().verify("password", stored))
""", refused_by)
    if refused_by == "the budget":
        assert answers["check_password"] == {"returned": "False"}
        assert answers["wrong password"] == {"returned": "False"}
    else:
        for call in ("check_password", "wrong password"):
            got = answers[call]
            assert got.get("raised") == "argonishche.exceptions.ArgonishcheMemoryError", got
            assert f"{1 << 30} bytes" in got["message"], got
    if installed("argon2"):  # argon2-cffi cannot tell the two apart
        assert answers["django's own"] == {"returned": "False"}


@pytest.mark.usefixtures("django_here")
def test_django_login_on_a_cheaper_hash_when_the_padding_cannot_be_allocated(refused_by):
    # A wrong password on a hash cheaper than the site's current costs: Django then calls
    # harden_runtime, which spends the missing work (here about 1 GiB) in one hash.  When that
    # memory cannot be had, the login is refused all the same, not an HTTP 500.
    answers = run_capped(f"""
from argonishche.contrib.django import Argon2PasswordHasher

class OneGiB(Argon2PasswordHasher):
    time_cost, memory_cost, parallelism = 1, {ONE_GIB_KIB}, 1

HASHER = "__main__.OneGiB"
""" + DJANGO + f"""
hasher = get_hasher("argon2")
assert hasher.memory_cost == {ONE_GIB_KIB}, hasher
stored = "argon2" + VALID
answers = {{"wrong password": answer(lambda: check_password("wrong", stored)),
            "right password": answer(lambda: check_password("password", stored))}}
""", refused_by)
    assert answers["wrong password"] == {"returned": "False"}
    assert answers["right password"] == {"returned": "True"}
