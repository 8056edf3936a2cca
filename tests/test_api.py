"""The public API contract: what the docstrings of argonishche's functions and classes promise.

Costs are kept tiny (m <= 256 KiB) except where a documented default or a published string
needs more; the GIL test deliberately hashes 64 MiB once.
"""

from __future__ import annotations

import array
import base64
import hashlib
import os
import sys
import threading

import pytest

import argonishche
from argonishche import (
    ArgonishcheError,
    BackendError,
    InvalidHashError,
    ParameterError,
    ParameterTypeError,
    PasswordHasher,
    Type,
    VerificationError,
    VerifyMismatchError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
    blake2b,
)

UINT32_MAX = 2**32 - 1
SMALL = dict(time_cost=1, memory_cost=32, parallelism=1)  # cheapest valid costs
PASSWORD = b"password"
SALT = b"somesalt"

# password "password", salt "somesalt", Argon2id v=19, t=1, m=32, p=1, 32-byte tag
VALID = "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$MBqPu0xZXFIeZ1LJialS1H4ezQY9ie689ohyiGdbVMg"
# Published phc-winner-argon2 strings (password "password", salt "somesalt", t=2, m=64 MiB).
RFC_I_V16_WITHOUT_V = (
    "$argon2i$m=65536,t=2,p=1$c29tZXNhbHQ$9sTbSlTio3Biev89thdrlKKiCaYsjjYVJxGAL3swxpQ")
