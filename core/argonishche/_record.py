"""Frozen records: what ``@dataclass(frozen=True)`` gives argonishche's public records, without
importing :mod:`dataclasses` at run time.

:mod:`dataclasses` imports :mod:`inspect`, which imports :mod:`ast`, :mod:`dis`,
:mod:`tokenize` and :mod:`re`: the largest single cost of ``import argonishche`` and of a
process's first hash (docs/benchmarks.md, "Start-up: what a new process pays"), for five small
classes built at start-up (``Backend``, ``PluginInfo``, ``BackendInfo``, ``Argon2Params``,
``Limits``).

:func:`record` makes the same class a frozen dataclass would: ``__init__`` with the fields in
annotation order, their defaults and :func:`field` factories, then ``__post_init__``;
``__repr__``, ``__eq__`` and ``__hash__`` over the fields; ``__match_args__``; assignment and
deletion refused.  Type checkers see a dataclass-like class (PEP 681), not a dataclass:
:func:`fields`, :func:`asdict` and :func:`replace` here stand for :mod:`dataclasses`' functions.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    _T = TypeVar("_T")
else:
    def dataclass_transform(**_options: object):  # for type checkers only
        return lambda decorated: decorated

_FIELDS = "__record_fields__"


class _Factory:
    """A field's default_factory, kept in the class body until :func:`record` reads it."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is made for each instance (a dict, a set), as dataclasses.field."""
    return _Factory(default_factory)  # type: ignore[return-value]


class FrozenRecordError(AttributeError):
    """Assignment to, or deletion of, a record's field (a record is immutable)."""


def _refuse_change(self: object, name: str, value: object = None) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}: {type(self).__name__} is frozen")


def _refuse_deletion(self: object, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}: {type(self).__name__} is frozen")


def _values(self: object) -> tuple[object, ...]:
    return tuple(getattr(self, name) for name in getattr(self, _FIELDS))


def _repr(self: object) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in getattr(self, _FIELDS))
    return f"{type(self).__qualname__}({shown})"


def _eq(self: object, other: object) -> object:  # a bool, or NotImplemented for another class
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: object) -> int:
    return hash(_values(self))


_NO_DEFAULT = object()  # a field without a default


class _FactoryDefault:
    """A factory field's default in ``__init__``'s signature, replaced by a fresh value."""

    def __repr__(self) -> str:
        return "<factory>"  # as dataclasses shows it


_FACTORY_DEFAULT = _FactoryDefault()


def _init_source(names: tuple[str, ...], namespace: dict[str, object],
                 post_init: bool) -> str:
    """``__init__``'s source: parameters in field order with their defaults (a factory's
    sentinel is replaced by a fresh value), each stored with object.__setattr__."""
    parameters, body = ["self"], []
    for name in names:
        default = namespace.get(name, _NO_DEFAULT)
        if isinstance(default, _Factory):
            parameters.append(f"{name}=_factory_sentinel")
            body.append(f"    if {name} is _factory_sentinel: {name} = _factory_{name}()")
        elif default is not _NO_DEFAULT:
            parameters.append(f"{name}=_default_{name}")
        else:
            parameters.append(name)
        body.append(f"    _set(self, {name!r}, {name})")
    if post_init:
        body.append("    self.__post_init__()")
    return f"def __init__({', '.join(parameters)}):\n" + "\n".join(body or ["    pass"])


def _make_init(cls: type, source: str, scope: dict[str, object]) -> Any:
    """``__init__`` from *source*, with *scope*'s names as closure variables and the class's
    module as its globals (as dataclasses does), so that typing.get_type_hints resolves its
    annotations."""
    names = ", ".join(scope)
    indented = "\n".join(f"    {line}" for line in source.splitlines())
    maker = f"def _make({names}):\n{indented}\n    return __init__"
    made: dict[str, Any] = {}
    exec(maker, sys.modules[cls.__module__].__dict__, made)
    return made["_make"](**scope)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[_T]) -> type[_T]:
    """Make *cls* a frozen record of its annotated fields (see the module docstring)."""
    namespace = cls.__dict__
    names = tuple(namespace.get("__annotations__", {}))
    defaulted = [name for name in names if name in namespace]
    if defaulted != list(names[len(names) - len(defaulted):]):
        raise TypeError(f"{cls.__name__}: a field without a default follows one with a default")
    source = _init_source(names, dict(namespace), "__post_init__" in namespace)
    scope: dict[str, object] = {"_set": object.__setattr__, "_factory_sentinel": _FACTORY_DEFAULT}
    for name in defaulted:
        default = namespace[name]
        if isinstance(default, _Factory):
            scope[f"_factory_{name}"] = default.make
            delattr(cls, name)  # as dataclasses does: instances always have their own value
        else:
            scope[f"_default_{name}"] = default
    init = _make_init(cls, source, scope)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {**namespace.get("__annotations__", {}), "return": None}
    for attribute, value in (("__init__", init), ("__repr__", _repr), ("__eq__", _eq),
                             ("__hash__", _hash), ("__setattr__", _refuse_change),
                             ("__delattr__", _refuse_deletion), ("__match_args__", names),
                             (_FIELDS, names)):
        setattr(cls, attribute, value)
    return cls


def fields(obj: object) -> tuple[str, ...]:
    """The field names of a record class or instance, in order."""
    names: tuple[str, ...] = getattr(obj, _FIELDS)
    return names


def asdict(obj: object) -> dict[str, Any]:
    """A record's fields and values, in order (values as they are, not copied)."""
    return {name: getattr(obj, name) for name in fields(obj)}


def replace(obj: _T, **changes: Any) -> _T:
    """A new record of *obj*'s class with *changes*; the rest as in *obj* (checked again)."""
    unknown = set(changes) - set(fields(obj))
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no fields {sorted(unknown)}")
    return type(obj)(**{**asdict(obj), **changes})
