"""Small per-user records in the cache directory: certifications and remembered selections.

A record is a few lines of ``field: value`` text.  What it says only ever saves work (a check
or a measurement already done), so a record that is missing, corrupt or not trustworthy is simply
not used, never an exception: reading refuses anything that is not a regular file of at most
:data:`MAX_BYTES` owned by this user and writable by no one else, in a directory of the same kind,
without blocking (a FIFO at the path) and without following a symbolic link (to ``/dev/zero``,
say).  Writing creates the directory ``0700`` and the file ``0600``, and replaces the file
atomically, so a reader sees the old record or the new one, never half of one.

A record that exists but is refused is noted in :data:`ignored` (``argonishche info`` shows
them): someone may be planting records, or a file system may be misbehaving.
"""

from __future__ import annotations

import _thread
import errno
import os
import stat

from . import _settings

#: Larger than any record argonishche writes (under 4 KiB), small enough to read at once.
MAX_BYTES = 64 * 1024

#: {path: why it was not used} for records found but refused by :func:`read` in this process
#: (at most :data:`MAX_IGNORED`: a report, not a log).
ignored: dict[str, str] = {}
MAX_IGNORED = 32


def _ignore(path: str, why: str) -> None:
    if path in ignored or len(ignored) < MAX_IGNORED:
        ignored[path] = why


def directory(kind: str) -> str | None:
    """``<the user's cache directory>/argonishche/<kind>``; None without a cache directory."""
    base = _settings.user_cache_home()
    return None if base is None else os.path.join(base, "argonishche", kind)


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
    except (OSError, ValueError):  # ValueError: a NUL in a path from the environment
        return None  # no directory: no record
    if why:
        _ignore(path, f"its directory {directory} is {why}")
        return None
    try:
        descriptor = os.open(path, flags)
    except ValueError:
        return None
    except OSError as exc:
        if exc.errno != errno.ENOENT:  # ELOOP: a symbolic link; EACCES, ENXIO...
            _ignore(path, "a symbolic link" if exc.errno == errno.ELOOP
                    else f"cannot be opened ({exc.strerror})")
        return None
    try:
        status = os.fstat(descriptor)
        why = _why_untrusted(status, regular=True)
        if not why and status.st_size > MAX_BYTES:
            why = f"larger than {MAX_BYTES} bytes"
        if why:
            _ignore(path, why)
            return None
        data = os.read(descriptor, MAX_BYTES + 1)
    except OSError as exc:
        _ignore(path, f"cannot be read ({exc.strerror})")
        return None
    finally:
        os.close(descriptor)
    if len(data) > MAX_BYTES:  # it grew since fstat
        _ignore(path, f"larger than {MAX_BYTES} bytes")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        _ignore(path, "not UTF-8 text")
        return None
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, separator, value = line.partition(": ")
        if not separator:
            _ignore(path, "a line argonishche does not write")
            return None  # not a line argonishche wrote: the whole record is suspect
        fields.setdefault(key, []).append(value)
    return fields


def writable_directory(kind: str) -> tuple[str | None, str]:
    """(the directory of *kind*, created if need be, "") if records can be written there, else
    (None, why not)."""
    path = directory(kind)
    if path is None:
        return None, "no cache directory (neither XDG_CACHE_HOME nor a home directory is set)"
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        if not _trusted(os.stat(path), regular=False):
            return None, f"{path} is not a directory of this user's that only it may write"
        if not os.access(path, os.W_OK | os.X_OK):
            return None, f"{path} is not writable"
    except (OSError, ValueError) as exc:
        return None, f"{path}: {getattr(exc, 'strerror', None) or exc}"
    return path, ""


def remove(path: str) -> None:
    """Delete the record at *path*, if there is one (never raises)."""
    try:
        os.unlink(path)
    except (OSError, ValueError):
        pass


def write(path: str, fields: list[tuple[str, str]]) -> str:
    """Write *fields* as the record at *path*, atomically, readable by its owner only: "" on
    success, else why it was not written (never raises)."""
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
    except (OSError, ValueError) as exc:
        try:
            os.unlink(temporary)
        except (OSError, ValueError):
            pass
        return f"{path}: {getattr(exc, 'strerror', None) or exc}"
    return ""
