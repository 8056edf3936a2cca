"""Backends a plugin declares before it is imported (the ``argonishche.backends`` entry points).

A plugin's entry point need not be named after its backends, and a plugin may register several,
so blocking a backend by name (``ARGONISHCHE_DISABLE_BACKENDS``) used to mean importing every
plugin to learn what it registers.  A distribution declares them in its metadata instead, one
entry point per backend, named after it, whose value is the plugin's entry point's value::

    [project.entry-points.argonishche]
    fast_kernels = "fastpkg.plugin"

    [project.entry-points."argonishche.backends"]
    fast = "fastpkg.plugin"
    faster = "fastpkg.plugin"

Ordinary entry points (pip, setuptools and importlib.metadata write and read them as any other),
read with the plugins' from ``entry_points.txt``.  Discovery (:mod:`argonishche._discovery`)
leaves a plugin unimported when every backend it declares is blocked, and refuses a backend a
declared plugin registers without declaring it: blocking it could not have kept the plugin out.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._warn import warn
from ._wording import noun
from .exceptions import echo
from .hookspecs import PROJECT_NAME, Backend

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

#: The entry-point group of the declarations.
DECLARATIONS = f"{PROJECT_NAME}.backends"


def _normalized(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _dist_name(entry_point: Any) -> str:
    return _normalized(getattr(getattr(entry_point, "dist", None), "name", "") or "")


def _object_reference(value: object) -> str:
    return "".join(str(value).split())


def _is_backend_name(name: str) -> bool:
    return bool(name) and all(c.isascii() and (c.isalnum() or c == "_") for c in name)


def match(plugins: Iterable[Any], declarations: Iterable[Any]) -> dict[int, frozenset[str]]:
    """id(plugin entry point) -> the backend names its distribution declares for it: each
    declaration matched with the plugin entry point of its distribution that has its value.
    One that matches none, or is no backend name, is ignored with a RuntimeWarning."""
    by_reference = {(_dist_name(ep), _object_reference(getattr(ep, "value", ""))): ep
                    for ep in plugins}
    named: dict[int, set[str]] = {}
    for declaration in declarations:
        plugin = by_reference.get((_dist_name(declaration),
                                   _object_reference(declaration.value)))
        name = declaration.name.strip().lower()
        if plugin is None or not _is_backend_name(name):
            dist = getattr(declaration, "dist", None)
            label = f"{dist.name} {dist.version}" if dist is not None else "a distribution"
            warn(f"argonishche: {label} declares backend {echo(declaration.name)} for "
                 f"{echo(declaration.value)} in the {DECLARATIONS} entry points, which is "
                 f"ignored: " + ("no plugin entry point of it has that value" if plugin is None
                                 else "not a backend name ([A-Za-z0-9_]+)"))
            continue
        named.setdefault(id(plugin), set()).add(name)
    return {key: frozenset(names) for key, names in named.items()}


def all_blocked(declared: frozenset[str] | None, disabled: Iterable[str]) -> bool:
    """Whether every backend in *declared* is named in *disabled* (normalized names)."""
    return bool(declared) and {_normalized(name) for name in declared or ()} <= set(disabled)


def reserved_reason(declared: frozenset[str] | None, reserved: set[str]) -> str:
    """Why a plugin declaring a built-in's name is not loaded ("" if it declares none)."""
    taken = sorted((declared or frozenset()) & reserved)
    if not taken:
        return ""
    return (f"not loaded: it declares {noun(taken, 'backend')} {', '.join(taken)}, "
            f"{noun(taken, 'a name of a built-in backend', 'names of built-in backends')} of "
            f"{PROJECT_NAME}, which a plugin may not replace")


def not_imported(declared: frozenset[str] | None) -> str:
    """What a blocked plugin's record adds when it declares its backends."""
    if not declared:
        return ""
    return f", not imported (it declares {noun(declared, 'backend')} {', '.join(sorted(declared))})"


def placeholders(declared: frozenset[str] | None, plugin: str) -> list[tuple[Backend, str]]:
    """(descriptor, reason) listed for each backend *plugin* declares, when it was blocked before
    it was imported: no kernel module is ever loaded for them."""
    reason = f"blocked by ARGONISHCHE_DISABLE_BACKENDS: its plugin {plugin!r} was not imported"
    return [(Backend(name=name, description=f"declared by plugin {plugin!r}, not imported",
                     kernel_module=""), reason) for name in sorted(declared or ())]


def undeclared_reason(backend: str, declared: frozenset[str] | None, dist: str) -> str:
    """Why the backend *backend* is refused: its plugin declares backends, and not this one
    ("" if it declares nothing, or this one)."""
    if declared is None or backend in declared:
        return ""
    return (f"backend {backend!r} not used: the plugin declares only "
            f"{', '.join(sorted(declared))} ({dist}'s {DECLARATIONS} entry points), so "
            f"ARGONISHCHE_DISABLE_BACKENDS={backend} could not keep it from being imported; "
            f"its distribution must declare every backend it registers")
