/*
 * avx512.c - the avx512 backend: Argon2 G (RFC 9106 section 3.5) on 512-bit vectors and
 * BLAKE2b F (RFC 7693 section 3.2) on 256-bit rows, with AVX-512 F and VL.  Written from the
 * RFCs for this project.
 *
 * What AVX-512 adds to the 128-bit kernels: 32 vector registers, so Argon2's whole 1 KiB block
 * (16 zmm), R = X ^ Y and the working copy stay in registers through both halves of G; vprorq,
 * a rotation in one instruction; and vpternlogq, any function of three inputs (a three-way XOR)
 * in one.
 *
 * Both algorithms mix sixteen 64-bit words v0..v15 seen as a 4x4 matrix: its four columns,
 * GB(v0, v4, v8, v12) .. GB(v3, v7, v11, v15), then its four diagonals, GB(v0, v5, v10, v15),
 * GB(v1, v6, v11, v12), GB(v2, v7, v8, v13), GB(v3, v4, v9, v14).  With the matrix rows
 * a = (v0..v3), b, c, d as vector lanes, the columns are lane-wise operations; rotating rows a,
 * c and d (not b, which G computes last) lines the diagonals up as columns.
 *
 * Argon2 has sixteen independent P's per block, so its kernel is limited by throughput; BLAKE2b
 * is one chain of dependent operations, limited by latency.  The two are tuned accordingly.
 */
#include <immintrin.h>

#include "argonishche_constants.h"
#include "argonishche_target.h"

/* Everything up to ARGONISHCHE_TARGET_END is compiled for the descriptor's features (AVX, AVX2,
 * AVX-512 F and VL: the build makes the target from them); the exported accessor after it is
 * baseline x86-64, so importing the module is safe on any CPU (kernel header, rule 1). */
ARGONISHCHE_TARGET_BEGIN

/* The core's AVX2 message loads (256-bit operations only, see avx512_blake2b_g); after BEGIN,
 * so that they are compiled for this file's target. */
#include "argonishche_blake2b_avx2.h"

/* ---- BLAKE2b F (RFC 7693 section 3.2): one 4-word matrix row per ymm register -------------- */

/* BLAKE2b's speed is the latency of its chain a -> d -> c -> b -> a, 12 dependent steps per G
 * at best, and no 512-bit operation may sit beside it (see avx512_blake2b_g).  The twelve rounds
 * are unrolled: measurably faster than a loop of rounds. */

/* An empty asm that claims to change x, so the compiler must compute x as written: G adds a
 * message word and b to a, and b is the last link of the chain a -> d -> c -> b, so a + m must
 * be formed before b arrives.  GCC would otherwise reassociate to (b + m) + a, two additions
 * after b instead of one. */
ARGONISHCHE_INLINE __m256i avx512_as_written(__m256i x) {
    __asm__("" : "+v"(x));
    return x;
}

/* The mixing function G (section 3.1) on all four columns (or diagonals) at once; x and y hold
 * each lane's two message words.  The rotation by 32 is vpshufd, the others an XOR and a vprorq:
 * faster where vprorq is fast than splitting each rotation over G's two inputs in a vpternlogq
 * (one step shorter where vprorq is slow, but twice the uops).  Only 256-bit operations: on some
 * cores, 512-bit ones in flight take a vector port away from this chain. */
ARGONISHCHE_INLINE void avx512_blake2b_g(__m256i *a, __m256i *b, __m256i *c, __m256i *d, __m256i x,
                                    __m256i y) {
    *a = _mm256_add_epi64(avx512_as_written(_mm256_add_epi64(*a, x)), *b);
    *d = _mm256_shuffle_epi32(_mm256_xor_si256(*d, *a), _MM_SHUFFLE(2, 3, 0, 1));
    *c = _mm256_add_epi64(*c, *d);
    *b = _mm256_ror_epi64(_mm256_xor_si256(*b, *c), 24);
    *a = _mm256_add_epi64(avx512_as_written(_mm256_add_epi64(*a, y)), *b);
    *d = _mm256_ror_epi64(_mm256_xor_si256(*d, *a), 16);
    *c = _mm256_add_epi64(*c, *d);
    *b = _mm256_ror_epi64(_mm256_xor_si256(*b, *c), 63);
}

