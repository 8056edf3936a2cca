"""Build the core and every x86 kernel file for Windows with mingw-w64, and run kat.c under wine.

    python tools/win_c/run.py [--wrong-expected] [--keep DIR] [--timeout SECONDS]

Needs ``x86_64-w64-mingw32-gcc`` (Debian: gcc-mingw-w64-x86-64-posix or -win32; the core uses
the Win32 API directly, so either thread model works) and wine (Debian: wine, wine64).  Either
missing is an error, never a skip: CI installs them.  wine runs in a fresh prefix under a
temporary directory (``WINEPREFIX``; set ``ARGONISHCHE_WINEPREFIX`` to reuse one), with its
debug output and the Mono/Gecko installers off.

The build mirrors the Python one (core/build_core.py, core/build_backends.py): the core's C
sources (every core/csrc/*.c) with no instruction-set flags, and each kernel file compiled on
its own with ARGONISHCHE_KERNEL_TARGET set from its row of backends/table.py; every kernel
file exports the same ``argonishche_kernels``, so each object renames it with a -D.
cpu_features.c is compiled a second time with ARGONISHCHE_FORCE_MSVC_INTRINSICS (as
msvc_cpuid/msvc_xcr0) so the <intrin.h> path MSVC would take is run and compared too.
Warnings are errors.

``--wrong-expected`` builds with one expected Argon2 tag deliberately wrong: the run must then
fail (exit status 1), which shows that the test can fail.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import gen_vectors  # noqa: E402  (beside this file)

ROOT = gen_vectors.ROOT
CSRC = os.path.join(ROOT, "core", "csrc")
INCLUDE = os.path.join(ROOT, "core", "argonishche", "include")
BACKENDS = os.path.join(ROOT, "backends")
CFLAGS = ("-O3", "-std=c11", "-Wall", "-Wextra", "-Werror")
KERNEL_CFLAGS = (*CFLAGS, "-Wno-unused-function")  # argonishche.build.COMPILE_ARGS
COMPILERS = ("x86_64-w64-mingw32-gcc", "x86_64-w64-mingw32-gcc-posix",
             "x86_64-w64-mingw32-gcc-win32")
WINES = ("wine64", "wine")


class Missing(Exception):
    pass


def find_tool(names: tuple[str, ...], what: str, packages: str) -> str:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise Missing(f"{what} not found (tried {', '.join(names)}): apt-get install {packages}")


def compile_jobs(build: str, wrong_expected: bool) -> list[tuple[str, list[str]]]:
    """(object, compiler arguments) for every translation unit of kat.exe."""
    header_dir = os.path.join(build, "include")
    os.makedirs(header_dir, exist_ok=True)
    with open(os.path.join(header_dir, "kat_vectors.h"), "w", encoding="utf-8") as f:
        f.write(gen_vectors.generate(wrong_expected=wrong_expected))
    includes = ["-I" + header_dir, "-I" + CSRC, "-I" + INCLUDE]
    jobs = []
    # The core is every C file of core/csrc (what core/build_core.py compiles into _core).
    for name in sorted(n for n in os.listdir(CSRC) if n.endswith(".c")):
        jobs.append((f"core_{name[:-2]}.o", [*CFLAGS, *includes, "-c", os.path.join(CSRC, name)]))
    jobs.append(("cpu_features_msvc.o",
                 [*CFLAGS, *includes, "-mxsave", "-DARGONISHCHE_FORCE_MSVC_INTRINSICS",
                  "-Dargonishche_cpuid=msvc_cpuid", "-Dargonishche_xcr0=msvc_xcr0",
                  "-c", os.path.join(CSRC, "cpu_features.c")]))
    features = gen_vectors.load("win_c_features", "core", "argonishche", "_features.py")
    table = gen_vectors.load("win_c_backends", "backends", "table.py")
    for row in gen_vectors.x86_backends(features, table):
        target = features.compiler_target(frozenset(row.cpu_features))
        defines = [f"-Dargonishche_kernels={gen_vectors.backend_symbol(row.name)}"]
        if target:
            defines.append(f'-DARGONISHCHE_KERNEL_TARGET="{target}"')
        jobs.append((f"kernel_{row.name}.o", [*KERNEL_CFLAGS, *includes, *defines, "-c",
                                              os.path.join(BACKENDS, row.source)]))
    jobs.append(("kat.o", [*CFLAGS, *includes, "-c", os.path.join(HERE, "kat.c")]))
    return jobs


def build(compiler: str, build_dir: str, wrong_expected: bool) -> str:
    jobs = compile_jobs(build_dir, wrong_expected)

    def run(job: tuple[str, list[str]]) -> tuple[str, subprocess.CompletedProcess[str]]:
        obj, args = job
        out = subprocess.run([compiler, *args, "-o", os.path.join(build_dir, obj)],
                             capture_output=True, text=True, timeout=300)
        return obj, out

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(run, jobs))
    failed = [(obj, out) for obj, out in results if out.returncode != 0 or out.stderr.strip()]
    for obj, out in failed:
        print(f"--- {obj}: exit {out.returncode}\n{out.stderr}", file=sys.stderr)
    if failed:
        raise SystemExit(f"win_c: {len(failed)} of {len(jobs)} files did not compile cleanly")
    exe = os.path.join(build_dir, "kat.exe")
    link = subprocess.run([compiler, "-static", "-o", exe,
                           *(os.path.join(build_dir, obj) for obj, _ in jobs)],
                          capture_output=True, text=True, timeout=300)
    if link.returncode != 0 or link.stderr.strip():
        raise SystemExit(f"win_c: link failed:\n{link.stderr}")
    print(f"win_c: built {exe} from {len(jobs)} objects", flush=True)
    return exe


def run_under_wine(wine: str, exe: str, prefix: str, timeout: float) -> int:
    env = dict(os.environ, WINEPREFIX=prefix, WINEDEBUG="-all",
               WINEDLLOVERRIDES="mscoree,mshtml=",  # no Mono/Gecko install prompts
               WINEARCH="win64", DISPLAY="")
    started = time.monotonic()
    try:
        out = subprocess.run([wine, exe], env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        print(exc.stdout or "", end="")
        raise SystemExit(f"win_c: kat.exe under {wine} timed out after {timeout} s") from None
    finally:
        server = shutil.which("wineserver")
        if server:  # this prefix's server only: started by the run above
            subprocess.run([server, "-k"], env=env, capture_output=True, timeout=60)
    print(out.stdout, end="")
    noise = [line for line in out.stderr.splitlines() if line.strip()]
    if noise:
        print("\n".join(noise[-20:]), file=sys.stderr)
    print(f"win_c: kat.exe exit {out.returncode} after {time.monotonic() - started:.1f} s "
          f"under {wine}", flush=True)
    return out.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wrong-expected", action="store_true",
                        help="one expected tag deliberately wrong: the run must fail")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds for kat.exe under wine, prefix creation included")
    args = parser.parse_args(argv)
    try:
        compiler = find_tool(COMPILERS, "the mingw-w64 C compiler",
                             "gcc-mingw-w64-x86-64-posix")
        wine = find_tool(WINES, "wine", "wine wine64")
    except Missing as exc:
        print(f"win_c: ERROR: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="argonishche-win-c-") as temp:
        build_dir = args.keep or os.path.join(temp, "build")
        os.makedirs(build_dir, exist_ok=True)
        exe = build(compiler, build_dir, args.wrong_expected)
        prefix = os.environ.get("ARGONISHCHE_WINEPREFIX") or os.path.join(temp, "wineprefix")
        status = run_under_wine(wine, exe, prefix, args.timeout)
    if status != 0:
        print(f"win_c: FAILED (kat.exe exit status {status})", file=sys.stderr)
        return 1
    print("win_c: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
