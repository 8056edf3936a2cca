/*
 * ref.c - portable C kernels, written from RFC 7693 (BLAKE2b F) and RFC 9106 (Argon2 G).
 *
 * The baseline every other backend is tested against, and the one that runs on any CPU, so it
 * favours being obviously the specification over being fast, with one exception: F is written
 * for latency, as it is the fastest BLAKE2b where vector instructions are slower than scalar.
 */
#include "argonishche_constants.h"
#include "argonishche_kernel.h"

/* Half of G (RFC 7693 section 3.1) on four columns or four diagonals, written operation by
 * operation side by side: each G is one dependency chain (a -> d -> c -> b), and interleaved the
 * four advance together instead of one finishing while the others wait.  a + x goes first: it
 * does not wait for b. */
#define B2B_HALF4(a0, b0, c0, d0, a1, b1, c1, d1, a2, b2, c2, d2, a3, b3, c3, d3,       \
                  x0, x1, x2, x3, r1, r2)                                               \
    do {                                                                                \
        a0 += (x0);                                                                     \
        a1 += (x1);                                                                     \
        a2 += (x2);                                                                     \
        a3 += (x3);                                                                     \
        a0 += b0;                                                                       \
        a1 += b1;                                                                       \
        a2 += b2;                                                                       \
        a3 += b3;                                                                       \
        d0 = argonishche_rotr64(d0 ^ a0, r1);                                           \
        d1 = argonishche_rotr64(d1 ^ a1, r1);                                           \
        d2 = argonishche_rotr64(d2 ^ a2, r1);                                           \
        d3 = argonishche_rotr64(d3 ^ a3, r1);                                           \
        c0 += d0;                                                                       \
        c1 += d1;                                                                       \
        c2 += d2;                                                                       \
        c3 += d3;                                                                       \
        b0 = argonishche_rotr64(b0 ^ c0, r2);                                           \
        b1 = argonishche_rotr64(b1 ^ c1, r2);                                           \
        b2 = argonishche_rotr64(b2 ^ c2, r2);                                           \
        b3 = argonishche_rotr64(b3 ^ c3, r2);                                           \
    } while (0)

/* Message word k of the block F is compressing, loaded where it lies (no copy to an array). */
#define B2B_M(k) argonishche_load64_le(blocks + 8 * (k))

/* One round of F (RFC 7693 section 3.2): G down the four columns of v, then along the four
 * diagonals, G number i taking message words s[2i] and s[2i+1] of the round's row of sigma. */
#define B2B_ROUND(s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11, s12, s13, s14, s15)  \
    do {                                                                             \
        B2B_HALF4(v0, v4, v8, v12, v1, v5, v9, v13, v2, v6, v10, v14, v3, v7, v11, v15, \
                  B2B_M(s0), B2B_M(s2), B2B_M(s4), B2B_M(s6), 32, 24);               \
        B2B_HALF4(v0, v4, v8, v12, v1, v5, v9, v13, v2, v6, v10, v14, v3, v7, v11, v15, \
                  B2B_M(s1), B2B_M(s3), B2B_M(s5), B2B_M(s7), 16, 63);               \
        B2B_HALF4(v0, v5, v10, v15, v1, v6, v11, v12, v2, v7, v8, v13, v3, v4, v9, v14, \
                  B2B_M(s8), B2B_M(s10), B2B_M(s12), B2B_M(s14), 32, 24);            \
        B2B_HALF4(v0, v5, v10, v15, v1, v6, v11, v12, v2, v7, v8, v13, v3, v4, v9, v14, \
                  B2B_M(s9), B2B_M(s11), B2B_M(s13), B2B_M(s15), 16, 63);            \
    } while (0)

/* RFC 7693 section 3.2: the compression function F, once per block.  The rounds are written out
 * with sigma as constants (a loop looking sigma up was much slower); h and t stay in locals
 * across the blocks of a call, as blocks, a byte pointer, may alias them, which would make every
 * block store and reload them.  The compiler spills some of the sixteen words and keeps the
 * message words it loaded in stack slots; on a core that forwards stack spills without delay
 * that is not what keeps F above its chain of dependent operations when the core is
 * its own: an assembly copy with one word spilled and every message word added from memory was
 * no faster, and F without any message words only a little (docs/benchmarks.md).  Fewer
 * instructions do pay when another thread shares the core. */