/* One round: G on the columns, then on the diagonals.  Column G_i takes m[s[2i]] first and
 * m[s[2i+1]] second; after the rotation, lane 0 of row b holds v4, so the lanes hold the
 * diagonals G_7, G_4, G_5, G_6.  Diagonals as columns: a = (v3, v0, v1, v2), c = (v9, v10, v11,
 * v8), d = (v14, v15, v12, v13); row b, computed last, stays put, so these run while b is
 * still being computed (valignq and vshufi64x2 are quicker than vpermq).  The empty asm
 * on `block` makes each round load its own words: GCC would otherwise keep rounds 10 and 11's
 * (rounds 0 and 1's again) alive across the rounds and spill them. */
#define AVX512_BLAKE2B_ROUND(r)                                                                \
    do {                                                                                       \
        const uint8_t *s = argonishche_blake2b_sigma[r];                                       \
        __asm__("" : "+r"(block));                                                             \
        avx512_blake2b_g(&a, &b, &c, &d,                                                       \
                         argonishche_blake2b_avx2_message(block, s[0], s[2], s[4], s[6]),      \
                         argonishche_blake2b_avx2_message(block, s[1], s[3], s[5], s[7]));     \
        a = _mm256_alignr_epi64(a, a, 3);                                                      \
        c = _mm256_alignr_epi64(c, c, 1);                                                      \
        d = _mm256_shuffle_i64x2(d, d, 1);                                                     \
        avx512_blake2b_g(&a, &b, &c, &d,                                                       \
                         argonishche_blake2b_avx2_message(block, s[14], s[8], s[10], s[12]),   \
                         argonishche_blake2b_avx2_message(block, s[15], s[9], s[11], s[13]));  \
        a = _mm256_alignr_epi64(a, a, 1);                                                      \
        c = _mm256_alignr_epi64(c, c, 3);                                                      \
        d = _mm256_shuffle_i64x2(d, d, 1);                                                     \
    } while (0)

/* h stays in registers across a run of blocks: the core passes several blocks only with the
 * same increment and no flags (see argonishche_kernel.h). */
static void avx512_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                    size_t nblocks, uint64_t increment, uint64_t final_flag,
                                    uint64_t last_node_flag) {
    const __m256i iv_lo = _mm256_loadu_si256((const __m256i *)argonishche_blake2b_iv);
    const __m256i iv_hi = _mm256_loadu_si256((const __m256i *)argonishche_blake2b_iv + 1);
    __m256i h_lo = _mm256_loadu_si256((const __m256i *)h);
    __m256i h_hi = _mm256_loadu_si256((const __m256i *)h + 1);
    uint64_t t0 = t[0], t1 = t[1];

    for (; nblocks > 0; nblocks--, blocks += ARGONISHCHE_BLAKE2B_BLOCK_BYTES) {
        const uint8_t *block = blocks;
        t0 += increment;
        t1 += (t0 < increment);
        /* v = h || IV, then v12, v13 ^= t, v14 ^= f0 and v15 ^= f1. */
        __m256i a = h_lo, b = h_hi, c = iv_lo;
        __m256i d = _mm256_xor_si256(iv_hi, _mm256_setr_epi64x((int64_t)t0, (int64_t)t1,
                                                                (int64_t)final_flag,
                                                                (int64_t)last_node_flag));
        AVX512_BLAKE2B_ROUND(0);
        AVX512_BLAKE2B_ROUND(1);
        AVX512_BLAKE2B_ROUND(2);
        AVX512_BLAKE2B_ROUND(3);
        AVX512_BLAKE2B_ROUND(4);
        AVX512_BLAKE2B_ROUND(5);
        AVX512_BLAKE2B_ROUND(6);
        AVX512_BLAKE2B_ROUND(7);
        AVX512_BLAKE2B_ROUND(8);
        AVX512_BLAKE2B_ROUND(9);
        AVX512_BLAKE2B_ROUND(10);
        AVX512_BLAKE2B_ROUND(11);
        /* h ^= v[0..7] ^ v[8..15]: vpternlogq's 0x96 is a three-way XOR. */
        h_lo = _mm256_ternarylogic_epi64(h_lo, a, c, 0x96);
        h_hi = _mm256_ternarylogic_epi64(h_hi, b, d, 0x96);
    }
    _mm256_storeu_si256((__m256i *)h, h_lo);
    _mm256_storeu_si256((__m256i *)h + 1, h_hi);
    t[0] = t0;
    t[1] = t1;
}

