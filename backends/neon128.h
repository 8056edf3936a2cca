/*
 * neon128.h - BLAKE2b F (RFC 7693) and Argon2 G (RFC 9106) on AArch64 Advanced SIMD 128-bit
 * vectors, written once for the neon and neon_sha3 backends.
 *
 * The layout is simd128.h's: both algorithms mix sixteen 64-bit words v0..v15 seen as a 4x4
 * matrix, first its columns, then its diagonals.  A uint64x2_t holds two words, so a matrix is
 * eight vectors x[0..7], two per row:
 *
 *     row a: x[0] = (v0, v1)    x[1] = (v2, v3)
 *     row b: x[2] = (v4, v5)    x[3] = (v6, v7)
 *     row c: x[4] = (v8, v9)    x[5] = (v10, v11)
 *     row d: x[6] = (v12, v13)  x[7] = (v14, v15)
 *
 * so one vector operation works on two columns, and rotating rows a, c, d by whole words
 * (neon128_diagonalize) turns the diagonals into columns for the second half of a round.
 *
 * Every rotation in both algorithms follows a XOR, so the primitive is "rotate right a ^ b": one
 * instruction (XAR) with the SHA3 extension, two or three without.  The including file defines,
 * after ARGONISHCHE_TARGET_BEGIN and before including this:
 *
 *     uint64x2_t neon128_xor_rotr32(uint64x2_t a, uint64x2_t b)    each lane: rotr64(a ^ b, 32)
 *     uint64x2_t neon128_xor_rotr24(uint64x2_t a, uint64x2_t b)    ... by 24
 *     uint64x2_t neon128_xor_rotr16(uint64x2_t a, uint64x2_t b)    ... by 16
 *     uint64x2_t neon128_xor_rotr63(uint64x2_t a, uint64x2_t b)    ... by 63
 *     uint64x2_t neon128_xor3(uint64x2_t a, uint64x2_t b, uint64x2_t c)    a ^ b ^ c
 *
 * and this header defines neon128_blake2b_compress and neon128_argon2_fill_block, which the file
 * names in ARGONISHCHE_DEFINE_KERNELS after ARGONISHCHE_TARGET_END.
 *
 * AArch64 has 32 vector registers, twice x86-64's sixteen, so the two-matrix interleaving of
 * Argon2's P below (taken over from simd128.h) runs without spills.
 */
#ifndef ARGONISHCHE_NEON128_H
#define ARGONISHCHE_NEON128_H

#include <arm_neon.h>

#include "argonishche_constants.h"
#include "argonishche_target.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
/* BLAKE2b's message words are read with byte loads reinterpreted as lanes, which is only the
 * specification's little-endian order on a little-endian target; aarch64_be is untested. */
#error "the neon backends are written for little-endian AArch64"
#endif

/* (a[1], b[0]): the middle two words of a, b read as four consecutive words.  EXT. */
ARGONISHCHE_INLINE uint64x2_t neon128_high_low(uint64x2_t a, uint64x2_t b) {
    return vextq_u64(a, b, 1);
}

/* An empty asm claiming to change x, so that x is computed as written.  G adds a message word
 * and b to a, and b is the end of the chain a -> d -> c -> b: a + m should be formed while b is
 * still on its way.  The compiler may otherwise reassociate to a + (b + m), two additions after
 * b instead of one. */
ARGONISHCHE_INLINE uint64x2_t neon128_as_written(uint64x2_t x) {
    __asm__("" : "+w"(x));
    return x;
}

/* ---- Diagonals as columns ------------------------------------------------------------------ */

/* Rows a (right by one word), c (left by one) and d (by two, a swap of its vectors) move so that
 * each lane holds a diagonal: (v3, v4, v9, v14), (v0, v5, v10, v15) in x[0], x[2], x[4], x[6]
 * and (v1, v6, v11, v12), (v2, v7, v8, v13) in x[1], x[3], x[5], x[7].  Row b, which G finishes
 * last, stays put, so these moves are off the critical path. */
ARGONISHCHE_INLINE void neon128_diagonalize(uint64x2_t x[8]) {
    const uint64x2_t a0 = x[0], a1 = x[1], c0 = x[4], c1 = x[5], d0 = x[6];
    x[0] = neon128_high_low(a1, a0);   /* (v3, v0) */
    x[1] = neon128_high_low(a0, a1);   /* (v1, v2) */
    x[4] = neon128_high_low(c0, c1);   /* (v9, v10) */
    x[5] = neon128_high_low(c1, c0);   /* (v11, v8) */
    x[6] = x[7];                       /* (v14, v15) */
    x[7] = d0;                         /* (v12, v13) */
}

ARGONISHCHE_INLINE void neon128_undiagonalize(uint64x2_t x[8]) {
    const uint64x2_t a0 = x[0], a1 = x[1], c0 = x[4], c1 = x[5], d0 = x[6];
    x[0] = neon128_high_low(a0, a1);   /* (v0, v1) */
    x[1] = neon128_high_low(a1, a0);   /* (v2, v3) */
    x[4] = neon128_high_low(c1, c0);   /* (v8, v9) */
    x[5] = neon128_high_low(c0, c1);   /* (v10, v11) */
    x[6] = x[7];
    x[7] = d0;
}

