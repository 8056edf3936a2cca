"""backends/table.py is the one list of built-in backends: everything that cannot read it (the
entry points in pyproject.toml, the envs in tox.ini) is checked against it here, and everything
that can (the build, the plugin objects) is checked to agree."""

from __future__ import annotations

import configparser
import importlib.util
import pathlib
import platform
import re
import subprocess
import sys
import tomllib

import argonishche_backends
import pytest
from argonishche import _features, _registry
from argonishche._trust import cpu_gate
from argonishche_backends import table
from argonishche_backends.table import (
    ALL_BUILTIN_BACKENDS,
    BUILTIN_BACKENDS,
    EVERY_ARCH,
    built_for,
    kernel_module,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAMES = [row.name for row in ALL_BUILTIN_BACKENDS]
#: The architecture CI runs natively, whose ladder tox's backend-* and peel-* envs cover.
NATIVE_CI_ARCH = "x86_64"


def test_rows_are_ladders_one_per_architecture_with_sources():
    assert NAMES[0] == "ref" and len(set(NAMES)) == len(NAMES)
    assert ALL_BUILTIN_BACKENDS[0].arches == EVERY_ARCH
    for row in ALL_BUILTIN_BACKENDS:
        assert (ROOT / "backends" / row.source).is_file(), row
        assert row.arches == EVERY_ARCH or set(row.arches) <= set(_features.ARCHES), row
        # A row's features are those of the architectures it is built for.
        assert {_features.BY_NAME[name].arch for name in row.cpu_features} <= (
            set(row.arches) if row.arches != EVERY_ARCH else set()), row
    for arch in _features.ARCHES:
        priorities = [row.priority for row in built_for(arch)]
        assert priorities == sorted(set(priorities)), arch


def test_each_architecture_builds_its_own_rows_and_ref():
    assert [row.name for row in built_for("x86_64")] == ["ref", "sse2", "ssse3", "sse41", "avx2"]
    assert [row.name for row in built_for("aarch64")] == ["ref", "neon", "neon_sha3"]
    # An architecture argonishche has no kernels for gets the portable one.
    assert [row.name for row in built_for("riscv64")] == ["ref"]
    assert BUILTIN_BACKENDS == built_for(table.running_arch())


def test_the_table_and_the_cpu_gate_name_architectures_alike():
    # backends/table.py cannot import argonishche._features (the build loads it by path).
    assert table.ARCH_ALIASES == _features.ARCH_ALIASES
    assert (table.X86_64, table.AARCH64) == _features.ARCHES
    assert table.running_arch() == cpu_gate._machine()


def test_pyproject_entry_points_are_the_table():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    entry_points = pyproject["project"]["entry-points"]["argonishche"]
    assert entry_points == {name: f"argonishche_backends:{name}" for name in NAMES}


def test_plugin_objects_exist_for_every_row_and_register_only_those_built_here():
    for row in ALL_BUILTIN_BACKENDS:
        plugin = getattr(argonishche_backends, row.name)
        backend = plugin.backend
        assert (backend.name, backend.description, backend.priority) == \
            (row.name, row.description, row.priority)
        assert backend.cpu_features == frozenset(row.cpu_features)
        assert backend.kernel_module == kernel_module(row)
        registered = []
        plugin.argonishche_register_backends(register=registered.append)
        assert registered == ([backend] if row in BUILTIN_BACKENDS else []), row


def test_the_registry_lists_exactly_the_rows_built_here():
    builtin = {record.name for record in _registry.get().report() if record.builtin}
    assert builtin == {row.name for row in BUILTIN_BACKENDS}


def test_an_entry_point_of_a_row_not_built_here_loads_and_registers_nothing():
    # Another architecture's row: its entry point must load (tools walk every entry point), and
    # discovery must neither fail nor list it.
    other = next(row for row in ALL_BUILTIN_BACKENDS if row not in BUILTIN_BACKENDS)
    from argonishche._entry_points import Distribution, EntryPoint
    plugin = EntryPoint(other.name, f"argonishche_backends:{other.name}",
                        Distribution("argonishche", "0")).load()
    registered = []
    plugin.argonishche_register_backends(register=registered.append)
    assert registered == [] and not plugin.built
    assert other.name not in {b.name for b in _registry.get().report()}


@pytest.mark.parametrize("machine, built", [
    ("riscv64", ["ref"]), ("aarch64", ["ref", "neon", "neon_sha3"]),
    ("x86_64", ["ref", "sse2", "ssse3", "sse41", "avx2"])])
def test_info_names_the_backends_built_for_this_architecture(machine, built):
    # A machine is pretended by os.uname (the table's and the gate's source); on an architecture
    # without kernels, only ref is built, and info says so.
    code = (f"import os\n"
            f"fields = list(os.uname())\n"
            f"fields[4] = {machine!r}\n"
            f"os.uname = lambda: os.uname_result(fields)\n"
            f"from argonishche import _info\n"
            f"print(_info.render(_info.collect(cpuinfo=False)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith("Built-in backends"))
    assert line.startswith(f"Built-in backends for {machine}: {', '.join(built)}")
    if built == ["ref"]:
        assert "only ref" in line


def test_build_has_one_builder_per_row_built_for_the_target_compiled_for_its_features():
    spec = importlib.util.spec_from_file_location("build_backends_under_test",
                                                  ROOT / "core" / "build_backends.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.TARGET_ARCH == _features.arch_of(platform.machine())
    assert module.BUILT == BUILTIN_BACKENDS
    for row in ALL_BUILTIN_BACKENDS:
        if row not in BUILTIN_BACKENDS:
            assert not hasattr(module, row.name), row
            continue
        builder = getattr(module, row.name)
        module_name, _, _, options = builder._assigned_source
        assert module_name == kernel_module(row)
        assert options["sources"][-1].endswith(row.source)
        defines = dict(options.get("define_macros", []))
        expected = module._build.kernel_target(row.cpu_features)
        assert defines.get("ARGONISHCHE_KERNEL_TARGET") == (f'"{expected}"' if expected else None)


def tox_factors(envlist_prefix: str) -> list[str]:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    envlist = tox["tox"]["envlist"]
    match = re.search(rf"^\s*{envlist_prefix}-\{{([^}}]*)\}}", envlist, re.M)
    assert match, f"{envlist_prefix}-{{...}} not in tox.ini's envlist"
    return match.group(1).split(",")


def test_tox_forces_every_native_backend_and_peels_every_rung_but_ref():
    native = [row.name for row in built_for(NATIVE_CI_ARCH)]
    assert sorted(tox_factors("backend")) == sorted(native)
    assert sorted(tox_factors("peel")) == sorted(native[1:])
    text = (ROOT / "tox.ini").read_text()
    for name in native:
        assert re.search(rf"^\s*{name}: ARGONISHCHE_BACKEND = {name}$", text, re.M), name


def test_tox_selects_every_emulated_backend_on_an_emulated_cpu():
    # The other architectures' rungs cannot run natively in CI: each must be the expected
    # selection of an emulated env (tools/emulate_aarch64.py), and every rung required there.
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    emulated = [row.name for row in ALL_BUILTIN_BACKENDS
                if row not in built_for(NATIVE_CI_ARCH)]
    sections = {name: tox[name] for name in tox.sections()
                if "emulate_aarch64.py" in tox[name].get("commands", "")}
    assert sections, "tox.ini has no env running tools/emulate_aarch64.py"
    setenv = "\n".join(section.get("setenv", "") for section in sections.values())
    expected = set(re.findall(r"ARGONISHCHE_EXPECT_BACKEND = (\w+)", setenv))
    required = set(re.findall(r"ARGONISHCHE_REQUIRE_BACKENDS = ([\w,]+)", setenv))
    assert set(emulated) <= expected
    assert set(emulated) <= {name for names in required for name in names.split(",")}
    assert "ARGONISHCHE_EXPECT_MACHINE = aarch64" in setenv
