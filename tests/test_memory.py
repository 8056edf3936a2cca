"""Argon2 work memory: the allocators, wiping, caller buffers, hash_many and the allocator hook.

Costs stay small (m <= 4096 KiB).  What must not disturb this process (an mlock refused for real,
a 4 TiB allocation, an environment variable read at start-up, a peak-RSS measurement) runs in a
subprocess.  Tests that look inside an arena (``_allocators.BUILTIN[1]``) trim every allocator
first, so what other tests left cached cannot blur what they see.
"""

from __future__ import annotations

import base64
import errno
import mmap
import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

import argonishche
from argonishche import (
    Allocator,
    ArgonishcheMemoryError,
    BackendError,
    ParameterError,
    ParameterTypeError,
    PasswordHasher,
    VerifyMismatchError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
)
from argonishche import _allocators, _registry
from argonishche._core import ffi
from argonishche._argon2 import params_of
from fakes import FakeEntryPoint, allocator_plugin, make_registry

BUILTIN_NAMES = ("system", "arena", "hugepages", "locked")
SYSTEM, ARENA, HUGEPAGES, LOCKED = _allocators.BUILTIN
PASSWORD = b"password"
SALT = b"somesalt"
SMALL = dict(time_cost=1, memory_cost=32, parallelism=1)
# password "password", salt "somesalt", Argon2id v=19, t=1, m=32, p=1 (phc-winner-argon2)
KNOWN_TAG = base64.b64decode("MBqPu0xZXFIeZ1LJialS1H4ezQY9ie689ohyiGdbVMg=")
SLACK = 63
REGISTERED = "Registered: arena, hugepages, locked, system"



# ---- helpers --------------------------------------------------------------------------------


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
    return 4 * parallelism * (memory_cost // (4 * parallelism))


def run_python(code: str, **environ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in (_registry.ALLOCATOR_ENV, _allocators.ARENA_MAX_ENV)}
    env.update(environ)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, env=env)


def vm_locked_kib() -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmLck:"):
                    return int(line.split()[1])
    except OSError:
        pass
    pytest.skip("no VmLck in /proc/self/status")


def state_of(reg, name):
    return {record.name: record for record in reg.report()}[name]


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


@pytest.fixture
def trimmed():
    """Every allocator's cache returned to the OS before (and after) the test."""
    argonishche.trim_memory()
    yield
    argonishche.trim_memory()


@pytest.fixture
def acquire_log(monkeypatch):
    """Names of the built-in allocators asked for memory, in order."""
    log = []
    for cls in (_allocators.SystemAllocator, _allocators.ArenaAllocator,
                _allocators.HugePagesAllocator):
        def spy(self, size, _original=cls.acquire):
            log.append(self.name)
            return _original(self, size)
        monkeypatch.setattr(cls, "acquire", spy)
    return log


@pytest.fixture
def install(monkeypatch):
    """Make a registry the process-wide one for the test."""
    def installer(reg):
        monkeypatch.setattr(_registry, "_instance", reg)
        return reg
    return installer


# ---- every allocator gives the same tag -----------------------------------------------------


@pytest.mark.parametrize("type_", ["d", "i", "id"])
@pytest.mark.parametrize("parallelism, threads", [(1, 1), (4, 1), (4, 4)])
def test_every_builtin_allocator_gives_argon2_cffi_tag(type_, parallelism, threads,
                                                       acquire_log):
    low_level = pytest.importorskip("argon2.low_level")
    # m=67 rounds down to m'=64 for both p=1 and p=4: the rounding must agree too.
    costs = dict(time_cost=2, memory_cost=67, parallelism=parallelism)
    expected = low_level.hash_secret_raw(PASSWORD, SALT, hash_len=32, version=19,
                                         type=getattr(low_level.Type, type_.upper()), **costs)
    for name in BUILTIN_NAMES:
        tag = argon2_hash(PASSWORD, SALT, type=type_, threads=threads, allocator=name, **costs)
        assert tag == expected, name
        assert acquire_log[-1] == name
    assert acquire_log == list(BUILTIN_NAMES)


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_password_hasher_uses_its_allocator(name, acquire_log):
    argon2 = pytest.importorskip("argon2")
    salt = bytes(range(16))
    hasher = PasswordHasher(time_cost=2, memory_cost=64, parallelism=2, allocator=name)
    encoded = hasher.hash("pässword", salt=salt)
    assert encoded == argon2.low_level.hash_secret(
        "pässword".encode(), salt, time_cost=2, memory_cost=64, parallelism=2, hash_len=32,
        type=argon2.low_level.Type.ID, version=19).decode("ascii")
    assert hasher.verify(encoded, "pässword") is True
    with pytest.raises(VerifyMismatchError):
        hasher.verify(encoded, "password")
    assert acquire_log == [name] * 3
    assert argon2.PasswordHasher().verify(encoded, "pässword") is True


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_allocator_environment_variable_selects_the_allocator(name):
    result = run_python("""
        import argonishche
        from argonishche import _allocators
        print("selected", argonishche._registry.get().allocator().name)
        used = []
        for allocator in _allocators.BUILTIN:
            def spy(size, _original=allocator.acquire, _name=allocator.name):
                used.append(_name)
                return _original(size)
            allocator.acquire = spy
        costs = dict(time_cost=1, memory_cost=32, parallelism=1)
        print("tag", argonishche.argon2_hash(b"password", b"somesalt", **costs).hex())
        hasher = argonishche.PasswordHasher(**costs)
        assert hasher.verify(hasher.hash("pw"), "pw")
        print("used", ",".join(used))
        print("arena", _allocators.BUILTIN[1].cached_bytes())
        print("locked", _allocators.BUILTIN[3].cached_bytes())
        """, ARGONISHCHE_ALLOCATOR=name)
    assert result.returncode == 0, result.stderr
    out = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert out["selected"] == name
    assert out["tag"] == KNOWN_TAG.hex()
    assert out["used"] == ",".join([name] * 3)
    # Only the arena allocators keep memory between hashes, and only the one in use.
    assert (int(out["arena"]) > 0) == (name == "arena")
    assert (int(out["locked"]) > 0) == (name == "locked")


