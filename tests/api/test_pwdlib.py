"""argonishche.contrib.pwdlib.Argon2Hasher through pwdlib's own PasswordHash, against pwdlib's
stock Argon2Hasher (argon2-cffi): the same strings both ways, the same answers, and stored hashes
that cannot be run answered False, fast, without the memory they ask for.

pwdlib's own argon2 tests run against the hasher in tox -e pwdlib-suite (tools/pwdlib_suite).
"""

from __future__ import annotations

import inspect
import json

import pytest

pwdlib = pytest.importorskip("pwdlib", reason="pwdlib is in the test extra")
from pwdlib import PasswordHash  # noqa: E402
from pwdlib.hashers import HasherProtocol  # noqa: E402
from pwdlib.hashers.argon2 import Argon2Hasher as StockArgon2Hasher  # noqa: E402

import argonishche  # noqa: E402
from argonishche import Limits  # noqa: E402
from argonishche._argon2 import params_of  # noqa: E402
from argonishche.contrib.pwdlib import Argon2Hasher  # noqa: E402
from support import run_python  # noqa: E402

# Costs small enough that a test makes dozens of hashes in well under a second.
CHEAP = {"time_cost": 1, "memory_cost": 64, "parallelism": 1}
PASSWORD = "correct horse battery staple"


def test_password_hash_hashes_verifies_and_updates_with_our_hasher():
    context = PasswordHash((Argon2Hasher(**CHEAP),))
    stored = context.hash(PASSWORD)
    assert stored.startswith("$argon2id$v=19$m=64,t=1,p=1$")
    assert context.verify(PASSWORD, stored) is True
    assert context.verify(PASSWORD.encode(), stored.encode()) is True
    assert context.verify("wrong", stored) is False
    assert context.verify_and_update(PASSWORD, stored) == (True, None)
    assert context.verify_and_update("wrong", stored) == (False, None)


@pytest.mark.parametrize("type_name", ["ID", "I", "D"])
def test_hashes_from_pwdlibs_stock_hasher_verify_with_ours_and_the_reverse(type_name):
    import argon2

    stock = StockArgon2Hasher(**CHEAP, type=getattr(argon2.Type, type_name))
    ours = Argon2Hasher(**CHEAP, type=type_name.lower())
    from_stock, from_ours = stock.hash(PASSWORD), ours.hash(PASSWORD)
    assert from_ours.split("$")[1:4] == from_stock.split("$")[1:4]  # type, version, costs
    for verifier, stored in ((ours, from_stock), (stock, from_ours)):
        assert verifier.verify(PASSWORD, stored) is True
        assert verifier.verify(PASSWORD.encode(), stored.encode()) is True
        assert verifier.verify("wrong", stored) is False
        assert verifier.check_needs_rehash(stored) is False
    # The same salt gives the same string: the tag, not only the verdict, is the same.
    salt = b"0123456789abcdef"
    assert ours.hash(PASSWORD, salt=salt) == stock.hash(PASSWORD, salt=salt)


def test_defaults_are_pwdlibs_so_switching_rehashes_nothing():
    stock_parameters = inspect.signature(StockArgon2Hasher).parameters
    our_parameters = inspect.signature(Argon2Hasher).parameters
    # pwdlib's positional arguments, in its order, then our keyword-only limits.
    assert list(our_parameters) == [*stock_parameters, "limits"]
    for name, stock_parameter in stock_parameters.items():
        ours = our_parameters[name]
        assert ours.kind == stock_parameter.kind, name
        if name == "type":  # argon2-cffi's Type member; ours is argonishche's: same name
            assert ours.default.name == stock_parameter.default.name
        else:
            assert ours.default == stock_parameter.default, name
    from_stock = StockArgon2Hasher().hash(PASSWORD)
    assert Argon2Hasher().check_needs_rehash(from_stock) is False
    assert params_of(Argon2Hasher().hash(PASSWORD))[0] == params_of(from_stock)[0]


