"""Selection by measurement, remembered per CPU (argonishche._selection, _remembered_selection and
record_store): measured on first use, read back by later registries and processes, never used on
another CPU or for other backend modules, ignored (never raised) when corrupt or not to be
trusted, and the settings that change it; and, in a pytest of its own, the selection tests
passing where measurement disagrees with the ladder, as it does on an AMD Zen 5.

Each test has a cache directory of its own (conftest.py's process_state fixture); the registries
here are the test's own, never the process's.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import textwrap

import argonishche
import pytest
from argonishche import _registry, _remembered_selection, _selection
from argonishche._trust import cpu_gate, record_store
from argonishche.exceptions import BackendError
from support import make_registry, timings_where

TESTS = pathlib.Path(__file__).resolve().parents[1]
TOOLS = TESTS.parent / "tools"


def usable_names(reg) -> list[str]:
    """The usable backends, the ladder's pick first."""
    return [b.name for b in reg.report() if b.state in ("selected", "available")]


@pytest.fixture
def cache(process_state):
    """The test's selection records' directory, empty: conftest.py's process_state gave the
    test a cache of its own, seeded with the process registry's record."""
    path = pathlib.Path(process_state, "argonishche", "selection")
    shutil.rmtree(path, ignore_errors=True)
    return path


@pytest.fixture
def samples(monkeypatch):
    """Every timed workout, as (backend, algorithm), in the order the measurement made them."""
    made = []
    real = _selection.sample

    def spy(entry, algorithm, scratch):
        made.append((entry.name, algorithm))
        return real(entry, algorithm, scratch)
    monkeypatch.setattr(_selection, "sample", spy)
    return made


def forbid_measuring(monkeypatch):
    def refuse(entry, algorithm, scratch):
        raise AssertionError("measured although a record should have been used")
    monkeypatch.setattr(_selection, "sample", refuse)


def only_record(cache: pathlib.Path) -> pathlib.Path:
    files = [p for p in cache.iterdir() if not p.name.endswith(".tmp")]
    assert len(files) == 1, files
    return files[0]


