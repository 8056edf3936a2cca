"""A backend wheel installs the way users will once it is on an index, in one command.

tools/build_wheelhouse.py builds the core's and every plugin's wheel with build isolation (the
plugins' isolated builds get argonishche from the wheelhouse); then, in venvs made by
``python -m venv`` with nothing upgraded (Python 3.11's pip 23.2 and setuptools 65.5),
``pip install --find-links WHEELHOUSE "argonishche[avx512]"`` and the plugins by name install,
and argonishche finds, checks and uses them.  Every wheel there passes ``auditwheel show`` as a
manylinux wheel, and the plugins' ``auditwheel repair`` to manylinux2014.  A plugin built
without isolation where its build requirements are missing stops with a message saying what to
do.

Slow (the wheelhouse compiles the core): skipped outside ``tox -e doc-commands``.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
import zipfile
from pathlib import Path

from argonishche._trust import cpu_gate
from user_venvs import (
    ROOT,
    checked,
    fresh_venv,
    pip_install,
    run,
    skip_unless_slow_tests_run,
    user_environment,
)
from wheel_audit import assert_kernel_wheel_is_manylinux_ready, audit, modules_without_libc

RUN_TIMEOUT = 300
PLUGINS = sorted(path.parent.name for path in (ROOT / "plugins").glob("*/pyproject.toml"))
#: What the avx512 plugin's kernels are compiled for (argonishche_avx512.BACKEND.cpu_features).
AVX512_NEEDS = {"avx", "avx2", "avx512f", "avx512vl"}
#: RFC 9106 section 5.3, Argon2id: the tag every backend must give.
RFC9106_ARGON2ID = "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"
#: Run in the venv: the backends' and plugins' records, and the RFC 9106 Argon2id tag each
#: usable backend named on the command line computes.
REPORT = textwrap.dedent("""\
    import json, sys, argonishche
    tags = {name: argonishche.argon2_hash(
                bytes([1]) * 32, bytes([2]) * 16, type="id", time_cost=3, memory_cost=32,
                parallelism=4, secret=bytes([3]) * 8, associated_data=bytes([4]) * 12,
                backend=name).hex()
            for name in sys.argv[1:]}
    print(json.dumps({
        "backends": {b.name: b.state for b in argonishche.backends()},
        "plugins": {p.name: [p.state, p.distribution.split()[0]]  # "name version"
                    for p in argonishche.plugins()},
        "tags": tags}))
    """)


def wheel_of(wheelhouse: Path, distribution: str) -> Path:
    prefix = distribution.replace("-", "_") + "-"
    wheels = [wheel for wheel in wheelhouse.glob("*.whl") if wheel.name.startswith(prefix)]
    assert len(wheels) == 1, f"{distribution}: {sorted(w.name for w in wheelhouse.iterdir())}"
    return wheels[0]


def avx512_expected_states() -> set[str]:
    """Its state on this CPU: usable (selected or not) where the CPU has every feature its
    kernels are compiled for, else unsupported-cpu."""
    if AVX512_NEEDS <= cpu_gate.probed_features():
        return {"selected", "available"}
    return {"unsupported-cpu"}


def report(venv: Path, *backends: str) -> dict:
    result = checked(run([venv / "bin" / "python", "-c", REPORT, *backends],
                         timeout=RUN_TIMEOUT, cwd=venv.parent,
                         env=user_environment(venv, venv.parent)))
    return json.loads(result.stdout.strip().splitlines()[-1])


def info(venv: Path) -> str:
    return checked(run([venv / "bin" / "python", "-m", "argonishche", "info", "--fast"],
                       timeout=RUN_TIMEOUT, cwd=venv.parent,
                       env=user_environment(venv, venv.parent))).stdout


def test_the_wheelhouse_holds_one_abi3_wheel_per_project(wheelhouse):
    for distribution in ["argonishche", *PLUGINS]:
        wheel = wheel_of(wheelhouse, distribution)
        assert "-cp311-abi3-" in wheel.name, wheel.name
    assert len(list(wheelhouse.glob("*.whl"))) == 1 + len(PLUGINS)


def test_auditwheel_finds_every_wheel_repairable_to_a_manylinux_tag(wheelhouse, tmp_path):
    # The wheels as build isolation makes them: a plugin's module is linked by the
    # argonishche.build of the core's wheel (from the wheelhouse), not of this checkout.
    core = wheel_of(wheelhouse, "argonishche")
    assert modules_without_libc(core) == []
    audit(core)
    for distribution in PLUGINS:
        assert_kernel_wheel_is_manylinux_ready(wheel_of(wheelhouse, distribution),
                                               tmp_path / distribution)


def test_the_core_wheel_declares_the_avx512_extra(wheelhouse):
    with zipfile.ZipFile(wheel_of(wheelhouse, "argonishche")) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = archive.read(name).decode()
    assert "Provides-Extra: avx512" in metadata
    assert re.search(r'^Requires-Dist: argonishche-avx512\S*; extra == "avx512"$', metadata,
                     re.MULTILINE), metadata


def test_the_extra_installs_the_avx512_plugin_in_a_fresh_venv(wheelhouse, tmp_path):
    venv = fresh_venv(tmp_path / "venv")
    installed = checked(pip_install(venv, "--find-links", wheelhouse, "argonishche[avx512]"))
    assert "does not provide the extra" not in installed.stdout
    state = report(venv)
    assert state["plugins"]["avx512"] == ["loaded", "argonishche-avx512"]
    assert state["backends"]["avx512"] in avx512_expected_states()
    row = next(line for line in info(venv).splitlines() if line.split()[:1] == ["avx512"])
    assert row.split()[1] in avx512_expected_states(), row
    # pip 23.2 knows metadata 2.1 at most, and installs the 2.4 wheels (PEP 639's license
    # fields) without a complaint: the fields and the license file are there for newer tools.
    metadata = checked(run([venv / "bin" / "python", "-c",
                            "import importlib.metadata as m; d = m.metadata('argonishche'); "
                            "print(d['Metadata-Version'], d['License-Expression'], "
                            "d.get_all('License-File'))"],
                           timeout=RUN_TIMEOUT, env=user_environment(venv, tmp_path)))
    assert metadata.stdout.split() == ["2.4", "MIT", "['LICENSE']"]
    checked(run([venv / "bin" / "python", "-m", "pip", "check"], timeout=RUN_TIMEOUT,
                env=user_environment(venv, tmp_path)))


def test_the_plugins_install_by_name_and_hash_right(wheelhouse, tmp_path):
    venv = fresh_venv(tmp_path / "venv")
    checked(pip_install(venv, "--find-links", wheelhouse, *PLUGINS))
    usable_avx512 = "selected" in avx512_expected_states()
    backends = ["example", "ref"] + (["avx512"] if usable_avx512 else [])
    state = report(venv, *backends)
    assert state["plugins"]["example"] == ["loaded", "argonishche-example"]
    assert state["plugins"]["avx512"] == ["loaded", "argonishche-avx512"]
    assert state["backends"]["avx512"] in avx512_expected_states()
    assert state["tags"] == {name: RFC9106_ARGON2ID for name in backends}


def test_a_plugin_built_without_isolation_says_what_is_missing(tmp_path):
    """A fresh venv lacks every build requirement (3.11's setuptools 65.5 cannot read the
    license expression): the build stops at once, naming them and the two ways out."""
    skip_unless_slow_tests_run()
    venv = fresh_venv(tmp_path / "venv")
    source = tmp_path / "argonishche-avx512"
    shutil.copytree(ROOT / "plugins" / "argonishche-avx512", source,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so"))
    result = pip_install(venv, "--no-build-isolation", source)
    assert result.returncode != 0, result.stdout
    assert "argonishche-avx512 cannot be built in this environment" in result.stdout
    assert re.search(r"setuptools>=77\.0\.3 \(found (none|6\d\.|7[0-6]\.)", result.stdout)
    assert "argonishche>=0.1,<0.2 (found none)" in result.stdout
    assert "leave out --no-build-isolation" in result.stdout
    assert 'pip install "setuptools>=77.0.3"' in result.stdout
    # Nothing else went first: the old setuptools never reached the metadata.
    assert "project.license" not in result.stdout
