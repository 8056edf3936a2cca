"""Which interpreter runs the certification child, and how it is started (the parent's side of
:mod:`argonishche._trust.certification_child`).

* **The interpreter is chosen, not assumed.**  ``ARGONISHCHE_CERTIFY_PYTHON`` names one (and
  then only that one is tried).  Otherwise ``sys.executable``, unless the application is frozen
  (``sys.frozen``: ``sys.executable`` is the application itself, which would run its own main
  again), then ``sys._base_executable``, then ``pythonX.Y`` under ``sys.base_exec_prefix``;
  any whose file name is not a Python's (an embedding host's, ``uwsgi``) is tried last.
* **A candidate proves itself at once.**  The child's bootstrap (``-c``) prints a handshake line
  naming its implementation, version and ABI before it imports anything, so a host binary
  (uWSGI's, Apache's) that never exits is killed after :data:`STARTUP_TIMEOUT` seconds, not after
  the certification's timeout, and a Python of another version is refused.  A candidate that
  fails is remembered for the process, and in the cache for its path and file signature (for
  :data:`RETRY_AFTER` seconds at most, in case it was only slow), so the cost is paid once.
* **The child runs with the parent's isolation**: its ``sys.flags`` (``-I``, ``-E``, ``-s``,
  ``-S``), the parent's ``sys.path`` given as an argument, never through ``PYTHONPATH``, and
  ``PYTHONHOME`` only if the parent honoured it.
* **A certification child never starts another one** (``CERTIFICATION_CHILD_MARKER`` in its
  environment).
* **The child dies with the parent**: it is given the parent's pid and a pipe as stdin (see
  :func:`argonishche._trust.certification_child.die_with_parent`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import NamedTuple

from .._settings import CERTIFICATION_CHILD_MARKER

#: The first line the child prints, followed by :func:`identity`.
HANDSHAKE = "argonishche-certification-child: "
#: Seconds a candidate has to print the handshake: Python prints it before importing anything,
#: so only a program that is not such a Python (or a machine at a standstill) takes this long.
STARTUP_TIMEOUT = 5.0
#: Seconds a remembered unusable interpreter stays refused in other processes, unless its file
#: changes first (a start-up timeout may have been a passing overload).
RETRY_AFTER = 86400
#: The setting that names the interpreter.
SETTING = "ARGONISHCHE_CERTIFY_PYTHON"
#: Variables the child keeps from the parent's environment, besides ARGONISHCHE_* and PYTHONHOME
#: (see :func:`child_environment`): how the dynamic loader finds libraries, where temporary files
#: and the user's cache go, the locale.
KEPT_VARIABLES = ("PATH", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "SYSTEMROOT", "TMPDIR",
                  "TEMP", "TMP", "LANG", "LC_ALL", "LC_CTYPE", "HOME", "USERPROFILE",
                  "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "XDG_CACHE_HOME")

#: Run by the child's interpreter: the handshake first; then the parent's sys.path and the .pth
#: files of the parent's site directories that this interpreter did not read at its start (an
#: editable install's import hook, when the child runs another interpreter than the parent's:
#: the last argument, see :func:`parent_path`); then the child's main (MODULE FEATURES
#: PARENT_PID).
BOOTSTRAP = f"""\
import sys
sys.stdout.write({HANDSHAKE!r} + '%s-%d.%d%s' % (sys.implementation.name,
                 sys.version_info[0], sys.version_info[1], getattr(sys, 'abiflags', '')) + '\\n')
sys.stdout.flush()
import json
parent = json.loads(sys.argv.pop())
read_at_start = set(sys.path)
sys.path[:] = parent['path']
if parent['sites']:
    import site
    for directory in parent['sites']:
        if directory not in read_at_start:
            site.addsitedir(directory)
