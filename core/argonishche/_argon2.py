"""Argon2 hashing and verification: the functions most users call.

Each call checks its parameters, asks the registry for the selected kernel tables (two pointer
lookups after the first call) and makes one C call, with the GIL released while it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import _hash_call, _phc, _registry, _warn, _work_memory
from ._parameter_checks import (
    MIN_SALT_LEN,
    Argon2Params,
    Buffer,
    ByteView,
    Limits,
    TypeLike,
    Wipe,
    byte_buffer,
    resolve_limits,
    to_type,
)
from .exceptions import InvalidHashError, ParameterError, ParameterTypeError, VerifyMismatchError
from .hookspecs import Allocator

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from typing import Literal, NamedTuple

    from ._core import CData
    from ._hash_call import CArena
else:
    from ._named_tuple import NamedTuple

    class _Literal:
        """``typing.Literal`` where :func:`typing.get_type_hints` evaluates this module's string
        annotations: typing is imported when one is first evaluated, not at start-up."""

        def __getitem__(self, values: object) -> object:
            import typing

            return typing.Literal[values]

    Literal = _Literal()


#: The most hashes of one C call (``argon2_hash_encoded_many``): nothing interrupts a C call (a
#: Ctrl-C waits for it), and its lease of work memory is held, and not wiped, until it returns.
MAX_HASHES_PER_CALL = 8


class _Defaults(NamedTuple):
    """The cost defaults of argon2_hash, argon2_hash_encoded and hash_many (RFC 9106's second
    recommended option, as argon2-cffi's)."""

    type: str = "id"
    time_cost: int = 3
    memory_cost: int = 65536
    parallelism: int = 4
    hash_len: int = 32
    version: int = 0x13


DEFAULTS = _Defaults()


def _wipe_policy(wipe: Wipe) -> tuple[bool, Callable[[memoryview], object] | None]:
    """(wipe in C, Python callback): True wipes securely in C; False opts out; a callable gets
    the work memory as a writable memoryview before it is freed or reused."""
    if wipe is True or wipe is False:
        return wipe, None
    if callable(wipe):
        return False, wipe
    raise ParameterTypeError(f"wipe must be True, False or a callable, not {wipe!r}")


def _check_caller_memory(memory: Buffer, params: Argon2Params) -> None:
    """A caller's buffer must hold memory_size() bytes, whatever its alignment happens to be,
    so that whether it is accepted never depends on where the allocator put it."""
    needed = (_hash_call.memory_size(params.memory_cost, params.parallelism)
              + _hash_call.ALIGNMENT_SLACK)
    try:
        size = memoryview(memory).nbytes
    except TypeError:
        raise ParameterTypeError(f"memory must be a writable buffer (bytearray, mmap, numpy "
                                 f"array...), not {memory.__class__.__name__}") from None
    except ValueError as exc:  # a closed mmap, a released memoryview: the right type, unusable
        raise ParameterError(f"memory cannot be used: {exc} "
                             f"({memory.__class__.__name__})") from None
    if size < needed:
        raise ParameterError(f"memory is {size} bytes; memory_cost={params.memory_cost}, "
                             f"parallelism={params.parallelism} needs {needed} "
                             f"(argonishche.memory_size)")


class _Inputs(NamedTuple):
    """One hash's inputs, read into bytes once: the kernel's hash and the witness's read the
    same ones."""

    params: Argon2Params
    password: ByteView
    salt: bytes
    secret: ByteView
    associated_data: ByteView
    threads: int


def _compute(params: Argon2Params, password: Buffer | str, salt: bytes, secret: Buffer,
             associated_data: Buffer, threads: int | None, backend: str | None,
             allocator: str | Allocator | None = None, memory: Buffer | None = None,
             wipe: Wipe = True, expected: bytes | None = None) -> bytes:
    """The tag; *salt* is ``bytes`` (see :func:`_salt`), so the one the hash reads is the one
    the caller encodes.

    The one place every Argon2 hash of the API passes (hash, encoded, verify, PasswordHasher,
    hash_many, async, the CLI and the adapters): where a third-party backend hashes, the
    witness checks the tag here before it is returned.  *expected* (verification): the tag
    the caller will compare with; a kernel's tag equal to it needs no witness."""
    reg = _registry.get()
    argon2_table, blake2b_table, third_party = reg.hashing_tables(backend)
    witnessed = bool(third_party) and reg.settings.witness
    buffers = [byte_buffer("password", password, allow_str=True), byte_buffer("secret", secret),
               byte_buffer("associated_data", associated_data)]
    copies: list[bytearray] = []
    if witnessed:
        # The witness must hash what the kernel hashed: a caller's bytearray that another
        # thread changes between the two would look like a wrong kernel.  Copies, wiped below.
        copies = [bytearray(b) for b in buffers if not isinstance(b, bytes)]
        copied = iter(copies)
        buffers = [b if isinstance(b, bytes) else next(copied) for b in buffers]
    inputs = _Inputs(params, buffers[0], salt, buffers[1], buffers[2], params.threads(threads))
    wipe_policy = _wipe_policy(wipe)
    try:
        tag = _run(reg, inputs, argon2_table, blake2b_table, allocator, memory, wipe_policy)
        if witnessed:
            from ._trust import witness  # only with a third-party backend selected or named

            if expected is None or not witness.same(tag, expected):
                # The witness's own memory: never the caller's buffer (memory=), which the
                # kernel's hash has just used; wiped in C unless the caller opted out.
                witness_wipe = (wipe_policy[0] or wipe_policy[1] is not None, None)
                tag = witness.check(reg, third_party, params, tag, lambda a, b: _run(
                    reg, inputs, a, b, allocator if memory is None else None, None,
                    witness_wipe))
        return tag
    finally:
        for copy in copies:
            copy[:] = bytes(len(copy))


def _run(reg: _registry.Registry, inputs: _Inputs, argon2_table: CData, blake2b_table: CData,
         allocator: str | Allocator | None, memory: Buffer | None,
         wipe_policy: tuple[bool, Callable[[memoryview], object] | None]) -> bytes:
    """One Argon2 hash through these tables, in *memory* or the allocator's."""
    params = inputs.params
    wipe_in_c, wipe_callback = wipe_policy
    owner = None
    acquired = None  # what owner.acquire() lent, owed back to it
    reservation = None  # its share of the work-memory budget, held until it is given back
    buffer: Buffer | None = None
    arena: CArena | None = None
    if memory is not None:
        if allocator is not None:
            raise ParameterError("pass memory= or allocator=, not both")
        _check_caller_memory(memory, params)
        buffer = memory
    else:
        owner = reg.allocator(allocator)
        if wipe_callback is None and getattr(owner, "c_arena", None) is not None:
            # Its memory is taken and given back inside the C call.
            arena = owner  # type: ignore[assignment]
        else:
            size = _hash_call.memory_size(params.memory_cost, params.parallelism)
            reservation = _work_memory.reserve(size)
            try:
                buffer = acquired = owner.acquire(size)
            finally:
                if acquired is None:  # raised, or none lent: the C driver's own allocation is
                    reservation.close()  # admitted by itself
            if wipe_callback is not None and buffer is None:  # nothing acquired, nothing to free
                raise ParameterError(f"a wipe callback needs memory Python can see, and "
                                     f"allocator {owner.name!r} allocates in C: use another "
                                     f"allocator or memory=")
    try:
        return _hash_call.argon2(
            argon2_table, blake2b_table, type=params.type.label, version=params.version,
            time_cost=params.time_cost, memory_cost=params.memory_cost,
            parallelism=params.parallelism, threads=inputs.threads,
            hash_len=params.hash_len, memory=buffer, wipe_memory=wipe_in_c, arena=arena,
            password=inputs.password, salt=inputs.salt, secret=inputs.secret,
            associated_data=inputs.associated_data)
    except ParameterError as exc:
        if owner is not None and acquired is not None:  # the allocator broke its contract
            raise type(exc)(f"allocator {owner.name!r} ({type(owner).__module__}."
                            f"{type(owner).__qualname__}) returned unusable memory: {exc}; an "
                            f"allocator's acquire(size) must return None or a writable buffer "
                            f"holding size bytes from its first 64-byte boundary (any buffer of "
                            f"size + 63 bytes does)") from None
        raise
    finally:
        kept = False
        try:
            if wipe_callback is not None and buffer is not None:
                kept = _hand_to_wipe_callback(wipe_callback, buffer)
        finally:  # even if the callback raised: the allocator gets its memory back
            if owner is not None and acquired is not None:
                try:
                    owner.release(acquired)
                except BufferError:
                    if wipe_callback is None:
                        raise  # the allocator's own fault: Python code never saw the memory
                    # A reference the callback kept (a slice of its view) still exports the
                    # memory, so it could not be unmapped.  The arenas wipe it before they try;
                    # it is unmapped when that reference goes.
                    kept = True
                finally:
                    if reservation is not None:
                        reservation.close()
        # Reached when the callback returned.  After a hash that returned, the tag is right
        # and is returned with this warning rather than lost to a BufferError (one that
        # raised goes on raising).  Refusing the callback before hashing is not possible, as
        # what it keeps is known only after it ran; raising would turn a correct hash, or a
        # correct password's verify, into a failure over memory the hash no longer uses.
        if kept:
            name = getattr(wipe_callback, "__qualname__", type(wipe_callback).__qualname__)
            _warn.warn(f"wipe callback {name} kept a reference to the work memory (a slice, "
                       f"numpy array or ctypes object of the memoryview it was given), which "
                       f"is valid only during the call: the memory cannot be freed while that "
                       f"reference lives; the tag is returned", RuntimeWarning)


def _compute_many(params: Argon2Params, passwords: Sequence[Buffer | str],
                  salts: Sequence[bytes], secret: Buffer, associated_data: Buffer,
                  threads: int | None, backend: str | None,
                  allocator: str | Allocator | None = None,
                  wipe: Wipe = True) -> list[bytes] | None:
    """The tags of a chunk of ``hash_many`` in one C call and one lease of work memory, wiped
    once before it leaves the call (``_hash_call.argon2_many``); None where that does not apply,
    and the caller hashes one at a time (:func:`_compute`): a third-party kernel (the witness
    recomputes each of its tags), an allocator whose memory Python sees or that promises a
    fresh mapping per hash (hugepages), or a wipe callback."""
    reg = _registry.get()
    argon2_table, blake2b_table, third_party = reg.hashing_tables(backend)
    wipe_in_c, wipe_callback = _wipe_policy(wipe)
    if third_party or wipe_callback is not None:
        return None
    owner = reg.allocator(allocator)
    if getattr(owner, "c_arena", None) is None or \
            getattr(owner, "arena_flags", 0) & _hash_call.ARENA_HUGE_PAGES:
        return None
    arena: CArena = owner  # type: ignore[assignment]  # it has a C arena (checked above)
    return _hash_call.argon2_many(
        argon2_table, blake2b_table, arena, type=params.type.label,
        version=params.version, time_cost=params.time_cost, memory_cost=params.memory_cost,
        parallelism=params.parallelism, threads=params.threads(threads),
        hash_len=params.hash_len, wipe_memory=wipe_in_c,
        passwords=[byte_buffer("password", password, allow_str=True) for password in passwords],
        salts=salts, secret=byte_buffer("secret", secret),
        associated_data=byte_buffer("associated_data", associated_data))


def argon2_hash_encoded_many(passwords: Sequence[Buffer | str], salts: Sequence[bytes], *,
                             type: TypeLike = DEFAULTS.type,
                             time_cost: int = DEFAULTS.time_cost,
                             memory_cost: int = DEFAULTS.memory_cost,
                             parallelism: int = DEFAULTS.parallelism,
                             hash_len: int = DEFAULTS.hash_len, secret: Buffer = b"",
                             associated_data: Buffer = b"", version: int = DEFAULTS.version,
                             threads: int | None = None, backend: str | None = None,
                             allocator: str | Allocator | None = None,
                             wipe: Wipe = True) -> list[str]:
    """:func:`argon2_hash_encoded` of each password with its salt (``hash_many``'s chunks):
    in C calls of up to ``MAX_HASHES_PER_CALL`` hashes where :func:`_compute_many` applies,
    else one hash at a time."""
    params = Argon2Params.check(type=type, version=version, time_cost=time_cost,
                                memory_cost=memory_cost, parallelism=parallelism,
                                hash_len=hash_len)
    salt_bytes = [_salt(salt) for salt in salts]
    if len(salt_bytes) != len(passwords):
        raise ParameterError(f"{len(passwords)} passwords but {len(salt_bytes)} salts")
    tags: list[bytes] = []
    for start in range(0, len(passwords), MAX_HASHES_PER_CALL):
        end = start + MAX_HASHES_PER_CALL
        some = _compute_many(params, passwords[start:end], salt_bytes[start:end], secret,
                             associated_data, threads, backend, allocator, wipe)
        if some is None:
            some = [_compute(params, password, salt, secret, associated_data, threads,
                             backend, allocator, None, wipe)
                    for password, salt in zip(passwords[start:end], salt_bytes[start:end],
                                              strict=True)]
        tags += some
    return [_phc.encode(params.type.label, params.version, params.memory_cost,
                        params.time_cost, params.parallelism, salt, tag)
            for salt, tag in zip(salt_bytes, tags, strict=True)]


def _hand_to_wipe_callback(callback: Callable[[memoryview], object], buffer: Buffer) -> bool:
    """Call *callback* with the work memory as a memoryview; True if the view could not be
    released afterwards because the callback kept something holding a buffer export of it (a
    numpy array or cffi buffer made from it, a ``pickle.PickleBuffer``).  A slice of the view,
    or a ctypes object on it, shares the view's exporter instead: the allocator's release finds
    those (the caller's own ``memory=`` is the caller's to keep)."""
    view = memoryview(buffer)
    try:
        callback(view)
    finally:
        try:
            view.release()
            released = True
        except BufferError:  # the exporter lives on; it keeps the memory alive, not in use
            released = False
    return not released


def _salt(salt: Buffer) -> bytes:
    """The salt, checked and read once into ``bytes``: a bytearray changed by another thread
    mid-hash must not give a tag for one salt and a PHC string naming another."""
    return bytes(byte_buffer("salt", salt, min_len=MIN_SALT_LEN))


def argon2_hash(password: Buffer | str, salt: Buffer, *, type: TypeLike = DEFAULTS.type,
                time_cost: int = DEFAULTS.time_cost, memory_cost: int = DEFAULTS.memory_cost,
                parallelism: int = DEFAULTS.parallelism, hash_len: int = DEFAULTS.hash_len,
                secret: Buffer = b"", associated_data: Buffer = b"",
                version: int = DEFAULTS.version, threads: int | None = None,
                backend: str | None = None, allocator: str | Allocator | None = None,
                memory: Buffer | None = None, wipe: Wipe = True) -> bytes:
    """The raw Argon2 tag of *password* (str is UTF-8 encoded) and *salt* (>= 8 bytes).

    :param type: ``"id"`` (default), ``"i"``, ``"d"`` or :class:`argonishche.Type`.
    :param memory_cost: m in KiB, at least 8 * parallelism; any value, no preset sizes.
    :param threads: C threads filling the lanes (1..parallelism); default: one per lane, at
        most one per CPU.  Never changes the result.
    :param backend: use this backend instead of the selected one (e.g. ``"ref"``).
    :param allocator: where the work memory comes from: ``"arena"`` (default, or
        ``ARGONISHCHE_ALLOCATOR``), ``"system"``, ``"hugepages"``, ``"locked"`` or a plugin's.
    :param memory: your own writable buffer of at least :func:`argonishche.memory_size` bytes
        to use as work memory instead of an allocator's (bytearray, mmap, numpy array...).
    :param wipe: True (default) wipes the work memory securely before it is freed or reused;
        False skips that (faster; the memory keeps password-derived data); a callable is called
        with the work memory as a writable memoryview instead.
    """
    params = Argon2Params.check(type=type, version=version, time_cost=time_cost,
                                memory_cost=memory_cost, parallelism=parallelism,
                                hash_len=hash_len)
    return _compute(params, password, _salt(salt), secret, associated_data, threads, backend,
                    allocator, memory, wipe)


def argon2_hash_encoded(password: Buffer | str, salt: Buffer, *,
                        type: TypeLike = DEFAULTS.type, time_cost: int = DEFAULTS.time_cost,
                        memory_cost: int = DEFAULTS.memory_cost,
                        parallelism: int = DEFAULTS.parallelism,
                        hash_len: int = DEFAULTS.hash_len, secret: Buffer = b"",
                        associated_data: Buffer = b"", version: int = DEFAULTS.version,
                        threads: int | None = None, backend: str | None = None,
                        allocator: str | Allocator | None = None, memory: Buffer | None = None,
                        wipe: Wipe = True) -> str:
    """Like :func:`argon2_hash`, as a PHC string ``$argon2id$v=19$m=...,t=...,p=...$salt$tag``."""
    params = Argon2Params.check(type=type, version=version, time_cost=time_cost,
                                memory_cost=memory_cost, parallelism=parallelism,
                                hash_len=hash_len)
    salt_bytes = _salt(salt)
    tag = _compute(params, password, salt_bytes, secret, associated_data, threads, backend,
                   allocator, memory, wipe)
    return _phc.encode(params.type.label, params.version, params.memory_cost, params.time_cost,
                      params.parallelism, salt_bytes, tag)


def params_of(encoded: str | bytes,
              limits: Limits | None = None) -> tuple[Argon2Params, bytes, bytes]:
    """(parameters, salt, tag) of a PHC string.

    InvalidHashError if it is malformed; LimitExceededError (an InvalidHashError) if it asks for
    more than *limits* allow (None: the default ``Limits()``; ``Limits.none()``: no limits), or
    is longer than any string within them (checked first, before it is parsed).
    """
    limits = resolve_limits(limits)
    limits.check_encoded_len(encoded)
    decoded = _phc.decode(encoded)
    try:
        params = Argon2Params.check(type=decoded.type, version=decoded.version,
                                    time_cost=decoded.time_cost,
                                    memory_cost=decoded.memory_cost,
                                    parallelism=decoded.parallelism, hash_len=len(decoded.tag))
        byte_buffer("salt", decoded.salt, min_len=MIN_SALT_LEN)
    except ParameterError as exc:
        raise InvalidHashError(f"hash has invalid parameters: {exc}") from None
    limits.check_hash(memory_cost=params.memory_cost, time_cost=params.time_cost,
                      parallelism=params.parallelism, hash_len=params.hash_len,
                      salt_len=len(decoded.salt))
    return params, decoded.salt, decoded.tag


def argon2_verify(encoded: str | bytes, password: Buffer | str, *, secret: Buffer = b"",
                  associated_data: Buffer = b"", threads: int | None = None,
                  backend: str | None = None, allocator: str | Allocator | None = None,
                  memory: Buffer | None = None, wipe: Wipe = True,
                  limits: Limits | None = None) -> Literal[True]:
    """True if *password* matches the PHC string *encoded*.

    :param limits: an :class:`argonishche.Limits`: the most work the hash may ask for, checked
        before anything is allocated.  None (default): ``Limits()``; ``Limits.none()``: no limits
        (only for hashes you trust).
    :raises VerifyMismatchError: the password (or secret / associated data) is wrong.
    :raises LimitExceededError: *encoded* asks for more than *limits* allow, or is longer than
        any hash within them (an InvalidHashError).
    :raises InvalidHashError: *encoded* is not a valid Argon2 PHC string.
    :raises ArgonishcheMemoryError: the work memory *encoded* asks for (within *limits*) cannot
        be allocated now (a MemoryError, not a VerificationError).
    """
    params, salt, expected = params_of(encoded, limits)
    from hmac import compare_digest  # imported here: only verification needs hashlib loaded

    # With a third-party kernel, a mismatch is confirmed by a built-in before it is answered.
    tag = _compute(params, password, salt, secret, associated_data, threads, backend, allocator,
                   memory, wipe, expected=expected)
    if not compare_digest(tag, expected):  # constant time in the tag's contents
        raise VerifyMismatchError("the password does not match the hash")
    return True


def type_of(encoded: str | bytes) -> str:
    """``"d"``, ``"i"`` or ``"id"`` of a PHC string (for PasswordHasher and tools)."""
    return to_type(_phc.decode(encoded).type).label
