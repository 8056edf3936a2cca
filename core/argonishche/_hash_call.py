"""The Python face of the C driver: one C call per hash (or per chunk of hash_many: see
:func:`argon2_many`), with kernel tables already chosen.

No selection and no validation happens here (see :mod:`argonishche._registry` and
:mod:`argonishche._parameter_checks`); this is the shortest path from checked parameters to the C
code, used by the public API and by the self-test alike.
"""

from __future__ import annotations


from . import _work_memory
from ._core import ffi, lib
from .exceptions import ArgonishcheMemoryError, HashingError, ParameterError, ParameterTypeError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Protocol

    from ._core import CData
    from ._parameter_checks import Buffer

    class CArena(Protocol):
        """An allocator whose memory is leased in C from the process's work memory (see
        :mod:`argonishche._allocators`) inside the one C call that hashes."""

        @property
        def c_arena(self) -> CData: ...  # ``argonishche_arena *``
        def failure(self, status: int, size: int, os_error: int) -> Exception | None: ...


#: RFC 9106 type codes y, as the C driver numbers them.
TYPE_CODES = {"d": lib.ARGONISHCHE_ARGON2D, "i": lib.ARGONISHCHE_ARGON2I,
              "id": lib.ARGONISHCHE_ARGON2ID}


#: The hugepages allocator's arena flag: it promises a fresh mapping per hash.
ARENA_HUGE_PAGES = lib.ARGONISHCHE_ARENA_HUGE_PAGES

#: A caller's buffer may start anywhere: the driver uses it from the first 64-byte boundary.
ALIGNMENT_SLACK = 63


def memory_size(memory_cost: int, parallelism: int) -> int:
    """Bytes of work memory one hash uses: m' = 4p * floor(m / 4p) blocks of 1 KiB."""
    return lib.argonishche_argon2_memory_size(memory_cost, parallelism)


def _owned_copy(data: Buffer) -> tuple[CData, int, CData | None]:
    """(argument, length, copy to wipe or None): *data* for the C call, read exactly once.

    ``bytes`` cannot change, so it is passed as it is.  Any other buffer (a bytearray, say) is
    copied once into C memory that the hash owns and that is wiped after it: another thread
    changing the caller's buffer mid-hash then cannot make the hash read two versions of it.
    """
    if type(data) is bytes:
        return ffi.from_buffer(data), len(data), None
    view = ffi.from_buffer(data)
    size = len(view)
    copy = ffi.new("uint8_t[]", max(size, 1))
    ffi.memmove(copy, view, size)
    ffi.release(view)
    return copy, size, copy


def argon2(argon2_table: CData, blake2b_table: CData, *, type: str, version: int,
           time_cost: int, memory_cost: int, parallelism: int, threads: int, password: Buffer,
           salt: bytes, secret: Buffer, associated_data: Buffer, hash_len: int,
           memory: Buffer | None = None, wipe_memory: bool = True,
           arena: CArena | None = None) -> bytes:
    """The raw Argon2 tag.

    :param password: and :param secret: and :param associated_data: any C-contiguous
        bytes-like objects, each read once (see :func:`_owned_copy`).
    :param salt: ``bytes``: the caller encodes the same object into a PHC string.
    :param memory: a writable buffer of at least :func:`memory_size` bytes if 64-byte aligned,
        up to ALIGNMENT_SLACK more if not, that no other running hash uses; None: *arena*'s, or
        memory the C driver allocates and frees, admitted against the process's work-memory
        budget first (waiting for room as :mod:`argonishche._work_memory` says).
    :param wipe_memory: securely wipe the work memory before returning.
    :param arena: an allocator with a C arena (``c_arena``, ``failure()``), whose kind of memory
        the hash leases inside the one C call; None: the C heap.
    :raises MemoryBudgetError: the hash needs more than the whole budget (never with *memory*).
    :raises MemoryBudgetTimeout: it waited too long for room.
    """
    tag = bytearray(hash_len)
    (password_c, password_len, password_copy), (secret_c, secret_len, secret_copy), \
        (ad_c, ad_len, _) = (_owned_copy(data) for data in (password, secret, associated_data))
    tag_c = ffi.from_buffer(tag)
    request = ffi.new("argonishche_argon2_request *", {
        "type": TYPE_CODES[type], "version": version, "time_cost": time_cost,
        "memory_cost": memory_cost, "lanes": parallelism, "threads": threads,
        "password": password_c, "password_len": password_len,
        "salt": ffi.from_buffer(salt), "salt_len": len(salt),
        "secret": secret_c, "secret_len": secret_len,
        "associated_data": ad_c, "associated_data_len": ad_len,
        "tag": tag_c, "tag_len": hash_len, "wipe_memory": wipe_memory,
    })
    memory_c = None
    if memory is not None:
        try:
            memory_c = ffi.from_buffer(memory, require_writable=True)
        except (TypeError, BufferError):
            raise ParameterTypeError(f"memory must be a writable buffer (bytearray, mmap, numpy "
                                     f"array...), not {memory.__class__.__name__}") from None
        except ValueError as exc:  # closed by another thread since the caller's check
            raise ParameterError(f"memory cannot be used: {exc} "
                                 f"({memory.__class__.__name__})") from None
        request.memory = memory_c
        request.memory_len = given = len(memory_c)
    os_error = ffi.new("int *")
    try:
        if memory_c is None:
            c_arena = arena.c_arena if arena is not None else ffi.NULL
            status = _admitted(lambda ticket, wait_ms: lib.argonishche_arena_argon2_hash(
                c_arena, argon2_table, blake2b_table, request, ticket, wait_ms, os_error),
                memory_size(memory_cost, parallelism))
        else:
            status = lib.argonishche_argon2_hash(argon2_table, blake2b_table, request)
    finally:
        if memory_c is not None:
            ffi.release(memory_c)  # let the allocator unmap or reuse the buffer at once
        for copy, size in ((password_copy, password_len), (secret_copy, secret_len)):
            if copy is not None:  # the copies of the secrets; the caller's own stay theirs
                lib.argonishche_secure_wipe(copy, size)
    if status == lib.ARGONISHCHE_OK:
        return bytes(tag)
    raise _failure(status, os_error[0], memory_cost, parallelism, arena,
                   given=None if memory_c is None else given)


