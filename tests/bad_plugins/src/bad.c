/*
 * bad.c - ref's kernels with one deliberate bug, switched on by bug.h (written next to this file,
 * with ref.c, by tests/test_bad_kernels.py before the wheel is built):
 *
 *   #define BAD_G_BEHIND n     G flips a bit of its result when ref lies more than n blocks
 *                              behind prev (the kernel compares their addresses);
 *   #define BAD_F_RUN_FROM n   F flips a bit of h after a run of n or more blocks in one call;
 *   #define BAD_NULL_G         the table's Argon2 kernel is NULL.
 *
 * Each is a bug class that third-party kernels had: a path taken only for far references or long
 * runs, wrong, and not reached by the known-answer vectors.
 */
#include <stdint.h>

#include "bug.h"

/* ref.c, with its table and accessor renamed: this file defines the module's own below. */
#define argonishche_kernels ref_argonishche_kernels
#define argonishche_kernel_table_instance ref_kernel_table_instance
#include "ref.c"
#undef argonishche_kernels
#undef argonishche_kernel_table_instance

static void bad_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                 size_t nblocks, uint64_t increment, uint64_t final_flag) {
    ref_blake2b_compress(h, t, blocks, nblocks, increment, final_flag);
#ifdef BAD_F_RUN_FROM
    if (nblocks >= BAD_F_RUN_FROM) h[7] ^= 1;
#endif
}

static void bad_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                  const argonishche_block *ref, int xor_into_next) {
    ref_argon2_fill_block(next, prev, ref, xor_into_next);
#ifdef BAD_G_BEHIND
    intptr_t behind = (intptr_t)((uintptr_t)prev - (uintptr_t)ref);
    if (behind > (intptr_t)BAD_G_BEHIND * (intptr_t)sizeof *ref) next->v[127] ^= 1;
#endif
}

#ifdef BAD_NULL_G
ARGONISHCHE_DEFINE_KERNELS(bad_blake2b_compress, NULL)
#else
ARGONISHCHE_DEFINE_KERNELS(bad_blake2b_compress, bad_argon2_fill_block)
#endif
