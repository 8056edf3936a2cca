"""What `pip install` gets: the sdist, and the wheel built from it.

One sdist is built from a copy of the source tree and one wheel from that sdist (the route pip
takes from PyPI, so a file missing from the sdist fails the build), both with this interpreter's
setuptools and cffi, as ``pip wheel --no-build-isolation`` would.  The wheel must be one abi3
wheel for every CPython from requires-python's lowest version on (tox installs this one wheel into
3.11, 3.12 and 3.13), hold only importable code and its data, and carry the licence.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import NamedTuple

import pytest
from argonishche_backends.table import BUILTIN_BACKENDS, kernel_module
from wheel_audit import audit, modules_without_libc

ROOT = Path(__file__).resolve().parents[2]

#: Not source: build output, caches and environments (.gitignore's list), never copied.
NOT_SOURCE = shutil.ignore_patterns(".git", ".tox", ".venv", "build", "dist", "*.egg-info",
                                    "__pycache__", "*.so", "*.o", ".hypothesis", ".mypy_cache",
                                    ".ruff_cache", ".pytest_cache")

#: The stable ABI's underscore-prefixed symbols (CPython 3.11's Misc/stable_abi.toml): what
#: Py_INCREF/Py_DECREF, Py_None and friends compile to under Py_LIMITED_API.  Any other ``_Py``
#: symbol is private API and ties a module to one CPython version.
STABLE_PRIVATE_SYMBOLS = frozenset({
    "_PyArg_ParseTupleAndKeywords_SizeT", "_PyArg_ParseTuple_SizeT", "_PyArg_Parse_SizeT",
    "_PyArg_VaParseTupleAndKeywords_SizeT", "_PyArg_VaParse_SizeT", "_PyErr_BadInternalCall",
    "_PyObject_CallFunction_SizeT", "_PyObject_CallMethod_SizeT", "_PyObject_GC_New",
    "_PyObject_GC_NewVar", "_PyObject_GC_Resize", "_PyObject_New", "_PyObject_NewVar",
    "_PyState_AddModule", "_PyThreadState_Init", "_PyThreadState_Prealloc",
    "_PyWeakref_CallableProxyType", "_PyWeakref_ProxyType", "_PyWeakref_RefType",
    "_Py_BuildValue_SizeT", "_Py_CheckRecursiveCall", "_Py_Dealloc", "_Py_DecRef",
    "_Py_EllipsisObject", "_Py_FalseStruct", "_Py_IncRef", "_Py_NoneStruct",
    "_Py_NotImplementedStruct", "_Py_SwappedOp", "_Py_TrueStruct", "_Py_VaBuildValue_SizeT",
})


class Dists(NamedTuple):
    sdist: Path
    wheel: Path
    requires_python: str  # from the sdist's PKG-INFO


def _build(hook: str, source: Path, out: Path) -> Path:
    """Run setuptools' PEP 517 *hook* in *source*, in a child interpreter; the file it made."""
    code = ("import sys; from setuptools import build_meta; "
            "print(getattr(build_meta, sys.argv[1])(sys.argv[2]))")
    run = subprocess.run([sys.executable, "-c", code, hook, str(out)], cwd=source,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{hook} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return out / run.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> Dists:
    tmp = tmp_path_factory.mktemp("packaging")
    shutil.copytree(ROOT, tmp / "tree", ignore=NOT_SOURCE, symlinks=True)
    sdist = _build("build_sdist", tmp / "tree", tmp / "dist")
    with tarfile.open(sdist) as tar:
        # The "data" filter (refuse links and paths out of the directory) where this Python
        # has it (3.11.4 on); the archive is our own either way.
        kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(tmp / "unpacked", **kwargs)
        top = tar.getnames()[0].split("/")[0]
        pkg_info = Parser().parsestr(tar.extractfile(f"{top}/PKG-INFO").read().decode())
    wheel = _build("build_wheel", tmp / "unpacked" / top, tmp / "dist")
    return Dists(sdist, wheel, pkg_info["Requires-Python"])


def wheel_names(dists: Dists) -> list[str]:
    with zipfile.ZipFile(dists.wheel) as whl:
        return whl.namelist()


def dist_info(dists: Dists) -> str:
    name, version = dists.wheel.name.split("-")[:2]
    return f"{name}-{version}.dist-info"


def oldest_python(requires_python: str) -> str:
    """``">=3.11"`` -> ``"311"``: the one form of requires-python an abi3 tag can match."""
    match = re.fullmatch(r">=\s*3\.(\d+)", requires_python.strip())
    assert match, f"requires-python {requires_python!r} is not a lower bound on CPython 3"
    return f"3{match.group(1)}"


def test_wheel_is_one_abi3_wheel_from_the_oldest_supported_python(dists):
    cp = "cp" + oldest_python(dists.requires_python)
    python_tag, abi_tag, platform_tag = dists.wheel.name.removesuffix(".whl").split("-")[-3:]
    assert (python_tag, abi_tag) == (cp, "abi3"), dists.wheel.name
    with zipfile.ZipFile(dists.wheel) as whl:
        wheel_file = Parser().parsestr(whl.read(f"{dist_info(dists)}/WHEEL").decode())
    assert wheel_file.get_all("Tag") == [f"{cp}-abi3-{platform_tag}"]
    assert wheel_file["Root-Is-Purelib"] == "false"


def test_every_compiled_module_is_an_abi3_module(dists):
    compiled = sorted(name for name in wheel_names(dists) if re.search(r"\.(so|pyd)$", name))
    expected = sorted(f"{module.replace('.', '/')}.abi3.so" for module in
                      ("argonishche._core", "argonishche._bench._clock",
                       "argonishche._blake2b_type",
                       *(kernel_module(row) for row in BUILTIN_BACKENDS)))
    assert compiled == expected


def _stable_abi() -> frozenset[str] | None:
    """Every symbol of the stable ABI, from CPython's own test of it (read, not imported), or
    None where the interpreter ships without its test package (then only the ``_Py`` names,
    :data:`STABLE_PRIVATE_SYMBOLS`, are checked)."""
    spec = importlib.util.find_spec("test.test_stable_abi_ctypes") \
        if importlib.util.find_spec("test") else None
    if spec is None or not spec.origin:
        return None
    for node in ast.parse(Path(spec.origin).read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == \
                ["SYMBOL_NAMES"]:
            return frozenset(ast.literal_eval(node.value))
    return None


def test_compiled_modules_import_only_the_stable_abi(dists, tmp_path):
    nm = shutil.which("nm")
    assert nm, "nm (binutils, installed with gcc) is needed to read the modules' imports"
    stable = _stable_abi()
    with zipfile.ZipFile(dists.wheel) as whl:
        modules = [name for name in whl.namelist() if name.endswith(".so")]
        whl.extractall(tmp_path, members=modules)
    assert modules
    for module in modules:
        out = subprocess.run([nm, "-D", "--undefined-only", str(tmp_path / module)],
                             capture_output=True, text=True, check=True).stdout
        python = {line.split()[-1].split("@")[0] for line in out.splitlines()
                  if re.search(r"\b_?Py\w*$", line.split("@")[0])}
        assert python, f"{module} imports nothing from Python: not a CPython extension?"
        private = {name for name in python if name.startswith("_")}
        assert private <= STABLE_PRIVATE_SYMBOLS, (module, sorted(private - STABLE_PRIVATE_SYMBOLS))
        if stable is not None:
            assert python <= stable, (module, sorted(python - stable))


def test_wheel_holds_no_build_scripts_and_only_the_packages(dists):
    names = wheel_names(dists)
    scripts = [name for name in names if re.search(r"(^|/)(build_\w*|setup)\.py$", name)]
    assert scripts == []
    assert {name.split("/")[0] for name in names} == \
        {"argonishche", "argonishche_backends", dist_info(dists)}
    assert not [name for name in names if name.endswith((".c", ".o"))]


def test_wheel_has_every_package_of_the_source_tree(dists):
    source = {"argonishche_backends"} | {
        ".".join(init.parent.relative_to(ROOT / "core").parts)
        for init in (ROOT / "core" / "argonishche").rglob("__init__.py")}
    packed = {name.removesuffix("/__init__.py").replace("/", ".") for name in wheel_names(dists)
              if name.endswith("/__init__.py")}
    assert packed == source


def test_licence_is_in_the_wheel_and_the_sdist(dists):
    licence = (ROOT / "LICENSE").read_bytes()
    with zipfile.ZipFile(dists.wheel) as whl:
        assert whl.read(f"{dist_info(dists)}/licenses/LICENSE") == licence
        metadata = Parser().parsestr(whl.read(f"{dist_info(dists)}/METADATA").decode())
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["License-Expression"] == "MIT"
    with tarfile.open(dists.sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        assert tar.extractfile(f"{top}/LICENSE").read() == licence


def test_typing_marker_stubs_and_kernel_headers_are_in_the_wheel(dists):
    names = set(wheel_names(dists))
    assert "argonishche/py.typed" in names
    # The compiled modules' types: without them a user's type checker sees untyped modules.
    stubs = sorted((ROOT / "core" / "argonishche").rglob("*.pyi"))
    assert stubs
    assert {f"argonishche/{stub.relative_to(ROOT / 'core' / 'argonishche')}"
            for stub in stubs} <= names
    headers = sorted((ROOT / "core" / "argonishche" / "include").glob("*.h"))
    assert headers
    assert {f"argonishche/include/{header.name}" for header in headers} <= names


def test_requires_python_is_the_metadata_and_the_lowest_tested(dists):
    # The wheel's tag is made from requires-python's bound (above); tox must test that version.
    with zipfile.ZipFile(dists.wheel) as whl:
        metadata = Parser().parsestr(whl.read(f"{dist_info(dists)}/METADATA").decode())
    assert metadata["Requires-Python"] == dists.requires_python
    version = oldest_python(dists.requires_python)
    tox = (ROOT / "tox.ini").read_text()
    pinned = re.search(r"^\[testenv:py\]\n(?:[^\[].*\n)*?base_python\s*=\s*py(\d+)\s*$", tox, re.M)
    assert pinned and pinned.group(1) == version, "tox.ini's py env must run requires-python's " \
        f"lowest version, py{version}"


def test_every_compiled_module_names_its_libc(dists):
    # The kernel modules call nothing in libc; without -lc (argonishche.build.libc_link_args)
    # they record none, and a wheel whose first module auditwheel reads is one of them is
    # refused (InvalidLibcError), as every plugin wheel was.
    assert modules_without_libc(dists.wheel) == []


def test_auditwheel_finds_the_wheel_repairable_to_a_manylinux_tag(dists):
    audit(dists.wheel)
