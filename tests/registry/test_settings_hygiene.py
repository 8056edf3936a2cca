"""Settings hygiene: every ``ARGONISHCHE_*`` value and every name a caller gives is ASCII, and
no message echoes more than the first ECHO_LIMIT characters of such a value.

int() reads any Unicode digit ('٣٢' is 32, '１０' is 10) and str.lower() maps the Kelvin sign
(U+212A) onto k ('LOC\u212aED' named the ``locked`` allocator), so a value could mean what it
does not show; and one SettingError echoed a 120 KB value whole, one warning 85 KB.
"""

from __future__ import annotations

import warnings

import argonishche
import pytest
from argonishche import _features, _settings, hookspecs
from argonishche.exceptions import ECHO_LIMIT, BackendError, ParameterError, SettingError, echo
from support import (
    PASSWORD,
    SALT,
    SMALL,
    FakeEntryPoint,
    make_registry,
    plugin_registering,
    run_python,
)

KELVIN = "\u212a"
#: One value each variable accepts: with a non-ASCII character added it must be refused.
ACCEPTED = {
    "ARGONISHCHE_BACKEND": "ref",
    "ARGONISHCHE_DISABLE_BACKENDS": "avx2",
    "ARGONISHCHE_SELECT": "priority",
    "ARGONISHCHE_WITNESS": "on",
    "ARGONISHCHE_ALLOCATOR": "locked",
    "ARGONISHCHE_MEMORY_BUDGET_MIB": "64",
    "ARGONISHCHE_MEMORY_IDLE_SECONDS": "0",
    "ARGONISHCHE_MEMORY_WAIT_SECONDS": "30",
    "ARGONISHCHE_MEMORY_HUGE_PAGES": "on",
    "ARGONISHCHE_DISABLE_CPU_FEATURES": _features.NAMES[0],
    "ARGONISHCHE_CERTIFY_TIMEOUT": "10",
    "ARGONISHCHE_CACHE_DIR": "/var/cache/argonishche",
    "ARGONISHCHE_CERTIFY_PYTHON": "/usr/bin/python3",
    "ARGONISHCHE_REQUIRE_BACKENDS": "ref",
}
HUGE = 120_000


def test_every_variable_has_an_accepted_example():
    assert set(ACCEPTED) == {variable.env for variable in _settings.VARIABLES}
    _settings.parse(ACCEPTED)


@pytest.mark.parametrize("env, value, character", [
    ("ARGONISHCHE_MEMORY_WAIT_SECONDS", "\u0663\u0662", "U+0663"),  # Arabic-Indic 32
    ("ARGONISHCHE_MEMORY_BUDGET_MIB", "\uff11\uff10", "U+FF11"),    # full-width 10
    ("ARGONISHCHE_MEMORY_BUDGET_MIB", "6\u0664", "U+0664"),          # 64, half Arabic-Indic
    ("ARGONISHCHE_CERTIFY_TIMEOUT", "\uff11\uff10", "U+FF11"),
])
def test_numeric_settings_take_ascii_digits_only(env, value, character):
    # Before: '٣٢' gave 32 and '１０' gave 10, where the PHC decoder refuses such digits.
    with pytest.raises(SettingError) as caught:
        _settings.parse({env: value})
    message = str(caught.value)
    assert caught.value.variable == env and caught.value.value == value
    assert message.startswith(f"{env}={value!r}: must be ASCII only")
    assert character in message and "whole number" in message


def test_the_kelvin_sign_does_not_name_the_locked_allocator():
    # Before: 'LOC\u212aED'.lower() == 'locked', so the setting selected the locked allocator.
    with pytest.raises(SettingError, match=r"ARGONISHCHE_ALLOCATOR=.*: must be ASCII only "
                                           r"\(character 4 is U\+212A\), and the name of one "
                                           r"registered allocator"):
        _settings.parse({"ARGONISHCHE_ALLOCATOR": f"LOC{KELVIN}ED"})


@pytest.mark.parametrize("env", sorted(ACCEPTED))
def test_every_variable_refuses_a_non_ascii_character(env):
    # A no-break space, which str.strip() took off: before, most variables accepted it.
    value = ACCEPTED[env] + "\u00a0"
    with pytest.raises(SettingError, match=r"must be ASCII only \(character \d+ is U\+00A0\)"):
        _settings.parse({env: value})


def test_names_given_to_the_api_are_ascii_only():
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "priority"})
    assert reg.allocator("LOCKED").name == "locked"  # case alone still does not matter
    # Before: the Kelvin sign found the locked allocator, through the API as through the setting.
    with pytest.raises(BackendError, match=r"allocator .* cannot be used: names are ASCII only "
                                           r"\(character 4 is U\+212A\)"):
        reg.allocator(f"LOC{KELVIN}ED")
    with pytest.raises(BackendError, match="names are ASCII only"):
        argonishche.argon2_hash(PASSWORD, SALT, **SMALL, allocator=f"LOC{KELVIN}ED")


