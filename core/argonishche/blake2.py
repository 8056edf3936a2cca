"""BLAKE2b objects interchangeable with ``hashlib.blake2b`` for data, digest_size, key, salt, person.

Init/update/final are the core's C code (``core/csrc/blake2b.c``); the compression function is
the selected backend's.  Each method is one C call: no per-block Python work.
"""

from __future__ import annotations

from . import driver, registry
from ._core import ffi, lib
from .params import byte_buffer, integer


class blake2b:  # noqa: N801 - the hashlib name, so it can replace hashlib.blake2b
    """BLAKE2b (RFC 7693) with 1..64-byte digests, optional key, salt and personalization."""

    name = "blake2b"
    block_size = 128
    SALT_SIZE = 16
    PERSON_SIZE = 16
    MAX_KEY_SIZE = 64
    MAX_DIGEST_SIZE = 64
    __slots__ = ("_state", "digest_size")

    def __init__(self, data=b"", *, digest_size: int = 64, key=b"", salt=b"", person=b"",
                 usedforsecurity: bool = True, backend: str | None = None) -> None:
        self.digest_size = integer("digest_size", digest_size, 1, self.MAX_DIGEST_SIZE)
        self._state = driver.new_blake2b_state(
            registry.get().kernel_table("blake2b", backend), self.digest_size,
            byte_buffer("key", key, max_len=self.MAX_KEY_SIZE),
            byte_buffer("salt", salt, max_len=self.SALT_SIZE),
            byte_buffer("person", person, max_len=self.PERSON_SIZE))
        if data:
            self.update(data)

    def update(self, data) -> None:
        """Hash more bytes; any C-contiguous bytes-like object (str must be encoded first)."""
        if isinstance(data, str):
            raise TypeError("Strings must be encoded before hashing")
        buffer = ffi.from_buffer(data)
        lib.argonishche_blake2b_update(self._state, buffer, len(buffer))

    def digest(self) -> bytes:
        """The digest so far; hashing may continue afterwards."""
        return driver.blake2b_digest(self._state)

    def hexdigest(self) -> str:
        return self.digest().hex()

    def copy(self) -> blake2b:
        """An independent object with the same state."""
        clone = object.__new__(type(self))
        clone.digest_size = self.digest_size
        # A copy may hold a key block; wiping it on collection is cheap next to copying.
        clone._state = ffi.gc(ffi.new("argonishche_blake2b_state *", self._state[0]),
                              driver.wipe_state)
        return clone
