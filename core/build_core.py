"""cffi build script for argonishche._core: the Argon2 driver, BLAKE2b and the CPU probe.

Run by setuptools (see setup.py's cffi_modules) from the project root.  The cffi declarations are
made from the C headers themselves (:func:`cdef_from_headers`), so there is one source of truth:
every typedef, every integer ``#define`` and every function marked ``ARGONISHCHE_API``.
"""

import os
import re
import sys

from cffi import FFI

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))
CSRC = os.path.join(HERE, "csrc")
INCLUDE = os.path.join(HERE, "argonishche", "include")
#: The headers the cdef is made from, in the order the C compiler sees them.
HEADERS = (os.path.join(INCLUDE, "argonishche_kernel.h"),
           os.path.join(CSRC, "argonishche_core.h"))

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_DEFINE = re.compile(r"#\s*define\s+(\w+)(?:\s+(.*))?$")
_INTEGER = re.compile(r"\(?\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))[uUlL]*\s*\)?$")
_INTEGER_EXPRESSION = re.compile(r"[\s()0-9a-fA-FxXuUlL<>|&~+\-*]+$")


def cdef_from_headers(texts):
    """cffi declarations for the C header *texts*.

    Kept: ``typedef`` statements; declarations after an ``ARGONISHCHE_API`` marker (the marker
    dropped); object-like ``#define NAME value`` with an integer value, as ``#define NAME value``
    when the value is a non-negative integer literal (cffi then checks it against the
    compiler's) and as ``#define NAME ...`` otherwise (cffi asks the compiler).  Everything else
    (include guards, string and function-like macros, static inline helpers, declarations not
    marked) is left out.
    """
    lines = []
    for text in texts:
        text = _COMMENT.sub(" ", text).replace("\\\n", " ")
        statement, exported = "", False
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("#"):
                match = _DEFINE.match(line)
                if match is None:
                    continue
                name, value = match.group(1), (match.group(2) or "").strip()
                if _INTEGER_EXPRESSION.match(value) and "(" not in name:
                    literal = _INTEGER.match(value)
                    exact = literal and not literal.group(1).startswith("-")
                    lines.append(f"#define {name} {literal.group(1) if exact else '...'}")
                continue
            if line == "ARGONISHCHE_API":
                exported = True
                continue
            statement = f"{statement} {line}".strip()
            if statement and statement.count("{") == statement.count("}") and \
                    statement.endswith(";"):
                if exported or statement.startswith("typedef"):
                    lines.append(statement)
                statement, exported = "", False
    return "\n".join(lines) + "\n"


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


CDEF = cdef_from_headers([_read(path) for path in HEADERS])

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "argonishche._core",
    '#include "argonishche_core.h"',
    sources=[os.path.join(CSRC, name) for name in
             ("arena.c", "argon2.c", "blake2b.c", "code_identity.c", "cpu_features.c",
              "cpu_features_arm.c", "kernel_workout.c", "memory.c", "work_memory.c")],
    include_dirs=[CSRC, INCLUDE],
    # Rebuilt when a header changes too, not only a .c file (see headers_beside).
    depends=sorted(os.path.join(d, name) for d in (CSRC, INCLUDE) for name in os.listdir(d)
                   if name.endswith(".h")),
    # Optimisation only: the core must import on any CPU of its architecture, so no ISA flags here.
    extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra"],
    # Windows threads come with the C runtime (core/csrc/platform.h); POSIX links pthreads.
    # dladdr (code_identity.c) is in libdl before glibc 2.34 (an empty stub library after it).
    libraries=([] if sys.platform == "win32" else ["pthread"])
    + (["dl"] if sys.platform.startswith("linux") else []),
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
