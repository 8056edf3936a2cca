"""A Django password hasher that reads stored hashes through argonishche's limits.

``argonishche.contrib.django.Argon2PasswordHasher`` takes the place of Django's own
``django.contrib.auth.hashers.Argon2PasswordHasher`` (which needs argon2-cffi): the same
algorithm name, the same strings and, unless a subclass changes them, the same costs, so hashes
either one made verify with the other and switching makes no user's hash "need an update".  List
one of the two in ``PASSWORD_HASHERS``, not both: Django picks the hasher of a stored hash by
its algorithm name, and of two with the same name the later one wins.

What it changes is how a stored hash is trusted.  Django calls ``must_update`` (so ``decode``)
before ``verify`` on every login, and ``safe_summary`` in the admin, and each of those takes the
costs from the stored string, which a tampered row or an imported dump controls: Django's own
hasher runs ``m=4294967295`` as written, or fails with whatever argon2-cffi raises.  Here every
one of them first reads the string within :attr:`Argon2PasswordHasher.limits`, before anything
is allocated, and answers for a string it cannot read: ``verify`` False, ``must_update`` True,
``safe_summary`` a summary saying so.  Only ``decode`` raises, a ``ValueError``, as Django's
hashers do for a value they cannot read.

A stored hash within the limits may still ask for more memory than the process's whole
work-memory budget (a tampered row at ``m=1048576`` in a worker whose budget is 768 MiB): no
password can ever be checked against it here, so ``verify`` answers False, as Django's hasher
does (argon2-cffi raises its ``VerificationError`` for memory it cannot get), never an
:class:`~argonishche.MemoryBudgetError` that would make a login an HTTP 500.

Memory that is merely not there now is another matter: the password was not checked, so it is
neither right nor wrong, and answering False would turn away a user who typed it right (and
count a failed login against them, where a lockout is configured).  When every byte of the
budget is in use and a login has waited ``ARGONISHCHE_MEMORY_WAIT_SECONDS`` for room,
``verify`` raises :class:`argonishche.MemoryBudgetTimeout`; when the OS refuses memory within
the budget while nothing else holds any, it raises :class:`argonishche.ArgonishcheMemoryError`.
Here argonishche parts from Django's own hasher, which cannot tell these cases from a wrong
password.  :class:`ServerBusyMiddleware` answers the first with HTTP 503 and ``Retry-After``;
otherwise Django answers 500.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from argonishche import Argon2Params, Limits, argon2_hash, argon2_hash_encoded, argon2_verify
from argonishche._argon2 import params_of
from argonishche.argon2_cffi import Parameters
from argonishche.exceptions import (
    ArgonishcheMemoryError,
    InvalidHashError,
    MemoryBudgetError,
    MemoryBudgetTimeout,
    ParameterError,
    VerificationError,
)

__all__ = ["Argon2PasswordHasher", "ServerBusyMiddleware"]

# Django through importlib, and what this module uses of it typed here: Django is optional and
# untyped (django-stubs is not a dependency), so a type checker of the installed argonishche,
# with Django or without it, must not need it (tests/project/test_typing_wheel.py).  Importing
# this module without Django still raises ModuleNotFoundError, as the import statements did.
_hashers = importlib.import_module("django.contrib.auth.hashers")
_Stock = _hashers.Argon2PasswordHasher
mask_hash: Callable[[str], str] = _hashers.mask_hash
must_update_salt: Callable[[str, int], bool] = _hashers.must_update_salt
ImproperlyConfigured: type[Exception] = importlib.import_module(
    "django.core.exceptions").ImproperlyConfigured
_: Callable[[str], str] = importlib.import_module("django.utils.translation").gettext_noop

if TYPE_CHECKING:
    class BasePasswordHasher:
        """What the hasher below uses of Django's base class (the type checker's view of it)."""

        salt_entropy: int

        def salt(self) -> str: ...
else:
    BasePasswordHasher = _hashers.BasePasswordHasher


def _work(params: Argon2Params | Parameters) -> int:
    """Time cost x memory cost, in KiB-passes (each pass fills every KiB once): what a hash
    costs to verify, the measure ``Limits.max_work`` bounds."""
    return params.time_cost * params.memory_cost


class Argon2PasswordHasher(BasePasswordHasher):
    """Argon2id in Django's ``argon2$argon2id$v=19$m=...,t=...,p=...$salt$tag`` format.

    Costs are class attributes, as on Django's hasher: subclass to change them.
    """

    algorithm: str = _Stock.algorithm
    # Read from the installed Django, so that a Django release that raises its costs raises
    # these too and both hashers keep agreeing on which hashes need an update.
    time_cost: int = _Stock.time_cost
    memory_cost: int = _Stock.memory_cost
    parallelism: int = _Stock.parallelism
    # Django's hasher takes the tag length from argon2-cffi (DEFAULT_HASH_LENGTH), which need not
    # be installed here: 32 since argon2-cffi 21.2 (RFC 9106's profiles), 16 before.  Hashes with
    # 16-byte tags verify, and need an update, as with Django's hasher on a current argon2-cffi.
    hash_len = 32
    #: What a stored hash may ask for before it is refused unread.  argonishche's defaults admit
    #: every published profile (Django's t=2 x 100 MiB among them); a site that knows its costs
    #: can subclass with tighter ones, or looser ones if it ever stored more.
    limits = Limits()

    def __init__(self) -> None:
        # A hasher whose own costs are invalid or over its limits would refuse every hash it
        # makes.  Say so where Django builds its hashers, as a configuration error: Django's
        # callers of identify_hasher (check_password, the admin's password widget) take a
        # ValueError from there for "unknown algorithm", and logins would quietly fail.
        try:
            params = self.params()
            self.limits.check_own(time_cost=params.time_cost, memory_cost=params.memory_cost,
                                  parallelism=params.parallelism, hash_len=params.hash_len)
        except ParameterError as exc:
            raise ImproperlyConfigured(f"{type(self).__qualname__}: {exc}") from None

    def params(self) -> Argon2Params:
        """The parameters new hashes get: Argon2id version 1.3, as Django's hasher writes."""
        return Argon2Params.check(type="id", version=0x13, time_cost=self.time_cost,
                                  memory_cost=self.memory_cost, parallelism=self.parallelism,
                                  hash_len=self.hash_len)

    def _phc(self, encoded: object) -> str:
        """The PHC string inside a stored hash; InvalidHashError if it is not ours.  The length
        is checked before anything else, so that a huge string is never copied or scanned."""
        self.limits.check_encoded_len(encoded)
        if not isinstance(encoded, str):
            raise InvalidHashError(f"a stored hash is a str, not {type(encoded).__name__}")
        algorithm, _separator, rest = encoded.partition("$")
        if algorithm != self.algorithm:
            raise InvalidHashError(f"not an {self.algorithm!r} hash")
        return "$" + rest

    def encode(self, password: str | bytes, salt: str) -> str:
        if password is None:
            raise TypeError("password must be provided.")
        params = self.params()
        # salt.encode(): Django's salts are text, and its hasher hashes their UTF-8 bytes.
        return str(self.algorithm) + argon2_hash_encoded(
            password, salt.encode(), type=params.type, version=params.version,
            time_cost=params.time_cost, memory_cost=params.memory_cost,
            parallelism=params.parallelism, hash_len=params.hash_len)

    def decode(self, encoded: str) -> dict[str, Any]:
        """The fields of *encoded*, keyed as Django's hasher keys them (``params`` is an
        ``argonishche.argon2_cffi.Parameters``, as Django's is argon2-cffi's).

        :raises InvalidHashError: (a ValueError) *encoded* is malformed or over :attr:`limits`.
        """
        phc = self._phc(encoded)
        params, salt, _tag = params_of(phc, self.limits)
        return {
            "algorithm": self.algorithm,
            "hash": phc.rsplit("$", 1)[1],
            "memory_cost": params.memory_cost,
            "parallelism": params.parallelism,
            # As Django's hasher gives it: one character per byte, so that must_update_salt
            # counts bytes, and a salt Django made reads back as the text it was.
            "salt": salt.decode("latin1"),
            "time_cost": params.time_cost,
            "variety": f"argon2{params.type.label}",
            "version": params.version,
            "params": Parameters(type=params.type, version=params.version, salt_len=len(salt),
                                 hash_len=params.hash_len, time_cost=params.time_cost,
                                 memory_cost=params.memory_cost,
                                 parallelism=params.parallelism),
        }

    def verify(self, password: str | bytes, encoded: str) -> bool:
        try:
            return argon2_verify(self._phc(encoded), password, limits=self.limits)
        except VerificationError:  # a wrong password, or a hash that cannot be read (an
            return False           # InvalidHashError) or is over the limits (LimitExceededError)
        except MemoryBudgetError:
            # Costs within the limits, but more memory than this process's whole budget: no
            # password can ever be checked against it here, so none matches, as with Django's
            # hasher (argon2-cffi's VerificationError) and not an HTTP 500 for a login.  Memory
            # that is only not there now raises (see the module's text).
            return False

    def safe_summary(self, encoded: str) -> dict[str, Any]:
        try:
            decoded = self.decode(encoded)
        except InvalidHashError:
            # Nothing of the string itself: it may be huge, and is not known to be a hash.
            return {_("algorithm"): self.algorithm,
                    _("hash"): _("unreadable: malformed, or over this site's limits")}
        return {
            _("algorithm"): decoded["algorithm"],
            _("variety"): decoded["variety"],
            _("version"): decoded["version"],
            _("memory cost"): decoded["memory_cost"],
            _("time cost"): decoded["time_cost"],
            _("parallelism"): decoded["parallelism"],
            _("salt"): mask_hash(decoded["salt"]),
            _("hash"): mask_hash(decoded["hash"]),
        }

    def must_update(self, encoded: str) -> bool:
        try:
            decoded = self.decode(encoded)
        except InvalidHashError:
            return True  # it can never verify: only a new hash can let the user in again
        stored = decoded["params"]
        # The salt's length is judged by its entropy, as Django's hasher does, not compared.
        current = self.params()
        return bool(dataclasses.replace(stored, salt_len=0) != Parameters(
                    type=current.type, version=current.version, salt_len=0,
                    hash_len=current.hash_len, time_cost=current.time_cost,
                    memory_cost=current.memory_cost, parallelism=current.parallelism)
                or must_update_salt(decoded["salt"], self.salt_entropy))

    def harden_runtime(self, password: str | bytes, encoded: str) -> None:
        """Spend the work a current hash has and *encoded* lacks, in one Argon2 call within
        this hasher's own costs, so that a wrong password takes about as long on an old, cheap
        hash as on a current one (Django calls this only after such a failure).

        A hash that could not be read was refused without any work, so it gets a current
        hash's work in full; its own costs are never run.  If that memory cannot be allocated
        now, or the server is too busy to give it in time, the padding is skipped (Django's own
        hasher pads nothing): the login was refused already and must not become an HTTP 500.
        """
        current = self.params()
        try:
            missing = _work(current) - _work(self.decode(encoded)["params"])
        except InvalidHashError:
            missing = _work(current)
        if missing <= 0:
            return
        # The fewest passes that fit the missing work into the current memory cost, then the
        # memory that makes the product that work: both at most the current costs.
        time_cost = math.ceil(missing / current.memory_cost)
        memory_cost = max(math.ceil(missing / time_cost), 8 * current.parallelism)
        try:
            argon2_hash(password, self.salt().encode(), type=current.type,
                        version=current.version, time_cost=time_cost, memory_cost=memory_cost,
                        parallelism=current.parallelism, hash_len=current.hash_len)
        except (ArgonishcheMemoryError, MemoryBudgetTimeout):
            pass


class ServerBusyMiddleware:
    """Django middleware that answers a request whose password check could not get work memory
    in time (:class:`argonishche.MemoryBudgetTimeout`) with HTTP 503 Service Unavailable and a
    ``Retry-After`` header, as a server answers overload: not a 500, and never "wrong password".

    Add ``"argonishche.contrib.django.ServerBusyMiddleware"`` to ``MIDDLEWARE``.  Every other
    exception passes through untouched.
    """

    #: Seconds the ``Retry-After`` header asks the client to wait.
    retry_after = 5

    def __init__(self, get_response: Callable[[Any], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        return self.get_response(request)

    def process_exception(self, request: Any, exception: Exception) -> Any:
        if not isinstance(exception, MemoryBudgetTimeout):
            return None
        http = importlib.import_module("django.http")
        response = http.HttpResponse(
            "The server is too busy to check passwords right now; retry in a few seconds.\n",
            status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(self.retry_after)
        return response