def test_unknown_allocator_argument_is_an_error_listing_the_registered_ones():
    for call in (lambda: argon2_hash(PASSWORD, SALT, allocator="nosuch", **SMALL),
                 lambda: argon2_hash_encoded(PASSWORD, SALT, allocator="nosuch", **SMALL),
                 lambda: argon2_verify(argon2_hash_encoded(PASSWORD, SALT, **SMALL), PASSWORD,
                                       allocator="nosuch"),
                 lambda: PasswordHasher(**SMALL, allocator="nosuch").hash("pw")):
        with pytest.raises(BackendError) as info:
            call()
        message = str(info.value)
        assert "'nosuch'" in message and REGISTERED in message
        assert _registry.ALLOCATOR_ENV not in message  # the argument, not the environment


def test_unknown_allocator_environment_variable_is_an_error_naming_it():
    result = run_python("""
        import argonishche
        try:
            argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=32,
                                    parallelism=1)
        except argonishche.BackendError as exc:
            print("error:", exc)
        # an explicit allocator still works
        print(argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=32,
                                      parallelism=1, allocator="system").hex())
        """, ARGONISHCHE_ALLOCATOR="nosuch")
    assert result.returncode == 0, result.stderr
    error, tag = result.stdout.splitlines()
    assert error.startswith("error: allocator 'nosuch' (ARGONISHCHE_ALLOCATOR)")
    assert REGISTERED in error
    assert tag == KNOWN_TAG.hex()


# ---- wiping ---------------------------------------------------------------------------------


def test_default_wipe_zeroes_caller_memory():
    memory = bytearray(argonishche.memory_size(64, 2))
    expected = argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=64, parallelism=2,
                           allocator="system")
    assert argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=64, parallelism=2,
                       memory=memory) == expected
    assert memory == bytes(len(memory))


def test_wipe_false_leaves_caller_memory_as_the_hash_left_it():
    memory = bytearray(argonishche.memory_size(64, 2))
    argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=64, parallelism=2, memory=memory,
                wipe=False)
    assert any(memory)
    # at least most of the 64 blocks were written: more than half the bytes are non-zero
    assert len(memory) - memory.count(0) > len(memory) // 2


def test_wipe_callback_gets_the_unwiped_memory_and_what_it_writes_stays():
    memory = bytearray(argonishche.memory_size(32))
    calls = []

    def wipe(view):
        calls.append(view)
        assert isinstance(view, memoryview) and not view.readonly
        assert view.obj is memory and view.nbytes == len(memory)
        assert any(view)  # not wiped before the callback sees it
        view[:] = b"\xa5" * view.nbytes

    assert argon2_hash(PASSWORD, SALT, memory=memory, wipe=wipe, **SMALL) == KNOWN_TAG
    assert len(calls) == 1
    assert memory == b"\xa5" * len(memory)
    with pytest.raises(ValueError):  # the view is released once the callback returns
        calls[0][0]


def test_wipe_callback_with_an_allocator_sees_the_allocator_memory(trimmed):
    seen = []

    def wipe(view):
        seen.append((view.nbytes, any(view), ARENA._local.arena.busy))
        view[:4] = b"WIPE"
        view[4:] = bytes(view.nbytes - 4)

    assert argon2_hash(PASSWORD, SALT, allocator="arena", wipe=wipe, **SMALL) == KNOWN_TAG
    assert seen == [(needed(32), True, True)]
    mapping = ARENA._local.arena.mapping
    assert mapping[:4] == b"WIPE" and not any(mapping[4:])
    assert not ARENA._local.arena.busy


