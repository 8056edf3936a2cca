"""argonishche._record: the frozen records that stand for dataclasses at start-up behave as
``@dataclass(frozen=True)`` would on the same class body."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle

import argonishche
import pytest
from argonishche import _record
from argonishche._record import field, record


def body(decorate):
    """The same class body, made by *decorate* (record, or a frozen dataclass)."""

    @decorate
    class Point:
        x: int
        y: int = 2
        tags: dict[str, int] = field(default_factory=dict) if decorate is record else \
            dataclasses.field(default_factory=dict)

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("x must be >= 0")

    return Point


FROZEN_DATACLASS = dataclasses.dataclass(frozen=True)


def test_a_record_is_made_as_a_frozen_dataclass_is():
    ours, theirs = body(record), body(FROZEN_DATACLASS)
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__match_args__ == theirs.__match_args__ == ("x", "y", "tags")
    assert repr(ours(1)).split("(", 1)[1] == repr(theirs(1)).split("(", 1)[1]
    assert ours(1, 3) == ours(1, 3) and ours(1) != ours(2) and ours(1) != theirs(1)
    assert hash(ours(1, tags=None)) == hash(ours(1, tags=None))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unhashable"):  # as the dataclass: a dict field
        hash(ours(1))
    assert ours(1).tags is not ours(1).tags  # a fresh dict each time
    assert "tags" not in vars(ours)  # the factory is not left on the class
    with pytest.raises(ValueError, match="x must be"):
        ours(-1)
    assert _record.fields(ours) == tuple(f.name for f in dataclasses.fields(theirs))


def test_a_record_refuses_changes():
    point = body(record)(1)
    with pytest.raises(_record.FrozenRecordError, match="'x'"):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError, match="'y'"):  # FrozenRecordError is an AttributeError
        del point.y  # type: ignore[misc]
    with pytest.raises(_record.FrozenRecordError):
        point.new = 1  # type: ignore[attr-defined]
    assert point.x == 1


def test_replace_and_asdict():
    limits = argonishche.Limits(max_work=10**6)
    changed = _record.replace(limits, max_time_cost=3)
    assert (changed.max_time_cost, changed.max_work, limits.max_time_cost) == (3, 10**6, 64)
    assert _record.asdict(changed) == {**_record.asdict(limits), "max_time_cost": 3}
    with pytest.raises(TypeError, match="no fields"):
        _record.replace(limits, max_speed=1)
    with pytest.raises(argonishche.ParameterError):  # checked again, as dataclasses.replace
        _record.replace(limits, max_time_cost=0)


def test_a_field_without_a_default_cannot_follow_one_with_a_default():
    with pytest.raises(TypeError, match="without a default follows"):
        @record
        class Wrong:
            a: int = 1
            b: int


@pytest.mark.parametrize("instance", [
    argonishche.Limits(), argonishche.Limits.none(),
    argonishche.Backend(name="x", description="d", kernel_module="m",
                        cpu_features=frozenset({"sse2"}), priority=3),
    argonishche.PluginInfo(name="p", distribution="d 1", state="loaded"),
], ids=repr)
def test_the_public_records_survive_pickle_and_copy(instance):
    assert pickle.loads(pickle.dumps(instance)) == instance
    assert copy.copy(instance) == instance and copy.deepcopy(instance) == instance


@pytest.mark.parametrize("cls", [argonishche.Argon2Params, argonishche.Backend,
                                 argonishche.BackendInfo, argonishche.PluginInfo,
                                 argonishche.Limits], ids=lambda cls: cls.__name__)
def test_a_records_init_has_its_fields_types(cls):
    import typing  # noqa: PLC0415 - the test's own import, not start-up's

    hints = typing.get_type_hints(cls.__init__)  # resolved in the class's module
    assert list(hints) == [*_record.fields(cls), "return"]
