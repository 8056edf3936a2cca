"""argonishche._core's cffi declarations are made from the C headers (core/build_core.py): the
generator keeps what it must and drops what cffi cannot parse, and the compiled module exports
exactly the header's ARGONISHCHE_API functions."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import subprocess
import sys

from argonishche import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]
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


def test_the_build_has_no_compiler_warnings(tmp_path):
    # The same build setuptools runs for a wheel (setup.py's cffi_modules), into tmp_path.
    out = subprocess.run([sys.executable, "setup.py", "build_ext", "--force",
                          "--build-lib", str(tmp_path / "lib"),
                          "--build-temp", str(tmp_path / "temp")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    log = out.stdout + out.stderr
    compiled = re.findall(r"^\S*(?:gcc|cc|clang)\b.* -c (\S+\.c)", log, re.M)
    assert len(compiled) >= 7, log[-3000:]  # the core's sources and every backend's
    assert "warning:" not in log, log[-5000:]
