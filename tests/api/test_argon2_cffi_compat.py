"""argonishche.argon2_cffi: argon2-cffi's API, and the behaviour its users' code depends on.

argon2-cffi's own tests run against it in ``tox -e argon2-cffi-suite``; these are the cases its
tests do not cover (its exception semantics as login code uses them, hostile hashes) and those
where argonishche is deliberately different (docs/migration/argon2-cffi.md).
"""

from __future__ import annotations

import dataclasses

import argonishche
import argonishche.argon2_cffi as argon2
import pytest
from argonishche.argon2_cffi import Parameters, PasswordHasher, Type, extract_parameters, profiles
from argonishche.argon2_cffi.exceptions import (
    Argon2Error,
    HashingError,
    InvalidHash,
    InvalidHashError,
    UnsupportedParametersError,
    VerificationError,
    VerifyMismatchError,
)
from argonishche.argon2_cffi.low_level import hash_secret, hash_secret_raw, verify_secret
from support import encoded_with

CHEAP = dict(time_cost=1, memory_cost=8, parallelism=1)


def login(hasher: PasswordHasher, stored: str, password: str) -> bool:
    """What Django's Argon2PasswordHasher.verify and much application code do."""
    try:
        return hasher.verify(stored, password)
    except VerificationError:
        return False


def test_it_is_argonishches_own_hasher_and_exceptions():
    # A subclass, only to answer memory errors as argon2-cffi does
    # (tests/memory/test_memory_errors.py)
    assert issubclass(argon2.PasswordHasher, argonishche.PasswordHasher)
    assert type(argon2.PasswordHasher.from_parameters(profiles.CHEAPEST)) is argon2.PasswordHasher
    assert argon2.Type is argonishche.Type
    assert InvalidHash is InvalidHashError is argonishche.InvalidHashError
    assert issubclass(VerifyMismatchError, VerificationError)
    assert issubclass(UnsupportedParametersError, ValueError)
    for name in argon2.__all__:
        assert getattr(argon2, name) is not None, name


def test_argon2_error_is_the_base_of_argon2_cffis_errors():
    # ``except argon2.exceptions.Argon2Error`` catches what it catches in argon2-cffi.
    for error in (VerificationError, VerifyMismatchError, HashingError):
        assert issubclass(error, Argon2Error)
    with pytest.raises(Argon2Error):
        PasswordHasher(**CHEAP).verify(PasswordHasher(**CHEAP).hash("right"), "wrong")


class _SubclassedHasher(PasswordHasher):
    pass


def test_from_parameters_makes_the_class_it_is_called_on():
    assert type(_SubclassedHasher.from_parameters(profiles.CHEAPEST)) is _SubclassedHasher
    assert type(argonishche.PasswordHasher.from_parameters(profiles.CHEAPEST)) is \
        argonishche.PasswordHasher


@pytest.mark.parametrize("stored", [
    "$argon2id$v=19$m=8,t=1,p=1$c29tZXNhbHQ",                       # no tag
    "$argon2id$v=19$m=8,t=1,p=1$c29t!!!hbHQ$AAAAAAAAAAA",             # broken base64
    "$argon2id$v=20$m=8,t=1,p=1$c29tZXNhbHQ$AAAAAAAAAAA",             # unknown version
    "$argon2id$v=19$m=1,t=1,p=1$c29tZXNhbHQ$AAAAAAAAAAA",             # m under 8p
    encoded_with(m=4294967295, t=1, p=1),                             # over the memory limit
    encoded_with(m=4 * 2**20, t=64, p=64),                            # over the work limit
    "$argon2id$v=19$m=8,t=1,p=1$" + "A" * 2**20 + "$AAAAAAAAAAA",     # a 1 MiB salt field
    "$argon2id",                                                      # a stub
    "tiger",                                                          # not Argon2 at all
])
def test_login_code_refuses_a_hostile_stored_hash_instead_of_failing(stored):
    # Before: InvalidHashError was no VerificationError, so this raised out of login().
    assert login(PasswordHasher(**CHEAP), stored, "password") is False


def test_login_code_still_tells_right_from_wrong():
    ph = PasswordHasher(**CHEAP)
    stored = ph.hash("password")
    assert login(ph, stored, "password") is True
    assert login(ph, stored, "passwort") is False


@pytest.mark.parametrize("stored", [
    "$argon2id$v=20$m=8,t=1,p=1$c29tZXNhbHQ$AAAAAAAAAAA",
    "$argon2id$v=19$m=1,t=1,p=1$c29tZXNhbHQ$AAAAAAAAAAA",
    "$argon2id$v=19$m=8,t=1,p=1$c29t!!!hbHQ$AAAAAAAAAAA",
    encoded_with(m=4294967295, t=1, p=1),
    encoded_with(m=4 * 2**20, t=64, p=64),
    "$argon2id$v=19$m=8,t=1,p=1$" + "A" * 2**20 + "$AAAAAAAAAAA",
])
def test_check_needs_rehash_answers_for_a_hash_it_could_not_verify(stored):
    assert PasswordHasher(**CHEAP).check_needs_rehash(stored) is True
    assert PasswordHasher(**CHEAP).check_needs_rehash(stored.encode("ascii")) is True


