/*
 * bad.c - ref's kernels with one deliberate bug, switched on by bug.h (written next to this file,
 * with ref.c, by tests/trust/test_bad_kernels.py before the wheel is built):
 *
 *   #define BAD_G_BEHIND n     G flips a bit of its result when ref lies more than n blocks
 *                              behind prev (the kernel compares their addresses);
 *   #define BAD_F_RUN_FROM n   F flips a bit of h after a run of n or more blocks in one call;
 *   #define BAD_NULL_G         the table's Argon2 kernel is NULL;
 *   #define BAD_F_NO_LAST_NODE F ignores its f1 word (last_node_flag), as a kernel written
 *                              before tree hashing would;
 *   #define BAD_STALE_ABI      the table a plugin built against kernel ABI 2 exports: abi_version
 *                              2, and an F taking no f1 word.
 *
 * Most are bug classes that third-party kernels had: a path taken only for far references or long
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
                                 size_t nblocks, uint64_t increment, uint64_t final_flag,
                                 uint64_t last_node_flag) {
#ifdef BAD_F_NO_LAST_NODE
    (void)last_node_flag;
    ref_blake2b_compress(h, t, blocks, nblocks, increment, final_flag, 0);
#else
    ref_blake2b_compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag);
#endif
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

#if defined(BAD_STALE_ABI)
/* ABI 2's table: the same layout, but its F has six parameters (no f1). */
typedef void (*abi2_blake2b_compress_fn)(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                         size_t nblocks, uint64_t increment,
                                         uint64_t final_flag);
typedef struct {
    uint32_t abi_version;
    uint32_t table_size;
    abi2_blake2b_compress_fn blake2b_compress;
    argonishche_argon2_fill_block_fn argon2_fill_block;
    const char *compiled_for;
} abi2_kernel_table;

static void abi2_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                  size_t nblocks, uint64_t increment, uint64_t final_flag) {
    ref_blake2b_compress(h, t, blocks, nblocks, increment, final_flag, 0);
}

static const abi2_kernel_table abi2_table = {2, (uint32_t)sizeof(abi2_kernel_table),
                                             abi2_blake2b_compress, bad_argon2_fill_block, ""};
const void *argonishche_kernels(void) { return &abi2_table; }
#elif defined(BAD_NULL_G)
ARGONISHCHE_DEFINE_KERNELS(bad_blake2b_compress, NULL)
#else
ARGONISHCHE_DEFINE_KERNELS(bad_blake2b_compress, bad_argon2_fill_block)
#endif
