"""The C ``blake2b`` type (core/ext/blake2b_type.c, ``argonishche._blake2b_type``): the kernel
table it hashes with follows the registry's selection, pushed to it at once (calibrate(), a
quarantine, reset(), a forced backend, a new registry, a forked child's); large updates release
the GIL; a keyed state is wiped when freed; pickling and copying behave as they did for the
Python class.  Its surface (arguments, subclasses, module objects, leaks) is
test_blake2b_type_surface.py's."""

from __future__ import annotations

import copy
import hashlib
import pickle
import sys
import threading
import time

import argonishche
import pytest
from argonishche import _blake2b_type, _process_registry, _registry, _selection, blake2b
from argonishche._core import ffi, lib
from argonishche.exceptions import BackendError
from support import make_registry, run_python, timings_where, usable_backend_names


def address(table) -> int:
    return int(ffi.cast("uintptr_t", table))


def selected_address() -> int:
    return address(_registry.selected_table("blake2b"))


def test_the_type_is_argonishche_blake2b_and_pickles_by_that_name():
    assert argonishche.blake2b is _blake2b_type.blake2b
    assert (blake2b.__module__, blake2b.__qualname__) == ("argonishche", "blake2b")


# ---- the kernel table ------------------------------------------------------------------------


@pytest.fixture
def counting(monkeypatch):
    """(install, calls): install() makes a counting table the registry's selected one, as
    Registry._choose does (a new tables dict, pushed to the type); calls lists the blocks it
    compressed."""
    real = _registry.selected_table("blake2b")
    calls: list[int] = []

    @ffi.callback("argonishche_blake2b_compress_fn")
    def compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag):
        calls.append(nblocks)
        real.blake2b_compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag)

    table = ffi.new("argonishche_kernel_table *")
    table.abi_version = lib.ARGONISHCHE_KERNEL_ABI
    table.table_size = ffi.sizeof("argonishche_kernel_table")
    table.blake2b_compress = compress
    table.argon2_fill_block = real.argon2_fill_block
    table.compiled_for = real.compiled_for
    reg = _registry.get()

    def install(reg=reg):
        monkeypatch.setattr(reg, "tables", {**reg.tables, "blake2b": table})
        _process_registry.publish()  # as _choose does (process_state pushes the real one back)
        return table

    install.keep = (compress, table)  # the callback and table live as long as the test
    return install, calls


def test_objects_hash_with_the_selected_table(counting):
    install, calls = counting
    assert _blake2b_type.selected_table_address() == selected_address()
    before = blake2b(b"x" * 1000, key=b"k")  # made with the table selected before
    table = install()
    assert _blake2b_type.selected_table_address() == address(table) == selected_address()
    data = bytes(range(256)) * 5
    assert blake2b(data).digest() == hashlib.blake2b(data).digest()
    assert calls, "the new selection's compression function was not called"
    calls.clear()
    keyed = blake2b(data, key=b"key", salt=b"salt", person=b"me", digest_size=20)
    keyed.update(b"more" * 1000)  # past 2048 bytes: the GIL is released
    clone = keyed.copy()
    assert clone.hexdigest() == keyed.hexdigest() == hashlib.blake2b(
        data + b"more" * 1000, key=b"key", salt=b"salt", person=b"me", digest_size=20).hexdigest()
    assert len(calls) >= 4
    calls.clear()
    # An object keeps the table it was made with, as the Python class's C states did.
    before.update(b"y" * 1000)
    assert before.digest() == hashlib.blake2b(b"x" * 1000 + b"y" * 1000, key=b"k").digest()
    assert calls == []


def test_a_quarantine_is_followed_at_once(install, counting):
    """The quarantined backend's table (here the counting one) is not used by the next object:
    the quarantine's new selection is pushed to the type.  A registry of the test's own, made
    the process's (the install fixture), so the real one keeps its selection."""
    install_table, calls = counting
    reg = install(make_registry())
    quarantined = reg.selected_name("blake2b")
    table = install_table(reg)
    blake2b(b"abc").digest()
    assert calls == [1]
    calls.clear()
    assert reg.quarantine(quarantined, "a wrong result (test)")
    if reg.tables.get("blake2b") is None:  # it was the only usable backend
        with pytest.raises(BackendError, match="quarantined"):
            blake2b(b"abc")
        return
    assert _blake2b_type.selected_table_address() == selected_address() != address(table)
    assert blake2b(b"abc").digest() == hashlib.blake2b(b"abc").digest()
    assert calls == []


