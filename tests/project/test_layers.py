"""The package's import structure: no import cycle, and no lower layer importing a higher one.

Layers, lowest first; a module may import its own layer's and lower layers' modules only.  The
check reads every import statement of the package's modules, also those inside functions (a
deferred import is still a dependency), so that a newcomer can trust the list below.
"""

from __future__ import annotations

import ast
import pathlib

import argonishche

PACKAGE = pathlib.Path(argonishche.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("_version", "exceptions", "_features", "build", "vectors", "_core", "_warn", "_pool",
     "_async", "_blake2b_type", "_wording"),
    ("_settings", "_work_memory", "hookspecs", "_entry_points", "_params", "_phc", "_driver",
     "_hash_parameters", "_backend_declarations"),
    ("_cpu", "_kernel_table", "_records", "_selftest", "_certify_blake2b", "_certify",
     "_certify_child", "_certify_launch", "_allocators"),
    ("_discovery", "_backend_checks", "_selection_record", "_selection"),
    ("_registry", "_witness"),
    ("_argon2", "_blake2", "_info"),
    ("_batch", "testing"),
    ("_password_hasher",),
    ("__init__",),
    ("_bench", "_tune_search", "_tune", "_cli_arguments", "_tune_command", "_cli", "__main__",
     "argon2_cffi", "contrib"),
)
#: The package's compiled modules (no .py file to find them by); they import none of its modules.
COMPILED = ("_core", "_blake2b_type")
LAYER_OF = {name: index for index, layer in enumerate(LAYERS) for name in layer}


def module_name(path: pathlib.Path) -> str:
    """The top-level module of the package that *path* belongs to (``_bench`` for its files)."""
    relative = path.relative_to(PACKAGE)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def imports_of(path: pathlib.Path) -> set[str]:
    """The package's top-level modules that the file *path* imports."""
    found = set()
    depth = len(path.relative_to(PACKAGE).parts) - 1  # 0 for the package's own files
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level > depth + 1:
                continue
            if node.level == depth + 1:  # relative to the package itself (else: a subpackage's
                found.update([node.module.split(".")[0]] if node.module else  # own modules)
                             [alias.name for alias in node.names])
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("argonishche."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names
                         if alias.name.startswith("argonishche."))
    return {name for name in found if (PACKAGE / f"{name}.py").exists()
            or (PACKAGE / name).is_dir() or name in COMPILED}


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = module_name(path)
        edges.setdefault(name, set()).update(imports_of(path) - {name})
    return edges


def test_every_module_has_a_layer():
    assert set(graph()) <= set(LAYER_OF), set(graph()) - set(LAYER_OF)


def test_no_module_imports_a_higher_layer():
    upward = sorted((name, imported) for name, imported_set in graph().items()
                    for imported in imported_set if LAYER_OF[imported] > LAYER_OF[name])
    assert upward == []


def test_no_import_cycle():
    edges, state = graph(), {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if state.get(name) == "done":
            return
        assert state.get(name) != "open", " -> ".join((*path, name))
        state[name] = "open"
        for imported in sorted(edges.get(name, ())):
            visit(imported, (*path, name))
        state[name] = "done"
    for name in sorted(edges):
        visit(name, ())
