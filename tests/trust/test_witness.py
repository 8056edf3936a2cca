"""The witness (argonishche._trust.witness): a third-party Argon2 kernel never makes a wrong tag.

The kernel here is ref's, compiled as a third party's module, with a G that can be armed from
the test (through ctypes, after the registry certified it): armed with n, it is right for n
more calls and then flips a bit of every block it makes, as a kernel with a bug that shows only
after some time in service would.  Every API path that returns a tag must return ref's, warn,
quarantine the backend, fall back and record the failure; a verification is confirmed by the
built-in before it says "mismatch"; ARGONISHCHE_WITNESS=off trusts the kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import hmac
import importlib
import io
import sys
import threading
import warnings

import argonishche
import pytest
from argonishche import _argon2, _blake2b_type, _record, _registry, _settings
from argonishche._core import ffi
from argonishche._discovery import BackendEntry
from argonishche._trust import certification, code_identity, witness
from argonishche.exceptions import SettingError, VerifyMismatchError
from argonishche.hookspecs import Backend
from support import (
    REF_SOURCE,
    FakeEntryPoint,
    Pool,
    compiled_backend,
    make_registry,
    plugin_registering,
    state_of,
)

MODULE = "witness_armed_kernels_mod"
DISTRIBUTION = "fake-kernels 1.2"  # FakeEntryPoint's
COSTS = dict(time_cost=1, memory_cost=64, parallelism=1)
PASSWORD, SALT = b"correct horse", b"somesalt"
ARMED = """
/* -1: right.  n >= 0: right for n more calls, then every block made is wrong. */
__attribute__((visibility("default"))) long long witness_test_calls_left = -1;

static void armed_fill_block(argonishche_block *next, const argonishche_block *prev,
                             const argonishche_block *ref, int xor_into_next) {
    ref_argon2_fill_block(next, prev, ref, xor_into_next);
    long long left = __atomic_load_n(&witness_test_calls_left, __ATOMIC_RELAXED);
    if (left == 0)
        next->v[127] ^= 1;
    else if (left > 0)
        __atomic_sub_fetch(&witness_test_calls_left, 1, __ATOMIC_RELAXED);
}

ARGONISHCHE_DEFINE_KERNELS(ref_blake2b_compress, armed_fill_block)
"""


@pytest.fixture(scope="module")
def armed_backend(tmp_path_factory):
    source = REF_SOURCE.read_text()
    kernels = "ARGONISHCHE_DEFINE_KERNELS(ref_blake2b_compress, ref_argon2_fill_block)"
    assert kernels in source
    with compiled_backend(tmp_path_factory.mktemp("armed"), MODULE,
                          source.replace(kernels, ARMED), name="armed",
                          description="ref's kernels, G wrong once armed") as backend:
        yield backend


def _counter():
    module = importlib.import_module(MODULE)
    return ctypes.c_longlong.in_dll(ctypes.CDLL(module.__file__), "witness_test_calls_left")


@pytest.fixture
def arm(armed_backend):
    """arm(n): the kernel is right for n more G calls, then wrong; disarmed after the test."""
    counter = _counter()

    def arm(calls: int = 0) -> None:
        counter.value = calls
    yield arm
    counter.value = -1


def witnessed(install, armed_backend, **environ):
    """The process registry for the test: the armed backend selected (priority 99)."""
    reg = install(make_registry(FakeEntryPoint("armed", plugin_registering(armed_backend)),
                                environ={"ARGONISHCHE_SELECT": "priority", **environ}))
    return reg


def ref_tag(password=PASSWORD, salt=SALT, **costs):
    return argonishche.argon2_hash(password, salt, backend="ref", **{**COSTS, **costs})


def ref_tag_of(encoded: str) -> bytes:
    """What ref computes for PASSWORD with *encoded*'s parameters and salt."""
    params, salt, _ = _argon2.params_of(encoded)
    return argonishche.argon2_hash(PASSWORD, salt, type=params.type, version=params.version,
                                   time_cost=params.time_cost, memory_cost=params.memory_cost,
                                   parallelism=params.parallelism, hash_len=params.hash_len,
                                   backend="ref")


def assert_quarantined(reg):
    record = state_of(reg, "armed")
    assert record.state == "quarantined" and "wrong Argon2 tag" in record.reason
    assert reg.selected_name("argon2") != "armed" and reg.selected_name("blake2b") != "armed"
    module = importlib.import_module(MODULE)
    recalled = certification.recall(module.__name__, code_identity.module_origin(module.__name__))
    assert recalled is not None and recalled.passed is False  # recorded: failed
    _counter().value = -1  # right again, so that only the record can refuse it
    with pytest.warns(RuntimeWarning, match="'armed' .* failed its certification"):
        again = make_registry(FakeEntryPoint("armed", plugin_registering(
            reg.entries["armed"].backend)), environ={"ARGONISHCHE_SELECT": "priority"})
    assert state_of(again, "armed").state == "certification-failed"  # a new process's view


