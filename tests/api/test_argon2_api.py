"""The Argon2 functions' contract: what the docstrings of ``argon2_hash``,
``argon2_hash_encoded`` and ``argon2_verify`` promise, and which strings verify rejects as
invalid.  Costs are kept tiny (m <= 256 KiB)."""

from __future__ import annotations

import array
import base64
import os
import sys

import pytest
from argonishche import (
    ArgonishcheError,
    InvalidHashError,
    ParameterError,
    PasswordHasher,
    Type,
    VerificationError,
    VerifyMismatchError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
)
from support import PASSWORD, SALT, SMALL, TAG_B64, VALID, b64

# ---- argon2_hash ----------------------------------------------------------------------------


def test_argon2_hash_returns_raw_tag_of_hash_len():
    tag = argon2_hash(PASSWORD, SALT, **SMALL)
    assert isinstance(tag, bytes)
    assert len(tag) == 32  # the default hash_len
    assert base64.b64decode(VALID.rsplit("$", 1)[1] + "=") == tag
    assert len(argon2_hash(PASSWORD, SALT, hash_len=4, **SMALL)) == 4
    assert len(argon2_hash(PASSWORD, SALT, hash_len=1000, **SMALL)) == 1000


def test_argon2_hash_defaults_are_documented_ones(monkeypatch):
    # Defaults: Argon2id, v=0x13, t=3, m=65536, p=4, 32 bytes, one thread per lane up to the CPU
    # count.  The C driver is replaced by a recorder, so no 64 MiB hash is computed.
    calls = []

    def recorder(argon2_table, blake2b_table, **request):
        calls.append(request)
        return bytes(request["hash_len"])

    monkeypatch.setattr(sys.modules["argonishche._argon2"]._hash_call, "argon2", recorder)
    assert argon2_hash(PASSWORD, SALT) == bytes(32)
    assert argon2_hash_encoded(PASSWORD, SALT).startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    for request in calls:
        assert {k: request[k] for k in ("type", "version", "time_cost", "memory_cost",
                                        "parallelism", "hash_len", "threads")} == dict(
            type="id", version=0x13, time_cost=3, memory_cost=65536, parallelism=4,
            hash_len=32, threads=min(4, os.cpu_count() or 1))
        assert bytes(request["password"]) == PASSWORD and bytes(request["salt"]) == SALT
        assert bytes(request["secret"]) == b"" and bytes(request["associated_data"]) == b""
    assert len(calls) == 2


def test_argon2_hash_every_input_matters():
    base = argon2_hash(PASSWORD, SALT, **SMALL)
    variants = [
        argon2_hash(b"passwore", SALT, **SMALL),
        argon2_hash(PASSWORD, b"somesalu", **SMALL),
        argon2_hash(PASSWORD, SALT, secret=b"k", **SMALL),
        argon2_hash(PASSWORD, SALT, associated_data=b"a", **SMALL),
        argon2_hash(PASSWORD, SALT, type="i", **SMALL),
        argon2_hash(PASSWORD, SALT, type="d", **SMALL),
        argon2_hash(PASSWORD, SALT, version=0x10, **SMALL),
        argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=32, parallelism=1),
        # "any value, no preset sizes": m=33 is rounded to 32 blocks but still enters H0.
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=33, parallelism=1),
        argon2_hash(PASSWORD, SALT, time_cost=1, memory_cost=32, parallelism=2),
        argon2_hash(PASSWORD, SALT, hash_len=33, **SMALL)[:32],
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_argon2_hash_secret_and_associated_data_are_not_interchangeable():
    a = argon2_hash(PASSWORD, SALT, secret=b"xyz", **SMALL)
    b = argon2_hash(PASSWORD, SALT, associated_data=b"xyz", **SMALL)
    assert a != b


def test_str_password_is_utf8():
    text = "pässwörd ☃ 🔑"
    encoded = text.encode("utf-8")
    assert argon2_hash(text, SALT, **SMALL) == argon2_hash(encoded, SALT, **SMALL)
    assert argon2_hash(text, SALT, **SMALL) != argon2_hash(text.encode("latin-1", "replace"),
                                                           SALT, **SMALL)
    assert argon2_hash_encoded(text, SALT, **SMALL) == argon2_hash_encoded(encoded, SALT,
                                                                           **SMALL)
    assert argon2_verify(argon2_hash_encoded(encoded, SALT, **SMALL), text) is True
    assert argon2_verify(argon2_hash_encoded(text, SALT, **SMALL), encoded) is True


