"""The registry's selection, with fake plugins where one is needed: by priority, forced
(ARGONISHCHE_BACKEND, in this process and in a fresh one), or measured (ARGONISHCHE_SELECT); the
errors when nothing can be used; one registry however many threads ask for it first.

Discovery is tested in test_registry_discovery.py, what the registry refuses after vetting in
test_registry_vetting.py, and measurement and its records in test_selection.py and
test_remembered_selection.py.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading

import argonishche
import pytest
from argonishche import _process_registry, _registry, _selection, hookspecs, testing
from argonishche._trust import vetting
from argonishche.exceptions import BackendError, SettingError
from argonishche_backends.table import BUILTIN_BACKENDS
from support import (
    SMALL,
    FakeEntryPoint,
    builtin_entry_points,
    make_registry,
    plugin_registering,
    state_of,
    timings_where,
)


def test_by_priority_the_usable_backend_with_the_highest_priority_is_selected():
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "priority"})
    usable = [b for b in reg.report() if b.state in ("selected", "available")]
    best = max(usable, key=lambda b: (b.priority, b.name))
    assert reg.selected_name("argon2") == best.name
    assert reg.selected_name("blake2b") == best.name
    with pytest.raises(ValueError, match="algorithm"):
        argonishche.selected_backend("sha3")


def test_forcing_an_unknown_backend_lists_what_is_registered():
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "nosuch"})
    with pytest.raises(SettingError,
                       match=r"ARGONISHCHE_BACKEND='nosuch': must be a registered backend.*ref \("):
        reg.selected_name("argon2")


def test_forcing_an_unsupported_backend_says_why(monkeypatch):
    monkeypatch.setattr(vetting.cpu_gate, "features", lambda: frozenset())
    needs = hookspecs.Backend(name="vec", description="SSE2", kernel_module="nope",
                              cpu_features={"sse2"}, priority=5)
    reg = make_registry(FakeEntryPoint("vec", plugin_registering(needs)),
                        environ={"ARGONISHCHE_BACKEND": "vec"})
    with pytest.raises(BackendError,
                       match="vec cannot be used: unsupported-cpu: this CPU lacks sse2"):
        reg.kernel_table("blake2b")


def test_forcing_a_usable_backend_selects_it_over_priority():
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "REF"})
    assert reg.selected_name("argon2") == "ref"
    assert state_of(reg, "ref").selected_for == ("argon2", "blake2b")


def test_no_backend_at_all_is_a_clear_error():
    everything = ",".join(b.name for b in make_registry().report())
    reg = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": everything})
    with pytest.raises(BackendError, match="no usable backend"):
        reg.kernel_table("argon2")


def test_per_call_backend_must_be_usable():
    with pytest.raises(BackendError, match="nosuch.*no such backend.*Available: "):
        argonishche.argon2_hash(b"pw", b"saltsalt", memory_cost=8, parallelism=1,
                                backend="nosuch")


def test_registry_starts_once_under_concurrent_first_use(monkeypatch):
    monkeypatch.setattr(_process_registry, "_instance", None)
    seen, barrier = [], threading.Barrier(8)

    def first_use():
        barrier.wait()
        seen.append(_registry.get())
    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # One registry is built.  A thread that asked while the builder ran plugin code (with
    # plugins installed: tox -e plugins) got the provisional one of the built-ins instead of
    # waiting (see argonishche._registry), itself made once per build.
    final = _registry.get()
    assert len(seen) == 8 and not final.provisional
    assert all(r is final or r.provisional for r in seen)
    assert len({id(r) for r in seen if r.provisional}) <= 1


def run_python(code, **env):
    import os
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                          text=True, timeout=120)


def test_env_force_selects_the_named_backend_in_a_fresh_process():
    out = run_python("import argonishche as a; print(a.selected_backend('argon2'), "
                     "a.selected_backend('blake2b'))", ARGONISHCHE_BACKEND="ref")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ref", "ref"]


def test_env_force_unknown_name_fails_loudly_in_a_fresh_process():
    out = run_python("import argonishche as a; a.argon2_hash(b'p', b'saltsalt', memory_cost=8,"
                     " parallelism=1)", ARGONISHCHE_BACKEND="turbo")
    assert out.returncode != 0
    assert "SettingError: ARGONISHCHE_BACKEND='turbo'" in out.stderr and "ref" in out.stderr


def test_env_disable_blocks_builtin_plugins_in_a_fresh_process():
    # Every installed plugin named: the built-ins are registered (as blocked), other plugins not
    # imported, their declared backends (argonishche.backends) listed as blocked.
    from argonishche._entry_points import entry_points

    builtin = sorted(row.name for row in BUILTIN_BACKENDS)
    declared = {ep.name for ep in entry_points("argonishche.backends")}
    everything = sorted({*builtin, *(ep.name for ep in builtin_entry_points())})
    code = ("import argonishche as a\n"
            "print(sorted(b.name for b in a.backends() if b.state == 'blocked'))\n"
            "a.blake2b(b'x').digest()")
    out = run_python(code, ARGONISHCHE_DISABLE_BACKENDS=",".join(everything))
    assert out.stdout.strip() == str(sorted({*builtin, *declared}))
    assert out.returncode != 0 and "no usable backend" in out.stderr
    out = run_python(code.replace("a.blake2b(b'x').digest()", "print(a.selected_backend())"),
                     ARGONISHCHE_DISABLE_BACKENDS="ref")
    expected = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": "ref"}
                             ).selected_name("argon2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["['ref']", expected]


def test_measured_selection_is_what_the_policy_says_on_this_cpu(install):
    reg = install(make_registry(environ={"ARGONISHCHE_SELECT": "measure"}))
    usable = {b.name for b in reg.report() if b.state in ("selected", "available")}
    for algorithm in _registry.ALGORITHMS:
        choice = reg.choices[algorithm]
        assert choice.how == "measured" and set(choice.ns_per_kib) == usable
        assert all(ns > 0 for ns in choice.ns_per_kib.values())
        assert set(choice.noise) == usable and all(0 <= n < 1 for n in choice.noise.values())
        assert choice.backend in _selection.ties(choice.ns_per_kib, choice.noise)
        assert choice.backend == testing.expected_backend(algorithm)


def test_each_algorithm_takes_the_backend_measured_fastest_not_the_ladders(monkeypatch,
                                                                           install):
    by_priority = [b.name for b in make_registry(environ={"ARGONISHCHE_SELECT": "priority"},
                                                 installed=False).report()
                   if b.state in ("selected", "available")]
    if len(by_priority) < 2:
        pytest.skip(f"only {by_priority} can run here: nothing to choose between")
    highest, lowest = by_priority[0], by_priority[-1]
    monkeypatch.setattr(_selection, "sample",
                        timings_where({"blake2b": lowest, "argon2": highest}))
    reg = install(make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False))
    assert (reg.selected_name("blake2b"), reg.selected_name("argon2")) == (lowest, highest)
    assert reg.choices["blake2b"].why.startswith("the fastest: 2.00x faster than ")
    why = reg.choices["blake2b"].why
    assert f"2.00x faster than {highest}" in why and "the ladder's pick" in why
    assert reg.kernel_table("blake2b") is reg.entries[lowest].table
    assert reg.kernel_table("argon2") is reg.entries[highest].table
    # Both tables hash together (Argon2's H0 and H' run on the BLAKE2b table): the right tags.
    assert argonishche.argon2_hash(b"password", b"somesalt", **SMALL) == \
        argonishche.argon2_hash(b"password", b"somesalt", backend="ref", **SMALL)
    assert argonishche.blake2b(b"abc").digest() == hashlib.blake2b(b"abc").digest()


def test_within_the_noise_the_ladder_decides(monkeypatch):
    monkeypatch.setattr(_selection, "sample", lambda entry, algorithm, scratch: 100.0)
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False)
    ladder = max((b for b in reg.report() if b.state in ("selected", "available")),
                 key=lambda b: (b.priority, b.name)).name
    for algorithm in _registry.ALGORITHMS:
        assert reg.selected_name(algorithm) == ladder
        assert "the ladder decides among them" in reg.choices[algorithm].why


def test_calibrate_keeps_a_forced_backend_and_reports_timings():
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "ref"})
    timings = reg.calibrate()
    assert set(timings) == set(_registry.ALGORITHMS)
    assert all(ns > 0 for per_backend in timings.values() for ns in per_backend.values())
    assert reg.selected_name("argon2") == reg.selected_name("blake2b") == "ref"
    assert {c.how for c in reg.choices.values()} == {"forced"}


def test_unknown_selection_mode_is_an_error_naming_the_variable():
    with pytest.raises(SettingError, match=r"ARGONISHCHE_SELECT='fastest-please': must be "
                                           r"auto \(measure once per CPU"):
        make_registry(environ={"ARGONISHCHE_SELECT": "fastest-please"})
