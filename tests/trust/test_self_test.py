"""The quick self-test's kernel checks and the certification: their constants, what they catch,
and the certification's cache.

Kernels with a bug are made here from ref's with a Python wrapper (a cffi callback in a kernel
table of our own), so every bug class is cheap to state; tests/trust/test_bad_kernels.py
builds real ones as installed wheels.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import stat
import sys
import types

import argonishche.testing as conformance
import pytest
from argonishche import _cli, _registry
from argonishche._core import ffi
from argonishche._trust import (
    certification,
    certification_blake2b,
    certification_checks,
    kernel_table,
    record_store,
    self_test,
)


@pytest.fixture(scope="module")
def ref():
    return kernel_table.reference_table()


class WrappedKernels:
    """A kernel table whose kernels are ref's, made wrong where *g_wrong(ref_at, next_at,
    xor_into_next)* or *f_wrong(nblocks)* returns True (``ref_at``, ``next_at``: where ref and
    next lie from prev, in blocks; negative is below), and whose F drops the last-node flag f1
    if *f1_ignored*."""

    def __init__(self, ref, g_wrong=None, f_wrong=None, f1_ignored=False):
        def fill_block(next_, prev, reference, xor_into_next):
            ref.argon2_fill_block(next_, prev, reference, xor_into_next)
            address = int(ffi.cast("uintptr_t", prev))
            if g_wrong and g_wrong((int(ffi.cast("uintptr_t", reference)) - address) // 1024,
                                   (int(ffi.cast("uintptr_t", next_)) - address) // 1024,
                                   xor_into_next):
                next_.v[127] ^= 1

        def compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag):
            ref.blake2b_compress(h, t, blocks, nblocks, increment, final_flag,
                                 0 if f1_ignored else last_node_flag)
            if f_wrong and f_wrong(nblocks):
                h[7] ^= 1

        self._callbacks = (ffi.callback("argonishche_argon2_fill_block_fn", fill_block),
                           ffi.callback("argonishche_blake2b_compress_fn", compress))
        self.table = ffi.new("argonishche_kernel_table *", dict(
            abi_version=ref.abi_version, table_size=ref.table_size,
            argon2_fill_block=self._callbacks[0], blake2b_compress=self._callbacks[1],
            compiled_for=ref.compiled_for))


# ---- the constants --------------------------------------------------------------------------


def test_data_is_the_same_prefix_whatever_its_length():
    assert self_test.data(5000)[:3072] == self_test.data(3072)
    assert len(set(self_test.data(3072))) == 256  # every byte value: not a short pattern


def test_run_digests_are_hashlibs():
    for blocks, digest in self_test.RUN_DIGESTS.items():
        message = self_test.run_message(blocks)
        assert len(message) == 128 * (blocks + 1) + 1
        assert hashlib.blake2b(message, digest_size=32).hexdigest() == digest


def test_certification_known_answers_are_argon2_cffis():
    low_level = pytest.importorskip("argon2.low_level")
    inputs = certification_checks.KNOWN_ANSWER_INPUTS
    answers = certification_checks.ARGON2_KNOWN_ANSWERS
    for type_name, version, memory_cost, time_cost, lanes, tag in answers:
        computed = low_level.hash_secret_raw(
            inputs["password"], inputs["salt"], time_cost, memory_cost, lanes, 32,
            low_level.Type[type_name.upper()], version)
        assert computed.hex() == tag


# ---- what the checks catch ------------------------------------------------------------------


def test_quick_self_test_and_certification_pass_on_every_usable_backend(backend):
    assert self_test.run(_registry.get().kernel_table("argon2", backend)) == []
    assert conformance.certify_backend(backend) == []


def test_placement_check_names_the_nearest_wrong_distance_behind_prev(ref):
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: ref_at < -100)
    assert self_test.run(wrapped.table) == [
        "Argon2 G (xor_into_next=0 and 1) with the reference 101 blocks behind prev (and 11 "
        "more of 23 placements), unlike the same blocks side by side"]


def test_placement_check_sees_references_ahead_of_prev(ref):
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: ref_at > 200)
    assert self_test.placement_failures(wrapped.table) == [
        "Argon2 G (xor_into_next=0 and 1) with the reference 301 blocks ahead of prev (and 1 "
        "more of 23 placements), unlike the same blocks side by side"]


def test_placement_check_sees_one_xor_path_alone(ref):
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: xor and ref_at < -1024)
    assert self_test.placement_failures(wrapped.table) == [
        "Argon2 G (xor_into_next=1) with the reference 1025 blocks behind prev (and 4 more of 23 "
        "placements), unlike the same blocks side by side"]


def test_placement_check_sees_next_far_from_prev(ref):
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: next_at < 0)
    assert self_test.placement_failures(wrapped.table) == [
        "Argon2 G (xor_into_next=0 and 1) with the reference 8191 blocks behind prev, next 8192 "
        "blocks below prev, unlike the same blocks side by side"]


def test_runs_of_blocks_are_checked_from_8(ref):
    wrapped = WrappedKernels(ref, f_wrong=lambda nblocks: nblocks >= 8)
    assert self_test.run(wrapped.table) == [
        "BLAKE2b F over a run of 8 blocks (and 5 more of 6 run lengths) in one call"]
    assert self_test.run(WrappedKernels(ref, f_wrong=lambda n: n > 65).table) == []


def test_certification_finds_a_window_the_quick_check_misses(ref):
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: -700 < ref_at <= -600)
    assert self_test.placement_failures(wrapped.table) == []
    assert self_test.placement_failures(wrapped.table, certification_checks.full_placements()) == [
        "Argon2 G (xor_into_next=0 and 1) with the reference 600 blocks behind prev (and 99 "
        "more of 2267 placements), unlike the same blocks side by side"]


def test_certification_finds_a_long_run_the_quick_check_misses(ref):
    wrapped = WrappedKernels(ref, f_wrong=lambda nblocks: nblocks > 8192)
    assert self_test.run(wrapped.table) == []
    assert certification_blake2b.blake2b_failures(wrapped.table) == [
        "BLAKE2b F over a run of 8193 blocks (and 4 more of 84 run lengths) in one call",
        "keyed BLAKE2b of 3145985 bytes in updates ending at 3145985",
        "keyed BLAKE2b of 3145985 bytes in updates ending at 1, 1048577, 1048654, 2097151, "
        "3145985",
        "BLAKE2b tree node (last node) of 3145985 bytes"]


def test_an_f_that_ignores_the_last_node_flag_fails_the_quick_self_test(ref):
    wrapped = WrappedKernels(ref, f1_ignored=True)
    assert self_test.run(wrapped.table) == [
        "BLAKE2b-512 of 0 bytes with fanout=1 depth=1 last_node=True "
        "(computed with CPython 3.11.7 hashlib.blake2b)",
        "BLAKE2b-512 of 300 bytes with fanout=4 depth=2 last_node=True "
        "(computed with CPython 3.11.7 hashlib.blake2b)"]
    assert certification_blake2b.blake2b_failures(wrapped.table) == [
        "BLAKE2b tree node (last node) of 3145985 bytes"]


def test_certification_compares_argon2_with_ref_and_known_answers(ref):
    # Wrong for ref more than 2,000 blocks behind prev: only the 4 MiB lanes reach that far.
    wrapped = WrappedKernels(ref, g_wrong=lambda ref_at, next_at, xor: ref_at < -2000)
    failures = certification_checks.argon2_failures(wrapped.table, ref)
    assert "Argon2d v=0x13 m=4096 t=1 p=1 (known answer computed with argon2-cffi)" in failures
    for type_name in ("d", "i", "id"):
        for version in ("0x10", "0x13"):
            assert (f"Argon2{type_name} v={version} m=4096 t=1 p=1 on 1 threads differs from ref"
                    in failures)
            assert f"Argon2{type_name} v={version} m=1024" not in " ".join(failures)


# ---- the cache ------------------------------------------------------------------------------
#
# The records are keyed on the code behind the kernel table: here ref's real table (its shared
# object, found with dladdr) and a module file of our own, which stands for a Python module
# re-exporting the compiled one (test_certification_child.py changes compiled code itself).


@pytest.fixture
def cache(tmp_path, monkeypatch, ref):
    """An empty cache directory of our own, and a module (file) and kernel table to certify."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "kernels.py"
    path.write_bytes(b"from argonishche_backends._ref import ffi, lib")
    directory = tmp_path / "cache" / "argonishche" / "certified"
    return types.SimpleNamespace(
        directory=directory, module=types.SimpleNamespace(__name__="kernels", __file__=str(path)),
        path=path, table=ref, records=lambda: sorted(directory.iterdir()))


