"""A kernel module's table, checked before any kernel in it is called.

Used by the registry's checks (:mod:`argonishche._trust.vetting`) and by the certification
child (:mod:`argonishche._trust.certification_child`), which imports only what certifying needs:
this module sits below both.
"""

from __future__ import annotations


from .. import _features
from .._core import ffi, lib
from ..exceptions import BackendError
from . import cpu_gate

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from types import ModuleType

    from .._core import CData

TABLE_TYPE = "const argonishche_kernel_table *"


def unsupported_reason(missing: frozenset[str]) -> str:
    """Why a backend needing the *missing* features cannot run here."""
    reason = f"this CPU lacks {', '.join(sorted(missing))}"
    foreign = sorted({_features.BY_NAME[name].arch for name in missing} - {cpu_gate._machine()})
    if foreign:  # another architecture's features: no CPU of this one has them
        reason += f" ({', '.join(foreign)} features; this machine is {cpu_gate._machine()})"
    return reason


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


#: The module whose kernels the differential checks compare with.
REFERENCE_MODULE = "argonishche_backends._ref"

def reference_table() -> CData:
    """ref's kernel table, as a core ``const argonishche_kernel_table *``."""
    import importlib

    module = importlib.import_module(REFERENCE_MODULE)
    address = int(module.ffi.cast("uintptr_t", module.lib.argonishche_kernels()))
    return ffi.cast("const argonishche_kernel_table *", address)
