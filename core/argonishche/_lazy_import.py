"""argonishche's own modules imported at first use, under the lock fork() waits for first.

A child forked while another thread is importing one of them would inherit that module half
made, with importlib's lock on it held by a thread the child does not have: its first use would
hang.  fork() therefore waits for such an import to finish: :mod:`argonishche._process_registry`'s
fork hooks take :data:`lock` before the registry's own lock (the lock order is written there).
Only the import of one of argonishche's modules runs under it, never the registry's start-up,
plugin code or a warning.
"""

from __future__ import annotations

import _thread
import importlib
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from types import ModuleType

#: Held while one of argonishche's modules is imported at first use.  Read it at each use: a
#: forked child gets a new one (:func:`renew_in_child`).
lock = _thread.RLock()


#: The modules :func:`module` has returned, by name: a module is put here only once its import
#: has finished, so finding it needs no lock.
_imported: dict[str, ModuleType] = {}


def module(name: str) -> ModuleType:
    """argonishche's module *name* (relative, as ``"._batch"``), imported under :data:`lock` if
    it is not imported yet.

    A module already returned is found without the lock or importlib (which took about 1 us a
    call, a fifth of ``check_needs_rehash``), as long as it is still the one in ``sys.modules``:
    one dropped from there (as a test does to import it afresh) is imported again."""
    found = _imported.get(name)
    if found is not None and sys.modules.get(found.__name__) is found:
        return found
    with lock:
        imported = importlib.import_module(name, "argonishche")
    _imported[name] = imported
    return imported


def renew_in_child() -> None:
    """A new lock for a forked child: the parent's was held (by fork()'s hook) as it forked."""
    global lock
    lock = _thread.RLock()
