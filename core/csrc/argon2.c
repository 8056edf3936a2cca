/*
 * argon2.c - the Argon2 driver of RFC 9106, written once for every backend.
 *
 * H0 (section 3.2), H' (section 3.3), the memory layout and reference indexing (sections 3.4 and
 * 3.4.1/3.4.2), passes, slices and the final tag.  The only ISA-specific work, the compression G of
 * one block and BLAKE2b's F, is called through the backend's kernel table.  Lanes of one slice are
 * independent, so `threads` C threads fill them and meet at a barrier after every slice.
 */
#include "platform.h" /* first: it sets the feature macros */

#include <stdlib.h>

#include "argonishche_constants.h"
#include "argonishche_core.h"

#define SYNC_POINTS 4              /* slices per pass */
#define ADDRESSES_PER_BLOCK 128    /* J1/J2 pairs one address block yields */

typedef struct argon2_instance {
    argonishche_block *memory;
    argonishche_argon2_fill_block_fn fill_block;
    uint32_t type, version, passes, lanes;
    uint32_t lane_length;          /* q = m' / p */
    uint32_t segment_length;       /* q / 4 */
    int prefault;                  /* fresh memory: each lane's thread faults its lanes in first */
    int wipe;                      /* each lane's thread wipes its lanes but the last block after
                                      the last slice (the tag reads those; the caller wipes them) */
} argon2_instance;

/* ---- BLAKE2b helpers with the backend's F --------------------------------------------------- */

static void blake2b_simple(const argonishche_kernel_table *k, uint8_t *out, size_t out_len,
                           const uint8_t *prefix, size_t prefix_len, const uint8_t *in,
                           size_t in_len) {
    argonishche_blake2b_state state;
    argonishche_blake2b_init(&state, k, out_len, NULL, 0, NULL, 0, NULL, 0);
    argonishche_blake2b_update(&state, prefix, prefix_len);
    argonishche_blake2b_update(&state, in, in_len);
    argonishche_blake2b_final(&state, out);
    argonishche_secure_wipe(&state, sizeof state);
}

/* H' of RFC 9106 section 3.3: BLAKE2b extended to any output length by chaining 64-byte
 * digests and keeping the first 32 bytes of each. */
static void blake2b_long(const argonishche_kernel_table *k, uint8_t *out, size_t out_len,
                         const uint8_t *in, size_t in_len) {
    uint8_t length_le[4], v[64];
    argonishche_store32_le(length_le, (uint32_t)out_len);
    if (out_len <= 64) {
        blake2b_simple(k, out, out_len, length_le, 4, in, in_len);
        return;
    }
    blake2b_simple(k, v, 64, length_le, 4, in, in_len);
    memcpy(out, v, 32);
    out += 32;
    out_len -= 32;
    while (out_len > 64) {
        blake2b_simple(k, v, 64, NULL, 0, v, 64);
        memcpy(out, v, 32);
        out += 32;
        out_len -= 32;
    }
    blake2b_simple(k, v, out_len, NULL, 0, v, 64);
    memcpy(out, v, out_len);
    argonishche_secure_wipe(v, sizeof v);
}

static void update_le32(argonishche_blake2b_state *state, uint32_t value) {
    uint8_t le[4];
    argonishche_store32_le(le, value);
    argonishche_blake2b_update(state, le, 4);
}

static void update_length_prefixed(argonishche_blake2b_state *state, const uint8_t *data,
                                   size_t len) {
    update_le32(state, (uint32_t)len);
    argonishche_blake2b_update(state, data, len);
}

/* H0 of RFC 9106 section 3.2, with room for the two LE32 words appended for the first blocks. */
static void initial_hash(const argonishche_kernel_table *k, const argonishche_argon2_request *r,
                         uint8_t h0[72]) {
    argonishche_blake2b_state state;
    argonishche_blake2b_init(&state, k, 64, NULL, 0, NULL, 0, NULL, 0);
    update_le32(&state, r->lanes);
    update_le32(&state, (uint32_t)r->tag_len);
    update_le32(&state, r->memory_cost);
    update_le32(&state, r->time_cost);
    update_le32(&state, r->version);
    update_le32(&state, r->type);
    update_length_prefixed(&state, r->password, r->password_len);
    update_length_prefixed(&state, r->salt, r->salt_len);
    update_length_prefixed(&state, r->secret, r->secret_len);
    update_length_prefixed(&state, r->associated_data, r->associated_data_len);
    argonishche_blake2b_final(&state, h0);
    argonishche_secure_wipe(&state, sizeof state);
}

