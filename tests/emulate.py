#!/usr/bin/env python3
"""Run Python on an emulated x86-64 CPU: Intel SDE where it is installed, QEMU user mode otherwise.

    python tests/emulate.py CPU [ARGS...]       # like `python ARGS...`, on the emulated CPU

CPU names the rung of the backend ladder the CPU should select (an ``emu-`` prefix, as in tox
env names, is ignored):

    sse2  ssse3  sse41  sse41avx (AVX, no AVX2)  avx2  avx2noxsave (CPUID says AVX2, OS state off)

The interpreter runs through a wrapper script next to it, and sees the wrapper as sys.executable,
so the child Pythons the tests start are emulated too (QEMU alone would run them natively).
``ARGONISHCHE_EMULATOR=sde`` or ``=qemu`` picks the emulator; with neither on PATH this fails
with a message saying what to install.  Facts behind the table, observed with QEMU 7.2
(Debian 12's qemu-user) in November 2026: each model below enforces its features (an instruction
it lacks raises SIGILL, and CPUID reports the model's features), QEMU's TCG has no AVX-512, and
SDE's chip flags are those of its documentation (``sde64 -help``).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys

# CPU -> (QEMU -cpu model, Intel SDE chip).  The extra QEMU terms only silence warnings about
# features QEMU's TCG lacks; "-xsave" makes CPUID hide XSAVE, so no OS-enabled AVX state.
_HASWELL = "Haswell-noTSX,-pcid,-x2apic,-tsc-deadline,-invpcid"
CPUS = {
    "sse2": ("qemu64", "-p4p"),
    "ssse3": ("core2duo", "-mrm"),
    "sse41": ("Penryn", "-pnr"),
    "sse41avx": ("SandyBridge,-x2apic,-tsc-deadline", "-snb"),
    "avx2": (_HASWELL, "-hsw"),
    "avx2noxsave": (_HASWELL + ",-xsave", None),
}


def emulator_command(cpu: str) -> list[str]:
    """The command prefix that runs a program on *cpu*, or SystemExit saying what is missing."""
    qemu_model, sde_chip = CPUS[cpu]
    wanted = os.environ.get("ARGONISHCHE_EMULATOR", "").lower()
    sde, qemu = shutil.which("sde64"), shutil.which("qemu-x86_64")
    if wanted not in ("", "sde", "qemu"):
        raise SystemExit(f"ARGONISHCHE_EMULATOR={wanted}: must be 'sde' or 'qemu'")
    if sde and sde_chip and wanted in ("", "sde"):
        return [sde, sde_chip, "--"]
    if qemu and wanted in ("", "qemu"):
        return [qemu, "-cpu", qemu_model]
    if wanted == "sde" or (sde and not sde_chip):
        raise SystemExit(f"Intel SDE has no chip for {cpu}; use QEMU (apt-get install qemu-user)")
    raise SystemExit("no CPU emulator: install QEMU user mode (apt-get install -y qemu-user) or "
                     "put Intel SDE's sde64 on PATH")


def wrapper(cpu: str) -> str:
    """A script beside this interpreter that runs it emulated and is its own sys.executable.

    It sits in the same bin directory, so a virtual environment's pyvenv.cfg is still found."""
    command = emulator_command(cpu)
    python = sys.executable
    path = os.path.join(os.path.dirname(python), f"python-emu-{cpu}")
    if command[0].endswith("qemu-x86_64"):
        # -0 sets argv[0], from which Python derives sys.executable: children come back here.
        line = f'exec {" ".join(command)} -0 "$0" {python} "$@"'
    else:
        line = f'exec {" ".join(command)} {python} "$@"'
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"#!/bin/sh\n# made by tests/emulate.py\n{line}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def main(argv: list[str]) -> int:
    if not argv or argv[0].removeprefix("emu-") not in CPUS:
        print(f"usage: {sys.argv[0]} CPU [PYTHON ARGS...]; CPU is one of {', '.join(CPUS)}",
              file=sys.stderr)
        return 2
    cpu = argv[0].removeprefix("emu-")
    program = wrapper(cpu)
    print(f"emulate.py: {cpu} via {open(program).read().splitlines()[-1]}", file=sys.stderr)
    os.execv(program, [program, *argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
