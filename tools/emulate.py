#!/usr/bin/env python3
"""Run Python on an emulated x86-64 CPU: Intel SDE where it is installed, QEMU user mode otherwise.

    python tools/emulate.py CPU [ARGS...]       # like `python ARGS...`, on the emulated CPU

CPU names the rung of the backend ladder the CPU should select (an ``emu-`` prefix, as in tox
env names, is ignored):

    sse2  ssse3  sse41  sse41avx (AVX, no AVX2)  avx2  avx2noxsave (CPUID says AVX2, OS state off)
    avx512 (Intel SDE only: QEMU has no AVX-512)

The interpreter runs through a wrapper script next to it, and sees the wrapper as sys.executable, so
the child Pythons the tests start are emulated too (QEMU would run them natively; whether SDE
follows exec is not documented where we looked, and Pin by default does not).
``ARGONISHCHE_EMULATOR=sde`` or ``=qemu`` picks the emulator; with neither on PATH this fails with a
message saying what to install. Facts behind the table, observed with QEMU 7.2 (Debian 12's
qemu-user) in November 2026: each model below enforces its features (an instruction it lacks raises
SIGILL, and CPUID reports the model's features), QEMU's TCG has no AVX-512, and SDE's chip options
are those of ``sde64 --help`` (tools/sde_standin/sde64 quotes them with their sources).
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
import sysconfig

# CPU -> (QEMU -cpu model, Intel SDE chip option); None where that emulator has none.  The extra
# QEMU terms only silence warnings about features QEMU's TCG lacks; "-xsave" makes CPUID hide
# XSAVE, so no OS-enabled AVX state.  SDE: -p4p Pentium4 Prescott (SSE3), -mrm Merom (SSSE3),
# -pnr Penryn (SSE4.1), -snb Sandy Bridge (AVX), -hsw Haswell (AVX2), -skx Skylake server
# (AVX-512 F, CD, BW, DQ, VL).  No SDE chip has AVX2 without XSAVE.
_HASWELL = "Haswell-noTSX,-pcid,-x2apic,-tsc-deadline,-invpcid"
CPUS = {
    "sse2": ("qemu64", "-p4p"),
    "ssse3": ("core2duo", "-mrm"),
    "sse41": ("Penryn", "-pnr"),
    "sse41avx": ("SandyBridge,-x2apic,-tsc-deadline", "-snb"),
    "avx2": (_HASWELL, "-hsw"),
    "avx2noxsave": (_HASWELL + ",-xsave", None),
    "avx512": (None, "-skx"),
}

# Under SDE the interpreter's argv[0] is the real python (no sde64 option documents setting it:
# qemu has -0), so a .pth line, run at start-up, makes the wrapper named here sys.executable.
EXECUTABLE_ENV = "ARGONISHCHE_EMULATED_EXECUTABLE"
PTH_NAME = "argonishche_emulated_executable.pth"
PTH_LINE = (f"import os, sys; w = os.environ.get({EXECUTABLE_ENV!r}, ''); "
            "sys.executable = w if os.path.dirname(w) == os.path.dirname(sys.executable) "
            "else sys.executable\n")


def emulator_command(cpu: str) -> list[str]:
    """The command prefix that runs a program on *cpu*, or SystemExit saying what is missing."""
    qemu_model, sde_chip = CPUS[cpu]
    wanted = os.environ.get("ARGONISHCHE_EMULATOR", "").lower()
    if wanted not in ("", "sde", "qemu"):
        raise SystemExit(f"ARGONISHCHE_EMULATOR={wanted}: must be 'sde' or 'qemu'")
    sde = shutil.which("sde64") if sde_chip and wanted != "qemu" else None
    qemu = shutil.which("qemu-x86_64") if qemu_model and wanted != "sde" else None
    if sde:  # SDE's grammar: sde64 [options] -CHIP -- program args
        return [sde, sde_chip, "--"]
    if qemu:
        return [qemu, "-cpu", qemu_model]
    if wanted == "sde" and not sde_chip:
        raise SystemExit(f"Intel SDE has no chip for {cpu}; use QEMU (ARGONISHCHE_EMULATOR=qemu)")
    if wanted == "qemu" and not qemu_model:
        raise SystemExit(f"QEMU cannot emulate {cpu}; put Intel SDE's sde64 on PATH")
    if not qemu_model:
        raise SystemExit(f"QEMU cannot emulate {cpu} (no AVX-512): put Intel SDE's sde64 on "
                         "PATH (docs/development.md, 'Intel SDE')")
    raise SystemExit("no CPU emulator: install QEMU user mode (apt-get install -y qemu-user) or "
                     "put Intel SDE's sde64 on PATH")


def install_executable_hook() -> None:
    """The .pth line above, in this interpreter's site-packages (inert without the variable)."""
    with open(os.path.join(sysconfig.get_paths()["purelib"], PTH_NAME), "w",
              encoding="utf-8") as f:
        f.write(PTH_LINE)


def wrapper(cpu: str) -> str:
    """A script beside this interpreter that runs it emulated and is its own sys.executable.

    It sits in the same bin directory, so a virtual environment's pyvenv.cfg is still found."""
    emulator = emulator_command(cpu)
    command = " ".join(map(shlex.quote, emulator))
    python = shlex.quote(sys.executable)
    path = os.path.join(os.path.dirname(sys.executable), f"python-emu-{cpu}")
    if os.path.basename(emulator[0]) == "qemu-x86_64":
        # -0 sets argv[0], from which Python derives sys.executable: children come back here.
        lines = [f'exec {command} -0 "$0" {python} "$@"']
    else:
        install_executable_hook()
        lines = [
            f'{EXECUTABLE_ENV}="$0"; export {EXECUTABLE_ENV}',
            # If SDE did follow exec (Pin does on -follow_execv), this shell already runs
            # under it, with Pin's pinbin mapped: start no second SDE inside the first.
            f'grep -qs /pinbin /proc/$$/maps && exec {python} "$@"',
            f'exec {command} {python} "$@"',
        ]
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n# made by tools/emulate.py\n" + "\n".join(lines) + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def main(argv: list[str]) -> int:
    if not argv or argv[0].removeprefix("emu-") not in CPUS:
        print(f"usage: {sys.argv[0]} CPU [PYTHON ARGS...]; CPU is one of {', '.join(CPUS)}",
              file=sys.stderr)
        return 2
    cpu = argv[0].removeprefix("emu-")
    program = wrapper(cpu)
    with open(program, encoding="utf-8") as f:
        print(f"emulate.py: {cpu} via {f.read().splitlines()[-1]}", file=sys.stderr)
    os.execv(program, [program, *argv[1:]])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
