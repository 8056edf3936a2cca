/*
 * simd128.h - BLAKE2b F (RFC 7693) and Argon2 G (RFC 9106) on 128-bit vectors, written once for
 * the sse2, ssse3 and sse41 backends.
 *
 * Both algorithms mix sixteen 64-bit words v0..v15 seen as a 4x4 matrix: first its four columns,
 * then its four diagonals (RFC 7693 section 3.2, RFC 9106 section 3.6).  A 16-byte vector holds
 * two words, so a matrix is eight vectors x[0..7], two per row:
 *
 *     row a: x[0] = (v0, v1)    x[1] = (v2, v3)
 *     row b: x[2] = (v4, v5)    x[3] = (v6, v7)
 *     row c: x[4] = (v8, v9)    x[5] = (v10, v11)
 *     row d: x[6] = (v12, v13)  x[7] = (v14, v15)
 *
 * and one vector operation works on two columns at once.  Rotating rows a, c and d lines the
 * diagonals up as columns (simd128_diagonalize), so the same code then mixes the diagonals.
 *
 * What differs between instruction sets is three primitives, which the including file defines
 * (after ARGONISHCHE_TARGET_BEGIN, see argonishche_target.h) before including this:
 *
 *     __m128i simd128_rotr24(__m128i x)            each 64-bit lane rotated right by 24 bits
 *     __m128i simd128_rotr16(__m128i x)            ... by 16 bits
 *     __m128i simd128_low_high(__m128i a, __m128i b)       (a[0], b[1])
 *
 * where a[0] is a vector's low 64-bit lane.  In return this header defines the two kernels,
 * simd128_blake2b_compress and simd128_argon2_fill_block, for the including file to name in
 * ARGONISHCHE_DEFINE_KERNELS after ARGONISHCHE_TARGET_END (so that the exported accessor is
 * compiled for baseline x86-64).  The measurements behind the choices below are in
 * docs/benchmarks.md ("Measurements behind the kernels' choices").
 */
#ifndef ARGONISHCHE_SIMD128_H
#define ARGONISHCHE_SIMD128_H

#include <emmintrin.h>
#include <xmmintrin.h>

#include "argonishche_constants.h"
#include "argonishche_target.h"

/* ---- Primitives every SSE level does the same way ------------------------------------------ */

/* Swapping the 32-bit halves of each lane is a rotation by 32: one shuffle. */
ARGONISHCHE_INLINE __m128i simd128_rotr32(__m128i x) {
    return _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1));
}

/* A rotation right by 63 is one left by 1; x + x is the left shift, and an add can issue on
 * more ports than a shift. */
ARGONISHCHE_INLINE __m128i simd128_rotr63(__m128i x) {
    return _mm_xor_si128(_mm_srli_epi64(x, 63), _mm_add_epi64(x, x));
}

/* (a[1], b[0]): the middle two words of a, b read as four consecutive words.  shufpd rather than
 * SSSE3's palignr even where palignr exists: it is the shorter-latency shuffle on AMD cores. */
ARGONISHCHE_INLINE __m128i simd128_high_low(__m128i a, __m128i b) {
    return _mm_castpd_si128(_mm_shuffle_pd(_mm_castsi128_pd(a), _mm_castsi128_pd(b), 1));
}

/* An empty asm that claims to change x, so the compiler must compute x as written.  G adds a
 * message word and b to a; b is the last value of the dependency chain a -> d -> c -> b, so
 * a + m must be formed first.  GCC would otherwise reassociate the sum to (b + m) + a, with
 * two additions after b instead of one. */
ARGONISHCHE_INLINE __m128i simd128_as_written(__m128i x) {
    __asm__("" : "+x"(x));
    return x;
}

/* ---- Diagonals as columns ------------------------------------------------------------------ */

/* Rotate rows a (right by one word), c (left by one) and d (by two: a swap of its vectors) so
 * that column k holds the diagonal through b's word k:
 *     lanes (v3, v4, v9, v14), (v0, v5, v10, v15) in x[0], x[2], x[4], x[6]
 *     lanes (v1, v6, v11, v12), (v2, v7, v8, v13) in x[1], x[3], x[5], x[7].
 * Row b is the one G computes last; leaving it in place keeps these shuffles off the critical
 * path, since a, c and d are ready earlier. */