def test_reset_is_followed_at_once():
    """After reset() the type uses no table of the registry forgotten: the next object builds
    the new one (here with another backend forced) and hashes with its selection."""
    code = """
        import os
        from argonishche import _blake2b_type, _process_registry, _registry, blake2b
        from argonishche._core import ffi
        def address(table):
            return int(ffi.cast("uintptr_t", table))
        first = _registry.get()
        before = address(first.tables["blake2b"])
        assert _blake2b_type.selected_table_address() == before
        other = next((e for e in first.usable() if address(e.table) != before), None)
        if other is None:
            print("skip: one usable blake2b table")
            raise SystemExit(0)
        os.environ["ARGONISHCHE_BACKEND"] = other.name
        _registry.reset()
        blake2b(b"abc").digest()
        assert _process_registry._instance is not None, "blake2b() did not build the registry"
        assert _blake2b_type.selected_table_address() == address(other.table), other.name
        print("ok")
        """
    result = run_python(code)
    assert result.returncode == 0, result.stdout + result.stderr
    if "skip" in result.stdout:
        pytest.skip(result.stdout.strip())
    assert "ok" in result.stdout, result.stdout + result.stderr


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork()")
def test_a_forked_childs_new_registry_is_followed():
    """A child forked while plugin code ran forgets the registry (argonishche._process_registry):
    its first object builds its own instead of using the parent's selection."""
    code = """
        import os
        from argonishche import _process_registry, _registry, blake2b
        _registry.get()
        blake2b(b"abc").digest()
        _process_registry._plugin_threads.append(-1)  # as if a thread ran plugin code
        pid = os.fork()
        if pid == 0:
            forgot = _process_registry._instance is None
            blake2b(b"abc").digest()
            os._exit(0 if forgot and _process_registry._instance is not None else 3)
        _process_registry._plugin_threads.remove(-1)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        print("ok")
        """
    result = run_python(code)
    assert result.returncode == 0 and "ok" in result.stdout, result.stdout + result.stderr


def test_the_table_follows_calibrate(install, monkeypatch):
    """calibrate() on a registry of the test's own, made the process's (the install fixture):
    it must not change the selection the tests after this one see."""
    reg = install(make_registry(environ={"ARGONISHCHE_SELECT": "priority"}))
    before = selected_address()
    assert _blake2b_type.selected_table_address() == before
    winner = next(e for e in reg.usable() if address(e.table) != before)  # not the ladder's
    monkeypatch.setattr(_selection, "sample", timings_where({"blake2b": winner.name}))
    argonishche.calibrate()
    assert reg.selected_name("blake2b") == winner.name
    assert _blake2b_type.selected_table_address() == selected_address() == address(winner.table)
    assert blake2b(b"abc").digest() == hashlib.blake2b(b"abc").digest()


@pytest.mark.skipif("ref" not in usable_backend_names(), reason="no ref backend")
def test_the_table_follows_a_new_registry_with_a_forced_backend(install):
    reg = install(make_registry(environ={"ARGONISHCHE_BACKEND": "ref"}))
    ref = reg.kernel_table("blake2b", "ref")
    assert address(_registry.selected_table("blake2b")) == address(ref)
    assert _blake2b_type.selected_table_address() == address(ref)
    assert blake2b(b"abc").digest() == hashlib.blake2b(b"abc").digest()
    reg.calibrate()  # a forced backend stays selected
    assert _blake2b_type.selected_table_address() == address(ref)


