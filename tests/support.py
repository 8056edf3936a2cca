"""What the test files share: constants, subprocess and buffer helpers, and stand-ins for
installed plugin distributions.  Fixtures live in conftest.py.

``tools/leak_workload.py`` imports this module under valgrind, so it imports neither pytest nor
anything else the workload does not need.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import types
from importlib.metadata import entry_points

import argonishche
from argonishche import Allocator, _allocators, _registry, hookspecs
from argonishche._core import ffi

# ---- constants ------------------------------------------------------------------------------

UINT32_MAX = 2**32 - 1
PASSWORD = b"password"
SALT = b"somesalt"
SALT_B64 = "c29tZXNhbHQ"  # SALT unpadded; its last character has its 2 unused bits clear
SMALL = dict(time_cost=1, memory_cost=32, parallelism=1)  # the cheapest valid costs
# PASSWORD, SALT, Argon2id v=19 and SMALL's costs: the 32-byte tag phc-winner-argon2 computes
TAG_B64 = "MBqPu0xZXFIeZ1LJialS1H4ezQY9ie689ohyiGdbVMg"
KNOWN_TAG = base64.b64decode(TAG_B64 + "=")
VALID = f"$argon2id$v=19$m=32,t=1,p=1${SALT_B64}${TAG_B64}"
# Published phc-winner-argon2 strings (password "password", salt "somesalt", t=2, m=64 MiB).
RFC_I_V19 = (
    "$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA")
RFC_I_V16_WITHOUT_V = (
    "$argon2i$m=65536,t=2,p=1$c29tZXNhbHQ$9sTbSlTio3Biev89thdrlKKiCaYsjjYVJxGAL3swxpQ")

BUILTIN_NAMES = ("system", "arena", "hugepages", "locked")
SYSTEM, ARENA, HUGEPAGES, LOCKED = _allocators.BUILTIN
SLACK = 63  # what memory_size() adds to the blocks so that any buffer can be aligned to 64


def b64(data: bytes) -> str:
    """Unpadded standard base64, as PHC strings spell salts and tags."""
    return base64.b64encode(data).decode("ascii").rstrip("=")


def encoded_with(m=32, t=1, p=1, tag=bytes(32), salt=SALT, type_name="id") -> str:
    """A well-formed Argon2 v=19 PHC string with these fields (its tag need not be right)."""
    return f"$argon2{type_name}$v=19$m={m},t={t},p={p}${b64(salt)}${b64(tag)}"


def usable_backend_names() -> list[str]:
    return [b.name for b in argonishche.backends() if b.state in ("selected", "available")]


# ---- processes and memory -------------------------------------------------------------------


def run_python(code: str, *args: str, timeout: float = 120, settings: bool = True,
               **environ: str) -> subprocess.CompletedProcess:
    """Run *code* (dedented) with *args* in a fresh interpreter: this process's environment
    without its allocator variables (without any ``ARGONISHCHE_*`` variable if not
    *settings*: a child that must start as the default does, whatever the tox env forces),
    plus *environ*."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARGONISHCHE_ALLOCATOR", "ARGONISHCHE_ARENA_MAX_MIB")
           and (settings or not k.startswith("ARGONISHCHE_"))}
    env.update(environ)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def skip_folder_unless(items, folder: pathlib.Path, variable: str, env: str) -> None:
    """Mark the collected *items* under *folder* skipped unless *variable* is set: a suite that
    runs only in ``tox -e ENV`` (the skip's reason says which), so the main run stays short."""
    if os.environ.get(variable):
        return
    import pytest

    skip = pytest.mark.skip(reason=f"{env} test: runs in tox -e {env} ({variable}=1)")
    for item in items:
        if folder in pathlib.Path(item.fspath).parents:
            item.add_marker(skip)


def stress_scale() -> int:
    """How many times larger ``tox -e stress`` runs each program (``ARGONISHCHE_STRESS_SCALE``,
    default 10).  Here, not in tests/stress/conftest.py: with tests/load's conftest collected too,
    ``from conftest import`` found whichever conftest module was imported last."""
    return int(os.environ.get("ARGONISHCHE_STRESS_SCALE", "10"))


def bench_cli(capsys, *args: str):
    """``argonishche bench ARGS`` run in this process, under pytest's *capsys*: (status,
    stdout, stderr)."""
    from argonishche import _cli

    try:
        status = _cli.main(["bench", *args])
    except SystemExit as exc:  # argparse's usage errors
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def call_cli(capsys, monkeypatch, *args: str, stdin: bytes = b""):
    """``argonishche ARGS`` run in this process (``_cli.main``) with *stdin*, under pytest's
    *capsys* and *monkeypatch*: (status, stdout, stderr)."""
    import io

    from argonishche import _cli

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    try:
        status = _cli.main(list(args))
    except SystemExit as exc:  # argparse's usage errors
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def address_of(buffer) -> int:
    pointer = ffi.from_buffer(buffer)
    try:
        return int(ffi.cast("uintptr_t", pointer))
    finally:
        ffi.release(pointer)


