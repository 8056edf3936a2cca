"""With dask.distributed imported, every public exception still pickles, and one raised in a Dask
task reaches the client with its type, message and attributes intact.

Importing distributed runs ``tblib.pickling_support.install()``, which registers tblib's reducer
in ``copyreg`` for every exception class that exists at that moment, and
``distributed.core.error_message`` registers it again for each exception a task raises.  That
reducer rebuilds most exceptions with ``cls.__new__(cls)``, which ``ArgonishcheMemoryError``
refused; the worker then sent the client a bare ``Exception``.  Each check runs in its own
subprocess with a timeout, because distributed changes pickling for the whole process.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="needs dask.distributed: pip install distributed (tox -e stress installs it)")

TESTS = Path(__file__).resolve().parents[1]

#: Fails loudly if a distributed release stops installing a pickler for exceptions, so that
#: this module cannot go on passing without testing what it says.
ASSERT_TBLIB_INSTALLED = """
import copyreg
from argonishche.exceptions import ArgonishcheMemoryError
assert ArgonishcheMemoryError in copyreg.dispatch_table, "distributed installed no pickler"
"""

IMPORT_ORDERS = {
    # distributed's own install() at import covers the classes argonishche defined already.
    "argonishche-then-distributed": "import argonishche\nimport distributed\n",
    # A Dask worker: distributed first, argonishche when a task needs it; error_message() then
    # installs tblib's reducer for the raised exception's class, as done here for all of them.
    "distributed-then-argonishche": (
        "import distributed\nimport argonishche\n"
        "import tblib.pickling_support\ntblib.pickling_support.install()\n"),
}

CLUSTER_CHECK = """
import json
from distributed import Client, LocalCluster
from test_exceptions_pickle import example_args, public_exceptions, state

def raise_(cls, args):
    raise cls(*args)

cases = {cls.__name__: (raise_, cls, example_args(cls)) for cls in public_exceptions()}
cases["argon2_hash(b'p', b'short')"] = (argonishche.argon2_hash, b"p", b"short")
with LocalCluster(processes=PROCESSES, n_workers=1, threads_per_worker=1,
                  dashboard_address=None) as cluster, Client(cluster, timeout=60) as client:
    futures = {name: client.submit(*case, pure=False) for name, case in cases.items()}
    got = {name: future.exception(timeout=60) for name, future in futures.items()}

expected = {name: state(cls(*args)) for name, (_, cls, args) in list(cases.items())[:-1]}
real = got.pop("argon2_hash(b'p', b'short')")
wrong = {name: repr(state(exc)) for name, exc in got.items() if state(exc) != expected[name]}
if type(real) is not argonishche.ParameterError or "salt" not in str(real):
    wrong["argon2_hash(b'p', b'short')"] = repr(state(real))
print(json.dumps(wrong, indent=1))
raise SystemExit(1 if wrong else 0)
"""


def run(code: str, timeout: float) -> None:
    """Run *code* in a fresh interpreter with tests/ on sys.path; it must exit 0 in time."""
    # support.py (tests/) and test_exceptions_pickle (tests/api/), as the stress conftest does.
    prelude = f"import sys\nsys.path[:0] = [{str(TESTS)!r}, {str(TESTS / 'api')!r}]\n"
    proc = subprocess.run([sys.executable, "-c", prelude + code], cwd=TESTS.parent,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode:
        pytest.fail(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-8000:]}", pytrace=False)


@pytest.mark.parametrize("imports", IMPORT_ORDERS.values(), ids=IMPORT_ORDERS.keys())
def test_pickling_suite_with_distributed_imported(imports):
    """tests/api/test_exceptions_pickle.py, run in a process where distributed changed pickling."""
    run(imports + ASSERT_TBLIB_INSTALLED + textwrap.dedent(f"""
        import pytest
        sys.exit(pytest.main([{str(TESTS / "api" / "test_exceptions_pickle.py")!r},
                              "-q", "-p", "no:cacheprovider"]))
        """), timeout=180)


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_exception_raised_in_a_task_reaches_the_client(processes):
    """One worker (in this process or its own, on 127.0.0.1) raises each public exception and one
    real ParameterError; the client must get each with its type, message and attributes."""
    code = IMPORT_ORDERS["distributed-then-argonishche"] + CLUSTER_CHECK
    run(code.replace("PROCESSES", str(processes)), timeout=240)
