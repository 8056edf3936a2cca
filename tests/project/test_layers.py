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
    ("_version", "exceptions", "_features", "build", "vectors", "_core", "_warn", "_thread_pool",
     "_async", "_blake2b_type", "_wording", "_trust", "_named_tuple", "_record",
     "_lazy_import"),
    ("_settings", "_memory_limits", "hookspecs", "_entry_points", "_parameter_checks", "_phc",
     "_hash_call", "_extract_parameters", "_backend_declarations", "_work_memory"),
    ("_trust.cpu_gate", "_trust.kernel_table", "_trust.record_store",
     "_trust.self_test", "_trust.certification_blake2b", "_trust.certification_checks",
     "_trust.code_identity", "_trust.certification", "_trust.child_launch",
     "_trust.certification_child", "_allocators"),
    ("_discovery", "_trust.vetting", "_remembered_selection", "_selection"),
    ("_process_registry",),
    ("_registry", "_trust.witness"),
    ("_argon2", "_blake2", "_info"),
    ("_batch", "testing"),
    ("_password_hasher",),
    ("__init__",),
    ("_bench", "_tune_search", "_tune", "_cli_arguments", "_tune_command", "_cli", "__main__",
     "argon2_cffi", "contrib"),
)
#: Subpackages whose modules are layered one by one (a module of another subpackage is its
#: subpackage's node: ``_bench`` for all of its files).
LAYERED_MODULES = ("_trust",)
#: The package's compiled modules (no .py file to find them by); they import none of its modules.
COMPILED = ("_core", "_blake2b_type")
LAYER_OF = {name: index for index, layer in enumerate(LAYERS) for name in layer}


def module_name(path: pathlib.Path) -> str:
    """The package's node that *path* belongs to: its top-level module, or ``_trust.NAME`` for a
    module of a layered subpackage (``_trust``'s ``__init__`` is ``_trust``)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[0] in LAYERED_MODULES and len(parts) > 1:
        return parts[0] if parts[1] == "__init__" else f"{parts[0]}.{parts[1]}"
    return parts[0]


def _node(name: str) -> str | None:
    """*name* (a dotted module path under the package) as a node of the graph, if it is one."""
    parts = name.split(".")
    if parts[0] in LAYERED_MODULES and len(parts) > 1:
        return f"{parts[0]}.{parts[1]}" if (PACKAGE / parts[0] / f"{parts[1]}.py").exists() \
            else None
    return parts[0] if ((PACKAGE / f"{parts[0]}.py").exists() or (PACKAGE / parts[0]).is_dir()
                        or parts[0] in COMPILED) else None


def imports_of(path: pathlib.Path) -> set[str]:
    """The package's nodes that the file *path* imports."""
    found = set()
    here = path.relative_to(PACKAGE).parts[:-1]  # the file's subpackage, () for the package's
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level > len(here) + 1:
                continue
            base = here[:len(here) + 1 - node.level]
            if node.module:
                module = ".".join((*base, node.module))
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names)
            else:
                found.update(".".join((*base, alias.name)) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("argonishche."):
            found.add(node.module.removeprefix("argonishche."))
            found.update(f"{node.module.removeprefix('argonishche.')}.{alias.name}"
                         for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name.removeprefix("argonishche.") for alias in node.names
                         if alias.name.startswith("argonishche."))
    nodes = {_node(name) for name in found if name}
    return {name for name in nodes if name is not None}


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


def test_every_layered_name_is_a_module():
    missing = sorted(name for name in LAYER_OF if _node(name) != name)
    assert missing == []
