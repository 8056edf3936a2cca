"""Sub-interpreters (mod_wsgi application groups, applications embedding CPython): the blake2b
type and Argon2 work in every interpreter of a process, before, during and after others exist,
and an interpreter that cannot load argonishche (one with its own GIL, on 3.12 and later: the
cffi modules are single-phase) is refused at import, without breaking the main interpreter.

Each test runs a fresh process (with a timeout): interpreters cannot be undone inside the test
process, and the bug being guarded against (a module that ran in a destroyed interpreter refusing
every later one) is process-wide.  The process reports what every interpreter computed as JSON;
the digests are compared here with hashlib's and with Argon2 computed in this process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import textwrap

import argonishche
import pytest
from support import run_python

INTERPRETERS = next((name for name in ("_interpreters", "_xxsubinterpreters")
                     if importlib.util.find_spec(name) is not None), None)
pytestmark = pytest.mark.skipif(
    INTERPRETERS is None, reason="this CPython has no _interpreters or _xxsubinterpreters module")
OWN_GIL = sys.version_info >= (3, 12)

#: In the child: new() makes an interpreter sharing the main one's GIL, as Py_NewInterpreter
#: does for mod_wsgi ("legacy"), new(own_gil=True) one with its own GIL ("isolated"); run()
#: raises what the code raised there; record() is what an interpreter reports.
PRELUDE = '''
import json, sys
try:
    import _interpreters as si

    def new(own_gil=False):
        return si.create("isolated" if own_gil else "legacy")

    def run(interp, code):
        failure = si.run_string(interp, code)
        if failure is not None:
            raise RuntimeError(failure.formatted)
except ImportError:
    import _xxsubinterpreters as si

    def new(own_gil=False):
        return si.create(isolated=own_gil)

    def run(interp, code):
        si.run_string(interp, code)

RESULTS = sys.argv[1]
'''

#: What every interpreter computes and reports (one JSON line per interpreter and label).
WORK = '''
import json
import argonishche

def record(label):
    plain = argonishche.blake2b(b"abc", digest_size=32)
    grown = plain.copy()
    grown.update(b"def" * 1000)  # over 2048 bytes: the GIL is released, the object gets a lock
    keyed = argonishche.blake2b(key=b"k" * 16, salt=b"s" * 16, person=b"p" * 16)
    keyed.update(b"x")
    tree = argonishche.blake2b(b"tree", fanout=2, depth=2, leaf_size=4096, node_offset=1,
                               inner_size=64)
    tag = argonishche.argon2_hash(b"password", b"saltsalt", time_cost=1, memory_cost=64,
                                  parallelism=2)
    with open(RESULTS_FILE, "a") as out:
        out.write(json.dumps({"label": label, "plain": plain.hexdigest(),
                              "plain_bytes": plain.digest().hex(), "grown": grown.hexdigest(),
                              "keyed": keyed.hexdigest(), "tree": tree.hexdigest(),
                              "argon2": tag.hex()}) + "\\n")
'''


def expected() -> dict[str, str]:
    grown = hashlib.blake2b(b"abc", digest_size=32)
    grown.update(b"def" * 1000)
    plain = hashlib.blake2b(b"abc", digest_size=32).hexdigest()
    return {
        "plain": plain, "plain_bytes": plain, "grown": grown.hexdigest(),
        "keyed": hashlib.blake2b(b"x", key=b"k" * 16, salt=b"s" * 16,
                                 person=b"p" * 16).hexdigest(),
        "tree": hashlib.blake2b(b"tree", fanout=2, depth=2, leaf_size=4096, node_offset=1,
                                inner_size=64).hexdigest(),
        "argon2": argonishche.argon2_hash(b"password", b"saltsalt", time_cost=1, memory_cost=64,
                                          parallelism=2).hex(),
    }


#: In the child: the code for an interpreter recording *label*.
HELPERS = '''
def work(label):
    return "RESULTS_FILE = %r\\n%s\\nrecord(%r)\\n" % (RESULTS, WORK, label)

def in_main(label):
    exec(work(label), {})
'''


def run_child(tmp_path, body: str, **constants: str) -> list[dict[str, str]]:
    """Run *body* (with PRELUDE, HELPERS and *constants* defined) in a new process; every
    record made, in order."""
    results = tmp_path / "results.jsonl"
    results.touch()
    defined = "".join(f"{name} = {value!r}\n"
                      for name, value in {"WORK": WORK, **constants}.items())
    script = PRELUDE + defined + HELPERS + textwrap.dedent(body)
    done = run_python(script, str(results), timeout=180)
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads(line) for line in results.read_text().splitlines()]


def check(records: list[dict[str, str]], labels: list[str]) -> None:
    assert [r["label"] for r in records] == labels
    want = expected()
    for record in records:
        assert {k: v for k, v in record.items() if k != "label"} == want, record["label"]


def test_the_main_interpreter_hashes_after_a_destroyed_one_used_blake2b(tmp_path):
    """The reported reproducer: the sub-interpreter imports argonishche first (so the type's
    module runs there first), is destroyed, then the main interpreter uses blake2b.  Before,
    the main interpreter's import failed: "_blake2b_type runs in one interpreter per process"."""
    records = run_child(tmp_path, '''
        interp = new()
        run(interp, work("sub"))
        si.destroy(interp)
        in_main("main")
    ''')
    check(records, ["sub", "main"])