def test_wipe_callback_with_the_system_allocator_is_a_parameter_error():
    called = []
    with pytest.raises(ParameterError, match="'system' allocates in C"):
        argon2_hash(PASSWORD, SALT, allocator="system", wipe=called.append, **SMALL)
    assert called == []


@pytest.mark.parametrize("wipe", ["yes", 1, None, b""])
def test_wipe_must_be_true_false_or_callable(wipe):
    with pytest.raises(ParameterTypeError, match="wipe must be True, False or a callable"):
        argon2_hash(PASSWORD, SALT, wipe=wipe, **SMALL)
    with pytest.raises(ParameterTypeError, match="wipe"):
        PasswordHasher(**SMALL, wipe=wipe).hash("pw")


def test_default_wipe_zeroes_the_arena_mapping(trimmed):
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG
    mapping = ARENA._local.arena.mapping
    assert len(mapping) == needed(32)
    assert mapping[:] == bytes(len(mapping))


def test_wipe_false_leaves_the_arena_mapping_unwiped(trimmed):
    assert argon2_hash(PASSWORD, SALT, allocator="arena", wipe=False, **SMALL) == KNOWN_TAG
    mapping = ARENA._local.arena.mapping
    assert any(mapping[:])
    # the next default hash reuses the mapping and leaves it zeroed again
    argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL)
    assert ARENA._local.arena.mapping[:] == bytes(needed(32))


def test_wipe_callback_that_raises_does_not_leak_the_arena(install):
    class TestArena(_allocators.ArenaAllocator):
        name = "test-arena"
    arena = TestArena()
    install(make_registry(FakeEntryPoint("zz-test-arena", allocator_plugin(arena))))

    def failing(view):
        raise RuntimeError("callback failed")
    with pytest.raises(RuntimeError, match="callback failed"):
        argon2_hash(PASSWORD, SALT, allocator="test-arena", wipe=failing, **SMALL)
    assert not arena._local.arena.busy
    sizes = []
    argon2_hash(PASSWORD, SALT, allocator="test-arena", wipe=lambda v: sizes.append(v.nbytes),
                **SMALL)
    assert sizes == [needed(32)]
    assert arena.trim() == needed(32)


# ---- caller memory --------------------------------------------------------------------------


def numpy_buffer(n):
    numpy = pytest.importorskip("numpy")
    return numpy.zeros(n, dtype=numpy.uint8)


@pytest.mark.parametrize("make", [
    bytearray,
    lambda n: mmap.mmap(-1, n),
    numpy_buffer,
    lambda n: memoryview(bytearray(n + 5))[5:],
    lambda n: buffer_at(n, 1),   # the worst start: 63 bytes before the first 64-byte boundary
    lambda n: buffer_at(n, 0),
], ids=["bytearray", "mmap", "numpy", "unaligned-slice", "address-1-mod-64", "aligned"])
@pytest.mark.parametrize("parallelism", [1, 4])
def test_caller_memory_of_memory_size_bytes_works(make, parallelism):
    costs = dict(time_cost=2, memory_cost=67, parallelism=parallelism)
    expected = argon2_hash(PASSWORD, SALT, allocator="system", **costs)
    size = argonishche.memory_size(67, parallelism)
    memory = make(size)
    try:
        assert argon2_hash(PASSWORD, SALT, memory=memory, **costs) == expected
        assert argon2_verify(argon2_hash_encoded(PASSWORD, SALT, **costs), PASSWORD,
                             memory=memory) is True
        assert not any(memoryview(memory).cast("B"))  # wiped, and only inside the buffer
    finally:
        if isinstance(memory, mmap.mmap):
            memory.close()  # BufferError if the driver still held it


def test_caller_memory_one_byte_short_is_an_error_naming_the_size():
    size = argonishche.memory_size(64, 2)
    with pytest.raises(ParameterError) as info:
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=2,
                    memory=buffer_at(size - 1, 1))
    message = str(info.value)
    assert f"needs {size}" in message and f"memory is {size - 1} bytes" in message
    assert "memory_size" in message


def test_caller_memory_one_byte_short_is_refused_wherever_it_starts():
    size = argonishche.memory_size(64, 2)
    with pytest.raises(ParameterError, match=f"needs {size}"):
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=2,
                    memory=buffer_at(size - 1, 0))


@pytest.mark.parametrize("make", [bytes, lambda n: memoryview(bytearray(n)).toreadonly(),
                                  lambda n: n], ids=["bytes", "readonly-view", "int"])
def test_caller_memory_must_be_a_writable_buffer(make):
    with pytest.raises(ParameterTypeError, match="memory must be a writable buffer"):
        argon2_hash(PASSWORD, SALT, memory=make(argonishche.memory_size(32)), **SMALL)


