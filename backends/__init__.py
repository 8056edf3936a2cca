"""argonishche's built-in kernel backends: one plugin object per row of :mod:`.table`.

Each object's hook registers one descriptor, as a third-party plugin's does; the registry
registers these first and directly (their entry points in pyproject.toml, one per backend, are
what other tools see).  Importing this module imports no compiled code; the registry imports a
backend's ``_<name>`` module only after the CPU gate has passed.
"""

from __future__ import annotations

from collections.abc import Callable

from argonishche.hookspecs import Backend, hookimpl

from .table import BUILTIN_BACKENDS, BuiltinBackend, kernel_module


class BuiltinBackendPlugin:
    """A plugin object registering one built-in backend."""

    def __init__(self, row: BuiltinBackend) -> None:
        self.backend = Backend(name=row.name, description=row.description,
                               kernel_module=kernel_module(row),
                               cpu_features=frozenset(row.cpu_features), priority=row.priority)

    @hookimpl
    def argonishche_register_backends(self, register: Callable[[Backend], None]) -> None:
        register(self.backend)


# One module attribute per entry point (``argonishche_backends:ref`` ...).
globals().update({row.name: BuiltinBackendPlugin(row) for row in BUILTIN_BACKENDS})
