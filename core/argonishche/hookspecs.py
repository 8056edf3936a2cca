"""The plugin interface of argonishche: every hook a plugin may implement, and what it registers.

A plugin contributes kernel backends (:class:`Backend`) or Argon2 work-memory allocators
(:class:`Allocator`), or both.  Plugins are found through the ``argonishche`` entry-point group,
one entry point per plugin::

    [project.entry-points.argonishche]
    mykernels = "mypkg.plugin"          # a module, or an object, with @hookimpl functions

A backend plugin declares the backends it registers in the ``argonishche.backends`` group, one
entry point per backend, named after it, with the plugin's entry point's value::

    [project.entry-points."argonishche.backends"]
    fast = "mypkg.plugin"
    faster = "mypkg.plugin"

so that ``ARGONISHCHE_DISABLE_BACKENDS=fast,faster`` keeps the plugin from being imported (the
declarations are read from the installed metadata, before any import).  A declared plugin that
registers a backend it did not declare has that backend refused; a plugin that declares
nothing is imported, and its backends blocked after.

The built-in backends (``ref``, ...) and allocators (``system``, ``arena``, ...) are plugin
objects with the same hooks, registered directly and first, so that no other distribution can
replace them.  Hooks run once, while the registry starts up, never per hash: a hook *registers*
descriptors through a callback, and the registry then checks the CPU, loads the compiled module,
checks its kernel ABI, runs the self-test and, for a third party's backend, its certification,
before anything is selected (see docs/plugins.md).
"""

from __future__ import annotations

from collections.abc import Callable
from . import _features
from ._record import field, record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _F = TypeVar("_F", bound=Callable[..., object])

PROJECT_NAME = "argonishche"


class _HookimplMarker:
    """pluggy's ``HookimplMarker(PROJECT_NAME)``, the same marks, without importing pluggy:
    pluggy is imported only when a third-party plugin is, and the built-ins are marked too."""

    __slots__ = ("project_name",)

    def __init__(self, project_name: str) -> None:
        self.project_name = project_name

    def __call__(self, function: _F | None = None, optionalhook: bool = False,
                 tryfirst: bool = False, trylast: bool = False, hookwrapper: bool = False,
                 specname: str | None = None, wrapper: bool = False) -> Any:
        """Mark *function* as a hook implementation (options as pluggy's), or, without it,
        return a decorator that does."""

        def mark(func: _F) -> _F:
            setattr(func, f"{self.project_name}_impl", {
                "wrapper": wrapper, "hookwrapper": hookwrapper, "optionalhook": optionalhook,
                "tryfirst": tryfirst, "trylast": trylast, "specname": specname})
            return func

        return mark if function is None else mark(function)


#: Decorate plugin functions with this, e.g. ``@argonishche.hookimpl``.
hookimpl = _HookimplMarker(PROJECT_NAME)


def __getattr__(name: str) -> object:
    if name == "hookspec":  # pluggy's marker for the specifications, made when first asked for
        import pluggy

        return pluggy.HookspecMarker(PROJECT_NAME)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: CPU feature names a backend may require, as /proc/cpuinfo and py-cpuinfo spell them (the
#: rows of argonishche's CPU-feature table, which says what each one needs and implies).
CPU_FEATURE_NAMES: tuple[str, ...] = _features.NAMES


@record
class Backend:
    """A kernel backend: a compiled module of BLAKE2b and Argon2 kernels for one instruction set.

    :param name: unique short name users force with ``ARGONISHCHE_BACKEND`` (``[a-z0-9_]+``).
    :param description: one line for ``info``, e.g. ``"AVX2, 256-bit vectors"``.
    :param kernel_module: dotted name of the compiled module built with
        :func:`argonishche.build.backend_ffibuilder`; imported only after the CPU check passed.
    :param cpu_features: CPU features every kernel needs (names from :data:`CPU_FEATURE_NAMES`);
        build the module with the same set (``backend_ffibuilder(..., cpu_features=...)``): a
        module compiled for more than this is refused when it loads.
    :param priority: the backend's rung on the ladder of instruction sets (the built-in one
        uses ref=0, sse2=10, ssse3=20, sse41=30, avx2=40): the highest usable one is selected
        where nothing is measured (``ARGONISHCHE_SELECT=priority``, no writable cache), and
        among backends whose measured speeds tie; otherwise the fastest measured is.
    """

    name: str
    description: str
    kernel_module: str
    cpu_features: frozenset[str] = field(default_factory=frozenset)
    priority: int = 0

    def __post_init__(self) -> None:
        if not self.name or not all(c.isascii() and (c.isalnum() or c == "_") for c in self.name):
            raise ValueError(f"backend name {self.name!r} must be [A-Za-z0-9_]+")
        object.__setattr__(self, "name", self.name.lower())
        object.__setattr__(self, "cpu_features", frozenset(self.cpu_features))
        unknown = self.cpu_features - set(CPU_FEATURE_NAMES)
        if unknown:
            raise ValueError(f"backend {self.name}: unknown CPU features {sorted(unknown)}; "
                             f"known: {', '.join(CPU_FEATURE_NAMES)}")


def argonishche_register_backends(register: Callable[[Backend], None]) -> None:
    """Register zero, one or several kernel backends.

    Called once when the registry starts (on the first hash, or on ``argonishche.backends()``).
    A hook that raises, or registers something invalid, is recorded against its distribution and
    shown by ``python -m argonishche info``; the other plugins keep working.

    :param register: call ``register(Backend(...))`` for each backend this plugin provides.

    Implemented by: backend plugins (the built-in ``argonishche_backends`` and third-party wheels).
    """


class Allocator:
    """Where an Argon2 hash gets its work memory (``memory_size(...)`` bytes) and returns it.

    Subclass, set :attr:`name` and :attr:`description`, and register an instance.  The library
    calls :meth:`acquire` before each hash and :meth:`release` after it, from the hashing thread
    (several threads at once: keep per-thread state per thread).  The size is reserved in the
    process's work-memory budget before :meth:`acquire` and given back after :meth:`release`
    (so a hash may wait for room before :meth:`acquire` is called).  The work memory is wiped
    before :meth:`release` unless the caller opted out (``wipe=False``).
    """

    #: Unique short name users select with ``allocator=`` or ``ARGONISHCHE_ALLOCATOR``.
    name: str = ""
    #: One line for ``info``.
    description: str = ""

    def acquire(self, size: int) -> memoryview | bytearray | None:
        """A writable, C-contiguous buffer holding *size* bytes from its first 64-byte boundary
        (a 64-byte aligned buffer of *size* bytes, or any buffer of *size* + 63), or None to let
        the C driver allocate and free the memory itself (the reference's behaviour)."""
        raise NotImplementedError

    def release(self, buffer: memoryview | bytearray) -> None:
        """Take back what :meth:`acquire` returned (never called with None)."""

    def trim(self) -> int:
        """Return cached memory to the OS; the number of bytes returned."""
        return 0

    def cached_bytes(self) -> int:
        """Bytes held between hashes (for ``info`` and tests)."""
        return 0


def argonishche_register_allocators(register: Callable[[Allocator], None]) -> None:
    """Register zero, one or several work-memory allocators.

    Called once when the registry starts, like :func:`argonishche_register_backends`, and fault
    tolerant in the same way.

    :param register: call ``register(allocator)`` with an :class:`Allocator` instance for each
        allocator this plugin provides.

    Implemented by: allocator plugins (the built-in ``argonishche._allocators`` and third parties).
    """


#: The hook specifications, marked with pluggy's own marker when a plugin manager is made.
HOOKSPECS = (argonishche_register_backends, argonishche_register_allocators)
