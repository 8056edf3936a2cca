"""Certification: the full check of a compiled kernel module, run once per module file and machine.

The start-up self-test (:mod:`argonishche._selftest`) has a fraction of a millisecond per backend.
Certification runs what costs more, the first time a kernel module's code is seen, and remembers
the outcome by the BLAKE2b-256 of that code (every file holding the kernels, see :class:`Code`) and
this CPU's identity in a per-user cache directory (:func:`cache_directory`).  On top
of the quick self-test with every known-answer vector it checks, each for a bug class that the
quick checks cannot afford to reach:

* G's placement check (see _selftest) across the largest lane the default Limits admit (4 GiB in
  one lane: 4,194,304 blocks), so every distance a hash within them can put between ref and prev:
  ref at every distance up to 1,100 blocks behind and ahead of prev, then at the powers of two and
  their neighbours, up to the lane's far end: kernels that go wrong beyond some distance, or only
  within a window of distances.  The buffer is one sparse mapping of the lane's size, of which
  only the pages of the blocks placed are touched (about 2 MiB);
* BLAKE2b (:mod:`argonishche._certify_blake2b`) against hashlib: runs of 0 to 70 blocks and of
  8,191 to 24,577 blocks, and 3 MiB messages, keyed, salted, personalised and as a tree's last
  node: kernels with their own path for long runs (one was wrong for a run of more than 8,192
  blocks, which only a message over 1 MiB makes).  F is never called with more than 16384
  blocks (ARGONISHCHE_BLAKE2B_MAX_RUN, 2 MiB): the core splits a longer run, and the runs
  checked include exactly that many and one more, so no input makes a longer run than
  certification checked.  And F called directly against ref's with the byte counter just below
  every carry of both its words (4 MiB, 2^32 bytes, t0's wrap into t1, ...), in runs and in
  last blocks with f0 and f1: kernels wrong only past some counter (one was wrong past 4 MiB);
* Argon2 against ref's kernels through the driver, every type and version, 1 to 4 lanes on as many
  threads, 1 to 4 MiB: G on the references real hashes make, far ones included, and kernels that
  are not safe to call from several threads at once;
* Argon2 known answers of 1 to 4 MiB computed with argon2-cffi (phc-winner-argon2), which do not
  depend on ref, so that ref itself is certified too.

A record counts only for the argonishche version and kernel ABI that wrote it (a newer version may
check more) and for the CPU it was made on (a home directory shared over NFS).  A directory that
cannot be written means "not remembered", never an error.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, NamedTuple

from . import _certify_blake2b, _driver, _records, _selftest
# Re-exported: the runs and the message checks were defined here before they had a module.
from ._core import ffi, lib
from ._version import __version__
from .exceptions import ArgonishcheError

if TYPE_CHECKING:
    from types import ModuleType

    from ._core import CData

#: The records' directory under the user's cache directory (see :mod:`argonishche._records`).
RECORD_KIND = "certified"
#: The module whose kernels the differential checks compare with.
REFERENCE_MODULE = "argonishche_backends._ref"

# ---- the checks -------------------------------------------------------------------------------


def largest_lane() -> int:
    """The blocks of the largest lane the default :class:`~argonishche.Limits` admit: all of
    max_memory_cost (KiB, a block each) in one lane (parallelism 1).  References lie at most a
    whole memory away, so no hash within the default limits puts one farther from prev."""
    from ._params import Limits  # here: only the full check needs it

    max_memory_cost = Limits().max_memory_cost
    if max_memory_cost is None:  # not with these defaults: unbounded, the check needs a bound
        raise RuntimeError("the default Limits do not bound memory_cost: no lane to certify")
    return max_memory_cost


def _far_distances(farthest: int) -> list[int]:
    """Every distance up to 1,100 blocks (past the 100 and 300 where real kernels failed, and a
    KiB-sized window's edges), then the powers of two from 2,048 and their neighbours, then
    *farthest* itself: none beyond it."""
    powers = {d for k in range(11, farthest.bit_length() + 1) for d in (2**k - 1, 2**k, 2**k + 1)}
    return sorted({*range(2, 1101), *(d for d in powers if d <= farthest), farthest})


@functools.lru_cache(maxsize=1)
def full_distances() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(behind, ahead): the distances (blocks) of ref from prev for the full placement check,
    as far as a lane of :func:`largest_lane` blocks reaches: n - 2 behind prev, n - 1 ahead."""
    lane = largest_lane()
    return tuple(_far_distances(lane - 2)), tuple(_far_distances(lane - 1))


#: Argon2 shapes (memory_cost KiB, time_cost, lanes) compared with ref, for every type and version.
ARGON2_SHAPES = ((4096, 1, 1), (2048, 2, 2), (1024, 3, 4))

#: (type, version, memory_cost, time_cost, parallelism, tag): password b"argonishche
#: certification", salt b"far references!!", 32-byte tag, no secret or associated data.  Computed
#: with argon2-cffi 25.1.0 (argon2.low_level.hash_secret_raw, phc-winner-argon2 inside);
#: tests/registry/test_selftest.py recomputes them where argon2-cffi is installed.
ARGON2_KNOWN_ANSWERS = (
    ("d", 0x13, 4096, 1, 1, "694b3a39d22aafcd350152fdf22c4ea092ce70622330913584069a7628d2b5c8"),
    ("i", 0x13, 2048, 2, 2, "1c093fadf3e5d48b3ed5746ce17533f0cbaf200c1fafd675a26a318d7c13f62a"),
    ("id", 0x13, 3072, 1, 4, "e4bfa42b8828e59ae0a21e6e0937b03215adda02ececd2651c729abecf8f5d17"),
    ("d", 0x10, 2048, 2, 1, "43343a102d1784f0945b91ee270d076c3d99c3b4c69ebe59de920fc755cddb89"),
    ("i", 0x10, 4096, 1, 2, "c941d0b0e53c35b6b79fc1352c73698a7538a38b2e0103ae15420453e09ec598"),
    ("id", 0x10, 1024, 3, 8, "70d2fc5598a9e99bb01845b26b6967ebaab779d761a0e008dcc37ec3a4ff3786"),
)
KNOWN_ANSWER_INPUTS = dict(password=b"argonishche certification", salt=b"far references!!",
                           secret=b"", associated_data=b"")


@functools.lru_cache(maxsize=1)
def full_placements() -> list[tuple[str, int, int, int]]:
    """The full placement check's placements (made on first use: importing this module is part
    of argonishche's start-up): ref at every distance from prev a hash within the default limits
    can put it, in one buffer of the largest lane's size, of which a few MiB are touched."""
    return _selftest.placements(*full_distances())


def reference_table() -> CData:
    """ref's kernel table, as a core ``const argonishche_kernel_table *``."""
    module = importlib.import_module(REFERENCE_MODULE)
    address = int(module.ffi.cast("uintptr_t", module.lib.argonishche_kernels()))
    return ffi.cast("const argonishche_kernel_table *", address)


def _argon2(table: CData, type: str, version: int, memory_cost: int, time_cost: int, lanes: int,
            inputs: dict[str, bytes], hash_len: int = 32) -> bytes:
    return _driver.argon2(table, table, type=type, version=version, time_cost=time_cost,
                          memory_cost=memory_cost, parallelism=lanes, threads=lanes,
                          hash_len=hash_len, password=inputs["password"], salt=inputs["salt"],
                          secret=inputs["secret"], associated_data=inputs["associated_data"])


def _argon2_cases() -> Iterator[tuple[str, int, int, int, int, dict[str, bytes], int]]:
    import random  # here: it costs a millisecond to import

    rng = random.Random(9106)
    for memory_cost, time_cost, lanes in ARGON2_SHAPES:
        for type in ("d", "i", "id"):
            for version in (0x10, 0x13):
                inputs = dict(password=rng.randbytes(24), salt=rng.randbytes(16),
                              secret=rng.randbytes(8), associated_data=rng.randbytes(12))
                yield type, version, memory_cost, time_cost, lanes, inputs, rng.choice((32, 65))


@functools.lru_cache(maxsize=None)
def _reference_tags(address: int) -> tuple[bytes, ...]:
    """ref's tags for _argon2_cases(), computed once per process (certify() is often called for
    every backend in turn)."""
    table = ffi.cast("const argonishche_kernel_table *", address)
    return tuple(_argon2(table, *case) for case in _argon2_cases())


def _kernels_of(table: CData) -> tuple[int, ...]:
    return tuple(int(ffi.cast("uintptr_t", kernel))
                 for kernel in (table.blake2b_compress, table.argon2_fill_block))


def argon2_failures(table: CData, reference: CData) -> list[str]:
    """Argon2 through *table* against *reference* (ref's kernels) and the known answers."""
    failures = []
    for type, version, memory_cost, time_cost, lanes, known in ARGON2_KNOWN_ANSWERS:
        if _argon2(table, type, version, memory_cost, time_cost, lanes,
                   KNOWN_ANSWER_INPUTS).hex() != known:
            failures.append(f"Argon2{type} v={version:#x} m={memory_cost} t={time_cost} "
                            f"p={lanes} (known answer computed with argon2-cffi)")
    if _kernels_of(table) == _kernels_of(reference):
        return failures  # ref itself: nothing to compare with
    expected = _reference_tags(int(ffi.cast("uintptr_t", reference)))
    for case, tag in zip(_argon2_cases(), expected, strict=True):
        if _argon2(table, *case) != tag:
            type, version, memory_cost, time_cost, lanes = case[:5]
            failures.append(f"Argon2{type} v={version:#x} m={memory_cost} t={time_cost} "
                            f"p={lanes} on {lanes} threads differs from ref")
    return failures


def failures(table: CData, reference: CData | None = None) -> list[str]:
    """Every check of the certification on *table*, uncached; one line per failure.

    :param reference: ref's kernel table (default: :func:`reference_table`).
    """
    reference = reference_table() if reference is None else reference
    return (_selftest.run(table, full=True)
            + _selftest.placement_failures(table, full_placements(), raise_if_unmapped=True)
            + _certify_blake2b.failures(table, reference) + argon2_failures(table, reference))


# ---- the code that runs -----------------------------------------------------------------------
#
# A record is valid for the code that runs, not for a module's file: the kernel table's functions
# are found in the shared objects that hold them (dladdr on the pointers), and every one of those
# files is hashed, together with the kernel module's own file (a Python module re-exporting another
# module's kernels is then keyed on the compiled code too).  A file replaced while it is loaded and
# hashed (a concurrent ``pip install -U``) must not have the old code's outcome recorded under the
# new file's hash, nor the new file used under the old's: each file is stat'ed before it is hashed
# and after the module is loaded, and on Linux the mapping the kernels run from must be that file.


def digest(chunks: Iterable[bytes]) -> str:
    """BLAKE2b-256 of *chunks*, in hex, computed with ref's kernel (self-tested at start-up):
    every start-up that reads a record hashes the code files and keys, and importing hashlib
    for it (OpenSSL's library) cost 2.3 ms of such a start-up, more than all the rest."""
    state = _driver.new_blake2b_state(reference_table(), 32, b"", b"", b"")
    for chunk in chunks:
        _driver.blake2b_update(state, chunk)
    return _driver.blake2b_digest(state).hex()


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
        this CPU (*cpu*: its :func:`argonishche._cpu.identity`), this argonishche and ABI."""
        from . import _cpu

        lines = [f"code {f.blake2b} {f.path}" for f in self.files]
        lines += [f"offsets {' '.join(map(str, self.offsets))}",
                  f"cpu {_cpu.identity() if cpu is None else cpu}",
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


# ---- the records ------------------------------------------------------------------------------


class CertificationResult(NamedTuple):
    """The outcome of :func:`certify` (a NamedTuple: a dataclass costs 0.5 ms more to import)."""

    passed: bool
    failures: list[str]
    cached: bool     # remembered from an earlier certification of the same code: nothing ran
    seconds: float   # what this call took (a cached result: the lookup)


class Recalled(NamedTuple):
    """A record valid for the code now at its files' paths (see :func:`recall`)."""

    passed: bool
    failures: list[str]
    stage: str       # "selftest" or "certification": which check failed
    code: Code       # as hashed now, before the module is imported


#: Set by ``argonishche selftest --recertify`` before the registry is built: no record is read,
#: so every non-built-in module is certified again in a child, and its record rewritten.
ignore_records = False


def cache_directory() -> str | None:
    """Where records live: ``<records home>/certified`` (see
    :func:`argonishche._settings.records_home`); None without one."""
    return _records.directory(RECORD_KIND)


def record_path(module_name: str, origin: str | None, cpu: str | None = None) -> str | None:
    """Where the record of the kernel module *module_name* loaded from *origin* is, on this
    CPU (*cpu*: its identity, if known), for this argonishche and ABI (None: no cache
    directory, or no file to key on)."""
    from . import _cpu

    directory = cache_directory()
    if directory is None or origin is None:
        return None
    slot = "\0".join((module_name, origin, cpu or _cpu.identity(), __version__,
                      str(lib.ARGONISHCHE_KERNEL_ABI)))
    return os.path.join(directory, digest([slot.encode()]))


def _valid_fields(fields: dict[str, list[str]] | None, module_name: str, cpu: str) -> bool:
    return (fields is not None and fields.get("module") == [module_name]
            and fields.get("argonishche") == [__version__]
            and fields.get("kernel_abi") == [str(lib.ARGONISHCHE_KERNEL_ABI)]
            and fields.get("cpu") == [cpu]
            and fields.get("passed") in (["yes"], ["no"]) and len(fields.get("key", [])) == 1)


def recall(module_name: str, origin: str | None) -> Recalled | None:
    """The record for the kernel module *module_name* (loaded from *origin*), if it is valid for
    the files it names as they are now: each is hashed (and stat'ed, so that the module can be
    checked after it is imported to have loaded them unchanged).  Nothing is imported."""
    from . import _cpu

    cpu = _cpu.identity()  # once: it takes a quarter of a millisecond
    path = record_path(module_name, origin, cpu)
    fields = None if path is None or ignore_records else _records.read(path)
    if fields is None or not _valid_fields(fields, module_name, cpu):
        return None
    files = []
    for line in fields.get("code", []):
        file_digest, _, file = line.partition(" ")
        hashed = hash_file(file)
        if hashed is None or hashed.blake2b != file_digest:
            return None
        files.append(hashed)
    try:
        offsets = tuple(int(n) for n in fields.get("offsets", [""])[0].split())
    except ValueError:
        return None
    code = Code(tuple(files), offsets)
    if not files or code.key(cpu) != fields["key"][0]:
        return None
    return Recalled(fields["passed"] == ["yes"], fields.get("failure", []),
                    fields.get("stage", ["certification"])[0], code)


def forget(module_name: str, origin: str | None) -> None:
    """Delete the record for *module_name* (it named code that is not what loads)."""
    path = record_path(module_name, origin)
    if path is not None:
        _records.remove(path)


def remember(module_name: str, origin: str | None, code: Code, *, passed: bool,
             failures: list[str], seconds: float, stage: str = "certification") -> str:
    """Write the record of *code*'s outcome: "", or why it is not remembered (no cache
    directory, or the write failed: :data:`argonishche._records.unwritten` notes it)."""
    from . import _cpu

    cpu = _cpu.identity()
    path = record_path(module_name, origin, cpu)
    if path is None:
        return _records.writable_directory(RECORD_KIND)[1] or "no file to key the record on"
    return _records.write(path, [
        ("key", code.key(cpu)), ("passed", "yes" if passed else "no"), ("stage", stage),
        ("date", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
        ("argonishche", __version__), ("kernel_abi", str(lib.ARGONISHCHE_KERNEL_ABI)),
        ("cpu", cpu), ("module", module_name), ("file", origin or "?"),
        ("offsets", " ".join(map(str, code.offsets))),
        *(("code", f"{f.blake2b} {f.path}") for f in code.files),
        ("seconds", f"{seconds:.3f}"), *(("failure", line) for line in failures)])


def _in_process_code(module: ModuleType, table: CData) -> tuple[str, str | None, Code | None]:
    name = str(getattr(module, "__name__", "?"))
    origin = module_origin(name) if name in sys.modules else None
    file = getattr(module, "__file__", None)
    if origin is None and file:
        origin = os.path.normpath(os.path.abspath(str(file)))
    code = code_of(module, table)
    return name, origin, code if isinstance(code, Code) else None


def remember_failure(module: ModuleType, table: CData, reasons: list[str]) -> None:
    """Record that the code behind *table* gave wrong results (the witness caught it), so that
    new processes refuse it until it is certified again (``argonishche selftest --full``)."""
    name, origin, code = _in_process_code(module, table)
    if code is not None:
        remember(name, origin, code, passed=False, failures=list(reasons), seconds=0.0)


def _recall_code(name: str, origin: str | None, code: Code) -> tuple[bool, list[str]] | None:
    from . import _cpu

    cpu = _cpu.identity()
    path = record_path(name, origin, cpu)
    fields = None if path is None or ignore_records else _records.read(path)
    if (fields is None or not _valid_fields(fields, name, cpu)
            or fields["key"] != [code.key(cpu)]):
        return None
    return fields["passed"] == ["yes"], fields.get("failure", [])


def is_certified(module: ModuleType, table: CData | None = None) -> bool:
    """Whether the code behind *module*'s kernel table (*table*, default its own) passed a
    certification remembered here (a lookup: nothing is run)."""
    if table is None:
        from ._kernel_table import kernel_table

        table = kernel_table(module)
    name, origin, code = _in_process_code(module, table)
    recalled = None if code is None else _recall_code(name, origin, code)
    return recalled is not None and recalled[0]


def certify(module: ModuleType, table: CData, *, reference: CData | None = None,
            force: bool = False) -> CertificationResult:
    """Certify the kernel module *module*, whose kernel table is *table*, in this process: the
    remembered outcome for its code if there is one (unless *force*), else run :func:`failures`
    and remember it.  (The registry certifies a third-party module in a child interpreter
    first: see :mod:`argonishche._certify_child`.)

    Never raises for a wrong kernel.  A check that cannot run (ref's module missing, no memory)
    is a failure that is not remembered.

    :param reference: ref's kernel table (default: imported from argonishche_backends._ref).
    """
    started = time.perf_counter()
    name, origin, code = _in_process_code(module, table)
    if not force and code is not None:
        recalled = _recall_code(name, origin, code)
        if recalled is not None:
            return CertificationResult(recalled[0], recalled[1], True,
                                       time.perf_counter() - started)
    try:
        found = failures(table, reference)
    except (ImportError, MemoryError, OSError, ArgonishcheError) as exc:
        return CertificationResult(False, [f"certification could not run: {exc}"], False,
                                   time.perf_counter() - started)
    result = CertificationResult(not found, found, False, time.perf_counter() - started)
    if code is not None:
        remember(name, origin, code, passed=result.passed, failures=found,
                 seconds=result.seconds)
    return result