/* ---- Argon2 G (RFC 9106 section 3.5) ------------------------------------------------------- */

/*
 * The block as RFC 9106 sees it is an 8x8 matrix of 16-byte registers ("cells"); row i is words
 * 16i..16i+15, column j is words 2j, 2j+1 of every row.  G applies P to each row, then to each
 * column, and P mixes its 16 words as the 4x4 matrix above, cell k holding v2k, v2k+1.
 *
 * In memory, zmm n holds words 8n..8n+7: half a row, four cells.  Each pass uses its own layout
 * of the 16 zmm registers, both chosen so that the 16 registers form four independent groups of
 * rows a, b, c, d: one step of GB is then four independent chains of dependent operations,
 * which the core overlaps, and the diagonal rotations need few and cheap shuffles.
 *
 * Row pass ("row layout"): register group g holds rows 2g and 2g+1 of the block, one P in each
 * 256-bit half: a = (v0..v3 of row 2g | v0..v3 of row 2g+1), b = v4..v7 of both, and so on.
 * Building it from memory order costs one vshufi64x2 per register; the diagonal rotations turn
 * the four words within each 256-bit half (vpermq).
 *
 * Column pass ("column layout"): the memory order itself.  Zmm registers holding cell row k of
 * columns 0..3 are, for those four columns at once, what a 16-byte register holds in the
 * 128-bit kernels: matrix row a is cell rows 0 and 1, b is 2 and 3, c 4 and 5, d 6 and 7.  Each
 * P needs two such quads (cells holding v0, v1 and cells holding v2, v3), and rotating a matrix
 * row of two cells by one word takes vshufpd, which stays within 128-bit lanes.
 */

/* Section 3.6: a + b + 2 * lo32(a) * lo32(b); vpmuludq multiplies exactly the low halves. */
ARGONISHCHE_INLINE __m512i avx512_blamka(__m512i a, __m512i b) {
    const __m512i product = _mm512_mul_epu32(a, b);
    return _mm512_add_epi64(_mm512_add_epi64(a, b), _mm512_add_epi64(product, product));
}

/* x = ror(x ^ y, n): one vprorq for every rotation.  Argon2 is limited by throughput, not by
 * latency, and the split rotation that helps BLAKE2b above costs three instructions instead of
 * one; vpshufd or vpshufb in place of vprorq measured no faster either. */
#define AVX512_XOR_ROR_512(x, y, n) ((x) = _mm512_ror_epi64(_mm512_xor_si512((x), (y)), (n)))

/* GB (section 3.6) on four independent quads v[4q..4q+3] = (a, b, c, d), q = 0..3: one step
 * across all four before the next, so that the instruction order interleaves the chains. */
