/*
 * avx2.c - AVX2 kernels: Argon2's compression G (RFC 9106 sections 3.5 and 3.6) and BLAKE2b's
 * compression F (RFC 7693 section 3.2) on 256-bit vectors of four 64-bit words.
 *
 * AVX2 is enabled for the kernels only (ARGONISHCHE_TARGET_BEGIN/END, with the target the build
 * makes from the backend's cpu_features); the exported table accessor at the end of the file is
 * compiled for baseline x86-64, so importing the module and asking for its table is safe on any
 * CPU (kernel contract, rule 1).  The core calls these kernels only after
 * its CPU check has seen AVX2 and OS support for the ymm state.
 *
 * Both kernels are bound by the latency of their dependency chains rather than by instruction
 * count, so the layouts below keep lane-crossing shuffles (vperm2i128, vpermq: slower than
 * in-lane ones) off those chains and give the out-of-order core independent chains to overlap.
 */
#include <immintrin.h>

#include "argonishche_constants.h"
#include "argonishche_target.h"

ARGONISHCHE_TARGET_BEGIN

/* After BEGIN, so that its helpers are compiled for AVX2 like the kernels that inline them. */
#include "argonishche_blake2b_avx2.h"

/* ---- 64-bit lane rotations (right rotations, as both RFCs write them) ------------------------ */

/* By 32: swap the two 32-bit halves of each word, one in-lane dword shuffle. */
ARGONISHCHE_INLINE __m256i rotr32(__m256i x) {
    return _mm256_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1));
}

/* By 24 and 16: whole-byte rotations, one in-lane byte shuffle each.  Result byte i of a word is
 * source byte (i + 3) mod 8 (resp. (i + 2) mod 8). */
ARGONISHCHE_INLINE __m256i rotr24(__m256i x) {
    const __m256i by_3_bytes = _mm256_setr_epi8(
        3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10,
        3, 4, 5, 6, 7, 0, 1, 2, 11, 12, 13, 14, 15, 8, 9, 10);
    return _mm256_shuffle_epi8(x, by_3_bytes);
}

ARGONISHCHE_INLINE __m256i rotr16(__m256i x) {
    const __m256i by_2_bytes = _mm256_setr_epi8(
        2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9,
        2, 3, 4, 5, 6, 7, 0, 1, 10, 11, 12, 13, 14, 15, 8, 9);
    return _mm256_shuffle_epi8(x, by_2_bytes);
}

/* By 63, i.e. left by one: x + x is the shift, and AVX2 has no 64-bit rotate instruction. */
ARGONISHCHE_INLINE __m256i rotr63(__m256i x) {
    return _mm256_xor_si256(_mm256_srli_epi64(x, 63), _mm256_add_epi64(x, x));
}

/* ================================================================================================
 * Argon2 G (RFC 9106 section 3.5)
 *
 * R = prev XOR ref is 8x8 16-byte registers R_0..R_63.  P is applied to each row (R_8i..R_8i+7)
 * and then to each column (R_j, R_j+8, ..., R_j+56).  P's input S_0..S_7 is read as sixteen words
 * v0..v15 with S_k = (v_2k, v_2k+1), and P runs GB on its columns (v0,v4,v8,v12)... and then on its
 * diagonals (v0,v5,v10,v15)... like BLAKE2b's round.
 *
 * One layout serves both phases: a ymm register holds S_k of one P input in its low 128-bit lane
 * and S_k of a second, independent P input in its high lane.  Eight registers y0..y7 (a "pair")
 * then hold two whole P inputs, GB on (y0,y2,y4,y6) and (y1,y3,y5,y7) is the column step of both,
 * and the diagonal step needs only in-lane word moves (vpalignr) and a renaming of y4/y5: no lane
 * crossing on the GB chains.  The lane crossing is paid where it is off those chains instead:
 *   - row phase: rows 2p and 2p+1 form pair p; their natural 256-bit loads are regrouped with
 *     vperm2i128 (one per register), and P's results stored to a stack block in that paired form;
 *   - column phase: columns 2c and 2c+1 form pair c, so S_k of both is exactly the natural quad
 *     (row k, words 4c..4c+3) of the output; it is gathered from the paired stack block with one
 *     128-bit load and one 128-bit insert-load per register, and stored straight to `next`.
 *
 * One P is two GBs of eight dependent steps each (a blamka's multiply and two additions, or
 * an XOR and a rotation), a long chain, while a pair offers only two chains.  Two pairs are
 * therefore run together, step by step, so that four chains are always in flight: 16 state
 * registers plus temporaries exceed the 16 ymm registers, but the few spills cost less than the
 * idle cycles they remove.
 * ============================================================================================== */

