/*
 * cpu_features.c - what the CPU executing this process can run, asked of the CPU itself.
 *
 * /proc/cpuinfo (and so py-cpuinfo) describes the host even under Intel SDE or QEMU, and a CPU can
 * advertise AVX while the OS does not save YMM/ZMM registers.  Only CPUID executed here plus XGETBV
 * tells the truth about the CPU that will run the kernels, so this is the gate that decides.
 */
#include "argonishche_core.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0 bits: SSE (1) and AVX (2) state; AVX-512 opmask (5), ZMM0-15 upper (6), ZMM16-31 (7). */
#define XCR0_YMM_STATE 0x06u
#define XCR0_ZMM_STATE 0xe0u

static uint32_t read_xcr0(void) {
    uint32_t eax, edx;
    /* Raw opcode: xgetbv needs no -mxsave this way, and is only run when OSXSAVE is set. */
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
    return eax;
}

uint32_t argonishche_cpu_features(void) {
    unsigned int eax, ebx, ecx, edx;
    uint32_t features = 0;
    uint32_t xcr0 = 0;

    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    if (edx & (1u << 26)) features |= ARGONISHCHE_CPU_SSE2;
    if (ecx & (1u << 9)) features |= ARGONISHCHE_CPU_SSSE3;
    if (ecx & (1u << 19)) features |= ARGONISHCHE_CPU_SSE4_1;
    if (ecx & (1u << 27)) xcr0 = read_xcr0(); /* OSXSAVE: the OS uses XSAVE and allows XGETBV */

    int os_saves_ymm = (xcr0 & XCR0_YMM_STATE) == XCR0_YMM_STATE;
    int os_saves_zmm = os_saves_ymm && (xcr0 & XCR0_ZMM_STATE) == XCR0_ZMM_STATE;
    if ((ecx & (1u << 28)) && os_saves_ymm) features |= ARGONISHCHE_CPU_AVX;

    if (__get_cpuid_max(0, 0) >= 7) {
        __cpuid_count(7, 0, eax, ebx, ecx, edx);
        if ((ebx & (1u << 5)) && (features & ARGONISHCHE_CPU_AVX)) features |= ARGONISHCHE_CPU_AVX2;
        if ((ebx & (1u << 16)) && os_saves_zmm) {
            features |= ARGONISHCHE_CPU_AVX512F;
            if (ebx & (1u << 31)) features |= ARGONISHCHE_CPU_AVX512VL;
            if (ebx & (1u << 30)) features |= ARGONISHCHE_CPU_AVX512BW;
        }
    }
    return features;
}

#else /* not x86: no SIMD backend of ours applies; the portable ref backend needs nothing. */

uint32_t argonishche_cpu_features(void) { return 0; }

#endif
