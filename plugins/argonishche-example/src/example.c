/*
 * example.c - the two kernels of the `example` backend, in portable C (RFC 7693, RFC 9106).
 *
 * The template for a kernel plugin: copy the directory, rename, and make these two functions
 * fast.  They are written for reading, not for speed: one BLAKE2b compression F per 128-byte
 * block and one Argon2 compression G per 1 KiB block, exactly as the RFCs state them.
 *
 * The contract (argonishche_kernel.h, found through argonishche.build.get_include()) says what
 * the core passes and what a kernel must keep: pure functions, no globals that are written,
 * `prev` and `ref` may be the same block, `next` aliases neither.  argonishche_constants.h has
 * the BLAKE2b IV and message schedule and the little-endian loads every backend shares.
 *
 * A SIMD kernel includes its intrinsics headers here, then argonishche_target.h, and puts its
 * kernels between ARGONISHCHE_TARGET_BEGIN and ARGONISHCHE_TARGET_END; this one needs no
 * instruction set beyond the architecture's baseline (its descriptor declares no cpu_features),
 * so it builds and runs on any CPU.
 */
#include "argonishche_constants.h"
#include "argonishche_kernel.h"

/* ---- BLAKE2b F (RFC 7693 section 3.2) ------------------------------------------------- */

/* The mixing function G of RFC 7693 section 3.1, with its rotations R1..R4 = 32, 24, 16, 63. */
static inline void example_blake2b_mix(uint64_t v[16], int a, int b, int c, int d, uint64_t x,
                                       uint64_t y) {
    v[a] = v[a] + v[b] + x;
    v[d] = argonishche_rotr64(v[d] ^ v[a], 32);
    v[c] = v[c] + v[d];
    v[b] = argonishche_rotr64(v[b] ^ v[c], 24);
    v[a] = v[a] + v[b] + y;
    v[d] = argonishche_rotr64(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = argonishche_rotr64(v[b] ^ v[c], 63);
}

static void example_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                     size_t nblocks, uint64_t increment, uint64_t final_flag,
                                     uint64_t last_node_flag) {
    for (size_t block = 0; block < nblocks; block++) {
        const uint8_t *bytes = blocks + block * ARGONISHCHE_BLAKE2B_BLOCK_BYTES;
        uint64_t m[16], v[16];
        /* The counter counts bytes up to and including this block (a 128-bit sum). */
        argonishche_blake2b_count(t, increment);
        for (int i = 0; i < 16; i++) m[i] = argonishche_load64_le(bytes + 8 * i);
        for (int i = 0; i < 8; i++) {
            v[i] = h[i];
            v[i + 8] = argonishche_blake2b_iv[i];
        }
        v[12] ^= t[0];
        v[13] ^= t[1];
        v[14] ^= final_flag;      /* f0: all ones on a message's last block */
        v[15] ^= last_node_flag;  /* f1: all ones on the last node of a tree level */
        for (int round = 0; round < 12; round++) {
            const uint8_t *s = argonishche_blake2b_sigma[round];
            example_blake2b_mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
            example_blake2b_mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
            example_blake2b_mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
            example_blake2b_mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
            example_blake2b_mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
            example_blake2b_mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
            example_blake2b_mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
            example_blake2b_mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
        }
        for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
    }
}

/* ---- Argon2 G (RFC 9106 sections 3.5 and 3.6) ----------------------------------------- */

/* BlaMka's multiply-add: x + y + 2 * lo32(x) * lo32(y), all modulo 2^64. */
static inline uint64_t example_blamka(uint64_t x, uint64_t y) {
    return x + y + 2 * (uint64_t)(uint32_t)x * (uint64_t)(uint32_t)y;
}

/* GB of RFC 9106 section 3.6 on words a, b, c, d of a block. */
static inline void example_gb(uint64_t *w, int a, int b, int c, int d) {
    w[a] = example_blamka(w[a], w[b]);
    w[d] = argonishche_rotr64(w[d] ^ w[a], 32);
    w[c] = example_blamka(w[c], w[d]);
    w[b] = argonishche_rotr64(w[b] ^ w[c], 24);
    w[a] = example_blamka(w[a], w[b]);
    w[d] = argonishche_rotr64(w[d] ^ w[a], 16);
    w[c] = example_blamka(w[c], w[d]);
    w[b] = argonishche_rotr64(w[b] ^ w[c], 63);
}

/* The permutation P on sixteen words v0..v15 of a block, given by their indices: the columns
 * of the 4x4 matrix, then its diagonals. */
static void example_permute(uint64_t *w, const int v[16]) {
    example_gb(w, v[0], v[4], v[8], v[12]);
    example_gb(w, v[1], v[5], v[9], v[13]);
    example_gb(w, v[2], v[6], v[10], v[14]);
    example_gb(w, v[3], v[7], v[11], v[15]);
    example_gb(w, v[0], v[5], v[10], v[15]);
    example_gb(w, v[1], v[6], v[11], v[12]);
    example_gb(w, v[2], v[7], v[8], v[13]);
    example_gb(w, v[3], v[4], v[9], v[14]);
}

static void example_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                      const argonishche_block *ref, int xor_into_next) {
    /* R = prev XOR ref, read before anything is written (prev and ref may be one block). */
    uint64_t r[ARGONISHCHE_BLOCK_WORDS], q[ARGONISHCHE_BLOCK_WORDS];
    for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++) q[i] = r[i] = prev->v[i] ^ ref->v[i];
    /* The block as an 8x8 matrix of 16-byte registers: P on each row (sixteen consecutive
     * words), then on each column (two adjacent words from each of the eight rows). */
    for (int row = 0; row < 8; row++) {
        int v[16];
        for (int i = 0; i < 16; i++) v[i] = 16 * row + i;
        example_permute(q, v);
    }
    for (int column = 0; column < 8; column++) {
        int v[16];
        for (int i = 0; i < 8; i++) {
            v[2 * i] = 2 * column + 16 * i;
            v[2 * i + 1] = 2 * column + 16 * i + 1;
        }
        example_permute(q, v);
    }
    /* G(X, Y) = Z XOR R; version 0x13 after the first pass XORs it into the old block. */
    for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++) {
        uint64_t g = q[i] ^ r[i];
        next->v[i] = xor_into_next ? next->v[i] ^ g : g;
    }
}

ARGONISHCHE_DEFINE_KERNELS(example_blake2b_compress, example_argon2_fill_block)