def test_forced_backend_in_a_fresh_interpreter():
    code = """
        import argonishche
        from argonishche import _blake2, _blake2b_type, _registry  # _blake2 connects the type
        from argonishche._core import ffi
        ref = _registry.get().kernel_table("blake2b", "ref")
        assert argonishche.selected_backend("blake2b") == "ref"
        assert _blake2b_type.selected_table_address() == int(ffi.cast("uintptr_t", ref))
        argonishche.calibrate()
        assert _blake2b_type.selected_table_address() == int(ffi.cast("uintptr_t", ref))
        print("ok")
        """
    result = run_python(code, ARGONISHCHE_BACKEND="ref")
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr


def test_no_usable_backend_raises_the_registrys_error(monkeypatch):
    reg = _registry.get()
    monkeypatch.setattr(reg, "tables", {})
    monkeypatch.setattr(reg, "selection_error", BackendError("no usable backend (test)"))
    _process_registry.publish()  # as _choose does (process_state pushes the real one back)
    with pytest.raises(BackendError, match="no usable backend"):
        blake2b(b"abc")
    with pytest.raises(BackendError, match="no usable backend"):
        _blake2b_type.selected_table_address()


def test_backend_argument_uses_that_backend():
    for name in usable_backend_names():
        assert blake2b(b"abc", backend=name).digest() == hashlib.blake2b(b"abc").digest()


SIZES = (0, 1, 63, 64, 65, 127, 128, 129, 300)
#: Parameters whose state is the default one (copied from the state kept for the selected
#: table), then ones the core's init makes.
DEFAULT_STATE = ({}, {"digest_size": 64}, {"key": b""}, {"salt": b"", "person": b""})
OTHER_STATE = ({"digest_size": 20}, {"key": b"k"}, {"key": bytes(range(64))},
               {"key": bytearray(b"key")}, {"key": memoryview(b"key")}, {"salt": b"s"},
               {"person": b"p"}, {"fanout": 1}, {"last_node": True})


@pytest.mark.parametrize("params", DEFAULT_STATE + OTHER_STATE, ids=repr)
def test_one_shot_and_object_agree_with_hashlib(params):
    for n in SIZES:
        data = bytes(range(256))[:n] * (1 + n // 256)
        want = hashlib.blake2b(data, **params).digest()
        assert blake2b(data, **params).digest() == want
        h = blake2b(**params)
        h.update(data)
        assert h.digest() == want and h.copy().digest() == want


def test_the_default_state_follows_the_selection_and_backend_argument(counting):
    """The default state is kept for the selected table: after the selection changes, a new
    default object hashes with the new table; backend= naming another table does not use it."""
    install, calls = counting
    assert blake2b(b"abc").digest() == hashlib.blake2b(b"abc").digest()
    assert calls == []
    install()
    assert blake2b(b"abc").digest() == hashlib.blake2b(b"abc").digest()
    assert calls == [1]
    calls.clear()
    for name in usable_backend_names():
        assert blake2b(b"abc", backend=name).digest() == hashlib.blake2b(b"abc").digest()
    assert calls == []


def test_freed_objects_are_made_anew():
    """Objects freed (keyed ones wiped) and made again, more at once than are kept for reuse,
    of the type and of a subclass: each new one hashes from its own parameters only."""
    class Sub(blake2b):
        pass

    for _ in range(3):
        keyed = [blake2b(b"x" * i, key=b"k" * (1 + i)) for i in range(40)]
        subs = [Sub(b"y" * i, digest_size=1 + i) for i in range(20)]
        del keyed, subs
        plain = [blake2b(b"z" * i) for i in range(40)]
        assert all(h.digest() == hashlib.blake2b(b"z" * i).digest() for i, h in enumerate(plain))
        made = [blake2b(key=b"q", digest_size=10) for _ in range(40)]
        for h in made:
            h.update(b"w")
        assert {h.digest() for h in made} == {
            hashlib.blake2b(b"w", key=b"q", digest_size=10).digest()}


# ---- threads ---------------------------------------------------------------------------------


def test_a_large_update_releases_the_gil():
    """Another thread runs while one update of 32 MiB hashes; the switch interval is long, so it
    could only run then if the update released the GIL."""
    big = bytes(32 << 20)
    h = blake2b()
    ticks: list[float] = []
    stop = threading.Event()
    started = threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            ticks.append(time.perf_counter())

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.5)
    spinner = threading.Thread(target=spin)
    try:
        spinner.start()
        started.wait()
        t0 = time.perf_counter()
        h.update(big)
        t1 = time.perf_counter()
    finally:
        stop.set()
        spinner.join()
        sys.setswitchinterval(interval)
    inside = [t for t in ticks if t0 < t < t1]
    assert len(inside) > 100, (len(inside), t1 - t0)
    assert h.digest() == hashlib.blake2b(big).digest()