RFC_I_V19 = (
    "$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def usable_backend_names() -> list[str]:
    return [b.name for b in argonishche.backends() if b.state in ("selected", "available")]


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

    monkeypatch.setattr(sys.modules["argonishche._argon2"]._driver, "argon2", recorder)
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


def test_backend_keyword_selects_a_backend(backend):
    assert argon2_hash(PASSWORD, SALT, backend=backend, **SMALL) == argon2_hash(
        PASSWORD, SALT, **SMALL)
    assert argon2_hash(PASSWORD, SALT, backend=backend.upper(), **SMALL) == argon2_hash(
        PASSWORD, SALT, **SMALL)


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


TAG32 = "MBqPu0xZXFIeZ1LJialS1H4ezQY9ie689ohyiGdbVMg"
MALFORMED = [
    "",
    "$",
    "password",
    "argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG32,  # no leading "$"
    "$argon2$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "$argon2x$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "$scrypt$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=20$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=19$m=32,t=1$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=19$t=1,m=32,p=1$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=19$m=32,t=1,p=1,k=2$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=19$m=032,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=19$m=-32,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=19$m=4294967296,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ=$" + TAG32,
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHR$" + TAG32,  # non-canonical last character
    "$argon2id$v=19$m=32,t=1,p=1$c29t ZXNhbHQ$" + TAG32,
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ",
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$",
    "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$" + TAG32 + "$",
    "$argon2id$v=19$m=32,t=1,p=1$$" + TAG32,
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
    assert isinstance(info.value, ValueError)
    assert not isinstance(info.value, VerificationError)
    with pytest.raises(InvalidHashError):
        PasswordHasher().verify(encoded, PASSWORD)
    with pytest.raises(InvalidHashError):
        PasswordHasher().check_needs_rehash(encoded)


INVALID_PARAMETERS = {
    "salt-4-bytes": "$argon2id$v=19$m=32,t=1,p=1$c2FsdA$" + TAG32,
    "salt-7-bytes": f"$argon2id$v=19$m=32,t=1,p=1${b64(b'1234567')}$" + TAG32,
    "p=0": "$argon2id$v=19$m=32,t=1,p=0$c29tZXNhbHQ$" + TAG32,
    "t=0": "$argon2id$v=19$m=32,t=0,p=1$c29tZXNhbHQ$" + TAG32,
    "m=0": "$argon2id$v=19$m=0,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "m<8p": "$argon2id$v=19$m=15,t=1,p=2$c29tZXNhbHQ$" + TAG32,
    "m<8-v16-without-v": "$argon2i$m=7,t=1,p=1$c29tZXNhbHQ$" + TAG32,
    "p=2**24": "$argon2id$v=19$m=4294967295,t=1,p=16777216$c29tZXNhbHQ$" + TAG32,
    "tag-3-bytes": "$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$AAAA",
}


@pytest.mark.parametrize("encoded", INVALID_PARAMETERS.values(), ids=INVALID_PARAMETERS.keys())
def test_hash_with_invalid_parameters_is_invalid_hash_error(encoded):
    with pytest.raises(InvalidHashError):
        argon2_verify(encoded, PASSWORD)
    with pytest.raises(InvalidHashError):
        PasswordHasher().verify(encoded, PASSWORD)
    with pytest.raises(InvalidHashError):
        PasswordHasher().check_needs_rehash(encoded)


# ---- PHC interoperability with argon2-cffi --------------------------------------------------


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


# ---- PasswordHasher -------------------------------------------------------------------------


def test_password_hasher_defaults():
    ph = PasswordHasher()
    assert (ph.time_cost, ph.memory_cost, ph.parallelism, ph.hash_len, ph.salt_len) == (
        3, 65536, 4, 32, 16)
    assert ph.type == Type.ID
    assert "memory_cost=65536" in repr(ph)


def test_password_hasher_hash_and_verify():
    ph = PasswordHasher(time_cost=1, memory_cost=64, parallelism=2)
    encoded = ph.hash("secret")
    assert encoded.startswith("$argon2id$v=19$m=64,t=1,p=2$")
    _, _, _, _, salt_b64, tag_b64 = encoded.split("$")
    assert len(base64.b64decode(salt_b64 + "==")) == 16
    assert len(base64.b64decode(tag_b64 + "==")) == 32
    assert ph.verify(encoded, "secret") is True
    assert ph.verify(encoded, b"secret") is True
    with pytest.raises(VerifyMismatchError):
        ph.verify(encoded, "Secret")


def test_password_hasher_random_salt_differs():
    ph = PasswordHasher(time_cost=1, memory_cost=16, parallelism=1, salt_len=8)
    hashes = {ph.hash(PASSWORD) for _ in range(8)}
    assert len(hashes) == 8
    assert len({h.split("$")[4] for h in hashes}) == 8  # the salts themselves differ
    assert all(ph.verify(h, PASSWORD) for h in hashes)


def test_password_hasher_explicit_salt_and_options():
    ph = PasswordHasher(time_cost=2, memory_cost=40, parallelism=2, hash_len=20, salt_len=10,
                        type="i")
    encoded = ph.hash(PASSWORD, salt=b"0123456789")
    assert encoded == argon2_hash_encoded(PASSWORD, b"0123456789", type="i", time_cost=2,
                                          memory_cost=40, parallelism=2, hash_len=20)
    assert len(base64.b64decode(ph.hash(PASSWORD).split("$")[4] + "==")) == 10


def test_password_hasher_verify_takes_costs_from_the_hash():
    old = PasswordHasher(time_cost=2, memory_cost=24, parallelism=3, hash_len=16, type="d")
    new = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    encoded = old.hash(PASSWORD)
    assert new.verify(encoded, PASSWORD) is True
    assert new.check_needs_rehash(encoded) is True
    assert old.check_needs_rehash(encoded) is False


REHASH_BASE = dict(time_cost=2, memory_cost=32, parallelism=2, hash_len=16, salt_len=12,
                   type="id")


@pytest.mark.parametrize("change", [
    dict(time_cost=1), dict(time_cost=3), dict(memory_cost=33), dict(memory_cost=48),
    dict(parallelism=1), dict(parallelism=4), dict(hash_len=17), dict(hash_len=32),
    dict(salt_len=8), dict(salt_len=16), dict(type="i"), dict(type="d"),
], ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_check_needs_rehash_when_a_parameter_differs(change):
    ph = PasswordHasher(**REHASH_BASE)
    other = PasswordHasher(**{**REHASH_BASE, **change})
    assert ph.check_needs_rehash(other.hash(PASSWORD)) is True
    assert other.check_needs_rehash(ph.hash(PASSWORD)) is True
    assert other.check_needs_rehash(other.hash(PASSWORD)) is False


def test_check_needs_rehash_own_hashes_and_version():
    ph = PasswordHasher(**REHASH_BASE)
    assert ph.check_needs_rehash(ph.hash(PASSWORD)) is False
    assert ph.check_needs_rehash(ph.hash(PASSWORD).encode("ascii")) is False
    same_v16 = argon2_hash_encoded(PASSWORD, b"x" * 12, type="id", time_cost=2, memory_cost=32,
                                   parallelism=2, hash_len=16, version=0x10)
    same_v19 = argon2_hash_encoded(PASSWORD, b"x" * 12, type="id", time_cost=2, memory_cost=32,
                                   parallelism=2, hash_len=16, version=0x13)
    assert ph.check_needs_rehash(same_v19) is False
    assert ph.check_needs_rehash(same_v16) is True
    assert ph.check_needs_rehash(same_v16.replace("$v=16", "")) is True
    assert ph.verify(same_v16, PASSWORD) is True


# ---- bad input ------------------------------------------------------------------------------

# (id, overrides of the call, expected exception, word the message must contain)
ARGON2_BAD_INPUT = [
    ("salt-7-bytes", dict(salt=b"1234567"), ParameterError, "salt"),
    ("salt-empty", dict(salt=b""), ParameterError, "salt"),
    ("hash_len-3", dict(hash_len=3), ParameterError, "hash_len"),
    ("hash_len-0", dict(hash_len=0), ParameterError, "hash_len"),
    ("hash_len-negative", dict(hash_len=-32), ParameterError, "hash_len"),
    ("memory_cost-7", dict(memory_cost=7), ParameterError, "memory_cost"),
    ("memory_cost-below-8p", dict(memory_cost=31, parallelism=4), ParameterError, "memory_cost"),
    ("memory_cost-0", dict(memory_cost=0), ParameterError, "memory_cost"),
    ("time_cost-0", dict(time_cost=0), ParameterError, "time_cost"),
    ("time_cost-negative", dict(time_cost=-1), ParameterError, "time_cost"),
    ("parallelism-0", dict(parallelism=0), ParameterError, "parallelism"),
    ("parallelism-2**24", dict(parallelism=2**24), ParameterError, "parallelism"),
    ("version-0x12", dict(version=0x12), ParameterError, "version"),
    ("version-0", dict(version=0), ParameterError, "version"),
    ("version-0x14", dict(version=0x14), ParameterError, "version"),
    ("type-x", dict(type="x"), ParameterError, "type"),
    ("type-argon2x", dict(type="argon2x"), ParameterError, "type"),
    ("type-empty", dict(type=""), ParameterError, "type"),
    ("threads-0", dict(threads=0), ParameterError, "threads"),
    ("threads-above-p", dict(threads=3, parallelism=2, memory_cost=16), ParameterError,
     "threads"),
    ("time_cost-2**32", dict(time_cost=UINT32_MAX + 1), ParameterError, "time_cost"),
    ("memory_cost-2**32", dict(memory_cost=UINT32_MAX + 1), ParameterError, "memory_cost"),
    ("hash_len-2**32", dict(hash_len=UINT32_MAX + 1), ParameterError, "hash_len"),
    ("parallelism-2**32", dict(parallelism=UINT32_MAX + 1), ParameterError, "parallelism"),
    # wrong types
    ("time_cost-float", dict(time_cost=1.0), ParameterTypeError, "time_cost"),
    ("memory_cost-float", dict(memory_cost=32.0), ParameterTypeError, "memory_cost"),
    ("parallelism-float", dict(parallelism=1.0), ParameterTypeError, "parallelism"),
    ("hash_len-float", dict(hash_len=32.0), ParameterTypeError, "hash_len"),
    ("threads-float", dict(threads=1.0), ParameterTypeError, "threads"),
    ("time_cost-None", dict(time_cost=None), ParameterTypeError, "time_cost"),
    ("memory_cost-None", dict(memory_cost=None), ParameterTypeError, "memory_cost"),
    ("parallelism-None", dict(parallelism=None), ParameterTypeError, "parallelism"),
    ("hash_len-None", dict(hash_len=None), ParameterTypeError, "hash_len"),
    ("time_cost-bool", dict(time_cost=True), ParameterTypeError, "time_cost"),
    ("parallelism-bool", dict(parallelism=True), ParameterTypeError, "parallelism"),
    ("hash_len-bool", dict(hash_len=True), ParameterTypeError, "hash_len"),
    ("threads-bool", dict(threads=True), ParameterTypeError, "threads"),
    ("time_cost-str", dict(time_cost="1"), ParameterTypeError, "time_cost"),
    ("type-None", dict(type=None), ParameterTypeError, "type"),
    ("type-float", dict(type=2.0), ParameterTypeError, "type"),
    ("type-bool", dict(type=True), ParameterTypeError, "type"),
    ("salt-str", dict(salt="somesalt"), ParameterTypeError, "salt"),
    ("salt-None", dict(salt=None), ParameterTypeError, "salt"),
    ("salt-int", dict(salt=12345678), ParameterTypeError, "salt"),
    ("password-None", dict(password=None), ParameterTypeError, "password"),
    ("password-int", dict(password=5), ParameterTypeError, "password"),
    ("secret-str", dict(secret="pepper"), ParameterTypeError, "secret"),
    ("secret-None", dict(secret=None), ParameterTypeError, "secret"),
    ("associated_data-str", dict(associated_data="ad"), ParameterTypeError, "associated_data"),
    ("associated_data-float", dict(associated_data=1.5), ParameterTypeError,
     "associated_data"),
    ("version-None", dict(version=None), ParameterTypeError, "version"),
    ("version-bool", dict(version=True), ParameterTypeError, "version"),
    ("version-str", dict(version="19"), ParameterTypeError, "version"),
    ("version-float", dict(version=19.0), ParameterTypeError, "version"),
    ("type-int-3", dict(type=3), ParameterError, "type"),
    ("type-int-negative", dict(type=-1), ParameterError, "type"),
]


def _bad_params(table):
    """(id, overrides, expected, word) rows as pytest params with readable ids."""
    return [pytest.param(*row[1:], id=row[0]) for row in table]


def _check_error(info, expected, word):
    exc = info.value
    assert type(exc) is expected, f"{type(exc).__name__}: {exc}"
    assert isinstance(exc, ValueError) and isinstance(exc, ArgonishcheError)
    assert isinstance(exc, TypeError) == (expected is ParameterTypeError)
    assert word in str(exc), f"message does not name {word!r}: {exc}"


@pytest.mark.parametrize("function", [argon2_hash, argon2_hash_encoded])
@pytest.mark.parametrize("overrides, expected, word", _bad_params(ARGON2_BAD_INPUT))
def test_argon2_bad_input(function, overrides, expected, word):
    call = dict(password=PASSWORD, salt=SALT, **SMALL)
    call.update(overrides)
    with pytest.raises(ParameterError) as info:
        function(call.pop("password"), call.pop("salt"), **call)
    _check_error(info, expected, word)


@pytest.mark.parametrize("overrides, expected, word", [
    (dict(password=None), ParameterTypeError, "password"),
    (dict(password=3.5), ParameterTypeError, "password"),
    (dict(secret="pepper"), ParameterTypeError, "secret"),
    (dict(associated_data=None), ParameterTypeError, "associated_data"),
    (dict(threads=0), ParameterError, "threads"),
    (dict(threads=2), ParameterError, "threads"),  # VALID has p=1
    (dict(threads=1.0), ParameterTypeError, "threads"),
])
def test_verify_bad_input(overrides, expected, word):
    call = dict(password=PASSWORD)
    call.update(overrides)
    with pytest.raises(ParameterError) as info:
        argon2_verify(VALID, call.pop("password"), **call)
    _check_error(info, expected, word)


@pytest.mark.parametrize("overrides, expected, word", [
    (dict(time_cost=0), ParameterError, "time_cost"),
    (dict(memory_cost=7, parallelism=1), ParameterError, "memory_cost"),
    (dict(memory_cost=15, parallelism=2), ParameterError, "memory_cost"),
    (dict(parallelism=0), ParameterError, "parallelism"),
    (dict(parallelism=2**24), ParameterError, "parallelism"),
    (dict(hash_len=3), ParameterError, "hash_len"),
    (dict(salt_len=7), ParameterError, "salt_len"),
    (dict(salt_len=UINT32_MAX + 1), ParameterError, "salt_len"),
    (dict(time_cost=UINT32_MAX + 1), ParameterError, "time_cost"),
    (dict(type="x"), ParameterError, "type"),
    (dict(time_cost=1.5), ParameterTypeError, "time_cost"),
    (dict(memory_cost=None), ParameterTypeError, "memory_cost"),
    (dict(salt_len=16.0), ParameterTypeError, "salt_len"),
    (dict(salt_len=None), ParameterTypeError, "salt_len"),
    (dict(hash_len=True), ParameterTypeError, "hash_len"),
    (dict(type=None), ParameterTypeError, "type"),
], ids=lambda v: str(v) if not isinstance(v, dict) else "-".join(
    f"{k}={v!r}" for k, v in v.items()))
def test_password_hasher_bad_parameters(overrides, expected, word):
    with pytest.raises(ParameterError) as info:
        PasswordHasher(**{**dict(memory_cost=64), **overrides})
    _check_error(info, expected, word)


def test_password_hasher_bad_password_and_salt():
    ph = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    with pytest.raises(ParameterTypeError, match="password"):
        ph.hash(None)
    with pytest.raises(ParameterError, match="salt"):
        ph.hash(PASSWORD, salt=b"short")
    with pytest.raises(ParameterTypeError, match="password"):
        ph.verify(VALID, 12)


def test_unknown_backend_is_backend_error_listing_available():
    available = usable_backend_names()
    assert available
    calls = [
        lambda: argon2_hash(PASSWORD, SALT, backend="no-such-backend", **SMALL),
        lambda: argon2_hash_encoded(PASSWORD, SALT, backend="no-such-backend", **SMALL),
        lambda: argon2_verify(VALID, PASSWORD, backend="no-such-backend"),
        lambda: blake2b(b"abc", backend="no-such-backend"),
    ]
    for call in calls:
        with pytest.raises(BackendError) as info:
            call()
        assert isinstance(info.value, RuntimeError)
        assert isinstance(info.value, ArgonishcheError)
        message = str(info.value)
        assert "no-such-backend" in message
        for name in available:
            assert name in message, message


# ---- memory_size, backends(), selected_backend() --------------------------------------------


@pytest.mark.parametrize("memory_cost, parallelism, kib", [
    (8, 1, 8), (9, 1, 8), (11, 1, 8), (12, 1, 12), (32, 1, 32), (33, 1, 32), (65536, 1, 65536),
    (65536, 4, 65536), (29, 3, 24), (100, 8, 96), (64, 8, 64), (127, 8, 96),
    (2**32 - 1, 1, 2**32 - 4),
])
def test_memory_size(memory_cost, parallelism, kib):
    assert argonishche.memory_size(memory_cost, parallelism) == kib * 1024 + 63  # + alignment


def test_memory_size_default_parallelism_and_bad_input():
    assert argonishche.memory_size(65536) == 64 * 2**20 + 63
    with pytest.raises(ParameterError, match="memory_cost"):
        argonishche.memory_size(7)
    with pytest.raises(ParameterError, match="memory_cost"):
        argonishche.memory_size(31, 4)
    with pytest.raises(ParameterError, match="parallelism"):
        argonishche.memory_size(64, 0)
    with pytest.raises(ParameterTypeError, match="memory_cost"):
        argonishche.memory_size(64.0)


def test_backends_report():
    records = argonishche.backends()
    assert records
    assert isinstance(records[0], argonishche.BackendInfo)
    names = [r.name for r in records]
    assert "ref" in names
    ref = records[names.index("ref")]
    assert ref.state in ("selected", "available")
    assert ref.cpu_features == ()  # portable C runs everywhere
    selected = [r for r in records if r.state == "selected"]
    assert len(selected) == 1
    assert set(selected[0].selected_for) == {"argon2", "blake2b"}
    usable = [r for r in records if r.state in ("selected", "available")]
    forced = os.environ.get("ARGONISHCHE_BACKEND")
    if forced:  # the tox backend-* envs
        assert selected[0].name == forced.lower()
    elif os.environ.get("ARGONISHCHE_SELECT", "priority") == "priority":
        # "best first": no usable backend outranks the selected one.
        assert all(r.priority <= selected[0].priority for r in usable)
    # Listed best first: priorities descend.
    priorities = [r.priority for r in records if r.description]
    assert priorities == sorted(priorities, reverse=True)
    for r in records:
        if r.state not in ("selected", "available"):
            assert r.reason, f"{r.name} is {r.state} without a reason"


def test_selected_backend():
    selected = [r.name for r in argonishche.backends() if r.state == "selected"]
    assert argonishche.selected_backend() == selected[0]
    assert argonishche.selected_backend("argon2") == selected[0]
    assert argonishche.selected_backend("blake2b") == selected[0]
    with pytest.raises(ValueError, match="algorithm"):
        argonishche.selected_backend("sha256")


# ---- threads ---------------------------------------------------------------------------------


def test_threads_do_not_change_the_tag(backend):
    kwargs = dict(time_cost=2, memory_cost=256, parallelism=4, backend=backend)
    one = argon2_hash(PASSWORD, SALT, threads=1, **kwargs)
    four = argon2_hash(PASSWORD, SALT, threads=4, **kwargs)
    assert one == four
    assert argon2_hash(PASSWORD, SALT, **kwargs) == one  # default thread count
    assert argon2_hash(PASSWORD, SALT, threads=3, **kwargs) == one  # uneven share of lanes


def test_concurrent_python_threads_get_correct_results():
    inputs = [(f"password {i}".encode(), b"salt%04d" % i) for i in range(8)]
    expected = [argon2_hash(p, s, time_cost=1, memory_cost=128, parallelism=2)
                for p, s in inputs]
    results = [None] * len(inputs)
    errors = []

    def work(i):
        try:
            for _ in range(3):
                tag = argon2_hash(*inputs[i], time_cost=1, memory_cost=128, parallelism=2)
                results[i] = tag if results[i] in (None, tag) else b"inconsistent"
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert results == expected


def test_gil_is_released_while_hashing():
    """While a 64 MiB Argon2 hash runs, another Python thread keeps running.

    The switch interval is raised for the duration, so the interpreter never *forces* the
    hashing thread to give up the GIL: the counting thread can then only run while the C call
    has released it.  (The counting thread releases the GIL itself in every iteration, inside
    hashlib's C code for >= 2 KiB inputs, so the hashing thread is never starved; this does not
    give the CPU away the way os.sched_yield would on a loaded machine.)  With the GIL held
    through the hash the counter cannot move between the two reads; released, it advances
    tens of thousands of times.
    """
    chunk = bytes(4096)
    count = [0]
    started, stop = threading.Event(), threading.Event()

    def counter():
        started.set()
        while not stop.is_set():
            count[0] += 1
            hashlib.blake2b(chunk)  # releases the GIL while it hashes

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    thread = threading.Thread(target=counter, daemon=True)
    try:
        thread.start()
        assert started.wait(60)
        before = count[0]
        tag = argon2_hash(PASSWORD, SALT, time_cost=2, memory_cost=65536, parallelism=1,
                          threads=1, backend="ref")
        advanced = count[0] - before
    finally:
        stop.set()
        sys.setswitchinterval(old_interval)
        thread.join(60)
    assert not thread.is_alive()
    assert len(tag) == 32
    assert advanced > 1000, f"the counter advanced only {advanced} times during the hash"


# ---- blake2b object -------------------------------------------------------------------------


def test_blake2b_attributes_like_hashlib():
    ours, theirs = blake2b(b"abc"), hashlib.blake2b(b"abc")
    assert ours.name == theirs.name == "blake2b"
    assert ours.block_size == theirs.block_size == 128
    assert ours.digest_size == theirs.digest_size == 64
    for name in ("SALT_SIZE", "PERSON_SIZE", "MAX_KEY_SIZE", "MAX_DIGEST_SIZE"):
        assert getattr(blake2b, name) == getattr(hashlib.blake2b, name), name
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.digest() == theirs.digest()
    assert ours.hexdigest() == theirs.hexdigest() == ours.digest().hex()
    small = blake2b(b"abc", digest_size=20)
    assert small.digest_size == 20 and len(small.digest()) == 20
    assert len(small.hexdigest()) == 40


def test_blake2b_keyword_parameters_like_hashlib():
    params = dict(digest_size=32, key=b"k" * 10, salt=b"s" * 16, person=b"p" * 5)
    assert (blake2b(b"data", usedforsecurity=False, **params).digest()
            == hashlib.blake2b(b"data", **params).digest())
    assert blake2b(data=b"data").digest() == hashlib.blake2b(b"data").digest()
    assert blake2b().digest() == hashlib.blake2b().digest()


def test_blake2b_buffer_types():
    raw = bytes(range(256)) * 3
    expected = hashlib.blake2b(raw).digest()
    words = array.array("Q")
    words.frombytes(raw)
    buffers = [raw, bytearray(raw), memoryview(raw), memoryview(bytearray(raw)), words,
               memoryview(words)]
    for buf in buffers:
        assert blake2b(buf).digest() == expected, type(buf)
        h = blake2b()
        h.update(buf)
        assert h.digest() == expected, type(buf)
    # Buffers as key, salt and person too.
    assert blake2b(raw, key=bytearray(b"key"), salt=memoryview(b"salt"),
                   person=array.array("B", b"me")).digest() == hashlib.blake2b(
        raw, key=b"key", salt=b"salt", person=b"me").digest()


def test_blake2b_copy_and_digest():
    h = blake2b(b"abc", digest_size=32)
    clone = h.copy()
    assert isinstance(clone, blake2b)
    assert clone.digest_size == 32
    h.update(b"def")
    assert clone.digest() == hashlib.blake2b(b"abc", digest_size=32).digest()
    assert h.digest() == hashlib.blake2b(b"abcdef", digest_size=32).digest()
    assert h.digest() == h.digest()  # non-destructive
    h.update(b"ghi")
    assert h.digest() == hashlib.blake2b(b"abcdefghi", digest_size=32).digest()


BLAKE2B_BAD_INPUT = [
    ("digest_size-0", dict(digest_size=0), ParameterError, "digest_size"),
    ("digest_size-65", dict(digest_size=65), ParameterError, "digest_size"),
    ("digest_size-negative", dict(digest_size=-1), ParameterError, "digest_size"),
    ("digest_size-2**32", dict(digest_size=UINT32_MAX + 1), ParameterError, "digest_size"),
    ("digest_size-float", dict(digest_size=32.0), ParameterTypeError, "digest_size"),
    ("digest_size-None", dict(digest_size=None), ParameterTypeError, "digest_size"),
    ("digest_size-bool", dict(digest_size=True), ParameterTypeError, "digest_size"),
    ("key-65", dict(key=b"k" * 65), ParameterError, "key"),
    ("salt-17", dict(salt=b"s" * 17), ParameterError, "salt"),
    ("person-17", dict(person=b"p" * 17), ParameterError, "person"),
    ("key-str", dict(key="key"), ParameterTypeError, "key"),
    ("salt-str", dict(salt="salt"), ParameterTypeError, "salt"),
    ("person-None", dict(person=None), ParameterTypeError, "person"),
]


@pytest.mark.parametrize("overrides, expected, word", _bad_params(BLAKE2B_BAD_INPUT))
def test_blake2b_bad_parameters(overrides, expected, word):
    with pytest.raises(ParameterError) as info:
        blake2b(b"abc", **overrides)
    _check_error(info, expected, word)


@pytest.mark.parametrize("data", ["abc", 123, 1.5, ["a"]], ids=repr)
def test_blake2b_data_of_wrong_type_is_type_error(data):
    with pytest.raises(TypeError):
        blake2b(data)
    h = blake2b(b"x")
    with pytest.raises(TypeError):
        h.update(data)
    assert h.digest() == hashlib.blake2b(b"x").digest()  # the failed update changed nothing


@pytest.mark.parametrize("data", ["", None], ids=repr)
def test_blake2b_empty_str_or_none_data_is_type_error(data):
    with pytest.raises(TypeError):
        hashlib.blake2b(data)  # what callers of a hashlib drop-in expect
    with pytest.raises(TypeError):
        blake2b(data)


def test_blake2b_update_none_is_type_error():
    h = blake2b()
    with pytest.raises(TypeError):
        h.update(None)
