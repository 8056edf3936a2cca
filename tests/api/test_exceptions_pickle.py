"""Every public exception survives pickle (every protocol) and copy: same type, message, args and
attributes.  The classes come from introspection, so a new exception cannot be left out.

``cls.__new__(cls)``, the blank instance that tblib (installed by dask.distributed) unpickles
into, is checked too: ``ArgonishcheMemoryError`` once refused it, because ``__new__`` resolved to
``MemoryError.__new__``.  tests/stress/test_pickle_distributed.py runs this module again with
distributed imported, and raises each class in a Dask task.
"""

from __future__ import annotations

import copy
import inspect
import pickle

import argonishche
import pytest
from argonishche import exceptions

#: Constructor arguments for classes whose __init__ takes more than a message.
ARGS = {
    exceptions.SettingError: ("ARGONISHCHE_ALLOCATOR", "mmap", "one of: system, arena, hugepages"),
}


def public_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in argonishche.exceptions or exported by argonishche."""
    found = {cls for _, cls in inspect.getmembers(exceptions, inspect.isclass)
             if issubclass(cls, BaseException) and cls.__module__ == exceptions.__name__}
    exported = (getattr(argonishche, name) for name in argonishche.__all__)
    found |= {obj for obj in exported if inspect.isclass(obj) and issubclass(obj, BaseException)}
    return sorted(found, key=lambda cls: cls.__name__)


def example_args(cls: type[BaseException]) -> tuple[str, ...]:
    return ARGS.get(cls, ("memory_cost=1048576 KiB: could not allocate 1073741824 bytes",))


def example(cls: type[BaseException]) -> BaseException:
    """An instance as callers meet it: raised, with an attribute and a note added on the way."""
    try:
        raise cls(*example_args(cls))
    except cls as caught:
        exc = caught
    exc.request_id = 42
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note("while hashing user 42's password")
    return exc


def state(exc: BaseException) -> tuple:
    return type(exc), str(exc), exc.args, vars(exc)


CLASSES = public_exceptions()
ROUND_TRIPS = {
    **{f"pickle-{proto}": lambda exc, proto=proto: pickle.loads(pickle.dumps(exc, proto))
       for proto in range(pickle.HIGHEST_PROTOCOL + 1)},
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


def test_the_class_list_is_complete():
    assert CLASSES
    assert exceptions.ArgonishcheMemoryError in CLASSES
    assert exceptions.SettingError in CLASSES


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("round_trip", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_round_trip_keeps_type_message_args_and_attributes(cls, round_trip):
    exc = example(cls)
    again = round_trip(exc)
    assert again is not exc
    assert state(again) == state(exc)


def test_setting_error_keeps_its_fields():
    again = pickle.loads(pickle.dumps(example(exceptions.SettingError)))
    assert (again.variable, again.value, again.allowed) == ARGS[exceptions.SettingError]
    assert str(again) == "ARGONISHCHE_ALLOCATOR='mmap': must be one of: system, arena, hugepages"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_blank_instance(cls):
    """``cls.__new__(cls)`` then setting args and __dict__ rebuilds the exception (tblib's way)."""
    exc = example(cls)
    blank = cls.__new__(cls)
    blank.args = exc.args
    blank.__dict__.update(vars(exc))
    assert state(blank) == state(exc)
