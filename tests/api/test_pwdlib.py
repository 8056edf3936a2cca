"""argonishche.contrib.pwdlib.Argon2Hasher through pwdlib's own PasswordHash, against pwdlib's
stock Argon2Hasher (argon2-cffi): the same strings both ways, the same answers, and stored hashes
that cannot be run refused fast, without the memory they ask for: pwdlib 0.4's
HashVerificationError, or False with pwdlib 0.3 (emulated here by taking pwdlib 0.4's two
exceptions out of pwdlib.exceptions, which is how the hasher tells the releases apart).

pwdlib's own argon2 tests run against the hasher in tox -e pwdlib-suite (tools/pwdlib_suite).
"""

from __future__ import annotations

import inspect
import json

import pytest

pwdlib = pytest.importorskip("pwdlib", reason="pwdlib is in the test extra")
import argonishche  # noqa: E402
from argonishche import Limits, MemoryBudgetError  # noqa: E402
from argonishche._argon2 import params_of  # noqa: E402
from argonishche.contrib.pwdlib import Argon2Hasher  # noqa: E402
from argonishche.exceptions import InvalidHashError, ParameterError  # noqa: E402
from pwdlib import PasswordHash  # noqa: E402
from pwdlib.hashers import HasherProtocol  # noqa: E402
from pwdlib.hashers.argon2 import Argon2Hasher as StockArgon2Hasher  # noqa: E402
from support import run_python  # noqa: E402

# Costs small enough that a test makes dozens of hashes in well under a second.
CHEAP = {"time_cost": 1, "memory_cost": 64, "parallelism": 1}
PASSWORD = "correct horse battery staple"
# pwdlib 0.4's own test of a malformed hash (tests/test_hash.py): a 5-byte salt.
MALFORMED = "$argon2id$v=19$m=65536,t=3,p=4$invalid$invalid"
PWDLIB_04_ERRORS = ("HashVerificationError", "HashGenerationError")
requires_pwdlib_04 = pytest.mark.skipif(
    not hasattr(pwdlib.exceptions, "HashVerificationError"),
    reason="pwdlib 0.4's HashVerificationError: the installed pwdlib is older")


@pytest.fixture(params=["0.3", "0.4"])
def pwdlib_release(request, monkeypatch):
    """The pwdlib release whose errors the hasher is to follow: the installed one for 0.4,
    and for 0.3 the installed one without 0.4's two exceptions (as pwdlib 0.3.1's module is)."""
    if request.param == "0.3":
        for name in PWDLIB_04_ERRORS:
            monkeypatch.delattr(pwdlib.exceptions, name, raising=False)
    elif not hasattr(pwdlib.exceptions, "HashVerificationError"):
        pytest.skip("pwdlib 0.4's HashVerificationError: the installed pwdlib is older")
    return request.param


def assert_refused(release, verify, *arguments, cause=InvalidHashError):
    """*verify* (a hasher's or PasswordHash's verify or verify_and_update) refuses a stored hash
    it cannot run: pwdlib 0.4's HashVerificationError from *cause*, pwdlib 0.3's False."""
    if release == "0.3":
        answer = verify(*arguments)
        assert answer in (False, (False, None)), answer
    else:
        with pytest.raises(pwdlib.exceptions.HashVerificationError) as raised:
            verify(*arguments)
        assert isinstance(raised.value.__cause__, cause), repr(raised.value.__cause__)


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


def test_tighter_limits_refuse_a_stored_hash_over_them(pwdlib_release):
    stored = Argon2Hasher(**CHEAP).hash(PASSWORD)
    tight = Argon2Hasher(time_cost=1, memory_cost=32, parallelism=1,
                         limits=Limits(max_memory_cost=32))
    assert tight.limits.max_memory_cost == 32
    assert_refused(pwdlib_release, tight.verify, PASSWORD, stored)
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


# In a child: pwdlib 0.3 emulated as the pwdlib_release fixture does; an answer, or the error
# raised and its cause.
CHILD_PRELUDE = """
    import pwdlib.exceptions
    if {release!r} == "0.3":
        for name in {names!r}:
            vars(pwdlib.exceptions).pop(name, None)

    def outcome(call, *arguments):
        try:
            return call(*arguments)
        except Exception as error:
            return [type(error).__name__, type(error.__cause__).__name__]
    """


def refusal(release, cause):
    return False if release == "0.3" else ["HashVerificationError", cause]


def test_hostile_stored_hashes_are_refused_fast_and_need_a_rehash(pwdlib_release):
    # In a child with a timeout: a hasher that ran these costs would take hours, not fail.
    result = run_python(CHILD_PRELUDE.format(release=pwdlib_release, names=PWDLIB_04_ERRORS) + f"""
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
            answer = (hasher.identify(form), outcome(context.verify, "pw", form),
                      outcome(context.verify_and_update, "pw", form),
                      hasher.check_needs_rehash(form))
            answers[name] = [*answer, time.perf_counter() - started]
    print(json.dumps(answers))
    """, timeout=120)
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout)
    assert set(answers) == set(HOSTILE)
    for name, (identified, verified, updated, needs_rehash, seconds) in answers.items():
        assert identified is True, name  # pwdlib's shape: the hasher is asked, and refuses
        if pwdlib_release == "0.3":
            assert (verified, updated) == (False, [False, None]), name
        else:  # unreadable, or over the limits (a LimitExceededError, an InvalidHashError)
            assert verified == updated, name
            assert verified in (refusal("0.4", "InvalidHashError"),
                                refusal("0.4", "LimitExceededError")), name
        assert needs_rehash is True, name
        assert seconds < 2.0, (name, seconds)  # generous: each is refused far sooner


