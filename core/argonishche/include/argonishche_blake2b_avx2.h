/*
 * argonishche_blake2b_avx2.h - BLAKE2b kernel pieces for AVX2 kernels, shared so that no kernel
 * file (in-tree or a plugin) carries its own copy.
 *
 *   argonishche_blake2b_avx2_message(block, i0, i1, i2, i3)
 *       message words i0..i3 of a 128-byte block (little-endian, any alignment) in lanes 0..3
 *       of a 256-bit vector: one BLAKE2b G on four columns (or diagonals) takes two of these.
 *
 * Usable only in kernels compiled for AVX2: include it after ARGONISHCHE_TARGET_BEGIN (see
 * argonishche_target.h), in a backend whose cpu_features include avx2, with <immintrin.h>,
 * argonishche_constants.h and argonishche_target.h included before ARGONISHCHE_TARGET_BEGIN:
 *
 *     #include <immintrin.h>
 *     #include "argonishche_constants.h"
 *     #include "argonishche_target.h"
 *     ARGONISHCHE_TARGET_BEGIN
 *     #include "argonishche_blake2b_avx2.h"
 *     ... kernels ...
 *     ARGONISHCHE_TARGET_END
 *
 * Its functions are compiled for the target of the region they are defined in, so before BEGIN
 * they would be baseline code calling AVX2 intrinsics, which neither compiler accepts; GCC is
 * stopped here with a clearer message (clang does not say which target a region has).
 */
#ifndef ARGONISHCHE_BLAKE2B_AVX2_H
#define ARGONISHCHE_BLAKE2B_AVX2_H

/* Included before BEGIN, so that their helpers stay baseline code (the accessor may call them). */
#if !defined(ARGONISHCHE_CONSTANTS_H) || !defined(ARGONISHCHE_TARGET_H)
#error "argonishche_blake2b_avx2.h: include argonishche_constants.h and argonishche_target.h \
before ARGONISHCHE_TARGET_BEGIN"
#endif
#if defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__)
#error "argonishche_blake2b_avx2.h: include it after ARGONISHCHE_TARGET_BEGIN, in a backend \
whose cpu_features include avx2"
#endif

#include "argonishche_constants.h"
#include "argonishche_target.h"

/* Four broadcast loads and three blends: the loads run on the load units and blends on any
 * vector port, leaving the shuffle ports to G's rotations (faster than vpinsrq/vinserti128
 * inserts or a vpgatherqq). */
ARGONISHCHE_INLINE __m256i argonishche_blake2b_avx2_message(const uint8_t *block, int i0, int i1,
                                                            int i2, int i3) {
    const __m256i w0 = _mm256_set1_epi64x((long long)argonishche_load64_le(block + 8 * i0));
    const __m256i w1 = _mm256_set1_epi64x((long long)argonishche_load64_le(block + 8 * i1));
    const __m256i w2 = _mm256_set1_epi64x((long long)argonishche_load64_le(block + 8 * i2));
    const __m256i w3 = _mm256_set1_epi64x((long long)argonishche_load64_le(block + 8 * i3));
    return _mm256_blend_epi32(_mm256_blend_epi32(w0, w1, 0x0C), _mm256_blend_epi32(w2, w3, 0xC0),
                              0xF0);
}

#endif /* ARGONISHCHE_BLAKE2B_AVX2_H */
