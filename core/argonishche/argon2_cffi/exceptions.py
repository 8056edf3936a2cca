"""argon2-cffi's exception names, as argonishche's own classes.

``VerificationError`` is the base of ``VerifyMismatchError`` and of ``InvalidHashError`` (in
argon2-cffi the latter is only a ``ValueError``): a hash that cannot be read is never verified.
``Argon2Error``, argon2-cffi's base of ``VerificationError`` and ``HashingError``, is
:class:`~argonishche.ArgonishcheError`, theirs here.
"""

from __future__ import annotations

from ..exceptions import (
    ArgonishcheError,
    HashingError,
    InvalidHash,
    InvalidHashError,
    UnsupportedParametersError,
    VerificationError,
    VerifyMismatchError,
)

#: argon2-cffi's base of its errors (``except Argon2Error``): argonishche's base of its own.
Argon2Error = ArgonishcheError

__all__ = ["Argon2Error", "HashingError", "InvalidHash", "InvalidHashError",
           "UnsupportedParametersError", "VerificationError", "VerifyMismatchError"]
