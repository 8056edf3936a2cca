"""BLAKE2b objects that can replace ``hashlib.blake2b``: every parameter of it (digest size, key,
salt, personalization, and the tree-hashing ones: fanout, depth, leaf_size, node_offset,
node_depth, inner_size, last_node), with hashlib's ranges and exception types.

The type is C (``core/ext/blake2b_type.c``, the extension module ``argonishche._blake2b_type``,
stable ABI like the cffi modules), so that ``blake2b(data).digest()`` costs at the Python
boundary what hashlib's does.  It does no BLAKE2b itself: init/update/final are the core's C
code (``core/csrc/blake2b.c``), reached through the addresses handed over below, and the
compression function is the selected backend's, through its kernel table.

The kernel table: each object takes the one selected when it is made (the registry's
``tables["blake2b"]``, which :func:`argonishche.calibrate` and ``ARGONISHCHE_BACKEND`` set), or
with ``backend=`` the named backend's.  The type finds the selected one in the registry itself
and asks :func:`_kernel_table` only for a table it has not seen (or when there is no registry
yet, or no usable backend: then the registry's error is raised).  For that table it keeps the
state the core's init makes with the default parameters, and copies it into each default object.

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


_blake2b_type.connect(
    (_address("argonishche_blake2b_init_tree"), _address("argonishche_blake2b_update"),
     _address("argonishche_blake2b_final"), _address("argonishche_secure_wipe")),
    vars(_process_registry), _kernel_table, ParameterError, ParameterTypeError,
    ParameterOverflowError)

blake2b = _blake2b_type.blake2b