ARGONISHCHE_INLINE void simd128_diagonalize(__m128i x[8]) {
    const __m128i a0 = x[0], a1 = x[1], c0 = x[4], c1 = x[5], d0 = x[6];
    x[0] = simd128_high_low(a1, a0);   /* (v3, v0) */
    x[1] = simd128_high_low(a0, a1);   /* (v1, v2) */
    x[4] = simd128_high_low(c0, c1);   /* (v9, v10) */
    x[5] = simd128_high_low(c1, c0);   /* (v11, v8) */
    x[6] = x[7];                       /* (v14, v15) */
    x[7] = d0;                         /* (v12, v13) */
}

ARGONISHCHE_INLINE void simd128_undiagonalize(__m128i x[8]) {
    const __m128i a0 = x[0], a1 = x[1], c0 = x[4], c1 = x[5], d0 = x[6];
    x[0] = simd128_high_low(a0, a1);   /* (v0, v1) */
    x[1] = simd128_high_low(a1, a0);   /* (v2, v3) */
    x[4] = simd128_high_low(c1, c0);   /* (v8, v9) */
    x[5] = simd128_high_low(c0, c1);   /* (v10, v11) */
    x[6] = x[7];
    x[7] = d0;
}

/* ---- BLAKE2b F (RFC 7693 section 3.2) ------------------------------------------------------ */

/* The mixing function G (section 3.1) on two columns, message words x and y. */
ARGONISHCHE_INLINE void simd128_blake2b_g(__m128i *a, __m128i *b, __m128i *c, __m128i *d, __m128i x,
                                      __m128i y) {
    *a = _mm_add_epi64(simd128_as_written(_mm_add_epi64(*a, x)), *b);
    *d = simd128_rotr32(_mm_xor_si128(*d, *a));
    *c = _mm_add_epi64(*c, *d);
    *b = simd128_rotr24(_mm_xor_si128(*b, *c));
    *a = _mm_add_epi64(simd128_as_written(_mm_add_epi64(*a, y)), *b);
    *d = simd128_rotr16(_mm_xor_si128(*d, *a));
    *c = _mm_add_epi64(*c, *d);
    *b = simd128_rotr63(_mm_xor_si128(*b, *c));
}

/* The vector (m[i], m[j]), from the message held as msg[k] = (m[2k], m[2k+1]).  Rounds are
 * inlined with constant sigma entries, so this folds to at most one instruction. */
ARGONISHCHE_INLINE __m128i simd128_message_pair(const __m128i msg[8], unsigned i, unsigned j) {
    const __m128i mi = msg[i / 2], mj = msg[j / 2];
    if (i % 2 == 0 && j == i + 1) return mi;
    if (j % 2 == 0 && i == j + 1) return _mm_shuffle_epi32(mi, _MM_SHUFFLE(1, 0, 3, 2));
    if (i % 2 == 0 && j % 2 == 0) return _mm_unpacklo_epi64(mi, mj);
    if (i % 2 == 1 && j % 2 == 1) return _mm_unpackhi_epi64(mi, mj);
    if (i % 2 == 1) return simd128_high_low(mi, mj);
    return simd128_low_high(mi, mj);
}

/* One round with sigma row s.  G_i takes m[s[2i]] and m[s[2i+1]]; the columns are G_0..G_3,
 * and after simd128_diagonalize the lanes hold the diagonals G_7, G_4 | G_5, G_6. */
