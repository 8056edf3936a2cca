"""argonishche._phc's decoder on malformed PHC strings: each case of phc_cases.MALFORMED
rejected with a message that says what is wrong, and, for any text or bytes (hypothesis), either
InvalidHashError or the canonical spelling decoded.
"""

from __future__ import annotations

import pytest
from argonishche import _phc
from argonishche.exceptions import InvalidHashError
from hypothesis import given
from hypothesis import strategies as st
from phc_cases import MALFORMED, REFERENCE_MISMATCHES, REFERENCE_STOPS_AT_NUL, with_field
from support import SALT_B64, TAG_B64, UINT32_MAX, VALID, b64


@pytest.mark.parametrize("encoded", MALFORMED)
def test_malformed_input_is_rejected(encoded):
    with pytest.raises(InvalidHashError) as info:
        _phc.decode(encoded)
    assert str(info.value), "the message must say what is wrong"


def test_malformed_table_is_big_and_distinct():
    values = [param.values[0] for param in MALFORMED]
    assert len(values) >= 40
    assert len(set(values)) == len(values)
    # the reference's exemptions below name cases of the table
    assert REFERENCE_MISMATCHES | REFERENCE_STOPS_AT_NUL <= {param.id for param in MALFORMED}


@pytest.mark.parametrize(
    ("encoded", "message_part"),
    [
        ("", "empty"),
        ("argon2id", "start with '$argon2'"),
        (VALID + "$", "fields"),
        (with_field("$argon2id$", "$argon2ID$"), "unknown hash type"),
        (with_field("$v=19$", "$v=18$"), "unsupported version"),
        (with_field("m=32", "m=032"), "leading zeros"),
        (with_field("p=1", f"p={2**32}"), "32 bits"),
        (with_field("m=32,t=1,p=1", "t=1,m=32,p=1"), "m=<m>,t=<t>,p=<p>"),
        (with_field(SALT_B64, ""), "salt is empty"),
        (with_field(TAG_B64, TAG_B64 + "="), "tag must be unpadded"),
        (with_field(SALT_B64, SALT_B64[:-1] + "R"), "salt is not canonical"),
        (with_field(TAG_B64, "A"), "tag has an impossible base64 length"),
        (VALID + "é", "non-ASCII"),
        (VALID.encode("ascii") + b"\x80", "non-ASCII"),
    ],
)
def test_error_message_says_what_is_wrong(encoded, message_part):
    with pytest.raises(InvalidHashError) as info:
        _phc.decode(encoded)
    assert message_part in str(info.value)


def test_huge_input_message_stays_short():
    with pytest.raises(InvalidHashError) as info:
        _phc.decode(with_field("t=1", "t=" + "7" * 100_000))
    assert len(str(info.value)) < 200


@pytest.mark.parametrize("value", [None, 123, 1.5, bytearray(VALID, "ascii"), [VALID], object()])
def test_decode_of_wrong_type_raises_invalid_hash_error(value):
    with pytest.raises(InvalidHashError, match="must be str or bytes"):
        _phc.decode(value)


def test_invalid_hash_error_is_a_value_error():
    with pytest.raises(ValueError):
        _phc.decode("garbage")


def test_number_boundaries():
    at_max = _phc.decode(with_field("m=32", f"m={UINT32_MAX}"))
    assert at_max.memory_cost == UINT32_MAX
    assert _phc.decode(with_field("t=1", "t=0")).time_cost == 0
    with pytest.raises(InvalidHashError):
        _phc.decode(with_field("m=32", f"m={UINT32_MAX + 1}"))
    with pytest.raises(InvalidHashError):
        _phc.decode(with_field("m=32", "m=10000000000"))  # 11 digits


# ------------------------------------------------------------------------------ hypothesis

uint32 = st.integers(min_value=0, max_value=UINT32_MAX)
nonempty_bytes = st.binary(min_size=1, max_size=80)


@given(
    st.sampled_from(_phc.TYPE_NAMES),
    st.sampled_from([16, 19]),
    uint32,
    uint32,
    uint32,
    nonempty_bytes,
    nonempty_bytes,
)
def test_valid_parameters_round_trip(type_name, version, m, t, p, salt, tag):
    encoded = _phc.encode(type_name, version, m, t, p, salt, tag)
    assert encoded == f"$argon2{type_name}$v={version}$m={m},t={t},p={p}${b64(salt)}${b64(tag)}"
    assert _phc.decode(encoded) == (type_name, version, m, t, p, salt, tag)
    assert _phc.encode(*_phc.decode(encoded)) == encoded


def assert_only_invalid_hash_error(value):
    """decode() either fails with InvalidHashError, or succeeds on the canonical spelling."""
    try:
        decoded = _phc.decode(value)
    except InvalidHashError as error:
        assert str(error)
        return
    text = value.decode("ascii") if isinstance(value, bytes) else value
    # Strict means canonical: anything accepted is exactly what encode() writes, apart from
    # the legacy spelling without "$v=", which encode() writes as "$v=16".
    if "$v=" not in text:
        assert decoded.version == 16
        text = text.replace("$m=", "$v=16$m=", 1)
    assert _phc.encode(*decoded) == text


@given(st.text())
def test_random_text_raises_only_invalid_hash_error(text):
    assert_only_invalid_hash_error(text)


@given(st.binary())
def test_random_bytes_raise_only_invalid_hash_error(data):
    assert_only_invalid_hash_error(data)


# Text built from the characters PHC strings are made of reaches much deeper into the parser.
phc_alphabet_text = st.text(alphabet="$argon2idv=mtp,0123456789+/ABCQRgh= \x00é", max_size=90)


@given(st.lists(phc_alphabet_text | st.sampled_from(VALID.split("$")), max_size=8))
def test_phc_like_text_raises_only_invalid_hash_error(pieces):
    assert_only_invalid_hash_error("$".join(pieces))


@given(
    st.integers(min_value=0, max_value=len(VALID)),
    st.integers(min_value=0, max_value=3),
    st.text(max_size=3),
)
def test_mutated_valid_string_raises_only_invalid_hash_error(position, deleted, inserted):
    mutated = VALID[:position] + inserted + VALID[position + deleted :]
    assert_only_invalid_hash_error(mutated)
    assert_only_invalid_hash_error(mutated.encode("utf-8", "surrogatepass"))
