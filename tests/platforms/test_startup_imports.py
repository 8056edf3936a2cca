"""Start-up cost: what ``import argonishche`` and the first hash must *not* import.

Each module here costs milliseconds that every process would pay before its first hash
(``python -m argonishche bench --startup`` times the whole; argon2-cffi is the yardstick), and
none is needed on that path: they are imported by the features that use them.  Fresh
interpreters, so that nothing an earlier test imported can hide an import.
"""

from __future__ import annotations

import json

import pytest
from support import run_python

#: Never imported by ``import argonishche`` nor by the first hash, and who needs each.
DEFERRED = {
    "concurrent.futures": "hash_many and run_blocking, when they first need the shared pool",
    "logging": "(concurrent.futures imports it)",
    "queue": "hash_many",
    "asyncio": "run_blocking, PasswordHasher.hash_async / verify_async",
    "importlib.metadata": "nothing: _entry_points reads entry_points.txt itself",
    "argonishche._trust.certification": "third-party backends only",
    "argonishche._bench": "argonishche bench",
    "argonishche._cli": "python -m argonishche",
    "argonishche._async": "run_blocking",
}

FIRST_HASH = """
import json, sys
import argonishche
after_import = sorted(sys.modules)
argonishche.PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash("x")
argonishche.argon2_verify(argonishche.argon2_hash_encoded(b"pw", b"saltsalt", time_cost=1,
                                                          memory_cost=8, parallelism=1), b"pw")
print(json.dumps([after_import, sorted(sys.modules)]))
"""


@pytest.fixture(scope="module")
def imported():
    """(modules after ``import argonishche``, modules after its first hash and verify)."""
    result = run_python(FIRST_HASH)
    assert result.returncode == 0, result.stderr
    after_import, after_hash = json.loads(result.stdout)
    return set(after_import), set(after_hash)


@pytest.mark.parametrize("module", sorted(DEFERRED))
def test_import_and_first_hash_do_not_import(imported, module):
    after_import, after_hash = imported
    assert module not in after_import, f"import argonishche imported {module}"
    assert module not in after_hash, f"the first hash imported {module} ({DEFERRED[module]})"


def test_hash_many_imports_the_pool_only_when_it_needs_one():
    result = run_python("""
        import sys
        import argonishche
        costs = dict(time_cost=1, memory_cost=8, parallelism=1)
        argonishche.hash_many(["a", "b"], workers=1, **costs)  # the calling thread alone
        inline = "concurrent.futures" in sys.modules
        argonishche.hash_many(["a", "b", "c", "d"], workers=2, **costs)
        print(inline, "concurrent.futures" in sys.modules, "asyncio" in sys.modules)
        """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "False"]