WARNING = r"backend 'armed' \(kernel module witness_armed_kernels_mod, plugin 'armed' from " \
          r"fake-kernels 1\.2\) gave a wrong Argon2 tag"


# ---- every path that returns a tag ------------------------------------------------------------


def _cli_hash() -> str:
    from argonishche import _cli

    stdin = io.TextIOWrapper(io.BytesIO(PASSWORD))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        old, sys.stdin = sys.stdin, stdin
        try:
            assert _cli.main(["hash", "somesalt", "-e", "-t", "1", "-k", "64", "-p", "1"]) == 0
        finally:
            sys.stdin = old
    return out.getvalue().strip()


def _django_hash() -> str:
    pytest.importorskip("django", reason="the Django adapter needs Django")
    from django.conf import settings

    if not settings.configured:
        settings.configure(SECRET_KEY="argonishche tests: no secret", INSTALLED_APPS=[],
                           USE_I18N=False)
    from argonishche.contrib.django import Argon2PasswordHasher

    class Small(Argon2PasswordHasher):
        time_cost, memory_cost, parallelism = 1, 64, 1

    return Small().encode(PASSWORD.decode(), "somesaltsomesalt").removeprefix("argon2")


def _cffi_hash() -> str:
    from argonishche.argon2_cffi import PasswordHasher

    return PasswordHasher(**COSTS).hash(PASSWORD)


def _cffi_raw() -> bytes:
    from argonishche.argon2_cffi import Type, low_level

    return low_level.hash_secret_raw(PASSWORD, SALT, 1, 64, 1, 32, Type.ID)


PATHS = {
    "argon2_hash": lambda: argonishche.argon2_hash(PASSWORD, SALT, **COSTS),
    "argon2_hash_encoded": lambda: argonishche.argon2_hash_encoded(PASSWORD, SALT, **COSTS),
    "PasswordHasher.hash": lambda: argonishche.PasswordHasher(**COSTS).hash(PASSWORD),
    "hash_many": lambda: argonishche.hash_many([PASSWORD] * 3, **COSTS)[2],
    "hash_async": lambda: asyncio.run(argonishche.PasswordHasher(**COSTS).hash_async(PASSWORD)),
    "the CLI's hash": _cli_hash,
    "argon2-cffi's PasswordHasher": _cffi_hash,
    "argon2-cffi's hash_secret_raw": _cffi_raw,
    "Django's hasher": _django_hash,
    "caller's memory": lambda: argonishche.argon2_hash(
        PASSWORD, SALT, memory=bytearray(argonishche.memory_size(64, 1)), **COSTS),
}


@pytest.mark.parametrize("path", PATHS)
def test_every_path_returns_the_built_in_tag_and_quarantines_a_wrong_kernel(
        path, install, armed_backend, arm):
    reg = witnessed(install, armed_backend)
    assert reg.selected_name("argon2") == "armed"
    arm(0)
    with pytest.warns(RuntimeWarning, match=WARNING) as caught:
        result = PATHS[path]()
    assert any("fake-kernels 1.2" in str(w.message) and "quarantined" in str(w.message)
               for w in caught)
    tag = result if isinstance(result, bytes) else _argon2.params_of(result)[2]
    expected = ref_tag() if isinstance(result, bytes) else ref_tag_of(result)
    assert tag == expected
    assert_quarantined(reg)


