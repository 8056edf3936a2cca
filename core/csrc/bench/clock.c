/*
 * clock.c - how fast this core really runs, for "cycles per block" in benchmarks.
 *
 * The TSC ticks at a fixed rate while the core boosts above it, so TSC ticks are not cycles,
 * and perf counters are unavailable in many VMs.  A chain of dependent register-to-register
 * additions runs at one per cycle on every x86-64 core, so timing one gives the core clock.
 *
 * Register to register, not an immediate: recent Intel cores fold chains of `add $1` at
 * register renaming, several per cycle, which would read as a clock several times too fast.
 */
#include <stdint.h>

/* Runs 8 * rounds dependent additions (one per core cycle) and returns 8 * rounds. */

uint64_t argonishche_dependent_adds(uint64_t rounds) {
    uint64_t x = 0, one = 1;
    for (uint64_t i = 0; i < rounds; i++) {
#if defined(__x86_64__) || defined(__i386__)
        /* Eight adds per round, each waiting for the previous: 8 cycles, loop overhead hidden. */
        __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(x)
                         : "r"(one));
#else
        x += 8 * one;
        __asm__ volatile("" : "+r"(x));
#endif
    }
    return x;
}
