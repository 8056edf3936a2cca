/*
 * cpu_features_arm.c - raw answers from the OS about the aarch64 CPU running this process, for the
 * CPU gate (cpu_features.c is the x86 side).
 *
 * An aarch64 process cannot read the CPU's ID registers portably (EL0 access is trapped and only
 * emulated by some kernels), so the OS's own report is used: on Linux the HWCAP words of the
 * auxiliary vector, which the kernel fills from the ID registers it saw at boot (and QEMU user
 * mode fills from the emulated CPU model); on macOS the hw.optional.* sysctls.  Which bit or name
 * means what is not written here: argonishche/_features.py holds that table and
 * argonishche/_trust/cpu_gate.py reads these words through it.
 *
 * Both functions exist on every platform, answering 0 where their source does not exist, so that
 * the cffi declarations (made from argonishche_core.h) are the same everywhere.
 */
#include "argonishche_core.h"

#if defined(__linux__) && defined(__aarch64__)
#include <sys/auxv.h>
#ifndef AT_HWCAP2 /* C libraries older than Linux 3.15's AT_HWCAP2 (it is 26 in <elf.h>) */
#define AT_HWCAP2 26
#endif
#endif

#if defined(__APPLE__)
/* UNTESTED: this branch has never been compiled or run by argonishche's test suite (no macOS
 * machine in CI).  sysctlbyname(3) is documented in Apple's "Determining instruction set
 * characteristics"; hw.optional.* flags are int-valued, and missing on CPUs/OS versions that
 * predate the feature, which reads as 0 here. */
#include <sys/types.h>
#include <sys/sysctl.h>
#endif

uint64_t argonishche_hwcap(int word) {
#if defined(__linux__) && defined(__aarch64__)
    /* getauxval returns 0 for an entry the kernel did not provide. */
    if (word == 1) return (uint64_t)getauxval(AT_HWCAP);
    if (word == 2) return (uint64_t)getauxval(AT_HWCAP2);
#else
    (void)word;
#endif
    return 0;
}

int argonishche_sysctl_flag(const char *name) {
#if defined(__APPLE__)
    int value = 0;
    size_t size = sizeof value;
    if (sysctlbyname(name, &value, &size, NULL, 0) != 0 || size != sizeof value) return 0;
    return value != 0;
#else
    (void)name;
    return 0;
#endif
}
