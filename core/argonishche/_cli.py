"""The ``argonishche`` command (also ``python -m argonishche``).

``hash`` and ``verify`` read the password from stdin; ``hash`` takes the reference ``argon2``
program's flags and prints its lines.  Exit status: 0 success, 1 a wrong password (or a hash
that could not be computed), 2 a usage error or bad input; error messages go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import TYPE_CHECKING

from . import _info, _record, _registry, _tune_command
from ._bench import command as _bench_command
from ._cli_arguments import fail as _fail
from ._cli_arguments import whole_number
from ._parameter_checks import DEFAULT_LIMITS, LIMIT_MAX, Limits
from ._trust import certification, self_test
from ._wording import stated

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TypedDict

    class _ReferenceDefaults(TypedDict):
        t: int
        log2_kib: int
        p: int
        l: int  # noqa: E741 - the reference program's flag
        version: str

    class _MachineOptions(TypedDict):
        backend: str | None
        allocator: str | None

#: The reference ``argon2`` program's defaults (phc-winner-argon2 ``src/run.c``).
REFERENCE_DEFAULTS: _ReferenceDefaults = {"t": 3, "log2_kib": 12, "p": 1, "l": 32, "version": "13"}
TYPE_NAMES = {"i": "Argon2i", "d": "Argon2d", "id": "Argon2id"}
UINT32_MAX = 2**32 - 1
#: The longest --secret-file read: a pepper is 16 to 64 bytes, and a device such as /dev/zero
#: must not be read until memory runs out.
MAX_SECRET_BYTES = 2**20
#: The flag behind each parameter a ParameterError names, for hash's messages.
FLAG_OF = {"time_cost": "-t", "memory_cost": "-m/-k", "parallelism": "-p", "hash_len": "-l"}
#: verify's flag for each Limits field: (flag, metavar, help).
LIMIT_FLAGS = {
    "max_memory_cost": ("--max-memory", "KIB", "the largest memory cost m, in KiB"),
    "max_time_cost": ("--max-time", "N", "the largest time cost t"),
    "max_parallelism": ("--max-parallelism", "N", "the largest parallelism p"),
    "max_work": ("--max-work", "N", "the largest t x m, in KiB-passes"),
    "max_hash_len": ("--max-hash-len", "BYTES", "the longest tag"),
    "max_salt_len": ("--max-salt-len", "BYTES", "the longest salt"),
}


class InputError(Exception):
    """Bad input found after parsing (exit status 2)."""


def _status_of(exc: Exception) -> int:
    from .exceptions import BackendError, InvalidHashError, MemoryBudgetError, ParameterError

    # A hash over the process's whole work-memory budget is refused before any memory is taken,
    # and no wait brings that memory: the flags (or ENCODED's costs) ask too much, as a limit's.
    return 2 if isinstance(exc, (ParameterError, InvalidHashError, BackendError,
                                 MemoryBudgetError, InputError)) else 1


def _command_info(args: argparse.Namespace) -> int:
    report = _info.collect(cpuinfo=not args.fast)
    print(json.dumps(report, indent=2) if args.json else _info.render(report))
    return 1 if report["error"] or report.get("allocator_error") else 0


def _command_selftest(args: argparse.Namespace) -> int:
    """0 only if every backend that could run passed and at least one ran: a backend that failed
    to load or its checks is a failure too (an installation where nothing can hash, or one with
    a broken module, must not pass a release's smoke test)."""
    from ._discovery import CERTIFICATION_FAILED, LOAD_FAILED, SELFTEST_FAILED

    if args.recertify:  # no record is read: each non-built-in module is certified in a child
        certification.ignore_records = True
        _registry.reset()
    try:
        reg = _registry.get()
    finally:
        certification.ignore_records = False
    status, tested = 0, 0
    checked = (CERTIFICATION_FAILED, SELFTEST_FAILED, LOAD_FAILED)
    for entry in reg.entries.values() if args.recertify else ():
        if not entry.builtin and (entry.table is not None or entry.state in checked):
            print(f"{entry.name:<10} certified again in a child interpreter: "
                  f"{entry.validation if entry.table is not None else entry.state}"
                  + (f" ({entry.reason})" if entry.reason else ""))
    if args.full:  # a third-party backend refused on a remembered failure is certified again
        from ._trust import vetting

        ref = reg.entries.get("ref")
        for entry in reg.entries.values():
            if not entry.builtin and entry.state in (CERTIFICATION_FAILED, SELFTEST_FAILED):
                entry.state, entry.reason = "available", ""
                vetting.certify(entry, ref.table if ref is not None else None,
                                        reg.settings, force=True)
    for entry in reg.entries.values():
        if entry.table is None:
            print(f"{entry.name:<10} not run: {stated(entry.state, entry.reason)}")
            status |= entry.state in (LOAD_FAILED, SELFTEST_FAILED, CERTIFICATION_FAILED)
            continue
        tested += 1
        if args.full:  # the certification, run now and remembered (see certification)
            result = certification.certify(entry.module, entry.table, force=True)
            failures, took = result.failures, f" ({result.seconds:.2f} s)"
        else:
            failures, took = self_test.run(entry.table, full=True), ""
        print(f"{entry.name:<10} {'FAIL' if failures else 'ok'}{took}")
        for failure in failures:
            print(f"{'':<10} wrong: {failure}")
        status |= bool(failures)
    if not tested:
        print("no backend could be tested: nothing here can hash", file=sys.stderr)
        return 1
    return status


# ---- hash and verify --------------------------------------------------------------------------


def _secret_and_ad(args: argparse.Namespace) -> tuple[bytes, bytes]:
    secret = b""
    if args.secret_file:
        try:
            with open(args.secret_file, "rb") as f:
                # Every byte, a trailing newline included; but not /dev/zero's forever.
                secret = f.read(MAX_SECRET_BYTES + 1)
        except OSError as exc:
            raise InputError(f"--secret-file: {exc.strerror}: {args.secret_file}") from None
        if len(secret) > MAX_SECRET_BYTES:
            raise InputError(f"--secret-file: more than {MAX_SECRET_BYTES:,} bytes in "
                             f"{args.secret_file} (a pepper is tens of bytes)")
    return secret, os.fsencode(args.ad) if args.ad is not None else b""


def _machine_options(args: argparse.Namespace) -> _MachineOptions:
    """--backend and --allocator, checked before any hashing (so errors are bad input)."""
    reg = _registry.get()
    reg.kernel_table("argon2", args.backend)
    reg.kernel_table("blake2b", args.backend)
    reg.allocator(args.allocator)
    return {"backend": args.backend, "allocator": args.allocator}


def _within_work_memory_budget(needed: int) -> None:
    """MemoryBudgetError, as the hash would raise it, for *needed* bytes over the process's whole
    work-memory budget: said before the password is read, since no wait brings that memory."""
    from . import _work_memory

    current = _work_memory.config()
    if needed > current.budget:
        raise _work_memory._over_budget(needed, current)


def _command_hash(args: argparse.Namespace) -> int:
    from . import _phc
    from ._argon2 import argon2_hash_encoded, argon2_verify
    from ._hash_call import memory_size
    from ._parameter_checks import MIN_SALT_LEN, Argon2Params, Limits, byte_buffer
    from .exceptions import ArgonishcheError

    if args.m is not None:
        memory_cost = min(1 << args.m, UINT32_MAX)
    else:
        memory_cost = args.k if args.k is not None else 1 << REFERENCE_DEFAULTS["log2_kib"]
    salt = os.fsencode(args.salt)
    version = 0x10 if args.v == "10" else 0x13
    try:
        secret, ad = _secret_and_ad(args)
        # Everything is checked before anything is printed: a script sees output or an error.
        Argon2Params.check(type=args.type, version=version, time_cost=args.t,
                           memory_cost=memory_cost, parallelism=args.p, hash_len=args.l)
        byte_buffer("salt", salt, min_len=MIN_SALT_LEN)
        _within_work_memory_budget(memory_size(memory_cost, args.p))
        options = _machine_options(args)
        password = sys.stdin.buffer.read()  # all of it, as the reference reads: no newline strip
        if not password:
            raise InputError("no password read")
        started = time.perf_counter()
        encoded = argon2_hash_encoded(password, salt, secret=secret, associated_data=ad,
                                      type=args.type, time_cost=args.t,
                                      memory_cost=memory_cost, parallelism=args.p,
                                      hash_len=args.l, version=version, **options)
        elapsed = time.perf_counter() - started  # wall time; the reference printed CPU time
    except (ArgonishcheError, InputError, MemoryError) as exc:
        message = str(exc)
        flag = next((f for name, f in FLAG_OF.items() if message.startswith(name + " ")), None)
        return _fail(f"{flag}: {message}" if flag else message, _status_of(exc))
    tag = _phc.decode(encoded).tag
    if args.e:
        print(encoded)
        return 0
    if args.r:
        print(tag.hex())
        return 0
    print(f"Type:\t\t{TYPE_NAMES[args.type]}")
    print(f"Iterations:\t{args.t}")
    print(f"Memory:\t\t{memory_cost} KiB")
    print(f"Parallelism:\t{args.p}")
    print(f"Hash:\t\t{tag.hex()}")
    print(f"Encoded:\t{encoded}")
    print(f"{elapsed:2.3f} seconds")
    try:
        # The costs are the user's own flags, not untrusted input: no limits on this check.
        argon2_verify(encoded, password, secret=secret, associated_data=ad,
                      limits=Limits.none(), **options)
    except ArgonishcheError as exc:  # a hash that does not verify here is a bug: say so
        return _fail(str(exc), 1)
    print("Verification ok")
    sys.stdout.flush()
    # Our own line goes to stderr, last, so stdout stays byte-for-byte the reference program's.
    reg = _registry.get()
    print(f"[argonishche] backend {args.backend or reg.selected_name('argon2')}, allocator "
          f"{args.allocator or reg.allocator_name}, wipe on (explicit_bzero before the work "
          f"memory is freed or reused); time is wall time, not CPU time", file=sys.stderr)
    return 0


class CommandLineLimits(Limits):
    """Limits whose messages name verify's flags instead of Python keywords."""

    def _spell(self, name: str) -> str:
        return LIMIT_FLAGS[name][0] if name in LIMIT_FLAGS else "the length limit"

    def _how_to_raise(self, **settings: int) -> str:
        flags = " ".join(f"{LIMIT_FLAGS[name][0]} {value}" for name, value in settings.items())
        return f"{flags} (--no-limits disables every limit)"


def _limits(args: argparse.Namespace) -> Limits:
    """The defaults, or none with --no-limits; then each --max-* flag given."""
    base = CommandLineLimits.none() if args.no_limits else CommandLineLimits()
    given = {name: getattr(args, name) for name in LIMIT_FLAGS}
    return _record.replace(base, **{k: v for k, v in given.items() if v is not None})


def _command_verify(args: argparse.Namespace) -> int:
    from ._argon2 import argon2_verify
    from .exceptions import ArgonishcheError, VerifyMismatchError

    try:
        secret, ad = _secret_and_ad(args)
        options = _machine_options(args)
        argon2_verify(args.encoded, sys.stdin.buffer.read(), secret=secret,
                      associated_data=ad, limits=_limits(args), **options)
    except VerifyMismatchError:
        # The reference library's message for ARGON2_VERIFY_MISMATCH.
        return _fail("The password does not match the supplied hash", 1)
    except (ArgonishcheError, InputError, MemoryError) as exc:
        return _fail(str(exc), _status_of(exc))
    print("Verification ok")
    return 0


# ---- the parser ---------------------------------------------------------------------------------


def _add_extras(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secret-file", metavar="FILE",
                        help="Argon2's secret input K (a pepper): every byte of FILE")
    parser.add_argument("--ad", metavar="TEXT", help="Argon2's associated data X")
    parser.add_argument("--backend", metavar="NAME",
                        help="use this backend instead of the selected one (see info)")
    parser.add_argument("--allocator", metavar="NAME",
                        help="where the work memory comes from: arena (default), system, "
                             "hugepages, locked")


def _hash_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    d = REFERENCE_DEFAULTS
    parser = commands.add_parser(
        "hash", help="hash the password on stdin, like the reference argon2 program",
        description="Hash the password read from stdin (every byte of it, a trailing newline "
                    "included, as the reference argon2 program reads it). Takes argon2's flags "
                    "and prints its lines; the time is wall time, and a note on the backend, "
                    "allocator and wipe goes to stderr.")
    parser.add_argument("salt", help="the salt, at least 8 bytes")
    kinds = parser.add_mutually_exclusive_group()
    kinds.add_argument("-i", dest="type", action="store_const", const="i",
                       help="Argon2i (the default)")
    kinds.add_argument("-d", dest="type", action="store_const", const="d", help="Argon2d")
    kinds.add_argument("-id", dest="type", action="store_const", const="id", help="Argon2id")
    parser.add_argument("-t", type=whole_number(1, UINT32_MAX), default=d["t"], metavar="N",
                        help=f"iterations (default {d['t']})")
    memory = parser.add_mutually_exclusive_group()
    memory.add_argument("-m", type=whole_number(1, 32), metavar="LOG2_KIB",
                        help=f"memory of 2^N KiB (default {d['log2_kib']})")
    memory.add_argument("-k", type=whole_number(1, UINT32_MAX), metavar="KIB",
                        help=f"memory of N KiB (default {1 << d['log2_kib']})")
    parser.add_argument("-p", type=whole_number(1, 2**24 - 1), default=d["p"], metavar="N",
                        help=f"parallelism, lanes and threads (default {d['p']})")
    parser.add_argument("-l", type=whole_number(0, UINT32_MAX), default=d["l"], metavar="N",
                        help=f"hash length in bytes (default {d['l']})")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("-e", action="store_true", help="print only the encoded hash")
    output.add_argument("-r", action="store_true", help="print only the hash, in hex")
    parser.add_argument("-v", choices=("10", "13"), default=d["version"],
                        help="Argon2 version (default 13)")
    _add_extras(parser)
    parser.set_defaults(run=_command_hash, type="i")


def _verify_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "verify", help="check the password on stdin against an encoded hash",
        description="Check the password read from stdin (every byte) against ENCODED. "
                    "Exit status 0: 'Verification ok'; 1: wrong password; 2: malformed hash, "
                    "a hash over the limits or the process's whole work-memory budget, or bad "
                    "input (message on stderr).")
    parser.add_argument("encoded", help="a PHC string such as $argon2id$v=19$m=65536,t=3,p=4$...")
    _add_extras(parser)
    limits = parser.add_argument_group(
        "limits", "A hash asking for more than these is refused (status 2) before any work: "
                  "the costs come from ENCODED, which may not be yours.")
    for name, (flag, metavar, text) in LIMIT_FLAGS.items():
        limits.add_argument(flag, dest=name, metavar=metavar,
                            type=whole_number(1, LIMIT_MAX.get(name, UINT32_MAX)),
                            help=f"{text} (default {getattr(DEFAULT_LIMITS, name)})")
    limits.add_argument("--no-limits", action="store_true",
                        help="no limits at all, for hashes you trust; --max-* flags given as "
                             "well set just those")
    parser.set_defaults(run=_command_verify)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="argonishche", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    _hash_parser(commands)
    _verify_parser(commands)
    info_parser = commands.add_parser(
        "info", help="CPU features, backends and their state",
        description="Report this Python and platform, the CPU features probed in-process, every "
                    "backend with its state and why, the plugins, which backend each algorithm "
                    "uses and why, the allocators and the work-memory budget.")
    info_parser.add_argument("--json", action="store_true", help="machine-readable output")
    info_parser.add_argument("--fast", action="store_true",
                             help="skip py-cpuinfo's cross-check (it takes about a second)")
    info_parser.set_defaults(run=_command_info)
    selftest_parser = commands.add_parser(
        "selftest", help="every known-answer vector on every usable backend",
        description="Run every known-answer vector (Argon2 and BLAKE2b) on every usable "
                    "backend. The status is 0 only if at least one backend ran and none failed "
                    "a vector, its load or its checks.")
    selftest_parser.add_argument(
        "--full", action="store_true",
        help="certify each usable backend's kernel module now (slower: Argon2 of several MiB "
             "against ref, long BLAKE2b runs) and remember the outcome, as argonishche does the "
             "first time it sees a module")
    selftest_parser.add_argument(
        "--recertify", action="store_true",
        help="read no certification record: certify every non-built-in kernel module again in "
             "a child interpreter, as on first sight, and rewrite its record (after restoring "
             "a cache directory you do not fully trust, say)")
    selftest_parser.set_defaults(run=_command_selftest)
    _bench_command.add_parser(commands)
    _tune_command.add_parser(commands)
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except BrokenPipeError:
        # `argonishche info | head`: the reader left; say nothing more (Python's documented way).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