def test_the_kernel_is_wrong_when_armed_so_the_witness_is_what_saves_the_tag(
        install, armed_backend, arm, monkeypatch):
    reg = witnessed(install, armed_backend, ARGONISHCHE_WITNESS="off")
    arm(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # off: no witness, no warning
        assert argonishche.argon2_hash(PASSWORD, SALT, **COSTS) != ref_tag()
    assert state_of(reg, "armed").state == "selected"


def test_a_kernel_that_goes_wrong_after_n_calls_is_caught_on_that_hash(
        install, armed_backend, arm):
    reg = witnessed(install, armed_backend)
    arm(10**9)
    assert argonishche.argon2_hash(PASSWORD, SALT, **COSTS) == ref_tag()
    per_hash = 10**9 - _counter().value  # G calls of one hash (and its address blocks)
    assert per_hash > 0
    arm(per_hash * 5)  # right for five more hashes
    for _ in range(5):
        assert argonishche.argon2_hash(PASSWORD, SALT, **COSTS) == ref_tag()
    assert state_of(reg, "armed").state == "selected"
    with pytest.warns(RuntimeWarning, match=WARNING):
        for _ in range(3):
            assert argonishche.argon2_hash(PASSWORD, SALT, **COSTS) == ref_tag()
    assert_quarantined(reg)


def test_an_explicitly_named_third_party_backend_is_witnessed_too(install, armed_backend, arm):
    # The lowest priority, so that a built-in is selected: the kernel is used only by name.
    reg = witnessed(install, _record.replace(armed_backend, priority=1))
    assert reg.selected_name("argon2") != "armed"
    arm(0)
    with pytest.warns(RuntimeWarning, match=WARNING):
        assert argonishche.argon2_hash(PASSWORD, SALT, backend="armed", **COSTS) == ref_tag()
    assert state_of(reg, "armed").state == "quarantined"
    # Named again once quarantined: the selection hashes, without another warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert argonishche.argon2_hash(PASSWORD, SALT, backend="armed", **COSTS) == ref_tag()


# ---- verification -----------------------------------------------------------------------------


def test_a_right_password_verifies_through_a_wrong_kernel(install, armed_backend, arm):
    stored = argonishche.argon2_hash_encoded(PASSWORD, SALT, backend="ref", **COSTS)
    reg = witnessed(install, armed_backend)
    arm(0)
    with pytest.warns(RuntimeWarning, match=WARNING):
        assert argonishche.PasswordHasher(**COSTS).verify(stored, PASSWORD) is True
    assert_quarantined(reg)


def test_a_wrong_password_is_a_mismatch_through_a_wrong_kernel(install, armed_backend, arm):
    stored = argonishche.argon2_hash_encoded(PASSWORD, SALT, backend="ref", **COSTS)
    witnessed(install, armed_backend)
    arm(0)
    with pytest.warns(RuntimeWarning, match=WARNING), pytest.raises(VerifyMismatchError):
        argonishche.argon2_verify(stored, b"wrong horse")


def test_a_match_costs_no_witness_and_a_mismatch_is_confirmed(install, armed_backend,
                                                              monkeypatch):
    stored = argonishche.argon2_hash_encoded(PASSWORD, SALT, backend="ref", **COSTS)
    reg = witnessed(install, armed_backend)
    calls = []
    real = witness.check
    monkeypatch.setattr(witness, "check", lambda *a: calls.append(a) or real(*a))
    assert argonishche.argon2_verify(stored, PASSWORD) is True
    assert calls == []  # the kernel's tag matched: nothing recomputed
    with pytest.raises(VerifyMismatchError):
        argonishche.argon2_verify(stored, b"wrong horse")
    assert len(calls) == 1  # confirmed by the built-in; both agree, so nothing is quarantined
    assert state_of(reg, "armed").state == "selected"


def test_first_party_and_built_in_backends_are_not_witnessed(install, monkeypatch):
    install(make_registry(environ={"ARGONISHCHE_SELECT": "priority"}))
    monkeypatch.setattr(witness, "check", lambda *a: pytest.fail("a built-in was witnessed"))
    assert argonishche.argon2_hash(PASSWORD, SALT, **COSTS) == ref_tag()


def test_only_this_repositorys_own_wheel_is_first_party():
    def entry(name, distribution):
        return BackendEntry(Backend(name=name, description="", kernel_module="m"), distribution)

    assert entry("avx512", "argonishche-avx512 1.0").first_party
    assert entry("avx512", "argonishche_avx512 1.0").first_party
    assert entry("ref", "argonishche 0.1").first_party
    assert not entry("avx512", "fake-kernels 1.2").first_party  # the name alone is not enough
    assert not entry("fast", "argonishche-avx512 1.0").first_party


# ---- settings, info, threads, the blake2b type ------------------------------------------------


def test_the_witness_setting_is_on_off_in_ascii():
    assert _settings.parse({}).witness is True
    assert _settings.parse({"ARGONISHCHE_WITNESS": " OFF "}).witness is False
    assert _settings.parse({"ARGONISHCHE_WITNESS": "on"}).witness is True
    for bad in ("no", "0", "o\u0192f", "\uff4f\uff46\uff46"):
        with pytest.raises(SettingError, match="ARGONISHCHE_WITNESS"):
            _settings.parse({"ARGONISHCHE_WITNESS": bad})


def test_backends_say_a_third_party_backend_is_witnessed(install, armed_backend):
    witnessed(install, armed_backend)
    records = {b.name: b for b in argonishche.backends()}
    assert "witnessed" in records["armed"].validation
    assert "witnessed" not in records["ref"].validation


def test_threads_finding_the_wrong_kernel_at_once_warn_once_and_record_once(
        install, armed_backend, arm, monkeypatch):
    reg = witnessed(install, armed_backend)
    records = []
    real = certification.remember_failure
    monkeypatch.setattr(certification, "remember_failure",
                        lambda *a: records.append(a[0]) or real(*a))
    arm(0)
    start = threading.Barrier(8)
    results, errors = [], []

    def hash_one():
        try:
            start.wait(timeout=30)
            results.append(argonishche.argon2_hash(PASSWORD, SALT, **COSTS))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=hash_one) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads), "a hashing thread hung"
    assert errors == []
    assert results == [ref_tag()] * 8
    assert len([w for w in caught if "quarantined" in str(w.message)]) == 1
    assert len(records) == 1
    assert_quarantined(reg)


