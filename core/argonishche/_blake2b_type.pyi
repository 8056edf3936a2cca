"""Stub of the extension module argonishche._blake2b_type (core/csrc/blake2b_type.c)."""

from collections.abc import Callable
from typing import Any, ClassVar, Self, SupportsIndex

from ._parameter_checks import Buffer

class blake2b:  # noqa: N801 - the hashlib name, so it can replace hashlib.blake2b
    """BLAKE2b (RFC 7693) with 1..64-byte digests, optional key, salt and personalization, and
    hashlib's tree-hashing parameters."""

    name: ClassVar[str]
    block_size: ClassVar[int]
    SALT_SIZE: ClassVar[int]
    PERSON_SIZE: ClassVar[int]
    MAX_KEY_SIZE: ClassVar[int]
    MAX_DIGEST_SIZE: ClassVar[int]
    def __new__(cls, data: Buffer = ..., *, digest_size: SupportsIndex = 64, key: Buffer = ...,
                salt: Buffer = ..., person: Buffer = ..., fanout: SupportsIndex = 1,
                depth: SupportsIndex = 1, leaf_size: int = 0, node_offset: int = 0,
                node_depth: SupportsIndex = 0, inner_size: SupportsIndex = 0,
                last_node: object = False, usedforsecurity: object = True,
                backend: str | None = None) -> Self: ...
    @property
    def digest_size(self) -> int: ...
    def update(self, data: Buffer, /) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def copy(self) -> Self: ...
    def __copy__(self) -> Self: ...
    def __reduce__(self) -> tuple[Any, ...]: ...

def connect(functions: tuple[int, int, int, int],
            resolver: Callable[[str | None], tuple[Any, int]], parameter_error: type[Exception],
            parameter_type_error: type[Exception], parameter_overflow_error: type[Exception],
            /) -> None: ...
def selected_table_address() -> int: ...
def set_selected(table: Any, address: int | None, /) -> None: ...
