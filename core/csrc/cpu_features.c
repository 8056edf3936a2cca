/*
 * cpu_features.c - raw answers from the CPU executing this process, for the CPU gate.
 *
 * /proc/cpuinfo (and so py-cpuinfo) describes the host even under Intel SDE or QEMU, and a CPU can
 * advertise AVX while the OS does not save ymm/zmm registers.  Only CPUID executed here plus
 * XGETBV tells the truth about the CPU that will run the kernels.  Which bit means what is not
 * written here: argonishche/_features.py holds that table, and argonishche/_trust/cpu_gate.py reads these
 * words through it, so adding a feature adds a row there and touches no C.
 */
#include "platform.h" /* ARGONISHCHE_X86, ARGONISHCHE_MSVC_INTRINSICS */

#include "argonishche_core.h"

#if ARGONISHCHE_X86 && ARGONISHCHE_MSVC_INTRINSICS
#include <intrin.h>

/* MSVC: the same answers through its intrinsics (mingw takes the <cpuid.h> path below, and
 * tools/win_c runs this one too, forced, and compares the two). */
int argonishche_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t registers[4]) {
    int r[4];
    /* As __get_cpuid_count does: above the highest leaf of its range, CPUID would answer with
     * another leaf's data.  (Every CPU that runs 64-bit or NT-era Windows has CPUID.) */
    __cpuid(r, (int)(leaf & 0x80000000u));
    if ((uint32_t)r[0] < leaf) return 0;
    __cpuidex(r, (int)leaf, (int)subleaf);
    for (int i = 0; i < 4; i++) registers[i] = (uint32_t)r[i];
    return 1;
}

uint64_t argonishche_xcr0(void) {
    int r[4];
    /* XGETBV raises #UD unless the OS set CR4.OSXSAVE, which CPUID.1:ECX bit 27 mirrors. */
    __cpuid(r, 1);
    if (!((uint32_t)r[2] & (1u << 27))) return 0;
    return (uint64_t)_xgetbv(0);
}

#elif ARGONISHCHE_X86 /* GCC and clang, mingw included */
#include <cpuid.h>

int argonishche_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t registers[4]) {
    unsigned int eax, ebx, ecx, edx;
    /* __get_cpuid_count checks the leaf against the CPU's highest leaf of its range first:
     * above it, CPUID would answer with another leaf's data. */
    if (!__get_cpuid_count(leaf, subleaf, &eax, &ebx, &ecx, &edx)) return 0;
    registers[0] = eax;
    registers[1] = ebx;
    registers[2] = ecx;
    registers[3] = edx;
    return 1;
}

uint64_t argonishche_xcr0(void) {
    unsigned int eax, ebx, ecx, edx;
    /* XGETBV raises #UD unless the OS set CR4.OSXSAVE, which CPUID.1:ECX bit 27 mirrors. */
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return 0;
    uint32_t low, high;
    /* Raw opcode: xgetbv needs no -mxsave this way. */
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(low), "=d"(high) : "c"(0));
    return ((uint64_t)high << 32) | low;
}

#else /* not x86: no CPUID; the table has no rows for this architecture yet. */

int argonishche_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t registers[4]) {
    (void)leaf;
    (void)subleaf;
    (void)registers;
    return 0;
}

uint64_t argonishche_xcr0(void) { return 0; }

#endif
