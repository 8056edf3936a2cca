"""argon2-cffi's exception names, as argonishche's own classes.

``VerificationError`` is the base of ``VerifyMismatchError`` and of ``InvalidHashError`` (in
argon2-cffi the latter is only a ``ValueError``): a hash that cannot be read is never verified.
"""

from __future__ import annotations

from ..exceptions import (
    HashingError,
    InvalidHash,
    InvalidHashError,
    UnsupportedParametersError,
    VerificationError,
    VerifyMismatchError,
)

__all__ = ["HashingError", "InvalidHash", "InvalidHashError", "UnsupportedParametersError",
           "VerificationError", "VerifyMismatchError"]
