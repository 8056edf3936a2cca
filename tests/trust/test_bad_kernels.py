"""Real broken kernels, built as installed distributions: what a user gets with one installed.

tests/trust/bad_plugins/ is a plugin project whose kernels are ref's with one deliberate bug,
switched on by a ``#define`` (see its src/bad.c).  It is built into one wheel per bug class that
third-party kernels had, installed with ``pip install --target`` into a directory of its own, and
run in a fresh interpreter with that directory on PYTHONPATH, where argonishche's entry-point
reader finds it like any installed plugin.  Its priority, 99, is above every built-in backend: it
is selected unless a check catches the bug.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from plugin_wheels import pip, wait_all

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "bad_plugins"
REF_SOURCE = HERE.parents[1] / "backends" / "ref.c"

#: Bug class -> the src/bug.h that switches it on.
BUGS = {
    "G wrong for ref > 100 blocks behind prev": "#define BAD_G_BEHIND 100",
    "G wrong for ref > 300 blocks behind prev": "#define BAD_G_BEHIND 300",
    "F wrong for runs of >= 8 blocks": "#define BAD_F_RUN_FROM 8",
    "F wrong for one run > 8,192 blocks": "#define BAD_F_RUN_FROM 8193",
    "a NULL Argon2 kernel in the table": "#define BAD_NULL_G",
    # Right kernels, but the plugin's entry point takes a built-in backend's name.
    "an entry point named avx2": "",
    "F ignores the last-node flag f1": "#define BAD_F_NO_LAST_NODE",
    "a table built against kernel ABI 2": "#define BAD_STALE_ABI",
}
G_100, G_300, F_8, F_8193, NULL_G, NAMED_AVX2, NO_F1, STALE_ABI = BUGS
#: The entry point each plugin is installed under (the template's own: "bad").
ENTRY_POINT = {NAMED_AVX2: "avx2"}
RUN_TIMEOUT = 120

# What a user sees, printed as JSON: the bad backend's state, what is selected, whether hashes
# are right (against argon2-cffi and hashlib), whether an argon2-cffi hash verifies, and, for the
# test, the quick self-test and the certification of the module called directly.
PROBE = """
    import hashlib, importlib, json, sys
    import argon2
    import argonishche
    from argonishche._trust import vetting
    from argonishche._trust import self_test

    bad = {b.name: b for b in argonishche.backends()}["bad"]
    module = importlib.import_module("argonishche_bad_kernels._kernels")
    table = vetting.kernel_table(module)
    password, salt = b"correct horse", b"somesalt"
    # m = 2 MiB: Argon2 references reach up to 2,048 blocks back; 2 MiB of BLAKE2b input is one
    # run of 16,382 blocks
    expected = argon2.low_level.hash_secret_raw(password, salt, 1, 2048, 1, 32,
                                                argon2.low_level.Type.ID, 0x13)
    long_message = bytes(range(256)) * 8192
    encoded = argon2.PasswordHasher(time_cost=1, memory_cost=2048, parallelism=2).hash(password)
    try:
        verifies = argonishche.argon2_verify(encoded, password)
    except argonishche.VerifyMismatchError:
        verifies = False
    out = dict(state=bad.state, reason=bad.reason, distribution=bad.distribution,
               selected=argonishche.selected_backend("argon2"), quick=self_test.run(table),
               argon2_right=argonishche.argon2_hash(
                   password, salt, type="id", time_cost=1, memory_cost=2048, parallelism=1,
                   hash_len=32) == expected,
               blake2b_right=argonishche.blake2b(long_message).digest()
               == hashlib.blake2b(long_message).digest(),
               verifies=verifies)
    if "--certify" in sys.argv:
        from argonishche._trust import certification
        results = [certification.certify(module, table) for _ in range(2)]
        out["certify"] = [dict(passed=r.passed, failures=r.failures, cached=r.cached)
                          for r in results]
        out["is_certified"] = certification.is_certified(module)
        out["records"] = len(list(__import__("os").scandir(certification.cache_directory())))
    print(json.dumps(out))