ARGONISHCHE_INLINE void simd128_blake2b_round(__m128i x[8], const __m128i msg[8],
                                          const uint8_t s[16]) {
    simd128_blake2b_g(&x[0], &x[2], &x[4], &x[6], simd128_message_pair(msg, s[0], s[2]),
                      simd128_message_pair(msg, s[1], s[3]));
    simd128_blake2b_g(&x[1], &x[3], &x[5], &x[7], simd128_message_pair(msg, s[4], s[6]),
                      simd128_message_pair(msg, s[5], s[7]));
    simd128_diagonalize(x);
    simd128_blake2b_g(&x[0], &x[2], &x[4], &x[6], simd128_message_pair(msg, s[14], s[8]),
                      simd128_message_pair(msg, s[15], s[9]));
    simd128_blake2b_g(&x[1], &x[3], &x[5], &x[7], simd128_message_pair(msg, s[10], s[12]),
                      simd128_message_pair(msg, s[11], s[13]));
    simd128_undiagonalize(x);
}

/* h stays in registers across a run of blocks: the core passes several blocks only with the
 * same increment and no final flag (see argonishche_kernel.h). */
static void simd128_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                     size_t nblocks, uint64_t increment, uint64_t final_flag,
                                     uint64_t last_node_flag) {
    const __m128i *iv = (const __m128i *)argonishche_blake2b_iv;
    __m128i *hv = (__m128i *)h;
    __m128i h01 = _mm_loadu_si128(hv), h23 = _mm_loadu_si128(hv + 1);
    __m128i h45 = _mm_loadu_si128(hv + 2), h67 = _mm_loadu_si128(hv + 3);
    uint64_t t0 = t[0], t1 = t[1];

    for (; nblocks > 0; nblocks--, blocks += ARGONISHCHE_BLAKE2B_BLOCK_BYTES) {
        __m128i msg[8], x[8];
        t0 += increment;
        t1 += (t0 < increment);
        for (int k = 0; k < 8; k++) msg[k] = _mm_loadu_si128((const __m128i *)blocks + k);
        /* v = h || IV, then v12, v13 ^= t and v14, v15 ^= f0, f1. */
        x[0] = h01, x[1] = h23, x[2] = h45, x[3] = h67;
        x[4] = _mm_loadu_si128(iv), x[5] = _mm_loadu_si128(iv + 1);
        x[6] = _mm_xor_si128(_mm_loadu_si128(iv + 2), _mm_set_epi64x((int64_t)t1, (int64_t)t0));
        x[7] = _mm_xor_si128(_mm_loadu_si128(iv + 3),
                             _mm_set_epi64x((int64_t)last_node_flag, (int64_t)final_flag));

        /* Twelve rounds written out, so that each sees its sigma row as constants. */
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[0]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[1]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[2]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[3]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[4]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[5]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[6]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[7]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[8]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[9]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[10]);
        simd128_blake2b_round(x, msg, argonishche_blake2b_sigma[11]);

        h01 = _mm_xor_si128(h01, _mm_xor_si128(x[0], x[4]));
        h23 = _mm_xor_si128(h23, _mm_xor_si128(x[1], x[5]));
        h45 = _mm_xor_si128(h45, _mm_xor_si128(x[2], x[6]));
        h67 = _mm_xor_si128(h67, _mm_xor_si128(x[3], x[7]));
    }
    _mm_storeu_si128(hv, h01), _mm_storeu_si128(hv + 1, h23);
    _mm_storeu_si128(hv + 2, h45), _mm_storeu_si128(hv + 3, h67);
    t[0] = t0;
    t[1] = t1;
}

/* ---- Argon2 G (RFC 9106 section 3.5) ------------------------------------------------------- */

/* Section 3.6: a + b + 2 * lo32(a) * lo32(b).  pmuludq multiplies exactly the low halves. */
ARGONISHCHE_INLINE __m128i simd128_blamka(__m128i a, __m128i b) {
    const __m128i product = _mm_mul_epu32(a, b);
    return _mm_add_epi64(_mm_add_epi64(a, b), _mm_add_epi64(product, product));
}

/* G runs P on two matrices at a time, x[0..7] and x[8..15]: one P is a chain of dependent
 * multiplies that the out-of-order core cannot look far enough ahead to overlap with the next P
 * by itself.  Four at a time spill too much with sixteen registers.
 *
 * GB (section 3.6) on the four quads of two matrices, one step across all four before the next,
 * so that the instruction order itself interleaves the four independent chains.  A quad is a
 * column pair of one matrix: rows a, b, c, d are 0, 2, 4 and 6 vectors on from its first. */