from argonishche._trust.certification_child import main
sys.exit(main(sys.argv[1:]))
"""

#: {interpreter path: why it cannot run the child}, for this process.
unusable: dict[str, str] = {}
_unusable_lock = threading.Lock()


def identity() -> str:
    """This interpreter as the handshake names it: implementation, version, ABI flags."""
    return (f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"
            f"{getattr(sys, 'abiflags', '')}")


def interpreter_flags() -> list[str]:
    """The child's command-line flags: the parent's isolation, -P (where it exists: the working
    directory's modules are not the parent's) and -B (no bytecode written by a check)."""
    flags = sys.flags
    chosen = ["-I"] if flags.isolated else [
        *(["-E"] if flags.ignore_environment else []),
        *(["-s"] if flags.no_user_site else [])]
    if flags.no_site:
        chosen.append("-S")
    if sys.version_info >= (3, 11) and not flags.isolated:
        chosen.append("-P")
    return [*chosen, "-B"]


def child_environment(settings: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: :data:`KEPT_VARIABLES`, ``PYTHONHOME`` if this interpreter
    honoured the environment, the ``ARGONISHCHE_*`` *settings* in force and the marker."""
    from .._settings import environment_keeping

    honoured = () if sys.flags.ignore_environment or sys.flags.isolated else ("PYTHONHOME",)
    environ = environment_keeping(KEPT_VARIABLES + honoured, **settings)
    environ[CERTIFICATION_CHILD_MARKER] = str(os.getpid())
    return environ


def parent_path() -> str:
    """This process's ``sys.path`` for the child, and the site directories whose .pth files it
    read at start-up, as JSON; "" (the working directory of ``python -c``) named, since the
    child runs with -P."""
    import site

    sites = []
    if not sys.flags.no_site:
        user = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
        sites = [d for d in [*site.getsitepackages(), *user] if d in sys.path]
    return json.dumps({"path": [os.path.abspath(p) if p else os.getcwd() for p in sys.path],
                       "sites": sites})


def candidates(configured: str | None) -> list[tuple[str, str]]:
    """The interpreters to try, in order, as (path, where it came from)."""
    if configured:
        return [(configured, SETTING)]
    found = []
    if not getattr(sys, "frozen", False):
        found += [(sys.executable or "", "sys.executable"),
                  (getattr(sys, "_base_executable", "") or "", "sys._base_executable")]
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    found.append((os.path.join(sys.base_exec_prefix, "python.exe") if os.name == "nt" else
                  os.path.join(sys.base_exec_prefix, "bin", f"python{version}"),
                  "the Python under sys.base_exec_prefix"))
    seen, unique = set(), []
    for path, origin in found:
        if path and os.path.isfile(path) and os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            unique.append((path, origin))
    # A host binary (uwsgi, httpd) costs a whole handshake timeout to rule out, in every process
    # when no cache can remember it: one not named like a Python is tried last.
    return sorted(unique, key=lambda candidate: not named_like_python(candidate[0]))


def named_like_python(path: str) -> bool:
    """Whether *path*'s file name is a Python interpreter's (python3.12, pypy3, python.exe)."""
    name = os.path.basename(path).lower()
    return name.startswith(("python", "pypy"))


def _record_path(path: str) -> str | None:
    from . import code_identity, record_store

    directory = record_store.directory("interpreters")
    if directory is None:
        return None
    return os.path.join(directory, code_identity.digest([f"{os.path.realpath(path)}\0{identity()}"
                                                   .encode()])[:32])


def _signature(path: str) -> str:
    from .code_identity import signature

    return " ".join(map(str, signature(os.path.realpath(path)) or ()))


def remembered_unusable(path: str) -> str | None:
    """Why *path* cannot run the child, if this process or a valid record knows; else None."""
    with _unusable_lock:
        if path in unusable:
            return unusable[path]
    from . import record_store

    record_path = _record_path(path)
    fields = None if record_path is None else record_store.read(record_path)
    if not fields:
        return None
    try:
        valid = (fields["python"] == [" ".join(os.path.realpath(path).split())]  # as written
                 and fields["signature"] == [_signature(path)]
                 and 0 <= time.time() - float(fields["when"][0]) < RETRY_AFTER)
        why = fields["why"][0]
    except (KeyError, IndexError, ValueError):
        return None
    if not valid:
        return None
    why += " (remembered from an earlier run)"
    with _unusable_lock:
        unusable[path] = why
    return why


