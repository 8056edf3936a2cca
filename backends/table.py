"""The built-in backends, one row each: the only place their names, sources, features and
priorities are written.

Read by ``core/build_backends.py`` and ``setup.py`` (what to compile, for which target), by
``argonishche_backends`` (the plugin objects behind the entry points), and checked by
``tests/test_backend_table.py`` against the entry points in ``pyproject.toml`` and the envs in
``tox.ini``, which cannot read Python.  Pure data: the build loads this file by path, before
argonishche is installed.
"""

from __future__ import annotations

from typing import NamedTuple


class BuiltinBackend(NamedTuple):
    name: str                    # the backend's and its entry point's name
    source: str                  # the kernel file in backends/
    cpu_features: tuple[str, ...]  # names from argonishche._features; the build compiles for them
    priority: int                # higher wins among the usable ones
    description: str             # one line for ``info``


# The Argonishche ladder: each rung needs everything below it, and is preferred over it.
BUILTIN_BACKENDS: tuple[BuiltinBackend, ...] = (
    BuiltinBackend("ref", "ref.c", (), 0,
                   "portable C, the reference every other backend is tested against"),
    BuiltinBackend("sse2", "sse2.c", ("sse2",), 10, "SSE2, 128-bit vectors"),
    BuiltinBackend("ssse3", "ssse3.c", ("sse2", "ssse3"), 20,
                   "SSSE3, 128-bit vectors, byte-shuffle rotations"),
    BuiltinBackend("sse41", "sse41.c", ("sse2", "ssse3", "sse4_1"), 30,
                   "SSE4.1, 128-bit vectors, blends"),
    BuiltinBackend("avx2", "avx2.c", ("avx", "avx2"), 40,
                   "AVX2, 256-bit vectors, two Argon2 rows per register"),
)


def kernel_module(backend: BuiltinBackend) -> str:
    """The compiled module of *backend*: ``argonishche_backends._<name>``."""
    return f"argonishche_backends._{backend.name}"