def argon2_many(argon2_table: CData, blake2b_table: CData, arena: CArena, *, type: str,
                version: int, time_cost: int, memory_cost: int, parallelism: int, threads: int,
                passwords: Sequence[Buffer], salts: Sequence[bytes], secret: Buffer,
                associated_data: Buffer, hash_len: int, wipe_memory: bool = True) -> list[bytes]:
    """The raw tags of one password and salt each, as :func:`argon2` would return them one by
    one, in ONE C call and one lease of *arena*'s work memory.

    The memory is wiped once, before it leaves the C call (after the last hash, or after the
    hash that failed), not between hashes: no hash reads another's blocks, and nothing outside
    the call sees the memory meanwhile.  Only for a C arena (a caller's buffer, a Python
    allocator's memory or a wipe callback take :func:`argon2`, a hash at a time).  The first
    hash that fails stops the call, and is raised as :func:`argon2` raises it.
    """
    count = len(passwords)
    if count == 0:
        return []
    owned = [_owned_copy(password) for password in passwords]
    (secret_c, secret_len, secret_copy), (ad_c, ad_len, _) = (
        _owned_copy(data) for data in (secret, associated_data))
    inputs = ffi.new("argonishche_argon2_input[]", count)
    salts_c = [ffi.from_buffer(salt) for salt in salts]  # kept alive until the call returns
    for item, (password_c, password_len, _), salt, salt_c in zip(
            inputs, owned, salts, salts_c, strict=True):
        item.password, item.password_len = password_c, password_len
        item.salt, item.salt_len = salt_c, len(salt)
    tags = bytearray(hash_len * count)
    tags_c = ffi.from_buffer(tags)
    request = ffi.new("argonishche_argon2_request *", {
        "type": TYPE_CODES[type], "version": version, "time_cost": time_cost,
        "memory_cost": memory_cost, "lanes": parallelism, "threads": threads,
        "secret": secret_c, "secret_len": secret_len,
        "associated_data": ad_c, "associated_data_len": ad_len,
        "tag_len": hash_len, "wipe_memory": wipe_memory,
    })
    done, os_error = ffi.new("uint32_t *"), ffi.new("int *")
    try:
        status = _admitted(lambda ticket, wait_ms: lib.argonishche_arena_argon2_hash_many(
            arena.c_arena, argon2_table, blake2b_table, request, inputs, count, tags_c, done,
            ticket, wait_ms, os_error), memory_size(memory_cost, parallelism))
    finally:
        for copy, size in [(c, n) for _, n, c in owned] + [(secret_copy, secret_len)]:
            if copy is not None:
                lib.argonishche_secure_wipe(copy, size)
    if status == lib.ARGONISHCHE_OK:
        return [bytes(tags[i * hash_len:(i + 1) * hash_len]) for i in range(count)]
    tags[:] = bytes(len(tags))  # the tags before the failed hash are not returned
    raise _failure(status, os_error[0], memory_cost, parallelism, arena, given=None)


