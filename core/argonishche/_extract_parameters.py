"""What a stored hash says about how it was made, read the lenient way argon2-cffi users rely on.

:func:`extract_parameters` reads only the structure of a PHC string (type, version, costs and the
lengths of its base64 fields), never its base64 contents and never against any
:class:`~argonishche.Limits`: ``check_needs_rehash`` must answer "yes, replace it" for a hash that
asks for absurd costs, not refuse to look at it.  Hashing and verifying read hashes strictly
(``_phc`` and ``Limits``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._parameter_checks import Type
from .exceptions import InvalidHashError

#: The version a PHC string without ``$v=`` has: such strings come from before Argon2 1.3, and
#: the reference implementation's decoder reads them as 0x10.  (argon2-cffi reports 18 for them,
#: which names no Argon2 version; see docs/migration/argon2-cffi.md.)
VERSION_WITHOUT_FIELD = 0x10

_TYPE_NAMES = {"argon2d": Type.D, "argon2i": Type.I, "argon2id": Type.ID}
_COST_KEYS = frozenset("mtp")


@dataclass(frozen=True, slots=True)
class Parameters:
    """The parameters of an Argon2 hash, field for field argon2-cffi's ``Parameters``.

    ``PasswordHasher.from_parameters`` builds a hasher from one; ``check_needs_rehash`` compares
    a hash's with its hasher's.  Frozen: the shared profiles cannot be changed by accident.
    """

    type: Type
    version: int
    salt_len: int
    hash_len: int
    time_cost: int
    memory_cost: int
    parallelism: int


def decoded_len(encoded_len: int) -> int:
    """Bytes that *encoded_len* characters of unpadded base64 decode to: 6 bits a character,
    whole bytes only (4k + 1 characters, which no encoder writes, count as 4k)."""
    return encoded_len * 3 // 4


def _number(key: str, text: str, encoded: str) -> int:
    # Digits only: int() would also take "+5", " 5" and "5_0", which no encoder writes.
    if not (text.isascii() and text.isdigit()):
        raise InvalidHashError(f"{key}= must be a decimal number in {encoded!r:.80}")
    try:
        return int(text)
    except ValueError:  # longer than int() converts (sys.get_int_max_str_digits)
        raise InvalidHashError(f"{key}= is too long a number") from None


def extract_parameters(hash: str | bytes) -> Parameters:  # noqa: A002 - argon2-cffi's name
    """The :class:`Parameters` of the PHC string *hash*, as argon2-cffi's function of this name
    gives them (except that a string without ``v=`` is version 16, see
    ``VERSION_WITHOUT_FIELD``).

    Costs are not checked against any range or limit; InvalidHashError if the structure is not
    ``$argon2<d|i|id>[$v=<n>]$m=<n>,t=<n>,p=<n>$<salt>$<tag>`` (the costs in any order).
    """
    return Parameters(*parameter_fields(hash))


def parameter_fields(hash: str | bytes) -> tuple[Type, int, int, int, int, int, int]:  # noqa: A002
    """:func:`extract_parameters`' answer as a tuple in :class:`Parameters`' field order, which
    ``check_needs_rehash`` compares as it is: a frozen dataclass costs about 0.9 us to make."""
    if isinstance(hash, (bytes, bytearray)):
        try:
            hash = bytes(hash).decode("ascii")
        except UnicodeDecodeError:
            raise InvalidHashError("an encoded hash is ASCII") from None
    if not isinstance(hash, str):
        raise InvalidHashError(f"an encoded hash is a str or bytes, not {type(hash).__name__}")
    fields = hash.split("$")
    if len(fields) == 5:
        fields.insert(2, f"v={VERSION_WITHOUT_FIELD}")
    if len(fields) != 6 or fields[0] or fields[1] not in _TYPE_NAMES:
        raise InvalidHashError(f"not an Argon2 PHC string: {hash!r:.80}")
    _, type_name, version_field, costs_field, salt, tag = fields
    if not version_field.startswith("v="):
        raise InvalidHashError(f"expected v=<version>, got {version_field!r:.40}")
    costs: dict[str, int] = {}
    for item in costs_field.split(","):
        key, equals, value = item.partition("=")
        if not equals or key not in _COST_KEYS or key in costs:
            raise InvalidHashError(f"expected m=<n>,t=<n>,p=<n>, got {costs_field!r:.80}")
        costs[key] = _number(key, value, hash)
    if costs.keys() != _COST_KEYS:
        raise InvalidHashError(f"expected m=<n>,t=<n>,p=<n>, got {costs_field!r:.80}")
    return (_TYPE_NAMES[type_name], _number("v", version_field[2:], hash),
            decoded_len(len(salt)), decoded_len(len(tag)), costs["t"], costs["m"], costs["p"])
