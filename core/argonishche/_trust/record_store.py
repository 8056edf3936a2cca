"""Small per-user records in the cache directory: certifications and remembered selections.

A record is a few lines of ``field: value`` text.  What it says only ever saves work (a check
or a measurement already done), so a record that is missing, corrupt or not trustworthy is simply
not used, never an exception: reading refuses anything that is not a regular file of at most
:data:`MAX_BYTES` owned by this user and writable by no one else, in a directory of the same kind,
without blocking (a FIFO at the path) and without following a symbolic link (to ``/dev/zero``,
say).  Writing creates the directory ``0700`` and the file ``0600``, and replaces the file
atomically, so a reader sees the old record or the new one, never half of one.

A record that exists but is refused is noted in :data:`ignored` (``argonishche info`` shows
them): someone may be planting records, or a file system may be misbehaving.  A record that
cannot be written is noted in :data:`unwritten`, and the work it would have spared later
processes in :data:`not_remembered`: without a writable directory every process pays it again,
and ``info`` says how much.

The directory is ``ARGONISHCHE_CACHE_DIR``, else ``<the user's cache directory>/argonishche``
(:func:`argonishche._settings.records_home`).  A path from the environment may be anything:
too long, 2,500 components deep (``os.makedirs`` recurses once per component), holding a NUL;
every operation on one catches :data:`PATH_ERRORS`.
"""

from __future__ import annotations

import _thread
import errno
import os
import stat

from .. import _settings

#: Larger than any record argonishche writes (under 4 KiB), small enough to read at once.
MAX_BYTES = 64 * 1024

#: {path: why it was not used} for records found but refused by :func:`read` in this process
#: (at most :data:`MAX_IGNORED`: a report, not a log).
ignored: dict[str, str] = {}
MAX_IGNORED = 32


#: {path: why it could not be written} for records this process failed to write (at most
#: :data:`MAX_IGNORED`).
unwritten: dict[str, str] = {}
#: {what: (seconds it took, why it is not remembered)}: work done in this process that a record
#: would have spared the next one (a certification in a child interpreter, say).
not_remembered: dict[str, tuple[float, str]] = {}

#: What an operation on a path from the environment may raise: OSError (too long, not a
#: directory...), ValueError (a NUL), RecursionError (os.makedirs on thousands of components).
PATH_ERRORS = (OSError, ValueError, RecursionError)


def note_ignored(path: str, why: str) -> None:
    """Note in :data:`ignored` that the record at *path* was read but not used, and why."""
    if path in ignored or len(ignored) < MAX_IGNORED:
        ignored[path] = why



def _note_unwritten(path: str, why: str) -> None:
    if path in unwritten or len(unwritten) < MAX_IGNORED:
        unwritten[path] = why


def directory(kind: str) -> str | None:
    """``<records_home()>/<kind>``; None without a cache directory."""
    base, _ = _settings.records_home()
    return None if base is None else os.path.join(base, kind)


def _trusted(status: os.stat_result, regular: bool) -> bool:
    """A regular file (or a directory) of ours that no one else may write (POSIX: where
    ownership and modes mean something)."""
    return not _why_untrusted(status, regular)


def _why_untrusted(status: os.stat_result, regular: bool) -> str:
    """Why a file (or directory) of *status* cannot be trusted; "" if it can (see _trusted)."""
    kind = stat.S_ISREG if regular else stat.S_ISDIR
    if not kind(status.st_mode):
        return "not a regular file" if regular else "not a directory"
    if hasattr(os, "getuid"):
        if status.st_uid != os.getuid():
            return f"owned by user {status.st_uid}, not by this user ({os.getuid()})"
        if status.st_mode & 0o022:
            return f"writable by others (mode {stat.S_IMODE(status.st_mode):04o})"
    return ""


def read(path: str) -> dict[str, list[str]] | None:
    """The record at *path*, as {field: [values, in order]}; None if there is none that can be
    trusted (see the module docstring).  One that exists but is refused is noted in
    :data:`ignored`."""
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    directory = os.path.dirname(path)
    try:
        why = _why_untrusted(os.stat(directory), regular=False)
    except PATH_ERRORS:
        return None  # no directory: no record
    if why:
        note_ignored(path, f"its directory {directory} is {why}")
        return None
    try:
        descriptor = os.open(path, flags)
    except (ValueError, RecursionError):
        return None
    except OSError as exc:
        if exc.errno != errno.ENOENT:  # ELOOP: a symbolic link; EACCES, ENXIO...
            note_ignored(path, "a symbolic link" if exc.errno == errno.ELOOP
                    else f"cannot be opened ({exc.strerror})")
        return None
    try:
        status = os.fstat(descriptor)
        why = _why_untrusted(status, regular=True)
        if not why and status.st_size > MAX_BYTES:
            why = f"larger than {MAX_BYTES} bytes"
        if why:
            note_ignored(path, why)
            return None
        data = os.read(descriptor, MAX_BYTES + 1)
    except OSError as exc:
        note_ignored(path, f"cannot be read ({exc.strerror})")
        return None
    finally:
        os.close(descriptor)
    if len(data) > MAX_BYTES:  # it grew since fstat
        note_ignored(path, f"larger than {MAX_BYTES} bytes")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        note_ignored(path, "not UTF-8 text")
        return None
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, separator, value = line.partition(": ")
        if not separator:
            note_ignored(path, "a line argonishche does not write")
            return None  # not a line argonishche wrote: the whole record is suspect
        fields.setdefault(key, []).append(value)
    return fields


def writable_directory(kind: str) -> tuple[str | None, str]:
    """(the directory of *kind*, created if need be, "") if records can be written there, else
    (None, why not)."""
    base, why_none = _settings.records_home()
    if base is None:
        return None, why_none
    path = os.path.join(base, kind)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        if not _trusted(os.stat(path), regular=False):
            return None, f"{path} is not a directory of this user's that only it may write"
        if not os.access(path, os.W_OK | os.X_OK):
            return None, f"{path} is not writable"
    except PATH_ERRORS as exc:
        return None, f"{shown(path)}: {_error(exc)}"
    return path, ""


def shown(path: str) -> str:
    """*path* for a message: its first and last 60 characters if it is longer than 200."""
    return path if len(path) <= 200 else f"{path[:60]}...{path[-60:]} ({len(path)} characters)"


def _error(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "too many path components"
    return str(getattr(exc, "strerror", None) or exc)


def remove(path: str) -> None:
    """Delete the record at *path*, if there is one (never raises)."""
    try:
        os.unlink(path)
    except PATH_ERRORS:
        pass


def write(path: str, fields: list[tuple[str, str]]) -> str:
    """Write *fields* as the record at *path*, atomically, readable by its owner only: "" on
    success, else why it was not written, also noted in :data:`unwritten` (never raises)."""
    text = "".join(f"{key}: {' '.join(str(value).split())}\n" for key, value in fields)
    # Unique per process and thread (two may write the same record at once; the last wins).
    temporary = f"{path}.{os.getpid()}.{_thread.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                             | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except PATH_ERRORS as exc:
        try:
            os.unlink(temporary)
        except PATH_ERRORS:
            pass
        why = f"{shown(path)}: {_error(exc)}"
        _note_unwritten(path, why)
        return why
    return ""