static void load_block(argonishche_block *dst, const uint8_t bytes[ARGONISHCHE_BLOCK_BYTES]) {
    for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++)
        dst->v[i] = argonishche_load64_le(bytes + 8 * i);
}

/* B[i][0] and B[i][1] = H'^1024(H0 || LE32(0 or 1) || LE32(i)). */
static void fill_first_blocks(const argonishche_kernel_table *k, const argon2_instance *inst,
                              uint8_t h0[72]) {
    uint8_t bytes[ARGONISHCHE_BLOCK_BYTES];
    for (uint32_t lane = 0; lane < inst->lanes; lane++) {
        argonishche_store32_le(h0 + 68, lane);
        for (uint32_t column = 0; column < 2; column++) {
            argonishche_store32_le(h0 + 64, column);
            blake2b_long(k, bytes, sizeof bytes, h0, 72);
            load_block(&inst->memory[(size_t)lane * inst->lane_length + column], bytes);
        }
    }
    argonishche_secure_wipe(bytes, sizeof bytes);
}

/* ---- Filling ------------------------------------------------------------------------------- */

/* Section 3.4.1.2: the next J1/J2 pairs for data-independent addressing are
 * G(ZERO, G(ZERO, input)) with the input block's counter advanced first. */
static void next_addresses(const argon2_instance *inst, argonishche_block *address,
                           argonishche_block *input, const argonishche_block *zero) {
    _Alignas(64) argonishche_block first; /* the kernel contract forbids next aliasing ref */
    input->v[6]++;
    inst->fill_block(&first, zero, input, 0);
    inst->fill_block(address, zero, &first, 0);
}

/* Section 3.4.2: map J1 onto the blocks this position may reference, biased toward recent ones. */
static uint32_t reference_index(const argon2_instance *inst, uint32_t pass, uint32_t slice,
                                 uint32_t index, uint32_t j1, int same_lane) {
    uint32_t segment = inst->segment_length;
    uint32_t area; /* |W|: blocks finished and not overwritten-in-progress */
    if (pass == 0) {
        if (slice == 0)
            area = index - 1;
        else if (same_lane)
            area = slice * segment + index - 1;
        else
            area = slice * segment - (index == 0 ? 1 : 0);
    } else {
        if (same_lane)
            area = inst->lane_length - segment + index - 1;
        else
            area = inst->lane_length - segment - (index == 0 ? 1 : 0);
    }
    uint64_t x = ((uint64_t)j1 * j1) >> 32;
    uint64_t y = ((uint64_t)area * x) >> 32;
    uint32_t relative = area - 1 - (uint32_t)y;
    /* After the first pass, W starts just after the current segment and wraps. */
    uint32_t start = (pass != 0 && slice != SYNC_POINTS - 1) ? (slice + 1) * segment : 0;
    /* start + relative < 2 * lane_length, so one subtraction replaces a 64-bit division that
     * would sit between every two blocks of Argon2d. */
    uint64_t position = (uint64_t)start + relative;
    return (uint32_t)(position >= inst->lane_length ? position - inst->lane_length : position);
}

/* Section 3.4: the block that position i of this segment references, from J1 and J2. */
static inline const argonishche_block *reference_block(const argon2_instance *inst,
                                                       uint32_t pass, uint32_t slice,
                                                       uint32_t lane, uint32_t i,
                                                       uint64_t pseudo_random) {
    uint32_t ref_lane = (pass == 0 && slice == 0)
                            ? lane
                            : (uint32_t)(pseudo_random >> 32) % inst->lanes; /* 32-bit div */
    uint32_t ref_column =
        reference_index(inst, pass, slice, i, (uint32_t)pseudo_random, ref_lane == lane);
    return &inst->memory[(size_t)ref_lane * inst->lane_length + ref_column];
}

