"""Certification: a kernel module's code is trusted once it passed the checks, remembered per code.

:func:`certify` gives the remembered outcome for the code behind a kernel table (keyed by
:mod:`argonishche._trust.code_identity`) or runs :mod:`argonishche._trust.certification_checks`
and remembers the outcome in the per-user record store.  A record counts only for the
argonishche version and kernel ABI that wrote it (a newer version may check more) and the CPU it
was made on (a home directory shared over NFS).  A directory that cannot be written means "not
remembered", never an error.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, NamedTuple

from .._core import lib
from .._version import __version__
from ..exceptions import ArgonishcheError
from . import certification_checks, record_store
from .code_identity import Code, code_of, digest, hash_file, module_origin

if TYPE_CHECKING:
    from types import ModuleType

    from .._core import CData

#: The records' directory under the user's cache directory (:mod:`argonishche._trust.record_store`).
RECORD_KIND = "certified"


class CertificationResult(NamedTuple):
    """The outcome of :func:`certify` (a NamedTuple: a dataclass costs more to import)."""

    passed: bool
    failures: list[str]
    cached: bool     # remembered from an earlier certification of the same code: nothing ran
    seconds: float   # what this call took (a cached result: the lookup)


class Recalled(NamedTuple):
    """A record valid for the code now at its files' paths (see :func:`recall`)."""

    passed: bool
    failures: list[str]
    stage: str       # "selftest" or "certification": which check failed
    code: Code       # as hashed now, before the module is imported


#: Set by ``argonishche selftest --recertify`` before the registry is built: no record is read,
#: so every non-built-in module is certified again in a child, and its record rewritten.
ignore_records = False


def cache_directory() -> str | None:
    """Where records live: ``<records home>/certified`` (see
    :func:`argonishche._settings.records_home`); None without one."""
    return record_store.directory(RECORD_KIND)


def record_path(module_name: str, origin: str | None, cpu: str | None = None) -> str | None:
    """Where the record of the kernel module *module_name* loaded from *origin* is, on this
    CPU (*cpu*: its identity, if known), for this argonishche and ABI (None: no cache
    directory, or no file to key on)."""
    from . import cpu_gate

    directory = cache_directory()
    if directory is None or origin is None:
        return None
    slot = "\0".join((module_name, origin, cpu or cpu_gate.identity(), __version__,
                      str(lib.ARGONISHCHE_KERNEL_ABI)))
    return os.path.join(directory, digest([slot.encode()]))


def _valid_fields(fields: dict[str, list[str]] | None, module_name: str, cpu: str) -> bool:
    return (fields is not None and fields.get("module") == [module_name]
            and fields.get("argonishche") == [__version__]
            and fields.get("kernel_abi") == [str(lib.ARGONISHCHE_KERNEL_ABI)]
            and fields.get("cpu") == [cpu]
            and fields.get("passed") in (["yes"], ["no"]) and len(fields.get("key", [])) == 1)


def recall(module_name: str, origin: str | None) -> Recalled | None:
    """The record for the kernel module *module_name* (loaded from *origin*), if it is valid for
    the files it names as they are now: each is hashed (and stat'ed, so that the module can be
    checked after it is imported to have loaded them unchanged).  Nothing is imported."""
    from . import cpu_gate

    cpu = cpu_gate.identity()  # once: it takes a quarter of a millisecond
    path = record_path(module_name, origin, cpu)
    fields = None if path is None or ignore_records else record_store.read(path)
    if fields is None or not _valid_fields(fields, module_name, cpu):
        return None
    files = []
    for line in fields.get("code", []):
        file_digest, _, file = line.partition(" ")
        hashed = hash_file(file)
        if hashed is None or hashed.blake2b != file_digest:
            return None
        files.append(hashed)
    try:
        offsets = tuple(int(n) for n in fields.get("offsets", [""])[0].split())
    except ValueError:
        return None
    code = Code(tuple(files), offsets)
    if not files or code.key(cpu) != fields["key"][0]:
        return None
    return Recalled(fields["passed"] == ["yes"], fields.get("failure", []),
                    fields.get("stage", ["certification"])[0], code)


def forget(module_name: str, origin: str | None) -> None:
    """Delete the record for *module_name* (it named code that is not what loads)."""
    path = record_path(module_name, origin)
    if path is not None:
        record_store.remove(path)