@pytest.mark.parametrize("spelling", ["id", "argon2id", "ID", "Argon2id", Type.ID, 2])
def test_type_spellings_for_id(spelling):
    assert argon2_hash(PASSWORD, SALT, type=spelling, **SMALL) == argon2_hash(
        PASSWORD, SALT, type="id", **SMALL)
    assert argon2_hash_encoded(PASSWORD, SALT, type=spelling, **SMALL) == VALID


@pytest.mark.parametrize("label, member, code", [("d", Type.D, 0), ("i", Type.I, 1),
                                                  ("id", Type.ID, 2)])
def test_type_spellings_for_each_variant(label, member, code):
    expected = argon2_hash(PASSWORD, SALT, type=label, **SMALL)
    for spelling in (f"argon2{label}", member, code, label.upper()):
        assert argon2_hash(PASSWORD, SALT, type=spelling, **SMALL) == expected, spelling
    assert member.label == label
    assert int(member) == code
    assert argon2_hash_encoded(PASSWORD, SALT, type=member, **SMALL).startswith(
        f"$argon2{label}$v=19$")


def test_type_codes_match_argon2_cffi():
    argon2 = pytest.importorskip("argon2")
    for name in ("D", "I", "ID"):
        assert getattr(Type, name).value == getattr(argon2.Type, name).value


def test_bytes_like_inputs():
    expected = argon2_hash(PASSWORD, SALT, secret=b"secretkey", associated_data=b"ad", **SMALL)
    inputs = [
        (bytearray(PASSWORD), bytearray(SALT), bytearray(b"secretkey"), bytearray(b"ad")),
        (memoryview(PASSWORD), memoryview(SALT), memoryview(b"secretkey"), memoryview(b"ad")),
        # slices of bigger buffers, and a non-byte item format
        (memoryview(b"xxpasswordxx")[2:-2], memoryview(bytearray(b"__somesalt"))[2:],
         memoryview(b"secretkey!")[:-1], array.array("B", b"ad")),
        (PASSWORD, array.array("b", SALT), b"secretkey", b"ad"),
    ]
    for password, salt, secret, ad in inputs:
        assert argon2_hash(password, salt, secret=secret, associated_data=ad,
                           **SMALL) == expected, type(password)
        assert argon2_verify(argon2_hash_encoded(password, salt, secret=secret,
                                                 associated_data=ad, **SMALL),
                             password, secret=secret, associated_data=ad) is True
    # A salt whose items are wider than one byte is hashed as its raw bytes.
    wide = array.array("I", [1, 2, 3])
    assert argon2_hash(PASSWORD, wide, **SMALL) == argon2_hash(PASSWORD, wide.tobytes(),
                                                               **SMALL)
    encoded = argon2_hash_encoded(PASSWORD, memoryview(wide), **SMALL)
    assert encoded.split("$")[4] == b64(wide.tobytes())


def test_non_contiguous_buffer_is_refused():
    strided = memoryview(b"somesaltsomesalt")[::2]
    with pytest.raises(ParameterError, match="salt"):
        argon2_hash(PASSWORD, strided, **SMALL)


# ---- argon2_hash_encoded / argon2_verify ----------------------------------------------------


def test_hash_encoded_format():
    salt = bytes(range(20))
    encoded = argon2_hash_encoded(PASSWORD, salt, type="d", version=0x10, time_cost=2,
                                  memory_cost=41, parallelism=3, hash_len=20)
    tag = argon2_hash(PASSWORD, salt, type="d", version=0x10, time_cost=2, memory_cost=41,
                      parallelism=3, hash_len=20)
    assert encoded == f"$argon2d$v=16$m=41,t=2,p=3${b64(salt)}${b64(tag)}"
    assert "=" not in encoded.split("$", 4)[4]  # no base64 padding
    assert argon2_hash_encoded(PASSWORD, SALT, **SMALL) == VALID


def test_verify_true_and_mismatch():
    assert argon2_verify(VALID, PASSWORD) is True
    assert argon2_verify(VALID.encode("ascii"), PASSWORD) is True  # ASCII bytes accepted
    with pytest.raises(VerifyMismatchError) as info:
        argon2_verify(VALID, b"passwore")
    assert isinstance(info.value, VerificationError)
    assert isinstance(info.value, ArgonishcheError)
    with pytest.raises(VerificationError):
        argon2_verify(VALID, b"")


