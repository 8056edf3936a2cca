"""Stand-ins for installed plugin distributions, shared by the registry and memory tests."""

from __future__ import annotations

import types
from importlib.metadata import entry_points

from argonishche import hookspecs, _registry


class FakeEntryPoint:
    """What the registry uses of importlib.metadata.EntryPoint: name, dist and load()."""

    def __init__(self, name, obj=None, error=None, dist=("fake-kernels", "1.2")):
        self.name, self._obj, self._error = name, obj, error
        self.dist = types.SimpleNamespace(name=dist[0], version=dist[1])
        self.loaded = False

    def load(self):
        self.loaded = True
        if self._error is not None:
            raise self._error
        return self._obj


def plugin_registering(*backends):
    """A plugin object whose hook registers *backends*."""
    class Plugin:
        @hookspecs.hookimpl
        def argonishche_register_backends(self, register):
            for backend in backends:
                register(backend)
    return Plugin()


def allocator_plugin(*allocators):
    """A plugin object whose hook registers *allocators*."""
    class Plugin:
        @hookspecs.hookimpl
        def argonishche_register_allocators(self, register):
            for allocator in allocators:
                register(allocator)
    return Plugin()


def builtin_entry_points():
    return list(entry_points(group="argonishche"))


def make_registry(*extra, environ=None, builtin=True):
    """A registry of the installed plugins (unless not *builtin*) plus *extra* fake ones."""
    eps = (builtin_entry_points() if builtin else []) + list(extra)
    return _registry.Registry(environ=environ or {}, plugin_entry_points=eps)
