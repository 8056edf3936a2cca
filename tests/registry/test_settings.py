"""The ARGONISHCHE_* variables: one table, one error type naming the variable, separate
namespaces for backends, plugins and allocators.

The subprocess tests use only the public API and the command line, so that they run unchanged
against any version of the library (that is how they were seen failing before the fix).
"""

from __future__ import annotations

import os
import pathlib
import re

import pytest
from argonishche import _settings
from argonishche.exceptions import ParameterError, SettingError
from support import run_python

PACKAGE = pathlib.Path(_settings.__file__).parent
#: Names the Python code uses from the C headers, which are not environment variables.
C_MACRO_PREFIXES = ("ARGONISHCHE_KERNEL_", "ARGONISHCHE_OK", "ARGONISHCHE_ERR_",
                    "ARGONISHCHE_WORKOUT_", "ARGONISHCHE_WAIT_MEMORY",
                    "ARGONISHCHE_ARGON2", "ARGONISHCHE_DEFINE_", "ARGONISHCHE_TARGET_")
C_MACROS = {"ARGONISHCHE_ARENA_LOCKED", "ARGONISHCHE_ARENA_HUGE_PAGES",
            "ARGONISHCHE_BLAKE2B_MAX_RUN"}

HASH_AND_SAY_WHICH_ALLOCATOR = """
import warnings
warnings.simplefilter("always")
import argonishche
tag = argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=64,
                              parallelism=1, type="id")
print(tag.hex())
from argonishche import _registry
print(_registry.get().allocator().name)
"""

def reference_tag() -> str:
    out = run_python("import argonishche; print(argonishche.argon2_hash(b'password', b'somesalt', "
                     "time_cost=1, memory_cost=64, parallelism=1, type='id', backend='ref').hex())")
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_disabling_a_backend_named_like_a_plugin_never_removes_the_allocators():
    # Before: the built-in allocators' entry point was named "allocators" and shared the block
    # list with backends, so the first hash failed with "allocator 'arena': no such allocator".
    out = run_python(HASH_AND_SAY_WHICH_ALLOCATOR, ARGONISHCHE_DISABLE_BACKENDS="allocators")
    assert out.returncode == 0, out.stderr
    tag, allocator = out.stdout.split()
    assert tag == reference_tag()
    assert allocator == "arena"
    assert "ARGONISHCHE_DISABLE_BACKENDS names allocators" in out.stderr
    assert "known backends, plugins and distributions: " in out.stderr and "ref" in out.stderr


def test_an_invalid_budget_is_an_error_naming_the_variable_at_first_use():
    # Before (with the arena's bound, ARGONISHCHE_ARENA_MAX_MIB=1GiB): every hash failed with
    # "allocator 'arena': no such allocator. Registered: none", the real cause only in a warning.
    out = run_python(HASH_AND_SAY_WHICH_ALLOCATOR, ARGONISHCHE_MEMORY_BUDGET_MIB="1GiB")
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert "ARGONISHCHE_MEMORY_BUDGET_MIB='1GiB'" in last and "whole number of MiB" in last, last
    assert "no such allocator" not in out.stderr


def test_info_reports_an_invalid_setting_instead_of_a_wrong_default():
    # Before: info printed the allocators as if ARGONISHCHE_ALLOCATOR=arena had been asked for.
    out = run_python("import sys, runpy; sys.argv = ['argonishche', 'info', '--fast']; "
                     "runpy.run_module('argonishche', run_name='__main__')",
                     ARGONISHCHE_MEMORY_BUDGET_MIB="1GiB")
    assert out.returncode == 1
    assert "ERROR: ARGONISHCHE_MEMORY_BUDGET_MIB='1GiB': must be a whole number" in out.stdout
    assert "ARGONISHCHE_ALLOCATOR=arena" not in out.stdout


