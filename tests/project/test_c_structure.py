"""The C sources' structure: no cycle between files, and no lower layer using a higher one.

The C counterpart of test_layers.py.  Files: every .c and .h file under core/csrc, core/ext,
core/argonishche/include, backends and plugins/*/src.  File A depends on file B when

  - A includes B (``#include "b.h"``, found where the compiler looks: A's own directory, then
    the include directories of A's build), or
  - A calls a function that B defines.

How calls and definitions are read (a tokenizer, not a C parser, good enough for this code):
comments, string and character literals are dropped, and preprocessor lines are set aside (the
body of a ``#define`` is read for calls, as code of the file that defines the macro).  A brace
depth is kept.  A *definition* is a name followed by a parenthesised list and then ``{`` at
depth 0: ``static void f(int x) {``.  Written through a function-like macro in capitals
(``static ARGONISHCHE_THREAD_FN(work, arg) {``) it defines the macro's first argument.  It is
*private* when the declaration has ``static`` (or ``ARGONISHCHE_INLINE``, which is static
inline): in a .c file nobody else can call it; in a header it is defined for every file that
includes the header (static inline helpers of headers count as the header's).  A *call* is a
name followed by ``(`` inside a function body or a macro body, not after ``.`` or ``->``
(calls through a kernel table's pointers are not file dependencies).  A call of a name the file
does not define itself goes to the header that defines it among the files it includes (directly
or not), else to the .c file that defines it with external linkage; names nobody here defines
(the C library, intrinsics, macros) are no dependency.

Layers, lowest first; a file may include and call only files of its own layer and lower ones
(and no cycle even within a layer).  Each layer's comment is its job.
"""

from __future__ import annotations