def remember(module_name: str, origin: str | None, code: Code, *, passed: bool,
             failures: list[str], seconds: float, stage: str = "certification") -> str:
    """Write the record of *code*'s outcome: "", or why it is not remembered (no cache
    directory, or the write failed: :data:`argonishche._trust.record_store.unwritten` notes it)."""
    from . import cpu_gate

    cpu = cpu_gate.identity()
    path = record_path(module_name, origin, cpu)
    if path is None:
        return record_store.writable_directory(RECORD_KIND)[1] or "no file to key the record on"
    return record_store.write(path, [
        ("key", code.key(cpu)), ("passed", "yes" if passed else "no"), ("stage", stage),
        ("date", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
        ("argonishche", __version__), ("kernel_abi", str(lib.ARGONISHCHE_KERNEL_ABI)),
        ("cpu", cpu), ("module", module_name), ("file", origin or "?"),
        ("offsets", " ".join(map(str, code.offsets))),
        *(("code", f"{f.blake2b} {f.path}") for f in code.files),
        ("seconds", f"{seconds:.3f}"), *(("failure", line) for line in failures)])


def _in_process_code(module: ModuleType, table: CData) -> tuple[str, str | None, Code | None]:
    name = str(getattr(module, "__name__", "?"))
    origin = module_origin(name) if name in sys.modules else None
    file = getattr(module, "__file__", None)
    if origin is None and file:
        origin = os.path.normpath(os.path.abspath(str(file)))
    code = code_of(module, table)
    return name, origin, code if isinstance(code, Code) else None


def remember_failure(module: ModuleType, table: CData, reasons: list[str]) -> None:
    """Record that the code behind *table* gave wrong results (the witness caught it), so that
    new processes refuse it until it is certified again (``argonishche selftest --full``)."""
    name, origin, code = _in_process_code(module, table)
    if code is not None:
        remember(name, origin, code, passed=False, failures=list(reasons), seconds=0.0)


def _recall_code(name: str, origin: str | None, code: Code) -> tuple[bool, list[str]] | None:
    from . import cpu_gate

    cpu = cpu_gate.identity()
    path = record_path(name, origin, cpu)
    fields = None if path is None or ignore_records else record_store.read(path)
    if (fields is None or not _valid_fields(fields, name, cpu)
            or fields["key"] != [code.key(cpu)]):
        return None
    return fields["passed"] == ["yes"], fields.get("failure", [])


def is_certified(module: ModuleType, table: CData | None = None) -> bool:
    """Whether the code behind *module*'s kernel table (*table*, default its own) passed a
    certification remembered here (a lookup: nothing is run)."""
    if table is None:
        from .kernel_table import kernel_table

        table = kernel_table(module)
    name, origin, code = _in_process_code(module, table)
    recalled = None if code is None else _recall_code(name, origin, code)
    return recalled is not None and recalled[0]


def certify(module: ModuleType, table: CData, *, reference: CData | None = None,
            force: bool = False) -> CertificationResult:
    """Certify the kernel module *module*, whose kernel table is *table*, in this process: the
    remembered outcome for its code if there is one (unless *force*), else run :func:`failures`
    and remember it.  (The registry certifies a third-party module in a child interpreter
    first: see :mod:`argonishche._trust.certification_child`.)

    Never raises for a wrong kernel.  A check that cannot run (ref's module missing, no memory)
    is a failure that is not remembered.

    :param reference: ref's kernel table (default: imported from argonishche_backends._ref).
    """
    started = time.perf_counter()
    name, origin, code = _in_process_code(module, table)
    if not force and code is not None:
        recalled = _recall_code(name, origin, code)
        if recalled is not None:
            return CertificationResult(recalled[0], recalled[1], True,
                                       time.perf_counter() - started)
    try:
        found = certification_checks.failures(table, reference)
    except (ImportError, MemoryError, OSError, ArgonishcheError) as exc:
        return CertificationResult(False, [f"certification could not run: {exc}"], False,
                                   time.perf_counter() - started)
    result = CertificationResult(not found, found, False, time.perf_counter() - started)
    if code is not None:
        remember(name, origin, code, passed=result.passed, failures=found,
                 seconds=result.seconds)
    return result
