"""argonishche.contrib.django.Argon2PasswordHasher through Django's own password API.

It must be interchangeable with Django's stock Argon2PasswordHasher (argon2-cffi) in both
directions, and no stored string may make it raise, run costs the string chose, or allocate.
Every Argon2 run is recorded (``runs``), and one at costs above the tests' own fails the test
instead of running, so that a hasher without its limits fails here rather than hanging or
taking gigabytes.

Without Django this module is skipped; with ``ARGONISHCHE_REQUIRE_DJANGO=1`` (``tox -e django``)
a missing Django or argon2-cffi is a failure instead, so that env cannot pass by skipping.
"""

from __future__ import annotations

import dataclasses
import importlib
import os

import pytest
from argonishche import Argon2Params, Limits, _argon2, argon2_hash_encoded
from argonishche.exceptions import InvalidHashError
from support import UINT32_MAX, b64, encoded_with, run_python

REQUIRED = os.environ.get("ARGONISHCHE_REQUIRE_DJANGO", "").strip() not in ("", "0")


def _require(module: str, why: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        error = exc
    if REQUIRED:
        pytest.fail(f"ARGONISHCHE_REQUIRE_DJANGO is set and {module} cannot be imported "
                    f"({error}): {why}", pytrace=False)
    pytest.skip(f"{module} is not installed ({why})", allow_module_level=True)


django = _require("django", "the Django hasher is tested through Django's password API")

import django_settings  # noqa: E402 - tests/api/django_settings.py
from argonishche.contrib.django import Argon2PasswordHasher  # noqa: E402
from django.conf import settings  # noqa: E402 - after the check that Django is there
from django.contrib.auth import hashers  # noqa: E402
from django.core.exceptions import ImproperlyConfigured  # noqa: E402
from django.test import override_settings  # noqa: E402

if not settings.configured:
    settings.configure(**{name: getattr(django_settings, name) for name in dir(django_settings)
                          if name.isupper()})
    django.setup()

SMALL = django_settings.SmallArgon2PasswordHasher
SMALL_STOCK_PATH = "django_settings.SmallStockArgon2PasswordHasher"
CURRENT = SMALL().params()
PASSWORD = "correct hörse battery"


class OlderArgon2PasswordHasher(SMALL):
    """Costs a site used before raising them to SMALL's."""

    time_cost, memory_cost = 1, 40


@pytest.fixture(autouse=True)
def small_hashers():
    """SMALL preferred, whatever settings the process had."""
    with override_settings(PASSWORD_HASHERS=django_settings.PASSWORD_HASHERS):
        yield


@pytest.fixture
def stock():
    """Django's own hasher class at SMALL's costs (it needs argon2-cffi)."""
    _require("argon2", "Django's own Argon2PasswordHasher runs on argon2-cffi")
    return django_settings.SmallStockArgon2PasswordHasher


@pytest.fixture
def runs(monkeypatch):
    """(time_cost, memory_cost, parallelism) of every Argon2 hash argonishche runs; one over the
    tests' own costs fails the test without running."""
    record = []

    def spy(params, *args, _original=_argon2._compute, **kwargs):
        costs = (params.time_cost, params.memory_cost, params.parallelism)
        if params.time_cost > 4 or params.memory_cost > 1024 or params.parallelism > 4:
            pytest.fail(f"an Argon2 run at t, m, p = {costs}: costs from a stored string")
        record.append(costs)
        return _original(params, *args, **kwargs)
    monkeypatch.setattr(_argon2, "_compute", spy)
    return record


def costs(params: Argon2Params) -> tuple[int, int, int]:
    return params.time_cost, params.memory_cost, params.parallelism


def django_hash(phc: str) -> str:
    return Argon2PasswordHasher.algorithm + phc


# ---- interchangeable with Django's own hasher -----------------------------------------------

def test_the_defaults_are_the_installed_djangos(stock):
    stock_default = hashers.Argon2PasswordHasher
    for name in ("algorithm", "time_cost", "memory_cost", "parallelism", "salt_entropy"):
        assert getattr(Argon2PasswordHasher, name) == getattr(stock_default, name), name
    assert Argon2PasswordHasher.hash_len == stock_default().params().hash_len


def test_at_the_stock_default_costs_each_verifies_the_other_and_nothing_needs_an_update(stock):
    # The point of a drop-in: switching hashers rehashes nobody (t=2 x 100 MiB, 4 hashes).
    ours, theirs = Argon2PasswordHasher(), hashers.Argon2PasswordHasher()
    made_by_ours = ours.encode(PASSWORD, ours.salt())
    made_by_theirs = theirs.encode(PASSWORD, theirs.salt())
    assert theirs.verify(PASSWORD, made_by_ours) and ours.verify(PASSWORD, made_by_theirs)
    for hasher in (ours, theirs):
        assert not hasher.must_update(made_by_ours)
        assert not hasher.must_update(made_by_theirs)


@pytest.mark.parametrize("password", [PASSWORD, "", "p" * 4096, "パスワード"])
def test_stock_hashes_verify_through_check_password(stock, runs, password):
    encoded = hashers.make_password(password, hasher=stock())
    assert isinstance(hashers.identify_hasher(encoded), SMALL)
    assert hashers.check_password(password, encoded) is True
    assert hashers.check_password(password + "x", encoded) is False
    assert runs == [costs(CURRENT)] * 2  # ours ran both, at the string's costs


@pytest.mark.parametrize("password", [PASSWORD, "", "p" * 4096, "パスワード"])
def test_our_hashes_verify_with_the_stock_hasher(stock, password):
    encoded = hashers.make_password(password)
    assert encoded.startswith("argon2$argon2id$v=19$m=64,t=2,p=2$")
    with override_settings(PASSWORD_HASHERS=[SMALL_STOCK_PATH]):
        assert isinstance(hashers.identify_hasher(encoded), stock)
        assert hashers.check_password(password, encoded) is True
        assert hashers.check_password(password + "x", encoded) is False


def test_same_password_and_salt_give_the_stock_hashers_string(stock):
    salt = SMALL().salt()
    assert SMALL().encode(PASSWORD, salt) == stock().encode(PASSWORD, salt)


def test_decode_and_safe_summary_have_the_stock_hashers_fields(stock):
    encoded = SMALL().encode(PASSWORD, SMALL().salt())
    ours, theirs = SMALL().decode(encoded), stock().decode(encoded)
    assert ours.keys() == theirs.keys()
    assert {k: v for k, v in ours.items() if k != "params"} == \
        {k: v for k, v in theirs.items() if k != "params"}
    # argon2-cffi's Parameters there, argonishche.argon2_cffi's here: the same fields and values
    # (Type is an enum of each library's own, compared by name.)
    assert {**dataclasses.asdict(ours["params"]), "type": ours["params"].type.name} == {
        **{name: getattr(theirs["params"], name) for name in theirs["params"].__slots__},
        "type": theirs["params"].type.name}
    assert SMALL().safe_summary(encoded) == stock().safe_summary(encoded)


def test_safe_summary_masks_salt_and_hash():
    salt = SMALL().salt()
    encoded = SMALL().encode(PASSWORD, salt)
    tag = encoded.rsplit("$", 1)[1]
    summary = SMALL().safe_summary(encoded)
    assert summary["salt"] == salt[:6] + "*" * (len(salt) - 6)
    assert summary["hash"] == tag[:6] + "*" * (len(tag) - 6)
    shown = " ".join(map(str, summary.values()))
    assert salt not in shown and tag[:7] not in shown and b64(salt.encode()) not in shown
    assert (summary["memory cost"], summary["time cost"], summary["parallelism"]) == (64, 2, 2)


# ---- rehashing and hardening ----------------------------------------------------------------

def test_check_password_updates_a_hash_with_old_costs(runs):
    old = OlderArgon2PasswordHasher().encode(PASSWORD, SMALL().salt())
    runs.clear()
    updated = []
    assert hashers.check_password(PASSWORD, old, setter=updated.append) is True
    assert updated == [PASSWORD]
    assert runs == [(1, 40, 2)]  # the old string's costs; no hardening on success


def test_check_password_leaves_a_current_hash_alone(runs):
    current = hashers.make_password(PASSWORD)
    updated = []
    assert hashers.check_password(PASSWORD, current, setter=updated.append) is True
    assert hashers.check_password("wrong", current, setter=updated.append) is False
    assert updated == []
    assert runs == [costs(CURRENT)] * 3  # made, verified, verified: nothing more


def test_a_wrong_password_on_an_old_hash_costs_a_current_hashs_work(runs):
    old = OlderArgon2PasswordHasher().encode(PASSWORD, SMALL().salt())
    runs.clear()
    updated = []
    assert hashers.check_password("wrong", old, setter=updated.append) is False
    assert updated == []
    # Verifying the old string (t=1 x 40) and then the missing 2 x 64 - 40 = 88 KiB-passes in
    # one run within the current costs: ceil(88 / 64) = 2 passes over 44 KiB.
    assert runs == [(1, 40, 2), (2, 44, 2)]
    assert sum(t * m for t, m, _ in runs) == CURRENT.time_cost * CURRENT.memory_cost


@pytest.mark.parametrize("stored", [dict(time_cost=2, memory_cost=64),
                                    dict(time_cost=3, memory_cost=64),
                                    dict(time_cost=2, memory_cost=512)],
                         ids=["current", "more-passes", "more-memory"])
def test_harden_runtime_adds_nothing_to_a_hash_at_least_as_costly(runs, stored):
    encoded = django_hash(argon2_hash_encoded(PASSWORD, b"saltsaltsaltsalt", parallelism=2,
                                              **stored))
    runs.clear()
    SMALL().harden_runtime("wrong", encoded)
    assert runs == []


def _variant(**changes) -> str:
    kwargs = dict(type="id", version=0x13, hash_len=32, salt=SMALL().salt().encode())
    kwargs.update(changes)
    salt = kwargs.pop("salt")
    return django_hash(argon2_hash_encoded(PASSWORD, salt, **{**django_settings.SMALL_COSTS,
                                                              **kwargs}))


@pytest.mark.parametrize("changes, expected", [
    (dict(), False),
    (dict(time_cost=1), True),
    (dict(time_cost=3), True),
    (dict(memory_cost=32), True),
    (dict(parallelism=1), True),
    (dict(type="i"), True),
    (dict(type="d"), True),
    (dict(version=0x10), True),
    (dict(hash_len=16), True),
    (dict(salt=b"8 chars!"), True),  # 8 characters: under Django's 128 bits of salt entropy
], ids=lambda value: repr(value))
def test_must_update_compares_type_version_costs_and_salt_like_the_stock_hasher(
        stock, changes, expected):
    encoded = _variant(**changes)
    assert SMALL().must_update(encoded) is expected
    assert stock().must_update(encoded) is expected
    assert SMALL().verify(PASSWORD, encoded) is True


# ---- hostile stored strings -----------------------------------------------------------------

def _hostile(phc: str, label: str):
    return pytest.param(django_hash(phc), id=label)


HOSTILE = [
    pytest.param("argon2", id="algorithm-alone"),
    pytest.param("argon2$", id="nothing-after-the-algorithm"),
    pytest.param("argon2$tiger", id="tiger"),
    pytest.param("argon2$argon2id", id="type-alone"),
    pytest.param("argon2$$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + "A" * 43, id="double-$"),
    pytest.param("argon2$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
                 id="bcrypt-in-argon2"),
    # Over the limits, most far over (valid strings otherwise: a tag that would just not match)
    _hostile(encoded_with(m=UINT32_MAX), "m=4294967295"),
    _hostile(encoded_with(m=4 * 1024 * 1024 + 8), "m=4GiB+8KiB"),
    _hostile(encoded_with(t=UINT32_MAX), "t=4294967295"),
    _hostile(encoded_with(t=65), "t=65"),
    _hostile(encoded_with(p=2**24 - 1, m=8 * (2**24 - 1)), "p=2**24-1"),
    _hostile(encoded_with(p=65, m=8 * 65), "p=65"),
    _hostile(encoded_with(t=3, m=4 * 1024 * 1024), "work-t=3-x-4GiB"),
    _hostile(encoded_with(m=UINT32_MAX, t=UINT32_MAX, p=2**24 - 1), "all-at-most"),
    _hostile(encoded_with(salt=bytes(4097)), "salt-4097-bytes"),
    _hostile(encoded_with(tag=bytes(4097)), "tag-4097-bytes"),
    _hostile("$argon2id$v=19$m=32,t=1,p=1$" + "A" * 2_000_000, "2-million-characters"),
    _hostile(encoded_with().replace("m=32", "m=" + "9" * 5000), "m-of-5000-digits"),
    # Malformed
    _hostile(encoded_with(type_name="x"), "argon2x"),
    _hostile(encoded_with(type_name="ID"), "argon2ID"),
    _hostile(encoded_with().replace("v=19", "v=20"), "v=20"),
    _hostile(encoded_with().replace("m=32", "m=032"), "leading-zero"),
    _hostile(encoded_with().replace("m=32", "m=-32"), "negative"),
    _hostile(encoded_with(m=1), "m-under-8p"),
    _hostile(encoded_with(t=0), "t=0"),
    _hostile(encoded_with(p=0), "p=0"),
    _hostile(encoded_with(salt=b"short"), "salt-5-bytes"),
    _hostile(encoded_with(tag=b"abc"), "tag-3-bytes"),
    _hostile(encoded_with() + "=", "padded-tag"),
    _hostile(encoded_with() + "\n", "trailing-newline"),
    _hostile(encoded_with() + "$", "extra-field"),
    _hostile(encoded_with().replace("p=1", "p=1,x=1"), "extra-parameter"),
    _hostile(encoded_with().replace("c29tZXNhbHQ", "c29tZXNhbHQ\u00fc"), "non-ascii"),
    _hostile(encoded_with().replace("c29tZXNhbHQ", "c29tZXNhbHQ\ud800"), "lone-surrogate"),
    _hostile(encoded_with().replace("c29tZXNhbHQ", "c29tZXNhbH\u0661"), "arabic-digit"),
    _hostile(encoded_with().replace("v=19", "v=19\x00"), "nul"),
]
UNREADABLE = "unreadable: malformed, or over this site's limits"
NOT_STRINGS = [None, b"argon2" + encoded_with().encode(), 42, ["argon2"], bytearray(b"argon2$")]


@pytest.mark.parametrize("encoded", HOSTILE)
def test_check_password_refuses_a_hostile_hash_at_a_current_hashs_cost(runs, encoded):
    assert isinstance(hashers.identify_hasher(encoded), SMALL)  # it does reach our hasher
    updated = []
    assert hashers.check_password(PASSWORD, encoded, setter=updated.append) is False
    assert updated == []
    # Nothing at the string's costs: only harden_runtime's one run at the current ones.
    assert runs == [costs(CURRENT)]


@pytest.mark.parametrize("encoded", HOSTILE + NOT_STRINGS)
def test_every_method_answers_a_hostile_hash(runs, encoded):
    hasher = SMALL()
    assert hasher.verify(PASSWORD, encoded) is False
    assert hasher.must_update(encoded) is True
    # One summary for every string that cannot be read, showing nothing of it.
    assert hasher.safe_summary(encoded) == {"algorithm": "argon2", "hash": UNREADABLE}
    with pytest.raises(InvalidHashError) as caught:
        hasher.decode(encoded)
    assert isinstance(caught.value, ValueError)  # what Django's callers expect of decode
    assert runs == []
    hasher.harden_runtime(PASSWORD, encoded)
    assert runs == [costs(CURRENT)]


def test_a_real_hash_over_a_sites_own_limits_is_refused_unrun(runs):
    class Tight(SMALL):
        limits = Limits(max_memory_cost=64, max_time_cost=2, max_parallelism=2)

    over = _variant(memory_cost=128)
    assert SMALL().verify(PASSWORD, over) is True  # a real hash, right password
    runs.clear()
    assert Tight().verify(PASSWORD, over) is False
    assert Tight().must_update(over) is True
    assert runs == []


@pytest.mark.parametrize("costs_", [dict(memory_cost=8 * 2**20), dict(memory_cost=4),
                                    dict(time_cost=0), dict(parallelism=100)],
                         ids=lambda value: repr(value))
def test_a_hasher_that_could_not_verify_its_own_hashes_is_a_configuration_error(costs_):
    misconfigured = type("Misconfigured", (SMALL,), costs_)
    with pytest.raises(ImproperlyConfigured, match="Misconfigured"):
        misconfigured()


def test_the_contrib_package_imports_without_django():
    out = run_python("""
        import sys
        sys.modules["django"] = None  # as if it were not installed
        import argonishche.contrib
        try:
            import argonishche.contrib.django
        except ImportError:
            print("contrib imports; contrib.django needs Django")
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "contrib imports; contrib.django needs Django"


# ---- a busy server -------------------------------------------------------------------------


def test_a_busy_server_never_reports_a_right_password_as_wrong(budget):
    """Every byte of the work-memory budget in use and no time to wait: check_password raises
    MemoryBudgetTimeout (the password was not checked), never False."""
    from argonishche import MemoryBudgetTimeout, _work_memory

    encoded = hashers.make_password(PASSWORD)
    budget(16, wait_seconds=0)
    held = _work_memory.reserve(16 * 2**20)
    try:
        with pytest.raises(MemoryBudgetTimeout):
            hashers.check_password(PASSWORD, encoded)
        SMALL().harden_runtime(PASSWORD, encoded)  # a wrong password's padding is skipped
    finally:
        held.close()
    assert hashers.check_password(PASSWORD, encoded)


def test_the_server_busy_middleware_answers_503_with_retry_after(budget):
    from argonishche import _work_memory
    from django.test import Client

    encoded = hashers.make_password(PASSWORD)
    form = {"password": PASSWORD, "encoded": encoded}
    with override_settings(ROOT_URLCONF="django_urls", ALLOWED_HOSTS=["testserver"],
                           MIDDLEWARE=["argonishche.contrib.django.ServerBusyMiddleware"]):
        client = Client(raise_request_exception=False)
        budget(16, wait_seconds=0)
        held = _work_memory.reserve(16 * 2**20)
        try:
            busy = client.post("/login", form)
        finally:
            held.close()
        assert busy.status_code == 503 and busy["Retry-After"] == "5"
        assert b"too busy" in busy.content
        welcome = client.post("/login", form)
        wrong = client.post("/login", {**form, "password": "wrong"})
    assert (welcome.status_code, welcome.content) == (200, b"welcome")
    assert wrong.status_code == 401


def test_a_stored_hash_over_the_whole_budget_is_refused_like_memory_it_cannot_get(budget):
    encoded = hashers.make_password(PASSWORD)
    budget(1)
    tampered = encoded.replace(f"m={CURRENT.memory_cost},", "m=4096,")
    assert tampered != encoded
    assert hashers.check_password(PASSWORD, tampered) is False