def test_memory_and_allocator_together_is_an_error(acquire_log):
    memory = bytearray(argonishche.memory_size(32))
    called = []
    with pytest.raises(ParameterError, match="memory= or allocator="):
        argon2_hash(PASSWORD, SALT, memory=memory, allocator="arena", wipe=called.append,
                    **SMALL)
    assert acquire_log == [] and called == [] and not any(memory)


@pytest.mark.parametrize("memory_cost, parallelism", [
    (8, 1), (32, 1), (33, 1), (35, 1), (67, 4), (100, 3), (4096, 4), (4097, 7), (2**20, 16),
    (2**32 - 1, 1), (2**32 - 1, 3)])
def test_memory_size_is_rounded_blocks_plus_alignment_slack(memory_cost, parallelism):
    expected = mprime(memory_cost, parallelism) * 1024 + 63
    assert argonishche.memory_size(memory_cost, parallelism) == expected
    if parallelism == 1:
        assert argonishche.memory_size(memory_cost) == expected


def test_memory_size_checks_its_parameters():
    with pytest.raises(ParameterError, match="memory_cost"):
        argonishche.memory_size(15, 2)  # m must be at least 8p
    with pytest.raises(ParameterError, match="parallelism"):
        argonishche.memory_size(64, 0)


# ---- allocator failure ----------------------------------------------------------------------


def test_arena_mapping_failure_propagates_and_the_next_hash_works(monkeypatch, trimmed):
    failures = []
    original = ARENA._new_mapping

    def fail_once(size):
        if not failures:
            failures.append(size)
            raise ArgonishcheMemoryError(f"could not map {size} bytes of Argon2 work memory")
        return original(size)

    monkeypatch.setattr(ARENA, "_new_mapping", fail_once)
    with pytest.raises(ArgonishcheMemoryError, match=f"could not map {needed(32)} bytes"
                       ) as info:
        argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL)
    assert isinstance(info.value, MemoryError)
    assert failures == [needed(32)]
    arena = ARENA._local.arena
    assert not arena.busy and arena.mapping is None and ARENA.cached_bytes() == 0
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG
    assert ARENA.cached_bytes() == needed(32)


def test_plugin_allocator_failure_propagates_and_buffers_are_always_released(install):
    class Failing(Pool):
        def acquire(self, size):
            raise ArgonishcheMemoryError(f"pool empty: {size} bytes wanted")

    failing, short = Failing("failing"), Pool("short", short_by=1)
    install(make_registry(FakeEntryPoint("zz-pools", allocator_plugin(failing, short))))
    with pytest.raises(MemoryError, match=f"pool empty: {needed(32)} bytes"):
        argon2_hash(PASSWORD, SALT, allocator="failing", **SMALL)
    assert failing.released == []  # nothing acquired, nothing to release
    # A buffer the driver refuses is still handed back.
    with pytest.raises(ParameterError, match="needs"):
        argon2_hash(PASSWORD, SALT, allocator="short", **SMALL)
    assert len(short.acquired) == 1 and short.released == short.acquired
    assert argon2_hash(PASSWORD, SALT, **SMALL) == KNOWN_TAG


def test_locked_allocator_refused_mlock_is_a_clear_error(monkeypatch, trimmed):
    real_lib, real_map, mappings = _allocators.lib, _allocators._map, []

    class RefusingLib:
        def mlock(self, address, length):
            ffi.errno = errno.ENOMEM
            return -1

        def __getattr__(self, name):
            return getattr(real_lib, name)

    def recording_map(size, **options):
        mappings.append(real_map(size, **options))
        return mappings[-1]

    monkeypatch.setattr(_allocators, "lib", RefusingLib())
    monkeypatch.setattr(_allocators, "_map", recording_map)
    with pytest.raises(ArgonishcheMemoryError, match="RLIMIT_MEMLOCK") as info:
        argon2_hash(PASSWORD, SALT, allocator="locked", **SMALL)
    assert isinstance(info.value, MemoryError)
    assert str(needed(32)) in str(info.value)
    assert len(mappings) == 1 and mappings[0].closed
    assert LOCKED.cached_bytes() == 0 and not LOCKED._local.arena.busy
    monkeypatch.undo()
    assert argon2_hash(PASSWORD, SALT, allocator="locked", **SMALL) == KNOWN_TAG


