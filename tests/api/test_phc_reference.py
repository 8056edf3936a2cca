"""argonishche._phc against the reference implementation, through argon2-cffi where it is
installed: the same strings encoded, verified and rejected, and where the reference is laxer.
"""

from __future__ import annotations

import pytest
from argonishche import _phc
from phc_cases import MALFORMED, REFERENCE_MISMATCHES, REFERENCE_STOPS_AT_NUL, RFC_ID_V19
from support import PASSWORD, RFC_I_V16_WITHOUT_V, RFC_I_V19, SALT, VALID


def argon2_type(argon2, type_name):
    return {"d": argon2.Type.D, "i": argon2.Type.I, "id": argon2.Type.ID}[type_name]


@pytest.mark.parametrize("type_name", _phc.TYPE_NAMES)
def test_password_hasher_output_round_trips(type_name):
    argon2 = pytest.importorskip("argon2")
    hasher = argon2.PasswordHasher(
        time_cost=2,
        memory_cost=64,
        parallelism=2,
        hash_len=24,
        salt_len=16,
        type=argon2_type(argon2, type_name),
    )
    encoded = hasher.hash("correct horse")
    decoded = _phc.decode(encoded)
    assert decoded[:5] == (type_name, 19, 64, 2, 2)
    assert len(decoded.salt) == 16 and len(decoded.tag) == 24
    assert _phc.encode(*decoded) == encoded
    assert _phc.decode(encoded.encode("ascii")) == decoded


@pytest.mark.parametrize("type_name", _phc.TYPE_NAMES)
@pytest.mark.parametrize("version", [16, 19])
@pytest.mark.parametrize(
    ("salt", "hash_len"), [(b"somesalt", 32), (b"0123456789", 4), (b"\xff" * 17, 65)]
)
def test_our_encoding_matches_reference_encoder(type_name, version, salt, hash_len):
    argon2 = pytest.importorskip("argon2")
    low_level = argon2.low_level
    kind = argon2_type(argon2, type_name)
    args = (b"password", salt, 1, 16, 1, hash_len, kind)
    tag = low_level.hash_secret_raw(*args, version=version)
    reference = low_level.hash_secret(*args, version=version).decode("ascii")

    ours = _phc.encode(type_name, version, 16, 1, 1, salt, tag)
    assert ours == reference
    assert _phc.decode(reference) == (type_name, version, 16, 1, 1, salt, tag)
    assert low_level.verify_secret(ours.encode("ascii"), b"password", kind) is True
    with pytest.raises(argon2.exceptions.VerifyMismatchError):
        low_level.verify_secret(ours.encode("ascii"), b"wrong password", kind)

    params = argon2.extract_parameters(ours)
    assert (params.version, params.memory_cost, params.time_cost, params.parallelism) == (
        version,
        16,
        1,
        1,
    )
    assert (params.salt_len, params.hash_len) == (len(salt), hash_len)


@pytest.mark.parametrize(
    ("encoded", "type_name"),
    [(RFC_I_V19, "i"), (RFC_ID_V19, "id"), (RFC_I_V16_WITHOUT_V, "i")],
)
def test_reference_verifies_known_strings_and_our_reencoding(encoded, type_name):
    argon2 = pytest.importorskip("argon2")
    kind = argon2_type(argon2, type_name)
    ours = _phc.encode(*_phc.decode(encoded))
    # Re-encoding changes nothing but a missing "$v=", which encode() writes as "$v=16".
    assert ours == (encoded if "$v=" in encoded else encoded.replace("$m=", "$v=16$m=", 1))
    # The reference verifies both (so it too reads a version-less string as 0x10) and does
    # check the tag: a wrong password is a mismatch.
    for candidate in {encoded, ours}:
        raw = candidate.encode("ascii")
        assert argon2.low_level.verify_secret(raw, PASSWORD, kind) is True
    with pytest.raises(argon2.exceptions.VerifyMismatchError):
        argon2.low_level.verify_secret(ours.encode("ascii"), b"Password", kind)


def test_reference_accepts_valid_base_string():
    argon2 = pytest.importorskip("argon2")
    # VALID is exactly what the reference encoder writes for its fields, and verifies.
    assert argon2.low_level.hash_secret(PASSWORD, SALT, 1, 32, 1, 32, argon2.Type.ID) == (
        VALID.encode("ascii"))
    assert argon2.low_level.verify_secret(VALID.encode("ascii"), PASSWORD, argon2.Type.ID) is True


@pytest.mark.parametrize("encoded", MALFORMED)
def test_reference_rejects_malformed_input_too(encoded, request):
    argon2 = pytest.importorskip("argon2")
    raw = encoded if isinstance(encoded, bytes) else encoded.encode("utf-8", "surrogatepass")
    case = request.node.callspec.id
    if case in REFERENCE_STOPS_AT_NUL:
        assert argon2.low_level.verify_secret(raw, PASSWORD, argon2.Type.ID) is True
        return
    with pytest.raises(argon2.exceptions.VerificationError) as info:
        argon2.low_level.verify_secret(raw, PASSWORD, argon2.Type.ID)
    # A decoding failure (the reference also calls the string malformed), except where the
    # reference is laxer and only the recomputed tag differs: both ways round.
    mismatch = isinstance(info.value, argon2.exceptions.VerifyMismatchError)
    assert mismatch == (case in REFERENCE_MISMATCHES), (case, info.value)
