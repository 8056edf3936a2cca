"""The first certification of a third-party kernel module, in a child interpreter.

A kernel module that has not been certified on this machine is imported, self-tested and
certified first in a child (``python -P -m argonishche._certify_child``), before the parent
imports it:

* a kernel that dies (SIGILL: instructions this CPU lacks; SIGSEGV, abort) or hangs takes the
  child down, not the process that wanted to hash: the parent marks the backend
  ``certification-failed``, naming the signal or the timeout (``ARGONISHCHE_CERTIFY_TIMEOUT``),
  and carries on with the other backends;
* the child imports argonishche's checks and that one module, and no plugin: code that another
  entry point runs at import (patching ``argonishche._certify``, say) cannot make a wrong kernel
  pass.

The child answers with one line on stdout, :data:`ANSWER` followed by JSON: which stage it
reached, the failures, and the code it checked (:class:`argonishche._certify.Code`), which the
parent then checks it loads itself.  The parent's side is :func:`certify_in_child`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

#: Prefixes the child's answer line (a kernel module may print too).
ANSWER = "argonishche-certification: "
#: Stages the child reports: how far the module got.
PASSED, UNSUPPORTED, LOAD, SELFTEST, CERTIFICATION = (
    "passed", "unsupported-cpu", "load", "selftest", "certification")
#: Variables the child keeps from the parent's environment, besides ARGONISHCHE_* (how the
#: interpreter and the dynamic loader find their files, temporary files, the locale).
KEPT_VARIABLES = ("PATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "SYSTEMROOT", "TMPDIR",
                  "TEMP", "TMP", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONHOME")


class Verdict(NamedTuple):
    """What the child found (or why it did not answer)."""

    stage: str                # PASSED, or the stage that failed, or "died" (no answer)
    failures: list[str]       # one line per failure; for "died", why
    seconds: float            # the child's whole run, as the parent measured it
    selftest_ms: float | None
    cpu: str                  # the child's argonishche._cpu.identity()
    code: Any                 # argonishche._certify.Code it checked, or None
    code_error: str           # why the code could not be identified ("" if it was)
    #: The kernel module file's signature before the child imported it, when the code behind
    #: the table cannot be found on this system (no dladdr): what the parent can still check.
    origin_signature: Any = None


# ---- the child --------------------------------------------------------------------------------


def _check(module_name: str, declared: frozenset[str]) -> dict[str, Any]:
    """Everything the child does; the answer as JSON-ready data."""
    import importlib

    from . import _certify, _cpu, _kernel_table, _selftest
    from .exceptions import ArgonishcheError

    answer: dict[str, Any] = {"cpu": _cpu.identity(), "code": None, "code_error": "",
                              "selftest_ms": None}
    missing = declared - _cpu.features()
    if missing:
        return {**answer, "stage": UNSUPPORTED,
                "failures": [_kernel_table.unsupported_reason(missing)]}
    origin = _certify.module_origin(module_name)
    before = {origin: _certify.signature(origin)} if origin else None
    try:
        module = importlib.import_module(module_name)
        table = _kernel_table.kernel_table(module)
        _kernel_table.check_compiled_for(table, declared)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a load failure
        return {**answer, "stage": LOAD, "failures": [f"kernel module {module_name}: {exc}"]}
    code = _certify.code_of(module, table, before)
    if isinstance(code, str):
        answer["code_error"] = code
        if isinstance(_certify.loaded_files(module, table), str) and origin:  # no dladdr
            now = _certify.signature(origin)
            answer["origin_signature"] = now if before and before[origin] == now else None
    else:
        answer["code"] = code.as_json()
    started = time.perf_counter()
    failures = _selftest.run(table)
    answer["selftest_ms"] = (time.perf_counter() - started) * 1e3
    if failures:
        return {**answer, "stage": SELFTEST, "failures": failures}
    try:
        failures = _certify.failures(table)
    except (ImportError, MemoryError, OSError, ArgonishcheError) as exc:
        failures = [f"certification could not run: {exc}"]
    return {**answer, "stage": CERTIFICATION if failures else PASSED, "failures": failures}


def main(argv: list[str] | None = None) -> int:
    """``python -P -m argonishche._certify_child MODULE [FEATURE,...]``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -P -m argonishche._certify_child MODULE [FEATURE,...]",
              file=sys.stderr)
        return 2
    declared = frozenset(filter(None, (args[1] if len(args) > 1 else "").split(",")))
    answer = _check(args[0], declared)
    sys.stdout.write(ANSWER + json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0


# ---- the parent -------------------------------------------------------------------------------


def child_environment(settings: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: what finds the interpreter's and the module's files (the
    parent's ``sys.path``, explicitly), and the ``ARGONISHCHE_*`` *settings* in force."""
    from ._settings import environment_keeping

    # "" on sys.path is the working directory (python -c): the child's is the same, but -P
    # leaves it out, so name it.
    path = os.pathsep.join(os.path.abspath(p) if p else os.getcwd() for p in sys.path)
    environ = environment_keeping(KEPT_VARIABLES, **settings)
    environ.update(PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    return environ


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _died(why: str, started: float) -> Verdict:
    return Verdict("died", [why], time.perf_counter() - started, None, "", None, "", None)


def _origin_signature(numbers: Any) -> tuple[int, ...] | None:
    return None if numbers is None else tuple(int(n) for n in numbers)


def _kill(child: subprocess.Popen[bytes], posix: bool) -> None:
    """Kill the child and its process group (a kernel module may have started processes of
    its own), and reap it."""
    if posix:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
    child.kill()
    child.communicate()


def certify_in_child(module_name: str, declared: frozenset[str], *,
                     settings: Mapping[str, str], timeout: float) -> Verdict:
    """Run the child on *module_name* (declaring the CPU features *declared*) and read its
    answer; never raises for what the child does."""
    command = [sys.executable, "-P", "-m", "argonishche._certify_child", module_name,
               ",".join(sorted(declared))]
    started = time.perf_counter()
    posix = os.name == "posix"
    try:
        child = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=child_environment(settings), start_new_session=posix,
            creationflags=0 if posix else getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
    except OSError as exc:
        return _died(f"the certification child could not be started: {exc}", started)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(child, posix)
        return _died(f"the certification child did not finish within {timeout:g} s "
                     f"(ARGONISHCHE_CERTIFY_TIMEOUT) and was killed", started)
    except BaseException:
        # KeyboardInterrupt (the child is in a session of its own: Ctrl-C never reaches it) or
        # any other exit: a hanging kernel must not outlive the process that started it.
        _kill(child, posix)
        raise
    if child.returncode < 0:
        return _died(f"the certification child died of {_signal_name(-child.returncode)}",
                     started)
    last_error = (err.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:300]
    if child.returncode != 0:
        return _died(f"the certification child exited with status {child.returncode}"
                     + (f": {last_error}" if last_error else ""), started)
    answers = [line[len(ANSWER):] for line in out.decode("utf-8", "replace").splitlines()
               if line.startswith(ANSWER)]
    try:
        if len(answers) != 1:
            raise ValueError(f"{len(answers)} answer lines")
        data = json.loads(answers[0])
        from ._certify import Code

        code = None if data["code"] is None else Code.from_json(data["code"])
        verdict = Verdict(str(data["stage"]), [str(line) for line in data["failures"]],
                          time.perf_counter() - started,
                          None if data["selftest_ms"] is None else float(data["selftest_ms"]),
                          str(data["cpu"]), code, str(data["code_error"]),
                          _origin_signature(data.get("origin_signature")))
    except (ValueError, TypeError, KeyError, AssertionError) as exc:
        return _died(f"the certification child's answer could not be read ({exc})", started)
    if verdict.stage not in (PASSED, UNSUPPORTED, LOAD, SELFTEST, CERTIFICATION):
        return _died(f"the certification child answered an unknown stage {verdict.stage!r}",
                     started)
    return verdict


if __name__ == "__main__":
    sys.exit(main())
