"""The first certification of a third-party kernel module, in a child interpreter.

A kernel module that has not been certified on this machine is imported, self-tested and
certified first in a child interpreter, before the parent imports it:

* a kernel that dies (SIGILL: instructions this CPU lacks; SIGSEGV, abort) or hangs takes the
  child down, not the process that wanted to hash: the parent marks the backend
  ``certification-failed``, naming the signal or the timeout (``ARGONISHCHE_CERTIFY_TIMEOUT``),
  and carries on with the other backends;
* the child imports argonishche's checks and that one module, and no plugin: code that another
  entry point runs at import (patching ``argonishche._trust.certification``, say) cannot make a
  wrong kernel pass.

The child answers with one line on stdout, :data:`ANSWER` followed by JSON: which stage it
reached, the failures, and the code it checked (:class:`argonishche._trust.code_identity.Code`),
which the parent then checks it loads itself.  The parent's side is :func:`certify_in_child`; which
interpreter runs the child, with which flags and environment, and how the child ends with its
parent: :mod:`argonishche._trust.child_launch`.
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


class Verdict(NamedTuple):
    """What the child found (or why it did not answer)."""

    stage: str                # PASSED, or the stage that failed, or "died" (no answer)
    failures: list[str]       # one line per failure; for "died", why
    seconds: float            # the child's whole run, as the parent measured it
    selftest_ms: float | None
    cpu: str                  # the child's argonishche._trust.cpu_gate.identity()
    code: Any                 # argonishche._trust.code_identity.Code it checked, or None
    code_error: str           # why the code could not be identified ("" if it was)
    #: The kernel module file's signature before the child imported it, when the code behind
    #: the table cannot be found on this system (no dladdr): what the parent can still check.
    origin_signature: Any = None
    python: str = ""              # the interpreter that ran the child ("" if none could)
    #: Why the interpreters tried before it could not run the child ("" if none was).
    interpreter_notes: str = ""


# ---- the child --------------------------------------------------------------------------------


def _check(module_name: str, declared: frozenset[str]) -> dict[str, Any]:
    """Everything the child does; the answer as JSON-ready data."""
    import importlib

    from ..exceptions import ArgonishcheError
    from . import certification_checks, code_identity, cpu_gate, kernel_table, self_test

    answer: dict[str, Any] = {"cpu": cpu_gate.identity(), "code": None, "code_error": "",
                              "selftest_ms": None}
    missing = declared - cpu_gate.features()
    if missing:
        return {**answer, "stage": UNSUPPORTED,
                "failures": [kernel_table.unsupported_reason(missing)]}
    origin = code_identity.module_origin(module_name)
    before = {origin: code_identity.signature(origin)} if origin else None
    try:
        module = importlib.import_module(module_name)
        table = kernel_table.kernel_table(module)
        kernel_table.check_compiled_for(table, declared)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a load failure
        return {**answer, "stage": LOAD, "failures": [f"kernel module {module_name}: {exc}"]}
    code = code_identity.code_of(module, table, before)
    if isinstance(code, str):
        answer["code_error"] = code
        if isinstance(code_identity.loaded_files(module, table), str) and origin:  # no dladdr
            now = code_identity.signature(origin)
            answer["origin_signature"] = now if before and before[origin] == now else None
    else:
        answer["code"] = code.as_json()
    started = time.perf_counter()
    failures = self_test.run(table)
    answer["selftest_ms"] = (time.perf_counter() - started) * 1e3
    if failures:
        return {**answer, "stage": SELFTEST, "failures": failures}
    try:
        failures = certification_checks.failures(table)
    except (ImportError, MemoryError, OSError, ArgonishcheError) as exc:
        failures = [f"certification could not run: {exc}"]
    return {**answer, "stage": CERTIFICATION if failures else PASSED, "failures": failures}


#: The child's exit status when its parent is gone.
ORPHANED = 70
#: prctl(2): the signal a Linux process gets when the thread that started it exits.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """End this child when the process *parent* that started it ends, however it ends (SIGKILL
    included), even in a kernel that spins: a child in a session of its own is never sent the
    signals its parent's terminal or service manager sends.

    On Linux the kernel sends SIGKILL (``PR_SET_PDEATHSIG``); the parent's pid, checked after
    that, closes the race of a parent that ended first.  The signal comes when the *thread* that
    started the child ends: that thread waits in ``communicate`` until the child is done or
    killed, so it ends before the child only with the process.  Everywhere, the parent holds the
    write end of this child's stdin, a pipe: its end of file, which the system delivers when the
    parent ends, ends the child."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to load: the pipe still ends the child
            pass
    if os.getppid() != parent:
        os._exit(ORPHANED)

    def exit_at_end_of_file() -> None:
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            return  # no pipe to watch (a stdin closed, not our parent's)
        os._exit(ORPHANED)

    import threading

    threading.Thread(target=exit_at_end_of_file, name="argonishche-parent-watch",
                     daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """``python -m argonishche._trust.certification_child MODULE [FEATURE,...] [PARENT_PID]``
    (the parent
    runs it through :data:`argonishche._trust.child_launch.BOOTSTRAP`, with its pid)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2, 3):
        print("usage: python -P -m argonishche._trust.certification_child MODULE "
              "[FEATURE,...] [PARENT_PID]", file=sys.stderr)
        return 2
    if len(args) == 3:
        die_with_parent(int(args[2]))
    declared = frozenset(filter(None, (args[1] if len(args) > 1 else "").split(",")))
    answer = _check(args[0], declared)
    sys.stdout.write(ANSWER + json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0


# ---- the parent -------------------------------------------------------------------------------


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _died(why: str, started: float, python: str = "") -> Verdict:
    return Verdict("died", [why], time.perf_counter() - started, None, "", None, "", None,
                   python)


def _origin_signature(numbers: Any) -> tuple[int, ...] | None:
    return None if numbers is None else tuple(int(n) for n in numbers)


def certify_in_child(module_name: str, declared: frozenset[str], *,
                     settings: Mapping[str, str], timeout: float) -> Verdict:
    """Run the child on *module_name* (declaring the CPU features *declared*) and read its
    answer; never raises for what the child does.  *settings*: the ``ARGONISHCHE_*`` variables
    in force (``ARGONISHCHE_CERTIFY_PYTHON`` among them names the interpreter)."""
    from .. import _settings
    from . import child_launch as launch

    started = time.perf_counter()
    if _settings.is_certification_child():
        return _died("not certified: this process was started as a certification child, and "
                     "a certification child never starts another one", started)
    posix = os.name == "posix"
    arguments = [module_name, ",".join(sorted(declared))]
    tried = []
    child = None
    for python, origin in launch.candidates(settings.get(launch.SETTING, "").strip() or None):
        why = launch.remembered_unusable(python)
        left = timeout - (time.perf_counter() - started)
        if why is None and left > 0:
            outcome = launch.start(python, origin, arguments, settings, left)
            if isinstance(outcome, launch.Started):
                child = outcome
                break
            why = outcome.why
            if outcome.lasting:
                launch.remember_unusable(python, why)
        tried.append(why or f"{origin} {python}: not tried, the timeout had passed")
    if child is None:
        return _died(launch.no_interpreter_reason(tried), started)
    python, notes = child.python, "; ".join(tried)
    try:
        out, err = child.process.communicate(
            timeout=max(0.0, timeout - (time.perf_counter() - started)))
    except subprocess.TimeoutExpired:
        launch.kill(child.process, posix)
        return _died(f"the certification child did not finish within {timeout:g} s "
                     f"(ARGONISHCHE_CERTIFY_TIMEOUT) and was killed (interpreter {python})",
                     started, python)
    except BaseException:
        # KeyboardInterrupt (the child is in a session of its own: Ctrl-C never reaches it) or
        # any other exit: a hanging kernel must not outlive the process that started it.
        launch.kill(child.process, posix)
        raise
    finally:
        os.close(child.lifeline)
    verdict = _read_answer(child.process, out, err, started, python)
    return verdict._replace(interpreter_notes=notes) if notes else verdict


def _read_answer(child: subprocess.Popen[bytes], out: bytes, err: bytes, started: float,
                 python: str) -> Verdict:
    if child.returncode < 0:
        return _died(f"the certification child died of {_signal_name(-child.returncode)} "
                     f"(interpreter {python})", started, python)
    last_error = (err.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:300]
    if child.returncode != 0:
        return _died(f"the certification child exited with status {child.returncode} "
                     f"(interpreter {python})" + (f": {last_error}" if last_error else ""),
                     started, python)
    answers = [line[len(ANSWER):] for line in out.decode("utf-8", "replace").splitlines()
               if line.startswith(ANSWER)]
    try:
        if len(answers) != 1:
            raise ValueError(f"{len(answers)} answer lines")
        data = json.loads(answers[0])
        from .code_identity import Code

        code = None if data["code"] is None else Code.from_json(data["code"])
        verdict = Verdict(str(data["stage"]), [str(line) for line in data["failures"]],
                          time.perf_counter() - started,
                          None if data["selftest_ms"] is None else float(data["selftest_ms"]),
                          str(data["cpu"]), code, str(data["code_error"]),
                          _origin_signature(data.get("origin_signature")), python)
    except (ValueError, TypeError, KeyError, AssertionError) as exc:
        return _died(f"the certification child's answer could not be read ({exc}; "
                     f"interpreter {python})",
                     started, python)
    if verdict.stage not in (PASSED, UNSUPPORTED, LOAD, SELFTEST, CERTIFICATION):
        return _died(f"the certification child answered an unknown stage {verdict.stage!r} "
                     f"(interpreter {python})", started, python)
    return verdict


if __name__ == "__main__":
    sys.exit(main())