/* GB's addition (RFC 9106 section 3.6): x + y + 2 * lo32(x) * lo32(y). */
ARGONISHCHE_INLINE __m256i blamka(__m256i x, __m256i y) {
    const __m256i product = _mm256_mul_epu32(x, y);
    return _mm256_add_epi64(_mm256_add_epi64(x, y), _mm256_add_epi64(product, product));
}

/* The eight steps of GB (RFC 9106 section 3.6), each on one register quadruple (a, b, c, d):
 * four independent GB applications, one per 64-bit lane. */
#define GB_STEP1(a, b, c, d) a = blamka(a, b)
#define GB_STEP2(a, b, c, d) d = rotr32(_mm256_xor_si256(d, a))
#define GB_STEP3(a, b, c, d) c = blamka(c, d)
#define GB_STEP4(a, b, c, d) b = rotr24(_mm256_xor_si256(b, c))
#define GB_STEP5(a, b, c, d) a = blamka(a, b)
#define GB_STEP6(a, b, c, d) d = rotr16(_mm256_xor_si256(d, a))
#define GB_STEP7(a, b, c, d) c = blamka(c, d)
#define GB_STEP8(a, b, c, d) b = rotr63(_mm256_xor_si256(b, c))

/* One GB step on four quadruples, interleaved in program order. */
#define GB_STEP_X4(step, q0, q1, q2, q3) \
    do {                                 \
        step q0;                         \
        step q1;                         \
        step q2;                         \
        step q3;                         \
    } while (0)

/* GB on four quadruples: the whole of GB, step by step across all four chains. */
#define ARGON2_GB_X4(q0, q1, q2, q3)                  \
    do {                                              \
        GB_STEP_X4(GB_STEP1, q0, q1, q2, q3);         \
        GB_STEP_X4(GB_STEP2, q0, q1, q2, q3);         \
        GB_STEP_X4(GB_STEP3, q0, q1, q2, q3);         \
        GB_STEP_X4(GB_STEP4, q0, q1, q2, q3);         \
        GB_STEP_X4(GB_STEP5, q0, q1, q2, q3);         \
        GB_STEP_X4(GB_STEP6, q0, q1, q2, q3);         \
        GB_STEP_X4(GB_STEP7, q0, q1, q2, q3);         \
        GB_STEP_X4(GB_STEP8, q0, q1, q2, q3);         \
    } while (0)

/*
 * P on two pairs y[0..7] and z[0..7] (four P inputs; see the layout note above).
 * Diagonal step of a pair, low lane (the high lane is the same, one input over), writing hi(x)
 * and lo(x) for the high and low word of a register's lane:
 *  a = y0 = (v0,v1)  b = (v5,v6) = hi(y2),lo(y3)  c = y5 = (v10,v11)  d = (v15,v12) = hi(y7),lo(y6)
 *  a = y1 = (v2,v3)  b = (v7,v4) = hi(y3),lo(y2)  c = y4 = (v8,v9)    d = (v13,v14) = hi(y6),lo(y7)
 * and _mm256_alignr_epi8(x, w, 8) is exactly (hi(w), lo(x)) in each lane.
 */