import fnmatch
import itertools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Where the C files are, and the include directories their builds give the compiler (after the
#: including file's own directory): the core's (core/build_core.py, setup.py) and a backend's
#: (argonishche.build.backend_ffibuilder: the installed include directory only).
SOURCE_DIRS: dict[str, tuple[str, ...]] = {
    "core/csrc": ("core/csrc", "core/argonishche/include"),
    "core/csrc/bench": (),
    "core/ext": ("core/csrc", "core/argonishche/include"),
    "core/argonishche/include": (),
    "backends": ("core/argonishche/include",),
    "plugins/*/src": ("core/argonishche/include",),
}

INCLUDE = "core/argonishche/include"
LAYERS: tuple[tuple[str, ...], ...] = (
    # The kernel contract: the table, the ABI number, the specifications' constants.
    (f"{INCLUDE}/argonishche_kernel.h", f"{INCLUDE}/argonishche_constants.h"),
    # Built on the contract: compiling kernels for one instruction set; the core's API.
    (f"{INCLUDE}/argonishche_target.h", "core/csrc/argonishche_core.h"),
    # Kernel pieces shared by several kernel files.
    (f"{INCLUDE}/argonishche_blake2b_avx2.h", "backends/simd128.h", "backends/neon128.h"),
    # The kernels: in-tree backends and plugins.
    ("backends/*.c", "plugins/*/src/*.c"),
    # The operating system and compiler, shimmed once for the core.
    ("core/csrc/platform.h",),
    # The core's leaves: memory hygiene and pre-faulting, BLAKE2b, the CPU probe, code
    # identity, kernel workouts, the benchmark clock.
    ("core/csrc/memory.c", "core/csrc/blake2b.c", "core/csrc/cpu_features.c",
     "core/csrc/cpu_features_arm.c", "core/csrc/code_identity.c", "core/csrc/kernel_workout.c",
     "core/csrc/bench/clock.c"),
    # The process's work memory: budget, admission, kept mappings, claims.
    ("core/csrc/work_memory.h", "core/csrc/work_memory.c"),
    # The Argon2 driver.
    ("core/csrc/argon2.c",),
    # A hash in leased work memory: admission, mapping, the driver, giving back.
    ("core/csrc/arena.c",),
    # The BLAKE2b Python type (hashlib's interface over blake2b.c).
    ("core/ext/blake2b_type.c",),
)

_CODE = re.compile(r"""/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)
_INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')
_DEFINE = re.compile(r"#\s*define\s+\w+(?:\([^)]*\))?(.*)", re.S)
_TOKEN = re.compile(r"->|[A-Za-z_]\w*|\S")
_NAME = re.compile(r"[A-Za-z_]\w*")


def c_files(root: Path = ROOT) -> dict[str, tuple[str, ...]]:
    """{path relative to *root*: the directories its quoted includes are searched in}."""
    found = {}
    for pattern, include_dirs in SOURCE_DIRS.items():
        for directory in sorted(root.glob(pattern)):
            for path in sorted(directory.iterdir()):
                if path.suffix in (".c", ".h"):
                    name = path.relative_to(root).as_posix()
                    found[name] = (str(Path(name).parent.as_posix()), *include_dirs)
    return found


def read(text: str) -> tuple[list[str], list[str], list[list[str]]]:
    """(quoted includes, code tokens, token lists of the #define bodies) of a C file's text."""
    includes = _INCLUDE.findall(_CODE.sub(lambda m: m.group() if m.group()[0] == '"' else " ",
                                          text))
    text = _CODE.sub(lambda m: '""' if m.group()[0] in "\"'" else " ", text)
    text = text.replace("\\\n", " ")
    code, macros = [], []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            define = _DEFINE.match(line.strip())
            if define:
                macros.append(_TOKEN.findall(define.group(1)))
        else:
            code.append(line)
    return includes, _TOKEN.findall("\n".join(code)), macros


def _matching(tokens: list[str], open_at: int) -> int:
    """The index of the ``)`` closing the ``(`` at *open_at*."""
    depth = 0
    for index in range(open_at, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[index], 0)
        if depth == 0:
            return index
    raise AssertionError("unbalanced parentheses")


def definitions_and_calls(tokens: list[str]) -> tuple[dict[str, bool], set[str]]:
    """({function defined: private}, names called in function bodies) of a file's tokens."""
    defined: dict[str, bool] = {}
    called: set[str] = set()
    depth, start, index = 0, 0, 0  # start: where the current top-level declaration began
    while index < len(tokens):
        token = tokens[index]
        if token == "{":
            depth += 1
        elif token == "}":
            depth -= 1
            assert depth >= 0, "unbalanced braces (a brace in only one branch of an #if?)"
            if depth == 0:
                start = index + 1
        elif token == ";" and depth == 0:
            start = index + 1
        elif _NAME.fullmatch(token) and index + 1 < len(tokens) and tokens[index + 1] == "(":
            if depth == 0:
                close = _matching(tokens, index + 1)
                if close + 1 < len(tokens) and tokens[close + 1] == "{":
                    name = token
                    if token.isupper():  # ARGONISHCHE_THREAD_FN(work, arg) { defines work
                        name = tokens[index + 2]
                    declaration = tokens[start:index]
                    defined[name] = "static" in declaration or "ARGONISHCHE_INLINE" in declaration
                    index = close + 1
                    continue
            elif tokens[index - 1] not in (".", "->"):
                called.add(token)
        index += 1
    assert depth == 0, "unbalanced braces (a brace in only one branch of an #if?)"
    return defined, called


def graph(root: Path = ROOT) -> dict[str, dict[str, set[str]]]:
    """{file: {file it depends on: why (``include``, ``calls name``)}} over every C file."""
    files = c_files(root)
    includes, defined, called = {}, {}, {}
    for name, search in files.items():
        quoted, tokens, macros = read((root / name).read_text(encoding="utf-8"))
        includes[name] = set()
        for header in quoted:
            where = [f"{d}/{header}" for d in search if f"{d}/{header}" in files]
            assert where, f"{name} includes {header!r}, found in none of {search}"
            includes[name].add(where[0])
        try:
            defined[name], called[name] = definitions_and_calls(tokens)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None
        for body in macros:
            called[name] |= {token for i, token in enumerate(body[:-1])
                             if _NAME.fullmatch(token) and body[i + 1] == "("
                             and (i == 0 or body[i - 1] not in (".", "->"))}

    def reached(name: str) -> set[str]:
        seen, todo = set(), [name]
        while todo:
            for header in includes[todo.pop()] - seen:
                seen.add(header)
                todo.append(header)
        return seen

    edges: dict[str, dict[str, set[str]]] = {name: {} for name in files}
    for name in files:
        for header in includes[name]:
            edges[name].setdefault(header, set()).add("include")
        visible = reached(name)
        for function in sorted(called[name] - set(defined[name])):
            owners = [f for f in visible if f.endswith(".h") and function in defined[f]] or \
                     [f for f in files if f.endswith(".c") and defined[f].get(function) is False]
            for owner in owners:
                edges[name].setdefault(owner, set()).add(f"calls {function}")
    return edges


def layer_of(name: str) -> int | None:
    for index, layer in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in layer):
            return index
    return None


def find_cycle(edges: dict[str, dict[str, set[str]]]) -> list[str]:
    """A shortest cycle's files, the first repeated at the end; [] if there is none."""
    best: list[str] = []
    for first in sorted(edges):
        paths, todo = {first: [first]}, [first]  # breadth first: the shortest way back first
        while todo:
            name = todo.pop(0)
            if first in edges[name]:
                if not best or len(paths[name]) + 1 < len(best):
                    best = [*paths[name], first]
                break
            for target in sorted(edges[name]):
                if target not in paths:
                    paths[target] = [*paths[name], target]
                    todo.append(target)
    return best


def describe(edges: dict[str, dict[str, set[str]]], path: list[str]) -> str:
    return "\n".join(f"  {a} -> {b} ({', '.join(sorted(edges[a][b]))})"
                     for a, b in itertools.pairwise(path))


def test_the_reader_sees_what_the_files_do():
    # Known facts, so that a reader broken into seeing nothing cannot pass the tests below.
    edges = graph()
    assert "include" in edges["core/csrc/argon2.c"]["core/csrc/platform.h"]
    assert "calls argonishche_argon2_hash" in edges["core/csrc/arena.c"]["core/csrc/argon2.c"]
    assert "calls argonishche_blake2b_update" in \
        edges["core/csrc/argon2.c"]["core/csrc/blake2b.c"]
    assert "calls argonishche_secure_wipe" in \
        edges["core/csrc/work_memory.c"]["core/csrc/memory.c"]
    # A header's static inline helper is the header's: argon2.c reads the clock through
    # platform.h, and the avx2 kernels load message words through the shared header.
    assert "calls argonishche_monotonic_ns" in edges["core/csrc/work_memory.c"][
        "core/csrc/platform.h"]
    assert "calls argonishche_blake2b_avx2_message" in edges["backends/avx2.c"][
        f"{INCLUDE}/argonishche_blake2b_avx2.h"]
    # Private functions of two files are not calls between them, nor are table calls.
    assert "backends/avx2.c" not in edges["plugins/argonishche-avx512/src/avx512.c"]
    assert not any(target.startswith("backends/") for target in edges["core/csrc/argon2.c"])


def test_every_c_file_has_a_layer():
    names = set(c_files())
    assert {name for name in names if layer_of(name) is None} == set()
    # And every named file exists, so that a renamed file cannot keep a stale row.
    assert {pattern for layer in LAYERS for pattern in layer
            if not any(fnmatch.fnmatchcase(name, pattern) for name in names)} == set()


def test_no_c_file_includes_or_calls_a_higher_layer():
    edges = graph()
    upward = [f"{a} (layer {layer_of(a)}) -> {b} (layer {layer_of(b)}): "
              f"{', '.join(sorted(why))}"
              for a, targets in sorted(edges.items()) for b, why in sorted(targets.items())
              if layer_of(a) is not None and layer_of(b) is not None
              and layer_of(b) > layer_of(a)]
    assert upward == [], "upward dependencies:\n" + "\n".join(upward)


def test_no_cycle_between_c_files():
    edges = graph()
    cycle = find_cycle(edges)
    assert cycle == [], "cycle: " + " -> ".join(cycle) + "\n" + describe(edges, cycle)
