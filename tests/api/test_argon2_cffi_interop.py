"""PHC strings shared with argon2-cffi (phc-winner-argon2): its hashes verify here, ours verify
there byte for byte, and version 1.0 strings without ``$v=`` verify on both sides.  The
published strings cost 64 MiB each."""

from __future__ import annotations

import os

import pytest
from argonishche import PasswordHasher, VerifyMismatchError, argon2_hash_encoded, argon2_verify
from support import PASSWORD, RFC_I_V16_WITHOUT_V, RFC_I_V19, SALT, SMALL


@pytest.fixture(scope="module")
def argon2_cffi():
    return pytest.importorskip("argon2")


@pytest.mark.parametrize("type_name", ["ID", "I", "D"])
def test_argon2_cffi_hashes_verify_here(argon2_cffi, type_name):
    theirs = argon2_cffi.PasswordHasher(time_cost=2, memory_cost=64, parallelism=2,
                                        hash_len=24, salt_len=12,
                                        type=getattr(argon2_cffi.Type, type_name))
    for password in ("correct horse", "pässwörd", ""):
        encoded = theirs.hash(password)
        assert encoded.startswith(f"$argon2{type_name.lower()}$v=19$m=64,t=2,p=2$")
        assert argon2_verify(encoded, password) is True
        assert argon2_verify(encoded, password.encode("utf-8")) is True
        assert PasswordHasher().verify(encoded, password) is True
        with pytest.raises(VerifyMismatchError):
            argon2_verify(encoded, password + "x")
        with pytest.raises(VerifyMismatchError):
            PasswordHasher().verify(encoded, password + "x")


@pytest.mark.parametrize("version", [0x10, 0x13])
@pytest.mark.parametrize("type_name", ["id", "i", "d"])
def test_our_hashes_verify_with_argon2_cffi(argon2_cffi, type_name, version):
    low_level = argon2_cffi.low_level
    salt = os.urandom(16)
    kwargs = dict(type=type_name, version=version, time_cost=2, memory_cost=48, parallelism=3,
                  hash_len=40)
    encoded = argon2_hash_encoded("pässwörd", salt, **kwargs)
    # Byte for byte what the reference encoder writes for the same inputs.
    assert encoded.encode("ascii") == low_level.hash_secret(
        "pässwörd".encode(), salt, 2, 48, 3, 40, getattr(low_level.Type, type_name.upper()),
        version=version)
    assert argon2_cffi.PasswordHasher().verify(encoded, "pässwörd") is True
    assert low_level.verify_secret(encoded.encode("ascii"), "pässwörd".encode(),
                                   getattr(low_level.Type, type_name.upper())) is True
    with pytest.raises(argon2_cffi.exceptions.VerifyMismatchError):
        argon2_cffi.PasswordHasher().verify(encoded, "passwörd")


def test_password_hasher_output_verifies_with_argon2_cffi(argon2_cffi):
    ours = PasswordHasher(time_cost=1, memory_cost=64, parallelism=2)
    encoded = ours.hash("hunter2")
    assert argon2_cffi.PasswordHasher().verify(encoded, "hunter2") is True
    # Same parameters as argon2-cffi's hasher with the same costs: no rehash either way.
    theirs = argon2_cffi.PasswordHasher(time_cost=1, memory_cost=64, parallelism=2)
    assert theirs.check_needs_rehash(encoded) is False
    assert ours.check_needs_rehash(theirs.hash("hunter2")) is False


def test_version_16_strings_without_v_verify():
    assert argon2_verify(RFC_I_V16_WITHOUT_V, b"password") is True
    assert argon2_verify(RFC_I_V19, "password") is True
    # Cheap ones of our own, with their "$v=16" removed.
    for type_name in ("d", "i", "id"):
        encoded = argon2_hash_encoded(PASSWORD, SALT, type=type_name, version=0x10, **SMALL)
        assert "$v=16$" in encoded
        without_v = encoded.replace("$v=16", "")
        assert argon2_verify(without_v, PASSWORD) is True
        assert PasswordHasher().verify(without_v, PASSWORD) is True
        with pytest.raises(VerifyMismatchError):
            argon2_verify(without_v, b"Password")
        # Without "v=" the version is 0x10: the same tag under v=19 must not verify.
        with pytest.raises(VerifyMismatchError):
            argon2_verify(encoded.replace("$v=16", "$v=19"), PASSWORD)


def test_version_16_string_without_v_verifies_with_argon2_cffi_too(argon2_cffi):
    assert argon2_cffi.PasswordHasher().verify(RFC_I_V16_WITHOUT_V, "password") is True