@pytest.mark.parametrize("method", ["identify", "hash", "verify", "check_needs_rehash"])
def test_methods_take_the_arguments_of_pwdlibs_hasher_protocol(method):
    expected = inspect.signature(getattr(HasherProtocol, method)).parameters
    got = inspect.signature(getattr(Argon2Hasher, method)).parameters
    assert [(p.name, p.kind, p.default) for p in got.values()] == \
        [(p.name, p.kind, p.default) for p in expected.values()]
    assert isinstance(inspect.getattr_static(Argon2Hasher, "identify"), classmethod)


WEAKER = {
    "time_cost": {**CHEAP, "time_cost": 1},
    "memory_cost": {**CHEAP, "memory_cost": 32},
    "parallelism": {**CHEAP, "parallelism": 1},
    "hash_len": {**CHEAP, "hash_len": 16},
    "salt_len": {**CHEAP, "salt_len": 8},
    "type": {**CHEAP, "type": "i"},
}


@pytest.mark.parametrize("weaker", WEAKER, ids=list(WEAKER))
def test_verify_and_update_rehashes_a_hash_with_other_parameters(weaker):
    current = {**CHEAP, "time_cost": 2, "parallelism": 2}
    context = PasswordHash((Argon2Hasher(**current),))
    stored = Argon2Hasher(**WEAKER[weaker]).hash(PASSWORD)
    valid, updated = context.verify_and_update(PASSWORD, stored)
    assert valid is True and updated is not None
    assert updated.startswith("$argon2id$v=19$m=64,t=2,p=2$")
    assert context.verify_and_update(PASSWORD, updated) == (True, None)
    # The same stored hash made by the stock hasher is updated too.
    import argon2

    stock_arguments = {**WEAKER[weaker]}
    if weaker == "type":
        stock_arguments["type"] = argon2.Type.I
    stock_stored = StockArgon2Hasher(**stock_arguments).hash(PASSWORD)
    assert context.verify_and_update(PASSWORD, stock_stored)[1] is not None
    assert context.verify_and_update("wrong", stock_stored) == (False, None)


def test_verify_and_update_keeps_a_hash_with_equal_parameters_from_either_hasher():
    context = PasswordHash((Argon2Hasher(**CHEAP),))
    for stored in (StockArgon2Hasher(**CHEAP).hash(PASSWORD), Argon2Hasher(**CHEAP).hash(PASSWORD)):
        assert context.verify_and_update(PASSWORD, stored) == (True, None)


LARGE_TAG = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$" + "A" * 200_000
SHAPES = [
    "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$Hnm7B2p4pnTo3mQ5qFmnHjR1OZBtVXd1B33joTc/XXg",
    "$argon2i$m=8,t=1,p=1$c29tZXNhbHQ$abc",
    "$argon2d$v=16$m=8,t=1,p=1$c29tZXNhbHQ",
    "$argon2id$v=19$m=8,t=1,p=1",
    "$argon2id$v=19$m=8,t=1,p=1$",
    "$argon2id$v=19$m=8,t=1,p=1$salt$tag$with$dollars",
    "$argon2id$v=19$m=8,t=1,p=1$salt$tag\n",
    "$argon2id$v=19$m=8,t=1,p=1$salt\n$tag",
    "$argon2id$v=19$m=\u0666,t=1,p=1$c29tZXNhbHQ$abc",
    "$argon2id$v=A&$m==,p=$c29tZXNhbHQ$arQWpIVsXmUQDj660XNQBCR3AeZaVN7ChRcM97sGDK4",
    "$argon2x$v=19$m=8,t=1,p=1$c29tZXNhbHQ$abc",
    "$argon2id$v=19$t=1,m=8,p=1$c29tZXNhbHQ$abc",
    " $argon2id$v=19$m=8,t=1,p=1$c29tZXNhbHQ$abc",
    "$2b$12$abcdefghijklmnopqrstuuJ0r6hfWJHeMUlRRE2ETVn8AIkHrPi2",
    "",
    LARGE_TAG,
]


@pytest.mark.parametrize("candidate", SHAPES + [s.encode() for s in SHAPES if s.isascii()]
                         + [b"\xc3\x28", b"$argon2id$v=19$m=8,t=1,p=1$\xff$abc"])
