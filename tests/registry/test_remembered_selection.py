"""The remembered selection (argonishche._remembered_selection and record_store): a record is
keyed on the CPU, the version, the kernel ABI and each backend module's file, never used on
another CPU or for other modules, ignored (never raised) when corrupt or not to be trusted, and
written whole when several threads measure at once.

Each test has a cache directory of its own (tests/conftest.py's process_state fixture); the
registries here are the test's own, never the process's.
"""

from __future__ import annotations

import os
import pathlib

import argonishche
import pytest
from argonishche import _remembered_selection
from argonishche._trust import cpu_gate, record_store
from selection_support import multi_backend_registry, only_record
from support import make_registry

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