static inline void prefetch_block(const argonishche_block *block) {
    for (int line = 0; line < ARGONISHCHE_BLOCK_BYTES / 64; line++)
        ARGONISHCHE_PREFETCH((const uint8_t *)block + 64 * line);
}

/* One lane's progress through one segment.  As soon as a block is made, the reference of the
 * lane's next block is known (data-dependent: it is the first word of the block just made;
 * data-independent: the address block holds it) and its loading starts.  A thread filling two
 * lanes alternates between them (fill_segment_pair), so that each reference has a whole block
 * of the other lane's work to arrive in: in memory larger than the caches most references miss
 * every cache and, with 4 KiB pages, the TLB. */
typedef struct segment_cursor {
    /* Data-independent addressing only: G's operands for the address blocks.  The zero block
     * lies beside the input block, as a local, so that the kernel sees the two close together
     * (a kernel wrong for far-apart blocks is caught by the placement checks, not here). */
    _Alignas(64) argonishche_block address, input, zero;
    argonishche_block *lane_start;
    const argonishche_block *next_ref;             /* the next block's reference, if known */
    uint32_t pass, slice, lane, i;
    int data_independent, xor_into_next;
} segment_cursor;

static void cursor_begin(const argon2_instance *inst, segment_cursor *c, uint32_t pass,
                         uint32_t slice, uint32_t lane) {
    c->pass = pass;
    c->slice = slice;
    c->lane = lane;
    c->data_independent =
        inst->type == ARGONISHCHE_ARGON2I ||
        (inst->type == ARGONISHCHE_ARGON2ID && pass == 0 && slice < SYNC_POINTS / 2);
    c->xor_into_next = inst->version != 0x10 && pass != 0;
    /* The first two blocks of each lane were made from H0. */
    c->i = (pass == 0 && slice == 0) ? 2 : 0;
    c->lane_start = inst->memory + (size_t)lane * inst->lane_length;
    c->next_ref = NULL;
    if (c->data_independent) {
        memset(&c->zero, 0, sizeof c->zero);
        memset(&c->input, 0, sizeof c->input);
        c->input.v[0] = pass;
        c->input.v[1] = lane;
        c->input.v[2] = slice;
        c->input.v[3] = (uint64_t)inst->lane_length * inst->lanes;
        c->input.v[4] = inst->passes;
        c->input.v[5] = inst->type;
        if (c->i != 0) next_addresses(inst, &c->address, &c->input, &c->zero);
    }
}

/* Fill the cursor's block and move on, starting to load the next block's reference as early as
 * it is known: data-independent, before this block is made (its address block has it);
 * data-dependent, once this block is made (its first word decides), but only if *interleaved*,
 * with other work to do before the next block (alone, the load would start at once anyway). */
static inline void cursor_step(const argon2_instance *inst, segment_cursor *c, int interleaved) {
    uint32_t i = c->i, next = i + 1;
    uint32_t column = c->slice * inst->segment_length + i;
    uint32_t prev_column = column == 0 ? inst->lane_length - 1 : column - 1;
    const argonishche_block *ref = c->next_ref;
    c->next_ref = NULL;
    if (c->data_independent) {
        if (i % ADDRESSES_PER_BLOCK == 0) next_addresses(inst, &c->address, &c->input, &c->zero);
        if (ref == NULL)
            ref = reference_block(inst, c->pass, c->slice, c->lane, i,
                                  c->address.v[i % ADDRESSES_PER_BLOCK]);
        if (next < inst->segment_length && next % ADDRESSES_PER_BLOCK != 0) {
            c->next_ref = reference_block(inst, c->pass, c->slice, c->lane, next,
                                          c->address.v[next % ADDRESSES_PER_BLOCK]);
            prefetch_block(c->next_ref);
        }
    } else if (ref == NULL) {
        ref = reference_block(inst, c->pass, c->slice, c->lane, i,
                              c->lane_start[prev_column].v[0]);
    }
    inst->fill_block(&c->lane_start[column], &c->lane_start[prev_column], ref, c->xor_into_next);
    c->i = next;
    if (!c->data_independent && interleaved && next < inst->segment_length) {
        c->next_ref = reference_block(inst, c->pass, c->slice, c->lane, next,
                                      c->lane_start[column].v[0]);
        prefetch_block(c->next_ref);
    }
}

