"""BLAKE2b objects that can replace ``hashlib.blake2b``: every parameter of it (digest size, key,
salt, personalization, and the tree-hashing ones: fanout, depth, leaf_size, node_offset,
node_depth, inner_size, last_node), with hashlib's ranges and exception types.

The type is C (``core/ext/blake2b_type.c``, the extension module ``argonishche._blake2b_type``,
stable ABI like the cffi modules), so that ``blake2b(data).digest()`` costs at the Python
boundary what hashlib's does.  It does no BLAKE2b itself: init/update/final are the core's C
code (``core/csrc/blake2b.c``), reached through the addresses handed over below, and the
compression function is the selected backend's, through its kernel table.

The kernel table: each object takes the one selected when it is made (the registry's
``tables["blake2b"]``, which :func:`argonishche.calibrate`, a quarantine and
``ARGONISHCHE_BACKEND`` set), or with ``backend=`` the named backend's.  The type does not look
the selection up: the process registry pushes it (:func:`_push`, through
:func:`argonishche._process_registry.watch`) whenever it changes, and the type keeps it, with
the state the core's init makes for it with the default parameters (copied into each default
object).  Nothing pushed (no registry yet, or no usable backend) and ``backend=`` ask
:func:`_kernel_table`, which builds the registry or raises its error.

Threads: one object may be shared, as hashlib allows: updates of 2048 bytes or more release the
GIL, and from the first one on the object has a lock that every use of its state takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _blake2b_type, _process_registry, _registry
from ._core import ffi, lib
from .exceptions import ParameterError, ParameterOverflowError, ParameterTypeError

if TYPE_CHECKING:
    from ._core import CData


def _kernel_table(backend: str | None) -> tuple[CData, int]:
    """The blake2b kernel table (selected, or *backend*'s) and its address, for the C type."""
    if backend is None:
        table = _registry.selected_table("blake2b")
    else:
        table = _registry.get().kernel_table("blake2b", backend)
    return table, int(ffi.cast("uintptr_t", table))


def _address(function: str) -> int:
    return int(ffi.cast("uintptr_t", getattr(lib, function)))


def _push(registry: _registry.Registry | None) -> None:
    """The process registry's selected BLAKE2b table to the C type (None: no registry, or no
    usable backend: the type asks :func:`_kernel_table`)."""
    table = None if registry is None else registry.tables.get("blake2b")
    if table is None:
        _blake2b_type.set_selected(None, None)
    else:
        _blake2b_type.set_selected(table, int(ffi.cast("uintptr_t", table)))


_blake2b_type.connect(
    (_address("argonishche_blake2b_init_tree"), _address("argonishche_blake2b_update"),
     _address("argonishche_blake2b_final"), _address("argonishche_secure_wipe")),
    _kernel_table, ParameterError, ParameterTypeError, ParameterOverflowError)
_process_registry.watch(_push)  # pushes the selection as it is now, then every change

blake2b = _blake2b_type.blake2b
