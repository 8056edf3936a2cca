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
5. For a backend that is not argonishche's own: the certification (:mod:`argonishche._certify`,
   differential against ``ref`` at sizes the self-test cannot afford), run the first time a
   module file is seen on this machine and remembered by its SHA-256.  A third-party backend is
   never used uncertified, and cannot be certified without a usable ``ref`` to compare with.

A failure sets the entry's state and reason and warns; it never raises.
"""

from __future__ import annotations

import importlib
import time
from typing import TYPE_CHECKING

from . import _cpu, _features, _selftest
from ._core import ffi, lib
from ._warn import warn
from ._discovery import (
    CERTIFICATION_FAILED,
    LOAD_FAILED,
    SELFTEST_FAILED,
    UNSUPPORTED_CPU,
    BackendEntry,
)
from .exceptions import BackendError

if TYPE_CHECKING:
    from types import ModuleType

    from ._core import CData

TABLE_TYPE = "const argonishche_kernel_table *"


def check(entry: BackendEntry) -> None:
    """Run the checks on *entry*; on success ``entry.table`` is set and the state unchanged."""
    backend = entry.backend
    missing = backend.cpu_features - _cpu.features()
    if missing:
        entry.state = UNSUPPORTED_CPU
        entry.reason = unsupported_reason(missing)
        return
    try:
        entry.module = importlib.import_module(backend.kernel_module)
        table = kernel_table(entry.module)
        check_compiled_for(table, backend.cpu_features)
    except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
        entry.state = LOAD_FAILED
        entry.reason = f"kernel module {backend.kernel_module}: {exc}"
        _warn(entry, "is not used")
        return
    started = time.perf_counter()
    failures = _selftest.run(table)
    entry.selftest_ms = (time.perf_counter() - started) * 1e3
    if failures:
        entry.state = SELFTEST_FAILED
        entry.reason = "wrong result for " + "; ".join(failures)
        _warn(entry, "failed its self-test and is excluded")
        return
    entry.validation = "self-test"
    entry.table = table


def unsupported_reason(missing: frozenset[str]) -> str:
    """Why a backend needing the *missing* features cannot run here."""
    reason = f"this CPU lacks {', '.join(sorted(missing))}"
    foreign = sorted({_features.BY_NAME[name].arch for name in missing} - {_cpu._machine()})
    if foreign:  # another architecture's features: no CPU of this one has them
        reason += f" ({', '.join(foreign)} features; this machine is {_cpu._machine()})"
    return reason


def certify(entry: BackendEntry, reference: CData | None) -> None:
    """Certify a third-party *entry* that passed :func:`check` against ref's table *reference*
    (None: ref is not usable here, so nothing can vouch for the entry)."""
    if reference is None:
        entry.state, entry.table = CERTIFICATION_FAILED, None
        entry.reason = ("not certified: the ref backend, which a third-party backend is "
                        "compared with, is not usable here")
        _warn(entry, "is not used")
        return
    from . import _certify  # only with third-party backends: it costs ~2 ms to import

    result = _certify.certify(entry.module, entry.table, reference=reference)
    if not result.passed:
        entry.state, entry.table = CERTIFICATION_FAILED, None
        entry.reason = "certification found wrong results: " + "; ".join(result.failures)
        _warn(entry, "failed its certification and is excluded")
        return
    entry.validation = ("self-test, certified (remembered from an earlier run)" if result.cached
                        else f"self-test, certified now ({result.seconds:.2f} s)")


def kernel_table(module: ModuleType) -> CData:
    """The module's kernel table as a core cdata pointer, after checking its ABI and size."""
    built_for = getattr(module.lib, "ARGONISHCHE_KERNEL_ABI", None)
    if built_for != lib.ARGONISHCHE_KERNEL_ABI:
        raise BackendError(f"built for kernel ABI {built_for}, this argonishche speaks "
                           f"ABI {lib.ARGONISHCHE_KERNEL_ABI}: reinstall the plugin")
    address = int(module.ffi.cast("uintptr_t", module.lib.argonishche_kernels()))
    if address == 0:
        raise BackendError("argonishche_kernels() returned NULL")
    table = ffi.cast(TABLE_TYPE, address)
    expected_size = ffi.sizeof("argonishche_kernel_table")
    if table.abi_version != lib.ARGONISHCHE_KERNEL_ABI or table.table_size != expected_size:
        raise BackendError(f"kernel table says ABI {table.abi_version}, size "
                           f"{table.table_size}; expected ABI {lib.ARGONISHCHE_KERNEL_ABI}, "
                           f"size {expected_size}")
    # Calling a NULL kernel is a crash, not an exception: refuse the table before any call.
    missing = [name for name in ("blake2b_compress", "argon2_fill_block", "compiled_for")
               if getattr(table, name) == ffi.NULL]
    if missing:
        raise BackendError(f"kernel table has NULL {', '.join(missing)}")
    return table


def compiled_for(table: CData) -> str:
    """The compiler target the table's kernels were compiled for (``""``: baseline)."""
    if table.compiled_for == ffi.NULL:
        raise BackendError("kernel table has no compiled_for string")
    return ffi.string(table.compiled_for).decode("ascii", "replace")


def check_compiled_for(table: CData, declared: frozenset[str]) -> None:
    """Refuse kernels compiled for features beyond *declared* (and what those imply)."""
    target = compiled_for(table)
    try:
        used = _features.from_compiler_target(target)
    except ValueError as exc:
        raise BackendError(f"{exc}: the CPU gate cannot vouch for it") from None
    beyond = used - _features.closure(declared)
    if beyond:
        raise BackendError(
            f"compiled for {target!r}, which uses {', '.join(sorted(beyond))} beyond the "
            f"declared cpu_features ({', '.join(sorted(declared)) or 'none'}): the CPU gate "
            f"would let it run where those instructions fault")


def _warn(entry: BackendEntry, what: str) -> None:
    warn(f"argonishche: backend {entry.name!r} from {entry.distribution} {what}: "
                  f"{entry.reason}")
