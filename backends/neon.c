/*
 * neon.c - the neon backend: BLAKE2b F and Argon2 G on AArch64 Advanced SIMD (neon128.h), which
 * every AArch64 CPU running Linux has.  Without SHA3's XAR, "rotate a ^ b" is an EOR followed by
 * the cheapest rotation each amount allows.
 */
#include "argonishche_constants.h"
#include <arm_neon.h>

#include "argonishche_target.h"

ARGONISHCHE_TARGET_BEGIN

/* By 32: swap the 32-bit halves of each lane, one REV64. */
ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr32(uint64x2_t a, uint64x2_t b) {
    return vreinterpretq_u64_u32(vrev64q_u32(vreinterpretq_u32_u64(veorq_u64(a, b))));
}

/* By 24 and 16, whole bytes: one TBL, byte i of a lane taking byte i + 3 (i + 2) mod 8.  A
 * shift pair (SHL + SRI) would be two dependent instructions on the chain instead of one; the
 * constant index stays in a register across the inlined rounds. */
ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr24(uint64x2_t a, uint64x2_t b) {
    static const uint8_t by_3_bytes[16] = {3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10};
    return vreinterpretq_u64_u8(
        vqtbl1q_u8(vreinterpretq_u8_u64(veorq_u64(a, b)), vld1q_u8(by_3_bytes)));
}

ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr16(uint64x2_t a, uint64x2_t b) {
    static const uint8_t by_2_bytes[16] = {2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9};
    return vreinterpretq_u64_u8(
        vqtbl1q_u8(vreinterpretq_u8_u64(veorq_u64(a, b)), vld1q_u8(by_2_bytes)));
}

/* By 63, i.e. left by 1: x + x is the shift, then SRI inserts the top bit at the bottom. */
ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr63(uint64x2_t a, uint64x2_t b) {
    const uint64x2_t x = veorq_u64(a, b);
    return vsriq_n_u64(vaddq_u64(x, x), x, 63);
}

ARGONISHCHE_INLINE uint64x2_t neon128_xor3(uint64x2_t a, uint64x2_t b, uint64x2_t c) {
    return veorq_u64(a, veorq_u64(b, c));
}

#include "neon128.h"

ARGONISHCHE_TARGET_END

ARGONISHCHE_DEFINE_KERNELS(neon128_blake2b_compress, neon128_argon2_fill_block)
