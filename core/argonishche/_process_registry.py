"""The process's one registry: built once on first use, safe from many threads and across fork().

The registry itself (what is found, checked and selected) is :mod:`argonishche._registry`'s;
this module keeps the process's instance, the locks around its build, and what fork() does.

The lock order (the one place it is written down; docs/threads.md says it for users):

- ``fork()`` waits for two locks, in this order (both taken by this module's one before-fork
  hook): the lock of argonishche's imports at first use (``argonishche._lazy_import.lock``),
  then this module's ``_lock``.  Code may take the first and then ``_lock``, never the reverse.
- Under either, only argonishche's own code runs: parsing the settings, registering and checking
  the built-in backends, the selection and its push to the C blake2b type (:func:`publish`), a
  lazy import of one of argonishche's modules.  Never a
  warning or a log call (:mod:`argonishche._warn` keeps them until the locks are released), and
  never plugin code: a plugin's import and hooks, a third-party kernel module's import, self-test
  and certification.  Another fork hook (logging's) or another thread (one a plugin's import
  waits for) may hold what such code needs, while waiting for one of these locks.
- The builder (the one thread that builds the registry, marked by ``_builder``) holds ``_lock``
  except while plugin code runs (:func:`_plugin_window` releases it); ``_build_finished``, which
  fork() does not wait for, is held for the whole build.  A thread that asks for the registry
  while the builder runs plugin code (the builder itself, from plugin code, included) gets a
  *provisional* registry of the built-in backends only, checked like any, and hashes with it:
  the same tags, maybe slower.  It waits for the build only for what only a plugin can give
  (an allocator or a backend named that the built-ins do not have).
- A child forked while another thread ran plugin code never runs plugin code: that thread's
  locks (importlib's lock on the module it was importing) are held in the child forever.  It
  builds a registry of the built-ins, and records each plugin as ``not-loaded`` with the reason.
- ``_deferred_lock`` (not waited for by fork) serializes the import of deferred plugins
  (:meth:`Registry.allocator`); it is never taken under ``_lock``.
"""

from __future__ import annotations

import _thread
import contextlib
import os
from collections.abc import Callable, Iterator

from . import _lazy_import, _settings, _warn, _work_memory
from ._discovery import PluginCode

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any

_instance: Any = None  # the Registry (a class of the layer above: typed Any here)
# Called with _instance (holding _lock) whenever it or its selection changes: the C blake2b
# type keeps the selected table instead of looking it up per object (see publish()).
_watcher: Callable[[Any], None] | None = None
# The locks and the state of a build: see the module docstring for the order and the rules.
_lock = _thread.RLock()  # threading's import is not needed for a lock
_builder: int | None = None            # the thread building the registry
_builder_released_lock = False         # ... and it runs plugin code, _lock released
_build_finished = _thread.allocate_lock()  # held by the builder for the whole build
_provisional: Any = None   # the built-ins, for other threads meanwhile
_generation = 0                        # reset() counts: a build started before is not kept
_plugin_threads: list[int] = []        # threads running plugin code now (once per nesting)
_plugins_refused: str | None = None    # in a child forked while plugin code ran: why
_deferred_lock = _thread.RLock()

FORKED_WHILE_LOADING = "not loaded: the process forked while plugins were loading"
LOADING_ELSEWHERE = ("not loaded yet: the plugins are loading (asked for meanwhile: the "
                     "built-in backends answered)")


@contextlib.contextmanager
def _plugin_window() -> Iterator[str | None]:
    """The process registry's :data:`PluginCode`: plugin code runs with ``_lock`` released (a
    fork() meanwhile then makes a child that loads no plugin), or not at all in such a child."""
    global _builder_released_lock
    if _plugins_refused is not None:
        yield _plugins_refused
        return
    me = _thread.get_ident()
    release = _builder == me and not _builder_released_lock  # the builder holds _lock once
    _plugin_threads.append(me)
    if release:
        _builder_released_lock = True
        _lock.release()
    try:
        yield None
    finally:
        if release:
            _lock.acquire()  # the global: in a child this thread forked, the child's new lock
            _builder_released_lock = False
        _plugin_threads.remove(me)


def _refusing(reason: str) -> PluginCode:
    """A :data:`PluginCode` that runs no plugin code, for *reason*."""
    @contextlib.contextmanager
    def refuse() -> Iterator[str | None]:
        yield reason
    return refuse


def _before_fork() -> None:
    # fork() waits while argonishche's own start-up code runs (a child forked then would inherit
    # the builder's locks, ours and importlib's lock of a built-in kernel module it was
    # importing), never while plugin code runs (which may wait for another fork hook's lock);
    # nor while one of argonishche's modules is imported at first use.  The lock order.
    _lazy_import.lock.acquire()
    _lock.acquire()