def fake_checks(monkeypatch, found):
    calls = []
    monkeypatch.setattr(certification_checks, "failures",
                        lambda table, reference=None: calls.append(table) or list(found))
    return calls


@pytest.mark.parametrize("found", [[], ["BLAKE2b F over a run of 8193 blocks in one call"]])
def test_outcome_is_remembered_by_the_code_behind_the_table(cache, monkeypatch, found):
    calls = fake_checks(monkeypatch, found)
    first = certification.certify(cache.module, cache.table)
    assert (first.passed, first.failures, first.cached) == (not found, found, False)
    again = certification.certify(cache.module, cache.table)
    assert (again.passed, again.failures, again.cached) == (not found, found, True)
    assert len(calls) == 1 and certification.is_certified(cache.module, cache.table) is not found
    [record] = cache.records()
    text = record.read_text()
    assert "argonishche: " in text and "kernel_abi: " in text and "date: " in text
    # The shared object holding the kernels, found from the pointers, and the module's file.
    ref_file = sys.modules["argonishche_backends._ref"].__file__
    for path in (ref_file, cache.path):
        blake2b_256 = hashlib.blake2b(pathlib.Path(path).read_bytes(), digest_size=32).hexdigest()
        assert f"code: {blake2b_256} {os.path.normpath(path)}\n" in text
    cache.path.write_bytes(b"other code")  # another file: certified again
    assert not certification.is_certified(cache.module, cache.table)
    assert certification.certify(cache.module, cache.table).cached is False and len(calls) == 2