def test_locked_allocator_with_no_memlock_room_is_a_clear_error():
    result = run_python("""
        import os, resource
        import argonishche
        costs = dict(time_cost=1, memory_cost=32, parallelism=1)
        # everything loaded while privileged; then no RLIMIT_MEMLOCK room and no CAP_IPC_LOCK
        expected = argonishche.argon2_hash(b"password", b"somesalt", allocator="system", **costs)
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
        if os.geteuid() == 0:  # root's CAP_IPC_LOCK ignores the limit: become nobody
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        try:
            argonishche.argon2_hash(b"password", b"somesalt", allocator="locked", **costs)
        except argonishche.ArgonishcheMemoryError as exc:
            print("refused:", exc)
        else:
            print("locked anyway")
        print("cached:", argonishche._allocators.BUILTIN[3].cached_bytes())
        assert argonishche.argon2_hash(b"password", b"somesalt", allocator="arena",
                                       **costs) == expected
        """)
    if "locked anyway" in result.stdout:
        pytest.skip("mlock cannot be made to fail here")
    assert result.returncode == 0, result.stderr
    refused, cached = result.stdout.splitlines()
    assert refused.startswith(f"refused: could not lock {needed(32)} bytes")
    assert "RLIMIT_MEMLOCK" in refused
    assert cached == "cached: 0"


def test_driver_out_of_memory_is_a_memory_error_naming_the_size():
    result = run_python("""
        import resource
        import argonishche
        # 64 GiB of address space: ample for Python, and 4 TiB cannot be had whatever the
        # overcommit policy.
        resource.setrlimit(resource.RLIMIT_AS, (64 << 30, 64 << 30))
        costs = dict(time_cost=1, parallelism=1)
        small = argonishche.argon2_hash(b"password", b"somesalt", memory_cost=32, **costs)
        for name in ("system", "arena", "hugepages", "locked"):
            try:
                argonishche.argon2_hash(b"password", b"somesalt", memory_cost=2**32 - 1,
                                        allocator=name, **costs)
            except argonishche.ArgonishcheMemoryError as exc:
                assert isinstance(exc, MemoryError)
                print(name, exc, sep="|")
            assert argonishche.argon2_hash(b"password", b"somesalt", memory_cost=32,
                                           allocator=name, **costs) == small
        print("cached", argonishche._allocators.BUILTIN[1].cached_bytes())
        """)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    errors = dict(line.split("|", 1) for line in lines[:-1])
    assert sorted(errors) == sorted(BUILTIN_NAMES)
    size = mprime(2**32 - 1, 1) * 1024
    for name in ("system", "arena"):  # beyond the arena bound: the C driver's malloc
        assert errors[name].startswith(f"could not allocate {size} bytes ({size / 2**20:.1f} MiB)")
        assert "memory_cost=4294967295 KiB, parallelism=1" in errors[name]
    # locked has no unlocked fallback: it refuses, naming the size and the bound to raise
    assert errors["locked"].startswith(f"the hash needs {size} bytes of locked memory")
    assert "ARGONISHCHE_ARENA_MAX_MIB" in errors["locked"]
    assert errors["hugepages"].startswith("could not map ")
    assert "bytes of Argon2 work memory" in errors["hugepages"]
    assert lines[-1] == f"cached {needed(32)}"  # the failed hash left the arena as it was


# ---- the arena ------------------------------------------------------------------------------


def test_arena_is_reused_on_one_thread_and_grows_for_a_bigger_hash(trimmed):
    argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=1, allocator="arena")
    first = ARENA._local.arena.mapping
    assert len(first) == needed(64)
    argon2_hash(b"other", SALT, time_cost=1, memory_cost=64, parallelism=1, allocator="arena")
    assert ARENA._local.arena.mapping is first
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG  # smaller fits
    assert ARENA._local.arena.mapping is first and not first.closed
    assert ARENA.cached_bytes() == needed(64)

    bigger = argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=256, parallelism=2,
                         allocator="arena")
    assert bigger == argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=256, parallelism=2,
                                 allocator="system")
    grown = ARENA._local.arena.mapping
    assert grown is not first and first.closed
    assert len(grown) == needed(256, 2) == ARENA.cached_bytes()


def test_arena_bound_falls_back_to_the_c_allocator(install):
    class SmallArena(_allocators.ArenaAllocator):
        name = "small-arena"
    arena = SmallArena(max_bytes=needed(64))
    install(make_registry(FakeEntryPoint("zz-small", allocator_plugin(arena))))
    try:
        assert argon2_hash(PASSWORD, SALT, allocator="small-arena", **SMALL) == KNOWN_TAG
        mapping = arena._local.arena.mapping
        big = dict(time_cost=1, memory_cost=128, parallelism=1)
        assert argon2_hash(PASSWORD, SALT, allocator="small-arena", **big) == argon2_hash(
            PASSWORD, SALT, allocator="system", **big)
        assert arena._local.arena.mapping is mapping and arena.cached_bytes() == needed(32)
        assert arena.acquire(needed(64) + 1) is None
        with pytest.raises(ParameterError, match="'small-arena' allocates in C"):
            argon2_hash(PASSWORD, SALT, allocator="small-arena", wipe=lambda view: None, **big)
        # at the bound itself the arena still serves
        argon2_hash(PASSWORD, SALT, allocator="small-arena", time_cost=1, memory_cost=64,
                    parallelism=1)
        assert arena.cached_bytes() == needed(64)
    finally:
        arena.trim()