ARGONISHCHE_INLINE void avx512_argon2_gb(__m512i v[16]) {
    enum { a = 0, b = 1, c = 2, d = 3 };
    for (int q = 0; q < 16; q += 4) v[q + a] = avx512_blamka(v[q + a], v[q + b]);
    for (int q = 0; q < 16; q += 4) AVX512_XOR_ROR_512(v[q + d], v[q + a], 32);
    for (int q = 0; q < 16; q += 4) v[q + c] = avx512_blamka(v[q + c], v[q + d]);
    for (int q = 0; q < 16; q += 4) AVX512_XOR_ROR_512(v[q + b], v[q + c], 24);
    for (int q = 0; q < 16; q += 4) v[q + a] = avx512_blamka(v[q + a], v[q + b]);
    for (int q = 0; q < 16; q += 4) AVX512_XOR_ROR_512(v[q + d], v[q + a], 16);
    for (int q = 0; q < 16; q += 4) v[q + c] = avx512_blamka(v[q + c], v[q + d]);
    for (int q = 0; q < 16; q += 4) AVX512_XOR_ROR_512(v[q + b], v[q + c], 63);
}

/* Row layout: rotate a right by one word, c left by one and d by two, within each 256-bit half
 * (one P), so that lane k holds the diagonal through b's word k (as in BLAKE2b above). */
ARGONISHCHE_INLINE void avx512_rows_diagonalize(__m512i v[16]) {
    for (int q = 0; q < 16; q += 4) {
        v[q + 0] = _mm512_permutex_epi64(v[q + 0], _MM_SHUFFLE(2, 1, 0, 3));
        v[q + 2] = _mm512_permutex_epi64(v[q + 2], _MM_SHUFFLE(0, 3, 2, 1));
        v[q + 3] = _mm512_permutex_epi64(v[q + 3], _MM_SHUFFLE(1, 0, 3, 2));
    }
}

ARGONISHCHE_INLINE void avx512_rows_undiagonalize(__m512i v[16]) {
    for (int q = 0; q < 16; q += 4) {
        v[q + 0] = _mm512_permutex_epi64(v[q + 0], _MM_SHUFFLE(0, 3, 2, 1));
        v[q + 2] = _mm512_permutex_epi64(v[q + 2], _MM_SHUFFLE(2, 1, 0, 3));
        v[q + 3] = _mm512_permutex_epi64(v[q + 3], _MM_SHUFFLE(1, 0, 3, 2));
    }
}

/* (x[1], y[0]) in every 128-bit lane: the middle two words of x, y read as four words. */
ARGONISHCHE_INLINE __m512i avx512_high_low(__m512i x, __m512i y) {
    return _mm512_castpd_si512(_mm512_shuffle_pd(_mm512_castsi512_pd(x), _mm512_castsi512_pd(y),
                                                 0x55));
}

/* Column layout: quads v[8s..8s+3] (cells holding v0, v1 | v4, v5 | v8, v9 | v12, v13) and
 * v[8s+4..8s+7] (v2, v3 | v6, v7 | ...) are one set of four P's, s = 0, 1.  The same rotation
 * as above, with each matrix row split over two registers:
 *   a: (v3, v0), (v1, v2)    c: (v9, v10), (v11, v8)    d: (v14, v15), (v12, v13). */
ARGONISHCHE_INLINE void avx512_columns_diagonalize(__m512i v[16]) {
    for (int s = 0; s < 16; s += 8) {
        const __m512i a0 = v[s + 0], a1 = v[s + 4], c0 = v[s + 2], c1 = v[s + 6], d0 = v[s + 3];
        v[s + 0] = avx512_high_low(a1, a0);
        v[s + 4] = avx512_high_low(a0, a1);
        v[s + 2] = avx512_high_low(c0, c1);
        v[s + 6] = avx512_high_low(c1, c0);
        v[s + 3] = v[s + 7];
        v[s + 7] = d0;
    }
}

ARGONISHCHE_INLINE void avx512_columns_undiagonalize(__m512i v[16]) {
    for (int s = 0; s < 16; s += 8) {
        const __m512i a0 = v[s + 0], a1 = v[s + 4], c0 = v[s + 2], c1 = v[s + 6], d0 = v[s + 3];
        v[s + 0] = avx512_high_low(a0, a1);
        v[s + 4] = avx512_high_low(a1, a0);
        v[s + 2] = avx512_high_low(c1, c0);
        v[s + 6] = avx512_high_low(c0, c1);
        v[s + 3] = v[s + 7];
        v[s + 7] = d0;
    }
}