def test_forced_certification_runs_again(cache, monkeypatch):
    calls = fake_checks(monkeypatch, [])
    certification.certify(cache.module, cache.table)
    assert certification.certify(cache.module, cache.table, force=True).cached is False
    assert len(calls) == 2


def test_a_record_of_another_version_does_not_count(cache, monkeypatch):
    fake_checks(monkeypatch, [])
    certification.certify(cache.module, cache.table)
    monkeypatch.setattr(certification, "__version__", "99.0")
    assert not certification.is_certified(cache.module, cache.table)


def test_a_record_made_on_another_cpu_does_not_count(cache, monkeypatch):
    from argonishche._trust import cpu_gate

    fake_checks(monkeypatch, [])
    certification.certify(cache.module, cache.table)
    assert certification.is_certified(cache.module, cache.table)
    [record] = cache.records()
    monkeypatch.setattr(cpu_gate, "identity", lambda: "x86_64 AuthenticAMD signature=00a20f12")
    assert not certification.is_certified(cache.module, cache.table)
    # Not even the same file read under the other identity: the record's cpu line differs.
    path = certification.record_path("kernels", os.path.normpath(str(cache.path)))
    os.replace(record, path)
    assert not certification.is_certified(cache.module, cache.table)


def test_unwritable_cache_means_not_remembered(cache, monkeypatch):
    calls = fake_checks(monkeypatch, [])
    cache.directory.parent.mkdir(parents=True)
    cache.directory.write_text("a file where the directory should be")
    assert certification.certify(cache.module, cache.table).passed
    assert not certification.is_certified(cache.module, cache.table)
    assert certification.certify(cache.module, cache.table).cached is False and len(calls) == 2


