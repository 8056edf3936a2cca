"""argonishche's built-in kernel backends: one plugin object per row of :mod:`.table`.

Each object's hook registers one descriptor, as a third-party plugin's does.  The registry
loads the rows built for this machine (``table.BUILTIN_BACKENDS``) through their entry points in
pyproject.toml, one per backend, before any other plugin, and takes a built-in name only from
argonishche's own distribution.  Every row has an entry point and so a module attribute on every
architecture, but a row not built here registers nothing (and the registry does not load it):
no backend appears whose module the wheel does not have.
Importing this module imports no compiled code; the registry imports a backend's ``_<name>``
module only after the CPU gate has passed.
"""

from __future__ import annotations

from collections.abc import Callable

from argonishche.hookspecs import Backend, hookimpl

from .table import ALL_BUILTIN_BACKENDS, BUILTIN_BACKENDS, BuiltinBackend, kernel_module


class BuiltinBackendPlugin:
    """A plugin object registering one built-in backend (none if it is not built here)."""

    def __init__(self, row: BuiltinBackend, built: bool = True) -> None:
        self.backend = Backend(name=row.name, description=row.description,
                               kernel_module=kernel_module(row),
                               cpu_features=frozenset(row.cpu_features), priority=row.priority)
        #: False: this machine's wheel has no module for the row; the hook registers nothing.
        self.built = built

    @hookimpl
    def argonishche_register_backends(self, register: Callable[[Backend], None]) -> None:
        if self.built:
            register(self.backend)


# One module attribute per entry point (``argonishche_backends:ref`` ...).
globals().update({row.name: BuiltinBackendPlugin(row, built=row in BUILTIN_BACKENDS)
                  for row in ALL_BUILTIN_BACKENDS})