static void ref_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                 size_t nblocks, uint64_t increment, uint64_t final_flag,
                                 uint64_t last_node_flag) {
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2], h3 = h[3];
    uint64_t h4 = h[4], h5 = h[5], h6 = h[6], h7 = h[7];
    uint64_t t0 = t[0], t1 = t[1];

    for (; nblocks > 0; nblocks--, blocks += ARGONISHCHE_BLAKE2B_BLOCK_BYTES) {
        /* The 128-bit byte counter, carried into t1 when t0 wraps past 2^64. */
        t0 += increment;
        t1 += (t0 < increment);

        uint64_t v0 = h0, v1 = h1, v2 = h2, v3 = h3;
        uint64_t v4 = h4, v5 = h5, v6 = h6, v7 = h7;
        uint64_t v8 = argonishche_blake2b_iv[0], v9 = argonishche_blake2b_iv[1];
        uint64_t v10 = argonishche_blake2b_iv[2], v11 = argonishche_blake2b_iv[3];
        uint64_t v12 = argonishche_blake2b_iv[4] ^ t0;
        uint64_t v13 = argonishche_blake2b_iv[5] ^ t1;
        uint64_t v14 = argonishche_blake2b_iv[6] ^ final_flag;
        uint64_t v15 = argonishche_blake2b_iv[7] ^ last_node_flag;

        /* The twelve rounds, each with its row of sigma (RFC 7693 section 2.7, the same numbers
         * as argonishche_blake2b_sigma) as constants; rounds 10 and 11 reuse rows 0 and 1. */
        B2B_ROUND( 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15);
        B2B_ROUND(14, 10,  4,  8,  9, 15, 13,  6,  1, 12,  0,  2, 11,  7,  5,  3);
        B2B_ROUND(11,  8, 12,  0,  5,  2, 15, 13, 10, 14,  3,  6,  7,  1,  9,  4);
        B2B_ROUND( 7,  9,  3,  1, 13, 12, 11, 14,  2,  6,  5, 10,  4,  0, 15,  8);
        B2B_ROUND( 9,  0,  5,  7,  2,  4, 10, 15, 14,  1, 11, 12,  6,  8,  3, 13);
        B2B_ROUND( 2, 12,  6, 10,  0, 11,  8,  3,  4, 13,  7,  5, 15, 14,  1,  9);
        B2B_ROUND(12,  5,  1, 15, 14, 13,  4, 10,  0,  7,  6,  3,  9,  2,  8, 11);
        B2B_ROUND(13, 11,  7, 14, 12,  1,  3,  9,  5,  0, 15,  4,  8,  6,  2, 10);
        B2B_ROUND( 6, 15, 14,  9, 11,  3,  0,  8, 12,  2, 13,  7,  1,  4, 10,  5);
        B2B_ROUND(10,  2,  8,  4,  7,  6,  1,  5, 15, 11,  9, 14,  3, 12, 13,  0);
        B2B_ROUND( 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15);
        B2B_ROUND(14, 10,  4,  8,  9, 15, 13,  6,  1, 12,  0,  2, 11,  7,  5,  3);

        h0 ^= v0 ^ v8;
        h1 ^= v1 ^ v9;
        h2 ^= v2 ^ v10;
        h3 ^= v3 ^ v11;
        h4 ^= v4 ^ v12;
        h5 ^= v5 ^ v13;
        h6 ^= v6 ^ v14;
        h7 ^= v7 ^ v15;
    }

    h[0] = h0, h[1] = h1, h[2] = h2, h[3] = h3;
    h[4] = h4, h[5] = h5, h[6] = h6, h[7] = h7;
    t[0] = t0, t[1] = t1;
}

/* RFC 9106 section 3.6: GB is BLAKE2b's G with each addition a + b replaced by
 * a + b + 2 * lo32(a) * lo32(b), which makes the multiplier the latency bottleneck. */
static inline uint64_t blamka(uint64_t a, uint64_t b) {
    return a + b + 2 * (uint64_t)(uint32_t)a * (uint32_t)b;
}

#define GB(a, b, c, d)                          \
    do {                                        \
        a = blamka(a, b);                       \
        d = argonishche_rotr64(d ^ a, 32);      \
        c = blamka(c, d);                       \
        b = argonishche_rotr64(b ^ c, 24);      \
        a = blamka(a, b);                       \
        d = argonishche_rotr64(d ^ a, 16);      \
        c = blamka(c, d);                       \
        b = argonishche_rotr64(b ^ c, 63);      \
    } while (0)

/* The permutation P on sixteen words v0..v15 (RFC 9106 section 3.6).  A macro over lvalues, so
 * the compiler sees fixed word indices and keeps the sixteen words in registers. */
#define PERMUTE(v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15) \
    do {                                                                            \
        GB(v0, v4, v8, v12);                                                        \
        GB(v1, v5, v9, v13);                                                        \
        GB(v2, v6, v10, v14);                                                       \
        GB(v3, v7, v11, v15);                                                       \
        GB(v0, v5, v10, v15);                                                       \
        GB(v1, v6, v11, v12);                                                       \
        GB(v2, v7, v8, v13);                                                        \
        GB(v3, v4, v9, v14);                                                        \
    } while (0)

/* Row r is words 16r..16r+15; column c is the word pairs 2c+16k, 2c+16k+1 for k = 0..7. */
#define PERMUTE_ROW(z, b)                                                                    \
    PERMUTE(z[b], z[b + 1], z[b + 2], z[b + 3], z[b + 4], z[b + 5], z[b + 6], z[b + 7],     \
            z[b + 8], z[b + 9], z[b + 10], z[b + 11], z[b + 12], z[b + 13], z[b + 14], z[b + 15])
#define PERMUTE_COLUMN(z, c)                                                                 \
    PERMUTE(z[c], z[c + 1], z[c + 16], z[c + 17], z[c + 32], z[c + 33], z[c + 48], z[c + 49], \
            z[c + 64], z[c + 65], z[c + 80], z[c + 81], z[c + 96], z[c + 97], z[c + 112],    \
            z[c + 113])

/* RFC 9106 section 3.5: R = X ^ Y; P on the eight rows of sixteen words, then on the eight
 * columns (16-byte registers R_j, R_j+8, ..., R_j+56, i.e. word pairs 2j+16k, 2j+16k+1);
 * the result is P(R) ^ R, and for version 0x13 after the first pass also ^ the old block. */
static void ref_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                  const argonishche_block *ref, int xor_into_next) {
    uint64_t r[ARGONISHCHE_BLOCK_WORDS], z[ARGONISHCHE_BLOCK_WORDS];
    for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++) {
        r[i] = prev->v[i] ^ ref->v[i];
        z[i] = r[i];
    }
    if (xor_into_next)
        for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++) r[i] ^= next->v[i];

    for (int row = 0; row < 8; row++) PERMUTE_ROW(z, 16 * row);
    for (int column = 0; column < 8; column++) PERMUTE_COLUMN(z, 2 * column);
    for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++) next->v[i] = z[i] ^ r[i];
}

ARGONISHCHE_DEFINE_KERNELS(ref_blake2b_compress, ref_argon2_fill_block)