def test_a_sub_interpreter_hashes_after_the_main_one_and_main_objects_survive_it(tmp_path):
    """The main interpreter first, an object of it alive (keyed: wiped when freed) across a
    sub-interpreter's life; the sub-interpreter's own type; then the main one again."""
    records = run_child(tmp_path, '''
        import argonishche, hashlib
        in_main("main-before")
        kept = argonishche.blake2b(key=b"main key")
        interp = new()
        run(interp, work("sub"))
        run(interp, "import argonishche\\nassert argonishche.blake2b.__module__ == 'argonishche'")
        si.destroy(interp)
        kept.update(b"after")
        assert kept.hexdigest() == hashlib.blake2b(b"after", key=b"main key").hexdigest()
        del kept
        in_main("main-after")
    ''')
    check(records, ["main-before", "sub", "main-after"])


def test_two_sub_interpreters_in_turn_and_alive_together(tmp_path):
    records = run_child(tmp_path, '''
        first = new()
        run(first, work("first"))
        si.destroy(first)
        second = new()
        run(second, work("second"))
        third = new()  # two alive at once, used alternately
        run(third, work("third"))
        run(second, work("second-again"))
        si.destroy(second)
        run(third, work("third-again"))
        si.destroy(third)
        in_main("main")
    ''')
    check(records, ["first", "second", "third", "second-again", "third-again", "main"])


@pytest.mark.skipif(sys.version_info[:2] == (3, 12), reason=(
    "CPython 3.12(.1) crashes (SIGSEGV in module_dealloc at destroy) after sub-interpreters "
    "ran Argon2 on threads, without the blake2b type: the cffi modules' single-phase state"))
def test_sub_interpreters_hash_on_threads_at_once(tmp_path):
    """Two sub-interpreters, each hashing in a loop on its own thread, with the main one
    hashing meanwhile (large updates release the GIL, so they interleave)."""
    records = run_child(tmp_path, '''
        import threading
        interps = [new(), new()]
        for i, interp in enumerate(interps):  # imported first, so the threads only hash
            run(interp, "import argonishche")
        errors = []

        def hash_in(interp, label):
            try:
                for n in range(5):
                    run(interp, work(f"{label}-{n}"))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=hash_in, args=(interp, f"sub{i}"))
                   for i, interp in enumerate(interps)]
        for thread in threads:
            thread.start()
        import argonishche, hashlib
        for n in range(50):  # the main interpreter hashes meanwhile
            data = bytes([n]) * 4096
            assert argonishche.blake2b(data).digest() == hashlib.blake2b(data).digest()
        for thread in threads:
            thread.join()
        for interp in interps:
            si.destroy(interp)
        assert not errors, errors
        in_main("main")
    ''')
    labels = [r["label"] for r in records]
    assert sorted(labels) == sorted([f"sub{i}-{n}" for i in (0, 1) for n in range(5)] + ["main"])
    check(records, labels)