def test_identify_answers_as_pwdlibs_stock_hasher(candidate):
    assert Argon2Hasher.identify(candidate) is StockArgon2Hasher.identify(candidate)


@pytest.mark.parametrize("value", [123, None, [], {}, bytearray(b"x")])
def test_wrong_types_are_pwdlibs_type_errors(value):
    hasher = Argon2Hasher(**CHEAP)
    stored = hasher.hash(PASSWORD)
    with pytest.raises(TypeError, match="^hash must be str or bytes$"):
        Argon2Hasher.identify(value)
    with pytest.raises(TypeError, match="^password must be str or bytes$"):
        hasher.hash(value)
    with pytest.raises(TypeError, match="^password must be str or bytes$"):
        hasher.verify(value, stored)
    with pytest.raises(TypeError, match="^hash must be str or bytes$"):
        hasher.verify(PASSWORD, value)
    with pytest.raises(TypeError, match="^hash must be str or bytes$"):
        hasher.check_needs_rehash(value)


def test_argon2_cffis_type_member_is_read_by_its_name():
    import argon2

    hasher = Argon2Hasher(**CHEAP, type=argon2.Type.D)
    assert hasher.hash(PASSWORD).startswith("$argon2d$")
    assert repr(hasher) == ("Argon2Hasher(time_cost=1, memory_cost=64, parallelism=1, "
                            "hash_len=32, salt_len=16, type='d')")


def test_tighter_limits_refuse_a_stored_hash_over_them():
    stored = Argon2Hasher(**CHEAP).hash(PASSWORD)
    tight = Argon2Hasher(time_cost=1, memory_cost=32, parallelism=1,
                         limits=Limits(max_memory_cost=32))
    assert tight.limits.max_memory_cost == 32
    assert tight.verify(PASSWORD, stored) is False
    assert tight.check_needs_rehash(stored) is True
    assert Argon2Hasher(**CHEAP, limits=Limits(max_memory_cost=64)).verify(PASSWORD, stored)


SALT = "c29tZXNhbHRzYWx0"  # 12 bytes
TAG = "A" * 43  # 32 bytes
HOSTILE = {
    "m over the limit": f"$argon2id$v=19$m=4294967295,t=1,p=1${SALT}${TAG}",
    "t over the limit": f"$argon2id$v=19$m=64,t=4294967295,p=1${SALT}${TAG}",
    "p over the limit": f"$argon2id$v=19$m=134217720,t=1,p=16777215${SALT}${TAG}",
    "work over the limit": f"$argon2id$v=19$m=4194304,t=3,p=1${SALT}${TAG}",
    "digits past 32 bits": f"$argon2id$v=19$m=99999999999999999999,t=1,p=1${SALT}${TAG}",
    "non-ASCII digits": f"$argon2id$v=19$m=\u0666\u0664,t=1,p=1${SALT}${TAG}",
    # Built in the child (an argument list cannot hold 100 MB): "...$" then that many "A"s.
    "a 100 MB tag": (f"$argon2id$v=19$m=64,t=1,p=1${SALT}$", 100_000_000),
    "a 64 KiB tag": (f"$argon2id$v=19$m=64,t=1,p=1${SALT}$", 87_384),
    "a salt of 4 bytes": f"$argon2id$v=19$m=64,t=1,p=1$c2FsdA${TAG}",
    "m below 8 per lane": f"$argon2id$v=19$m=4,t=1,p=1${SALT}${TAG}",
    "version 18": f"$argon2id$v=18$m=64,t=1,p=1${SALT}${TAG}",
    "no tag": f"$argon2id$v=19$m=64,t=1,p=1${SALT}",
    "padded base64": f"$argon2id$v=19$m=64,t=1,p=1${SALT}${TAG}=",
    "a tag with dollars": f"$argon2id$v=19$m=64,t=1,p=1${SALT}${TAG}$x",
}


