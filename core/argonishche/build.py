"""Build helper for kernel backends: one call gives a cffi builder for a backend module.

In-tree backends and third-party plugin wheels use the same function, so every backend module
exports the same two names (see include/argonishche_kernel.h) and is compiled the same way.
This module needs only cffi and the standard library: build scripts load it before argonishche
itself is installed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from cffi import FFI

#: Directory holding argonishche_kernel.h and argonishche_constants.h.
INCLUDE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")

#: What the core reads from every backend module, and nothing more: the kernel table's address
#: and the ABI number the module was compiled against (checked before any kernel runs).
BACKEND_CDEF = """
#define ARGONISHCHE_KERNEL_ABI ...
const void *argonishche_kernels(void);
"""

#: Optimisation only; never an instruction-set flag such as -mavx2 (see the kernel header, rule 1).
COMPILE_ARGS = ("-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-function")


def get_include() -> str:
    """The include directory a backend's C sources need (like ``numpy.get_include()``)."""
    return INCLUDE_DIR


def backend_ffibuilder(module_name: str, sources: Sequence[str],
                       include_dirs: Sequence[str] = ()) -> FFI:
    """A cffi builder for the backend module *module_name* compiled from *sources*.

    :param module_name: dotted name of the compiled module, e.g. ``"mypkg._kernels"``.
    :param sources: C files; one of them ends with ``ARGONISHCHE_DEFINE_KERNELS(...)``.
    :param include_dirs: extra include directories; the kernel contract's is always added.
    """
    ffibuilder = FFI()
    ffibuilder.cdef(BACKEND_CDEF)
    ffibuilder.set_source(
        module_name,
        '#include "argonishche_kernel.h"',
        sources=list(sources),
        include_dirs=[INCLUDE_DIR, *include_dirs],
        extra_compile_args=list(COMPILE_ARGS),
    )
    return ffibuilder
