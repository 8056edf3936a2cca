/*
 * neon_sha3.c - the neon_sha3 backend: the neon kernels (neon128.h) with the ARMv8.2 SHA3
 * extension's XAR, which rotates a ^ b right in one instruction, for all four rotations of
 * BLAKE2b's G and Argon2's GB; and EOR3 for BLAKE2b's three-way XOR into h.  (BCAX, the third
 * SHA3 logic instruction, computes a ^ (b & ~c), which neither algorithm has.)
 *
 * The compiler target must enable SHA3 for the kernels (GCC 12: "arch=armv8.2-a+sha3", clang:
 * "sha3"; see tools/neon_harness/README.md), or they fail to compile.
 */
#include "argonishche_constants.h"
#include <arm_neon.h>

#include "argonishche_target.h"

ARGONISHCHE_TARGET_BEGIN

#if defined(__clang__) && !defined(vxarq_u64)
/* Clang 14's arm_neon.h declares the SHA3 intrinsics only when the whole translation unit is
 * compiled with SHA3 (-march=...+sha3), not under a per-function target, which is all the
 * kernel contract's rule 1 allows.  Its builtins work under the target, so call them the way
 * its arm_neon.h does (51 is its type code for uint64x2_t).  Newer clangs define vxarq_u64
 * under a target attribute, and take the intrinsics below. */
#define neon128_xar_(a, b, n) \
    ((uint64x2_t)__builtin_neon_vxarq_v((int8x16_t)(a), (int8x16_t)(b), (n), 51))
#define neon128_eor3_(a, b, c) \
    ((uint64x2_t)__builtin_neon_veor3q_v((int8x16_t)(a), (int8x16_t)(b), (int8x16_t)(c), 51))
#else
#define neon128_xar_(a, b, n) vxarq_u64((a), (b), (n))
#define neon128_eor3_(a, b, c) veor3q_u64((a), (b), (c))
#endif

ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr32(uint64x2_t a, uint64x2_t b) {
    return neon128_xar_(a, b, 32);
}

ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr24(uint64x2_t a, uint64x2_t b) {
    return neon128_xar_(a, b, 24);
}

ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr16(uint64x2_t a, uint64x2_t b) {
    return neon128_xar_(a, b, 16);
}

ARGONISHCHE_INLINE uint64x2_t neon128_xor_rotr63(uint64x2_t a, uint64x2_t b) {
    return neon128_xar_(a, b, 63);
}

ARGONISHCHE_INLINE uint64x2_t neon128_xor3(uint64x2_t a, uint64x2_t b, uint64x2_t c) {
    return neon128_eor3_(a, b, c);
}

#include "neon128.h"

ARGONISHCHE_TARGET_END

ARGONISHCHE_DEFINE_KERNELS(neon128_blake2b_compress, neon128_argon2_fill_block)
