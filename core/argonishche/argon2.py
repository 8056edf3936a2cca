"""Argon2 hashing and verification: the functions most users call.

Each call checks its parameters, asks the registry for the selected kernel tables (two pointer
lookups after the first call) and makes one C call, with the GIL released while it runs.
"""

from __future__ import annotations

from . import driver, phc, registry
from .errors import InvalidHashError, ParameterError, VerifyMismatchError
from .params import MIN_SALT_LEN, Argon2Params, byte_buffer, to_type

DEFAULTS = dict(type="id", time_cost=3, memory_cost=65536, parallelism=4, hash_len=32,
                version=0x13)


def _compute(params: Argon2Params, password, salt, secret, associated_data, threads,
             backend) -> bytes:
    reg = registry.get()
    argon2_table = reg.kernel_table("argon2", backend)
    blake2b_table = reg.kernel_table("blake2b", backend)
    return driver.argon2(
        argon2_table, blake2b_table, type=params.type.label, version=params.version,
        time_cost=params.time_cost, memory_cost=params.memory_cost,
        parallelism=params.parallelism, threads=params.threads(threads),
        password=byte_buffer("password", password, allow_str=True),
        salt=byte_buffer("salt", salt, min_len=MIN_SALT_LEN),
        secret=byte_buffer("secret", secret),
        associated_data=byte_buffer("associated_data", associated_data),
        hash_len=params.hash_len)


def argon2_hash(password, salt, *, type=DEFAULTS["type"], time_cost=DEFAULTS["time_cost"],
                memory_cost=DEFAULTS["memory_cost"], parallelism=DEFAULTS["parallelism"],
                hash_len=DEFAULTS["hash_len"], secret=b"", associated_data=b"",
                version=DEFAULTS["version"], threads=None, backend=None) -> bytes:
    """The raw Argon2 tag of *password* (str is UTF-8 encoded) and *salt* (>= 8 bytes).

    :param type: ``"id"`` (default), ``"i"``, ``"d"`` or :class:`argonishche.Type`.
    :param memory_cost: m in KiB, at least 8 * parallelism; any value, no preset sizes.
    :param threads: C threads filling the lanes (1..parallelism); default: one per lane, at
        most one per CPU.  Never changes the result.
    :param backend: use this backend instead of the selected one (e.g. ``"ref"``).
    """
    params = Argon2Params.check(type=type, version=version, time_cost=time_cost,
                                memory_cost=memory_cost, parallelism=parallelism,
                                hash_len=hash_len)
    return _compute(params, password, salt, secret, associated_data, threads, backend)


def argon2_hash_encoded(password, salt, *, type=DEFAULTS["type"],
                        time_cost=DEFAULTS["time_cost"], memory_cost=DEFAULTS["memory_cost"],
                        parallelism=DEFAULTS["parallelism"], hash_len=DEFAULTS["hash_len"],
                        secret=b"", associated_data=b"", version=DEFAULTS["version"],
                        threads=None, backend=None) -> str:
    """Like :func:`argon2_hash`, as a PHC string ``$argon2id$v=19$m=...,t=...,p=...$salt$tag``."""
    params = Argon2Params.check(type=type, version=version, time_cost=time_cost,
                                memory_cost=memory_cost, parallelism=parallelism,
                                hash_len=hash_len)
    tag = _compute(params, password, salt, secret, associated_data, threads, backend)
    return phc.encode(params.type.label, params.version, params.memory_cost, params.time_cost,
                      params.parallelism, bytes(byte_buffer("salt", salt)), tag)


def params_of(encoded) -> tuple[Argon2Params, bytes, bytes]:
    """(parameters, salt, tag) of a PHC string; InvalidHashError if it is malformed."""
    decoded = phc.decode(encoded)
    try:
        params = Argon2Params.check(type=decoded.type, version=decoded.version,
                                    time_cost=decoded.time_cost,
                                    memory_cost=decoded.memory_cost,
                                    parallelism=decoded.parallelism, hash_len=len(decoded.tag))
        byte_buffer("salt", decoded.salt, min_len=MIN_SALT_LEN)
    except ParameterError as exc:
        raise InvalidHashError(f"hash has invalid parameters: {exc}") from None
    return params, decoded.salt, decoded.tag


def argon2_verify(encoded, password, *, secret=b"", associated_data=b"", threads=None,
                  backend=None) -> bool:
    """True if *password* matches the PHC string *encoded*.

    :raises VerifyMismatchError: the password (or secret / associated data) is wrong.
    :raises InvalidHashError: *encoded* is not a valid Argon2 PHC string.
    """
    params, salt, expected = params_of(encoded)
    from hmac import compare_digest  # imported here: only verification needs hashlib loaded

    tag = _compute(params, password, salt, secret, associated_data, threads, backend)
    if not compare_digest(tag, expected):  # constant time in the tag's contents
        raise VerifyMismatchError("the password does not match the hash")
    return True


def type_of(encoded) -> str:
    """``"d"``, ``"i"`` or ``"id"`` of a PHC string (for PasswordHasher and tools)."""
    return to_type(phc.decode(encoded).type).label