@pytest.mark.parametrize("stored", ["", "tiger", "$argon2id", "$argon2x$v=19$m=8,t=1,p=1$a$b",
                                    "$argon2id$v=19$m=8,t=1$c29tZXNhbHQ$AAAA",
                                    "$argon2id$v=19$m=8,t=1,p=one$c29tZXNhbHQ$AAAA",
                                    b"$argon2id$v=19$m=8,t=1,p=1$\xff$AAAA"])
def test_check_needs_rehash_raises_only_for_what_is_not_a_hash(stored):
    with pytest.raises(InvalidHashError):
        PasswordHasher(**CHEAP).check_needs_rehash(stored)


def test_check_needs_rehash_compares_every_parameter():
    ph = PasswordHasher(**CHEAP)
    assert ph.check_needs_rehash(ph.hash("pw")) is False
    for other in (dict(time_cost=2), dict(memory_cost=16), dict(parallelism=2, memory_cost=16),
                  dict(hash_len=16), dict(salt_len=8), dict(type=Type.I)):
        assert ph.check_needs_rehash(PasswordHasher(**{**CHEAP, **other}).hash("pw")) is True
    v16 = argonishche.argon2_hash_encoded(b"pw", b"somesalt" * 2, version=0x10, **CHEAP)
    assert ph.check_needs_rehash(v16) is True


def test_arguments_are_argon2_cffis_in_its_order():
    ph = PasswordHasher(1, 8, 1, 16, 12, "latin1", Type.I)
    assert (ph.time_cost, ph.memory_cost, ph.parallelism, ph.hash_len, ph.salt_len,
            ph.encoding, ph.type) == (1, 8, 1, 16, 12, "latin1", Type.I)
    assert extract_parameters(ph.hash("x")) == ph._parameters == Parameters(
        type=Type.I, version=19, salt_len=12, hash_len=16, time_cost=1, memory_cost=8,
        parallelism=1)


def test_the_encoding_is_used_for_str_passwords_everywhere():
    ph = PasswordHasher(**CHEAP, encoding="latin1")
    for stored in (ph.hash("pässword"), *ph.hash_many(["pässword"], workers=1)):
        assert ph.verify(stored, "pässword".encode("latin1")) is True
        with pytest.raises(VerifyMismatchError):
            ph.verify(stored, "pässword".encode("utf-8"))


def test_an_unknown_encoding_is_refused_when_the_hasher_is_built():
    with pytest.raises(argonishche.ParameterError, match="not a known codec"):
        PasswordHasher(encoding="no-such-codec")
    with pytest.raises(TypeError):
        PasswordHasher(encoding=b"utf-8")


def test_from_parameters_takes_profiles_and_extracted_parameters():
    assert PasswordHasher.from_parameters(profiles.get_default_parameters())._parameters == \
        PasswordHasher()._parameters
    ph = PasswordHasher.from_parameters(profiles.CHEAPEST)
    stored = ph.hash("pw")
    again = PasswordHasher.from_parameters(extract_parameters(stored))
    assert again.check_needs_rehash(stored) is False
    with pytest.raises(TypeError):
        PasswordHasher.from_parameters(dict(time_cost=1))


def test_profiles_cannot_be_changed_by_accident():
    with pytest.raises(dataclasses.FrozenInstanceError):
        profiles.CHEAPEST.memory_cost = 1  # type: ignore[misc]
    assert dataclasses.replace(profiles.CHEAPEST, memory_cost=16).memory_cost == 16


def test_a_hash_without_a_version_field_is_version_16():
    v16 = argonishche.argon2_hash_encoded(b"pw", b"somesalt", version=0x10, type="i", **CHEAP)
    without_field = v16.replace("$v=16", "")
    assert extract_parameters(without_field).version == 16
    assert PasswordHasher(**CHEAP).verify(without_field, b"pw") is True


def test_own_costs_over_the_limits_are_unsupported_parameters():
    with pytest.raises(UnsupportedParametersError, match="could not verify its own hashes"):
        PasswordHasher(memory_cost=8, time_cost=1, parallelism=1,
                       limits=argonishche.Limits(max_memory_cost=4))


def test_low_level_reports_refused_parameters_as_hashing_errors():
    for function in (hash_secret, hash_secret_raw):
        with pytest.raises(HashingError, match="memory_cost"):
            function(b"pw", b"somesalt", 1, 1, 1, 16, Type.ID)
        with pytest.raises(TypeError):
            function("a str", b"somesalt", 1, 8, 1, 16, Type.ID)


def test_low_level_verify_refuses_another_type_as_a_verification_error():
    stored = hash_secret(b"pw", b"somesalt", 1, 8, 1, 16, Type.I)
    assert verify_secret(stored, b"pw", Type.I) is True
    with pytest.raises(VerificationError) as info:
        verify_secret(stored, b"pw", Type.D)
    assert not isinstance(info.value, VerifyMismatchError)
    with pytest.raises(VerifyMismatchError):
        verify_secret(stored, b"pW", Type.I)
    assert hash_secret_raw(b"pw", b"somesalt", 1, 8, 1, 16, Type.I) == \
        argonishche.argon2_hash(b"pw", b"somesalt", type="i", hash_len=16, **CHEAP)