# ---- secrets ---------------------------------------------------------------------------------


def test_a_keyed_state_is_wiped_when_freed():
    """The type's wipe is the core's argonishche_secure_wipe; here a callback that records
    what it wipes (the state, with the key block in it) and checks it is zero afterwards."""
    code = """
        import gc
        import argonishche
        from argonishche import _blake2, _blake2b_type
        from argonishche._core import ffi, lib
        from argonishche.exceptions import (
            ParameterError, ParameterOverflowError, ParameterTypeError)
        seen = []

        @ffi.callback("void(void *, size_t)")
        def wipe(p, n):
            before = bytes(ffi.buffer(p, n))
            lib.argonishche_secure_wipe(p, n)
            seen.append((n, b"K" * 64 in before, bytes(ffi.buffer(p, n)) == bytes(n)))

        _blake2b_type.connect(
            (_blake2._address("argonishche_blake2b_init_tree"),
             _blake2._address("argonishche_blake2b_update"),
             _blake2._address("argonishche_blake2b_final"), int(ffi.cast("uintptr_t", wipe))),
            _blake2._kernel_table, ParameterError, ParameterTypeError, ParameterOverflowError)
        size = ffi.sizeof("argonishche_blake2b_state")
        h = argonishche.blake2b(key=b"K" * 64)
        clone = h.copy()
        del h
        assert seen == [(size, True, True)], seen
        del clone
        assert seen == [(size, True, True)] * 2, seen
        plain = argonishche.blake2b(b"x")
        del plain
        assert len(seen) == 2, seen  # unkeyed: not wiped, as before
        keyed = argonishche.blake2b(b"data" * 100, key=b"k")
        keyed.update(b"more")
        del keyed
        assert len(seen) == 3 and seen[-1][2], seen
        print("ok")
        """
    result = run_python(code)
    assert result.returncode == 0 and "ok" in result.stdout, result.stdout + result.stderr


# ---- pickling and copying, as the Python class did -------------------------------------------


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_an_unkeyed_object_made_from_bytes_pickles(protocol):
    # As the Python class's did from protocol 2 on; with protocols 0 and 1 it refused (a side
    # effect of its __slots__), which the type does not copy.
    for made in (blake2b(), blake2b(b"abc"), blake2b(b"abc" * 1000, digest_size=20)):
        again = pickle.loads(pickle.dumps(made, protocol))
        assert type(again) is blake2b
        assert (again.digest_size, again.digest()) == (made.digest_size, made.digest())
        again.update(b"!")  # and hashes on
        assert again.digest() != made.digest()


def test_other_objects_refuse_pickling():
    updated = blake2b(b"abc")
    updated.update(b"def")
    for made in (blake2b(b"abc", key=b"k"), blake2b(b"abc", salt=b"s"),
                 blake2b(b"abc", person=b"p"), blake2b(bytearray(b"abc")), updated,
                 updated.copy()):
        with pytest.raises(TypeError, match="pickle"):
            pickle.dumps(made)
        with pytest.raises(TypeError, match="pickle"):
            copy.deepcopy(made)


def test_copy_module_copy_is_an_independent_copy():
    for params in ({}, {"key": b"k"}):
        made = blake2b(b"abc", **params)
        clone = copy.copy(made)
        clone.update(b"more")
        assert made.digest() == hashlib.blake2b(b"abc", **params).digest()
        assert clone.digest() == hashlib.blake2b(b"abcmore", **params).digest()
