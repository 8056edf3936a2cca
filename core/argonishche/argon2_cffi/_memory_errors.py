"""argon2-cffi's answer when Argon2's work memory cannot be allocated.

argon2-cffi reports its C library's ``ARGON2_MEMORY_ALLOCATION_ERROR`` like any other failure of
that call: ``VerificationError("Memory allocation error")`` from ``verify`` and
``verify_secret``, ``HashingError("Memory allocation error")`` from ``hash`` and the
``hash_secret*`` functions.  Code written for it catches ``VerificationError`` around a login
and refuses the password (Django's hasher does), so the adapter answers the same way, where
argonishche's own API raises :class:`~argonishche.ArgonishcheMemoryError` (a hash larger than
the process's whole work-memory budget included: :class:`~argonishche.MemoryBudgetError`).  The
original error, with the size that was asked for, stays the new one's ``__cause__``.

:class:`~argonishche.MemoryBudgetTimeout` is not answered so: it says the server is busy, not
that the hash cannot be run, and argon2-cffi has no error for that.  Turned into a
``VerificationError`` it would make such code refuse a right password; it passes through as it
is (a ``TimeoutError``), for the application to answer as overload.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..exceptions import ArgonishcheMemoryError, HashingError, VerificationError

#: argon2-cffi's text for the error (its ``error_to_str(ARGON2_MEMORY_ALLOCATION_ERROR)``).
MESSAGE = "Memory allocation error"


@contextlib.contextmanager
def answered_as(error: type[VerificationError] | type[HashingError]) -> Iterator[None]:
    """Within it, an ArgonishcheMemoryError becomes ``error(MESSAGE)``, as argon2-cffi's."""
    try:
        yield
    except ArgonishcheMemoryError as exc:
        raise error(MESSAGE) from exc