"""


def build_and_install(bugs: dict[str, str], root: Path,
                      entry_points: dict[str, str] | None = None) -> dict[str, Path]:
    """Build tests/trust/bad_plugins into a wheel per bug (its src/bug.h: *bugs*' value, its
    entry point named by *entry_points*, else "bad") and pip install each into a directory of its
    own under *root*; bug -> that directory.  Skips without a C compiler."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build the deliberately broken plugins")
    entry_points = entry_points or {}
    projects = {bug: root / f"project{i}" for i, bug in enumerate(bugs)}
    for bug, project in projects.items():
        shutil.copytree(TEMPLATE, project, ignore=shutil.ignore_patterns(
            "build", "*.egg-info", "__pycache__", "ref.c", "bug.h"))
        shutil.copy(REF_SOURCE, project / "src" / "ref.c")
        (project / "src" / "bug.h").write_text(bugs[bug] + "\n")
        if bug in entry_points:
            pyproject = project / "pyproject.toml"
            pyproject.write_text(pyproject.read_text().replace(
                'bad = "argonishche_bad_kernels"',
                f'{entry_points[bug]} = "argonishche_bad_kernels"'))
    # The builds, then the installs, run at once: a wheel takes a few seconds.
    wait_all({bug: pip("wheel", "--wheel-dir", project / "dist", project)
              for bug, project in projects.items()}, "pip wheel")
    sites = {bug: root / f"site{i}" for i, bug in enumerate(bugs)}
    wait_all({bug: pip("install", "--target", sites[bug], *(projects[bug] / "dist").glob("*.whl"))
              for bug in bugs}, "pip install --target")
    return sites


def run_with_plugin(site: Path, script: str, cache: Path, *args: str,
                    **environ: str) -> dict:
    """Run *script* (dedented) in a fresh interpreter that finds the plugin installed in *site*,
    with *cache* as its cache directory (not the user's), none of the caller's ARGONISHCHE_*
    settings and *environ*; what it printed, as JSON."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    env["XDG_CACHE_HOME"] = str(cache)
    env.update(environ)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    assert done.returncode == 0, f"exit {done.returncode}:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """Bug class -> the directory its plugin wheel is installed in (built once per session)."""
    pytest.importorskip("argon2", reason="argon2-cffi gives the right hashes to compare with")
    return build_and_install(BUGS, tmp_path_factory.mktemp("bad_plugins"), ENTRY_POINT)


@pytest.fixture(scope="module")
def probe(installed, tmp_path_factory):
    """Run PROBE with one bug's plugin installed; its findings as a dict (memoized per bug)."""
    found: dict[tuple[str, bool], dict] = {}

    def run(bug: str, certify: bool = False) -> dict:
        if (bug, certify) not in found:
            found[bug, certify] = run_with_plugin(
                installed[bug], PROBE, tmp_path_factory.mktemp("cache"),
                *(["--certify"] if certify else []))
        return found[bug, certify]
    return run


@pytest.mark.parametrize("bug, says", [
    (G_100, "G (xor_into_next=0 and 1) with the reference 101 blocks behind prev (and 11 more"),
    (G_300, "G (xor_into_next=0 and 1) with the reference 301 blocks behind prev (and 6 more"),
    (F_8, "BLAKE2b F over a run of 8 blocks (and 5 more of 6 run lengths) in one call"),
    (NO_F1, "BLAKE2b-512 of 0 bytes with fanout=1 depth=1 last_node=True")],
    ids=["G beyond 100 blocks", "G beyond 300 blocks", "F runs from 8 blocks", "F without f1"])
def test_caught_at_start_up_and_not_selected(probe, bug, says):
    out = probe(bug)
    assert out["distribution"] == "argonishche-bad-kernels 1.0"
    assert out["state"] == "selftest-failed", out
    assert says in out["reason"]
    assert out["selected"] != "bad"
    assert out["argon2_right"] and out["blake2b_right"] and out["verifies"], out


def test_run_over_8192_blocks_passes_the_quick_self_test_but_fails_certification(probe):
    out = probe(F_8193, certify=True)
    # The quick self-test cannot afford a run of 8,193 blocks (a message over 1 MiB): it passes.
    assert out["quick"] == []
    # The registry certified the new module at start-up, and excluded it.
    assert out["state"] == "certification-failed", out
    assert out["selected"] != "bad"
    assert out["blake2b_right"] and out["argon2_right"] and out["verifies"], out
    # Certifying again gives the outcome remembered by the module file's hash.
    first, again = out["certify"]
    assert not first["passed"] and first["cached"] and again == first
    assert first["failures"][0] == ("BLAKE2b F over a run of 8193 blocks (and 4 more of 84 run "
                                    "lengths) in one call")
    assert out["is_certified"] is False and out["records"] == 1


