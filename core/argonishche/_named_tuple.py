"""``typing.NamedTuple``'s class syntax without importing :mod:`typing` at run time.

Start-up imports only what the first hash needs, and typing is not needed to make a named tuple:
type checkers see ``typing.NamedTuple`` (``if TYPE_CHECKING``), the interpreter this, which makes
the same class with :func:`collections.namedtuple`: fields in annotation order, trailing
defaults, the body's docstring, methods and properties.
"""

from __future__ import annotations

from collections import namedtuple

# Made by namedtuple itself, or kept from the class body by other means.
_KEPT = frozenset({"__module__", "__qualname__", "__annotations__", "__classcell__",
                   "__dict__", "__weakref__"})
_PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                         "_field_defaults", "_make", "_replace", "_asdict", "_source"})


class _NamedTupleMeta(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, name, bases, namespace)
        if bases != (NamedTuple,):
            raise TypeError("a NamedTuple subclass has NamedTuple as its only base")
        annotations = dict(namespace.get("__annotations__", {}))  # type: ignore[call-overload]
        fields = list(annotations)
        defaulted = [field for field in fields if field in namespace]
        if defaulted != fields[len(fields) - len(defaulted):]:
            raise TypeError(f"{name}: a field without a default follows one with a default")
        defaults = [namespace[field] for field in defaulted]
        cls = namedtuple(name, fields, defaults=defaults,  # type: ignore[misc]
                         module=str(namespace["__module__"]))
        cls.__annotations__ = annotations
        cls.__qualname__ = str(namespace.get("__qualname__", name))
        for key, value in namespace.items():
            if key in _PROHIBITED:
                raise AttributeError(f"{name}: cannot overwrite NamedTuple attribute {key}")
            if key not in _KEPT and key not in annotations:
                setattr(cls, key, value)
        return cls


class NamedTuple(metaclass=_NamedTupleMeta):
    """Subclass as ``typing.NamedTuple`` (only in modules that import this one at run time)."""