/* ---- BLAKE2b F (RFC 7693 section 3.2) ------------------------------------------------------ */

/* The mixing function G (section 3.1) on two columns at once, message words x and y. */
ARGONISHCHE_INLINE void neon128_blake2b_g(uint64x2_t *a, uint64x2_t *b, uint64x2_t *c,
                                          uint64x2_t *d, uint64x2_t x, uint64x2_t y) {
    *a = vaddq_u64(neon128_as_written(vaddq_u64(*a, x)), *b);
    *d = neon128_xor_rotr32(*d, *a);
    *c = vaddq_u64(*c, *d);
    *b = neon128_xor_rotr24(*b, *c);
    *a = vaddq_u64(neon128_as_written(vaddq_u64(*a, y)), *b);
    *d = neon128_xor_rotr16(*d, *a);
    *c = vaddq_u64(*c, *d);
    *b = neon128_xor_rotr63(*b, *c);
}

/* (m[i], m[j]) from the message held as msg[k] = (m[2k], m[2k+1]).  The rounds are inlined with
 * constant sigma rows, so each call folds to one instruction or none. */
ARGONISHCHE_INLINE uint64x2_t neon128_message_pair(const uint64x2_t msg[8], unsigned i,
                                                   unsigned j) {
    const uint64x2_t mi = msg[i / 2], mj = msg[j / 2];
    if (i % 2 == 0 && j == i + 1) return mi;
    if (j % 2 == 0 && i == j + 1) return vextq_u64(mi, mi, 1);
    if (i % 2 == 0 && j % 2 == 0) return vzip1q_u64(mi, mj);
    if (i % 2 == 1 && j % 2 == 1) return vzip2q_u64(mi, mj);
    if (i % 2 == 1) return neon128_high_low(mi, mj);
    return vcopyq_laneq_u64(mj, 0, mi, 0); /* (mi[0], mj[1]): one INS */
}

/* One round with sigma row s: G_0..G_3 on the columns, then (after diagonalizing, see the lane
 * order above) G_7, G_4 in the first vector of each row and G_5, G_6 in the second. */
ARGONISHCHE_INLINE void neon128_blake2b_round(uint64x2_t x[8], const uint64x2_t msg[8],
                                              const uint8_t s[16]) {
    neon128_blake2b_g(&x[0], &x[2], &x[4], &x[6], neon128_message_pair(msg, s[0], s[2]),
                      neon128_message_pair(msg, s[1], s[3]));
    neon128_blake2b_g(&x[1], &x[3], &x[5], &x[7], neon128_message_pair(msg, s[4], s[6]),
                      neon128_message_pair(msg, s[5], s[7]));
    neon128_diagonalize(x);
    neon128_blake2b_g(&x[0], &x[2], &x[4], &x[6], neon128_message_pair(msg, s[14], s[8]),
                      neon128_message_pair(msg, s[15], s[9]));
    neon128_blake2b_g(&x[1], &x[3], &x[5], &x[7], neon128_message_pair(msg, s[10], s[12]),
                      neon128_message_pair(msg, s[11], s[13]));
    neon128_undiagonalize(x);
}

/* h stays in registers across a run of blocks, which the contract allows: several blocks come
 * only with the same increment and no final flag. */
static void neon128_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                     size_t nblocks, uint64_t increment, uint64_t final_flag,
                                     uint64_t last_node_flag) {
    const uint64_t *iv = argonishche_blake2b_iv;
    uint64x2_t h01 = vld1q_u64(h), h23 = vld1q_u64(h + 2);
    uint64x2_t h45 = vld1q_u64(h + 4), h67 = vld1q_u64(h + 6);
    uint64_t t0 = t[0], t1 = t[1];

    for (; nblocks > 0; nblocks--, blocks += ARGONISHCHE_BLAKE2B_BLOCK_BYTES) {
        uint64x2_t msg[8], x[8];
        t0 += increment;
        t1 += (t0 < increment);
        /* Byte loads: the input has no alignment, and the words are little-endian. */
        for (int k = 0; k < 8; k++) msg[k] = vreinterpretq_u64_u8(vld1q_u8(blocks + 16 * k));
        /* v = h || IV, then v12, v13 ^= t and v14, v15 ^= f0, f1. */
        x[0] = h01, x[1] = h23, x[2] = h45, x[3] = h67;
        x[4] = vld1q_u64(iv), x[5] = vld1q_u64(iv + 2);
        x[6] = veorq_u64(vld1q_u64(iv + 4), vcombine_u64(vcreate_u64(t0), vcreate_u64(t1)));
        x[7] = veorq_u64(vld1q_u64(iv + 6),
                         vcombine_u64(vcreate_u64(final_flag), vcreate_u64(last_node_flag)));

        /* Written out, so that every round sees its sigma row as constants. */
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[0]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[1]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[2]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[3]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[4]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[5]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[6]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[7]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[8]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[9]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[10]);
        neon128_blake2b_round(x, msg, argonishche_blake2b_sigma[11]);

        h01 = neon128_xor3(h01, x[0], x[4]);
        h23 = neon128_xor3(h23, x[1], x[5]);
        h45 = neon128_xor3(h45, x[2], x[6]);
        h67 = neon128_xor3(h67, x[3], x[7]);
    }
    vst1q_u64(h, h01), vst1q_u64(h + 2, h23), vst1q_u64(h + 4, h45), vst1q_u64(h + 6, h67);
    t[0] = t0;
    t[1] = t1;
}