def test_a_record_anyone_else_could_have_written_does_not_count(cache, monkeypatch):
    calls = fake_checks(monkeypatch, [])
    monkeypatch.setattr(record_store, "ignored", {})
    certification.certify(cache.module, cache.table)
    [record] = cache.records()
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.directory.stat().st_mode) == 0o700
    assert certification.is_certified(cache.module, cache.table)
    record.chmod(0o664)   # a forged "passed: yes" by someone of the group
    assert not certification.is_certified(cache.module, cache.table)
    assert "writable by others" in record_store.ignored[str(record)]
    record.chmod(0o600)
    cache.directory.chmod(0o777)   # or planted in a directory anyone may write
    assert not certification.is_certified(cache.module, cache.table)
    assert "directory" in record_store.ignored[str(record)]
    cache.directory.chmod(0o700)
    record.unlink()
    record.symlink_to("/dev/zero")   # no unbounded read, no exception
    assert not certification.is_certified(cache.module, cache.table)
    assert record_store.ignored[str(record)] == "a symbolic link"
    record.unlink()
    os.mkfifo(record)   # no hang: opened without blocking, refused as not a regular file
    assert not certification.is_certified(cache.module, cache.table)
    assert record_store.ignored[str(record)] == "not a regular file"
    assert len(calls) == 1


def test_ignored_records_are_noted_in_info(cache, monkeypatch):
    from argonishche import _info

    monkeypatch.setattr(record_store, "ignored", {"/somewhere/record": "writable by others "
                                                                   "(mode 0666)"})
    report = _info.collect(cpuinfo=False)
    assert report["ignored_records"] == [["/somewhere/record", "writable by others (mode 0666)"]]
    assert ("Ignored record /somewhere/record: writable by others (mode 0666)"
            in _info.render(report))


def test_cache_location(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert certification.cache_directory() == os.path.join(tmp_path, "argonishche", "certified")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert certification.cache_directory() == os.path.join(tmp_path, ".cache", "argonishche",
                                                      "certified")


def test_kernels_whose_code_cannot_be_found_are_certified_every_time(cache, monkeypatch, ref):
    # A kernel table made of cffi callbacks lies in no shared object: no record is possible.
    calls = fake_checks(monkeypatch, [])
    wrapped = WrappedKernels(ref)
    assert certification.certify(cache.module, wrapped.table).cached is False
    assert certification.certify(cache.module, wrapped.table).cached is False and len(calls) == 2
    assert not certification.is_certified(cache.module, wrapped.table)
    assert not cache.directory.exists()


def test_a_check_that_cannot_run_fails_and_is_not_remembered(cache, monkeypatch):
    def missing(table, reference=None):
        raise ImportError("No module named 'argonishche_backends'")
    monkeypatch.setattr(certification_checks, "failures", missing)
    result = certification.certify(cache.module, cache.table)
    assert not result.passed and "could not run" in result.failures[0]
    assert not cache.directory.exists()


def test_a_failure_remembered_by_the_witness_is_refused_until_certified_again(cache,
                                                                               monkeypatch):
    calls = fake_checks(monkeypatch, [])
    certification.certify(cache.module, cache.table)
    assert certification.is_certified(cache.module, cache.table)
    certification.remember_failure(cache.module, cache.table, ["Argon2id tag differs from ref's"])
    assert not certification.is_certified(cache.module, cache.table)
    again = certification.certify(cache.module, cache.table)
    assert (again.passed, again.cached, again.failures) == (
        False, True, ["Argon2id tag differs from ref's"])
    assert certification.certify(cache.module, cache.table, force=True).passed  # selftest --full
    assert certification.is_certified(cache.module, cache.table) and len(calls) == 2


def test_selftest_full_certifies_every_usable_backend(cache, capsys):
    assert _cli.main(["selftest", "--full"]) == 0
    out = capsys.readouterr().out
    for line in out.splitlines():
        if "not run" not in line:
            assert line.split()[1] == "ok" and line.endswith(" s)"), line
    assert len(os.listdir(cache.directory)) == sum("not run" not in line
                                                    for line in out.splitlines())