def buffer_at(length: int, remainder: int) -> memoryview:
    """A writable buffer of *length* bytes whose address is *remainder* modulo 64."""
    backing = bytearray(length + 128)
    offset = (remainder - address_of(backing)) % 64
    view = memoryview(backing)[offset:offset + length]
    assert address_of(view) % 64 == remainder
    return view


def needed(memory_cost: int, parallelism: int = 1) -> int:
    """What an allocator is asked for: memory_size() without the alignment slack."""
    return argonishche.memory_size(memory_cost, parallelism) - SLACK


def mprime(memory_cost: int, parallelism: int) -> int:
    """The block count Argon2 rounds *memory_cost* down to: a multiple of 4 * parallelism."""
    return 4 * parallelism * (memory_cost // (4 * parallelism))


class Pool(Allocator):
    """A third-party allocator: 64-byte aligned bytearrays, counting acquire and release."""

    description = "a test pool"

    def __init__(self, name="pool", short_by=0):
        self.name, self.short_by = name, short_by
        self.acquired, self.released = [], []

    def acquire(self, size):
        buffer = buffer_at(size - self.short_by, 0)
        self.acquired.append(buffer)
        return buffer

    def release(self, buffer):
        self.released.append(buffer)


# ---- stand-ins for installed plugin distributions -------------------------------------------


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
    """Every installed ``argonishche`` entry point: argonishche's own and any plugin's."""
    return list(entry_points(group="argonishche"))


def own_entry_points():
    """argonishche's own entry points, through which the registry loads the built-in backends."""
    return [ep for ep in builtin_entry_points() if ep.dist.name.lower() == "argonishche"]


def timings_where(winners, ordinary=200.0):
    """A stand-in for ``argonishche._selection.sample`` under which each backend named in
    *winners* ({algorithm: backend}) takes half the time of every other backend, to show what
    the selection does where the ladder's order is not the speed order (as on CPUs where ref's
    BLAKE2b beats every vector kernel), on any CPU."""
    def sample(entry, algorithm, scratch):
        return ordinary / 2 if winners.get(algorithm) == entry.name else ordinary
    return sample


def make_registry(*extra, environ=None, installed=True):
    """A registry of the built-ins (always registered, through argonishche's own entry points),
    the installed plugins (unless not *installed*) and *extra* fake ones."""
    eps = (builtin_entry_points() if installed else own_entry_points()) + list(extra)
    return _registry.Registry(environ=environ or {}, plugin_entry_points=eps)


def state_of(reg, name):
    """The report record of *name* (a backend, plugin or refused allocator) in *reg*."""
    return {record.name: record for record in reg.report()}[name]


def plugin_of(reg, name):
    """The record of the plugin (entry point) *name* in *reg*; there must be exactly one."""
    records = [p for p in reg.plugins if p.name == name]
    assert len(records) == 1, reg.plugins
    return records[0]


def builtin_choice(algorithm="argon2"):
    """What the built-in backends alone select on this CPU."""
    return make_registry().selected_name(algorithm)


ROOT = pathlib.Path(__file__).resolve().parents[1]  # the repository (this file is tests/support.py)
#: Harnesses and scripts that tests run or import, but that are not tests themselves.
TOOLS = ROOT / "tools"
REF_SOURCE = ROOT / "backends" / "ref.c"


def load_tool(name: str) -> types.ModuleType:
    """The module of ``tools/<name>.py``, imported once under *name* (tools/ is not on
    sys.path: its scripts are run by tox envs, and some are imported by tests)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


@contextlib.contextmanager
def compiled_backend(directory, module_name: str, source: str, *, name: str,
                     description: str, cpu_features=(), declared=None, priority: int = 99):
    """A real backend module compiled from C *source* with the plugin authors' helper (for
    *cpu_features*) into *directory*, importable while the context lasts; yields its descriptor
    (declaring *declared* features, default the same).  Skips the test without a C compiler."""
    import pytest
    from argonishche.build import backend_ffibuilder

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build a backend module for the test")
    path = pathlib.Path(directory) / f"{module_name}_source.c"  # cffi writes {module_name}.c
    path.write_text(source)
    backend_ffibuilder(module_name, [str(path)], cpu_features=cpu_features).compile(
        tmpdir=str(directory))
    sys.path.insert(0, str(directory))
    try:
        yield hookspecs.Backend(name=name, description=description, kernel_module=module_name,
                                cpu_features=frozenset(cpu_features if declared is None
                                                       else declared), priority=priority)
    finally:
        sys.path.remove(str(directory))
