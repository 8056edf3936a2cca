"""Encode and decode Argon2 hashes in the PHC string format.

An encoded hash looks like ``$argon2id$v=19$m=65536,t=3,p=4$<salt>$<tag>``: the Argon2 type,
the version, the memory cost (KiB), time cost and parallelism, then salt and tag in standard
base64 without ``=`` padding. The output is byte-for-byte what the reference implementation
(phc-winner-argon2) and argon2-cffi write, and anything they write decodes here.

Decoding is strict on purpose. Every encoded hash has exactly one spelling, the one the
reference encoder writes; whatever the reference decoder would reject (leading zeros, signs,
non-canonical base64, trailing bytes, unknown fields) is rejected here too. That way a
string either means one set of parameters or nothing at all, two different strings never
verify as the same hash, and junk from a database fails loudly instead of being half-read.
Every failure is an :class:`InvalidHashError` whose message says what is wrong.
"""

from __future__ import annotations

import binascii  # base64's two calls used here, without base64's import of struct

from .exceptions import InvalidHashError, ParameterError, ParameterTypeError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ._named_tuple import NamedTuple

__all__ = ["TYPE_NAMES", "DecodedHash", "encode", "decode"]

#: Argon2 type names as they appear after ``$argon2``.
TYPE_NAMES = ("d", "i", "id")

#: Versions that can appear in ``v=``: 0x10 (1.0) and 0x13 (1.3).
VERSIONS = (0x10, 0x13)

# Strings without "$v=" come from before version 1.3; the reference reads them as 0x10.
VERSION_WHEN_ABSENT = 0x10

UINT32_MAX = 2**32 - 1

# Canonical decimal: "0" or digits without a leading zero. ASCII digits only, because
# Python's str.isdigit() and int() would also take other scripts' digits.
_DIGITS = frozenset("0123456789")
# Standard base64 alphabet; "=" padding is never written, so it is never accepted.
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

# A uint32 has at most 10 digits; checking the length first also keeps int() away from
# huge digit strings (Python refuses to convert more than 4300 digits with a ValueError).
_MAX_UINT32_DIGITS = len(str(UINT32_MAX))


class DecodedHash(NamedTuple):
    """The fields of an encoded hash, in the order :func:`encode` takes them."""

    type: str  # "d", "i" or "id"
    version: int  # 0x10 or 0x13
    memory_cost: int  # m, KiB
    time_cost: int  # t
    parallelism: int  # p
    salt: bytes
    tag: bytes


def encode(
    type: str,
    version: int,
    memory_cost: int,
    time_cost: int,
    parallelism: int,
    salt: bytes,
    tag: bytes,
) -> str:
    """Return the PHC string for the given hash parameters, salt and tag.

    Like the reference encoder, ``v=`` is always written, also for version 0x10.
    Raises :class:`ParameterError` for values that cannot be encoded.
    """
    if not isinstance(type, str) or type not in TYPE_NAMES:
        raise ParameterError(f"type must be one of {TYPE_NAMES}, got {type!r}")
    _check_uint32("version", version)
    if version not in VERSIONS:
        raise ParameterError(f"version must be 16 (0x10) or 19 (0x13), got {version}")
    _check_uint32("memory_cost", memory_cost)
    _check_uint32("time_cost", time_cost)
    _check_uint32("parallelism", parallelism)
    _check_nonempty_bytes("salt", salt)
    _check_nonempty_bytes("tag", tag)
    return (
        f"$argon2{type}$v={version}"
        f"$m={memory_cost},t={time_cost},p={parallelism}"
        f"${_b64encode(salt)}${_b64encode(tag)}"
    )


def decode(encoded: str | bytes) -> DecodedHash:
    """Parse a PHC string (``str``, or ASCII ``bytes``) into its fields.

    Raises :class:`InvalidHashError`, and nothing else, for any input that is not exactly
    what :func:`encode` (or the reference encoder) would write.
    """
    text = _as_ascii_text(encoded)
    if not text:
        raise InvalidHashError("encoded hash is empty")
    # "$" never occurs inside a field (base64 and decimals do not use it), so splitting on
    # it gives the fields exactly; any extra or missing "$" changes the field count.
    fields = text.split("$")
    if fields[0] != "":
        raise InvalidHashError("encoded hash must start with '$argon2'")
    if len(fields) == 6:
        hash_type, version_field, params_field, salt_field, tag_field = fields[1:]
    elif len(fields) == 5:
        hash_type, params_field, salt_field, tag_field = fields[1:]
        version_field = None
    else:
        raise InvalidHashError(
            "encoded hash must be '$argon2<type>[$v=<version>]$m=<m>,t=<t>,p=<p>$<salt>$<tag>',"
            f" got {len(fields) - 1} '$'-separated fields instead of 4 or 5"
        )

    type_name = _parse_type(hash_type)
    version = _parse_version(version_field)
    memory_cost, time_cost, parallelism = _parse_params(params_field)
    salt = _b64decode("salt", salt_field)
    tag = _b64decode("tag", tag_field)
    return DecodedHash(type_name, version, memory_cost, time_cost, parallelism, salt, tag)


