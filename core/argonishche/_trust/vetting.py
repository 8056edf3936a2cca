"""The checks a registered backend passes before it may be selected, in the only safe order.

1. The CPU gate: every feature the descriptor declares is usable here.  Before it passes, the
   kernel module is not even imported: on a CPU without the instructions, running them is SIGILL,
   not an exception.
2. The kernel module loads and its table speaks this core's kernel ABI, with the table size it
   expects.
3. The module was compiled for no more than the descriptor declares (the table records the
   compiler target; :mod:`argonishche._features` maps it back to feature names).  Otherwise step
   1 vouched for less than the kernels use.
4. The quick self-test: known answers through the same C driver that hashes for users, and the
   kernels called where the reported bugs showed (far references, long runs of blocks).
5. For a backend that is not argonishche's own: the certification
   (:mod:`argonishche._trust.certification`, differential against ``ref`` at sizes the self-test
   cannot afford), run the first time its code is seen on this machine and remembered by the
   BLAKE2b of that code and this CPU's identity.  A third-party backend is never used
   uncertified, and cannot be certified without a usable ``ref`` to compare with.

For a third-party backend, steps 2 to 5 run first in a child interpreter
(:mod:`argonishche._trust.certification_child`), before this process imports the kernel module:
a kernel that crashes or hangs costs that backend, not the process.  A valid record skips the
child; either way this process then checks that the code it loaded is the code that was
certified.

A failure sets the entry's state and reason and warns; it never raises.
"""

from __future__ import annotations

import importlib
import sys
import time

