"""Records where the cache cannot be written (issue 31, item 4): a read-only or missing cache
directory costs each process a certification, which ``info`` states with its reason, and
``ARGONISHCHE_CACHE_DIR`` gives records a place; a home or cache path from the environment that
cannot be used (HOME="", thousands of components) means "not remembered", never an exception or
a directory under ``/``.

The plugin is a real wheel (tests/plugin_wheels.py) with ref's kernels, installed with pip and
run in fresh interpreters, each test with a cache of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import plugin_wheels
import pytest
from argonishche import _settings
from argonishche._trust import record_store
from argonishche.exceptions import SettingError
from plugin_wheels import INFO_AND_HASHES, USABLE, kernel_plugin, run

pytestmark = plugin_wheels.WITHOUT_SETTINGS_ONLY

KERNEL_MODULE = "trust_right._kernels"
#: INFO_AND_HASHES, plus each backend's validation (how it was certified) and the records report.
PROBE = INFO_AND_HASHES.replace("    report()", """\
    from argonishche import _info
    out["validation"] = {b.name: b.validation for b in argonishche.backends()}
    out["records"] = _info.records_report()
    report()""")


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The right plugin (ref's kernels, priority 99), built and installed once."""
    wheels = plugin_wheels.build_wheels_or_skip({"right": kernel_plugin("right")},
                                                tmp_path_factory.mktemp("wheels"))
    return plugin_wheels.install(wheels["right"], tmp_path_factory.mktemp("site-right"))


def unwritable_cache(tmp_path: Path, how: str) -> Path:
    """A cache directory records cannot be written in: under a regular file (for every user,
    root included), or a directory of mode 0500 (root writes it all the same)."""
    if how == "under a file":
        (tmp_path / "file").write_text("")
        return tmp_path / "file" / "cache"
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root writes a read-only directory all the same")
    cache = tmp_path / "read-only"
    cache.mkdir(mode=0o500)
    return cache


def certified_now(probe) -> bool:
    return "certified now in a child process" in probe.out["validation"]["right"]


@pytest.mark.parametrize("how", ["under a file", "read-only directory"])
def test_without_a_writable_cache_info_states_what_each_process_pays(site, tmp_path, how):
    cache = unwritable_cache(tmp_path, how)
    try:
        for _ in range(2):
            probe = run(PROBE, cache, [site], ARGONISHCHE_SELECT="priority")
            assert probe.backend("right")["state"] in USABLE, probe.backend("right")
            assert probe.out["argon2_right"] and probe.out["blake2b_2mib_right"]
            assert certified_now(probe), (
                f"nothing remembered: every process certifies in a child: {probe.out}")
            records = probe.out["records"]
            assert records["why_not_writable"], records
            [cost] = records["not_remembered"]
            assert cost["what"] == f"certification of {KERNEL_MODULE}" and cost["seconds"] > 0
            info = probe.out["info"]
            # Before: info said nothing, and the write's failure was lost.
            assert "cannot be written" in info, info
            assert (f"certification of {KERNEL_MODULE}: certified in this process, not "
                    f"remembered, {cost['seconds']:.2f} s") in info, info
            assert "not remembered" in probe.out["validation"]["right"]
    finally:
        cache.parent.chmod(0o700)


def test_argonishche_cache_dir_makes_the_second_process_warm(site, tmp_path):
    (tmp_path / "file").write_text("")
    unwritable, records = tmp_path / "file" / "cache", tmp_path / "records"
    first = run(PROBE, unwritable, [site], ARGONISHCHE_SELECT="priority",
                ARGONISHCHE_CACHE_DIR=str(records))
    assert certified_now(first) and first.out["records"]["not_remembered"] == []
    assert list((records / "certified").iterdir()), "the record is in ARGONISHCHE_CACHE_DIR"
    second = run(PROBE, unwritable, [site], ARGONISHCHE_SELECT="priority",
                 ARGONISHCHE_CACHE_DIR=str(records))
    assert second.backend("right")["state"] in USABLE
    assert "remembered from an earlier run" in second.out["validation"]["right"], second.out
    assert (f"Records (certifications, selection): {records} (from ARGONISHCHE_CACHE_DIR)"
            in second.out["info"]), second.out["info"]
    assert "cannot be written" not in second.out["info"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="making records another user owns takes root")