static void fill_segment(const argon2_instance *inst, uint32_t pass, uint32_t slice,
                         uint32_t lane) {
    segment_cursor c;
    cursor_begin(inst, &c, pass, slice, lane);
    while (c.i < inst->segment_length) cursor_step(inst, &c, 0);
}

/* Two lanes of one slice, a block of each in turn: the lanes of a slice never reference each
 * other's current segment (RFC 9106 section 3.4.1), so any order of their blocks gives the
 * same memory.  Both segments start at the same index and have the same length. */
static void fill_segment_pair(const argon2_instance *inst, uint32_t pass, uint32_t slice,
                              uint32_t lane_a, uint32_t lane_b) {
    segment_cursor a, b;
    cursor_begin(inst, &a, pass, slice, lane_a);
    cursor_begin(inst, &b, pass, slice, lane_b);
    while (a.i < inst->segment_length) {
        cursor_step(inst, &a, 1);
        cursor_step(inst, &b, 1);
    }
}

/* The segments of this slice in lanes first, first + stride, ...: two at a time. */
static void fill_lanes(const argon2_instance *inst, uint32_t pass, uint32_t slice,
                       uint32_t first, uint32_t stride) {
    uint32_t lane = first;
    for (; lane + stride < inst->lanes; lane += 2 * stride)
        fill_segment_pair(inst, pass, slice, lane, lane + stride);
    if (lane < inst->lanes) fill_segment(inst, pass, slice, lane);
}

/* Before filling: fault in the lane's pages from the thread that fills it, so that a fresh
 * mapping's page faults (and the kernel's zeroing of each page) run in parallel
 * (see argonishche_pages_prefault in platform.h).  Blocks 0 and 1 already hold
 * data: the pre-fault keeps it. */
static void prefault_lane(const argon2_instance *inst, uint32_t lane) {
    argonishche_prefault(inst->memory + (size_t)lane * inst->lane_length,
                               (size_t)inst->lane_length * ARGONISHCHE_BLOCK_BYTES);
}

/* After the last slice, by the thread that filled the lane (so in parallel, from its caches
 * where they still hold it): nothing reads a lane's blocks but its last once the last barrier is
 * passed, and that one is the tag's input, wiped by argonishche_argon2_hash after the tag. */
static void wipe_lane(const argon2_instance *inst, uint32_t lane) {
    argonishche_secure_wipe(inst->memory + (size_t)lane * inst->lane_length,
                            (size_t)(inst->lane_length - 1) * ARGONISHCHE_BLOCK_BYTES);
}

/* ---- Lane threads -------------------------------------------------------------------------- */

/* A barrier whose size is fixed only after the threads are started, so that a thread that
 * cannot be created costs speed, not correctness: its lanes go to the threads that exist. */
typedef struct team {
    argonishche_mutex lock;
    argonishche_cond changed;
    uint32_t members;      /* set when started becomes 1 */
    uint32_t arrived;
    uint32_t generation;
    int started;
    const argon2_instance *inst;
} team;

typedef struct worker {
    team *team;
    uint32_t id;
} worker;

static void team_barrier(team *t) {
    argonishche_mutex_lock(&t->lock);
    uint32_t generation = t->generation;
    if (++t->arrived == t->members) {
        t->arrived = 0;
        t->generation++;
        argonishche_cond_broadcast(&t->changed);
    } else {
        while (generation == t->generation) argonishche_cond_wait(&t->changed, &t->lock);
    }
    argonishche_mutex_unlock(&t->lock);
}