from .._discovery import (
    AVAILABLE,
    CERTIFICATION_FAILED,
    LOAD_FAILED,
    SELFTEST_FAILED,
    UNSUPPORTED_CPU,
    BackendEntry,
)
from .._warn import warn
from . import cpu_gate, record_store, self_test
from .kernel_table import (  # noqa: F401 - re-exported: the checks' public helpers
    TABLE_TYPE,
    check_compiled_for,
    compiled_for,
    kernel_table,
    unsupported_reason,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

    from .._core import CData
    from .._settings import Settings


def check(entry: BackendEntry) -> None:
    """Run the checks on *entry*; on success ``entry.table`` is set and the state unchanged.

    A third-party backend gets the CPU gate only: :func:`certify` does the rest, child first."""
    backend = entry.backend
    missing = backend.cpu_features - cpu_gate.features()
    if missing:
        entry.state = UNSUPPORTED_CPU
        entry.reason = unsupported_reason(missing)
        return
    if not entry.builtin:
        return
    table = _load(entry)
    if table is not None and _selftest_passed(entry, table):
        entry.validation = "self-test"
        entry.table = table


def _load(entry: BackendEntry) -> CData | None:
    """Import *entry*'s kernel module and check its table; None (and the entry failed) if not."""
    backend = entry.backend
    try:
        entry.module = importlib.import_module(backend.kernel_module)
        table = kernel_table(entry.module)
        check_compiled_for(table, backend.cpu_features)
    except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
        _fail(entry, LOAD_FAILED, f"kernel module {backend.kernel_module}: {exc}", "is not used")
        return None
    return table


def _selftest_passed(entry: BackendEntry, table: CData) -> bool:
    started = time.perf_counter()
    failures = self_test.run(table)
    entry.selftest_ms = (time.perf_counter() - started) * 1e3
    if failures:
        _fail(entry, SELFTEST_FAILED, "wrong result for " + "; ".join(failures),
              "failed its self-test and is excluded")
    return not failures


def _fail(entry: BackendEntry, state: str, reason: str, what: str) -> None:
    entry.state, entry.reason, entry.table = state, reason, None
    _warn(entry, what)


def needs_certification(entry: BackendEntry) -> bool:
    """Whether :func:`certify` is still to run on *entry* (third-party, past the CPU gate)."""
    return not entry.builtin and entry.state == AVAILABLE and entry.table is None


def certify(entry: BackendEntry, reference: CData | None, settings: Settings | None = None,
            *, force: bool = False) -> None:
    """Certify a third-party *entry* that passed :func:`check`'s CPU gate against ref's table
    *reference* (None: ref is not usable here, so nothing can vouch for the entry), then load
    it.  *settings*: the registry's (the child's ``ARGONISHCHE_*`` and its timeout); *force*:
    certify again even if a record says it passed or failed (``selftest --full``)."""
    if reference is None:
        _fail(entry, CERTIFICATION_FAILED, "not certified: the ref backend, which a third-party "
              "backend is compared with, is not usable here", "is not used")
        return
    from . import (
        certification,  # only with third-party backends: costly to import
        code_identity,
    )

    name = entry.backend.kernel_module
    if name in sys.modules:  # imported already (by its plugin): check it before anything runs
        if _load(entry) is None:
            return
    origin = code_identity.module_origin(name)
    recalled = None if force else certification.recall(name, origin)
    if recalled is not None and not recalled.passed:
        _refuse(entry, recalled.stage, recalled.failures, " (remembered from an earlier run)")
        return
    expected, seconds, verdict, by = None, 0.0, None, ""
    started = time.perf_counter()
    if recalled is not None:
        expected = recalled.code
    else:
        verdict = _child(entry, settings)
        if verdict is None:
            return
        expected, seconds = verdict.code, verdict.seconds
        if verdict.python != sys.executable or verdict.interpreter_notes:
            by = ", interpreter " + verdict.python + (
                f" ({verdict.interpreter_notes})" if verdict.interpreter_notes else "")
    table = _load(entry)
    if table is None:
        return
    if expected is not None:
        why = code_identity.verify_loaded(entry.module, table, expected)
    elif verdict is not None and verdict.origin_signature is not None and (
            verdict.origin_signature == code_identity.signature(origin or "")):
        why = ""  # no dladdr here: the module's file, unchanged, is all that can be checked
    else:
        why = ("the code certified cannot be identified"
               + (f" ({verdict.code_error})" if verdict is not None else ""))
    if why and recalled is not None:  # the record named other code: certify what loaded
        certification.forget(name, origin)
        certify(entry, reference, settings, force=True)
        return
    if why:
        _fail(entry, CERTIFICATION_FAILED, f"not used: {why}; a new process certifies it again",
              "is not used")
        return
    if not _selftest_passed(entry, table):
        return
    if recalled is None:
        entry.validation = f"self-test, certified now in a child process ({seconds:.2f} s{by})"
        why_not = ("no record without the code's identity" if expected is None else
                   certification.remember(name, origin, expected, passed=True, failures=[],
                                     seconds=seconds))
        if why_not:  # every process pays the child again: say so, and how much
            paid = time.perf_counter() - started
            record_store.not_remembered[f"certification of {name}"] = (paid, why_not)
            entry.validation += (f", not remembered: each process certifies it again "
                                 f"({paid:.2f} s; info's Records say why)")
    else:
        entry.validation = "self-test, certified (remembered from an earlier run)"
    entry.table = table


def _child(entry: BackendEntry, settings: Settings | None) -> Any:
    """Certify *entry* in a child interpreter: its verdict if it passed, else None (the entry
    failed, and a wrong result is remembered for its code)."""
    from .. import _settings
    from . import certification, certification_child, code_identity

    settings = _settings.current() if settings is None else settings
    name = entry.backend.kernel_module
    verdict = certification_child.certify_in_child(name, entry.backend.cpu_features,
                                              settings=settings.given,
                                              timeout=settings.certify_timeout)
    if verdict.stage == certification_child.PASSED and verdict.cpu != cpu_gate.identity():
        _fail(entry, CERTIFICATION_FAILED, f"not certified: the certification child ran on "
              f"another CPU ({verdict.cpu}) than this process ({cpu_gate.identity()})",
              "is not used")
        return None
    if verdict.stage == certification_child.PASSED:
        return verdict
    if verdict.stage == certification_child.UNSUPPORTED:
        entry.state, entry.reason = UNSUPPORTED_CPU, verdict.failures[0]
    elif verdict.stage == certification_child.LOAD:
        _fail(entry, LOAD_FAILED, verdict.failures[0], "is not used")
    elif verdict.stage == "died":
        _fail(entry, CERTIFICATION_FAILED, verdict.failures[0], "is not used")
    else:
        _refuse(entry, verdict.stage, verdict.failures, "")
        if verdict.code is not None and verdict.cpu == cpu_gate.identity():
            certification.remember(name, code_identity.module_origin(name), verdict.code,
                                   passed=False, failures=verdict.failures,
                                   seconds=verdict.seconds, stage=verdict.stage)
    return None


def _refuse(entry: BackendEntry, stage: str, failures: list[str], remembered: str) -> None:
    if stage == "selftest":
        _fail(entry, SELFTEST_FAILED, "wrong result for " + "; ".join(failures) + remembered,
              "failed its self-test and is excluded")
    else:
        _fail(entry, CERTIFICATION_FAILED, "certification found wrong results: "
              + "; ".join(failures) + remembered, "failed its certification and is excluded")


def _warn(entry: BackendEntry, what: str) -> None:
    warn(f"argonishche: backend {entry.name!r} from {entry.distribution} {what}: "
                  f"{entry.reason}")