def _after_fork_in_parent() -> None:
    _lock.release()
    _lazy_import.lock.release()


def _after_fork_in_child() -> None:
    global _lock, _builder, _build_finished, _provisional, _instance, _plugins_refused
    global _deferred_lock
    me = _thread.get_ident()
    _lazy_import.renew_in_child()
    _lock = _thread.RLock()  # the parent's was held (by _before_fork) as the child was made
    _deferred_lock = _thread.RLock()
    _build_finished = _thread.allocate_lock()
    builder_forked = _builder == me  # plugin code of the build forked: the build goes on here
    if builder_forked:
        _build_finished.acquire()
        if not _builder_released_lock:
            _lock.acquire()
    others = [thread for thread in _plugin_threads if thread != me]
    _plugin_threads[:] = [thread for thread in _plugin_threads if thread == me]
    if others or (_builder is not None and not builder_forked):
        # Those threads do not exist here; the locks they held (importlib's, the plugin's own)
        # stay held: no plugin code runs in this process, and what they were building is gone.
        _plugins_refused = FORKED_WHILE_LOADING
        _instance = _provisional = None
        publish()  # this process alone now: no lock to take
        if not builder_forked:
            _builder = None


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork()
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def lock() -> Any:
    """The registry lock as it is now (fork() gives the child a new one)."""
    return _lock


def deferred_lock() -> Any:
    """The lock serializing deferred plugins' imports (fork() gives the child a new one)."""
    return _deferred_lock


def get(make: Callable[..., Any]) -> Any:
    """The process-wide registry, built on first use; safe to call from many threads.

    While another thread runs the plugins' code for it, this is the provisional registry of the
    built-in backends (see the module docstring).

    :raises SettingError: an ``ARGONISHCHE_*`` variable is invalid (raised on every call until
        it is fixed and :func:`reset` is called)."""
    registry = _instance
    if registry is None:
        registry = _build(make)
    return registry


def _build(make: Callable[..., Any]) -> Any:
    global _instance, _builder, _provisional
    kept: _warn.Collected = []
    try:
        with _warn.collected() as kept:  # given below, once no lock is held
            _lock.acquire()
            try:
                registry = _instance
                if registry is None and _builder is not None:
                    registry = _provisional_registry(make)
                if registry is None:
                    _builder, generation = _thread.get_ident(), _generation
                    _build_finished.acquire()  # free: only a builder takes it
                    try:
                        registry = make(plugin_code=_plugin_window)
                        if generation == _generation:  # else reset() came meanwhile: not kept
                            _instance = registry
                            publish()
                    finally:
                        _builder, _provisional = None, None
                        _build_finished.release()
            finally:
                _lock.release()  # the global: see _plugin_window
    finally:  # also when the build failed: what it found is still worth saying
        _warn.emit(kept)
    return registry


def _provisional_registry(make: Callable[..., Any]) -> Any:
    """The built-ins-only registry, made once per build (called holding ``_lock``)."""
    global _provisional
    if _provisional is None:
        with _warn.collected():  # dropped: the builder gives the same ones when it is done
            _provisional = make(plugin_code=_refusing(LOADING_ELSEWHERE), provisional=True)
    return _provisional


def finished() -> Any:
    """The process registry, once the build in progress is done (None: there is none, or this
    thread is running its plugin code and cannot wait for itself)."""
    me = _thread.get_ident()
    if _builder is not None and _builder != me and me not in _plugin_threads:
        finished = _build_finished
        finished.acquire()
        finished.release()
    return _instance


def reset() -> None:
    """Forget the registry and the parsed settings, so the next use starts again (for tests
    and long-lived tools)."""
    global _instance, _provisional, _generation
    with _lock:
        _instance = _provisional = None
        publish()
        _generation += 1
        _settings.forget()
        _work_memory.forget()


def watch(watcher: Callable[[Any], None]) -> None:
    """Have *watcher* called with the process registry (None: none yet) now and whenever it
    or its selection changes (argonishche._blake2 pushes the selected table to the C type)."""
    global _watcher
    with _lock:
        _watcher = watcher
        publish()


def publish() -> None:
    """Tell the watcher the process registry's selection as it is now.  Called holding
    ``_lock`` (or in a forked child, alone), so that pushes come in the order of the changes;
    tests that install a registry by hand call it too."""
    watcher = _watcher
    if watcher is not None:
        watcher(_instance)


def selection_changed(registry: Any) -> None:
    """*registry*'s selection changed (``Registry._choose``): pushed if it is the process's.
    Another registry (a test's own, the provisional one) is not what the hot paths use."""
    if registry is _instance:  # without the lock first: other registries never wait for it
        with _lock:
            if registry is _instance:
                publish()