def _admitted(call: Callable[[CData, int], int], size: int) -> int:
    """*call(ticket, wait_ms)*'s status once the work-memory budget admitted it (or refused)."""
    if _work_memory.unconfigured():
        _work_memory.config()
    # First a try that is never queued (room now: the common case, nothing to clean up);
    # without room, a place in the queue and the wait (see _work_memory).
    status = call(_work_memory.new_try(), 0)
    if status == lib.ARGONISHCHE_WAIT_MEMORY or status == lib.ARGONISHCHE_ERR_OVER_BUDGET:
        status = _work_memory.admitted(call, size)
    return status


def _failure(status: int, os_error: int, memory_cost: int, parallelism: int,
             arena: CArena | None, given: int | None) -> Exception:
    """The exception for a failed hash's C status (*given*: the caller's buffer's size)."""
    size = memory_size(memory_cost, parallelism)
    failure = arena.failure(status, size, os_error) if arena is not None else None
    if failure is not None:
        return failure
    if status == lib.ARGONISHCHE_ERR_NO_MEMORY:
        return ArgonishcheMemoryError(
            f"could not allocate {size} bytes ({size / 2**20:.1f} MiB) of Argon2 work memory "
            f"for memory_cost={memory_cost} KiB, parallelism={parallelism}")
    if status == lib.ARGONISHCHE_ERR_MEMORY_TOO_SMALL:
        return ParameterError(
            f"memory is {given} bytes; memory_cost={memory_cost}, parallelism="
            f"{parallelism} needs {size + ALIGNMENT_SLACK} (argonishche.memory_size)")
    if status == lib.ARGONISHCHE_ERR_MEMORY_IN_USE:
        return ParameterError("memory is in use by another hash running now: two hashes in one "
                              "buffer would both return wrong tags; give each its own buffer")
    if status == lib.ARGONISHCHE_ERR_PARAMETER:
        return ParameterError("the C driver refused the Argon2 parameters")
    return HashingError(f"Argon2 driver failed with status {status}")


def c_bytes(data: Buffer) -> CData | bytes:
    """*data* as a C ``char *`` argument: bytes pass as they are, other buffers unmoved."""
    return data if type(data) is bytes else ffi.from_buffer(data)


def new_blake2b_state(table: CData, digest_size: int, key: Buffer, salt: Buffer,
                      person: Buffer, tree: Mapping[str, int] | None = None) -> CData:
    """An initialised BLAKE2b state (cdata) hashing with *table*'s compression function.

    :param tree: the tree-hashing parameters (``argonishche_blake2b_tree``'s fields: fanout,
        depth, leaf_size, node_offset, node_depth, inner_size, last_node; absent ones are the
        sequential defaults); None: sequential hashing.
    """
    state = ffi.new("argonishche_blake2b_state *")
    key_c = c_bytes(key)
    if tree is None:
        status = lib.argonishche_blake2b_init(state, table, digest_size, key_c, len(key_c),
                                              c_bytes(salt), len(salt), c_bytes(person),
                                              len(person))
    else:
        fields = ffi.new("argonishche_blake2b_tree *", {"fanout": 1, "depth": 1, **tree})
        status = lib.argonishche_blake2b_init_tree(state, table, digest_size, key_c, len(key_c),
                                                   c_bytes(salt), len(salt), c_bytes(person),
                                                   len(person), fields)
    if status != lib.ARGONISHCHE_OK:
        raise ParameterError("the C driver refused the BLAKE2b parameters")
    if key_c:
        # The buffered key block is secret: wipe it in C when the state is collected.
        state = ffi.gc(state, wipe_state)
    return state


def wipe_state(state: CData) -> None:
    lib.argonishche_secure_wipe(state, ffi.sizeof("argonishche_blake2b_state"))


def blake2b_update(state: CData, data: Buffer) -> None:
    buffer = c_bytes(data)
    lib.argonishche_blake2b_update(state, buffer, len(buffer))


def blake2b_digest(state: CData, out: CData | None = None) -> bytes:
    """The digest of *state* so far, written through *out* (a ``char[64]``) if given."""
    if out is None:
        out = ffi.new("char[64]")
    lib.argonishche_blake2b_final(state, out)
    return ffi.unpack(out, state.digest_size)