ARGONISHCHE_INLINE void argon2_permute_two_pairs(__m256i y[8], __m256i z[8]) {
    __m256i y0 = y[0], y1 = y[1], y2 = y[2], y3 = y[3], y4 = y[4], y5 = y[5], y6 = y[6],
            y7 = y[7];
    __m256i z0 = z[0], z1 = z[1], z2 = z[2], z3 = z[3], z4 = z[4], z5 = z[5], z6 = z[6],
            z7 = z[7];

    /* Column step. */
    ARGON2_GB_X4((y0, y2, y4, y6), (y1, y3, y5, y7), (z0, z2, z4, z6), (z1, z3, z5, z7));

    /* Diagonal step. */
    __m256i yb0 = _mm256_alignr_epi8(y3, y2, 8), yb1 = _mm256_alignr_epi8(y2, y3, 8);
    __m256i yd0 = _mm256_alignr_epi8(y6, y7, 8), yd1 = _mm256_alignr_epi8(y7, y6, 8);
    __m256i zb0 = _mm256_alignr_epi8(z3, z2, 8), zb1 = _mm256_alignr_epi8(z2, z3, 8);
    __m256i zd0 = _mm256_alignr_epi8(z6, z7, 8), zd1 = _mm256_alignr_epi8(z7, z6, 8);
    ARGON2_GB_X4((y0, yb0, y5, yd0), (y1, yb1, y4, yd1), (z0, zb0, z5, zd0), (z1, zb1, z4, zd1));

    y[0] = y0;
    y[1] = y1;
    y[2] = _mm256_alignr_epi8(yb0, yb1, 8);
    y[3] = _mm256_alignr_epi8(yb1, yb0, 8);
    y[4] = y4;
    y[5] = y5;
    y[6] = _mm256_alignr_epi8(yd1, yd0, 8);
    y[7] = _mm256_alignr_epi8(yd0, yd1, 8);
    z[0] = z0;
    z[1] = z1;
    z[2] = _mm256_alignr_epi8(zb0, zb1, 8);
    z[3] = _mm256_alignr_epi8(zb1, zb0, 8);
    z[4] = z4;
    z[5] = z5;
    z[6] = _mm256_alignr_epi8(zd1, zd0, 8);
    z[7] = _mm256_alignr_epi8(zd0, zd1, 8);
}

/* Row pair p (rows 2p and 2p+1) of R = prev ^ ref, in paired form. */
ARGONISHCHE_INLINE void argon2_load_row_pair(__m256i y[8], const __m256i *prev, const __m256i *ref,
                                        int p) {
    for (int q = 0; q < 4; q++) {
        /* Quad q of a row holds its 16-byte registers 2q and 2q+1. */
        const int quad_a = 8 * p + q, quad_b = 8 * p + 4 + q;
        __m256i a = _mm256_xor_si256(_mm256_load_si256(prev + quad_a),
                                     _mm256_load_si256(ref + quad_a));
        __m256i b = _mm256_xor_si256(_mm256_load_si256(prev + quad_b),
                                     _mm256_load_si256(ref + quad_b));
        y[2 * q] = _mm256_permute2x128_si256(a, b, 0x20);
        y[2 * q + 1] = _mm256_permute2x128_si256(a, b, 0x31);
    }
}

/* Column pair c (columns 2c and 2c+1) of the row phase's output. */
ARGONISHCHE_INLINE void argon2_load_column_pair(__m256i y[8], const __m256i *rows, int c) {
    for (int k = 0; k < 8; k++) {
        /* Row k is lane k % 2 of row pair k / 2; take its 16-byte registers 2c and 2c+1. */
        const __m128i *lanes = (const __m128i *)(rows + 8 * (k / 2) + 2 * c) + k % 2;
        y[k] = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_load_si128(lanes)),
                                       _mm_load_si128(lanes + 2), 1);
    }
}

/* next's quad c of every row = P's output ^ R, ^ the old next for version 0x13 after pass 0.
 * R is reloaded from prev and ref, which are still in L1, rather than kept in registers: that is
 * right because the kernel contract guarantees that next aliases neither of them. */
ARGONISHCHE_INLINE void argon2_store_column_pair(__m256i *next, const __m256i y[8],
                                            const __m256i *prev, const __m256i *ref, int c,
                                            int xor_into_next) {
    for (int k = 0; k < 8; k++) {
        const int quad = 4 * k + c;
        __m256i out = _mm256_xor_si256(
            y[k], _mm256_xor_si256(_mm256_load_si256(prev + quad), _mm256_load_si256(ref + quad)));
        if (xor_into_next) out = _mm256_xor_si256(out, _mm256_load_si256(next + quad));
        _mm256_store_si256(next + quad, out);
    }
}