def test_arena_max_environment_variable_bounds_the_builtin_arenas():
    result = run_python("""
        import argonishche
        from argonishche import _allocators
        print(_allocators.BUILTIN[1].max_bytes, _allocators.BUILTIN[3].max_bytes)
        argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=1024,
                                parallelism=1, allocator="arena")
        print(_allocators.BUILTIN[1].cached_bytes())
        argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=2048,
                                parallelism=1, allocator="arena")
        print(_allocators.BUILTIN[1].cached_bytes())
        """, ARGONISHCHE_ARENA_MAX_MIB="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(2**20)] * 2 + [str(2**20)] * 2


def test_trim_memory_returns_cached_bytes(trimmed):
    assert argonishche.trim_memory() == 0
    argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=128,
                parallelism=1)
    argon2_hash(PASSWORD, SALT, allocator="locked", **SMALL)
    mapping = ARENA._local.arena.mapping
    cached = ARENA.cached_bytes() + LOCKED.cached_bytes()
    assert cached == needed(128) + needed(32)
    assert argonishche.trim_memory() == cached
    assert ARENA.cached_bytes() == LOCKED.cached_bytes() == 0
    assert mapping.closed and ARENA._local.arena.mapping is None
    assert argonishche.trim_memory() == 0
    assert argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL) == KNOWN_TAG


def test_locked_allocator_locks_its_arena_in_ram(trimmed):
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    if os.geteuid() != 0 and soft != resource.RLIM_INFINITY and soft < 2**21:
        pytest.skip("RLIMIT_MEMLOCK below 2 MiB and not root")
    before = vm_locked_kib()
    argon2_hash(PASSWORD, SALT, allocator="locked", time_cost=1, memory_cost=1024,
                parallelism=1)
    assert vm_locked_kib() - before >= 1024
    assert argonishche.trim_memory() == needed(1024)
    assert vm_locked_kib() == before
    argon2_hash(PASSWORD, SALT, allocator="arena", time_cost=1, memory_cost=1024,
                parallelism=1)
    assert vm_locked_kib() == before  # the plain arena is not locked


def test_locked_allocator_never_hands_out_unlocked_memory():
    locked = _allocators.LockedAllocator(max_bytes=needed(32))
    try:
        try:
            buffer = locked.acquire(needed(64))
        except ArgonishcheMemoryError:
            return  # refusing clearly is fine too
        assert buffer is not None  # None: the C driver mallocs unlocked memory
        locked.release(buffer)
    finally:
        locked.trim()


def test_arenas_of_finished_threads_are_unmapped_when_a_new_thread_starts_one():
    mappings = {}

    def hash_on_a_thread(key):
        argon2_hash(PASSWORD, SALT, allocator="arena", **SMALL)
        mappings[key] = ARENA._local.arena.mapping

    first = threading.Thread(target=hash_on_a_thread, args=("first",))
    first.start()
    first.join()
    old = mappings["first"]
    assert not old.closed  # kept after its thread ended...
    second = threading.Thread(target=hash_on_a_thread, args=("second",))
    second.start()
    second.join()
    assert old.closed  # ...until a new thread made its arena
    assert all(arena.mapping is not old for arena in ARENA._arenas)
    assert all(arena.thread is not first for arena in ARENA._arenas)
    assert not mappings["second"].closed
    argonishche.trim_memory()


