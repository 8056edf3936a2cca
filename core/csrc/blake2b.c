/*
 * blake2b.c - BLAKE2b init/update/final (RFC 7693 sections 2.5 and 3.3), written once for every
 * backend; the compression function F comes from the backend's kernel table.
 */
#include "argonishche_constants.h"
#include "argonishche_core.h"

int argonishche_blake2b_init_tree(argonishche_blake2b_state *state, const void *kernel_table,
                                  size_t digest_size, const uint8_t *key, size_t key_len,
                                  const uint8_t *salt, size_t salt_len, const uint8_t *person,
                                  size_t person_len, const argonishche_blake2b_tree *tree) {
    const argonishche_kernel_table *kernels = kernel_table;
    uint8_t padded[16];

    if (digest_size < 1 || digest_size > 64 || key_len > 64 || salt_len > 16 || person_len > 16)
        return ARGONISHCHE_ERR_PARAMETER;
    if (tree != NULL && (tree->depth < 1 || tree->inner_size > 64))
        return ARGONISHCHE_ERR_PARAMETER;

    /* Each field set, not the whole state zeroed first (compilers make that memset a rep stos,
     * which costs more than the rest of init): of buf only the bytes below buflen are ever
     * read, and a key's block is zero-padded below. */
    state->compress = kernels->blake2b_compress;
    state->digest_size = digest_size;
    state->t[0] = state->t[1] = 0;
    state->last_node = 0;
    state->buflen = 0;
    for (int i = 0; i < 8; i++) state->h[i] = argonishche_blake2b_iv[i];
    /* h = IV ^ the parameter block, read as eight little-endian words.  Word 0: digest length
     * (byte 0), key length (1), fanout (2), depth (3), leaf length (4..7); sequential hashing
     * is fanout 1, depth 1 and nothing else. */
    state->h[0] ^= ((uint64_t)key_len << 8) ^ (uint64_t)digest_size;
    if (tree == NULL) {
        state->h[0] ^= 0x01010000ULL;
    } else {
        state->h[0] ^= ((uint64_t)tree->fanout << 16) ^ ((uint64_t)tree->depth << 24) ^
                       ((uint64_t)tree->leaf_size << 32);
        /* Word 1: node offset; word 2: node depth (byte 16), inner length (17), the rest of
         * word 2 and word 3 reserved (zero). */
        state->h[1] ^= tree->node_offset;
        state->h[2] ^= (uint64_t)tree->node_depth ^ ((uint64_t)tree->inner_size << 8);
        state->last_node = tree->last_node ? ~0ULL : 0;
    }
    /* Salt and personalization occupy parameter words 4-5 and 6-7, zero-padded to 16 bytes. */
    if (salt_len) {
        memset(padded, 0, sizeof padded);
        memcpy(padded, salt, salt_len);
        state->h[4] ^= argonishche_load64_le(padded);
        state->h[5] ^= argonishche_load64_le(padded + 8);
    }
    if (person_len) {
        memset(padded, 0, sizeof padded);
        memcpy(padded, person, person_len);
        state->h[6] ^= argonishche_load64_le(padded);
        state->h[7] ^= argonishche_load64_le(padded + 8);
    }
    /* A key is hashed as a zero-padded first block of its own. */
    if (key_len) {
        static const uint8_t zero[16] = {0}; /* 16-byte stores: a memset is a rep stos again */
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
        for (size_t i = 0; i < sizeof state->buf; i += 16) memcpy(state->buf + i, zero, 16);
        memcpy(state->buf, key, key_len);
        state->buflen = ARGONISHCHE_BLAKE2B_BLOCK_BYTES;
    }
    return ARGONISHCHE_OK;
}

int argonishche_blake2b_init(argonishche_blake2b_state *state, const void *kernel_table,
                             size_t digest_size, const uint8_t *key, size_t key_len,
                             const uint8_t *salt, size_t salt_len, const uint8_t *person,
                             size_t person_len) {
    return argonishche_blake2b_init_tree(state, kernel_table, digest_size, key, key_len, salt,
                                         salt_len, person, person_len, NULL);
}

void argonishche_blake2b_update(argonishche_blake2b_state *state, const uint8_t *data, size_t len) {
    const size_t block = ARGONISHCHE_BLAKE2B_BLOCK_BYTES;
    if (len == 0) return;
    /* The final block must be compressed with the final flag (and a last node's with f1), so a
     * block is only compressed once more input is known to follow it. */
    if (len > block - state->buflen) {
        size_t fill = block - state->buflen;
        memcpy(state->buf + state->buflen, data, fill);
        state->compress(state->h, state->t, state->buf, 1, block, 0, 0);
        state->buflen = 0;
        data += fill;
        len -= fill;
        /* Runs of at most ARGONISHCHE_BLAKE2B_MAX_RUN blocks: the longest certification checks
         * (a third-party F is trusted that far and no farther; the split costs one call per
         * 2 MiB). */
        while (len > block) {
            size_t run = (len - 1) / block;
            if (run > ARGONISHCHE_BLAKE2B_MAX_RUN) run = ARGONISHCHE_BLAKE2B_MAX_RUN;
            state->compress(state->h, state->t, data, run, block, 0, 0);
            data += run * block;
            len -= run * block;
        }
    }
    memcpy(state->buf + state->buflen, data, len);
    state->buflen += len;
}

void argonishche_blake2b_final(argonishche_blake2b_state *state, uint8_t *out) {
    uint64_t h[8], t[2] = {state->t[0], state->t[1]};
    size_t full_words = state->digest_size / 8, tail = state->digest_size % 8;

    memcpy(h, state->h, sizeof h);
    /* The last block is zero-padded where it lies, past the buffered bytes, which nothing
     * reads (update appends at buflen), and the digest goes straight to out: no copies of the
     * block and the digest to wipe afterwards, which were about half of this function's own
     * time (docs/benchmarks.md). */
    memset(state->buf + state->buflen, 0, sizeof state->buf - state->buflen);
    state->compress(h, t, state->buf, 1, state->buflen, ~0ULL, state->last_node);
    for (size_t i = 0; i < full_words; i++) argonishche_store64_le(out + 8 * i, h[i]);
    if (tail) {
        uint8_t word[8];
        argonishche_store64_le(word, h[full_words]);
        memcpy(out + 8 * full_words, word, tail);
        argonishche_secure_wipe(word, sizeof word);
    }
    argonishche_secure_wipe(h, sizeof h);
}

int argonishche_blake2b_oneshot(const void *kernel_table, uint8_t *out, size_t digest_size,
                                const uint8_t *data, size_t len) {
    argonishche_blake2b_state state;
    int status =
        argonishche_blake2b_init(&state, kernel_table, digest_size, NULL, 0, NULL, 0, NULL, 0);
    if (status != ARGONISHCHE_OK) return status;
    argonishche_blake2b_update(&state, data, len);
    argonishche_blake2b_final(&state, out);
    return ARGONISHCHE_OK;
}
