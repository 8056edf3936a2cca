"""``import argon2`` answered by the drop-in, for applications that cannot change their imports.

Aliasing only ``sys.modules["argon2"]`` is not enough: ``import argon2.low_level`` would then
load the drop-in's file a second time under the name ``argon2.low_level``, whose relative
imports fail ("attempted relative import beyond top-level package").  So every public module of
argon2-cffi's tree gets its entry, in one step, and ``argon2`` itself is a package with no
directory (``__path__`` empty): a module argon2-cffi has and the drop-in does not
(``argon2._legacy``) is a plain ModuleNotFoundError.
"""

from __future__ import annotations

import sys
import threading
from importlib.machinery import ModuleSpec
from types import ModuleType

#: argon2-cffi 25.1's public submodules; the drop-in has one of each name.
SUBMODULES = ("exceptions", "low_level", "profiles")

# Two threads calling at once must not both find nothing installed and install twice.
_lock = threading.Lock()
# What install_as_argon2 puts in sys.modules, made once: a second call finds only these there
# (and puts back any removed since); anything else imported as argon2 is refused.
_installed: dict[str, ModuleType] = {}


def _is_argon2(name: str) -> bool:
    return name == "argon2" or name.startswith("argon2.")


def _tree() -> dict[str, ModuleType]:
    from .. import argon2_cffi as drop_in  # the package importing this module: no cycle at use

    names = [name for name in drop_in.__all__ if name != "install_as_argon2"]
    top = ModuleType("argon2", drop_in.__doc__)
    top.__dict__.update({name: getattr(drop_in, name) for name in names})
    top.__all__ = names  # type: ignore[attr-defined]
    top.__path__ = []  # a package, with no directory: its only modules are those below
    top.__spec__ = ModuleSpec("argon2", None, is_package=True)  # importlib.util.find_spec reads it
    tree = {"argon2": top}
    tree.update((f"argon2.{name}", getattr(drop_in, name)) for name in SUBMODULES)
    return tree


def install_as_argon2() -> None:
    """Make ``import argon2`` (and ``argon2.exceptions``, ``argon2.low_level``,
    ``argon2.profiles``) give ``argonishche.argon2_cffi``, for the rest of the process.

    For an application, or a library it uses, that imports argon2-cffi by name and cannot be
    changed.  Call it once at start-up, before anything imports ``argon2``; it is never done
    on import of argonishche.  Calling it again is harmless.  ImportError if ``argon2`` (or one
    of its submodules) is already imported and is not what this installed: argon2-cffi's
    classes and the drop-in's would otherwise both be in use in one process.  An installed
    argon2-cffi that nothing imported yet is shadowed (its code is never run) but its package
    metadata stays: ``importlib.metadata.version("argon2-cffi")`` reports it if it is
    installed and raises ``PackageNotFoundError`` if not.

    Thread-safe against concurrent calls; an ``import argon2`` racing the first call in
    another thread may still get argon2-cffi (then a later call raises), so call it before
    starting threads.
    """
    with _lock:
        foreign = {name: module for name, module in list(sys.modules.items())
                   if _is_argon2(name) and _installed.get(name) is not module}
        if foreign:
            name = "argon2" if "argon2" in foreign else min(foreign)
            where = getattr(foreign[name], "__file__", None) or repr(foreign[name])
            raise ImportError(
                f"{name} is already imported (from {where}): install_as_argon2() must run "
                f"before anything imports argon2, else argon2-cffi's classes and "
                f"argonishche.argon2_cffi's would both be in use", name="argon2")
        if not _installed:
            _installed.update(_tree())
        sys.modules.update(_installed)  # all entries at once: no import sees half a tree
