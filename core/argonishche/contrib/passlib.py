"""An Argon2 handler for passlib's ``CryptContext`` (libpass, passlib's maintained fork).

libpass's own ``passlib.hash.argon2`` runs only on argon2-cffi: it imports ``argon2`` and reads
argon2-cffi's installed metadata (``importlib.metadata.version("argon2_cffi")``), so a
``sys.modules`` alias does not satisfy it, and its backend list is fixed.  This module does not
touch that handler.  ``argon2`` here is a separate handler with the methods of passlib's
documented password-hash interface (``passlib.ifc.PasswordHash``: ``name``, ``setting_kwds``,
``context_kwds``, ``using``, ``hash``, ``verify``, ``identify``, ``needs_update``), which is all
``CryptContext`` calls; pass it in ``schemes``::

    CryptContext(schemes=[argonishche.contrib.passlib.argon2])

It imports neither passlib nor argon2-cffi.  Its name is ``"argon2"`` and its strings and
default costs are those libpass's handler makes with a current argon2-cffi (Argon2id, t=3,
64 MiB, p=4, 16-byte salt, 32-byte tag), so each verifies the other's hashes and switching makes
none "need an update".  Settings (``CryptContext(..., argon2__memory_cost=...)`` or
``argon2.using(...)``): ``type``, ``time_cost`` (or ``rounds``), ``memory_cost``,
``parallelism``, ``digest_size``, ``salt_size``.

As with the pwdlib hasher, stored hashes are read within :attr:`argon2.limits` before anything
is allocated: ``verify`` answers False for a wrong password and for a hash it can never run
here (malformed, over the limits, or over the process's whole work-memory budget), where libpass
raises ``ValueError`` for a malformed one and runs any costs a string asks for; ``needs_update``
answers True for those.  Memory that is only not there now raises
(:class:`argonishche.MemoryBudgetTimeout`, :class:`argonishche.ArgonishcheMemoryError`): the
password was not checked, so it is not wrong either.  Not provided: ``genconfig`` and
``genhash``, deprecated in passlib.
"""

from __future__ import annotations

import builtins
from typing import Any, ClassVar, cast

from argonishche import Limits, PasswordHasher
from argonishche.exceptions import InvalidHashError, MemoryBudgetError, VerificationError

__all__ = ["argon2"]

_PREFIXES = ("$argon2id$", "$argon2i$", "$argon2d$")


def _secret(secret: object) -> str | bytes:
    if not isinstance(secret, (str, bytes)):
        raise TypeError(f"secret must be str or bytes, not {type(secret).__name__}")
    return secret


class argon2:  # noqa: N801 - passlib's handlers are named like their scheme
    """Argon2 for passlib's CryptContext, on argonishche (see the module's docstring)."""

    name: ClassVar[str] = "argon2"
    setting_kwds: ClassVar[tuple[str, ...]] = (
        "type", "rounds", "time_cost", "memory_cost", "parallelism", "digest_size", "salt_size")
    context_kwds: ClassVar[tuple[str, ...]] = ()
    is_disabled: ClassVar[bool] = False
    truncate_size: ClassVar[int | None] = None

    # passlib's setting names; "type" shadows the builtin in this class body (builtins.type).
    type: ClassVar[str] = "id"
    time_cost: ClassVar[int] = 3
    memory_cost: ClassVar[int] = 65536
    parallelism: ClassVar[int] = 4
    digest_size: ClassVar[int] = 32
    salt_size: ClassVar[int] = 16
    #: What a stored hash may ask for before it is refused unrun (a subclass may change it).
    limits: ClassVar[Limits] = Limits()

    @classmethod
    def _hasher(cls) -> PasswordHasher:
        return PasswordHasher(cls.time_cost, cls.memory_cost, cls.parallelism, cls.digest_size,
                              cls.salt_size, "utf-8", cls.type, limits=cls.limits)

    @classmethod
    def using(cls, relaxed: bool = False, **settings: Any) -> builtins.type[argon2]:
        """A subclass with *settings*; invalid costs are a ParameterError (a ValueError) here.

        *relaxed* is accepted for CryptContext, which passes it; nothing is relaxed."""
        if "rounds" in settings:
            if "time_cost" in settings:
                raise TypeError("'time_cost' and 'rounds' are mutually exclusive")
            settings["time_cost"] = settings.pop("rounds")
        unknown = set(settings) - set(cls.setting_kwds)
        if unknown:  # the text CryptContext turns into its KeyError for an unknown setting
            raise TypeError(f"using() got an unexpected keyword argument '{min(unknown)}'")
        if "type" in settings:
            settings["type"] = str(settings["type"]).lower().removeprefix("argon2")
        subclass = cast("builtins.type[argon2]", builtins.type(cls.__name__, (cls,), settings))
        subclass._hasher()  # the costs are checked now, not at the first hash
        return subclass

    @classmethod
    def identify(cls, hash: str | bytes) -> bool:  # noqa: A002 - passlib's argument name
        """True for a string starting like an Argon2 PHC string (its costs unread)."""
        if isinstance(hash, bytes):
            return hash.startswith(tuple(prefix.encode() for prefix in _PREFIXES))
        if isinstance(hash, str):
            return hash.startswith(_PREFIXES)
        raise TypeError(f"hash must be str or bytes, not {type(hash).__name__}")

    @classmethod
    def hash(cls, secret: str | bytes, **kwds: Any) -> str:  # noqa: A003
        """A PHC string for *secret* (UTF-8 if a str) with this class's settings."""
        if kwds:
            return cls.using(**kwds).hash(secret)
        return cls._hasher().hash(_secret(secret))

    @classmethod
    def verify(cls, secret: str | bytes, hash: str | bytes) -> bool:  # noqa: A002
        """True if *secret* matches *hash*; False if not, or if *hash* cannot be run here."""
        if not isinstance(hash, (str, bytes)):
            raise TypeError(f"hash must be str or bytes, not {type(hash).__name__}")
        try:
            return cls._hasher().verify(hash, _secret(secret))
        except (VerificationError, MemoryBudgetError):  # a wrong secret; a hash that is
            # malformed, over the limits, or over the process's whole work-memory budget (never
            # runnable here).  Memory that is only not there now raises (MemoryBudgetTimeout,
            # ArgonishcheMemoryError): the secret was not checked, so it is not wrong either.
            return False

    @classmethod
    def needs_update(cls, hash: str | bytes, secret: str | bytes | None = None) -> bool:  # noqa: A002
        """True if *hash* was not made with this class's settings, or cannot be read."""
        try:
            return cls._hasher().check_needs_rehash(hash)
        except InvalidHashError:
            return True
