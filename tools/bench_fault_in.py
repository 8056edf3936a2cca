"""What faulting fresh memory in costs, by how it is touched and the page size (docs/memory.md).

    python tools/bench_fault_in.py                     # 1 GiB, 2 threads, every way, 3 times
    python tools/bench_fault_in.py --mib 256 --pause 8 # after 8 s idle: a VM's host took it back

Compiles a small C program (``cc``, no Python in the timed part) that maps SIZE bytes, has
THREADS threads touch one byte per 4 KiB page of their share, and unmaps it, timing both:

    read-write   ``p[i] = p[i]``, what argonishche did before: the read maps the shared zero
                 page, and the write faults again, copies, and flushes every CPU's TLB
    atomic-or    ``__atomic_fetch_or(p + i, 0)``: one write fault per page, contents kept
                 (argonishche_pages_prefault in core/csrc/platform.h)
    write        ``p[i] = 0``: one write fault per page (what a fresh buffer could use)

each with small pages and with ``MADV_HUGEPAGE`` (one fault per 2 MiB).  ``--pause`` sleeps
before each mapping: on a VM with free page reporting (virtio-balloon) the guest reports free
memory to its host after about 2 s, and faulting it in again then costs the host's work too.
The order of the cases rotates between rounds.  A benchmark, not a test: print the medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static int mode, threads;
static size_t size;
static uint8_t *memory;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *touch(void *arg) {
    size_t share = size / threads, start = (size_t)(uintptr_t)arg * share;
    volatile uint8_t *p = memory + start;
    for (size_t offset = 0; offset < share; offset += 4096) {
        if (mode == 0) p[offset] = p[offset];
        else if (mode == 1) __atomic_fetch_or((uint8_t *)p + offset, 0, __ATOMIC_RELAXED);
        else p[offset] = 0;
    }
    return NULL;
}

int main(int argc, char **argv) {
    mode = atoi(argv[1]), threads = atoi(argv[3]);
    size = (size_t)atol(argv[2]) << 20;
    int huge = atoi(argv[4]);
    double t0 = now();
    uint8_t *raw = mmap(NULL, size + (2u << 20), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return 1;
    memory = (uint8_t *)(((uintptr_t)raw + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
    if (huge) madvise(memory, size, MADV_HUGEPAGE);
    pthread_t handles[64];
    for (long i = 0; i < threads; i++) pthread_create(&handles[i], NULL, touch, (void *)i);
    for (int i = 0; i < threads; i++) pthread_join(handles[i], NULL);
    double t1 = now();
    munmap(raw, size + (2u << 20));
    printf("%.6f %.6f\n", t1 - t0, now() - t1);
    return 0;
}
"""

MODES = ("read-write", "atomic-or", "write")


def build(directory: str) -> str:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        sys.exit("bench_fault_in: needs a C compiler (cc)")
    source, program = os.path.join(directory, "fault_in.c"), os.path.join(directory, "fault_in")
    with open(source, "w", encoding="ascii") as f:
        f.write(SOURCE)
    subprocess.run([compiler, "-O2", "-pthread", source, "-o", program], check=True)
    return program


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pause", type=float, default=0.0, help="seconds before each mapping")
    args = parser.parse_args()
    cases = [(mode, huge) for huge in (0, 1) for mode in range(len(MODES))]
    found: dict[tuple[int, int], list[tuple[float, float]]] = {case: [] for case in cases}
    with tempfile.TemporaryDirectory() as directory:
        program = build(directory)
        for round_ in range(args.rounds):
            for mode, huge in cases[round_ % len(cases):] + cases[:round_ % len(cases)]:
                time.sleep(args.pause)
                out = subprocess.run([program, str(mode), str(args.mib), str(args.threads),
                                      str(huge)], capture_output=True, text=True, check=True)
                touched, unmapped = map(float, out.stdout.split())
                found[mode, huge].append((touched, unmapped))
    print(f"{args.mib} MiB, {args.threads} threads, {args.rounds} rounds, {args.pause:g} s pause "
          f"before each; medians (min-max) in ms")
    print(f"{'touch':<12}{'pages':<7}{'fault in':>24}{'unmap':>22}")
    for mode, huge in cases:
        touched = [t for t, _ in found[mode, huge]]
        unmapped = [u for _, u in found[mode, huge]]
        print(f"{MODES[mode]:<12}{'huge' if huge else 'small':<7}"
              f"{statistics.median(touched) * 1e3:>10.1f} ({min(touched) * 1e3:.0f}-"
              f"{max(touched) * 1e3:.0f}){statistics.median(unmapped) * 1e3:>10.1f} "
              f"({min(unmapped) * 1e3:.0f}-{max(unmapped) * 1e3:.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
