"""The exceptions argonishche raises.

Every error the library raises on purpose derives from :class:`ArgonishcheError`, so callers can
catch one class. Bad input is also a :class:`ValueError` (a wrong type is a :class:`TypeError` as
well), matching what argon2-cffi and hashlib users already catch.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing


#: How many characters of a value a message shows (:func:`echo`).
ECHO_LIMIT = 80


def echo(value: str, *, quoted: bool = True, limit: int = ECHO_LIMIT) -> str:
    """*value* for a message: its repr() (or the text itself, *quoted* False), cut after *limit*
    characters of the value, which then says how long the value was.

    Every setting value and every name a caller gives is echoed through this: a value comes from
    the environment or an application's caller, and a message (an error logged per request, a
    warning per process) must not carry 100 KB of it.
    """
    text = str(value)
    shown = text[:limit]
    shown = repr(shown) if quoted else shown
    return shown if len(text) <= limit else f"{shown}... ({len(text)} characters)"


class ArgonishcheError(Exception):
    """Base class of every error argonishche raises on purpose."""


class ParameterError(ArgonishcheError, ValueError):
    """A parameter is outside its allowed range; the message names it and the range."""


class ParameterTypeError(ParameterError, TypeError):
    """A parameter has the wrong type (both a ValueError and a TypeError)."""


class ParameterOverflowError(ParameterError, OverflowError):
    """A parameter too large (or too far below zero) for its field, where hashlib raises
    :class:`OverflowError` (``blake2b(leaf_size=2**32)``): also a :class:`ParameterError`."""


class UnsupportedParametersError(ParameterError):
    """Valid Argon2 parameters that this hasher will not use: a :class:`PasswordHasher` whose
    own costs are over the :class:`~argonishche.Limits` it verifies with (it could not verify its
    own hashes).  argon2-cffi's name, and like argon2-cffi's a ``ValueError``."""


class SettingError(ParameterError):
    """An ``ARGONISHCHE_*`` environment variable has a value that is not allowed.

    Raised at first use (the first hash, ``backends()``, ``info``); the message names the
    variable, its value and what is allowed.
    """

    def __init__(self, variable: str, value: str, allowed: str) -> None:
        super().__init__(f"{variable}={echo(value)}: must be {allowed}")
        self.variable, self.value, self.allowed = variable, value, allowed

    def __reduce__(self) -> tuple[type[SettingError], tuple[str, str, str], dict[str, object]]:
        # The default would call __init__ with the message alone.  The instance dict goes along as
        # the state, as BaseException.__reduce__ sends it: attributes and notes added after
        # __init__ (add_note() keeps __notes__ there) survive pickle and copy.
        return type(self), (self.variable, self.value, self.allowed), self.__dict__


class VerificationError(ArgonishcheError):
    """Verification failed (base class of :class:`VerifyMismatchError`)."""


class VerifyMismatchError(VerificationError):
    """The password (or secret / associated data) does not match the hash."""


class InvalidHashError(VerificationError, ValueError):
    """An encoded hash string is malformed or uses an unsupported variant.

    It is a :class:`VerificationError`: a stored hash that cannot be read cannot be verified, so
    ``except VerificationError: return False`` (how Django's and many applications' login code
    treat argon2-cffi) refuses the login instead of failing with an uncaught exception.  It is a
    ``ValueError`` too, as argon2-cffi's is.  ``InvalidHash`` is argon2-cffi's older name for it.
    """


InvalidHash = InvalidHashError


class LimitExceededError(InvalidHashError):
    """An encoded hash asks for more work than the :class:`~argonishche.Limits` in force allow.

    Raised before any work memory is allocated.  It is an :class:`InvalidHashError`, so handlers
    of malformed hashes catch it too; the message names the field, its value, the limit and how
    to raise it.
    """


class BackendError(ArgonishcheError, RuntimeError):
    """No usable kernel backend, or a forced / requested backend cannot be used."""


class HashingError(ArgonishcheError, RuntimeError):
    """The C driver reported a failure (for example, a thread could not be started)."""


class ArgonishcheMemoryError(ArgonishcheError, MemoryError):
    """The Argon2 work memory could not be allocated; the message gives the size asked for.

    ``argon2_hash``, ``argon2_verify``, ``PasswordHasher`` and ``hash_many`` raise it, also
    for a stored hash within the :class:`~argonishche.Limits` that asks for more memory than
    the process can get now, or more than its whole work-memory budget
    (:class:`MemoryBudgetError`).  It is deliberately not a :class:`VerificationError`: a server can
    tell "no memory now" (retry, HTTP 503) from a wrong password.  The adapters answer as their
    peers do instead: ``argonishche.argon2_cffi`` with ``VerificationError("Memory allocation
    error")`` (``HashingError`` when hashing), the Django hasher with False.
    """

    # MemoryError has a __new__ of its own (CPython's free list), and it comes before Exception
    # in this class's MRO, so cls.__new__ was MemoryError.__new__.  Instances are really made by
    # BaseException's tp_new, which this class inherits from its layout base ArgonishcheError,
    # so CPython refused "MemoryError.__new__(ArgonishcheMemoryError) is not safe".  Unpicklers
    # that start from a blank cls.__new__(cls) then failed: tblib does for exception classes
    # whose __init__ is not BaseException's (here MemoryError's counts), and dask.distributed
    # installs tblib's reducer for every exception class, so this error reached Dask clients as
    # a bare Exception.  Exception.__new__ is the constructor the instances get anyway (the
    # tp_new slot stays BaseException's); naming it makes cls.__new__(cls) safe.
    if not TYPE_CHECKING:  # to a type checker it is MemoryError's constructor either way
        __new__ = Exception.__new__


class MemoryBudgetError(ArgonishcheMemoryError):
    """A hash needs more work memory than the process's whole work-memory budget
    (:func:`argonishche.memory_budget`): refused at once, before anything is allocated, with the
    budget, where it came from and the hash's needs in the message.  It is an
    :class:`ArgonishcheMemoryError`: no wait will bring that memory, so a stored hash that asks
    for it can never be checked in this process (the login adapters answer such a hash False).
    """

    #: Bytes the hash needs, and the budget's bytes.
    needed: int
    budget: int


class MemoryBudgetTimeout(ArgonishcheError, TimeoutError):
    """A hash waited longer than allowed (``ARGONISHCHE_MEMORY_WAIT_SECONDS``, default 10 s) for
    room in the process's work-memory budget: the server is busy, the password was not checked.

    Attributes ``needed``, ``budget`` (bytes) and ``waited`` (seconds).  Deliberately neither a
    :class:`VerificationError` nor a :class:`MemoryError`: a right password must never be
    reported wrong because the server is busy, and none of the adapters turns this into False
    or into argon2-cffi's ``VerificationError``.  Answer it as a server answers overload (HTTP
    503 with ``Retry-After``; ``argonishche.contrib.django.ServerBusyMiddleware`` does for
    Django).  A :class:`TimeoutError`, so code that retries timeouts retries this.
    """

    needed: int
    budget: int
    waited: float
