"""The Python face of the C driver: one C call per hash, with kernel tables already chosen.

No selection and no validation happens here (see :mod:`argonishche._registry` and
:mod:`argonishche._params`); this is the shortest path from checked parameters to the C code, used
by the public API and by the self-test alike.
"""

from __future__ import annotations

from ._core import ffi, lib
from .exceptions import ArgonishcheMemoryError, HashingError, ParameterError, ParameterTypeError

#: RFC 9106 type codes y, as the C driver numbers them.
TYPE_CODES = {"d": lib.ARGONISHCHE_ARGON2D, "i": lib.ARGONISHCHE_ARGON2I,
              "id": lib.ARGONISHCHE_ARGON2ID}


#: A caller's buffer may start anywhere: the driver uses it from the first 64-byte boundary.
ALIGNMENT_SLACK = 63


def memory_size(memory_cost: int, parallelism: int) -> int:
    """Bytes of work memory one hash uses: m' = 4p * floor(m / 4p) blocks of 1 KiB."""
    return lib.argonishche_argon2_memory_size(memory_cost, parallelism)


def argon2(argon2_table, blake2b_table, *, type: str, version: int, time_cost: int,
           memory_cost: int, parallelism: int, threads: int, password, salt, secret,
           associated_data, hash_len: int, memory=None, wipe_memory: bool = True) -> bytes:
    """The raw Argon2 tag.  Buffers are any C-contiguous bytes-like objects.

    :param memory: a writable buffer of at least :func:`memory_size` bytes if 64-byte aligned,
        up to ALIGNMENT_SLACK more if not; None: the C driver allocates and frees the memory.
    :param wipe_memory: securely wipe the work memory before returning.
    """
    tag = bytearray(hash_len)
    # from_buffer keeps each Python buffer alive and unmoved for the duration of the call.
    password_c, salt_c, secret_c, ad_c, tag_c = (
        ffi.from_buffer(b) for b in (password, salt, secret, associated_data, tag))
    request = ffi.new("argonishche_argon2_request *", {
        "type": TYPE_CODES[type], "version": version, "time_cost": time_cost,
        "memory_cost": memory_cost, "lanes": parallelism, "threads": threads,
        "password": password_c, "password_len": len(password_c),
        "salt": salt_c, "salt_len": len(salt_c),
        "secret": secret_c, "secret_len": len(secret_c),
        "associated_data": ad_c, "associated_data_len": len(ad_c),
        "tag": tag_c, "tag_len": hash_len, "wipe_memory": wipe_memory,
    })
    memory_c = None
    if memory is not None:
        try:
            memory_c = ffi.from_buffer(memory, require_writable=True)
        except (TypeError, BufferError):
            raise ParameterTypeError(f"memory must be a writable buffer (bytearray, mmap, numpy "
                                     f"array...), not {memory.__class__.__name__}") from None
        request.memory = memory_c
        request.memory_len = given = len(memory_c)
    try:
        status = lib.argonishche_argon2_hash(argon2_table, blake2b_table, request)
    finally:
        if memory_c is not None:
            ffi.release(memory_c)  # let the allocator unmap or reuse the buffer at once
    if status == lib.ARGONISHCHE_OK:
        return bytes(tag)
    if status == lib.ARGONISHCHE_ERR_NO_MEMORY:
        size = memory_size(memory_cost, parallelism)
        raise ArgonishcheMemoryError(
            f"could not allocate {size} bytes ({size / 2**20:.1f} MiB) of Argon2 work memory "
            f"for memory_cost={memory_cost} KiB, parallelism={parallelism}")
    if status == lib.ARGONISHCHE_ERR_MEMORY_TOO_SMALL:
        raise ParameterError(
            f"memory is {given} bytes; memory_cost={memory_cost}, parallelism="
            f"{parallelism} needs {memory_size(memory_cost, parallelism) + ALIGNMENT_SLACK} "
            f"(argonishche.memory_size)")
    if status == lib.ARGONISHCHE_ERR_PARAMETER:
        raise ParameterError("the C driver refused the Argon2 parameters")
    raise HashingError(f"Argon2 driver failed with status {status}")


def c_bytes(data):
    """*data* as a C ``char *`` argument: bytes pass as they are, other buffers unmoved."""
    return data if type(data) is bytes else ffi.from_buffer(data)


def new_blake2b_state(table, digest_size: int, key, salt, person):
    """An initialised BLAKE2b state (cdata) hashing with *table*'s compression function."""
    state = ffi.new("argonishche_blake2b_state *")
    key_c = c_bytes(key)
    status = lib.argonishche_blake2b_init(state, table, digest_size, key_c, len(key_c),
                                          c_bytes(salt), len(salt), c_bytes(person), len(person))
    if status != lib.ARGONISHCHE_OK:
        raise ParameterError("the C driver refused the BLAKE2b parameters")
    if key_c:
        # The buffered key block is secret: wipe it in C when the state is collected.
        state = ffi.gc(state, wipe_state)
    return state


def wipe_state(state) -> None:
    lib.argonishche_secure_wipe(state, ffi.sizeof("argonishche_blake2b_state"))


def blake2b_update(state, data) -> None:
    buffer = c_bytes(data)
    lib.argonishche_blake2b_update(state, buffer, len(buffer))


def blake2b_digest(state, out=None) -> bytes:
    """The digest of *state* so far, written through *out* (a ``char[64]``) if given."""
    if out is None:
        out = ffi.new("char[64]")
    lib.argonishche_blake2b_final(state, out)
    return ffi.unpack(out, state.digest_size)