def test_the_blake2b_type_follows_a_quarantine(install, armed_backend, arm):
    reg = witnessed(install, armed_backend)
    armed_table = reg.kernel_table("blake2b", "armed")

    def address(table):
        return int(ffi.cast("uintptr_t", table))

    assert _blake2b_type.selected_table_address() == address(armed_table)
    arm(0)
    with pytest.warns(RuntimeWarning, match=WARNING):
        argonishche.argon2_hash(PASSWORD, SALT, **COSTS)
    assert _blake2b_type.selected_table_address() == address(_registry.selected_table("blake2b"))
    assert _blake2b_type.selected_table_address() != address(armed_table)
    assert hmac.compare_digest(argonishche.blake2b(b"abc").digest(),
                               __import__("hashlib").blake2b(b"abc").digest())


def test_the_witness_hashes_the_password_the_kernel_hashed(install, armed_backend):
    """A caller's bytearray changed between the kernel's hash and the witness's (here by the
    wipe callback, which runs in between) must not look like a wrong kernel."""
    reg = witnessed(install, armed_backend)
    password = bytearray(PASSWORD)

    def wipe_then_change_the_password(memory):
        memory[:] = bytes(len(memory))
        password[:] = b"X" * len(password)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no quarantine warning
        tag = argonishche.argon2_hash(password, SALT, allocator=Pool(),
                                      wipe=wipe_then_change_the_password, **COSTS)
    assert tag == ref_tag()
    assert state_of(reg, "armed").state == "selected"


@pytest.mark.parametrize("witness", ["on", "off"])
def test_bench_shows_a_third_party_backends_hash_and_verify_beside_the_selected(
        install, armed_backend, arm, witness):
    from argonishche._bench.points import Point
    from argonishche._bench.suites import our_argon2_subjects
    from argonishche._bench.timing import check_same_tags

    witnessed(install, armed_backend, ARGONISHCHE_WITNESS=witness)
    subjects = our_argon2_subjects(Point("id", 1, 64, 1))
    names = [s.name for s in subjects]
    label = "witnessed" if witness == "on" else "witness off"
    assert names[:2] == ["argonishche (armed)", "argonishche (armed) verify"], names
    assert f"  backend armed (third-party, {label})" in names
    assert "  backend armed verify" in names and "  backend ref" in names
    assert "  backend ref verify" not in names  # built-ins are not witnessed: no verify row
    check_same_tags(subjects)  # every row, verify rows included, stands for ref's tag


def test_info_names_a_third_party_selection_so_and_a_first_party_plugin_not(
        install, armed_backend, monkeypatch):
    from argonishche import _info

    monkeypatch.setattr(_info, "_built_here", lambda: [])
    witnessed(install, armed_backend)
    text = _info.render(_info.collect(cpuinfo=False))
    assert "Selected for argon2: armed (THIRD-PARTY: fake-kernels 1.2;" in text, text
    # The avx512 wheel's distribution and name (a stand-in on ref's kernels): first-party.
    own = Backend(name="avx512", description="", kernel_module="argonishche_backends._ref",
                  priority=99)
    install(make_registry(FakeEntryPoint("avx512", plugin_registering(own),
                                         dist=("argonishche-avx512", "0.1.0")),
                          environ={"ARGONISHCHE_SELECT": "priority"}))
    text = _info.render(_info.collect(cpuinfo=False))
    assert "Selected for argon2: avx512 (first-party plugin: argonishche-avx512 0.1.0;" in text
    assert "witnessed" not in text.split("Selected for argon2:")[1].splitlines()[0]
