"""A pwdlib hasher on argonishche: ``PasswordHash((Argon2Hasher(),))`` without argon2-cffi.

``argonishche.contrib.pwdlib.Argon2Hasher`` takes the place of pwdlib's
``pwdlib.hashers.argon2.Argon2Hasher`` (which needs argon2-cffi, pwdlib's ``argon2`` extra).  It
imports neither pwdlib nor argon2-cffi: pwdlib's ``PasswordHash`` takes any object with the
methods of its ``HasherProtocol``, and this class has them, with the same names and arguments.
Nothing is put in ``sys.modules``, so an ``import argon2`` elsewhere in the process still gets
argon2-cffi, or fails if it is not installed.

The same as pwdlib's hasher:

- the constructor's arguments, their order and defaults (``time_cost=3``, ``memory_cost=65536``
  KiB, ``parallelism=4``, ``hash_len=32``, ``salt_len=16``, ``type`` Argon2id): so the strings
  and costs are the same, hashes either hasher made verify with the other, and switching makes
  no stored hash "need a rehash";
- ``identify``: the same test of the string's shape (``$argon2id$``, ``$argon2i$`` or
  ``$argon2d$``, an optional ``v=``, then ``m=,t=,p=``), True or False, never reading the costs;
- ``hash(password, *, salt=None)`` returns a str; ``verify(password, hash)`` returns True or
  False; a str password is hashed as UTF-8, a str or bytes hash is read; anything else is a
  ``TypeError("password must be str or bytes")`` (or ``"hash must ..."``), as from pwdlib.

What differs is how a stored hash is trusted.  ``verify`` and ``check_needs_rehash`` take the
costs from the stored string, which a tampered row or an imported dump controls: pwdlib's hasher
runs ``t=4294967295`` as written (for hours), and raises ``UnicodeEncodeError`` for a string with
non-ASCII digits in it.  Here every stored hash is read within ``Argon2Hasher.limits`` (an
:class:`argonishche.Limits`, default ``Limits()``), before anything is allocated, its length
before it is even parsed.

Errors follow the installed pwdlib, told apart by the exceptions it has (looked up when one is
needed: importing this module still imports no pwdlib):

- pwdlib 0.4 and later (``pwdlib.exceptions.HashVerificationError`` exists): ``verify`` answers
  False for a wrong password only.  A hash it can never run here raises
  ``HashVerificationError`` (its ``__cause__`` says why): malformed, over the limits, or within
  them but asking for more than the process's whole work-memory budget (a
  :class:`argonishche.MemoryBudgetError`).  ``hash`` raises ``HashGenerationError`` for a salt
  it cannot use (shorter than 8 bytes) or a failure of the C driver;
- pwdlib 0.3 (neither exception), or no pwdlib installed: ``verify`` answers False for those
  hashes too, as pwdlib 0.3's hasher does for a malformed one, and ``hash`` raises
  :class:`argonishche.ParameterError` for such a salt.

With either, memory that is only not there now raises, since the password was not checked and
False would refuse a right one: :class:`argonishche.MemoryBudgetTimeout` (a ``TimeoutError``)
after waiting too long for room in a busy server's budget, and
:class:`argonishche.ArgonishcheMemoryError` when the OS refuses memory within the budget (answer
them with HTTP 503, as FastAPI's exception handlers can).  ``check_needs_rehash`` answers True
for any hash other than one this hasher would make, including those it cannot read (pwdlib's
raises for some of those, answers True for others).

An argon2-cffi ``argon2.Type`` member is accepted as ``type`` (read by its name), so code that
passed one keeps working where argon2-cffi is installed.
"""

from __future__ import annotations

import enum
import importlib
import re

from argonishche import Limits, PasswordHasher, Type
from argonishche._parameter_checks import TypeLike
from argonishche._password_hasher import (
    DEFAULT_HASH_LENGTH,
    DEFAULT_MEMORY_COST,
    DEFAULT_PARALLELISM,
    DEFAULT_RANDOM_SALT_LENGTH,
    DEFAULT_TIME_COST,
)
from argonishche.exceptions import (
    HashingError,
    InvalidHashError,
    MemoryBudgetError,
    ParameterError,
    ParameterTypeError,
    VerificationError,
    VerifyMismatchError,
)

__all__ = ["Argon2Hasher"]

# The shape pwdlib's identify accepts, matched against the whole string: type, optional version,
# the three costs, then optionally a salt field and a tag.  Every repetition is followed by a
# character it cannot match ("$", ",", the end), so matching is linear in the string's length
# (pwdlib tests identify on a 173 KB string).  \d is any Unicode digit, as in pwdlib's pattern:
# identify answers as pwdlib's does, and verify refuses such digits.
_SHAPE = re.compile(r"\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+(?:\$[^$]+(?:\$.+)?)?")


def _require_str_or_bytes(value: object, name: str) -> None:
    # pwdlib's own check and message: callers (and pwdlib's tests) match on the text.
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be str or bytes")


