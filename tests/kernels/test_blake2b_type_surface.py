"""The C ``blake2b`` type's surface (core/ext/blake2b_type.c, ``argonishche._blake2b_type``):
argument errors, subclasses (the module state found through their bases), each module object with
a state of its own and collected when dropped; made and dropped in a loop, objects do not leak."""

from __future__ import annotations

import hashlib
import sys

import pytest
from argonishche import _blake2b_type, _registry, blake2b
from argonishche._core import ffi
from support import run_python


def test_argument_errors_are_type_errors():
    with pytest.raises(TypeError):
        blake2b(b"a", b"b")
    with pytest.raises(TypeError):
        blake2b(b"a", data=b"b")
    with pytest.raises(TypeError):
        blake2b(b"a", nosuch=1)
    with pytest.raises(TypeError):
        blake2b(b"a", **{1: 2})  # type: ignore[misc]
    with pytest.raises(AttributeError):
        blake2b().digest_size = 3  # type: ignore[misc]


def test_a_subclass_works():
    class Sub(blake2b):
        pass

    h = Sub(b"abc", digest_size=32)
    h.note = "a subclass has a __dict__"
    clone = h.copy()
    assert type(clone) is Sub and clone.digest() == hashlib.blake2b(b"abc", digest_size=32).digest()


def test_a_subclass_of_a_subclass_finds_its_module():
    """The module state is found from the type by walking the bases (PyType_GetModuleByDef is
    not in 3.11's limited API): two levels down, with __new__ overridden, a key and a copy."""
    class Middle(blake2b):
        pass

    class Leaf(Middle):
        def __new__(cls, *args, **kwargs):
            return super().__new__(cls, *args, **kwargs)

    h = Leaf(b"abc", key=b"k", digest_size=20)
    h.update(b"def" * 1000)
    clone = h.copy()
    want = hashlib.blake2b(b"abc" + b"def" * 1000, key=b"k", digest_size=20).hexdigest()
    assert type(clone) is Leaf and clone.hexdigest() == h.hexdigest() == want


def fresh_type_module():
    """A second module object of argonishche._blake2b_type in this interpreter, as another
    interpreter's import makes one: its own state, never connected."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(_blake2b_type.__name__, _blake2b_type.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_module_object_has_its_own_state():
    """A module made anew (as in another interpreter) has its own type and is not connected;
    argonishche.blake2b, connected in this module's state, is unaffected.  Before, the state
    was C statics: the new module's type was connected through the old module's connection."""
    module = fresh_type_module()
    assert module.blake2b is not blake2b
    with pytest.raises(RuntimeError, match="not connected"):
        module.blake2b(b"x")

    class Sub(module.blake2b):
        pass

    with pytest.raises(RuntimeError, match="not connected"):
        Sub(b"x")
    with pytest.raises(RuntimeError, match="not connected"):
        module.selected_table_address()
    assert blake2b(b"x").digest() == hashlib.blake2b(b"x").digest()
    selected = _registry.selected_table("blake2b")
    assert _blake2b_type.selected_table_address() == int(ffi.cast("uintptr_t", selected))


def test_a_dropped_module_and_its_type_are_collected():
    """The type holds its module and the module's state holds the type: a cycle the collector
    sees through the module's traverse, so a dropped module (a destroyed interpreter's) goes."""
    import gc
    import weakref

    module = fresh_type_module()
    dead_type = weakref.ref(module.blake2b)
    del module
    gc.collect()
    assert dead_type() is None


def test_objects_do_not_leak():
    """Made and dropped in a loop (every kind: one-shot, keyed, copied, locked, pickled), the
    process does not grow."""
    code = """
        import pickle, resource, sys
        import argonishche

        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * resource.getpagesize()

        big = bytes(4096)
        def work(n):
            for i in range(n):
                argonishche.blake2b(b"x" * (i % 300)).digest()
                h = argonishche.blake2b(b"y", key=b"k" * (1 + i % 64), digest_size=32)
                h.update(big)
                h.copy().hexdigest()
                pickle.loads(pickle.dumps(argonishche.blake2b(b"z", digest_size=20)))
                try:
                    argonishche.blake2b(b"a", key=b"k" * 65)
                except ValueError:
                    pass
        work(20000)
        start = rss()
        work(100000)
        grown = rss() - start
        print(grown)
        sys.exit(0 if grown < 4 << 20 else 1)
        """
    if not sys.platform.startswith("linux"):
        pytest.skip("reads /proc/self/statm")
    result = run_python(code, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
