"""argon2-cffi's ``PasswordHasher``: argonishche's, answering memory errors as argon2-cffi does.

Everything else is inherited unchanged, so the two differ in nothing but that (see
:mod:`argonishche.argon2_cffi._memory_errors`): an instance of this one is an
``argonishche.PasswordHasher`` too.
"""

from __future__ import annotations

from typing import Literal

from .. import _password_hasher
from .._parameter_checks import Buffer
from ..exceptions import HashingError, VerificationError
from ._memory_errors import answered_as


class PasswordHasher(_password_hasher.PasswordHasher):
    __doc__ = _password_hasher.PasswordHasher.__doc__

    def hash(self, password: Buffer | str, *, salt: Buffer | None = None) -> str:
        """As ``argonishche.PasswordHasher.hash``; work memory that cannot be allocated is
        ``HashingError("Memory allocation error")``, as in argon2-cffi."""
        with answered_as(HashingError):
            return super().hash(password, salt=salt)

    def verify(self, hash: str | bytes,  # noqa: A002 - argon2-cffi's parameter name
               password: Buffer | str) -> Literal[True]:
        """As ``argonishche.PasswordHasher.verify``; work memory that cannot be allocated (a
        stored hash asking for more than the process can get) is
        ``VerificationError("Memory allocation error")``, as in argon2-cffi, so login code that
        refuses on ``VerificationError`` refuses instead of failing."""
        with answered_as(VerificationError):
            return super().verify(hash, password)
