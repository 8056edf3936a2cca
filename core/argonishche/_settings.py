"""Every ``ARGONISHCHE_*`` environment variable argonishche reads, parsed and checked in one place.

Each variable is one row of :data:`VARIABLES`: its name, what it sets, what is allowed and its
default.  Every value is ASCII (digits, names, a path): anything else is refused.  An invalid
value is a :class:`~argonishche.exceptions.SettingError` naming the variable, the value (its
first 80 characters) and what is allowed, raised at first use (the first hash, ``backends()``,
``info``), never a misleading error further down.  Names that can only be checked against what
plugins registered (a backend to force or disable, an allocator) are checked by the registry,
with the same error type.

The built-in allocators and backends are registered directly, so that no variable naming a
plugin can remove an allocator.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from . import _features
from .exceptions import SettingError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ._named_tuple import NamedTuple

#: The allocator used when ``ARGONISHCHE_ALLOCATOR`` is unset: reusing mapped memory avoids a
#: page fault per 4 KiB per hash (docs/memory.md).
DEFAULT_ALLOCATOR = "arena"
#: ARGONISHCHE_SELECT's values, the default first (see argonishche._selection).
SELECT_MODES = ("auto", "measure", "priority")
#: 1 TiB: far above any work memory the default limits allow (4 GiB), low enough that the
#: product with 2**20 stays an ordinary integer everywhere.
MAX_ARENA_MIB = 1 << 20
#: Seconds idle work memory is kept for the next hash before it goes back to the OS: long enough
#: that a server's steady trickle of logins keeps reusing its memory (a fresh mapping costs a page
#: fault and the kernel's zeroing per page: most of a hash from 32 MiB up), short enough that a
#: burst's memory is not held for long after it; jemalloc's default decay of unused pages is the
#: same 10 s (``dirty_decay_ms``).
DEFAULT_IDLE_SECONDS = 10
#: Seconds a hash waits for room in the budget before MemoryBudgetTimeout: long enough to ride
#: out a burst (a budget that runs k hashes at once clears n waiting ones in about n/k hash
#: times), shorter than the request timeouts in front of a login (gunicorn's worker timeout and
#: a proxy's read timeout are 30-60 s by default), so that the server answers "busy" itself.
DEFAULT_WAIT_SECONDS = 10
#: A day: the longest idle time or wait a variable may set.
MAX_WAIT_SECONDS = 86400
#: Per-thread arena bounds of argonishche 0.1, replaced by the process-wide budget: setting one is
#: an error that says what to set instead, never a silent change of meaning.
RETIRED = {
    "ARGONISHCHE_ARENA_MAX_MIB": "the largest hash a thread's arena served",
    "ARGONISHCHE_ARENA_RETAIN_MIB": "what a thread's arena kept after a hash",
}
#: Seconds a third-party kernel module's first certification may take in its child interpreter:
#: it takes a few seconds; a kernel that hangs must not hang start-up.  A day at most.
DEFAULT_CERTIFY_TIMEOUT = 120
MAX_CERTIFY_TIMEOUT = MAX_WAIT_SECONDS


def _ascii(raw: str) -> str:
    """*raw* stripped, if it is ASCII; else ValueError.  Every value must be: str.lower() maps
    the Kelvin sign (U+212A) onto k, so "LOCKED" spelled with it would name ``locked``, and
    int() reads every Unicode digit (Arabic-Indic, full-width): a value not spelled in ASCII
    could mean something other than what it shows (the PHC decoder refuses such digits too)."""
    if not raw.isascii():
        raise ValueError
    return raw.strip()


def _name(raw: str) -> str | None:
    return _ascii(raw).lower() or None


def _names(raw: str) -> frozenset[str]:
    return frozenset(part.strip().lower() for part in _ascii(raw).replace(" ", ",").split(",")
                     if part.strip())


def _select(raw: str) -> str:
    mode = _ascii(raw).lower() or SELECT_MODES[0]
    if mode not in SELECT_MODES:
        raise ValueError
    return mode


#: ARGONISHCHE_MEMORY_HUGE_PAGES's values, the default first (see argonishche._work_memory).
HUGE_PAGES_MODES = ("auto", "on", "off")


def _huge_pages(raw: str) -> str:
    mode = _ascii(raw).lower() or HUGE_PAGES_MODES[0]
    if mode not in HUGE_PAGES_MODES:
        raise ValueError
    return mode


#: ARGONISHCHE_WITNESS's values, the default first (see argonishche._trust.witness).
WITNESS_MODES = ("on", "off")


def _witness(raw: str) -> bool:
    # ASCII only (see _ascii): a setting that turns off a safety check must be spelled exactly.
    mode = _ascii(raw)
    if mode.lower() not in WITNESS_MODES:
        raise ValueError
    return mode.lower() == "on"


def _mebibytes(raw: str, low: int = 1) -> int:
    text = _ascii(raw)  # isdigit() and int() alone take "٣٢" and "１０" (see _ascii)
    if not text.isdigit() or not low <= int(text) <= MAX_ARENA_MIB:
        raise ValueError
    return int(text)


def _seconds(raw: str, low: int = 1) -> int:
    text = _ascii(raw)  # isdigit() alone takes "²" too, which int() then refuses
    if not text.isdigit() or not low <= int(text) <= MAX_WAIT_SECONDS:
        raise ValueError
    return int(text)


def _seconds_or_zero(raw: str) -> int:
    return _seconds(raw, low=0)


def _budget(raw: str) -> int | None:
    return _mebibytes(raw) if raw.strip() else None


def _absolute_path(raw: str) -> str | None:
    path = _ascii(raw)
    if not path:
        return None
    if not os.path.isabs(path):  # relative to whatever the working directory happens to be
        raise ValueError
    return os.path.normpath(path)


def _cpu_features(raw: str) -> frozenset[str]:
    names = _names(raw)
    if not names <= set(_features.NAMES):
        raise ValueError
    return names


class Variable(NamedTuple):
    env: str
    field: str
    parse: Callable[[str], Any]
    allowed: str
    default: str = ""


VARIABLES: tuple[Variable, ...] = (
    Variable("ARGONISHCHE_BACKEND", "backend", _name,
             "the name of one registered backend (python -m argonishche info lists them)"),
    Variable("ARGONISHCHE_DISABLE_BACKENDS", "disabled_backends", _names,
             "comma-separated names of backends (their kernels are never imported), or of "
             "plugins' entry points or distributions (never imported at all)"),
    Variable("ARGONISHCHE_SELECT", "select", _select,
             "auto (measure once per CPU and remember), measure (afresh, in every process) or "
             "priority (the ladder, nothing measured)", SELECT_MODES[0]),
    Variable("ARGONISHCHE_WITNESS", "witness", _witness,
             "on (a built-in recomputes every Argon2 tag a third-party backend makes, and "
             "confirms its mismatches) or off (trust it: a wrong kernel gives wrong tags)",
             WITNESS_MODES[0]),
    Variable("ARGONISHCHE_ALLOCATOR", "allocator", _name,
             f"the name of one registered allocator (unset: {DEFAULT_ALLOCATOR})"),
    Variable("ARGONISHCHE_MEMORY_BUDGET_MIB", "memory_budget_mib", _budget,
             f"a whole number of MiB from 1 to {MAX_ARENA_MIB} (no unit): the most Argon2 work "
             f"memory the process holds at once (unset: half of the least of its cgroup limit, "
             f"physical memory and RLIMIT_AS/RLIMIT_DATA)"),
    Variable("ARGONISHCHE_MEMORY_IDLE_SECONDS", "memory_idle_seconds", _seconds_or_zero,
             f"a whole number of seconds from 0 to {MAX_WAIT_SECONDS} (no unit): how long idle "
             f"work memory is kept for the next hash", str(DEFAULT_IDLE_SECONDS)),
    Variable("ARGONISHCHE_MEMORY_WAIT_SECONDS", "memory_wait_seconds", _seconds_or_zero,
             f"a whole number of seconds from 0 to {MAX_WAIT_SECONDS} (no unit): how long a "
             f"hash waits for room in the work-memory budget", str(DEFAULT_WAIT_SECONDS)),
    Variable("ARGONISHCHE_MEMORY_HUGE_PAGES", "memory_huge_pages", _huge_pages,
             "auto (huge pages for kept work memory from 2 MiB up, unless this machine is a VM "
             "that reports free memory to its host), on or off", HUGE_PAGES_MODES[0]),
    Variable("ARGONISHCHE_DISABLE_CPU_FEATURES", "disabled_cpu_features", _cpu_features,
             f"comma-separated CPU features from: {', '.join(_features.NAMES)}"),
    Variable("ARGONISHCHE_CERTIFY_TIMEOUT", "certify_timeout", _seconds,
             f"a whole number of seconds from 1 to {MAX_CERTIFY_TIMEOUT} (no unit): how long a "
             f"third-party kernel module's certification may take in its child interpreter",
             str(DEFAULT_CERTIFY_TIMEOUT)),
    Variable("ARGONISHCHE_CACHE_DIR", "cache_dir", _absolute_path,
             "an absolute path (ASCII): the directory argonishche keeps its certification and "
             "selection records in, instead of <the user's cache directory>/argonishche"),
    Variable("ARGONISHCHE_CERTIFY_PYTHON", "certify_python", _absolute_path,
             "the absolute path of a Python interpreter of this one's version that can import "
             "argonishche, to run the certification child (unset: this Python, found from "
             "sys.executable unless the application is frozen)"),
    Variable("ARGONISHCHE_REQUIRE_BACKENDS", "required_backends", _names,
             "comma-separated backend names, or all (argonishche.testing fails instead of "
             "skipping when one cannot run)"),
)


class Settings(NamedTuple):
    """The parsed variables; see :data:`VARIABLES` for each one's meaning."""

    backend: str | None
    disabled_backends: frozenset[str]
    select: str
    witness: bool
    allocator: str | None
    memory_budget_mib: int | None
    memory_idle_seconds: int
    memory_wait_seconds: int
    memory_huge_pages: str
    disabled_cpu_features: frozenset[str]
    required_backends: frozenset[str]
    certify_timeout: int
    cache_dir: str | None
    certify_python: str | None
    #: The variables that were set (non-empty), as given: for reports.
    given: Mapping[str, str]

    @property
    def allocator_name(self) -> str:
        return self.allocator or DEFAULT_ALLOCATOR