def test_a_stored_hash_within_the_limits_but_over_the_memory_at_hand_is_refused(pwdlib_release):
    # m=4 GiB is within Limits() (twice RFC 9106's first profile): in a process whose address
    # space is capped at 1 GiB the work memory cannot be had, and a login must be refused
    # (False, or pwdlib 0.4's HashVerificationError), not fail with a MemoryError.
    stored = f"$argon2id$v=19$m=4194304,t=1,p=1${SALT}${TAG}"
    result = run_python(CHILD_PRELUDE.format(release=pwdlib_release, names=PWDLIB_04_ERRORS) + f"""
    import json, resource, time
    from argonishche.contrib.pwdlib import Argon2Hasher
    hasher = Argon2Hasher()
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    started = time.perf_counter()
    print(json.dumps([outcome(hasher.verify, "pw", {stored!r}), time.perf_counter() - started]))
    """, timeout=120)
    assert result.returncode == 0, result.stderr
    answer, seconds = json.loads(result.stdout)
    assert answer == refusal(pwdlib_release, "MemoryBudgetError")
    assert seconds < 5.0


def test_unreadable_hashes_need_a_rehash_and_are_refused(pwdlib_release):
    hasher = Argon2Hasher(**CHEAP)
    for stored in ("", "$argon2id$v=19$m=64,t=1,p=1", b"\xff\xfe", "$2b$12$" + "a" * 53,
                   MALFORMED):
        assert hasher.check_needs_rehash(stored) is True
        assert_refused(pwdlib_release, hasher.verify, PASSWORD, stored)


@requires_pwdlib_04
@pytest.mark.parametrize("method", ["verify", "verify_and_update"])
def test_pwdlib_04_a_malformed_hash_is_hash_verification_error_never_false(method):
    # pwdlib 0.4's users expect a stored hash that cannot be checked to raise, not to read as a
    # wrong password; its own test's hash, and one over the limits (which its hasher would run).
    context = PasswordHash((Argon2Hasher(**CHEAP),))
    over_the_limits = HOSTILE["t over the limit"]
    for stored, cause in ((MALFORMED, InvalidHashError), (over_the_limits, InvalidHashError)):
        for form in (stored, stored.encode()):
            assert_refused("0.4", getattr(context, method), PASSWORD, form, cause=cause)
    # A wrong password is still False, never an error.
    stored = context.hash(PASSWORD)
    assert getattr(context, method)("wrong", stored) in (False, (False, None))


@requires_pwdlib_04
def test_pwdlib_04_a_stored_hash_over_the_whole_memory_budget_is_hash_verification_error(
        monkeypatch):
    # MemoryBudgetError: no wait brings that memory, the hash can never be checked here.
    def over_the_budget(*arguments, **keywords):
        raise MemoryBudgetError("needs more than the whole budget")

    hasher = Argon2Hasher(**CHEAP)
    stored = hasher.hash(PASSWORD)
    monkeypatch.setattr(hasher._hasher, "verify", over_the_budget)
    assert_refused("0.4", hasher.verify, PASSWORD, stored, cause=MemoryBudgetError)


@requires_pwdlib_04
@pytest.mark.parametrize("salt", [b"x", b"1234567"], ids=["1 byte", "7 bytes"])
def test_pwdlib_04_a_salt_too_short_is_hash_generation_error(salt):
    hasher = Argon2Hasher(**CHEAP)
    for hash_ in (hasher.hash, PasswordHash((hasher,)).hash):
        with pytest.raises(pwdlib.exceptions.HashGenerationError) as raised:
            hash_(PASSWORD, salt=salt)
        assert isinstance(raised.value.__cause__, ParameterError)
        assert "salt must be 8.." in str(raised.value.__cause__)


def test_a_salt_of_the_wrong_type_is_a_type_error_with_either_release(pwdlib_release):
    # As from pwdlib's own hasher with either release: a programming error, not a failed hash.
    with pytest.raises(TypeError, match="salt must be bytes-like"):
        Argon2Hasher(**CHEAP).hash(PASSWORD, salt="a str salt")


def test_pwdlib_03_a_salt_too_short_is_argonishches_parameter_error(monkeypatch):
    for name in PWDLIB_04_ERRORS:
        monkeypatch.delattr(pwdlib.exceptions, name, raising=False)
    with pytest.raises(ParameterError, match="salt must be 8.."):
        Argon2Hasher(**CHEAP).hash(PASSWORD, salt=b"x")


def test_without_pwdlib_a_malformed_hash_is_false_and_a_short_salt_parameter_error():
    # The hasher used on its own where pwdlib cannot be imported: pwdlib 0.3's answers, and
    # looking for pwdlib's exceptions does not fail.
    result = run_python(f"""
        import sys
        sys.modules["pwdlib"] = None
        from argonishche import ParameterError
        from argonishche.contrib.pwdlib import Argon2Hasher
        hasher = Argon2Hasher(time_cost=1, memory_cost=64, parallelism=1)
        assert hasher.verify("pw", {MALFORMED!r}) is False
        try:
            hasher.hash("pw", salt=b"x")
        except ParameterError:
            print("ParameterError")
        """, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ParameterError"


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
