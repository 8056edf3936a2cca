"""The built-in backends, one row each: the only place their names, sources, architectures,
features and priorities are written.

Read by ``core/build_backends.py`` and ``setup.py`` (what to compile: the rows of the target
architecture, :func:`built_for`), by ``argonishche_backends`` (the plugin objects behind the entry
points), and checked by ``tests/kernels/test_backend_table.py`` against the entry points in
``pyproject.toml`` and the envs in ``tox.ini``, which cannot read Python.  Pure data and the
standard library: the build loads this file by path, before argonishche is installed.

A wheel holds the rows of one architecture.  :data:`ALL_BUILTIN_BACKENDS` is every row (each has
an entry point everywhere); :data:`BUILTIN_BACKENDS` is the rows built for the machine running
this Python, the only ones the registry registers.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
elif __package__:
    from argonishche._named_tuple import NamedTuple
else:  # loaded by path by core/build_backends.py, where argonishche cannot be imported
    from typing import NamedTuple

#: ``arches`` of a row built for every architecture (portable C only).
EVERY_ARCH: tuple[str, ...] = ("*",)
X86_64 = "x86_64"
AARCH64 = "aarch64"


class BuiltinBackend(NamedTuple):
    name: str                    # the backend's and its entry point's name
    source: str                  # the kernel file in backends/
    arches: tuple[str, ...]      # built for these (argonishche._features.ARCHES), or EVERY_ARCH
    cpu_features: tuple[str, ...]  # names from argonishche._features; the build compiles for them
    priority: int                # higher wins among the usable ones
    description: str             # one line for ``info``


# The Argonishche ladders, one per architecture: each rung needs everything below it, and is
# preferred over it; ref is the bottom rung of every ladder.
ALL_BUILTIN_BACKENDS: tuple[BuiltinBackend, ...] = (
    BuiltinBackend("ref", "ref.c", EVERY_ARCH, (), 0,
                   "portable C, the reference every other backend is tested against"),
    BuiltinBackend("sse2", "sse2.c", (X86_64,), ("sse2",), 10, "SSE2, 128-bit vectors"),
    BuiltinBackend("ssse3", "ssse3.c", (X86_64,), ("sse2", "ssse3"), 20,
                   "SSSE3, 128-bit vectors, byte-shuffle rotations"),
    BuiltinBackend("sse41", "sse41.c", (X86_64,), ("sse2", "ssse3", "sse4_1"), 30,
                   "SSE4.1, 128-bit vectors, blends"),
    BuiltinBackend("avx2", "avx2.c", (X86_64,), ("avx", "avx2"), 40,
                   "AVX2, 256-bit vectors, two Argon2 rows per register"),
    BuiltinBackend("neon", "neon.c", (AARCH64,), ("asimd",), 10,
                   "NEON (ASIMD), 128-bit vectors"),
    BuiltinBackend("neon_sha3", "neon_sha3.c", (AARCH64,), ("asimd", "sha3"), 20,
                   "NEON with the SHA3 extension's three-way XOR and XOR-rotate"),
)

#: Other spellings of the architectures, as ``platform.machine()`` gives them on Windows and
#: macOS.  The same map as argonishche._features.ARCH_ALIASES (which this file cannot import;
#: tests/kernels/test_backend_table.py checks that they agree).
ARCH_ALIASES: dict[str, str] = {"amd64": X86_64, "x64": X86_64, "arm64": AARCH64}


def built_for(arch: str) -> tuple[BuiltinBackend, ...]:
    """The rows compiled for *arch* (``"x86_64"``, ``"aarch64"``; any other: only ``ref``)."""
    return tuple(row for row in ALL_BUILTIN_BACKENDS
                 if row.arches == EVERY_ARCH or arch in row.arches)


def running_arch() -> str:
    """The architecture of this process (a 32-bit Python on a 64-bit OS is not ``x86_64``)."""
    if hasattr(os, "uname"):
        machine = os.uname().machine
    else:  # Windows
        import platform

        machine = platform.machine()
    arch = ARCH_ALIASES.get(machine.lower(), machine.lower())
    if sys.maxsize <= 2**32 and arch in (X86_64, AARCH64):
        return {X86_64: "x86", AARCH64: "arm"}[arch]
    return arch


#: The rows built for this machine: what the wheel installed here contains.
BUILTIN_BACKENDS: tuple[BuiltinBackend, ...] = built_for(running_arch())


def kernel_module(backend: BuiltinBackend) -> str:
    """The compiled module of *backend*: ``argonishche_backends._<name>``."""
    return f"argonishche_backends._{backend.name}"