def given(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables of :data:`VARIABLES` that *environ* sets (non-empty), as given."""
    return {v.env: environ[v.env] for v in VARIABLES if environ.get(v.env, "").strip()}


def parse(environ: Mapping[str, str]) -> Settings:
    """The settings *environ* gives.

    :raises SettingError: a variable's value is not allowed; the message names it.
    """
    values: dict[str, Any] = {}
    for name, meaning in RETIRED.items():
        if environ.get(name, "").strip():
            raise SettingError(name, environ[name], (
                f"unset: it set {meaning}, and argonishche now has one process-wide work-memory "
                f"budget instead, which any thread's hash reuses: ARGONISHCHE_MEMORY_BUDGET_MIB "
                f"bounds all work memory, ARGONISHCHE_MEMORY_IDLE_SECONDS how long idle memory "
                f"is kept (docs/memory.md)"))
    for variable in VARIABLES:
        raw = environ.get(variable.env, "")
        foreign = next((i for i, char in enumerate(raw) if not char.isascii()), None)
        if foreign is not None:
            raise SettingError(variable.env, raw,
                               f"ASCII only (character {foreign + 1} is "
                               f"U+{ord(raw[foreign]):04X}), and {variable.allowed}")
        try:
            values[variable.field] = variable.parse(raw if raw.strip() else variable.default)
        except ValueError:
            raise SettingError(variable.env, raw, variable.allowed) from None
    return Settings(given=given(environ), **values)


def environment_with(**variables: str) -> dict[str, str]:
    """This process's environment with *variables* set, for a child process (the benchmark's
    start-up cases); they must be rows of :data:`VARIABLES`."""
    unknown = set(variables) - {v.env for v in VARIABLES}
    if unknown:
        raise ValueError(f"not argonishche settings: {', '.join(sorted(unknown))}")
    return {**os.environ, **variables}


def environment_keeping(kept: tuple[str, ...], **variables: str) -> dict[str, str]:
    """A sanitized environment for a child process (a kernel module's certification): only the
    variables *kept* and every ``ARGONISHCHE_*`` variable of this process, plus *variables*."""
    environ = {name: value for name, value in os.environ.items()
               if name in kept or name.startswith("ARGONISHCHE_")}
    environ.update(variables)
    return environ


#: Set in a certification child's environment (argonishche._trust.child_launch): a process started
#: as one never starts another.
CERTIFICATION_CHILD_MARKER = "_ARGONISHCHE_CERTIFICATION_CHILD"


def is_certification_child(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this process was started as a certification child."""
    return bool(environ.get(CERTIFICATION_CHILD_MARKER))


def user_cache_home(environ: Mapping[str, str] = os.environ) -> str | None:
    """The user's cache directory: ``$XDG_CACHE_HOME`` if absolute (as the XDG Base Directory
    specification says), else ``~/.cache``; None without a home directory.  An empty ``HOME``
    or ``/`` is none: ``os.path.expanduser`` turns "" into "/", and ``/.cache`` is nobody's."""
    base = environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(base):
        return base
    # As os.path.expanduser reads it (Windows: USERPROFILE), but an empty HOME stays empty.
    home = environ["HOME"] if "HOME" in environ and os.name != "nt" else os.path.expanduser("~")
    if not os.path.isabs(home) or not home.strip("/\\"):
        return None
    return os.path.join(home, ".cache")


def records_home(environ: Mapping[str, str] = os.environ) -> tuple[str | None, str]:
    """(the directory argonishche keeps its records in, what set it): ``ARGONISHCHE_CACHE_DIR``,
    else ``<user_cache_home()>/argonishche``; (None, why) without one."""
    raw = environ.get("ARGONISHCHE_CACHE_DIR", "")
    if raw.strip():
        try:
            path = _absolute_path(raw) if raw.isascii() else None
        except ValueError:
            path = None
        if path is None:  # parse() refuses it at first use, naming the variable
            return None, "ARGONISHCHE_CACHE_DIR is not an absolute ASCII path"
        return path, "ARGONISHCHE_CACHE_DIR"
    base = user_cache_home(environ)
    if base is None:
        return None, ("no cache directory: ARGONISHCHE_CACHE_DIR and XDG_CACHE_HOME are not "
                      "set, and the home directory is not set, empty or /")
    source = "XDG_CACHE_HOME" if base == environ.get("XDG_CACHE_HOME") else "~/.cache"
    return os.path.join(base, "argonishche"), source


_current: Settings | None = None


def current() -> Settings:
    """The settings of this process's environment, parsed once (see :func:`forget`)."""
    global _current
    if _current is None:
        _current = parse(os.environ)
    return _current


def forget() -> None:
    """Parse the environment again on next use (the registry's reset calls this)."""
    global _current
    _current = None
