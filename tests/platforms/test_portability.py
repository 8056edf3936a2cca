"""The Python side without POSIX-only pieces, as on Windows, simulated on Linux.

Windows' ``mmap`` has no ``MAP_*``/``MADV_*`` constants and its ``mmap.mmap(fileno, length,
tagname=None, access=..., offset=0)`` takes no ``flags``/``prot``; Windows has no ``resource``
module and no ``os.register_at_fork``.  The C side is proven for Windows by tools/win_c (mingw +
wine); these tests take the attributes away here and check that the default paths never need
them.
"""

from __future__ import annotations

import mmap
import subprocess
import sys
import textwrap

import argonishche
import pytest
from argonishche import _allocators
from argonishche.vectors import ARGON2_VECTORS

POSIX_MMAP_NAMES = ("MAP_PRIVATE", "MAP_SHARED", "MAP_ANONYMOUS", "MAP_ANON", "MAP_POPULATE",
                    "MAP_NORESERVE", "PROT_READ", "PROT_WRITE", "MADV_DONTDUMP",
                    "MADV_HUGEPAGE", "MADV_NORMAL")

# RFC 9106 section 5.3: exercises every pass/slice/lane path of the driver, 32 KiB.
VECTOR = next(v for v in ARGON2_VECTORS if v.source.startswith("RFC 9106 Section 5.3"))


def _hash(vector, **kwargs):
    return argonishche.argon2_hash(
        vector.password, vector.salt, type=vector.type, version=vector.version,
        time_cost=vector.time_cost, memory_cost=vector.memory_cost,
        parallelism=vector.parallelism, hash_len=len(vector.tag), secret=vector.secret,
        associated_data=vector.associated_data, **kwargs)


@pytest.fixture
def windows_mmap(monkeypatch):
    """mmap as on Windows: no POSIX constants, no flags/prot arguments.  Yields the lengths
    of the mappings made through it."""
    made = []
    real = mmap.mmap

    def mmap_like_windows(fileno, length, tagname=None, access=mmap.ACCESS_DEFAULT, offset=0):
        assert fileno == -1, "anonymous mappings only"
        made.append(length)
        return real(fileno, length, access=access, offset=offset)

    for name in POSIX_MMAP_NAMES:
        monkeypatch.delattr(mmap, name, raising=False)
    monkeypatch.setattr(mmap, "mmap", mmap_like_windows)
    return made


def test_map_falls_back_without_posix_flags(windows_mmap):
    mapping = _allocators._map(1 << 20, populate=True, huge=True)
    try:
        assert len(mapping) == 1 << 20 and windows_mmap == [1 << 20]
        view = memoryview(mapping)
        view[0], view[-1] = 1, 2  # writable, private
        assert (view[0], view[-1]) == (1, 2)
        view.release()
    finally:
        mapping.close()


@pytest.mark.parametrize("allocator", ["arena", "hugepages"])
def test_python_visible_memory_without_posix_flags(windows_mmap, allocator):
    """A wipe callback makes the mapping allocators lend memory Python can see: the path that
    maps in Python (acquire/release), which must work with Windows' mmap."""
    seen = []
    tag = _hash(VECTOR, allocator=allocator, wipe=lambda view: seen.append(len(view)))
    assert tag == VECTOR.tag, VECTOR.source
    assert windows_mmap and seen  # the Windows-like mmap was used, and the callback ran


def test_default_allocator_needs_no_python_mmap(windows_mmap):
    """The default allocator (arena) maps in C (platform.h: mmap or VirtualAlloc)."""
    assert _hash(VECTOR) == VECTOR.tag, VECTOR.source
    assert windows_mmap == []


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_no_module_needs_resource_at_import_and_the_bench_runs_without_it():
    out = _run("""
        import importlib, io, pkgutil, sys
        sys.modules["resource"] = None  # as on Windows: import resource raises ImportError
        import argonishche
        for info in pkgutil.walk_packages(argonishche.__path__, "argonishche."):
            if info.name.endswith("__main__"):  # runs the command line
                continue
            try:
                importlib.import_module(info.name)
            except ImportError as exc:
                # Optional extras (django, matplotlib, argon2-cffi) may be missing here; resource
                # must never be what an import needs.
                assert exc.name != "resource", (info.name, exc)
        from argonishche._bench import suites
        from argonishche._bench.points import Point
        assert suites._peak_rss() == 0
        data = suites.bench_batch(Point("id", 1, 64, 1), count=2, workers=2, out=io.StringIO())
        assert data["peak_rss_bytes"] == 0, data
        print("ok")
        """)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_import_and_hash_without_any_posix_only_module():
    out = _run(f"""
        import mmap, os, sys
        sys.modules["resource"] = None
        for name in {POSIX_MMAP_NAMES!r}:
            if hasattr(mmap, name):
                delattr(mmap, name)
        # Windows' platform.machine() answers without os.uname; here it needs uname once, so
        # ask it first (it caches the answer) for cpu_gate's fallback to use.
        import platform
        platform.machine()
        del os.register_at_fork, os.uname
        import argonishche
        from argonishche.vectors import ARGON2_VECTORS
        v = ARGON2_VECTORS[0]
        tag = argonishche.argon2_hash(
            v.password, v.salt, type=v.type, version=v.version, time_cost=v.time_cost,
            memory_cost=v.memory_cost, parallelism=v.parallelism, hash_len=len(v.tag),
            secret=v.secret, associated_data=v.associated_data)
        assert tag == v.tag
        print("ok")
        """)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