static ARGONISHCHE_THREAD_FN(work, arg) {
    const worker *w = arg;
    team *t = w->team;
    argonishche_mutex_lock(&t->lock);
    while (!t->started) argonishche_cond_wait(&t->changed, &t->lock);
    uint32_t members = t->members;
    argonishche_mutex_unlock(&t->lock);

    const argon2_instance *inst = t->inst;
    /* Slice 0 of pass 0 references only its own lane: no barrier needed after the pre-fault. */
    if (inst->prefault)
        for (uint32_t lane = w->id; lane < inst->lanes; lane += members) prefault_lane(inst, lane);
    for (uint32_t pass = 0; pass < inst->passes; pass++) {
        for (uint32_t slice = 0; slice < SYNC_POINTS; slice++) {
            fill_lanes(inst, pass, slice, w->id, members);
            team_barrier(t);
        }
    }
    if (inst->wipe)
        for (uint32_t lane = w->id; lane < inst->lanes; lane += members) wipe_lane(inst, lane);
    return ARGONISHCHE_THREAD_RETURN;
}

static void fill_memory(const argon2_instance *inst, uint32_t threads) {
    if (threads <= 1) {
        if (inst->prefault)
            for (uint32_t lane = 0; lane < inst->lanes; lane++) prefault_lane(inst, lane);
        for (uint32_t pass = 0; pass < inst->passes; pass++)
            for (uint32_t slice = 0; slice < SYNC_POINTS; slice++)
                fill_lanes(inst, pass, slice, 0, 1);
        if (inst->wipe)
            for (uint32_t lane = 0; lane < inst->lanes; lane++) wipe_lane(inst, lane);
        return;
    }
    team t = {ARGONISHCHE_MUTEX_INIT, ARGONISHCHE_COND_INIT, 0, 0, 0, 0, inst};
    argonishche_thread *handles = calloc(threads, sizeof *handles);
    worker *workers = calloc(threads, sizeof *workers);
    uint32_t started = 1; /* the calling thread is member 0 */
    if (handles != NULL && workers != NULL) {
        for (uint32_t i = 1; i < threads; i++) {
            workers[started] = (worker){&t, started};
            if (argonishche_thread_start(&handles[started], work, &workers[started]) != 0) break;
            started++;
        }
    }
    worker self = {&t, 0};
    argonishche_mutex_lock(&t.lock);
    t.members = started;
    t.started = 1;
    argonishche_cond_broadcast(&t.changed);
    argonishche_mutex_unlock(&t.lock);
    work(&self);
    for (uint32_t i = 1; i < started; i++) argonishche_thread_join(handles[i]);
    free(handles);
    free(workers);
    argonishche_mutex_destroy(&t.lock);
    argonishche_cond_destroy(&t.changed);
}

/* ---- Entry points -------------------------------------------------------------------------- */

static uint64_t block_count(uint32_t memory_cost, uint32_t lanes) {
    /* m' = 4p * floor(m / 4p): each lane gets a whole number of segments. */
    uint64_t per_segment = (uint64_t)memory_cost / (4ULL * lanes);
    return per_segment * 4ULL * lanes;
}

size_t argonishche_argon2_memory_size(uint32_t memory_cost, uint32_t lanes) {
    if (lanes == 0) return 0;
    return (size_t)(block_count(memory_cost, lanes) * ARGONISHCHE_BLOCK_BYTES);
}