def test_records_another_user_made_are_ignored_and_the_module_certified_again(site, tmp_path):
    # A read-only image pre-certified at build time by root, read at run time by another user:
    # simulated the other way round (the reader is root, the records another user's).
    records = tmp_path / "records"
    first = run(PROBE, tmp_path / "cache", [site], ARGONISHCHE_SELECT="priority",
                ARGONISHCHE_CACHE_DIR=str(records))
    assert certified_now(first)
    for path in [records, *records.rglob("*")]:
        os.chown(path, 65534, 65534)
    second = run(PROBE, tmp_path / "cache", [site], ARGONISHCHE_SELECT="priority",
                 ARGONISHCHE_CACHE_DIR=str(records))
    assert second.backend("right")["state"] in USABLE
    assert certified_now(second), "another user's record vouches for nothing"
    assert second.out["argon2_right"] and second.out["blake2b_2mib_right"]
    assert "Ignored record" in second.out["info"] and "owned by user 65534" in second.out["info"]
    assert "cannot be written" in second.out["info"]  # the directory is another user's too


def test_an_empty_home_is_no_cache_directory_never_slash_cache(site, tmp_path):
    if os.path.lexists("/.cache"):
        pytest.skip("/.cache exists already: whether this run made it cannot be told")
    probe = run(PROBE, tmp_path / "unused", [site], XDG_CACHE_HOME="", HOME="")
    try:
        out = probe.ok()
        assert not os.path.lexists("/.cache"), "HOME='' made /.cache"
    finally:
        if os.path.lexists("/.cache"):  # made by this test before the fix: leave no trace
            import shutil

            shutil.rmtree("/.cache")
    assert out["argon2_right"] and out["blake2b_2mib_right"]
    assert probe.backend("right")["state"] in USABLE
    assert out["records"]["directory"] is None and "no cache directory" in out["info"], out
    assert "Traceback" not in probe.stderr


def test_a_cache_path_of_2500_components_costs_no_exception(site, tmp_path):
    deep = Path(str(tmp_path) + "/c" * 2500)
    probe = run(PROBE, deep, [site])  # selection measures and tries to remember too
    out = probe.ok()
    assert "Traceback" not in probe.stderr and "RecursionError" not in probe.stderr
    assert out["argon2_right"] and out["blake2b_2mib_right"]
    assert probe.backend("right")["state"] in USABLE
    assert "too many path components" in out["records"]["why_not_writable"]


# ---- in this process: the settings and the write's failure ------------------------------------


@pytest.mark.parametrize("home", ["", "/", "//"])
def test_an_empty_or_root_home_has_no_cache_directory(home):
    assert _settings.user_cache_home({"HOME": home}) is None
    assert _settings.records_home({"HOME": home})[0] is None


def test_argonishche_cache_dir_comes_first_and_must_be_absolute(tmp_path):
    given = {"ARGONISHCHE_CACHE_DIR": str(tmp_path), "XDG_CACHE_HOME": "/elsewhere"}
    assert _settings.records_home(given) == (str(tmp_path), "ARGONISHCHE_CACHE_DIR")
    assert _settings.records_home({"XDG_CACHE_HOME": "/x"}) == ("/x/argonishche",
                                                                "XDG_CACHE_HOME")
    with pytest.raises(SettingError, match="ARGONISHCHE_CACHE_DIR='relative': .*absolute"):
        _settings.parse({"ARGONISHCHE_CACHE_DIR": "relative"})
    assert _settings.parse(given).cache_dir == str(tmp_path)


def test_a_record_that_cannot_be_written_is_noted_not_lost(tmp_path, monkeypatch):
    monkeypatch.setattr(record_store, "unwritten", {})
    (tmp_path / "file").write_text("")
    path = str(tmp_path / "file" / "kind" / "record")
    why = record_store.write(path, [("field", "value")])
    assert why and record_store.unwritten == {path: why}
    deep = str(tmp_path) + "/c" * 2500 + "/record"
    assert "too many path components" in record_store.write(deep, [("field", "value")])