def without_settings(**environ) -> dict[str, str]:
    """This process's environment without the ARGONISHCHE_* variables a tox env sets (a forced
    backend, say), plus *environ*: for a child that must select as the default does."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("ARGONISHCHE_")},
            **environ}


def multi_backend_registry(installed=False, **environ):
    reg = make_registry(environ=environ, installed=installed)
    if len(reg.usable()) < 2:
        pytest.skip(f"only {usable_names(reg)} can run here: nothing is measured")
    return reg


# ---- first use, and later uses ----------------------------------------------------------------


def test_first_use_measures_every_usable_backend_interleaved_and_remembers(cache, samples):
    reg = multi_backend_registry()
    names = usable_names(reg)
    for choice in reg.choices.values():
        assert choice.how == "measured" and set(choice.ns_per_kib) == set(names)
        assert "measured in" in choice.why and choice.record == str(only_record(cache))
    # Interleaved: each round times every backend once per algorithm, each round starting with
    # another backend (after one warm-up call each, not counted).
    per_round = 2 * len(names)
    rounds = [samples[i:i + per_round] for i in range(per_round, len(samples), per_round)]
    assert len(rounds) >= _selection.MIN_ROUNDS and all(len(r) == per_round for r in rounds)
    assert all(sorted(r) == sorted(rounds[0]) for r in rounds)
    assert rounds[0][0][0] != rounds[1][0][0]
    record = only_record(cache)
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    text = record.read_text()
    assert f"cpu: {cpu_gate.identity()}\n" in text and f"argonishche: {argonishche.__version__}\n" \
        in text and f"kernel_abi: {argonishche.KERNEL_ABI}\n" in text
    for name in names:
        assert f"backend: {name} argonishche_backends._{name} " in text


def test_a_later_registry_reads_the_record_and_measures_nothing(cache, monkeypatch):
    first = multi_backend_registry()
    forbid_measuring(monkeypatch)
    again = make_registry(installed=False)
    for algorithm, choice in again.choices.items():
        assert choice.how == "remembered"
        assert choice.backend == first.choices[algorithm].backend
        assert choice.measured_at == first.choices[algorithm].measured_at
        assert choice.ns_per_kib == pytest.approx(first.choices[algorithm].ns_per_kib, abs=0.01)


def test_a_later_process_reads_the_record_and_measures_nothing(cache):
    multi_backend_registry(installed=True)   # the backends a new process finds
    code = """
        import argonishche
        from argonishche import _registry, _selection
        def refuse(*args):
            raise AssertionError("measured")
        _selection.sample = refuse
        print(sorted({c.how for c in _registry.get().choices.values()}))
        """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120, env=without_settings())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "['remembered']", out.stdout + out.stderr


def test_each_algorithm_may_come_from_another_backend(cache, monkeypatch, install):
    names = usable_names(multi_backend_registry(ARGONISHCHE_SELECT="priority"))
    lowest, highest = names[-1], names[0]   # report order: the ladder's
    monkeypatch.setattr(_selection, "sample", timings_where({"blake2b": lowest}))
    reg = install(make_registry(installed=False))
    assert (reg.selected_name("blake2b"), reg.selected_name("argon2")) == (lowest, highest)
    assert {b.name: set(b.selected_for) for b in reg.report() if b.selected_for} == {
        lowest: {"blake2b"}, highest: {"argon2"}}
    assert "the ladder decides" in reg.choices["argon2"].why
    assert argonishche.selected_backend("blake2b") == lowest


# ---- the key: CPU, modules, version ------------------------------------------------------------


def test_a_record_made_on_another_cpu_is_never_used(cache, monkeypatch, samples):
    multi_backend_registry()
    mine = only_record(cache)
    # The same file, as a home directory shared with another machine would show it: its cpu
    # line is another CPU's.
    text = mine.read_text()
    other_cpu = text.replace(f"cpu: {cpu_gate.identity()}", "cpu: x86_64 GenuineIntel "
                             "signature=000806f8 brand=Intel_Xeon")
    assert other_cpu != text
    mine.write_text(other_cpu)
    samples.clear()
    reg = make_registry(installed=False)
    assert {c.how for c in reg.choices.values()} == {"measured"} and samples
    assert only_record(cache).read_text().count(cpu_gate.identity()) == 1  # rewritten for this CPU
    # ... and another CPU's record, under its own key, stays where it is and is not read.
    monkeypatch.setattr(cpu_gate, "identity", lambda: "x86_64 GenuineIntel signature=000806f8")
    samples.clear()
    other = make_registry(installed=False)
    assert {c.how for c in other.choices.values()} == {"measured"} and samples
    assert len(list(cache.iterdir())) == 2


@pytest.mark.parametrize("change", ["version", "kernel ABI", "module file"])
def test_the_key_holds_the_version_the_kernel_abi_and_each_module_file(change, tmp_path,
                                                                       monkeypatch):
    reg = multi_backend_registry(ARGONISHCHE_SELECT="priority")
    candidates = reg.usable()
    before = _remembered_selection.key(candidates)
    if change == "version":
        monkeypatch.setattr(_remembered_selection, "__version__", "99.0")
    elif change == "kernel ABI":
        monkeypatch.setattr(_remembered_selection, "lib", type("Lib", (), {
            "ARGONISHCHE_KERNEL_ABI": argonishche.KERNEL_ABI + 1}))
    else:  # the same module name and path, another build: size or modification time differ
        copy = tmp_path / "kernels.so"
        copy.write_bytes(pathlib.Path(candidates[0].module.__file__).read_bytes())
        monkeypatch.setattr(candidates[0], "module", type("M", (), {"__file__": str(copy)}))
        before = _remembered_selection.key(candidates)
        os.utime(copy, ns=(1, 1))
    assert _remembered_selection.key(candidates) != before


# ---- records that must be ignored -------------------------------------------------------------


def _valid_record(cache):
    multi_backend_registry()
    return only_record(cache)


CORRUPTIONS = {
    "garbage": lambda p: p.write_bytes(os.urandom(300)),
    "not UTF-8": lambda p: p.write_bytes(p.read_bytes().replace(b"argon2: ", b"argon2: \xff")),
    "empty": lambda p: p.write_bytes(b""),
    "truncated": lambda p: p.write_bytes(p.read_bytes()[:len(p.read_bytes()) // 2]),
    "a line that is not a field": lambda p: p.write_text(p.read_text() + "hello\n"),
    "a choice that is no candidate": lambda p: p.write_text(
        p.read_text().replace("\nblake2b: ", "\nblake2b: nosuchbackend\nx: ")),
    "a choice given twice": lambda p: p.write_text(p.read_text() + "argon2: ref\n"),
    "a negative time": lambda p: p.write_text(p.read_text().replace(" time: ref ",
                                                                    " time: ref -")),
    "huge": lambda p: p.write_text(
        p.read_text() + "padding: " + "x" * record_store.MAX_BYTES + "\n"),
    "group-writable": lambda p: p.chmod(0o620),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_a_record_that_cannot_be_trusted_is_measured_over_never_raised(cache, samples,
                                                                       corruption):
    record = _valid_record(cache)
    CORRUPTIONS[corruption](record)
    samples.clear()
    reg = make_registry(installed=False)
    assert samples and {c.how for c in reg.choices.values()} == {"measured"}
    # Rewritten whole: the next registry reads it.
    again = make_registry(installed=False)
    assert {c.how for c in again.choices.values()} == {"remembered"}


def test_a_directory_others_may_write_to_is_no_cache(cache, samples):
    _valid_record(cache)
    cache.chmod(0o777)   # anyone could have put the record there
    samples.clear()
    reg = make_registry(installed=False)
    assert not samples and {c.how for c in reg.choices.values()} == {"priority"}
    assert "only it may write" in reg.choices["argon2"].why


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="only root can give a file to another user")
def test_a_record_owned_by_another_user_is_not_used(cache, samples):
    record = _valid_record(cache)
    os.chown(record, 4242, 4242)
    samples.clear()
    assert {c.how for c in make_registry(installed=False).choices.values()} == {"measured"}
    assert samples


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero", "directory"])
def test_a_record_path_that_is_no_regular_file_neither_hangs_nor_raises(cache, samples, kind):
    record = _valid_record(cache)
    record.unlink()
    if kind == "fifo":
        os.mkfifo(record, 0o600)  # opened without O_NONBLOCK, the read would wait forever
    elif kind == "directory":
        record.mkdir(mode=0o700)
    else:
        record.symlink_to("/dev/zero")
    samples.clear()
    reg = make_registry(installed=False)
    assert samples and {c.how for c in reg.choices.values()} == {"measured"}
    if kind == "directory":
        assert "not remembered" in reg.choices["argon2"].why


# ---- the settings ------------------------------------------------------------------------------


def test_priority_mode_measures_reads_and_writes_nothing(cache, samples):
    reg = multi_backend_registry(ARGONISHCHE_SELECT="priority")
    assert not samples and not cache.exists()
    for choice in reg.choices.values():
        assert (choice.how, choice.backend) == ("priority", usable_names(reg)[0])
        assert "ARGONISHCHE_SELECT=priority" in choice.why


def backdated(record: pathlib.Path) -> str:
    """Make *record* look measured long ago (a new measurement then shows in it); its text."""
    text = re.sub(r"(?m)^measured_at: .*$", "measured_at: 2000-01-01T00:00:00Z",
                  record.read_text())
    record.write_text(text)
    return text


def test_measure_mode_measures_afresh_and_rewrites_the_record(cache, samples):
    multi_backend_registry()
    first = backdated(only_record(cache))
    samples.clear()
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False)
    assert samples and {c.how for c in reg.choices.values()} == {"measured"}
    assert only_record(cache).read_text() != first


def test_calibrate_measures_afresh_and_rewrites_the_record(cache, samples):
    reg = multi_backend_registry()
    first = backdated(only_record(cache))
    samples.clear()
    timings = reg.calibrate()
    assert samples and set(timings) == set(_registry.ALGORITHMS)
    assert only_record(cache).read_text() != first
    assert {c.how for c in reg.choices.values()} == {"measured"}


def test_a_forced_backend_stays_forced_and_nothing_is_measured(cache, samples):
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "ref"}, installed=False)
    assert not samples and not cache.exists()
    for choice in reg.choices.values():
        assert (choice.how, choice.backend, choice.why) == (
            "forced", "ref", "forced by ARGONISHCHE_BACKEND=ref")


@pytest.mark.parametrize("where", ["under a file", "relative, no home"])
def test_without_a_writable_cache_the_ladder_decides_and_says_why(tmp_path, monkeypatch,
                                                                  samples, where):
    if where == "under a file":
        (tmp_path / "file").write_text("")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", "relative")   # ignored, as the XDG spec says
        monkeypatch.setenv("HOME", "relative-too")          # so there is no cache directory
    reg = multi_backend_registry()
    assert not samples
    for choice in reg.choices.values():
        assert choice.how == "priority" and choice.backend == usable_names(reg)[0]
        assert "no measurement remembered, and none can be" in choice.why
    # ARGONISHCHE_SELECT=measure still measures, and says it could not remember.
    measured = make_registry(environ={"ARGONISHCHE_SELECT": "measure"}, installed=False)
    assert samples and "not remembered" in measured.choices["blake2b"].why


def test_the_only_usable_backend_is_not_measured(samples):
    others = [name for name in usable_names(make_registry(
        environ={"ARGONISHCHE_SELECT": "priority"}, installed=False)) if name != "ref"]
    reg = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": ",".join(others)},
                        installed=False)
    assert not samples and reg.choices["argon2"].how == "priority"
    assert "the only usable backend" in reg.choices["argon2"].why


def test_no_usable_backend_is_the_registrys_error_not_a_measurement(samples):
    everything = ",".join(b.name for b in make_registry(
        environ={"ARGONISHCHE_SELECT": "priority"}, installed=False).report())
    reg = make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": everything}, installed=False)
    with pytest.raises(BackendError, match="no usable backend"):
        reg.kernel_table("blake2b")
    with pytest.raises(BackendError, match="no usable backend"):
        reg.calibrate()
    assert not samples


# ---- the policy --------------------------------------------------------------------------------


def test_noise_is_the_gap_between_the_fastest_samples_of_the_two_halves():
    assert _selection.noise([100, 101, 300, 290, 500]) == pytest.approx(0.01)
    assert _selection.noise([100, 150, 300, 160]) == pytest.approx(0.5)
    assert _selection.noise([100, 100, 100, 100]) == 0
    assert _selection.noise([100]) == 0


def test_a_lead_within_the_noise_is_a_tie_the_ladder_breaks():
    entries = {e.name: e for e in make_registry(installed=False).usable()}
    if len(entries) < 3:
        pytest.skip("fewer than three usable backends")
    ranked = sorted(entries.values(), key=lambda e: e.backend.priority)
    bottom, middle, top = ranked[0], ranked[1], ranked[-1]
    others = {name: 200.0 for name in entries}
    quiet = {name: 0.0 for name in entries}

    def winner(times, noise):
        measurement = _selection.Measurement({a: times for a in _registry.ALGORITHMS},
                                             {a: noise for a in _registry.ALGORITHMS}, 9, 0.01)
        choices = _selection.decide(list(entries.values()), measurement)
        assert choices["argon2"].backend == choices["blake2b"].backend
        return choices["argon2"]

    # Under 3 % (and no noise) is a tie the ladder breaks; 1.5x is a lead.
    assert winner({**others, top.name: 102.0, bottom.name: 100.0}, quiet).backend == top.name
    lead = winner({**others, top.name: 150.0, bottom.name: 100.0}, quiet)
    assert lead.backend == bottom.name
    assert lead.why == f"the fastest: 1.50x faster than {top.name}, the next and the ladder's pick"
    # The noise in the two compared widens the tie: 5 % in each, and 1.12x is not enough...
    times = {**others, top.name: 112.0, bottom.name: 100.0}
    noisy = {**quiet, top.name: 0.05, bottom.name: 0.05}
    tie = winner(times, noisy)
    assert tie.backend == top.name and tie.why.startswith(f"tied with {bottom.name} (within 12")
    # ... but noise in a backend that is not compared does not.
    assert winner(times, {**quiet, middle.name: 0.5}).backend == bottom.name


# ---- what people see ---------------------------------------------------------------------------


def test_info_says_how_and_why_each_algorithm_was_chosen():
    def info(**env):
        out = subprocess.run([sys.executable, "-m", "argonishche", "info", "--fast", "--json"],
                             capture_output=True, text=True, timeout=120,
                             env=without_settings(**env))
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["selection"]

    forced = info(ARGONISHCHE_BACKEND="ref")
    assert forced["blake2b"]["why"] == "forced by ARGONISHCHE_BACKEND=ref"
    ladder = info(ARGONISHCHE_SELECT="priority")
    assert ladder["argon2"]["how"] == "priority"
    first = info(ARGONISHCHE_SELECT="measure")
    if first["argon2"]["how"] == "priority":
        pytest.skip(f"nothing to measure here: {first['argon2']['why']}")
    assert first["argon2"]["how"] == "measured" and first["argon2"]["record"]
    later = info()
    assert {c["how"] for c in later.values()} == {"remembered"}
    text = subprocess.run([sys.executable, "-m", "argonishche", "info", "--fast"],
                          capture_output=True, text=True, timeout=120,
                          env=without_settings()).stdout
    assert f"measured {later['argon2']['measured_at']}, remembered: " in text
    assert f"remembered in {later['argon2']['record']}" in text
    # The backend table says which is the ladder's pick, and which are selected.
    assert "the ladder's pick (the highest priority usable)" in text
    assert "selected for " in text and "ns/KiB (the fastest)" in text


# ---- the suite where measurement disagrees with the ladder -------------------------------------

#: The tests that check which backend is selected, run where measurement disagrees with the
#: ladder (tools/measurement_disagrees.py).
SELECTION_TESTS = ("platforms/test_emulation.py", "api/test_backends_api.py",
                   "registry/test_registry.py", "kernels/test_blake2b_type.py", "cli/test_cli.py",
                   "kernels/test_known_answers.py")


@pytest.mark.timeout(600)
def test_the_selection_tests_pass_where_measurement_disagrees_with_the_ladder():
    """On an AMD Zen 5 measurement picks ref for BLAKE2b, which the ladder ranks last; a test
    that assumed the ladder, or left a measurement's choice behind for the tests after it,
    failed there.  tools/measurement_disagrees.py makes every CPU measure that way (and more:
    Argon2 from the ladder's second-lowest rung), and the tests that check the selection must
    pass under it, in one process, in the order pytest runs them."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARGONISHCHE_BACKEND", "ARGONISHCHE_SELECT", "ARGONISHCHE_EXPECT_BACKEND")}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "measurement_disagrees", "-p", "no:cacheprovider",
         "-x", *(str(TESTS / name) for name in SELECTION_TESTS)],
        cwd=TESTS, env={**env, "PYTHONPATH": os.pathsep.join(
            filter(None, [str(TOOLS), env.get("PYTHONPATH")]))},
        capture_output=True, text=True, timeout=580)
    header = next((line for line in out.stdout.splitlines()
                   if line.startswith("measurement disagrees with the ladder:")), "")
    assert header, out.stdout[-3000:] + out.stderr[-3000:]
    assert "selected: " in header and "as faked" in header, header
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]


@pytest.mark.timeout(120)
def test_threads_measuring_at_once_leave_one_whole_record(cache):
    import threading

    regs = [multi_backend_registry(ARGONISHCHE_SELECT="priority") for _ in range(4)]
    errors = []

    def calibrate(reg):
        try:
            reg.calibrate()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=calibrate, args=(reg,)) for reg in regs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and not any(thread.is_alive() for thread in threads)
    assert all(reg.choices["argon2"].record for reg in regs), [r.choices for r in regs]
    record = only_record(cache)   # no temporary file left behind
    assert record_store.read(str(record)) is not None
    assert {c.how for c in make_registry(installed=False).choices.values()} == {"remembered"}


def test_a_module_path_with_odd_whitespace_is_remembered_all_the_same(cache, monkeypatch,
                                                                       samples):
    real = _remembered_selection.module_identity
    monkeypatch.setattr(_remembered_selection, "module_identity",
                        lambda entry: real(entry).replace("/", "/  a\tb\n/", 1))
    multi_backend_registry()
    samples.clear()
    assert {c.how for c in make_registry(installed=False).choices.values()} == {"remembered"}
    assert not samples
