"""Code identity: which files hold the code behind a kernel table, and their digests.

A certification record is valid for the code that runs, not for a module's file: the kernel
table's functions are found in the shared objects that hold them (dladdr on the pointers), and
each of those files is hashed with the kernel module's own file.  A file replaced while it is
loaded and hashed (a concurrent ``pip install -U``) must not have the old code's outcome recorded
under the new file's digest: each file is stat'ed before it is hashed and after the module is
loaded, and on Linux the mapping the kernels run from must be that file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from .. import _hash_call
from .._core import ffi, lib
from .._version import __version__
from . import kernel_table

if TYPE_CHECKING:
    from types import ModuleType

    from .._core import CData



def digest(chunks: Iterable[bytes]) -> str:
    """BLAKE2b-256 of *chunks*, in hex, computed with ref's kernel (self-tested at start-up):
    every start-up that reads a record hashes the code files and keys, and importing hashlib
    for it (OpenSSL's library) cost 2.3 ms of such a start-up, more than all the rest."""
    state = _hash_call.new_blake2b_state(kernel_table.reference_table(), 32, b"", b"", b"")
    for chunk in chunks:
        _hash_call.blake2b_update(state, chunk)
    return _hash_call.blake2b_digest(state).hex()


class CodeFile(NamedTuple):
    """One file of the code behind a kernel table, as it was hashed."""

    path: str
    blake2b: str     # the file's BLAKE2b-256 (:func:`digest`)
    #: (st_dev, st_ino, st_size, st_mtime_ns) before it was hashed (and unchanged after).
    signature: tuple[int, int, int, int]


class Code(NamedTuple):
    """The code behind a kernel table: its files, and where in them the kernels lie."""

    files: tuple[CodeFile, ...]   # sorted by path
    offsets: tuple[int, ...]      # each kernel's address minus its shared object's load address

    def key(self, cpu: str | None = None) -> str:
        """What a record is valid for: these files' contents and the kernels' places in them,
        this CPU (*cpu*: its :func:`argonishche._trust.cpu_gate.identity`), this argonishche and
        ABI."""
        from . import cpu_gate

        lines = [f"code {f.blake2b} {f.path}" for f in self.files]
        lines += [f"offsets {' '.join(map(str, self.offsets))}",
                  f"cpu {cpu_gate.identity() if cpu is None else cpu}",
                  f"argonishche {__version__}", f"kernel_abi {lib.ARGONISHCHE_KERNEL_ABI}"]
        return digest(["\n".join(lines).encode()])

    def as_json(self) -> dict[str, object]:
        return {"files": [list(f) for f in self.files], "offsets": list(self.offsets)}

    @classmethod
    def from_json(cls, data: object) -> Code:
        """The inverse of :meth:`as_json`; ValueError (or TypeError, KeyError) if malformed."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        files = []
        for path, file_digest, numbers in data["files"]:
            dev, inode, size, mtime_ns = (int(n) for n in numbers)
            files.append(CodeFile(str(path), str(file_digest), (dev, inode, size, mtime_ns)))
        return cls(tuple(files), tuple(int(n) for n in data["offsets"]))


def signature(path: str) -> tuple[int, int, int, int] | None:
    """(device, inode, size, mtime in ns) of the file at *path*; None if it cannot be stat'ed."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def hash_file(path: str) -> CodeFile | None:
    """*path*'s :func:`digest` with its signature, if it stayed the same while it was read;
    else None (or not a regular file, or unreadable)."""
    before = signature(path)
    try:
        if before is None or not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            hex_digest = digest(iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return None
    return CodeFile(path, hex_digest, before) if signature(path) == before else None


def _kernel_addresses(table: CData) -> tuple[int, ...]:
    return tuple(int(ffi.cast("uintptr_t", kernel))
                 for kernel in (table.blake2b_compress, table.argon2_fill_block))


def loaded_files(module: ModuleType, table: CData) -> tuple[list[str], tuple[int, ...]] | str:
    """(the files of the code behind *table* from *module*, sorted; the kernels' offsets in
    their shared objects), or why they cannot be known (then no record is possible)."""
    base = ffi.new("uintptr_t *")
    paths, offsets = set(), []
    for address in _kernel_addresses(table):
        name = lib.argonishche_code_file(ffi.cast("void *", address), base)
        if name == ffi.NULL:
            return "the shared object holding the kernels cannot be found (no dladdr here)"
        path = os.fsdecode(ffi.string(name))
        if not os.path.isabs(path):
            return f"the kernels lie in {path!r}, not a file found by an absolute path"
        paths.add(os.path.normpath(path))
        offsets.append(address - base[0])
    file = getattr(module, "__file__", None)
    if file:
        paths.add(os.path.normpath(os.path.abspath(file)))
    return sorted(paths), tuple(offsets)


def _mapping_mismatch(table: CData, files: tuple[CodeFile, ...]) -> str:
    """Why the kernels do not run from one of *files* as hashed ("" if they do, or if this
    system cannot tell): Linux's /proc/self/maps names the file (device, inode) each mapping
    comes from; a file replaced since it was mapped is another inode, or "(deleted)"."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return ""
    known = {(f.signature[0], f.signature[1]) for f in files}
    paths = tuple(" " + os.path.realpath(f.path) for f in files)
    ranges = []
    for line in text.splitlines():
        if not line.endswith(paths):  # only the few mappings of these files need parsing
            continue
        fields = line.split(None, 5)
        low, _, high = fields[0].partition("-")
        major, _, minor = fields[3].partition(":")
        ranges.append((int(low, 16), int(high, 16),
                       (os.makedev(int(major, 16), int(minor, 16)), int(fields[4]))))
    for address in _kernel_addresses(table):
        where = next((file for low, high, file in ranges if low <= address < high), None)
        if where is None or where not in known:
            return "the kernels run from a file that is no longer the one at their path"
    return ""


def code_of(module: ModuleType, table: CData,
            before: dict[str, tuple[int, int, int, int] | None] | None = None) -> Code | str:
    """The :class:`Code` behind *table*, hashed now, or why it cannot be known for sure.

    :param before: signatures of some of the files taken before *module* was imported: a file
        whose signature changed since is a file replaced while it was loaded.
    """
    found = loaded_files(module, table)
    if isinstance(found, str):
        return found
    paths, offsets = found
    files = []
    for path in paths:
        hashed = hash_file(path)
        if hashed is None:
            return f"{path} changed while it was hashed, or cannot be read"
        if before and path in before and before[path] != hashed.signature:
            return f"{path} changed while it was loaded"
        files.append(hashed)
    why = _mapping_mismatch(table, tuple(files))
    return why or Code(tuple(files), offsets)


def verify_loaded(module: ModuleType, table: CData, expected: Code) -> str:
    """Why the code behind *table* is not the code *expected* describes ("" if it is): other
    files, other places in them, or a file changed since *expected* was hashed."""
    found = loaded_files(module, table)
    if isinstance(found, str):
        return found
    paths, offsets = found
    if paths != [f.path for f in expected.files] or offsets != expected.offsets:
        return (f"the kernels loaded come from {', '.join(paths)}, not the code that was "
                f"certified ({', '.join(f.path for f in expected.files)})")
    for f in expected.files:
        if signature(f.path) != f.signature:
            return f"{f.path} changed since it was certified"
    return _mapping_mismatch(table, expected.files)


def module_origin(name: str) -> str | None:
    """The file the module *name* is (or would be) loaded from, without running it (a
    package's parents are imported); None if there is none."""
    module = sys.modules.get(name)
    try:
        spec = (getattr(module, "__spec__", None) if module is not None else _find_spec(name))
    except (ImportError, ValueError):
        return None
    origin = getattr(spec, "origin", None)
    if not origin or not os.path.isabs(origin):  # "built-in", "frozen", a namespace package
        file = getattr(module, "__file__", None)
        return os.path.normpath(file) if file and os.path.isabs(file) else None
    return os.path.normpath(str(origin))


def _find_spec(name: str) -> object:
    """importlib.util.find_spec(name) for a module not imported yet, without importing
    importlib.util (a third of a millisecond of every start-up that reads a record): the
    parent package is imported, and its path searched as the import system would."""
    import importlib.machinery

    parent, _, _ = name.rpartition(".")
    path = importlib.import_module(parent).__path__ if parent else None
    spec = importlib.machinery.PathFinder.find_spec(name, path)
    if spec is None:  # found by another finder on sys.meta_path (an editable install's, say)
        import importlib.util

        spec = importlib.util.find_spec(name)
    return spec