ARGONISHCHE_INLINE void argon2_fill(argonishche_block *next_block, const argonishche_block *prev_block,
                               const argonishche_block *ref_block, int xor_into_next) {
    /* Rows after P, in paired form: 1 KiB that stays in L1 between the two phases. */
    __m256i rows[ARGONISHCHE_BLOCK_BYTES / sizeof(__m256i)];
    __m256i *next = (__m256i *)next_block->v;
    const __m256i *prev = (const __m256i *)prev_block->v, *ref = (const __m256i *)ref_block->v;

    for (int p = 0; p < 4; p += 2) {
        __m256i y[8], z[8];
        argon2_load_row_pair(y, prev, ref, p);
        argon2_load_row_pair(z, prev, ref, p + 1);
        argon2_permute_two_pairs(y, z);
        for (int k = 0; k < 8; k++) {
            _mm256_store_si256(rows + 8 * p + k, y[k]);
            _mm256_store_si256(rows + 8 * (p + 1) + k, z[k]);
        }
    }
    for (int c = 0; c < 4; c += 2) {
        __m256i y[8], z[8];
        argon2_load_column_pair(y, rows, c);
        argon2_load_column_pair(z, rows, c + 1);
        argon2_permute_two_pairs(y, z);
        argon2_store_column_pair(next, y, prev, ref, c, xor_into_next);
        argon2_store_column_pair(next, z, prev, ref, c + 1, xor_into_next);
    }
}

/* GCC's pre-allocation scheduler, off by default on x86, interleaves the four chains with the
 * loads and stores around them while watching register pressure: measurably fewer cycles per
 * block.  Clang has no such attribute and does not need one. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("schedule-insns", "sched-pressure")))
#endif
static void avx2_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                   const argonishche_block *ref, int xor_into_next) {
    /* Two copies, so the per-store test is resolved once per block. */
    if (xor_into_next)
        argon2_fill(next, prev, ref, 1);
    else
        argon2_fill(next, prev, ref, 0);
}

/* ================================================================================================
 * BLAKE2b F (RFC 7693 section 3.2)
 *
 * The state v0..v15 is four registers, one row each: a = v0..v3, b = v4..v7, c = v8..v11,
 * d = v12..v15, so the column step of a round is G on all four lanes at once.  For the diagonal
 * step, rows must be rotated against each other; rotating b, as usual, puts a lane-crossing
 * vpermq (the slowest shuffle here) on the critical path (every G ends by producing b and the
 * next begins by adding it).  Rotating a, c and d instead leaves b in place, and each of those
 * is produced early enough in G to be permuted while b is still being computed.  With b fixed,
 * lane i of the diagonal step mixes b's word v(4+i):
 *   lane 0: (v3, v4, v9, v14)  message s14, s15
 *   lane 1: (v0, v5, v10, v15) message s8, s9
 *   lane 2: (v1, v6, v11, v12) message s10, s11
 *   lane 3: (v2, v7, v8, v13)  message s12, s13
 *
 * What is left is G's own chain (four additions, four XORs, the rotations: vpshufd, vpshufb
 * twice, and a shift-add-XOR for 63), 24 times per block: the floor of this layout.
 * ============================================================================================== */

/* a + b + m as (a + m) + b: a is ready long before b, so only one addition sits on the chain
 * through b.  The empty asm hides a + m from GCC, which would otherwise reassociate it into
 * a + (b + m) and put both additions on that chain. */
ARGONISHCHE_INLINE __m256i add_message_then(__m256i a, __m256i m, __m256i b) {
    __m256i a_plus_m = _mm256_add_epi64(a, m);
    __asm__("" : "+x"(a_plus_m));
    return _mm256_add_epi64(a_plus_m, b);
}

/* RFC 7693 section 3.1 on four lanes. */
#define BLAKE2B_G(a, b, c, d, mx, my)                   \
    do {                                                \
        a = add_message_then(a, mx, b);                 \
        d = rotr32(_mm256_xor_si256(d, a));             \
        c = _mm256_add_epi64(c, d);                     \
        b = rotr24(_mm256_xor_si256(b, c));             \
        a = add_message_then(a, my, b);                 \
        d = rotr16(_mm256_xor_si256(d, a));             \
        c = _mm256_add_epi64(c, d);                     \
        b = rotr63(_mm256_xor_si256(b, c));             \
    } while (0)

