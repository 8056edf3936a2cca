"""argonishche._core's cffi declarations are made from the C headers (core/build_core.py): the
generator keeps what it must and drops what cffi cannot parse, and the compiled module exports
exactly the header's ARGONISHCHE_API functions."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from argonishche import _core
from wheel_audit import built_modules_without_libc

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORE_HEADER = ROOT / "core" / "csrc" / "argonishche_core.h"


def build_core_module():
    spec = importlib.util.spec_from_file_location("build_core_under_test",
                                                  ROOT / "core" / "build_core.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def api_functions(header: str) -> set[str]:
    return set(re.findall(r"^ARGONISHCHE_API\n[^;(]*?\b(\w+)\(", header, re.M))


def test_generator_keeps_typedefs_marked_functions_and_integer_constants():
    header = """
    #ifndef GUARD
    #define GUARD
    #define ANSWER 42  /* exact: cffi checks it */
    #define NEGATIVE (-3)
    #define FLAG (1u << 4)
    #define NAME "text"
    #define TWICE(x) ((x) * 2)
    #define LONG_MACRO(a) \\
        do { (void)(a); } while (0)
    typedef struct pair { int a[ANSWER]; } pair;  // trailing comment
    typedef void (*callback)(int x,
                             int y);
    ARGONISHCHE_API
    int exported(const pair *p,
                 size_t n);
    int not_exported(void);
    static inline int helper(int x) { return x; }
    #endif
    """
    cdef = build_core_module().cdef_from_headers([header])
    assert cdef.splitlines() == [
        "#define ANSWER 42",
        "#define NEGATIVE ...",
        "#define FLAG ...",
        "typedef struct pair { int a[ANSWER]; } pair;",
        "typedef void (*callback)(int x, int y);",
        "int exported(const pair *p, size_t n);",
    ]


def test_compiled_module_exports_exactly_the_headers_api():
    declared = api_functions(CORE_HEADER.read_text())
    assert {"argonishche_argon2_hash", "argonishche_blake2b_init", "argonishche_cpuid"} <= declared
    exported = {name for name in dir(_core.lib) if callable(getattr(_core.lib, name))}
    assert exported == declared


def test_generated_cdef_is_what_the_module_was_built_from():
    cdef = build_core_module().CDEF
    for name in api_functions(CORE_HEADER.read_text()):
        assert re.search(rf"\b{name}\(", cdef), name
    assert "ARGONISHCHE_API" not in cdef and "#ifndef" not in cdef


#: The C compilers the build must be warning-free with: gcc always (the default on Linux), clang
#: where it is on PATH.  ``ARGONISHCHE_REQUIRE_CLANG=1`` (``tox -e clang``) turns a missing clang
#: into a failure, so that env cannot pass by skipping what it is for.
COMPILERS = ("gcc", "clang")
REQUIRE_CLANG = os.environ.get("ARGONISHCHE_REQUIRE_CLANG", "").strip() not in ("", "0")
#: ``ARGONISHCHE_EXPECT_COMPILER=clang``: the installed compiled modules must be that compiler's
#: (``tox -e clang`` builds its wheel with CC=clang; without this check it could pass on gcc's).
EXPECT_COMPILER = os.environ.get("ARGONISHCHE_EXPECT_COMPILER", "").strip()
#: What each compiler writes to an object's .comment section (the linker keeps them all).
COMMENT_MARK = {"gcc": "GCC: (", "clang": "clang version"}
PLUGIN = ROOT / "plugins" / "argonishche-avx512"


def compiler(name: str) -> str:
    """*name* if it is on PATH; else a skip, or a failure where it is required."""
    if shutil.which(name) is None:
        if name == "gcc" or (name == "clang" and REQUIRE_CLANG):
            pytest.fail(f"{name} is not on PATH and this run requires it")
        pytest.skip(f"{name} is not on PATH")
    return name


def comment_section(path: pathlib.Path) -> str:
    """The .comment section of an ELF file: one line per compiler that made one of its objects."""
    readelf = shutil.which("readelf")
    assert readelf, "readelf (binutils, installed with gcc) is needed to read .comment"
    return subprocess.run([readelf, "-p", ".comment", str(path)], capture_output=True,
                          text=True, check=True).stdout


def build_ext(source: pathlib.Path, out: pathlib.Path, cc: str) -> str:
    """setup.py build_ext in *source* with CC=*cc* (setuptools then links with it too), into
    *out*: the same build setuptools runs for a wheel (setup.py's cffi_modules).  Its log."""
    env = {**os.environ, "CC": cc}
    env.pop("LDSHARED", None)  # derived from CC, so the linker is the same compiler
    run = subprocess.run([sys.executable, "setup.py", "build_ext", "--force",
                          "--build-lib", str(out / "lib"), "--build-temp", str(out / "temp")],
                         cwd=source, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout + run.stderr


def assert_compiled_cleanly_by(cc: str, log: str, sources: int) -> None:
    compiles = re.findall(r"^(\S+) .* -c (\S+\.c)\b", log, re.M)
    assert len(compiles) >= sources, log[-3000:]
    assert {pathlib.Path(program).name for program, _ in compiles} == {cc}, log[-3000:]
    links = re.findall(r"^(\S+) -shared ", log, re.M)
    assert links and {pathlib.Path(program).name for program in links} == {cc}, log[-3000:]
    assert "warning:" not in log, log[-5000:]


@pytest.mark.parametrize("name", COMPILERS)
def test_the_build_has_no_compiler_warnings(name, tmp_path):
    cc = compiler(name)
    log = build_ext(ROOT, tmp_path, cc)
    # The core's sources, cffi's wrappers and every backend's kernel file, all by *cc*.
    assert_compiled_cleanly_by(cc, log, sources=7)
    assert COMMENT_MARK[name] in comment_section(tmp_path / "lib" / "argonishche" /
                                                 "_core.abi3.so")
    # Linked with either compiler, every module names its libc, or auditwheel refuses the wheel.
    assert built_modules_without_libc(tmp_path / "lib") == []


@pytest.mark.parametrize("name", COMPILERS)
def test_the_avx512_plugin_builds_without_warnings(name, tmp_path):
    # Its build script imports argonishche.build: the installed argonishche's.
    cc = compiler(name)
    log = build_ext(PLUGIN, tmp_path, cc)
    assert_compiled_cleanly_by(cc, log, sources=2)  # src/avx512.c and cffi's wrapper
    assert COMMENT_MARK[name] in comment_section(tmp_path / "lib" / "argonishche_avx512" /
                                                 "_kernels.abi3.so")
    assert built_modules_without_libc(tmp_path / "lib") == []  # argonishche.build links libc


def installed_compiled_modules() -> list[pathlib.Path]:
    """The compiled modules of argonishche, its backends and the avx512 plugin if installed."""
    packages = ["argonishche", "argonishche_backends", "argonishche_avx512"]
    specs = [spec for spec in map(importlib.util.find_spec, packages) if spec is not None]
    found = [path for spec in specs for path in pathlib.Path(spec.origin).parent.rglob("*.so")]
    assert len(found) >= 7, found  # _core, _bench._clock and every built-in backend's
    return sorted(found)


@pytest.mark.skipif(not EXPECT_COMPILER, reason="ARGONISHCHE_EXPECT_COMPILER is not set")
def test_the_installed_modules_were_built_by_the_expected_compiler():
    assert EXPECT_COMPILER in COMMENT_MARK, f"ARGONISHCHE_EXPECT_COMPILER={EXPECT_COMPILER!r}"
    for path in installed_compiled_modules():
        comment = comment_section(path)
        assert COMMENT_MARK[EXPECT_COMPILER] in comment, (path, comment)
        if EXPECT_COMPILER == "gcc":  # gcc's mark is in clang's modules too (its crt*.o files)
            assert COMMENT_MARK["clang"] not in comment, (path, comment)


def test_every_module_is_rebuilt_when_a_header_it_includes_changes(tmp_path):
    # setuptools recompiles a module only when a source or one of its `depends` is newer than
    # the module.  Without the headers there, a build tree from before the kernel ABI went to 3
    # kept its sse2, ssse3 and sse41 objects (simd128.h had changed, their .c files had not):
    # the rebuilt wheel's registry refused them as "built for kernel ABI 2".
    from argonishche import build

    backends = ROOT / "backends"
    builder = build.backend_ffibuilder("check._sse2", [str(backends / "sse2.c")], ["sse2"])
    watched = {pathlib.Path(p).name for p in builder.distutils_extension(str(tmp_path)).depends}
    assert {"argonishche_kernel.h", "argonishche_target.h", "simd128.h"} <= watched
    core = build_core_module().ffibuilder.distutils_extension(str(tmp_path / "core"))
    assert {"argonishche_core.h", "platform.h", "argonishche_kernel.h"} <= {
        pathlib.Path(p).name for p in core.depends}