def test_hostile_stored_hashes_are_false_fast_and_need_a_rehash():
    # In a child with a timeout: a hasher that ran these costs would take hours, not fail.
    result = run_python(f"""
        import json, sys, time
        from pwdlib import PasswordHash
        from argonishche.contrib.pwdlib import Argon2Hasher
        context = PasswordHash((Argon2Hasher(),))
        hasher = context.current_hasher
        answers = {{}}
        for name, stored in {HOSTILE!r}.items():
            if isinstance(stored, tuple):
                stored = stored[0] + "A" * stored[1]
            for form in (stored, stored.encode()):
                started = time.perf_counter()
                answer = (hasher.identify(form), context.verify("pw", form),
                          context.verify_and_update("pw", form), hasher.check_needs_rehash(form))
                answers[name] = [*answer, time.perf_counter() - started]
        print(json.dumps(answers))
        """, timeout=120)
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout)
    assert set(answers) == set(HOSTILE)
    for name, (identified, verified, updated, needs_rehash, seconds) in answers.items():
        assert identified is True, name  # pwdlib's shape: the hasher is asked, and says no
        assert (verified, updated, needs_rehash) == (False, [False, None], True), name
        assert seconds < 2.0, (name, seconds)  # generous: each takes microseconds to ~0.1 s


def test_a_stored_hash_within_the_limits_but_over_the_memory_at_hand_is_false():
    # m=4 GiB is within Limits() (twice RFC 9106's first profile): in a process whose address
    # space is capped at 1 GiB the work memory cannot be had, and a login must be refused with
    # False, not fail with a MemoryError.
    stored = f"$argon2id$v=19$m=4194304,t=1,p=1${SALT}${TAG}"
    result = run_python(f"""
        import resource, time
        from argonishche.contrib.pwdlib import Argon2Hasher
        hasher = Argon2Hasher()
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        started = time.perf_counter()
        print(hasher.verify("pw", {stored!r}), time.perf_counter() - started)
        """, timeout=120)
    assert result.returncode == 0, result.stderr
    answer, seconds = result.stdout.split()
    assert answer == "False"
    assert float(seconds) < 5.0


def test_unreadable_hashes_need_a_rehash_and_never_raise():
    hasher = Argon2Hasher(**CHEAP)
    for stored in ("", "$argon2id$v=19$m=64,t=1,p=1", b"\xff\xfe", "$2b$12$" + "a" * 53):
        assert hasher.check_needs_rehash(stored) is True
        assert hasher.verify(PASSWORD, stored) is False


def test_works_with_argon2_unimportable_and_leaves_import_argon2_alone():
    # sys.modules["argon2"] = None makes every `import argon2` fail, as without argon2-cffi.
    result = run_python("""
        import sys
        sys.modules["argon2"] = None
        from pwdlib import PasswordHash
        from argonishche.contrib.pwdlib import Argon2Hasher
        context = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=64, parallelism=1),))
        stored = context.hash("pw")
        assert context.verify("pw", stored) and not context.verify("no", stored)
        assert context.verify_and_update("pw", stored) == (True, None)
        assert sys.modules["argon2"] is None, "the hasher replaced the blocked argon2"
        try:
            import argon2
        except ImportError:
            print("argon2 still unimportable")
        else:
            raise AssertionError(f"import argon2 gave {argon2!r}")
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "argon2 still unimportable"


def test_import_argon2_elsewhere_still_gets_argon2_cffi():
    result = run_python("""
        import sys
        from pwdlib import PasswordHash
        from argonishche.contrib.pwdlib import Argon2Hasher
        context = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=64, parallelism=1),))
        assert context.verify("pw", context.hash("pw"))
        assert "argon2" not in sys.modules, "the hasher imported argon2"
        import argon2
        from importlib.metadata import distribution
        assert "argonishche" not in argon2.__file__, argon2.__file__
        assert argon2.__version__ == distribution("argon2-cffi").version
        print(argon2.PasswordHasher.__module__)
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "argon2._password_hasher"


def test_the_module_imports_neither_pwdlib_nor_argon2():
    result = run_python("""
        import sys
        import argonishche.contrib.pwdlib
        print(sorted(name for name in sys.modules
                     if name.split(".")[0] in ("pwdlib", "argon2")))
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert argonishche.__version__  # the package itself imported in the child as here
