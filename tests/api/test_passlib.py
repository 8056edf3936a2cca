"""argonishche.contrib.passlib.argon2 through libpass's CryptContext, against libpass's own argon2
handler (argon2-cffi backend): the same strings both ways, and without argon2-cffi."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("passlib", reason="libpass is in the test extra")
from argonishche.contrib.passlib import argon2  # noqa: E402
from passlib.context import CryptContext  # noqa: E402
from passlib.hash import argon2 as stock_argon2  # noqa: E402
from support import run_python  # noqa: E402

CHEAP = {"rounds": 1, "memory_cost": 64, "parallelism": 1}
PASSWORD = "correct horse battery staple"


def cheap_context(**settings):
    return CryptContext(schemes=[argon2], **{f"argon2__{key}": value
                                             for key, value in {**CHEAP, **settings}.items()})


def test_crypt_context_hashes_verifies_and_updates_with_our_handler():
    context = cheap_context()
    stored = context.hash(PASSWORD)
    assert stored.startswith("$argon2id$v=19$m=64,t=1,p=1$")
    assert context.identify(stored) == "argon2"
    for other in ("$2b$12$" + "a" * 53, "$argon2x$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$abc", "", b"x"):
        assert argon2.identify(other) is False
    assert context.verify(PASSWORD, stored) is True
    assert context.verify(PASSWORD.encode(), stored.encode()) is True
    assert context.verify("wrong", stored) is False
    assert context.needs_update(stored) is False
    assert context.verify_and_update(PASSWORD, stored) == (True, None)
    assert context.verify_and_update("wrong", stored) == (False, None)


@pytest.mark.parametrize("type_name", ["id", "i", "d"])
def test_libpass_hashes_verify_with_ours_and_the_reverse(type_name):
    assert stock_argon2.get_backend() == "argon2_cffi"
    stock = stock_argon2.using(type=type_name, **CHEAP)
    ours = argon2.using(type=type_name, **CHEAP)
    from_stock, from_ours = stock.hash(PASSWORD), ours.hash(PASSWORD)
    assert from_ours.split("$")[1:4] == from_stock.split("$")[1:4]
    for handler, stored in ((ours, from_stock), (stock, from_ours)):
        assert handler.verify(PASSWORD, stored) is True
        assert handler.verify("wrong", stored) is False
        assert handler.needs_update(stored) is False


def test_defaults_are_libpass_on_argon2_cffi_so_switching_updates_nothing():
    from_stock = stock_argon2.hash(PASSWORD)
    assert from_stock.split("$")[1:4] == argon2.hash(PASSWORD).split("$")[1:4]
    assert argon2.needs_update(from_stock) is False
    assert CryptContext(schemes=[argon2]).verify_and_update(PASSWORD, from_stock) == (True, None)


@pytest.mark.parametrize("weaker", [{"rounds": 1}, {"memory_cost": 32}, {"parallelism": 1},
                                    {"digest_size": 16}, {"type": "i"}],
                         ids=["rounds", "memory_cost", "parallelism", "digest_size", "type"])
def test_verify_and_update_rehashes_a_hash_with_other_settings(weaker):
    context = cheap_context(rounds=2, parallelism=2)
    for maker in (stock_argon2, argon2):
        stored = maker.using(**{**CHEAP, **weaker}).hash(PASSWORD)
        valid, updated = context.verify_and_update(PASSWORD, stored)
        assert valid is True and updated.startswith("$argon2id$v=19$m=64,t=2,p=2$")
        assert context.verify_and_update(PASSWORD, updated) == (True, None)


def test_an_unknown_setting_is_crypt_contexts_key_error():
    with pytest.raises(KeyError, match="min_rounds"):
        CryptContext(schemes=[argon2], argon2__min_rounds=1)
    with pytest.raises(ValueError):
        argon2.using(memory_cost=4)  # below 8 KiB per lane: refused when configured


def test_hostile_stored_hashes_are_false_fast_and_need_an_update():
    salt, tag = "c29tZXNhbHRzYWx0", "A" * 43
    hostile = [f"$argon2id$v=19$m=4294967295,t=1,p=1${salt}${tag}",
               f"$argon2id$v=19$m=64,t=4294967295,p=1${salt}${tag}",
               f"$argon2id$v=19$m=\u0666\u0664,t=1,p=1${salt}${tag}",
               f"$argon2id$v=19$m=64,t=1,p=1$c2FsdA${tag}",
               f"$argon2id$v=19$m=64,t=1,p=1${salt}",
               f"$argon2id$v=19$m=64,t=1,p=1${salt}$" + "A" * 100_000]
    # In a child with a timeout: a handler that ran these costs would take hours.
    result = run_python(f"""
        import json, time
        from passlib.context import CryptContext
        from argonishche.contrib.passlib import argon2
        context = CryptContext(schemes=[argon2])
        answers = []
        for stored in {hostile!r}:
            started = time.perf_counter()
            answers.append([context.verify("pw", stored), context.needs_update(stored),
                            time.perf_counter() - started])
        print(json.dumps(answers))
        """, timeout=120)
    assert result.returncode == 0, result.stderr
    for stored, (verified, needs_update, seconds) in zip(hostile, json.loads(result.stdout),
                                                         strict=True):
        assert (verified, needs_update) == (False, True), stored[:60]
        assert seconds < 2.0, (stored[:60], seconds)


def test_works_with_argon2_unimportable_and_libpass_own_handler_untouched():
    result = run_python("""
        import sys
        sys.modules["argon2"] = None  # every `import argon2` fails, as without argon2-cffi
        from passlib.context import CryptContext
        from passlib.hash import argon2 as stock
        from argonishche.contrib.passlib import argon2
        context = CryptContext(schemes=[argon2], argon2__memory_cost=64, argon2__rounds=1,
                               argon2__parallelism=1)
        stored = context.hash("pw")
        assert context.verify("pw", stored) and not context.verify("no", stored)
        assert sys.modules["argon2"] is None
        print(stock.has_backend())
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_the_module_imports_neither_passlib_nor_argon2():
    result = run_python("""
        import sys
        import argonishche.contrib.passlib
        print(sorted(name for name in sys.modules
                     if name.split(".")[0] in ("passlib", "argon2")))
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