def test_backend_names_given_to_the_api_are_ascii_only():
    kelvin = hookspecs.Backend(name="kelvin", description="a name with a k in it",
                               kernel_module="module_that_does_not_exist")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its kernel module fails to load: reported, not here
        reg = make_registry(FakeEntryPoint("kelvin", plugin_registering(kelvin)),
                            environ={"ARGONISHCHE_SELECT": "priority"})
    with pytest.raises(BackendError, match="'KELVIN' cannot be used: load-failed"):
        reg.kernel_table("argon2", "KELVIN")  # the ASCII spelling finds it (and why it failed)
    # Before: the Kelvin sign found it too ("cannot be used: load-failed").
    with pytest.raises(BackendError, match=r"cannot be used: names are ASCII only \(character 1 "
                                           r"is U\+212A\)"):
        reg.kernel_table("argon2", f"{KELVIN}ELVIN")
    with pytest.raises(BackendError, match="names are ASCII only"):
        argonishche.argon2_hash(PASSWORD, SALT, **SMALL, backend=f"R{KELVIN}F")


def test_echo_caps_a_value_and_says_how_long_it_was():
    assert echo("ref") == "'ref'" and echo("ref", quoted=False) == "ref"
    exact = "x" * ECHO_LIMIT
    assert echo(exact) == repr(exact)
    assert echo(exact + "y") == f"{exact!r}... ({ECHO_LIMIT + 1} characters)"
    assert echo(exact + "y", quoted=False) == f"{exact}... ({ECHO_LIMIT + 1} characters)"


def assert_capped(message: str, filler: str, length: int) -> None:
    assert filler * (ECHO_LIMIT + 1) not in message
    assert f"... ({length} characters)" in message
    assert len(message) < 1000, len(message)


def test_a_huge_value_is_echoed_capped_in_the_setting_error():
    # Before: the SettingError's message was the whole 120 KB value.
    value = "1" * HUGE
    with pytest.raises(SettingError) as caught:
        _settings.parse({"ARGONISHCHE_MEMORY_BUDGET_MIB": value})
    assert_capped(str(caught.value), "1", HUGE)
    assert caught.value.value == value  # the attribute keeps what was given
    assert str(caught.value).startswith(
        f"ARGONISHCHE_MEMORY_BUDGET_MIB={'1' * ECHO_LIMIT!r}... ")


def test_a_huge_forced_backend_name_is_echoed_capped():
    reg = make_registry(environ={"ARGONISHCHE_BACKEND": "b" * HUGE})
    assert isinstance(reg.selection_error, SettingError)
    assert_capped(str(reg.selection_error), "b", HUGE)


@pytest.mark.parametrize("value, filler", [
    ("d" * HUGE, "d"),
    (",".join(f"n{index}" for index in range(20_000)), "n"),  # many short names
])
def test_a_huge_list_to_disable_is_echoed_capped_in_the_warning(value, filler):
    # Before: the warning listed every unknown name, whole (85 KB and more).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_registry(environ={"ARGONISHCHE_DISABLE_BACKENDS": value,
                               "ARGONISHCHE_SELECT": "priority"})
    unknown = [str(w.message) for w in caught if "DISABLE_BACKENDS names" in str(w.message)]
    assert len(unknown) == 1
    listed = ", ".join(sorted(value.split(","))) if filler == "n" else value
    assert f"... ({len(listed)} characters), which no installed plugin provides" in unknown[0]
    assert len(unknown[0]) < 1000, len(unknown[0])


def test_huge_names_given_to_the_api_are_echoed_capped():
    reg = make_registry(environ={"ARGONISHCHE_SELECT": "priority"})
    with pytest.raises(BackendError) as caught:
        reg.kernel_table("argon2", "k" * HUGE)
    assert_capped(str(caught.value), "k", HUGE)
    with pytest.raises(BackendError) as caught:
        reg.allocator("a" * HUGE)
    assert_capped(str(caught.value), "a", HUGE)
    with pytest.raises(BackendError) as caught:
        reg.allocator(KELVIN * HUGE)
    assert_capped(str(caught.value), KELVIN, HUGE)


def test_a_huge_type_name_is_echoed_capped():
    with pytest.raises(ParameterError) as caught:
        argonishche.argon2_hash(PASSWORD, SALT, **SMALL, type="t" * HUGE)
    assert_capped(str(caught.value), "t", HUGE)
    assert str(caught.value).startswith("type must be 'd', 'i' or 'id'")


def test_a_fresh_process_refuses_arabic_indic_digits_naming_the_variable():
    out = run_python("import argonishche; argonishche.argon2_hash(b'password', b'somesalt', "
                     "time_cost=1, memory_cost=32, parallelism=1)",
                     ARGONISHCHE_MEMORY_IDLE_SECONDS="\u0663\u0662", timeout=60)
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "argonishche.exceptions.SettingError: ARGONISHCHE_MEMORY_IDLE_SECONDS=")
    assert "must be ASCII only (character 1 is U+0663)" in last, last