def _as_ascii_text(encoded: object) -> str:
    if isinstance(encoded, str):
        # isascii() also rejects lone surrogates, which would make .encode() raise.
        if not encoded.isascii():
            raise InvalidHashError("encoded hash contains non-ASCII characters")
        return encoded
    if isinstance(encoded, bytes):
        if not encoded.isascii():
            raise InvalidHashError("encoded hash contains non-ASCII bytes")
        return encoded.decode("ascii")
    # Documented as "InvalidHashError for any input", so a wrong type is no exception.
    raise InvalidHashError(f"encoded hash must be str or bytes, got {_type_name(encoded)}")


def _parse_type(field: str) -> str:
    prefix, type_name = field[:6], field[6:]
    if prefix != "argon2" or type_name not in TYPE_NAMES:
        raise InvalidHashError(
            f"unknown hash type {_shorten(field)}: expected 'argon2d', 'argon2i' or 'argon2id'"
        )
    return type_name


def _parse_version(field: str | None) -> int:
    if field is None:
        return VERSION_WHEN_ABSENT
    if not field.startswith("v="):
        raise InvalidHashError(f"expected 'v=<version>' after the type, got {_shorten(field)}")
    version = _parse_uint32("v", field[2:])
    if version not in VERSIONS:
        raise InvalidHashError(f"unsupported version v={version}: expected 16 or 19")
    return version


def _parse_params(field: str) -> tuple[int, int, int]:
    items = field.split(",")
    names = [item.partition("=")[0] for item in items]
    # All three, in this order, exactly once: the reference decoder insists on the same.
    if names != ["m", "t", "p"] or not all("=" in item for item in items):
        raise InvalidHashError(
            f"expected parameters 'm=<m>,t=<t>,p=<p>', got {_shorten(field)}"
        )
    memory_cost, time_cost, parallelism = (
        _parse_uint32(name, item.partition("=")[2]) for name, item in zip(names, items, strict=True)
    )
    return memory_cost, time_cost, parallelism


def _parse_uint32(name: str, digits: str) -> int:
    if not (digits and _DIGITS.issuperset(digits) and (digits == "0" or digits[0] != "0")):
        raise InvalidHashError(
            f"{name}= must be a decimal number without sign or leading zeros,"
            f" got {_shorten(digits)}"
        )
    if len(digits) > _MAX_UINT32_DIGITS or int(digits) > UINT32_MAX:
        raise InvalidHashError(f"{name}= does not fit in 32 bits: {_shorten(digits)}")
    return int(digits)


def _b64encode(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii").rstrip("=")


def _b64decode(name: str, text: str) -> bytes:
    # Contents of salt and tag are not echoed: the message says which rule failed.
    if not text:
        raise InvalidHashError(f"{name} is empty")
    if not _BASE64.issuperset(text):
        raise InvalidHashError(
            f"{name} must be unpadded standard base64 (A-Z a-z 0-9 + /),"
            " without '=' or any other character"
        )
    if len(text) % 4 == 1:
        # One leftover character carries only 6 bits, not a whole byte.
        raise InvalidHashError(f"{name} has an impossible base64 length ({len(text)} characters)")
    data = binascii.a2b_base64(text + "=" * (-len(text) % 4), strict_mode=True)
    # The last character may carry unused low bits; the reference requires them to be
    # zero. Re-encoding reproduces the text exactly when they are.
    if _b64encode(data) != text:
        raise InvalidHashError(
            f"{name} is not canonical base64: unused bits in its last character are set"
        )
    return data


def _check_uint32(name: str, value: object) -> None:
    # bool is an int subclass, but True as a cost is almost surely a mistake.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ParameterTypeError(f"{name} must be an int, got {_type_name(value)}")
    if not 0 <= value <= UINT32_MAX:
        raise ParameterError(f"{name} must be in 0..{UINT32_MAX}, got {value}")


def _check_nonempty_bytes(name: str, value: object) -> None:
    if not isinstance(value, bytes):
        raise ParameterTypeError(f"{name} must be bytes, got {_type_name(value)}")
    if not value:
        raise ParameterError(f"{name} must not be empty")


def _type_name(value: object) -> str:
    return type(value).__name__


def _shorten(text: str, limit: int = 40) -> str:
    # Keeps messages readable when someone passes a megabyte of junk.
    return repr(text if len(text) <= limit else text[:limit] + "...")
