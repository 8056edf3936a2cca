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


ref = BuiltinBackend(Backend(
    name="ref", description="portable C, the reference every other backend is tested against",
    kernel_module="argonishche_backends._ref", priority=0))
