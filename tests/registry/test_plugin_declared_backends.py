"""Blocking a backend by the name users see keeps its plugin unimported (issue 31, item 8).

A plugin's entry point need not be named after its backends (a plugin may register several), so
``ARGONISHCHE_DISABLE_BACKENDS=slow`` used to import the plugin providing ``slow`` to learn its
backends, and its import time was paid by every process.  A distribution now declares the
backends each plugin registers in the ``argonishche.backends`` entry-point group; discovery reads
them from the installed metadata before importing anything.

Real wheels (tests/plugin_wheels.py), installed with pip and used from a fresh interpreter with a
cache directory of its own; each plugin module appends a line to the file MARKER names when it is
imported, so that an import is seen, not inferred.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import plugin_wheels
import pytest

RUN_TIMEOUT = 180

pytestmark = pytest.mark.skipif(
    any(name.startswith("ARGONISHCHE_") for name in os.environ),
    reason="the interpreters run without ARGONISHCHE_* settings: they run in the envs that set "
           "none (py, py312, py313)")

#: The plugin module: it notes its import, then registers *backends* from one kernel module.
PLUGIN_MODULE = """\
import os

import argonishche

# Not in the certification child, which imports the kernel module (and so this package) with
# an environment of its own.
if "MARKER" in os.environ:
    with open(os.environ["MARKER"], "a") as marker:
        marker.write("imported\\n")


@argonishche.hookimpl
def argonishche_register_backends(register):
    for name in {backends!r}:
        register(argonishche.Backend(name=name, description="declared-names test kernels",
                                     kernel_module={package!r} + "._kernels", priority=99))
"""


def _plugin(key: str, backends: tuple[str, ...], declared: tuple[str, ...]) -> plugin_wheels.Plugin:
    """Distribution names-KEY, whose plugin (entry point ``KEY_kernels``, named after none of
    its backends) registers *backends* and whose distribution declares *declared*."""
    package = f"names_{key}"
    return plugin_wheels.Plugin(
        f"names-{key}", package, {f"{key}_kernels": package},
        kernels=(plugin_wheels.Kernels("_kernels"),),
        files={"__init__.py": PLUGIN_MODULE.format(backends=backends, package=package)},
        declarations={name: package for name in declared})


PLUGINS = {
    "declared": _plugin("declared", ("slow",), ("slow",)),
    "undeclared": _plugin("undeclared", ("slowpoke",), ()),
    "extra": _plugin("extra", ("fast", "sneaky"), ("fast",)),
    "pair": _plugin("pair", ("left", "right"), ("left", "right")),
}

PROBE = """
    import json, warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        import argonishche
        backends = {b.name: [b.state, b.reason] for b in argonishche.backends()}
        plugins = {p.name: [p.state, p.reason] for p in argonishche.plugins()}
    print(json.dumps(dict(backends=backends, plugins=plugins,
                          warnings=[str(w.message) for w in caught])))
"""


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build the plugin wheels")
    wheels = plugin_wheels.build_wheels(PLUGINS, tmp_path_factory.mktemp("declared_wheels"))
    return {key: plugin_wheels.install(wheel, tmp_path_factory.mktemp(f"site-{key}"))
            for key, wheel in wheels.items()}


def probe(site: Path, tmp_path: Path, **variables: str) -> tuple[dict, bool]:
    """What a fresh interpreter with *site* installed reports, and whether the plugin was
    imported."""
    marker = tmp_path / "imported"
    marker.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(PROBE)], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT,
                          env=environment(site, tmp_path, **variables))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), marker.exists()


def environment(site: Path, tmp_path: Path, **variables: str) -> dict[str, str]:
    """A fresh interpreter's: *site* installed, none of this run's ARGONISHCHE_* settings, a
    cache directory of its own, the marker file under *tmp_path*, and *variables*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), MARKER=str(tmp_path / "imported"),
               **variables)
    return env