@pytest.mark.parametrize("env, value", [
    ("ARGONISHCHE_SELECT", "fastest"),
    ("ARGONISHCHE_MEMORY_BUDGET_MIB", "1GiB"),
    ("ARGONISHCHE_MEMORY_BUDGET_MIB", "0"),
    ("ARGONISHCHE_MEMORY_BUDGET_MIB", "-5"),
    ("ARGONISHCHE_MEMORY_BUDGET_MIB", str(_settings.MAX_ARENA_MIB + 1)),
    ("ARGONISHCHE_MEMORY_IDLE_SECONDS", "1.5"),
    ("ARGONISHCHE_MEMORY_HUGE_PAGES", "yes"),
    ("ARGONISHCHE_MEMORY_WAIT_SECONDS", str(_settings.MAX_WAIT_SECONDS + 1)),
    ("ARGONISHCHE_ARENA_MAX_MIB", "1024"),     # retired: must be unset
    ("ARGONISHCHE_ARENA_RETAIN_MIB", "64"),
    ("ARGONISHCHE_DISABLE_CPU_FEATURES", "avx2,avx1024"),
])
def test_every_invalid_value_is_one_error_type_naming_variable_value_and_what_is_allowed(
        env, value):
    with pytest.raises(SettingError) as caught:
        _settings.parse({env: value})
    error = caught.value
    assert isinstance(error, ParameterError) and isinstance(error, ValueError)
    assert (error.variable, error.value) == (env, value)
    assert str(error).startswith(f"{env}={value!r}: must be {error.allowed}")


def test_defaults_and_parsing():
    settings = _settings.parse({})
    assert settings.backend is None and settings.allocator is None
    assert settings.allocator_name == _settings.DEFAULT_ALLOCATOR == "arena"
    assert settings.select == "auto" and settings.memory_budget_mib is None
    assert (settings.memory_idle_seconds, settings.memory_wait_seconds) == (10, 10)
    assert settings.given == {}
    settings = _settings.parse({"ARGONISHCHE_BACKEND": " AVX2 ", "ARGONISHCHE_SELECT": "Measure",
                                "ARGONISHCHE_DISABLE_BACKENDS": "avx2, SSE41,,",
                                "ARGONISHCHE_MEMORY_BUDGET_MIB": "64",
                                "ARGONISHCHE_MEMORY_WAIT_SECONDS": "0", "UNRELATED": "x"})
    assert settings.backend == "avx2" and settings.select == "measure"
    assert settings.disabled_backends == {"avx2", "sse41"}
    assert settings.memory_budget_mib == 64 and settings.memory_wait_seconds == 0
    assert set(settings.given) == {"ARGONISHCHE_BACKEND", "ARGONISHCHE_SELECT",
                                   "ARGONISHCHE_DISABLE_BACKENDS",
                                   "ARGONISHCHE_MEMORY_BUDGET_MIB",
                                   "ARGONISHCHE_MEMORY_WAIT_SECONDS"}


def test_setting_error_survives_pickling():
    import pickle

    error = SettingError("ARGONISHCHE_SELECT", "x", "priority or measure")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is SettingError and str(copy) == str(error)
    assert (copy.variable, copy.value, copy.allowed) == (error.variable, error.value, error.allowed)


def test_only_the_settings_module_reads_the_environment():
    readers = [path.name for path in PACKAGE.rglob("*.py")
               if path.name != "_settings.py"
               and re.search(r"os\.environ|os\.getenv|environ\.get", path.read_text())]
    assert readers == []


def test_every_variable_the_package_names_is_in_the_table():
    named = set()
    for path in PACKAGE.rglob("*.py"):
        named |= set(re.findall(r"\bARGONISHCHE_[A-Z0-9_]+\b", path.read_text()))
    c_macros = {name for name in named if name.startswith(C_MACRO_PREFIXES)} | C_MACROS
    # The retired variables are named only to be refused with a message (_settings.RETIRED).
    assert named - c_macros - set(_settings.RETIRED) == {v.env for v in _settings.VARIABLES}


def test_a_childs_environment_sets_only_known_settings(monkeypatch):
    monkeypatch.setenv("ARGONISHCHE_SELECT", "priority")
    child = _settings.environment_with(ARGONISHCHE_SELECT="measure")
    assert child["ARGONISHCHE_SELECT"] == "measure" and child["PATH"] == os.environ["PATH"]
    assert os.environ["ARGONISHCHE_SELECT"] == "priority"
    with pytest.raises(ValueError, match="not argonishche settings: ARGONISHCHE_SELEKT"):
        _settings.environment_with(ARGONISHCHE_SELEKT="measure")
