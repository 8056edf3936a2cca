"""BLAKE2b objects that can replace ``hashlib.blake2b`` (data, digest_size, key, salt, person).

Init/update/final are the core's C code (``core/csrc/blake2b.c``); the compression function is
the selected backend's.

Short messages are dominated by the Python-to-C boundary, not by hashing, so the common
``blake2b(data).digest()`` takes a path with no C state on the heap: the constructor only keeps a
reference to the (immutable) bytes, and ``digest()`` makes one C call that runs init, update and
final with the state on the C stack, writing into a per-thread output buffer.  A C state is only
made when the object is used incrementally (``update``) or for anything but plain bytes.

One object may be shared by threads, as hashlib allows: the C calls release the GIL, so every
object with a C state has a lock, taken around each C call that reads or writes the state (and
around copying it).  A one-shot object needs none (its pending bytes are immutable), so its lock
is made with its C state, by the first ``update()``, and the one-shot path never pays for one.
Like hashlib's, the digest of concurrent updates is that of some serial order of whole updates.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from . import _driver, _registry
from ._core import ffi, lib
from ._params import Buffer, byte_buffer, integer

if TYPE_CHECKING:
    from ._core import CData

_per_thread = threading.local()
_NONE = b""  # the defaults; `is` tests for them cost less than comparisons on the hot path
_publishing = threading.Lock()  # held only to give a one-shot object its C state and lock


def _after_fork_in_child() -> None:
    # A thread holding _publishing when another forked does not exist in the child.
    global _publishing
    _publishing = threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX; Windows has no fork()
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _output_buffer() -> CData:  # a ``char[64]``
    # One per thread: the C call releases the GIL, so a shared buffer could be overwritten.
    try:
        return _per_thread.buffer
    except AttributeError:
        _per_thread.buffer = ffi.new("char[64]")
        return _per_thread.buffer


class blake2b:  # noqa: N801 - the hashlib name, so it can replace hashlib.blake2b
    """BLAKE2b (RFC 7693) with 1..64-byte digests, optional key, salt and personalization."""

    name = "blake2b"
    block_size = 128
    SALT_SIZE = 16
    PERSON_SIZE = 16
    MAX_KEY_SIZE = 64
    MAX_DIGEST_SIZE = 64
    __slots__ = ("_pending", "_state", "_lock", "digest_size")
    _pending: bytes | None  # the data of a one-shot hash, until a C state is made
    _state: CData  # the cffi ``argonishche_blake2b_state *``, or None while _pending is set
    _lock: threading.Lock  # serialises the use of _state; unset while _state is None
    digest_size: int

    def __init__(self, data: Buffer = _NONE, *, digest_size: int = 64, key: Buffer = _NONE,
                 salt: Buffer = _NONE, person: Buffer = _NONE, usedforsecurity: bool = True,
                 backend: str | None = None) -> None:
        if (key is _NONE and salt is _NONE and person is _NONE and backend is None
                and type(data) is bytes and type(digest_size) is int and 0 < digest_size <= 64):
            self._pending = data   # bytes cannot change under us: hash it when asked
            self._state = None
            self.digest_size = digest_size
            return
        self.digest_size = integer("digest_size", digest_size, 1, self.MAX_DIGEST_SIZE)
        self._pending = None
        self._lock = threading.Lock()
        self._state = _driver.new_blake2b_state(
            _registry.get().kernel_table("blake2b", backend), self.digest_size,
            byte_buffer("key", key, max_len=self.MAX_KEY_SIZE),
            byte_buffer("salt", salt, max_len=self.SALT_SIZE),
            byte_buffer("person", person, max_len=self.PERSON_SIZE))
        if data is not _NONE:
            self.update(data)

    def update(self, data: Buffer) -> None:
        """Hash more bytes; any C-contiguous bytes-like object (str must be encoded first)."""
        if isinstance(data, str):
            raise TypeError("Strings must be encoded before hashing")
        state = self._state
        if state is None:
            state = self._materialize()
        lock = self._lock  # acquire/release: half the cost of `with` on this path
        lock.acquire()
        try:
            _driver.blake2b_update(state, data)
        finally:
            lock.release()

    def _materialize(self) -> CData:
        """The C state of a one-shot object, made from its pending bytes, with its lock.

        Threads may race here: each makes a state of its own from the pending bytes (which
        never change), and the first to publish under a module-wide lock (held for a test and
        three stores) wins; the others drop theirs.  The state holds the pending bytes before
        it is published, and _pending is cleared after it, so that digest() and copy() use
        either the pending bytes or the state, never neither.
        """
        pending = self._pending
        if pending is None:  # another thread has published the state meanwhile
            return self._state
        state = _driver.new_blake2b_state(
            _registry.selected_table("blake2b"), self.digest_size, b"", b"", b"")
        if pending:
            _driver.blake2b_update(state, pending)
        lock = threading.Lock()
        _publishing.acquire()
        try:
            if self._state is None:
                self._lock = lock  # before _state: whoever sees the state finds its lock
                self._state = state
                self._pending = None
            return self._state
        finally:
            _publishing.release()

    def digest(self) -> bytes:
        """The digest so far; hashing may continue afterwards."""
        out = _output_buffer()
        pending = self._pending
        if pending is None:  # a C state holds the data
            lock = self._lock
            lock.acquire()
            try:
                return _driver.blake2b_digest(self._state, out)
            finally:
                lock.release()
        size = self.digest_size
        lib.argonishche_blake2b_oneshot(_registry.selected_table("blake2b"), out, size,
                                        pending, len(pending))
        return ffi.unpack(out, size)

    def hexdigest(self) -> str:
        return self.digest().hex()

    def copy(self) -> blake2b:
        """An independent object with the same state."""
        clone = object.__new__(type(self))
        clone.digest_size = self.digest_size
        pending = self._pending
        if pending is not None:  # bytes: the copy can share them and stay one-shot
            clone._pending = pending
            clone._state = None
            return clone
        lock = self._lock
        lock.acquire()  # no update half done in the state copied
        try:
            state = ffi.new("argonishche_blake2b_state *", self._state[0])
        finally:
            lock.release()
        clone._pending = None
        clone._lock = threading.Lock()
        # A copy may hold a key block; wiping it on collection is cheap next to copying.
        clone._state = ffi.gc(state, _driver.wipe_state)
        return clone
