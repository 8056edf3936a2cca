/*
 * sse41.c - the sse41 backend: the ssse3 kernels (simd128.h), with SSE4.1's blend picking the
 * even-odd message word pairs of BLAKE2b.
 */
#include "argonishche_constants.h"
#include <emmintrin.h>
#include <smmintrin.h>
#include <tmmintrin.h>

#include "argonishche_target.h"

ARGONISHCHE_TARGET_BEGIN

/* As in ssse3.c: rotating a lane right by n bytes moves its byte i + n to byte i. */
ARGONISHCHE_INLINE __m128i simd128_rotr24(__m128i x) {
    return _mm_shuffle_epi8(x, _mm_setr_epi8(3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10));
}

ARGONISHCHE_INLINE __m128i simd128_rotr16(__m128i x) {
    return _mm_shuffle_epi8(x, _mm_setr_epi8(2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9));
}

/* (a[0], b[1]) as a blend.  Intel cores issue blendpd on any of their vector ALU ports, while
 * shufpd, like every shuffle, waits for the single shuffle port that BLAKE2b already keeps
 * busy.  (AMD cores have two shuffle ports, but pick an AVX2 kernel anyway.) */
ARGONISHCHE_INLINE __m128i simd128_low_high(__m128i a, __m128i b) {
    return _mm_castpd_si128(_mm_blend_pd(_mm_castsi128_pd(a), _mm_castsi128_pd(b), 2));
}

#include "simd128.h"

ARGONISHCHE_TARGET_END

ARGONISHCHE_DEFINE_KERNELS(simd128_blake2b_compress, simd128_argon2_fill_block)