static int hash_request(const void *argon2_kernels, const void *blake2b_kernels,
                        const argonishche_argon2_request *r, int prefault) {
    const argonishche_kernel_table *fill = argon2_kernels, *hash = blake2b_kernels;
    if (r->lanes == 0 || r->lanes > 0xFFFFFF || r->time_cost == 0 || r->tag_len < 4 ||
        r->tag_len > 0xFFFFFFFFu || (uint64_t)r->memory_cost < 8ULL * r->lanes ||
        r->threads == 0 || r->threads > r->lanes ||
        (r->type != ARGONISHCHE_ARGON2D && r->type != ARGONISHCHE_ARGON2I &&
         r->type != ARGONISHCHE_ARGON2ID) ||
        (r->version != 0x10 && r->version != 0x13))
        return ARGONISHCHE_ERR_PARAMETER;
    /* RFC 9106 bounds each input's length to 2^32 - 1 bytes; a NULL input with a length is a
     * caller's bug, refused rather than read (hash_many's chunks stop at it: arena.c). */
    if ((r->password == NULL && r->password_len != 0) || (r->salt == NULL && r->salt_len != 0) ||
        (r->secret == NULL && r->secret_len != 0) ||
        (r->associated_data == NULL && r->associated_data_len != 0) || r->tag == NULL ||
        (uint64_t)r->password_len > 0xFFFFFFFFu || (uint64_t)r->salt_len > 0xFFFFFFFFu ||
        (uint64_t)r->secret_len > 0xFFFFFFFFu || (uint64_t)r->associated_data_len > 0xFFFFFFFFu)
        return ARGONISHCHE_ERR_PARAMETER;

    size_t memory_len = argonishche_argon2_memory_size(r->memory_cost, r->lanes);
    argon2_instance inst = {
        .fill_block = fill->argon2_fill_block,
        .type = r->type,
        .version = r->version,
        .passes = r->time_cost,
        .lanes = r->lanes,
        .lane_length = (uint32_t)(block_count(r->memory_cost, r->lanes) / r->lanes),
        .prefault = prefault && r->memory != NULL,
        .wipe = r->wipe_memory != 0,
    };
    inst.segment_length = inst.lane_length / SYNC_POINTS;

    argonishche_memory_claim claim;
    if (r->memory != NULL) {
        /* Kernels may use aligned vector loads: start at the first 64-byte boundary. */
        size_t skip = (size_t)(-(uintptr_t)r->memory & 63);
        if (r->memory_len < skip || r->memory_len - skip < memory_len)
            return ARGONISHCHE_ERR_MEMORY_TOO_SMALL;
        inst.memory = (argonishche_block *)((uint8_t *)r->memory + skip);
        /* Two hashes in one buffer would both return wrong tags, without an error. */
        if (!argonishche_claim_memory(&claim, inst.memory, memory_len))
            return ARGONISHCHE_ERR_MEMORY_IN_USE;
    } else {
        inst.memory = argonishche_aligned_alloc(64, memory_len);
        if (inst.memory == NULL) return ARGONISHCHE_ERR_NO_MEMORY;
    }

    uint8_t h0[72];
    initial_hash(hash, r, h0);
    fill_first_blocks(hash, &inst, h0);
    argonishche_secure_wipe(h0, sizeof h0);

    fill_memory(&inst, r->threads);

    /* Section 3.2 step 7: C = XOR of every lane's last block; Tag = H'^T(C). */
    _Alignas(64) argonishche_block final_block;
    uint8_t final_bytes[ARGONISHCHE_BLOCK_BYTES];
    memcpy(&final_block, &inst.memory[inst.lane_length - 1], sizeof final_block);
    for (uint32_t lane = 1; lane < inst.lanes; lane++) {
        const argonishche_block *last =
            &inst.memory[(size_t)lane * inst.lane_length + inst.lane_length - 1];
        for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++) final_block.v[i] ^= last->v[i];
    }
    for (int i = 0; i < ARGONISHCHE_BLOCK_WORDS; i++)
        argonishche_store64_le(final_bytes + 8 * i, final_block.v[i]);
    blake2b_long(hash, r->tag, r->tag_len, final_bytes, sizeof final_bytes);

    argonishche_secure_wipe(&final_block, sizeof final_block);
    argonishche_secure_wipe(final_bytes, sizeof final_bytes);
    if (r->wipe_memory) /* the rest was wiped by the lane threads (wipe_lane) */
        for (uint32_t lane = 0; lane < inst.lanes; lane++)
            argonishche_secure_wipe(
                &inst.memory[(size_t)lane * inst.lane_length + inst.lane_length - 1],
                ARGONISHCHE_BLOCK_BYTES);
    if (r->memory == NULL)
        argonishche_aligned_free(inst.memory);
    else
        argonishche_release_memory(&claim);
    return ARGONISHCHE_OK;
}

int argonishche_argon2_hash(const void *argon2_kernels, const void *blake2b_kernels,
                            const argonishche_argon2_request *r) {
    return hash_request(argon2_kernels, blake2b_kernels, r, 0);
}

int argonishche_argon2_hash_prefault(const void *argon2_kernels, const void *blake2b_kernels,
                                     const argonishche_argon2_request *r) {
    return hash_request(argon2_kernels, blake2b_kernels, r, 1);
}
