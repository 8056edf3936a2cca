"""CPython's own blake2b tests (Lib/test/test_hashlib.py) run against argonishche.blake2b, once per
backend.

    python tools/cpython_hashlib/run.py [--backend NAME]... [--test-hashlib PATH] [-v]

Nothing of CPython's is copied here: its test file is the one installed on the machine, Debian's
``libpython3.11-testsuite`` package's /usr/lib/python3.11/test/test_hashlib.py when present and
this is Python 3.11, else the running interpreter's own ``test.test_hashlib`` (pyenv and
python.org builds install it), or ``--test-hashlib PATH``.  Its helpers come from the running
interpreter's ``test.support``.  The differences below are hashlib 3.11's.

What the harness does, in a fresh interpreter per backend (``ARGONISHCHE_BACKEND=<name>``, so
every object the tests make hashes with that backend's kernels):

* points every way the tests reach BLAKE2b at ``argonishche.blake2b``: ``hashlib.blake2b``, and
  the constructor cache behind ``hashlib.new("blake2b")``, ``hashlib.file_digest(f, "blake2b")``
  and ``hashlib.__get_builtin_constructor("blake2b")``;
* supplies the known answers that ``test_blake2b_vectors`` downloads at run time
  (``read_vectors("blake2b")``, http://www.pythontest.net/hashlib/blake2b.txt) from
  ``blake2b-kat.txt`` beside this file: the BLAKE2 reference KAT, provenance in its header;
* selects the tests of ``HashLibTestCase`` that are about BLAKE2b: every one whose name or body
  mentions blake2 (the blake2s-only ones left out) or that runs every constructor under test
  (``hash_constructors``, ``constructors_to_test``), with only blake2b and blake2s under test
  (blake2s stays CPython's: two tests check both);
* runs them with unittest, the deliberate differences (DIFFERENCES) handled as said there.

The backends: every registered one (the built-ins and installed plugins); one this machine cannot
run is skipped with the registry's reason, unless ARGONISHCHE_REQUIRE_BACKENDS names it.  Exit
status 0 only if every backend run passed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import os
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
KAT = HERE / "blake2b-kat.txt"
DEBIAN_TEST_HASHLIB = Path("/usr/lib/python3.11/test/test_hashlib.py")

#: The deliberate differences from hashlib.blake2b that CPython's tests meet, each with the
#: AssertionError text it causes in the test as CPython wrote it.  The test runs twice: as written,
#: where it must fail with exactly that text (an expected failure: any other failure is a
#: failure), and with that one assertion replaced by a check of argonishche's behaviour, where it
#: must pass (so everything else the test checks is still checked).
DIFFERENCES = {
    "test_blake2b": (
        "blake2b(data=b'') is accepted: argonishche.blake2b takes data as a keyword too "
        "(hashlib 3.11's is positional-only), and hashes it as blake2b(b'')",
        "TypeError not raised by blake2b"),
}


def selected_tests(case: type) -> list[str]:
    """The names of *case*'s tests about BLAKE2b (see the module docstring)."""
    names = []
    for name in sorted(dir(case)):
        if not name.startswith("test") or "blake2s" in name:
            continue
        source = inspect.getsource(getattr(case, name))
        if "blake2" in name or any(word in source for word in
                                   ("blake2", "hash_constructors", "constructors_to_test")):
            names.append(name)
    return names


def kat_lines() -> list[str]:
    """blake2b-kat.txt as CPython's blake2b.txt lines: message hex, key hex, digest hex."""
    lines = []
    for line in KAT.read_text(encoding="ascii").splitlines():
        if not line or line.startswith("#"):
            continue
        n, k, digest = line.split(",")
        lines.append(f"{bytes(range(int(n))).hex()},{bytes(range(int(k))).hex()},{digest}")
    return lines