def _pwdlib_exception(name: str) -> type[Exception] | None:
    """pwdlib's exception class *name* if the installed pwdlib has it (0.4 on), else None.

    Looked up when an error needs it, never at import: this module imports without pwdlib, and
    with it follows whichever release is installed.
    """
    try:
        exceptions = importlib.import_module("pwdlib.exceptions")
    except ImportError:
        return None
    found = getattr(exceptions, name, None)
    return found if isinstance(found, type) and issubclass(found, Exception) else None


def _argon2_type(value: TypeLike | enum.Enum) -> TypeLike:
    """argon2-cffi's ``argon2.Type`` is a plain Enum (D, I, ID), not an int: read its name."""
    if isinstance(value, enum.Enum) and not isinstance(value, Type):
        return value.name
    return value


class Argon2Hasher:
    """pwdlib's ``Argon2Hasher`` (its ``HasherProtocol``) on argonishche's Argon2."""

    def __init__(self, time_cost: int = DEFAULT_TIME_COST,
                 memory_cost: int = DEFAULT_MEMORY_COST,
                 parallelism: int = DEFAULT_PARALLELISM, hash_len: int = DEFAULT_HASH_LENGTH,
                 salt_len: int = DEFAULT_RANDOM_SALT_LENGTH,
                 type: TypeLike | enum.Enum = Type.ID,  # noqa: A002 - pwdlib's argument name
                 *, limits: Limits | None = None) -> None:
        """Arguments as pwdlib's; invalid costs are refused here (a ParameterError).

        :param limits: the most a stored hash may ask for before ``verify`` refuses it unrun
            (default ``argonishche.Limits()``, which admits every published profile).
            This hasher's own costs must be within them (else UnsupportedParametersError).
        """
        self._hasher = PasswordHasher(time_cost, memory_cost, parallelism, hash_len, salt_len,
                                      "utf-8", _argon2_type(type), limits=limits)

    @property
    def limits(self) -> Limits:
        return self._hasher.limits

    def __repr__(self) -> str:
        hasher = self._hasher
        return (f"Argon2Hasher(time_cost={hasher.time_cost}, memory_cost={hasher.memory_cost}, "
                f"parallelism={hasher.parallelism}, hash_len={hasher.hash_len}, "
                f"salt_len={hasher.salt_len}, type={hasher.type.label!r})")

    @classmethod
    def identify(cls, hash: str | bytes) -> bool:  # noqa: A002
        """True if *hash* is shaped like an Argon2 PHC string (pwdlib's test; costs unread)."""
        _require_str_or_bytes(hash, "hash")
        if isinstance(hash, bytes):
            try:
                hash = hash.decode("utf-8")
            except UnicodeDecodeError:
                return False
        return _SHAPE.fullmatch(hash) is not None

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        """A PHC string for *password* with a fresh random salt (or *salt*: at least 8 bytes).

        A salt that cannot be used, or a failure of the C driver, raises pwdlib 0.4's
        ``HashGenerationError`` (from the ParameterError or HashingError), with pwdlib 0.3 the
        error itself.
        """
        _require_str_or_bytes(password, "password")
        try:
            return self._hasher.hash(password, salt=salt)
        except ParameterTypeError:
            raise  # a salt that is not bytes: a TypeError, as from pwdlib's own hasher
        except (ParameterError, HashingError) as error:
            generation_error = _pwdlib_exception("HashGenerationError")
            if generation_error is None:
                raise
            raise generation_error() from error

    def verify(self, password: str | bytes, hash: str | bytes) -> bool:  # noqa: A002
        """True if *password* matches *hash*, False if not.

        A hash that can never be run here (malformed, over the limits, or more memory than the
        whole budget) raises pwdlib 0.4's ``HashVerificationError``; with pwdlib 0.3 it is False.
        """
        _require_str_or_bytes(password, "password")
        _require_str_or_bytes(hash, "hash")
        try:
            return self._hasher.verify(hash, password)
        except VerifyMismatchError:
            return False
        except (VerificationError, MemoryBudgetError) as error:
            # No password can ever be checked against this hash here.  pwdlib 0.4 says so with
            # HashVerificationError, so no server answers "wrong password" for it; pwdlib 0.3
            # has no such error and answers False.  MemoryBudgetTimeout and other memory errors
            # (only not there now) are neither: they raise as themselves, for an HTTP 503.
            verification_error = _pwdlib_exception("HashVerificationError")
            if verification_error is None:
                return False
            raise verification_error() from error

    def check_needs_rehash(self, hash: str | bytes) -> bool:  # noqa: A002
        """True if *hash* was not made with this hasher's parameters, or cannot be read."""
        _require_str_or_bytes(hash, "hash")
        try:
            return self._hasher.check_needs_rehash(hash)
        except InvalidHashError:
            return True  # it can never verify here: only a new hash lets the user in again