/* One round (section 3.2, with the schedule of section 2.7).  The empty asm on `block` makes
 * each round load its own message words: left alone, GCC keeps the 16 broadcasts and the vectors
 * rounds 10 and 11 share with rounds 0 and 1 alive across rounds, spills them, and is slower.
 */
#define BLAKE2B_ROUND(r)                                                               \
    do {                                                                               \
        const uint8_t *s = argonishche_blake2b_sigma[r];                               \
        __asm__("" : "+r"(block));                                                     \
        BLAKE2B_G(a, b, c, d,                                                          \
                  argonishche_blake2b_avx2_message(block, s[0], s[2], s[4], s[6]),     \
                  argonishche_blake2b_avx2_message(block, s[1], s[3], s[5], s[7]));    \
        /* Diagonalise by rotating a, c, d (see above): a = (v3,v0,v1,v2),             \
         * c = (v9,v10,v11,v8), d = (v14,v15,v12,v13). */                              \
        a = _mm256_permute4x64_epi64(a, _MM_SHUFFLE(2, 1, 0, 3));                      \
        c = _mm256_permute4x64_epi64(c, _MM_SHUFFLE(0, 3, 2, 1));                      \
        d = _mm256_permute4x64_epi64(d, _MM_SHUFFLE(1, 0, 3, 2));                      \
        BLAKE2B_G(a, b, c, d,                                                          \
                  argonishche_blake2b_avx2_message(block, s[14], s[8], s[10], s[12]),  \
                  argonishche_blake2b_avx2_message(block, s[15], s[9], s[11], s[13])); \
        a = _mm256_permute4x64_epi64(a, _MM_SHUFFLE(0, 3, 2, 1));                      \
        c = _mm256_permute4x64_epi64(c, _MM_SHUFFLE(2, 1, 0, 3));                      \
        d = _mm256_permute4x64_epi64(d, _MM_SHUFFLE(1, 0, 3, 2));                      \
    } while (0)

static void avx2_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                  size_t nblocks, uint64_t increment, uint64_t final_flag,
                                  uint64_t last_node_flag) {
    const __m256i iv_low = _mm256_loadu_si256((const __m256i *)argonishche_blake2b_iv);
    const __m256i iv_high = _mm256_loadu_si256((const __m256i *)(argonishche_blake2b_iv + 4));
    /* h stays in registers across a run of blocks (the contract allows it). */
    __m256i h_low = _mm256_loadu_si256((const __m256i *)h);
    __m256i h_high = _mm256_loadu_si256((const __m256i *)(h + 4));
    uint64_t t0 = t[0], t1 = t[1];

    for (; nblocks > 0; nblocks--, blocks += ARGONISHCHE_BLAKE2B_BLOCK_BYTES) {
        const uint8_t *block = blocks;
        t0 += increment;
        t1 += (t0 < increment);
        __m256i a = h_low, b = h_high, c = iv_low;
        /* v12..v15 ^= t0, t1, f0, f1 (section 3.2). */
        __m256i d = _mm256_xor_si256(
            iv_high, _mm256_set_epi64x((long long)last_node_flag, (long long)final_flag,
                                       (long long)t1, (long long)t0));
        BLAKE2B_ROUND(0);
        BLAKE2B_ROUND(1);
        BLAKE2B_ROUND(2);
        BLAKE2B_ROUND(3);
        BLAKE2B_ROUND(4);
        BLAKE2B_ROUND(5);
        BLAKE2B_ROUND(6);
        BLAKE2B_ROUND(7);
        BLAKE2B_ROUND(8);
        BLAKE2B_ROUND(9);
        BLAKE2B_ROUND(10);
        BLAKE2B_ROUND(11);
        h_low = _mm256_xor_si256(h_low, _mm256_xor_si256(a, c));
        h_high = _mm256_xor_si256(h_high, _mm256_xor_si256(b, d));
    }
    _mm256_storeu_si256((__m256i *)h, h_low);
    _mm256_storeu_si256((__m256i *)(h + 4), h_high);
    t[0] = t0;
    t[1] = t1;
}

ARGONISHCHE_TARGET_END

/* Outside the AVX2 region: callable on any x86-64 CPU. */
ARGONISHCHE_DEFINE_KERNELS(avx2_blake2b_compress, avx2_argon2_fill_block)
