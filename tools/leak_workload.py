#!/usr/bin/env python3
"""The leak workload, and the report on valgrind's log of it (the ``leaks`` tox env):

    python tools/leak_workload.py leak-workload N     # N small hashes and N failing verifies
    python tools/leak_workload.py valgrind-report LOG # exit 1 on a finding in our C code

tox runs the first under valgrind memcheck, then the second on its log.  The RSS test in
test_hardening.py runs ``leak_workload`` in a subprocess.  Nothing here imports pytest, which
valgrind would only slow down.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import argonishche
from argonishche import (
    InvalidHashError,
    ParameterError,
    VerifyMismatchError,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' helpers
from support import SALT, encoded_with  # noqa: E402


def leak_workload(rounds: int) -> None:
    """*rounds* small hashes (every allocator, keyed BLAKE2b too) and *rounds* failing verifies
    (wrong password, malformed string, over the limits, bad parameters)."""
    allocators = ("system", "arena", "hugepages", "locked")
    good = argon2_hash_encoded(b"password", SALT, time_cost=1, memory_cost=16, parallelism=2)
    failing = [
        (good, b"wrong"),                                           # VerifyMismatchError
        (good[:-3], b"password"),                                   # malformed tag
        (encoded_with(m=2**32 - 1), b"password"),                   # LimitExceededError
        (encoded_with(t=0), b"password"),                           # invalid parameters
        ("$argon2id$v=19$m=32,t=1,p=1$$", b"password"),             # empty salt
    ]
    for i in range(rounds):
        argon2_hash(b"pw%d" % i, SALT, time_cost=1, memory_cost=16, parallelism=2,
                    allocator=allocators[i % len(allocators)])
        argonishche.blake2b(b"x" * (i % 300), key=b"k" * (1 + i % 64), digest_size=32).digest()
        encoded, password = failing[i % len(failing)]
        try:
            argon2_verify(encoded, password)
        except (VerifyMismatchError, InvalidHashError):
            pass
        else:
            raise AssertionError(f"{encoded!r} verified")
        try:
            argon2_hash(b"pw", b"short", time_cost=1, memory_cost=16)
        except ParameterError:
            pass
        else:
            raise AssertionError("a 5-byte salt was accepted")


#: A frame is ours if its source or object is one of these (valgrind --fullpath-after=).
OUR_CODE = ("/core/csrc/", "/backends/", "/argonishche-avx512/", "/argonishche/_core",
            "/argonishche_backends/", "/argonishche_avx512/")


def valgrind_findings(log: str) -> dict[str, list[str]]:
    """Records of a valgrind log, split: definite leaks and errors whose allocation or fault is
    in our C code, and those that are CPython's or cffi's (one-time module set-up)."""
    findings: dict[str, list[str]] = {"ours": [], "others": []}
    header = re.compile(r"(.* definitely lost in loss record|Invalid |Conditional jump|"
                        r"Use of uninitialised|Syscall param|Mismatched free)")
    records, current = [], []
    for line in log.splitlines():
        text = re.sub(r"^==\d+==", "", line).strip()
        if header.match(text):
            records.append(current)
            current = [text]
        elif not text:
            records.append(current)
            current = []
        elif current:
            current.append(text)
    records.append(current)
    for record in filter(None, records):
        frames = [f for f in record[1:] if f.startswith(("at 0x", "by 0x"))]
        # the first frame that is not the allocator itself (malloc, calloc, ...)
        first = next((f for f in frames if "vgpreload" not in f and "valgrind" not in f), "")
        ours = any(part in first for part in OUR_CODE) and "_cffi_" not in first
        findings["ours" if ours else "others"].append("\n".join(record))
    return findings


def main(argv: list[str]) -> int:
    if argv[:1] == ["leak-workload"] and len(argv) == 2:
        leak_workload(int(argv[1]))
        argonishche.trim_memory()
        print("workload done", argonishche.selected_backend())
        return 0
    if argv[:1] == ["valgrind-report"] and len(argv) == 2:
        with open(argv[1]) as log_file:
            log = log_file.read()
        summary = [line.split("== ", 1)[-1].strip() for line in log.splitlines()
                   if "definitely lost:" in line or "ERROR SUMMARY" in line]
        findings = valgrind_findings(log)
        print("valgrind:", "; ".join(summary))
        print(f"definite leaks and memory errors in argonishche's C code: "
              f"{len(findings['ours'])}; in CPython/cffi set-up: {len(findings['others'])}")
        for record in findings["ours"]:
            print(record, end="\n\n")
        return 1 if findings["ours"] or not summary else 0
    print("usage: leak_workload.py leak-workload ROUNDS | valgrind-report LOG", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
