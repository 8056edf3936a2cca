"""argonishche's built-in kernel backends, each a plugin behind its own entry point.

Registered exactly as a third-party wheel would register its own: pyproject.toml maps each entry
point name to one of the objects below, whose hook registers one descriptor.  Importing this
module imports no compiled code; the registry imports a backend's ``_<isa>`` module only after
the CPU gate has passed.
"""

from __future__ import annotations

from argonishche.hookspecs import Backend, hookimpl


class BuiltinBackend:
    """A plugin object registering one built-in backend."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    @hookimpl
    def argonishche_register_backends(self, register) -> None:
        register(self.backend)


def _builtin(name: str, description: str, cpu_features: set[str], priority: int):
    return BuiltinBackend(Backend(name=name, description=description,
                                  kernel_module=f"argonishche_backends._{name}",
                                  cpu_features=frozenset(cpu_features), priority=priority))


# The Argonishche ladder: each rung needs everything below it, and is preferred over it.
ref = _builtin("ref", "portable C, the reference every other backend is tested against",
               set(), 0)
sse2 = _builtin("sse2", "SSE2, 128-bit vectors", {"sse2"}, 10)
ssse3 = _builtin("ssse3", "SSSE3, 128-bit vectors, byte-shuffle rotations",
                 {"sse2", "ssse3"}, 20)
sse41 = _builtin("sse41", "SSE4.1, 128-bit vectors, blends", {"sse2", "ssse3", "sse4_1"}, 30)
avx2 = _builtin("avx2", "AVX2, 256-bit vectors, two Argon2 rows per register", {"avx", "avx2"}, 40)
