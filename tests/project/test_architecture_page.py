"""docs/development.md's architecture maps every module, Python and C, and each module's layer
is the one tests/project/test_layers.py (Python) or tests/project/test_c_structure.py (C)
enforces."""

from __future__ import annotations

import pathlib
from pathlib import Path
import re

import test_c_structure
import test_layers

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "development.md"
#: Where modules live, and which of their files count as modules.
SOURCES = (("core/argonishche", "**/*.py"), ("core", "build_*.py"), ("core/csrc", "**/*.[ch]"),
           ("core/ext", "*.c"), ("core/argonishche/include", "*.h"), ("backends", "*.[ch]"),
           ("backends", "*.py"),
           ("plugins", "*/src/*.c"), ("plugins", "*/build_*.py"),
           ("plugins", "*/argonishche_*/*.py"))
ROW = re.compile(r"^\| `([^`]+\.(?:py|c|h))` \|(?: (\d+) \|)?", re.M)


def architecture() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text[text.index("## Architecture"):text.index("## Testing")]


def mapped() -> dict[str, str | None]:
    """{path: its layer as the page gives it (None outside the package)} for every row."""
    rows = ROW.findall(architecture())
    paths = [path for path, _ in rows]
    assert len(paths) == len(set(paths)), "a module mapped twice"
    return {path: layer or None for path, layer in rows}


def modules() -> set[str]:
    found = set()
    for folder, pattern in SOURCES:
        for path in (ROOT / folder).glob(pattern):
            if "__pycache__" not in path.parts and path.suffix in (".py", ".c", ".h"):
                found.add(path.relative_to(ROOT).as_posix())
    return found


def test_every_module_is_mapped():
    assert sorted(modules() - set(mapped())) == []


def test_every_mapped_module_exists():
    assert sorted(set(mapped()) - modules()) == []


def test_each_package_modules_layer_is_the_enforced_one():
    wrong = []
    for path, layer in mapped().items():
        if path.startswith("core/argonishche/") and path.endswith(".py"):
            # The layer test's package is the one imported (a wheel's, in tox): the same files.
            node = test_layers.module_name(
                test_layers.PACKAGE / Path(path).relative_to("core/argonishche"))
            if layer is None or int(layer) != test_layers.LAYER_OF[node]:
                wrong.append((path, layer, test_layers.LAYER_OF[node]))
    assert wrong == []


def test_each_c_files_layer_is_the_enforced_one():
    wrong = [(path, layer, test_c_structure.layer_of(path)) for path, layer in mapped().items()
             if path.endswith((".c", ".h")) and (layer is None or int(layer) !=
                                                 test_c_structure.layer_of(path))]
    assert wrong == []