ARGONISHCHE_INLINE void simd128_argon2_gb_2x(__m128i x[16]) {
    enum { a = 0, b = 2, c = 4, d = 6 };
    __m128i *const v[4] = {x, x + 1, x + 8, x + 9};
    for (int q = 0; q < 4; q++) v[q][a] = simd128_blamka(v[q][a], v[q][b]);
    for (int q = 0; q < 4; q++) v[q][d] = simd128_rotr32(_mm_xor_si128(v[q][d], v[q][a]));
    for (int q = 0; q < 4; q++) v[q][c] = simd128_blamka(v[q][c], v[q][d]);
    for (int q = 0; q < 4; q++) v[q][b] = simd128_rotr24(_mm_xor_si128(v[q][b], v[q][c]));
    for (int q = 0; q < 4; q++) v[q][a] = simd128_blamka(v[q][a], v[q][b]);
    for (int q = 0; q < 4; q++) v[q][d] = simd128_rotr16(_mm_xor_si128(v[q][d], v[q][a]));
    for (int q = 0; q < 4; q++) v[q][c] = simd128_blamka(v[q][c], v[q][d]);
    for (int q = 0; q < 4; q++) v[q][b] = simd128_rotr63(_mm_xor_si128(v[q][b], v[q][c]));
}

/* The permutation P (section 3.6) on two matrices at once. */
ARGONISHCHE_INLINE void simd128_argon2_p_2x(__m128i x[16]) {
    simd128_argon2_gb_2x(x);
    simd128_diagonalize(x);
    simd128_diagonalize(x + 8);
    simd128_argon2_gb_2x(x);
    simd128_undiagonalize(x);
    simd128_undiagonalize(x + 8);
}

/* Section 3.5: R = X ^ Y; Q = P on each row of R; Z = P on each column of Q; the result is
 * Z ^ R, and also ^ the old block for version 0x13 after the first pass.  As 64 16-byte
 * registers R_0..R_63, row i is R_8i..R_8i+7 and column j is R_j, R_j+8, .., R_j+56, and each
 * is one matrix in the layout above.  `next` itself holds R (^ its old value) between the two
 * halves, so only Q needs a buffer. */
static void simd128_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                      const argonishche_block *ref, int xor_into_next) {
    const __m128i *x_in = (const __m128i *)prev->v, *y_in = (const __m128i *)ref->v;
    __m128i *out = (__m128i *)next->v;
    _Alignas(64) __m128i q[64];

    /* The reference block is usually far away in memory (prev was just written).  Asking for
     * all sixteen lines now overlaps their misses instead of taking one per pair of rows. */
    for (int line = 0; line < ARGONISHCHE_BLOCK_BYTES / 64; line++)
        _mm_prefetch((const char *)ref + 64 * line, _MM_HINT_T0);

    for (int row = 0; row < 8; row += 2) {
        __m128i x[16];
        for (int k = 0; k < 16; k++) {
            const int i = 8 * row + k;
            x[k] = _mm_xor_si128(_mm_load_si128(x_in + i), _mm_load_si128(y_in + i));
            _mm_store_si128(out + i, xor_into_next
                                         ? _mm_xor_si128(x[k], _mm_load_si128(out + i))
                                         : x[k]);
        }
        simd128_argon2_p_2x(x);
        for (int k = 0; k < 16; k++) q[8 * row + k] = x[k];
    }
    for (int column = 0; column < 8; column += 2) {
        __m128i x[16];
        for (int k = 0; k < 16; k++) x[k] = q[column + k / 8 + 8 * (k % 8)];
        simd128_argon2_p_2x(x);
        for (int k = 0; k < 16; k++) {
            const int i = column + k / 8 + 8 * (k % 8);
            _mm_store_si128(out + i, _mm_xor_si128(x[k], _mm_load_si128(out + i)));
        }
    }
}

#endif /* ARGONISHCHE_SIMD128_H */
