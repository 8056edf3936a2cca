/*
 * ref.c - portable C kernels, written from RFC 7693 (BLAKE2b F) and RFC 9106 (Argon2 G).
 *
 * The baseline every other backend is tested against, and the one that runs on any CPU, so it
 * favours being obviously the specification over being fast.
 */
#include "argonishche_constants.h"
#include "argonishche_kernel.h"

/* RFC 7693 section 3.1: the mixing function G. */
#define B2B_G(v, a, b, c, d, x, y)                          \
    do {                                                    \
        v[a] = v[a] + v[b] + (x);                           \
        v[d] = argonishche_rotr64(v[d] ^ v[a], 32);         \
        v[c] = v[c] + v[d];                                 \
        v[b] = argonishche_rotr64(v[b] ^ v[c], 24);         \
        v[a] = v[a] + v[b] + (y);                           \
        v[d] = argonishche_rotr64(v[d] ^ v[a], 16);         \
        v[c] = v[c] + v[d];                                 \
        v[b] = argonishche_rotr64(v[b] ^ v[c], 63);         \
    } while (0)

/* RFC 7693 section 3.2: the compression function F, once per block. */
static void ref_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                 size_t nblocks, uint64_t increment, uint64_t final_flag,
                                 uint64_t last_node_flag) {
    for (; nblocks > 0; nblocks--, blocks += ARGONISHCHE_BLAKE2B_BLOCK_BYTES) {
        uint64_t m[16], v[16];
        argonishche_blake2b_count(t, increment);
        for (int i = 0; i < 16; i++) m[i] = argonishche_load64_le(blocks + 8 * i);
        for (int i = 0; i < 8; i++) {
            v[i] = h[i];
            v[i + 8] = argonishche_blake2b_iv[i];
        }
        v[12] ^= t[0];
        v[13] ^= t[1];
        v[14] ^= final_flag;
        v[15] ^= last_node_flag;
        for (int r = 0; r < 12; r++) {
            const uint8_t *s = argonishche_blake2b_sigma[r];
            B2B_G(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
            B2B_G(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
            B2B_G(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
            B2B_G(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
            B2B_G(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
            B2B_G(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
            B2B_G(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
            B2B_G(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
        }
        for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
    }
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
