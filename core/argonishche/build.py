"""Build helper for kernel backends: one call gives a cffi builder for a backend module.

In-tree backends and third-party plugin wheels use the same function, so every backend module
exports the same two names (see include/argonishche_kernel.h), is compiled the same way, and
records the instruction set it was compiled for.  This module needs only cffi and the standard
library: build scripts load it before argonishche itself is installed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

# types-cffi has cffi's types; without it (it is a lint-only dependency) FFI is Any.
from cffi import FFI  # type: ignore[import-untyped, unused-ignore]

if TYPE_CHECKING:
    from types import ModuleType

_HERE = os.path.dirname(os.path.abspath(__file__))

#: Directory holding the kernel contract (argonishche_kernel.h), the target switch
#: (argonishche_target.h) and the shared constants (argonishche_constants.h).
INCLUDE_DIR = os.path.join(_HERE, "include")

#: What the core reads from every backend module, and nothing more: the kernel table's address
#: and the ABI number the module was compiled against (checked before any kernel runs).
BACKEND_CDEF = """
#define ARGONISHCHE_KERNEL_ABI ...
const void *argonishche_kernels(void);
"""

#: Optimisation only; never an instruction-set flag such as -mavx2 (see the kernel header, rule 1).
COMPILE_ARGS = ("-O3", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-function")


def _feature_table() -> ModuleType:
    """argonishche._features, loaded by path: this module may run before argonishche is
    installed (in-tree builds), when importing the package is not possible."""
    name = "argonishche_build_features"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, "_features.py"))
        assert spec is not None and spec.loader is not None  # a file of this package
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # once per build, however many builders ask
        spec.loader.exec_module(module)
    return sys.modules[name]


def get_include() -> str:
    """The include directory a backend's C sources need (like ``numpy.get_include()``)."""
    return INCLUDE_DIR


def target_arch() -> str:
    """The architecture being built for: ``"x86_64"``, ``"aarch64"``, or another name.

    The build's, not the machine's: ``sysconfig.get_platform()`` of the interpreter running the
    build, which is also what names the wheel, and which cross-build tools set through
    ``_PYTHON_HOST_PLATFORM`` (crossenv, cibuildwheel's macOS arm64 builds).  An emulated
    interpreter (QEMU user mode) reports its own architecture, so it builds for that.
    """
    arch: str = _feature_table().arch_of_platform(sysconfig.get_platform())
    return arch


def kernel_target(cpu_features: Collection[str]) -> str:
    """The compiler target string for *cpu_features*, e.g. ``"sse2,ssse3"``.

    :raises ValueError: a name that is not in the CPU-feature table, or features of two
        architectures.
    """
    table = _feature_table()  # argonishche._features
    names: tuple[str, ...] = table.NAMES
    unknown = set(cpu_features) - set(names)
    if unknown:
        raise ValueError(f"unknown CPU features {sorted(unknown)}; known: "
                         f"{', '.join(names)}")
    arches = sorted({table.BY_NAME[name].arch for name in cpu_features})
    if len(arches) > 1:
        raise ValueError(f"CPU features {sorted(cpu_features)} belong to different "
                         f"architectures ({', '.join(arches)}): no one kernel can use them all")
    target: str = table.compiler_target(frozenset(cpu_features))
    return target


def kernel_target_clang(cpu_features: Collection[str]) -> str:
    """clang's target string for *cpu_features* (the same as :func:`kernel_target`'s on x86-64;
    ``"neon,sha3"`` where GCC's is ``"+simd,arch=armv8.2-a+sha3"``)."""
    kernel_target(cpu_features)  # the same checks
    target: str = _feature_table().clang_compiler_target(frozenset(cpu_features))
    return target


def libc_link_args() -> list[str]:
    """Linker arguments that make a compiled module record the C library it is linked against.

    A kernel module calls nothing in libc, so the linker records none (no ``DT_NEEDED`` entry),
    and auditwheel (``show``, and the ``repair`` that makes a manylinux wheel) stops with
    ``InvalidLibcError: couldn't detect libc for python extension``.  ``-lc`` outside
    ``--as-needed`` records it.  Nothing runs at import that did not before (the interpreter
    has libc loaded already), and the one libc symbol bound is the weak ``__cxa_finalize`` at
    glibc's first version for the architecture (2.2.5 on x86-64), so no manylinux tag is lost.
    For GNU-style linkers only: Linux builds, by the build's platform (see :func:`target_arch`).
    """
    if not sysconfig.get_platform().startswith("linux"):
        return []
    return ["-Wl,--no-as-needed", "-lc", "-Wl,--as-needed"]


def headers_beside(directories: Collection[str]) -> list[str]:
    """The C headers in *directories*: what a build must watch besides the sources.

    setuptools recompiles a module only when one of its sources or ``depends`` is newer than
    it: without its headers, a build tree left from before a header changed (the kernel
    contract's ABI, say) keeps the old objects, and the registry refuses the stale module."""
    return sorted({os.path.join(directory, name) for directory in directories
                   for name in os.listdir(directory or ".") if name.endswith(".h")})


def backend_ffibuilder(module_name: str, sources: Sequence[str],
                       cpu_features: Collection[str] = (),
                       include_dirs: Sequence[str] = ()) -> FFI:
    """A cffi builder for the backend module *module_name* compiled from *sources*.

    On Linux the module is linked against libc (:func:`libc_link_args`), so that auditwheel can
    make its wheel a manylinux wheel.

    :param module_name: dotted name of the compiled module, e.g. ``"mypkg._kernels"``.
    :param sources: C files; one of them ends with ``ARGONISHCHE_DEFINE_KERNELS(...)``.
    :param cpu_features: the same names as the backend's ``Backend.cpu_features``: the code
        between ``ARGONISHCHE_TARGET_BEGIN`` and ``_END`` is compiled for exactly these, and the
        module's kernel table records it, so that the registry can refuse a module compiled for
        more than its descriptor declares.  Empty: the architecture's baseline.
    :param include_dirs: extra include directories; the kernel contract's is always added.
    :raises ValueError: *cpu_features* are not all in the CPU-feature table, or belong to
        another architecture than the one being built for (:func:`target_arch`).
    """
    target = kernel_target(cpu_features)
    table = _feature_table()
    foreign = sorted(name for name in cpu_features if table.BY_NAME[name].arch != target_arch())
    if foreign:
        raise ValueError(f"{module_name}: CPU features {', '.join(foreign)} are "
                         f"{table.BY_NAME[foreign[0]].arch} features, and this build is for "
                         f"{target_arch()}: build the module only for its architecture")
    ffibuilder = FFI()
    ffibuilder.cdef(BACKEND_CDEF)
    ffibuilder.set_source(
        module_name,
        '#include "argonishche_kernel.h"',
        sources=list(sources),
        include_dirs=[INCLUDE_DIR, *include_dirs],
        depends=headers_beside([INCLUDE_DIR, *include_dirs, *map(os.path.dirname, sources)]),
        # Both compilers' spellings; argonishche_target.h picks one, and the kernel table
        # records GCC's (the table's names) whichever compiled it.
        define_macros=[("ARGONISHCHE_KERNEL_TARGET", f'"{target}"'),
                       ("ARGONISHCHE_KERNEL_TARGET_CLANG",
                        f'"{kernel_target_clang(cpu_features)}"')] if target else [],
        extra_compile_args=list(COMPILE_ARGS),
        extra_link_args=libc_link_args(),
    )
    return ffibuilder
