/*
 * sse2.c - the sse2 backend: BLAKE2b F and Argon2 G on 16-byte vectors (simd128.h) with only
 * SSE2, which every x86-64 CPU has.  SSE2 has no byte shuffle, so the 24-bit rotation is two
 * shifts and an or, and the 16-bit one a shuffle of 16-bit words.
 */
#include "argonishche_constants.h"
#include <emmintrin.h>

#include "argonishche_target.h"

ARGONISHCHE_TARGET_BEGIN

ARGONISHCHE_INLINE __m128i simd128_rotr24(__m128i x) {
    return _mm_or_si128(_mm_srli_epi64(x, 24), _mm_slli_epi64(x, 40));
}

/* Each 16-bit word moves down one place within its 64-bit lane: pshuflw, then pshufhw.  Two
 * instructions instead of three, and no slower. */
ARGONISHCHE_INLINE __m128i simd128_rotr16(__m128i x) {
    x = _mm_shufflelo_epi16(x, _MM_SHUFFLE(0, 3, 2, 1));
    return _mm_shufflehi_epi16(x, _MM_SHUFFLE(0, 3, 2, 1));
}

/* (a[0], b[1]): shufpd's low lane comes from a, its high lane from b. */
ARGONISHCHE_INLINE __m128i simd128_low_high(__m128i a, __m128i b) {
    return _mm_castpd_si128(_mm_shuffle_pd(_mm_castsi128_pd(a), _mm_castsi128_pd(b), 2));
}

#include "simd128.h"

ARGONISHCHE_TARGET_END

ARGONISHCHE_DEFINE_KERNELS(simd128_blake2b_compress, simd128_argon2_fill_block)