/* ---- Argon2 G (RFC 9106 section 3.5) ------------------------------------------------------- */

/* Section 3.6: a + b + 2 * lo32(a) * lo32(b).  UMULL multiplies 32-bit halves of 64-bit
 * vectors, so the low words are first narrowed out (XTN); a + b does not wait for them. */
ARGONISHCHE_INLINE uint64x2_t neon128_blamka(uint64x2_t a, uint64x2_t b) {
    const uint64x2_t product = vmull_u32(vmovn_u64(a), vmovn_u64(b));
    return vaddq_u64(vaddq_u64(a, b), vaddq_u64(product, product));
}

/* P on two matrices at once, x[0..7] and x[8..15]: one P is a single chain of dependent
 * multiplies, and stepping four independent column pairs together lets the core overlap them.
 * A quad is a column pair of one matrix: rows a, b, c, d are 0, 2, 4, 6 vectors on. */
ARGONISHCHE_INLINE void neon128_argon2_gb_2x(uint64x2_t x[16]) {
    enum { a = 0, b = 2, c = 4, d = 6 };
    uint64x2_t *const v[4] = {x, x + 1, x + 8, x + 9};
    for (int q = 0; q < 4; q++) v[q][a] = neon128_blamka(v[q][a], v[q][b]);
    for (int q = 0; q < 4; q++) v[q][d] = neon128_xor_rotr32(v[q][d], v[q][a]);
    for (int q = 0; q < 4; q++) v[q][c] = neon128_blamka(v[q][c], v[q][d]);
    for (int q = 0; q < 4; q++) v[q][b] = neon128_xor_rotr24(v[q][b], v[q][c]);
    for (int q = 0; q < 4; q++) v[q][a] = neon128_blamka(v[q][a], v[q][b]);
    for (int q = 0; q < 4; q++) v[q][d] = neon128_xor_rotr16(v[q][d], v[q][a]);
    for (int q = 0; q < 4; q++) v[q][c] = neon128_blamka(v[q][c], v[q][d]);
    for (int q = 0; q < 4; q++) v[q][b] = neon128_xor_rotr63(v[q][b], v[q][c]);
}

ARGONISHCHE_INLINE void neon128_argon2_p_2x(uint64x2_t x[16]) {
    neon128_argon2_gb_2x(x);
    neon128_diagonalize(x);
    neon128_diagonalize(x + 8);
    neon128_argon2_gb_2x(x);
    neon128_undiagonalize(x);
    neon128_undiagonalize(x + 8);
}

/* Section 3.5: R = X ^ Y; Q = P on each row of R; Z = P on each column of Q; the result is
 * Z ^ R (^ the old block when xor_into_next).  As 64 16-byte registers R_0..R_63, row i is
 * R_8i..R_8i+7 and column j is R_j, R_j+8, ..., R_j+56, each one matrix in the layout above.
 * `next` holds R (^ its old value) between the halves, so only Q needs a buffer. */
static void neon128_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                      const argonishche_block *ref, int xor_into_next) {
    const uint64_t *x_in = prev->v, *y_in = ref->v;
    uint64_t *out = next->v;
    _Alignas(64) uint64x2_t q[64];

    /* ref is usually far away in memory (prev was just written): asking for all of its lines
     * now overlaps their misses instead of waiting for one per pair of rows. */
    for (int line = 0; line < ARGONISHCHE_BLOCK_BYTES / 64; line++)
        __builtin_prefetch((const uint8_t *)ref + 64 * line);

    for (int row = 0; row < 8; row += 2) {
        uint64x2_t x[16];
        for (int k = 0; k < 16; k++) {
            const int i = 8 * row + k;
            x[k] = veorq_u64(vld1q_u64(x_in + 2 * i), vld1q_u64(y_in + 2 * i));
            vst1q_u64(out + 2 * i,
                      xor_into_next ? veorq_u64(x[k], vld1q_u64(out + 2 * i)) : x[k]);
        }
        neon128_argon2_p_2x(x);
        for (int k = 0; k < 16; k++) q[8 * row + k] = x[k];
    }
    for (int column = 0; column < 8; column += 2) {
        uint64x2_t x[16];
        for (int k = 0; k < 16; k++) x[k] = q[column + k / 8 + 8 * (k % 8)];
        neon128_argon2_p_2x(x);
        for (int k = 0; k < 16; k++) {
            const int i = column + k / 8 + 8 * (k % 8);
            vst1q_u64(out + 2 * i, veorq_u64(x[k], vld1q_u64(out + 2 * i)));
        }
    }
}

#endif /* ARGONISHCHE_NEON128_H */