def load_test_hashlib(path: Path | None):
    """CPython's test_hashlib module, as ``test.test_hashlib``."""
    import test  # the running interpreter's test package: test.support comes from it

    if path is None and DEBIAN_TEST_HASHLIB.exists() and sys.version_info[:2] == (3, 11):
        path = DEBIAN_TEST_HASHLIB
    if path is None:
        return importlib.import_module("test.test_hashlib")
    spec = importlib.util.spec_from_file_location("test.test_hashlib", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["test.test_hashlib"] = module
    test.test_hashlib = module  # type: ignore[attr-defined]
    spec.loader.exec_module(module)
    return module


def child(backend: str, path: Path | None, verbosity: int) -> int:
    """Run the selected tests with argonishche.blake2b in hashlib's place (this process has
    ARGONISHCHE_BACKEND=*backend*)."""
    import hashlib

    import argonishche

    selected = argonishche.selected_backend("blake2b")
    if selected != backend:
        print(f"FAIL {backend}: argonishche selected {selected!r}")
        return 1
    ours = argonishche.blake2b
    hashlib.blake2b = ours  # type: ignore[misc]
    cache = getattr(hashlib, "__builtin_constructor_cache")
    cache["blake2b"] = ours
    assert type(hashlib.new("blake2b")) is ours

    module = load_test_hashlib(path)
    kat = kat_lines()

    def read_vectors(hash_name: str):
        if hash_name != "blake2b":
            raise unittest.SkipTest(f"no vectors supplied for {hash_name}")
        for line in kat:
            parts: list = line.split(",")
            parts[0] = bytes.fromhex(parts[0])
            yield parts

    module.read_vectors = read_vectors
    base = module.HashLibTestCase
    unexpected: list[str] = []

    class BLAKE2bUnderTest(base):  # type: ignore[misc, valid-type]
        """HashLibTestCase with only blake2b (ours) and blake2s (CPython's) under test, and the
        documented differences' assertions replaced by checks of what argonishche does."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.constructors_to_test = {name: constructors for name, constructors
                                         in self.constructors_to_test.items()
                                         if name in ("blake2b", "blake2s")}
            # hashlib.blake2b and __get_builtin_constructor("blake2b") are ours (one entry of
            # the set), hashlib.new("blake2b") the other.
            assert ours in self.constructors_to_test["blake2b"]
            assert len(self.constructors_to_test["blake2b"]) == 2

        def assertRaises(self, expected, *args, **kwargs):  # noqa: N802 - unittest's name
            if (expected is TypeError and args and args[0] is ours and args[1:] == ()
                    and kwargs == {"data": b""}):
                # DIFFERENCES["test_blake2b"]: data= is a keyword of ours.
                self.assertEqual(ours(data=b"").digest(), ours(b"").digest())
                return None
            return super().assertRaises(expected, *args, **kwargs)

    class AsCPythonWroteIt(base):  # type: ignore[misc, valid-type]
        """The tests with a documented difference, unchanged: each must fail, with its text."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.constructors_to_test = {name: constructors for name, constructors
                                         in self.constructors_to_test.items()
                                         if name in ("blake2b", "blake2s")}

    for name, (why, text) in DIFFERENCES.items():
        def as_written(self, _name=name, _text=text):
            try:
                getattr(base, _name)(self)
            except AssertionError as exc:
                if _text not in str(exc):
                    unexpected.append(f"{_name} failed, but not as documented: {exc}")
                raise
        as_written.__doc__ = f"documented difference: {why}"
        setattr(AsCPythonWroteIt, name, unittest.expectedFailure(as_written))

    names = selected_tests(base)
    suite = unittest.TestSuite([BLAKE2bUnderTest(name) for name in names]
                               + [AsCPythonWroteIt(name) for name in DIFFERENCES])
    print(f"{backend}: {len(names)} tests of {module.__file__} against {ours!r} "
          f"(backend {selected}), {len(kat)} KAT vectors from {KAT.name}; "
          f"{len(DIFFERENCES)} also run as written, as expected failures", flush=True)
    result = unittest.TextTestRunner(verbosity=verbosity, stream=sys.stdout).run(suite)
    for line in unexpected:
        print(f"FAIL {line}")
    ok = result.wasSuccessful() and not unexpected and result.testsRun == len(suite._tests)
    print(f"{'ok' if ok else 'FAIL'} {backend}: {result.testsRun} run, "
          f"{len(result.failures)} failed, {len(result.errors)} errors, "
          f"{len(result.skipped)} skipped, {len(result.expectedFailures)} expected failures, "
          f"{len(result.unexpectedSuccesses)} unexpected successes", flush=True)
    return 0 if ok else 1


def usable_backends(wanted: list[str]) -> tuple[list[str], list[str]]:
    """(backends to run, lines for those skipped): every registered backend unless *wanted*."""
    import argonishche

    states = {b.name: b for b in argonishche.backends()}
    required = {name.strip() for name in
                os.environ.get("ARGONISHCHE_REQUIRE_BACKENDS", "").split(",") if name.strip()}
    run, skipped = [], []
    for name in wanted or list(states):
        info = states.get(name)
        if info is not None and info.state in ("selected", "available"):
            run.append(name)
            continue
        why = "not registered" if info is None else f"{info.state}: {info.reason}"
        if name in required:
            run.append(name)  # fails in the child, loudly
        else:
            skipped.append(f"skip {name} ({why})")
    return run, skipped


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", default=[],
                        help="a backend to run on (repeatable; default: every registered one)")
    parser.add_argument("--test-hashlib", type=Path, default=None,
                        help=f"CPython's test_hashlib.py (default: {DEBIAN_TEST_HASHLIB} if "
                             "present, else the interpreter's test.test_hashlib)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    args = parser.parse_args(argv)
    verbosity = 2 if args.verbose else 1
    if args.child:
        return child(args.child, args.test_hashlib, verbosity)

    run, skipped = usable_backends(args.backend)
    for line in skipped:
        print(line)
    if not run:
        print("FAIL: no backend to run CPython's tests on")
        return 1
    failed = []
    for name in run:
        env = {k: v for k, v in os.environ.items() if k != "ARGONISHCHE_BACKEND"}
        env["ARGONISHCHE_BACKEND"] = name
        command = [sys.executable, str(Path(__file__).resolve()), "--child", name,
                   *(["--test-hashlib", str(args.test_hashlib)] if args.test_hashlib else []),
                   *(["-v"] if args.verbose else [])]
        if subprocess.run(command, env=env, check=False).returncode != 0:
            failed.append(name)
    print(f"CPython's blake2b tests: {len(run) - len(failed)} of {len(run)} backends passed"
          + (f"; failed on {', '.join(failed)}" if failed else "")
          + (f"; {len(skipped)} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
