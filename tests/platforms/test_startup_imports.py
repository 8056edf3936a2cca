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
    "argonishche._batch": "hash_many",
    "argonishche._extract_parameters": "check_needs_rehash, from_parameters",
    "typing": "nothing at run time: annotations' names are imported for type checkers only",
    "dataclasses": "argon2_cffi.Parameters; start-up's records are argonishche._record's",
    "inspect": "(dataclasses)",
    "re": "nothing: the entry points' and PHC strings' readers use string methods",
}

# json is imported only once the modules are counted: it imports re.
FIRST_HASH = """
import sys
before = set(sys.modules)  # the interpreter's own (an editable install's finder imports re)
import argonishche
after_import = sorted(set(sys.modules) - before)
argonishche.PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash("x")
argonishche.argon2_verify(argonishche.argon2_hash_encoded(b"pw", b"saltsalt", time_cost=1,
                                                          memory_cost=8, parallelism=1), b"pw")
after_hash = sorted(set(sys.modules) - before)
import json
print(json.dumps([after_import, after_hash]))
"""


@pytest.fixture(scope="module")
def imported():
    """(modules ``import argonishche`` imported, and those it and the first hash and verify
    imported)."""
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


#: Every module ``import argonishche`` and the first hash and verification (``argon2_hash``,
#: ``argon2_verify`` and ``PasswordHasher``'s) may import beyond what the interpreter had
#: already, and who needs each.
#: Any other fails the test by name: add it here only with its reason and its cost measured
#: (``python -X importtime``, ``python -m argonishche bench --startup``).
ALLOWED = {
    # ours: the start-up path of docs/development.md ("Walk-through: one start-up")
    **dict.fromkeys([
        "argonishche", "argonishche._allocators", "argonishche._argon2",
        "argonishche._backend_declarations", "argonishche._core", "argonishche._core.lib",
        "argonishche._discovery", "argonishche._entry_points", "argonishche._features",
        "argonishche._hash_call", "argonishche._memory_limits", "argonishche._named_tuple",
        "argonishche._parameter_checks", "argonishche._phc", "argonishche._process_registry",
        "argonishche._record", "argonishche._lazy_import", "argonishche._password_hasher",
        "argonishche._thread_pool",
        "argonishche._registry", "argonishche._remembered_selection", "argonishche._selection",
        "argonishche._settings", "argonishche._trust", "argonishche._trust.cpu_gate",
        "argonishche._trust.kernel_table", "argonishche._trust.record_store",
        "argonishche._trust.self_test", "argonishche._trust.vetting", "argonishche._version",
        "argonishche._warn", "argonishche._wording", "argonishche._work_memory",
        "argonishche.exceptions", "argonishche.hookspecs", "argonishche.vectors",
        "argonishche.vectors.argon2", "argonishche.vectors.blake2b", "argonishche_backends",
        "argonishche_backends.table"], "the start-up path"),
    "_cffi_backend": "the compiled modules",
    # the standard library's
    **dict.fromkeys(["enum", "functools", "_functools", "collections", "_collections",
                     "collections.abc", "operator", "_operator", "itertools", "keyword",
                     "reprlib", "types", "copyreg", "weakref", "_weakrefset", "importlib",
                     "importlib.machinery", "importlib._abc", "importlib._bootstrap",
                     "importlib._bootstrap_external", "contextlib", "warnings", "__future__"],
                    "(enum: the Argon2 type; collections: namedtuple; importlib: the kernel "
                    "modules; argon2-cffi's import has them all)"),
    "threading": "the work-memory budget's waits, the registry's locks",
    "atexit": "the built-in allocators give their memory back at exit",
    "mmap": "the built-in allocators, the self-test's far placements",
    "binascii": "PHC strings (not base64, which imports struct), the remembered selection's keys",
    "hmac": "argon2_verify compares tags in constant time",
    **dict.fromkeys(["hashlib", "_hashlib", "_blake2"], "(hmac)"),
    "errno": "the record store",
    "resource": "the memory limits",
    "platform": "the CPU gate off x86-64",
    "encodings.ascii": "(a text-mode open: the CPU identity's file on AArch64)",
}
for _backend in ("ref", "sse2", "ssse3", "sse41", "avx2", "neon", "neon_sha3"):
    ALLOWED[f"argonishche_backends._{_backend}"] = "a built-in kernel module, its CPU gate passed"
    ALLOWED[f"argonishche_backends._{_backend}.lib"] = "(its cffi lib)"

CORE_FIRST_HASH = """
import sys
before = set(sys.modules)
import argonishche
encoded = argonishche.argon2_hash_encoded(b"pw", b"saltsalt", time_cost=1, memory_cost=8,
                                          parallelism=1)
argonishche.argon2_verify(encoded, b"pw")
hasher = argonishche.PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
hasher.verify(hasher.hash("pw"), "pw")
imported = sorted(set(sys.modules) - before)
import json
print(json.dumps(imported))
"""


def test_import_and_first_hash_import_only_the_allowed_modules():
    result = run_python(CORE_FIRST_HASH, settings=False)
    assert result.returncode == 0, result.stderr
    imported = set(json.loads(result.stdout))
    unexpected = sorted(imported - set(ALLOWED))
    assert not unexpected, (
        f"import argonishche + the first hash imported {', '.join(unexpected)}: not in "
        f"ALLOWED (tests/platforms/test_startup_imports.py); import it where it is needed, or "
        f"add it with its reason and cost")
    ours = {name for name in ALLOWED if name.startswith("argonishche")
            and not name.startswith("argonishche_backends._")}
    assert sorted(ours - imported) == [], "no longer imported at start-up: remove from ALLOWED"