def test_passwords_hashed_in_a_sub_interpreter_verify_in_the_main_one(tmp_path):
    """Argon2 (the cffi core) works in both, as it did: an encoded hash made in a
    sub-interpreter verifies in the main one after the sub-interpreter is gone."""
    encoded = tmp_path / "encoded"
    records = run_child(tmp_path, '''
        interp = new()
        run(interp, "import argonishche\\n"
                    "hasher = argonishche.PasswordHasher(\\n"
                    "    time_cost=1, memory_cost=256, parallelism=2)\\n"
                    f"with open({ENCODED!r}, 'w') as out:\\n"
                    "    out.write(hasher.hash('correct horse'))\\n")
        si.destroy(interp)
        import argonishche
        hasher = argonishche.PasswordHasher(time_cost=1, memory_cost=256, parallelism=2)
        stored = open(ENCODED).read()
        assert hasher.verify(stored, "correct horse")
        try:
            hasher.verify(stored, "wrong horse")
        except argonishche.VerifyMismatchError:
            pass
        else:
            raise AssertionError("a wrong password verified")
        in_main("main")
    ''', ENCODED=str(encoded))
    check(records, ["main"])
    assert encoded.read_text().startswith("$argon2id$v=19$m=256,t=1,p=2$")


@pytest.mark.skipif(not OWN_GIL, reason="interpreters with their own GIL came with CPython 3.12")
def test_an_interpreter_with_its_own_gil_is_refused_at_import_and_main_keeps_working(tmp_path):
    """The cffi modules are single-phase: CPython refuses them in an interpreter with its own
    GIL, so importing argonishche there is an ImportError; the main interpreter, before and
    after, is unaffected."""
    records = run_child(tmp_path, '''
        in_main("main-before")
        interp = new(own_gil=True)
        try:
            run(interp, "import argonishche")
        except Exception as exc:
            message = str(exc)
        else:
            raise AssertionError("argonishche imported in an interpreter with its own GIL")
        assert "ImportError" in message and "subinterpreters" in message, message
        si.destroy(interp)
        in_main("main-after")
    ''')
    check(records, ["main-before", "main-after"])


#: Run in an interpreter with its own GIL: the type's module alone (the package cannot be
#: imported there), connected by hand; the placeholders are filled in by the child.
TYPE_ALONE = """
import importlib.util, json
spec = importlib.util.spec_from_file_location("argonishche._blake2b_type", MODULE_FILE)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
try:
    module.blake2b(b"x")
except RuntimeError as exc:  # its own module state: not connected in this interpreter yet
    assert "not connected" in str(exc), exc
else:
    raise AssertionError("the module of a new interpreter was connected already")
module.connect(ADDRESSES, lambda backend: (None, TABLE), ValueError, TypeError, OverflowError)
keyed = module.blake2b(key=b"k" * 16, salt=b"s" * 16, person=b"p" * 16)
keyed.update(b"x")
grown = module.blake2b(b"abc", digest_size=32).copy()
grown.update(b"def" * 1000)
with open(RESULTS, "a") as out:
    out.write(json.dumps({"label": "own-gil", "keyed": keyed.hexdigest(),
                          "grown": grown.hexdigest()}) + "\\n")
"""


@pytest.mark.skipif(not OWN_GIL, reason="interpreters with their own GIL came with CPython 3.12")
def test_the_type_itself_runs_in_an_interpreter_with_its_own_gil(tmp_path):
    """The blake2b type's module declares per-interpreter-GIL support (it keeps nothing per
    process): loaded alone in such an interpreter and connected there to the core (whose
    function and kernel table addresses are the same in every interpreter), it hashes as
    hashlib does.  Without the declaration CPython refuses the module there."""
    records = run_child(tmp_path, '''
        from argonishche import _blake2b_type, _core, _registry
        ffi, lib = _core.ffi, _core.lib
        names = ("argonishche_blake2b_init_tree", "argonishche_blake2b_update",
                 "argonishche_blake2b_final", "argonishche_secure_wipe")
        addresses = tuple(int(ffi.cast("uintptr_t", getattr(lib, name))) for name in names)
        table = int(ffi.cast("uintptr_t", _registry.selected_table("blake2b")))
        code = (TYPE_ALONE.replace("MODULE_FILE", repr(_blake2b_type.__file__))
                .replace("ADDRESSES", repr(addresses)).replace("TABLE", str(table))
                .replace("RESULTS", repr(RESULTS)))
        interp = new(own_gil=True)
        run(interp, code)
        si.destroy(interp)
    ''', TYPE_ALONE=TYPE_ALONE)
    want = expected()
    assert records == [{"label": "own-gil", "keyed": want["keyed"], "grown": want["grown"]}]