def test_the_declaration_is_ordinary_entry_point_metadata(sites):
    (dist_info,) = sites["declared"].glob("names_declared-*.dist-info")
    text = (dist_info / "entry_points.txt").read_text()
    assert "[argonishche.backends]\nslow = names_declared" in text, text
    # importlib.metadata reads what pip wrote, as for any entry point.
    import importlib.metadata as metadata

    dist = next(d for d in metadata.distributions(path=[str(sites["declared"])])
                if d.metadata["Name"] == "names-declared")
    assert [(ep.name, ep.value) for ep in dist.entry_points.select(
        group="argonishche.backends")] == [("slow", "names_declared")]


def test_a_declared_backend_blocked_by_name_never_imports_its_plugin(sites, tmp_path):
    out, imported = probe(sites["declared"], tmp_path, ARGONISHCHE_DISABLE_BACKENDS="slow")
    assert not imported, f"the plugin was imported to learn it provides 'slow': {out}"
    state, reason = out["backends"]["slow"]
    assert state == "blocked" and "was not imported" in reason, out["backends"]["slow"]
    assert out["plugins"]["declared_kernels"][0] == "blocked", out["plugins"]
    assert not [w for w in out["warnings"] if "slow" in w], out["warnings"]
    info = subprocess.run([sys.executable, "-m", "argonishche", "info"], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT,
                          env=environment(sites["declared"], tmp_path,
                                          ARGONISHCHE_DISABLE_BACKENDS="slow"))
    assert info.returncode == 0, info.stderr[-3000:]
    assert re.search(r"\n  slow +blocked .*\n +reason: blocked by ARGONISHCHE_DISABLE_BACKENDS: "
                     r"its plugin 'declared_kernels' was not imported\n", info.stdout), info.stdout
    assert not (tmp_path / "imported").exists()
    # Not blocked, it is imported and its backend checked as usual.
    out, imported = probe(sites["declared"], tmp_path)
    assert imported and out["backends"]["slow"][0] in ("selected", "available"), out


def test_an_undeclared_plugin_is_imported_then_blocked_as_before(sites, tmp_path):
    out, imported = probe(sites["undeclared"], tmp_path, ARGONISHCHE_DISABLE_BACKENDS="slowpoke")
    assert imported
    assert out["backends"]["slowpoke"][0] == "blocked", out["backends"]
    assert any("declare it in" in w for w in out["warnings"]), out["warnings"]


def test_a_backend_registered_undeclared_is_refused(sites, tmp_path):
    out, imported = probe(sites["extra"], tmp_path)
    assert imported and out["backends"]["fast"][0] in ("selected", "available"), out
    assert "sneaky" not in out["backends"], out["backends"]
    state, reason = out["plugins"]["extra_kernels"]
    assert state == "failed" and "backend 'sneaky' not used: the plugin declares only fast" in (
        reason), out["plugins"]
    assert any("'sneaky' not used" in w for w in out["warnings"]), out["warnings"]
    # Its declared backend blocked: not imported, so the undeclared one cannot run either.
    out, imported = probe(sites["extra"], tmp_path, ARGONISHCHE_DISABLE_BACKENDS="fast")
    assert not imported and "sneaky" not in out["backends"], out
    # The undeclared one blocked: the plugin must be imported for the declared one; still
    # refused.
    out, imported = probe(sites["extra"], tmp_path, ARGONISHCHE_DISABLE_BACKENDS="sneaky")
    assert imported and "sneaky" not in out["backends"], out


def test_a_plugin_is_skipped_only_when_every_backend_it_declares_is_blocked(sites, tmp_path):
    out, imported = probe(sites["pair"], tmp_path, ARGONISHCHE_DISABLE_BACKENDS="left")
    assert imported
    assert out["backends"]["left"][0] == "blocked", out["backends"]
    assert out["backends"]["right"][0] in ("selected", "available"), out["backends"]
    out, imported = probe(sites["pair"], tmp_path, ARGONISHCHE_DISABLE_BACKENDS="right,left")
    assert not imported
    assert [out["backends"][name][0] for name in ("left", "right")] == ["blocked", "blocked"]