def test_verify_checks_secret_and_associated_data():
    encoded = argon2_hash_encoded(PASSWORD, SALT, secret=b"pepper", associated_data=b"user=1",
                                  **SMALL)
    assert argon2_verify(encoded, PASSWORD, secret=b"pepper", associated_data=b"user=1")
    for secret, ad in ((b"", b"user=1"), (b"peppeR", b"user=1"), (b"pepper", b""),
                       (b"pepper", b"user=2"), (b"user=1", b"pepper")):
        with pytest.raises(VerifyMismatchError):
            argon2_verify(encoded, PASSWORD, secret=secret, associated_data=ad)
    with pytest.raises(VerifyMismatchError):
        argon2_verify(VALID, PASSWORD, secret=b"pepper")


def test_verify_threads_and_backend(backend):
    encoded = argon2_hash_encoded(PASSWORD, SALT, time_cost=1, memory_cost=64, parallelism=4)
    for threads in (None, 1, 2, 4):
        assert argon2_verify(encoded, PASSWORD, threads=threads, backend=backend) is True
    with pytest.raises(VerifyMismatchError):
        argon2_verify(encoded, b"x", threads=3, backend=backend)


MALFORMED = [
    "",
    "$",
    "password",
    "argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,  # no leading "$"
    "$argon2$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2x$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$scrypt$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=20$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$m=32,t=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$t=1,m=32,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$m=32,t=1,p=1,k=2$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$m=032,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$m=-32,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$m=4294967296,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ=$" + TAG_B64,
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHR$" + TAG_B64,  # non-canonical last character
    "$argon2id$v=19$m=32,t=1,p=1$c29t ZXNhbHQ$" + TAG_B64,
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ",
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$",
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG_B64 + "$",
    "$argon2id$v=19$m=32,t=1,p=1$$" + TAG_B64,
    VALID + "\n",
    VALID.replace("argon2id", "argon2íd"),
    VALID.encode("ascii") + b"\xff",
    None,
    12345,
]


@pytest.mark.parametrize("encoded", MALFORMED, ids=[repr(m)[:60] for m in MALFORMED])
def test_malformed_hash_is_invalid_hash_error(encoded):
    with pytest.raises(InvalidHashError) as info:
        argon2_verify(encoded, PASSWORD)
    # A ValueError as argon2-cffi's, and a VerificationError so that login code catching that
    # refuses the password instead of failing.
    assert isinstance(info.value, ValueError) and isinstance(info.value, VerificationError)
    with pytest.raises(InvalidHashError):
        PasswordHasher().verify(encoded, PASSWORD)
    try:
        needs_rehash = PasswordHasher().check_needs_rehash(encoded)
    except InvalidHashError:
        return  # not even structured like an Argon2 hash: argon2-cffi raises there too
    assert needs_rehash is True  # readable enough to answer: it is not this hasher's hash


INVALID_PARAMETERS = {
    "salt-4-bytes": "$argon2id$v=19$m=32,t=1,p=1$c2FsdA$" + TAG_B64,
    "salt-7-bytes": f"$argon2id$v=19$m=32,t=1,p=1${b64(b'1234567')}$" + TAG_B64,
    "p=0": "$argon2id$v=19$m=32,t=1,p=0$c29tZXNhbHQ$" + TAG_B64,
    "t=0": "$argon2id$v=19$m=32,t=0,p=1$c29tZXNhbHQ$" + TAG_B64,
    "m=0": "$argon2id$v=19$m=0,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "m<8p": "$argon2id$v=19$m=15,t=1,p=2$c29tZXNhbHQ$" + TAG_B64,
    "m<8-v16-without-v": "$argon2i$m=7,t=1,p=1$c29tZXNhbHQ$" + TAG_B64,
    "p=2**24": "$argon2id$v=19$m=4294967295,t=1,p=16777216$c29tZXNhbHQ$" + TAG_B64,
    "tag-3-bytes": "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$AAAA",
}


@pytest.mark.parametrize("encoded", INVALID_PARAMETERS.values(), ids=INVALID_PARAMETERS.keys())
def test_hash_with_invalid_parameters_is_invalid_hash_error(encoded):
    with pytest.raises(InvalidHashError):
        argon2_verify(encoded, PASSWORD)
    with pytest.raises(InvalidHashError):
        PasswordHasher().verify(encoded, PASSWORD)
    # Structured like a hash: answered, as argon2-cffi answers (a hash nobody can verify needs
    # replacing), never raised.
    assert PasswordHasher().check_needs_rehash(encoded) is True
