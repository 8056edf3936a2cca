"""Small per-user records in the cache directory: certifications and remembered selections.

A record is a few lines of ``field: value`` text.  What it says only ever saves work (a check
or a measurement already done), so a record that is missing, corrupt or not trustworthy is simply
not used, never an exception: reading refuses anything that is not a regular file of at most
:data:`MAX_BYTES` owned by this user and writable by no one else, in a directory of the same kind,
without blocking (a FIFO at the path) and without following a symbolic link (to ``/dev/zero``,
say).  Writing creates the directory ``0700`` and the file ``0600``, and replaces the file
atomically, so a reader sees the old record or the new one, never half of one.
"""

from __future__ import annotations

import _thread
import os
import stat

from . import _settings

#: Larger than any record argonishche writes (under 4 KiB), small enough to read at once.
MAX_BYTES = 64 * 1024


def directory(kind: str) -> str | None:
    """``<the user's cache directory>/argonishche/<kind>``; None without a cache directory."""
    base = _settings.user_cache_home()
    return None if base is None else os.path.join(base, "argonishche", kind)


def _trusted(status: os.stat_result, regular: bool) -> bool:
    """A regular file (or a directory) of ours that no one else may write."""
    kind = stat.S_ISREG if regular else stat.S_ISDIR
    if not kind(status.st_mode):
        return False
    if hasattr(os, "getuid"):  # POSIX: ownership and modes mean something
        return status.st_uid == os.getuid() and not status.st_mode & 0o022
    return True


def read(path: str) -> dict[str, list[str]] | None:
    """The record at *path*, as {field: [values, in order]}; None if there is none that can be
    trusted (see the module docstring)."""
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        if not _trusted(os.stat(os.path.dirname(path)), regular=False):
            return None
        descriptor = os.open(path, flags)
    except (OSError, ValueError):  # ValueError: a NUL in a path from the environment
        return None
    try:
        status = os.fstat(descriptor)
        if not _trusted(status, regular=True) or status.st_size > MAX_BYTES:
            return None
        data = os.read(descriptor, MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    if len(data) > MAX_BYTES:  # it grew since fstat
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, separator, value = line.partition(": ")
        if not separator:
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