def remember_unusable(path: str, why: str) -> None:
    """Note that *path* cannot run the child, for this process and (best effort) others."""
    from . import record_store

    with _unusable_lock:
        unusable[path] = why
    record_path = _record_path(path)
    if record_path is not None:
        record_store.write(record_path, [("python", os.path.realpath(path)),
                                     ("signature", _signature(path)),
                                     ("when", str(int(time.time()))), ("why", why)])


def no_interpreter_reason(tried: list[str]) -> str:
    """The reason a backend cannot be certified when no candidate could run the child."""
    python = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    found = "; ".join(tried) if tried else (
        "none found (sys.executable is this frozen application)" if getattr(sys, "frozen", False)
        else "none found")
    return (f"not certified: no Python interpreter could run the certification child: {found}; "
            f"set {SETTING} to the path of a {python} ({identity()}) that can import argonishche")


class Started(NamedTuple):
    """A child that answered the handshake."""

    process: subprocess.Popen[bytes]
    python: str
    #: The write end of the child's stdin: open while the parent lives (EOF tells the child).
    lifeline: int


class Unusable(NamedTuple):
    """Why an interpreter did not run the child."""

    why: str
    #: Whether that holds for other runs (not so for a handshake cut short by a certification
    #: timeout shorter than STARTUP_TIMEOUT): only then is it remembered.
    lasting: bool = True


def start(python: str, origin: str, arguments: list[str], settings: Mapping[str, str],
          timeout: float) -> Started | Unusable:
    """Start the child with *python* (found as *origin*) on *arguments* (MODULE FEATURES), and
    wait for its handshake for at most :data:`STARTUP_TIMEOUT` (and *timeout*) seconds: the
    started child, or why this interpreter cannot run it."""
    posix = os.name == "posix"
    command = [python, *interpreter_flags(), "-c", BOOTSTRAP, *arguments, str(os.getpid()),
               parent_path()]
    read_end, lifeline = os.pipe()
    try:
        process = subprocess.Popen(
            command, stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
            env=child_environment(settings), start_new_session=posix,
            creationflags=0 if posix else getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
    except OSError as exc:
        os.close(lifeline)
        return Unusable(f"{origin} {python} cannot be started ({exc.strerror or exc})")
    finally:
        os.close(read_end)
    wait = min(STARTUP_TIMEOUT, timeout)
    first: list[bytes] = []
    assert process.stdout is not None
    stdout = process.stdout
    # Unbuffered: readline takes the handshake line only, and leaves the answer for communicate.
    reader = threading.Thread(target=lambda: first.append(stdout.readline(200)), daemon=True)
    try:
        reader.start()
        reader.join(wait)
        line = first[0].decode("utf-8", "replace") if first else None
        if line is not None and line.rstrip("\n") == HANDSHAKE + identity():
            return Started(process, python, lifeline)
        kill(process, posix)
    except BaseException:
        kill(process, posix)
        os.close(lifeline)
        raise
    os.close(lifeline)
    reader.join(1.0)
    if line is None:
        return Unusable(f"{origin} {python} did not answer within {wait:g} s and was killed "
                        f"(not a Python interpreter?)", lasting=wait >= STARTUP_TIMEOUT)
    if line.startswith(HANDSHAKE):
        return Unusable(f"{origin} {python} is {line[len(HANDSHAKE):].strip()[:80]}, "
                        f"not {identity()}")
    status = process.returncode
    how = f"died of signal {-status}" if status < 0 else f"exited with status {status}"
    return Unusable(f"{origin} {python} {how} before it answered (not a Python interpreter?)")


def kill(process: subprocess.Popen[bytes], posix: bool) -> None:
    """Kill the child and its process group (a kernel module may have started processes of
    its own), and reap it."""
    import signal

    if posix:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
    process.kill()
    process.communicate()