def test_threads_hashing_at_once_use_different_arenas(trimmed):
    both_inside = threading.Barrier(2, timeout=20)
    seen, results = {}, {}

    def wipe(view):
        seen[threading.get_ident()] = (ARENA._local.arena.mapping, address_of(view))
        view[:] = bytes(view.nbytes)
        both_inside.wait()  # each thread holds its memory while the other hashes

    def work(key):
        results[key] = argon2_hash(PASSWORD, SALT, allocator="arena", wipe=wipe, **SMALL)

    threads = [threading.Thread(target=work, args=(key,)) for key in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {0: KNOWN_TAG, 1: KNOWN_TAG}
    (mapping_a, address_a), (mapping_b, address_b) = seen.values()
    assert mapping_a is not mapping_b and address_a != address_b
    assert abs(address_a - address_b) >= needed(32)  # not even overlapping


# ---- hugepages ------------------------------------------------------------------------------


def test_hugepages_buffer_is_2mib_aligned_and_release_unmaps_it():
    size = needed(4096)
    view = HUGEPAGES.acquire(size)
    assert isinstance(view, memoryview) and not view.readonly and len(view) == size
    assert address_of(view) % _allocators.HUGE_PAGE == 0
    view[-1:] = b"x"  # the whole requested size is usable
    mapping = view.obj
    assert isinstance(mapping, mmap.mmap) and not mapping.closed
    HUGEPAGES.release(view)
    assert mapping.closed
    with pytest.raises(ValueError):
        view[0]
    assert HUGEPAGES.cached_bytes() == 0


def test_hugepages_hash_runs_in_aligned_memory():
    addresses = []

    def wipe(view):
        addresses.append(address_of(view))
        view[:] = bytes(view.nbytes)

    assert argon2_hash(PASSWORD, SALT, allocator="hugepages", wipe=wipe, **SMALL) == KNOWN_TAG
    assert len(addresses) == 1 and addresses[0] % _allocators.HUGE_PAGE == 0


# ---- hash_many ------------------------------------------------------------------------------

MANY_COSTS = dict(time_cost=1, memory_cost=64, parallelism=2)
PASSWORDS = ["alpha", b"beta", "gämma", b"", "", "pässwörd ☃", b"\x00\xff", "x" * 100, "9",
             b"10"]


def check_hashes(passwords, encoded, costs=MANY_COSTS, salt_len=16):
    argon2 = pytest.importorskip("argon2")
    assert len(encoded) == len(passwords)
    prefix = "$argon2id$v=19$m={memory_cost},t={time_cost},p={parallelism}$".format(**costs)
    salts = set()
    for password, phc in zip(passwords, encoded, strict=True):
        assert phc.startswith(prefix)
        assert argon2_verify(phc, password) is True
        assert argon2.PasswordHasher().verify(phc, password) is True
        salt = params_of(phc)[1]
        assert len(salt) == salt_len
        salts.add(salt)
    assert len(salts) == len(passwords)  # a fresh salt each


def test_hash_many_results_in_order_and_verifiable():
    encoded = argonishche.hash_many(PASSWORDS, workers=3, chunk_size=2, **MANY_COSTS)
    check_hashes(PASSWORDS, encoded)
    with pytest.raises(VerifyMismatchError):  # each result belongs to its own password
        argon2_verify(encoded[0], PASSWORDS[1])


def test_hash_many_accepts_any_iterable_and_empty_input():
    progress = []
    assert argonishche.hash_many([], progress=lambda *a: progress.append(a)) == []
    assert argonishche.hash_many(iter(()), **MANY_COSTS) == []
    assert progress == []
    generated = (f"pw{i}" for i in range(5))
    check_hashes([f"pw{i}" for i in range(5)],
                 argonishche.hash_many(generated, workers=2, **MANY_COSTS))


def test_hash_many_progress_counts_up_to_the_total():
    calls = []
    lock = threading.Lock()

    def progress(done, total):
        with lock:
            calls.append((done, total))

    argonishche.hash_many([f"pw{i}" for i in range(11)], workers=2, chunk_size=3,
                          progress=progress, **MANY_COSTS)
    dones = [done for done, _ in calls]
    assert {total for _, total in calls} == {11}
    assert dones == sorted(set(dones)) and dones[-1] == 11
    assert len(calls) == 4  # one per chunk: 3 + 3 + 3 + 2


def test_hash_many_on_a_thread_pool_leaves_the_pool_running():
    with ThreadPoolExecutor(max_workers=2) as pool:
        encoded = argonishche.hash_many(PASSWORDS, executor=pool, **MANY_COSTS)
        assert pool.submit(len, "still open").result() == 10
    check_hashes(PASSWORDS, encoded)


def test_hash_many_on_a_process_pool():
    with ProcessPoolExecutor(2) as pool:
        encoded = argonishche.hash_many(PASSWORDS[:6], executor=pool, chunk_size=2,
                                        **MANY_COSTS)
    check_hashes(PASSWORDS[:6], encoded)


@pytest.mark.parametrize("option", [dict(workers=0), dict(chunk_size=0), dict(workers=-1),
                                    dict(chunk_size=-3), dict(salt_len=7)])
def test_hash_many_refuses_bad_options(option):
    with pytest.raises(ParameterError, match=next(iter(option))):
        argonishche.hash_many(["a", "b"], **MANY_COSTS, **option)


def test_hash_many_chunk_size_larger_than_the_input_is_one_chunk():
    check_hashes(["a", "b"], argonishche.hash_many(["a", "b"], chunk_size=8, **MANY_COSTS))


def test_hash_many_passes_allocator_and_wipe_through():
    with pytest.raises(BackendError, match="'nosuch'"):
        argonishche.hash_many(["a"], allocator="nosuch", **MANY_COSTS)
    with pytest.raises(ParameterError, match="'system' allocates in C"):
        argonishche.hash_many(["a"], allocator="system", wipe=lambda view: None, **MANY_COSTS)


def test_password_hasher_hash_many_uses_the_hasher_parameters(acquire_log):
    hasher = PasswordHasher(time_cost=1, memory_cost=48, parallelism=3, hash_len=20,
                            salt_len=12, type="i", allocator="hugepages")
    encoded = hasher.hash_many(PASSWORDS, workers=2)
    assert len(encoded) == len(PASSWORDS)
    for password, phc in zip(PASSWORDS, encoded, strict=True):
        assert phc.startswith("$argon2i$v=19$m=48,t=1,p=3$")
        assert hasher.check_needs_rehash(phc) is False
        assert hasher.verify(phc, password) is True
        params, salt, tag = params_of(phc)
        assert len(salt) == 12 and len(tag) == 20
    assert acquire_log == ["hugepages"] * (2 * len(PASSWORDS))


def test_hash_many_peak_memory_is_one_hash_per_worker():
    result = run_python("""
        import resource
        import argonishche
        costs = dict(time_cost=1, memory_cost=4096, parallelism=1)
        argonishche.argon2_hash(b"warm-up", b"somesalt", **costs)
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        encoded = argonishche.hash_many([f"pw{i}" for i in range(300)], workers=2, **costs)
        assert len(encoded) == 300 and len(set(encoded)) == 300
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline)
        """)
    assert result.returncode == 0, result.stderr
    growth_kib = int(result.stdout)
    assert growth_kib < 3 * (2 * 4096) + 16 * 1024


# ---- the allocator hookspec -----------------------------------------------------------------


def test_plugin_allocator_is_registered_and_used_by_name(install):
    pool = Pool("Pool")
    reg = install(make_registry(FakeEntryPoint("zz-pool", allocator_plugin(pool))))
    assert reg.allocator("pool") is pool and reg.allocator("POOL") is pool
    assert reg.allocators["pool"][1] == "fake-kernels 1.2"
    assert reg.allocator().name == _registry.DEFAULT_ALLOCATOR
    assert [reg.allocator(name) for name in BUILTIN_NAMES] == list(_allocators.BUILTIN)

    assert argon2_hash(PASSWORD, SALT, allocator="pool", **SMALL) == KNOWN_TAG
    assert [len(b) for b in pool.acquired] == [needed(32)] and pool.released == pool.acquired
    assert not any(pool.acquired[0])  # wiped by C before release
    views = []
    assert argon2_hash(PASSWORD, SALT, allocator="pool", wipe=lambda v: views.append(
        address_of(v)), **SMALL) == KNOWN_TAG
    assert views == [address_of(pool.acquired[1])] and any(pool.acquired[1])
    hasher = PasswordHasher(**SMALL, allocator="pool")
    assert hasher.verify(hasher.hash("pw"), "pw")
    assert len(pool.acquired) == len(pool.released) == 4
    with pytest.raises(BackendError, match="Registered: arena, hugepages, locked, pool, system"):
        argon2_hash(PASSWORD, SALT, allocator="nosuch", **SMALL)


def test_plugin_registering_a_non_allocator_is_load_failed_and_others_work():
    good = Pool("good")
    with pytest.warns(RuntimeWarning, match="not an argonishche.Allocator"):
        reg = make_registry(
            FakeEntryPoint("zz-bad", allocator_plugin(_allocators.SystemAllocator),
                           dist=("bad-allocators", "0.1")),
            FakeEntryPoint("zz-good", allocator_plugin(good)))
    record = state_of(reg, "zz-bad")
    assert record.state == "load-failed" and record.distribution == "bad-allocators 0.1"
    assert "argonishche_register_allocators" in record.reason
    assert reg.allocator("good") is good
    assert sorted(reg.allocators) == sorted([*BUILTIN_NAMES, "good"])
    assert reg.selected_name("argon2") == make_registry().selected_name("argon2")


def test_two_allocators_with_one_name_keep_the_first():
    first, second, impostor = Pool("pool"), Pool("POOL"), Pool("arena")
    with pytest.warns(RuntimeWarning) as warned:
        reg = make_registry(
            FakeEntryPoint("zz-a", allocator_plugin(first), dist=("pool-a", "1.0")),
            FakeEntryPoint("zz-b", allocator_plugin(second, impostor), dist=("pool-b", "2.0")))
    assert reg.allocator("pool") is first
    assert reg.allocator("arena") is ARENA  # a plugin cannot take a built-in's name
    messages = sorted(str(w.message) for w in warned)
    assert len(messages) == 2
    assert "'allocator arena' from pool-b 2.0" in messages[0]
    assert "already registered by argonishche " in messages[0]
    assert "'allocator pool' from pool-b 2.0" in messages[1]
    assert "already registered by pool-a 1.0" in messages[1]
    refused = [r for r in reg.report() if r.name.startswith("allocator ")]
    assert sorted((r.name, r.state, r.distribution) for r in refused) == [
        ("allocator arena", "load-failed", "pool-b 2.0"),
        ("allocator pool", "load-failed", "pool-b 2.0")]
