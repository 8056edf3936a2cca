/*
 * kernel_workout.c - one backend's kernels run on data that stays in the caches, for selection
 * by measurement (argonishche/_selection.py times these calls, backend after backend).
 *
 * Timing a whole hash would add what every backend shares (allocation, page faults, H0 and H',
 * memory latency) to what tells them apart, and blur small leads.  A workout therefore runs only
 * the kernel, over 16 KiB (Argon2) or 8 KiB (BLAKE2b) of a scratch buffer that fits in any L1 or
 * L2 cache, prepared once, so that each timed call does nothing else.
 */
#include <stdint.h>

#include "argonishche_constants.h"
#include "argonishche_core.h"

/* Blocks the Argon2 workout cycles through (16 KiB); the BLAKE2b workout's message is the first
 * 8 KiB of the same buffer, 64 blocks per call to F: a long run, as a long message makes. */
#define WORKOUT_ARGON2_BLOCKS 16
#define WORKOUT_BLAKE2B_RUN 64

/* The blocks in *scratch*: its first 64-byte aligned address (the kernel contract promises
 * aligned blocks; the caller's buffer may have any alignment, hence the 63 spare bytes). */
static argonishche_block *workout_blocks(void *scratch) {
    return (argonishche_block *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
}

void argonishche_workout_prepare(void *scratch) {
    argonishche_block *blocks = workout_blocks(scratch);
    /* Any non-zero contents will do: the kernels' speed does not depend on the data. */
    for (uint64_t w = 0; w < WORKOUT_ARGON2_BLOCKS * ARGONISHCHE_BLOCK_WORDS; w++)
        blocks[w / ARGONISHCHE_BLOCK_WORDS].v[w % ARGONISHCHE_BLOCK_WORDS] =
            (w + 1) * 0x9E3779B97F4A7C15ULL;
}

uint64_t argonishche_workout_argon2(const void *kernel_table, void *scratch, uint32_t fills) {
    const argonishche_kernel_table *kernels = kernel_table;
    argonishche_block *blocks = workout_blocks(scratch);

    for (uint32_t n = 0; n < fills; n++) {
        uint32_t next = n % WORKOUT_ARGON2_BLOCKS;
        uint32_t prev = (next + WORKOUT_ARGON2_BLOCKS - 1) % WORKOUT_ARGON2_BLOCKS;
        /* ref: 1 to 14 blocks ahead of next, so never next itself (the contract forbids it). */
        uint32_t ref = (next + 1 + (n * 5) % (WORKOUT_ARGON2_BLOCKS - 2)) % WORKOUT_ARGON2_BLOCKS;
        /* Both forms of G, a sweep each: the first pass's, and version 0x13's XOR into next. */
        kernels->argon2_fill_block(&blocks[next], &blocks[prev], &blocks[ref],
                                   (int)((n / WORKOUT_ARGON2_BLOCKS) & 1));
    }
    return blocks[0].v[0]; /* returned so that no compiler may take the work as unused */
}

uint64_t argonishche_workout_blake2b(const void *kernel_table, const void *scratch,
                                     uint32_t blocks) {
    const argonishche_kernel_table *kernels = kernel_table;
    const uint8_t *message = (const uint8_t *)workout_blocks((void *)scratch);
    uint64_t h[8], t[2] = {0, 0};

    for (int i = 0; i < 8; i++) h[i] = argonishche_blake2b_iv[i];
    while (blocks > 0) {
        uint32_t run = blocks < WORKOUT_BLAKE2B_RUN ? blocks : WORKOUT_BLAKE2B_RUN;
        kernels->blake2b_compress(h, t, message, run, ARGONISHCHE_BLAKE2B_BLOCK_BYTES, 0, 0);
        blocks -= run;
    }
    return h[0];
}
