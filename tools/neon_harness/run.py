#!/usr/bin/env python3
"""Cross-compile the neon / neon_sha3 kernels with harness.c and run them under qemu-aarch64.

No Python build is involved: the kernel file, backends/ref.c and the core's C driver are compiled
with aarch64-linux-gnu-gcc (the kernel file also with clang 14), linked statically, and run as

    neon       on -cpu cortex-a57 (ARMv8.0, no SHA3) and on -cpu max
    neon_sha3  on -cpu max; and on cortex-a57, where it must die of SIGILL

after checking that the neon objects hold no SHA3 instruction and the neon_sha3 ones do.

    python3 tools/neon_harness/run.py                 # the checks above (exit 1 on any failure)
    python3 tools/neon_harness/run.py --mutants       # also: each deliberate bug must be caught
    python3 tools/neon_harness/run.py --bench --counts   # qemu timing, instruction counts

Needs (Debian 12): apt-get install gcc-aarch64-linux-gnu qemu-user clang
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INCLUDE = ROOT / "core" / "argonishche" / "include"
CORE = [ROOT / "core" / "csrc" / f for f in ("argon2.c", "blake2b.c", "arena.c", "memory.c",
                                             "work_memory.c")]

GCC = ["aarch64-linux-gnu-gcc"]
CLANG = ["clang", "--target=aarch64-linux-gnu", "--sysroot=/usr/aarch64-linux-gnu"]
STRICT = ["-O3", "-std=c11", "-Wall", "-Wextra", "-Werror"]



def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The target strings come from where the build takes them (backends/table.py's rows and the
# CPU-feature table), and both are passed as the build passes them: argonishche_target.h picks
# the one for the compiler at hand.
_FEATURES = _load("argonishche_features", ROOT / "core" / "argonishche" / "_features.py")
_ROWS = {row.name: row for row in _load("argonishche_backends_table",
                                        ROOT / "backends" / "table.py").ALL_BUILTIN_BACKENDS}
TARGETS = {
    (compiler, backend): (_FEATURES.clang_compiler_target if compiler == "clang"
                          else _FEATURES.compiler_target)(frozenset(_ROWS[backend].cpu_features))
    for compiler in ("gcc", "clang") for backend in ("neon", "neon_sha3")
}


def target_defines(backend: str) -> list[str]:
    return [f'-DARGONISHCHE_KERNEL_TARGET="{TARGETS[("gcc", backend)]}"',
            f'-DARGONISHCHE_KERNEL_TARGET_CLANG="{TARGETS[("clang", backend)]}"']


SHA3_MNEMONICS = ("xar", "eor3", "bcax", "rax1")

# Deliberate bugs: (name, file, old text, new text).  Each must make `harness check` fail.
MUTANTS = [
    ("neon: rotr24 table off by one byte (rotr 32)", "neon.c",
     "{3, 4, 5, 6, 7, 0, 1, 2, 11,", "{4, 5, 6, 7, 0, 1, 2, 3, 11,"),
    ("neon: rotr63 as rotr62", "neon.c", "vsriq_n_u64(vaddq_u64(x, x), x, 63)",
     "vsriq_n_u64(vshlq_n_u64(x, 2), x, 62)"),
    ("neon_sha3: XAR 24 -> 23", "neon_sha3.c", "neon128_xar_(a, b, 24)", "neon128_xar_(a, b, 23)"),
    ("neon_sha3: EOR3 drops one input", "neon_sha3.c", "neon128_eor3_(a, b, c);",
     "((void)c, veorq_u64(a, b));"),
    ("blamka: product not doubled", "neon128.h", "vaddq_u64(product, product)", "product"),
    ("diagonalize: row c rotated the wrong way", "neon128.h",
     "x[4] = neon128_high_low(c0, c1);   /* (v9, v10) */",
     "x[4] = neon128_high_low(c1, c0);   /* (v9, v10) */"),
    ("argon2: xor_into_next ignored", "neon128.h",
     "xor_into_next ? veorq_u64(x[k], vld1q_u64(out + 2 * i)) : x[k]",
     "((void)xor_into_next, x[k])"),
    ("argon2: column gather transposed", "neon128.h",
     "x[k] = q[column + k / 8 + 8 * (k % 8)];", "x[k] = q[8 * column + k];"),
    ("blake2b: t0 carry into t1 lost", "neon128.h", "t1 += (t0 < increment);", ""),
    ("blake2b: final flag ignored", "neon128.h", "vcreate_u64(final_flag)",
     "vcreate_u64(final_flag & 0)"),
    ("blake2b: last-node flag ignored", "neon128.h", "vcreate_u64(last_node_flag)",
     "vcreate_u64(last_node_flag & 0)"),
    ("blake2b: message pair (i even, j odd) takes j's low word", "neon128.h",
     "return vcopyq_laneq_u64(mj, 0, mi, 0);", "return vzip1q_u64(mi, mj);"),
    ("blake2b: one round left out", "neon128.h",
     "neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[11]);", ""),
]


# ---- argonishche.vectors -> vectors.h --------------------------------------------------------

def load_vectors():
    """argonishche.vectors without importing argonishche: a stand-in package over its folder runs
    no ``__init__``, and the vectors import only ``_named_tuple`` beside them."""
    import types

    parent = types.ModuleType("neon_harness_argonishche")
    parent.__path__ = [str(ROOT / "core" / "argonishche")]
    sys.modules[parent.__name__] = parent
    return importlib.import_module(f"{parent.__name__}.vectors")


def c_bytes(data: bytes) -> str:
    return '"' + "".join(f"\\x{b:02x}" for b in data) + f'", {len(data)}'


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_vectors_header(path: Path) -> tuple[int, int]:
    v = load_vectors()
    types = {"d": 0, "i": 1, "id": 2}
    lines = [
        "/* Generated by tools/neon_harness/run.py from core/argonishche/vectors/. */",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "typedef struct { const char *name; const uint8_t *data; size_t data_len;"
        " size_t digest_size; const uint8_t *key; size_t key_len; const uint8_t *salt;"
        " size_t salt_len; const uint8_t *person; size_t person_len; const uint8_t *digest;"
        " size_t digest_len; const argonishche_blake2b_tree *tree; } blake2b_kat_vector;",
        "typedef struct { const char *name; uint32_t type, version, time_cost, memory_cost,"
        " lanes; const uint8_t *password; size_t password_len; const uint8_t *salt;"
        " size_t salt_len; const uint8_t *secret; size_t secret_len; const uint8_t *ad;"
        " size_t ad_len; const uint8_t *tag; size_t tag_len; } argon2_kat_vector;",
        "#define B (const uint8_t *)",
        "static const blake2b_kat_vector blake2b_kats[] = {",
    ]
    for i, x in enumerate(v.BLAKE2B_VECTORS):
        name = f"blake2b[{i}] len {len(x.data)}: {x.source[:40]}"
        lines.append(
            f"    {{{c_string(name)}, B{c_bytes(x.data)}, {x.digest_size}, B{c_bytes(x.key)},"
            f" B{c_bytes(x.salt)}, B{c_bytes(x.person)}, B{c_bytes(x.digest)}, NULL}},")
    for i, x in enumerate(v.BLAKE2B_TREE_VECTORS):  # tree parameters and the f1 word
        name = f"blake2b tree[{i}] len {len(x.data)}: {x.source[:35]}"
        tree = (f"&(const argonishche_blake2b_tree){{{x.node_offset:#x}ULL, {x.leaf_size:#x}u, "
                f"{x.fanout}, {x.depth}, {x.node_depth}, {x.inner_size}, {int(x.last_node)}}}")
        lines.append(
            f"    {{{c_string(name)}, B{c_bytes(x.data)}, {x.digest_size}, B{c_bytes(x.key)},"
            f" B{c_bytes(x.salt)}, B{c_bytes(x.person)}, B{c_bytes(x.digest)}, {tree}}},")
    lines.append("};")
    lines.append("static const argon2_kat_vector argon2_kats[] = {")
    for i, x in enumerate(v.ARGON2_VECTORS):
        name = (f"argon2{x.type}[{i}] v{x.version:#x} t{x.time_cost} m{x.memory_cost}"
                f" p{x.parallelism}: {x.source[:30]}")
        lines.append(
            f"    {{{c_string(name)}, {types[x.type]}, {x.version}, {x.time_cost},"
            f" {x.memory_cost}, {x.parallelism}, B{c_bytes(x.password)}, B{c_bytes(x.salt)},"
            f" B{c_bytes(x.secret)}, B{c_bytes(x.associated_data)}, B{c_bytes(x.tag)}}},")
    lines.append("};")
    lines.append("#undef B")
    path.write_text("\n".join(lines) + "\n")
    return len(v.BLAKE2B_VECTORS) + len(v.BLAKE2B_TREE_VECTORS), len(v.ARGON2_VECTORS)


# ---- building ---------------------------------------------------------------------------------

def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def compile_c(cc, source: Path, obj: Path, flags, includes):
    result = run([*cc, *flags, *(f"-I{d}" for d in includes), "-c", source, "-o", obj])
    if result.returncode != 0 or result.stderr.strip():
        # -Werror turns warnings into failures; anything on stderr counts as a warning too.
        raise SystemExit(f"compile failed or warned: {' '.join(map(str, cc))} {source}\n"
                         f"{result.stderr}")
    return obj


class Build:
    """The objects every harness binary shares: core driver, ref.c, harness.c."""

    def __init__(self, work: Path):
        self.work = work
        self.counts = write_vectors_header(work / "vectors.h")
        inc = [INCLUDE, ROOT / "core" / "csrc", work]
        # The core is not ours to hold to -std=c11 -Werror: build it as the project does.
        self.common = [compile_c(GCC, src, work / f"core_{src.stem}.o", ["-O2", "-pthread"], inc)
                       for src in CORE]
        self.common.append(compile_c(GCC, ROOT / "backends" / "ref.c", work / "ref.o",
                                     [*STRICT, "-Dargonishche_kernels=ref_kernels"], inc))
        self.common.append(compile_c(GCC, HERE / "harness.c", work / "harness.o",
                                     [*STRICT, "-D_POSIX_C_SOURCE=200809L"], inc))

    def kernel_binary(self, compiler: str, backend: str, source_dir: Path, tag: str) -> Path:
        cc = GCC if compiler == "gcc" else CLANG
        obj = compile_c(cc, source_dir / f"{backend}.c", self.work / f"{tag}.o",
                        [*STRICT, "-Dargonishche_kernels=test_kernels",
                         *target_defines(backend)],
                        [INCLUDE, source_dir])
        exe = self.work / tag
        result = run([*GCC, "-static", "-pthread", "-o", exe, obj, *self.common])
        if result.returncode != 0:
            raise SystemExit(f"link failed: {result.stderr}")
        return exe


def qemu(cpu: str, exe: Path, *args, timeout=900):
    return run(["qemu-aarch64", "-cpu", cpu, exe, *args], timeout=timeout)


def mnemonics(obj: Path) -> collections.Counter:
    """Instruction mnemonics of the kernels in obj (everything but the table accessor)."""
    out = run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", obj]).stdout
    counts: collections.Counter = collections.Counter()
    function = None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            function = m.group(1)
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(\S+)", line)
        if m and function and "kernels" not in function:
            counts[(function, m.group(1))] += 1
    return counts


# ---- checks ---------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10000, help="random cases per kernel check")
    parser.add_argument("--seed", default="0x5eed")
    parser.add_argument("--compilers", default="gcc,clang")
    parser.add_argument("--mutants", action="store_true", help="also run the deliberate bugs")
    parser.add_argument("--bench", action="store_true", help="time under qemu (sanity only)")
    parser.add_argument("--counts", action="store_true", help="print instruction counts")
    parser.add_argument("--keep", action="store_true", help="keep the build directory")
    args = parser.parse_args()

    for tool in ("aarch64-linux-gnu-gcc", "qemu-aarch64", "aarch64-linux-gnu-objdump"):
        if shutil.which(tool) is None:
            print(f"missing {tool}: apt-get install gcc-aarch64-linux-gnu qemu-user")
            return 2
    compilers = [c for c in args.compilers.split(",") if c]
    if "clang" in compilers and shutil.which("clang") is None:
        print("clang not found: skipping it")
        compilers.remove("clang")

    work = Path(tempfile.mkdtemp(prefix="neon_harness."))
    failed: list[str] = []
    try:
        build = Build(work)
        print(f"vectors: {build.counts[0]} BLAKE2b, {build.counts[1]} Argon2; build in {work}")
        backends = ROOT / "backends"
        for compiler in compilers:
            for backend in ("neon", "neon_sha3"):
                tag = f"{compiler}_{backend}"
                exe = build.kernel_binary(compiler, backend, backends, tag)
                sha3 = sum(n for (_, op), n in mnemonics(work / f"{tag}.o").items()
                           if op in SHA3_MNEMONICS)
                ok = (sha3 == 0) if backend == "neon" else (sha3 > 0)
                print(f"== {tag}: target \"{TARGETS[(compiler, backend)]}\", "
                      f"{sha3} SHA3 instructions: {'ok' if ok else 'WRONG'}")
                if not ok:
                    failed.append(f"{tag}: SHA3 instruction count {sha3}")
                cpus = ["cortex-a57", "max"] if backend == "neon" else ["max"]
                for cpu in cpus:
                    result = qemu(cpu, exe, "check", str(args.cases), args.seed)
                    lines = result.stdout.splitlines()
                    bad = [ln for ln in lines if re.search(r" [1-9]\d*/\d+ failed$", ln)]
                    print(f"   -cpu {cpu}: {lines[-1] if lines else result.stderr.strip()}"
                          f"  ({sum(1 for ln in lines if ln.endswith('failed'))} checks)")
                    for ln in bad:
                        print("     " + ln)
                    if result.returncode != 0:
                        failed.append(f"{tag} on {cpu}")
                # The SHA3 build must really need SHA3; the plain one must not.
                result = qemu("cortex-a57", exe, "sigill")
                sigill = result.returncode == -signal.SIGILL
                expected = backend == "neon_sha3"
                print(f"   -cpu cortex-a57 sigill probe: "
                      f"{'SIGILL' if sigill else f'exit {result.returncode}'}"
                      f" ({'as expected' if sigill == expected else 'UNEXPECTED'})")
                if sigill != expected:
                    failed.append(f"{tag} sigill probe")
                if args.bench:
                    print("   " + qemu("max", exe, "bench").stdout.replace("\n", "\n   "))
                if args.counts:
                    print_counts(work / f"{tag}.o")

        if args.mutants:
            failed += run_mutants(build, work, min(args.cases, 300), args.seed)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    print("\nALL PASS" if not failed else "\nFAILED:\n  " + "\n  ".join(failed))
    return 1 if failed else 0


def print_counts(obj: Path) -> None:
    counts = mnemonics(obj)
    for function in sorted({f for f, _ in counts}):
        ops = {op: n for (f, op), n in counts.items() if f == function}
        top = ", ".join(f"{op} {n}" for op, n in sorted(ops.items(), key=lambda x: -x[1])[:14])
        print(f"   {function}: {sum(ops.values())} instructions: {top}")


def run_mutants(build: Build, work: Path, cases: int, seed: str) -> list[str]:
    """Every deliberate bug must fail `harness check`; reports which checks caught it."""
    print(f"\n== mutants ({cases} random cases each; gcc; neon.c / neon128.h bugs run as neon "
          f"on cortex-a57, neon_sha3.c bugs as neon_sha3 on max)")
    failed = []
    for i, (name, file, old, new) in enumerate(MUTANTS):
        tree = work / f"mutant{i}"
        tree.mkdir()
        for f in ("neon.c", "neon_sha3.c", "neon128.h"):
            shutil.copy(ROOT / "backends" / f, tree / f)
        text = (tree / file).read_text()
        if text.count(old) != 1:
            failed.append(f"mutant '{name}': pattern not found once in {file}")
            continue
        (tree / file).write_text(text.replace(old, new))
        backend, cpu = ("neon_sha3", "max") if file == "neon_sha3.c" else ("neon", "cortex-a57")
        try:
            exe = build.kernel_binary("gcc", backend, tree, f"mutant{i}_{backend}")
        except SystemExit as error:  # must compile: else it proves nothing about the checks
            failed.append(f"mutant '{name}' does not compile: {str(error).splitlines()[0]}")
            continue
        result = qemu(cpu, exe, "check", str(cases), seed)
        caught = [ln.split("  ")[0].strip() for ln in result.stdout.splitlines()
                  if re.search(r" [1-9]\d*/\d+ failed$", ln)]
        if result.returncode == 0:
            failed.append(f"mutant not caught: {name}")
            print(f"   NOT CAUGHT: {name}")
        else:
            kats = sum(1 for c in caught if " KAT " in c)
            randoms = [re.sub(r"\s+\d+/\d+ failed$", "", c) for c in caught if " KAT " not in c]
            print(f"   caught: {name}\n      by {kats} KAT checks and: {'; '.join(randoms) or '-'}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