/* Where zmm n of the block (words 8n..8n+7: cell row n / 2, columns 4 (n % 2) .. +3) sits in
 * the column layout: set n % 2, quad (n / 2) % 2, position n / 4 within the quad. */
ARGONISHCHE_INLINE int avx512_column_slot(int n) {
    return 8 * (n % 2) + 4 * ((n / 2) % 2) + n / 4;
}

/* Section 3.5: R = X ^ Y; Q = P on each row of R; Z = P on each column of Q; the result is
 * Z ^ R, and also ^ the old block for version 0x13 after the first pass.  R, Q and Z stay in
 * registers (the compiler spills one of the 48 values), so the only memory traffic is one load
 * of each input and one store of the result: storing R into `next` and reading it back at the
 * end, as the 128-bit kernels do, measured slower. */
static void avx512_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                     const argonishche_block *ref, int xor_into_next) {
    const __m512i *x = (const __m512i *)prev->v, *y = (const __m512i *)ref->v;
    __m512i *out = (__m512i *)next->v;
    __m512i r[16], q[16], z[16];

    for (int n = 0; n < 16; n++)
        r[n] = _mm512_xor_si512(_mm512_load_si512(x + n), _mm512_load_si512(y + n));

    /* Memory order -> row layout.  Rows 2g and 2g+1 are zmm 4g, 4g+1 and 4g+2, 4g+3; 0x44 takes
     * the low 256 bits of both sources, 0xEE the high. */
    for (int g = 0; g < 4; g++) {
        q[4 * g + 0] = _mm512_shuffle_i64x2(r[4 * g + 0], r[4 * g + 2], 0x44);
        q[4 * g + 1] = _mm512_shuffle_i64x2(r[4 * g + 0], r[4 * g + 2], 0xEE);
        q[4 * g + 2] = _mm512_shuffle_i64x2(r[4 * g + 1], r[4 * g + 3], 0x44);
        q[4 * g + 3] = _mm512_shuffle_i64x2(r[4 * g + 1], r[4 * g + 3], 0xEE);
    }
    avx512_argon2_gb(q);
    avx512_rows_diagonalize(q);
    avx512_argon2_gb(q);
    avx512_rows_undiagonalize(q);

    /* Row layout -> memory order (the inverse shuffles), placed at column-layout slots. */
    for (int g = 0; g < 4; g++) {
        z[avx512_column_slot(4 * g + 0)] = _mm512_shuffle_i64x2(q[4 * g + 0], q[4 * g + 1], 0x44);
        z[avx512_column_slot(4 * g + 2)] = _mm512_shuffle_i64x2(q[4 * g + 0], q[4 * g + 1], 0xEE);
        z[avx512_column_slot(4 * g + 1)] = _mm512_shuffle_i64x2(q[4 * g + 2], q[4 * g + 3], 0x44);
        z[avx512_column_slot(4 * g + 3)] = _mm512_shuffle_i64x2(q[4 * g + 2], q[4 * g + 3], 0xEE);
    }
    avx512_argon2_gb(z);
    avx512_columns_diagonalize(z);
    avx512_argon2_gb(z);
    avx512_columns_undiagonalize(z);

    /* Z ^ R (^ the old block): vpternlogq's 0x96 is a three-way XOR. */
    if (xor_into_next) {
        for (int n = 0; n < 16; n++)
            _mm512_store_si512(out + n, _mm512_ternarylogic_epi64(
                                            z[avx512_column_slot(n)], r[n],
                                            _mm512_load_si512(out + n), 0x96));
    } else {
        for (int n = 0; n < 16; n++)
            _mm512_store_si512(out + n, _mm512_xor_si512(z[avx512_column_slot(n)], r[n]));
    }
}

ARGONISHCHE_TARGET_END

ARGONISHCHE_DEFINE_KERNELS(avx512_blake2b_compress, avx512_argon2_fill_block)