# What any plugin leaves behind, for the cases where the "bad" backend may not even register:
# every backend's state, every plugin record, whether the plugin's module was imported at all,
# and whether hashing is right.
OUTCOME = """
    import json, sys
    import argon2
    import argonishche
    from argonishche import _registry

    password, salt = b"correct horse", b"somesalt"
    expected = argon2.low_level.hash_secret_raw(password, salt, 1, 2048, 1, 32,
                                                argon2.low_level.Type.ID, 0x13)
    print(json.dumps(dict(
        backends={b.name: [b.state, b.reason, b.distribution] for b in argonishche.backends()},
        plugins=[[p.name, p.distribution, p.state, p.reason] for p in argonishche.plugins()],
        imported="argonishche_bad_kernels" in sys.modules,
        selected=argonishche.selected_backend("argon2"),
        argon2_right=argonishche.argon2_hash(password, salt, type="id", time_cost=1,
                                             memory_cost=2048, parallelism=1) == expected)))
"""


@pytest.fixture(scope="module")
def outcome(installed, tmp_path_factory):
    """Run OUTCOME with one plugin installed and *environ* set; its findings as a dict."""
    def run(bug: str, **environ: str) -> dict:
        return run_with_plugin(installed[bug], OUTCOME, tmp_path_factory.mktemp("cache"),
                               **environ)
    return run


def test_an_entry_point_named_like_a_built_in_backend_is_refused_unimported(outcome):
    out = outcome(NAMED_AVX2)
    refused = [p for p in out["plugins"] if p[1] == "argonishche-bad-kernels 1.0"]
    assert [p[:3] for p in refused] == [["avx2", "argonishche-bad-kernels 1.0", "failed"]]
    assert "belongs to a built-in backend" in refused[0][3]
    assert not out["imported"] and "bad" not in out["backends"]
    assert out["backends"]["avx2"][2].startswith("argonishche ")  # the built-in is still there
    assert out["argon2_right"]


def test_a_plugin_built_against_kernel_abi_2_is_refused_before_any_kernel_runs(outcome):
    out = outcome(STALE_ABI)
    state, reason, distribution = out["backends"]["bad"]
    assert state == "load-failed" and "kernel table says ABI 2" in reason, reason
    assert "expected ABI 3" in reason and distribution == "argonishche-bad-kernels 1.0"
    assert out["selected"] != "bad" and out["argon2_right"]


def test_a_null_kernel_in_an_installed_plugin_is_refused_without_a_crash(outcome):
    out = outcome(NULL_G)
    state, reason, distribution = out["backends"]["bad"]
    assert state == "load-failed" and "NULL argon2_fill_block" in reason
    assert distribution == "argonishche-bad-kernels 1.0"
    assert out["selected"] != "bad" and out["argon2_right"]
    # With a built-in forced, it is not even imported (this was a crash too).
    forced = outcome(NULL_G, ARGONISHCHE_BACKEND="ref")
    assert not forced["imported"] and forced["selected"] == "ref" and forced["argon2_right"]


@pytest.mark.parametrize("name", ["bad", "argonishche-bad-kernels", "Argonishche_Bad_Kernels"])
def test_blocking_by_backend_or_distribution_name_never_imports_the_plugin(outcome, name):
    out = outcome(G_100, ARGONISHCHE_DISABLE_BACKENDS=name)
    assert not out["imported"] and "bad" not in out["backends"]
    blocked = [p for p in out["plugins"] if p[0] == "bad"]
    assert [p[2] for p in blocked] == ["blocked"]
    assert out["argon2_right"]


def test_a_forced_built_in_backend_never_imports_the_plugin(outcome):
    out = outcome(G_100, ARGONISHCHE_BACKEND="avx2")
    assert not out["imported"] and "bad" not in out["backends"]
    assert [p[2] for p in out["plugins"] if p[0] == "bad"] == ["deferred"]
    assert out["selected"] == "avx2" and out["argon2_right"]
