"""Tests for argonishche._phc, the PHC string codec for Argon2 hashes: known strings decoded and
round-tripped, and encode()'s arguments checked.  Malformed strings are test_phc_malformed.py's,
the cross-check with argon2-cffi's reference encoder test_phc_reference.py's.
"""

from __future__ import annotations

import base64

import pytest
from argonishche import Type, _phc
from argonishche.exceptions import ParameterError
from phc_cases import RFC_ID_V19, with_field
from support import RFC_I_V16_WITHOUT_V, RFC_I_V19, UINT32_MAX, VALID, b64

# --------------------------------------------------------------------------- known strings


def test_decode_rfc_argon2i_v19():
    decoded = _phc.decode(RFC_I_V19)
    assert decoded == _phc.DecodedHash(
        type="i",
        version=19,
        memory_cost=65536,
        time_cost=2,
        parallelism=1,
        salt=b"somesalt",
        tag=base64.b64decode("wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA="),
    )
    assert len(decoded.tag) == 32


def test_decode_without_version_means_0x10():
    decoded = _phc.decode(RFC_I_V16_WITHOUT_V)
    assert decoded.version == 0x10
    assert (decoded.type, decoded.memory_cost, decoded.time_cost, decoded.parallelism) == (
        "i",
        65536,
        2,
        1,
    )
    assert decoded.salt == b"somesalt"
    assert decoded.tag == base64.b64decode("9sTbSlTio3Biev89thdrlKKiCaYsjjYVJxGAL3swxpQ=")


def test_encode_always_writes_version_even_for_0x10():
    decoded = _phc.decode(RFC_I_V16_WITHOUT_V)
    assert _phc.encode(*decoded) == RFC_I_V16_WITHOUT_V.replace("$argon2i$", "$argon2i$v=16$")


@pytest.mark.parametrize("encoded", [RFC_I_V19, RFC_ID_V19, VALID])
def test_known_strings_round_trip_exactly(encoded):
    assert _phc.encode(*_phc.decode(encoded)) == encoded


def test_encode_exact_string():
    assert (
        _phc.encode("id", 0x13, 65536, 3, 4, b"somesalt", bytes(range(32)))
        == "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$"
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
    )
    encoded = _phc.encode("d", 0x10, 8, 1, 1, b"\xff", b"\xfb\xef")
    assert encoded == "$argon2d$v=16$m=8,t=1,p=1$/w$++8"


def test_decode_accepts_ascii_bytes_like_str():
    assert _phc.decode(VALID.encode("ascii")) == _phc.decode(VALID)


def test_decode_returns_named_fields_in_encode_order():
    decoded = _phc.decode(VALID)
    assert isinstance(decoded, tuple)
    assert decoded._fields == (
        "type",
        "version",
        "memory_cost",
        "time_cost",
        "parallelism",
        "salt",
        "tag",
    )
    assert isinstance(decoded.salt, bytes) and isinstance(decoded.tag, bytes)


def test_type_names():
    # The codec's names are the public Type's labels in the order of their codes (d=0, i=1,
    # id=2), and decode() reads each back from "$argon2<name>$".
    assert _phc.TYPE_NAMES == tuple(member.label for member in sorted(Type, key=int))
    for name in _phc.TYPE_NAMES:
        assert _phc.decode(with_field("$argon2id$", f"$argon2{name}$")).type == name


@pytest.mark.parametrize("type_name", _phc.TYPE_NAMES)
@pytest.mark.parametrize("version", [16, 19])
def test_round_trip_every_type_and_version(type_name, version):
    fields = (type_name, version, 4096, 3, 2, b"0123456789abcdef", b"\x00" * 31 + b"\x01")
    encoded = _phc.encode(*fields)
    assert encoded.startswith(f"$argon2{type_name}$v={version}$m=4096,t=3,p=2$")
    assert _phc.decode(encoded) == fields
    assert _phc.decode(encoded.encode("ascii")) == fields


@pytest.mark.parametrize("length", range(1, 10))
def test_base64_lengths_round_trip(length):
    data = bytes(range(256 - length, 256))
    encoded = _phc.encode("id", 19, 8, 1, 1, data, data)
    salt_text, tag_text = encoded.split("$")[4:]
    assert salt_text == tag_text == b64(data)
    assert "=" not in salt_text and len(salt_text) % 4 != 1
    assert _phc.decode(encoded)[5:] == (data, data)


def test_extreme_numbers_round_trip():
    encoded = _phc.encode("i", 19, UINT32_MAX, 0, UINT32_MAX, b"s", b"t")
    assert encoded == f"$argon2i$v=19$m={UINT32_MAX},t=0,p={UINT32_MAX}$cw$dA"
    assert _phc.decode(encoded) == ("i", 19, UINT32_MAX, 0, UINT32_MAX, b"s", b"t")


# ---------------------------------------------------------------------------- encode errors


GOOD_ARGS = ("id", 19, 65536, 3, 4, b"somesalt", b"tag-bytes")


@pytest.mark.parametrize(
    ("index", "bad_value"),
    [
        (0, "ID"),
        (0, "argon2id"),
        (0, ""),
        (0, None),
        (1, 18),
        (1, 0x13 + 2**32),
        (1, "19"),
        (2, -1),
        (2, 2**32),
        (3, 2**32),
        (4, -5),
        (3, 1.0),
        (4, True),
        (2, "65536"),
        (5, b""),
        (6, b""),
        (5, "somesalt"),
        (6, bytearray(b"tag")),
        (6, None),
    ],
)
def test_encode_rejects_bad_values(index, bad_value):
    args = list(GOOD_ARGS)
    args[index] = bad_value
    with pytest.raises(ParameterError):
        _phc.encode(*args)


def test_encode_accepts_good_args():
    assert _phc.decode(_phc.encode(*GOOD_ARGS)) == GOOD_ARGS
