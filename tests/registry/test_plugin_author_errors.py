"""Errors a plugin author or a user meets say what went wrong, whose it is, and what to do."""

from __future__ import annotations

import warnings

import argonishche
import pytest
from argonishche import _allocators
from support import (
    KNOWN_TAG,
    PASSWORD,
    SALT,
    SMALL,
    FakeEntryPoint,
    allocator_plugin,
    make_registry,
    needed,
    run_python,
)


class Shortchanging(argonishche.Allocator):
    name, description = "shortchanging", "returns half of what it was asked for"

    def acquire(self, size):
        return bytearray(size // 2)

    def release(self, buffer):
        pass


class ReadOnly(argonishche.Allocator):
    name, description = "readonly", "returns bytes"

    def acquire(self, size):
        return bytes(size + 63)


@pytest.mark.parametrize("allocator, problem", [
    (Shortchanging(), "returned unusable memory: memory is"),
    (ReadOnly(), "returned unusable memory: memory must be a writable buffer"),
])
def test_an_allocator_breaking_its_contract_is_named(install, allocator, problem):
    install(make_registry(FakeEntryPoint("zz-bad", allocator_plugin(allocator))))
    with pytest.raises(argonishche.ParameterError) as info:
        argonishche.argon2_hash(PASSWORD, SALT, allocator=allocator.name, **SMALL)
    message = str(info.value)
    assert message.startswith(f"allocator {allocator.name!r} (test_plugin_author_errors.")
    assert problem in message and "size + 63 bytes" in message


def test_an_allocator_instance_may_be_passed_directly(trimmed):
    arena = _allocators.ArenaAllocator()
    try:
        assert argonishche.argon2_hash(PASSWORD, SALT, allocator=arena, **SMALL) == KNOWN_TAG
        assert arena.cached_bytes() == needed(32)
    finally:
        arena.trim()
    with pytest.raises(argonishche.ParameterTypeError, match="allocator must be a registered "
                                                           "allocator's name or an argonishche"
                                                           ".Allocator, not int"):
        argonishche.argon2_hash(PASSWORD, SALT, allocator=3, **SMALL)


@pytest.mark.parametrize("passwords", ["secret", b"secret", bytearray(b"secret")])
def test_hash_many_refuses_one_password_given_as_many(passwords):
    with pytest.raises(argonishche.ParameterTypeError, match="iterable of passwords"):
        argonishche.hash_many(passwords, time_cost=1, memory_cost=8, parallelism=1)


def test_forcing_a_backend_that_comes_in_a_wheel_says_which_to_install():
    reg = make_registry(installed=False, environ={"ARGONISHCHE_BACKEND": "avx512"})
    with pytest.raises(argonishche.SettingError, match="pip install argonishche-avx512"):
        reg.selected_name("argon2")


def test_warnings_point_at_the_callers_line():
    out = run_python("""
        import warnings
        warnings.simplefilter("always")
        import argonishche
        argonishche.backends()  # line 5 of this program
        """, ARGONISHCHE_DISABLE_BACKENDS="nosuch")
    assert out.returncode == 0, out.stderr
    first = out.stderr.splitlines()[0]
    assert first.startswith("<string>:5: RuntimeWarning: argonishche: "), first


def test_a_warning_raised_as_an_error_still_names_the_plugin():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="plugin 'broken' from fake-kernels 1.2"):
            make_registry(FakeEntryPoint("broken", error=ImportError("no module")))
