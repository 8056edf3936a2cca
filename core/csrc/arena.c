/*
 * arena.c - an Argon2 hash in work memory leased from the process's budget (work_memory.c):
 * admitted, given memory (kept memory of the allocator's kind, or a fresh mapping), hashed and
 * given back, all in the one C call that hashes.
 *
 * Why one C call: a Python exception (a signal handler's, say) can only arrive before or after
 * it, never between "taken" and "given back", so no memory and no share of the budget is ever
 * left taken; and mapping, faulting in, wiping and unmapping run without the GIL (cffi releases
 * it), so a large first hash does not stall every other Python thread.
 *
 * hash_many's chunks hash several inputs in one such call and one lease: the memory is wiped
 * once, before it leaves the call, instead of after every hash (see run_hashes).
 */
#include "platform.h" /* first: threads, mappings (see there) */

#include <errno.h>
#include <stdlib.h>

#include "work_memory.h"

/* An allocator's kind of memory.  The memory itself belongs to the process (work_memory.c). */
struct argonishche_arena {
    int flags;
};

/* A mapping of `size` bytes of `kind`, or NULL with *status and *os_error set.
 *   - `huge`: 2 MiB aligned and advised for transparent huge pages (work_memory.c's
 *     huge_pages_for says when, and why not always); where the OS gives none (THP "never",
 *     Windows) the advice is ignored.
 *   - Marked MADV_DONTDUMP: password-derived data has no place in core dumps.
 *   - Locked (mlock) for the locked allocator, after faulting it in a page at a time (mlock
 *     alone would fault it all in at once, holding the memory-map lock).
 * Otherwise it is faulted in by the hash's lane threads, in parallel, each its own lanes. */
static void *map(size_t size, int kind, int huge, int *status, int *os_error) {
    huge = ARGONISHCHE_HAVE_HUGE_PAGES && huge;
    size_t huge_page = 2u << 20;
    /* Only 2 MiB-aligned ranges can be huge pages: map one more and cut the edges off. */
    size_t span = huge ? size + huge_page : size;
    uint8_t *raw = argonishche_pages_map(span, 0, os_error);
    if (raw == NULL) {
        *status = ARGONISHCHE_ERR_NO_MEMORY;
        return NULL;
    }
    uint8_t *memory = raw;
#if ARGONISHCHE_HAVE_HUGE_PAGES
    if (huge) {
        memory = raw + (-(uintptr_t)raw & (huge_page - 1));
        if (memory > raw) munmap(raw, (size_t)(memory - raw));
        if (raw + span > memory + size) munmap(memory + size, (size_t)(raw + span - memory - size));
    }
#endif
#ifdef MADV_DONTDUMP
    madvise(memory, size, MADV_DONTDUMP);
#endif
#ifdef MADV_HUGEPAGE
    if (huge) madvise(memory, size, MADV_HUGEPAGE);
#endif
    int lock_error;
    if (kind & ARGONISHCHE_ARENA_LOCKED) {
        argonishche_prefault(memory, size);
        if ((lock_error = argonishche_pages_lock(memory, size)) != 0) {
            *status = ARGONISHCHE_ERR_LOCK, *os_error = lock_error;
            argonishche_pages_unmap(memory, size);
            return NULL;
        }
    }
    return memory;
}

/* A refusal that memory given back by other hashes may undo: the OS is out of memory (or of
 * address space: RLIMIT_AS, RLIMIT_DATA, a cgroup) for now, not refusing on principle. */
static int may_pass(int status, int os_error) {
    return (status == ARGONISHCHE_ERR_NO_MEMORY || status == ARGONISHCHE_ERR_LOCK) &&
           (os_error == ENOMEM || os_error == EAGAIN);
}

/* One arena per combination of flags, never allocated and never freed: an arena is a kind of
 * memory, and the memory itself is the process's, so allocators of one kind may share it. */
static argonishche_arena kinds[] = {{0}, {ARGONISHCHE_ARENA_LOCKED}, {ARGONISHCHE_ARENA_HUGE_PAGES},
                                    {ARGONISHCHE_ARENA_LOCKED | ARGONISHCHE_ARENA_HUGE_PAGES}};

argonishche_arena *argonishche_arena_new(int flags) {
    if (flags & ~(ARGONISHCHE_ARENA_LOCKED | ARGONISHCHE_ARENA_HUGE_PAGES)) return NULL;
    return &kinds[flags];
}

/* Hashes 0..count-1 of one lease: `r` itself (inputs NULL, count 1), or `r` with inputs[i]'s
 * password and salt and tag i of `tags`.  Stops at the first failure; *done: the tags written.
 *
 * Only the last hash of a mapping wipes it (in the driver, by the lane threads): in between the
 * memory never leaves this call, and no hash reads another's blocks (RFC 9106 section 3.4.1.1:
 * in the first pass a block is referenced only once this hash has made it).  Heap memory is the
 * driver's own per hash: each wipes it. */
static int run_hashes(const void *argon2_kernels, const void *blake2b_kernels,
                      const argonishche_argon2_request *r, const argonishche_argon2_input *inputs,
                      uint32_t count, uint8_t *tags, void *memory, size_t size, int prefault,
                      uint32_t *done) {
    argonishche_argon2_request one = *r;
    one.memory = memory, one.memory_len = memory != NULL ? size : 0;
    int status = ARGONISHCHE_OK;
    uint32_t i = 0;
    for (; i < count; i++) {
        if (inputs != NULL) {
            one.password = inputs[i].password, one.password_len = inputs[i].password_len;
            one.salt = inputs[i].salt, one.salt_len = inputs[i].salt_len;
            one.tag = tags + (size_t)i * r->tag_len;
        }
        one.wipe_memory = r->wipe_memory && (memory == NULL || i == count - 1);
        /* Fresh memory is faulted in by the first hash's lane threads (see below). */
        status = prefault && i == 0
                     ? argonishche_argon2_hash_prefault(argon2_kernels, blake2b_kernels, &one)
                     : argonishche_argon2_hash(argon2_kernels, blake2b_kernels, &one);
        if (status != ARGONISHCHE_OK) break;
    }
    *done = i;
    /* A failed hash wipes nothing, and the blocks of the hash before it are still there; so may
     * be a dirty mapping's (its last hash opted out).  Wiped before the lease ends. */
    if (status != ARGONISHCHE_OK && memory != NULL && r->wipe_memory)
        argonishche_secure_wipe(memory, size);
    return status;
}

static int hash_leased(argonishche_arena *a, const void *argon2_kernels,
                       const void *blake2b_kernels, argonishche_argon2_request *r,
                       const argonishche_argon2_input *inputs, uint32_t count, uint8_t *tags,
                       uint32_t *done, argonishche_memory_ticket *ticket, uint32_t wait_ms,
                       int *os_error) {
    *os_error = 0;
    *done = 0;
    r->memory = NULL, r->memory_len = 0;
    if (r->lanes == 0) return ARGONISHCHE_ERR_PARAMETER;
    size_t needed = argonishche_argon2_memory_size(r->memory_cost, r->lanes);
    int kind = a != NULL ? a->flags : ARGONISHCHE_LEASE_HEAP;
    argonishche_lease lease;
    int status = argonishche_work_memory_take(ticket, needed, kind, wait_ms, &lease);
    if (status != ARGONISHCHE_OK) return status;
    if (kind & ARGONISHCHE_LEASE_HEAP) { /* the system allocator: the driver's malloc */
        status = run_hashes(argon2_kernels, blake2b_kernels, r, inputs, count, tags, NULL, 0, 0,
                            done);
        /* malloc refused, before anything was computed: as for a mapping, below (a later
         * hash's refusal is reported as it is: the ones before it are done) */
        if (status != ARGONISHCHE_ERR_NO_MEMORY || *done != 0) {
            argonishche_work_memory_give_back(&lease, NULL, 0, 0);
            return status;
        }
        return argonishche_work_memory_refused(ticket, &lease, wait_ms != 0);
    }
    void *memory = lease.memory;
    int fresh = memory == NULL;
    if (fresh) memory = map(lease.size, kind, lease.huge, &status, os_error);
    if (memory == NULL && may_pass(status, *os_error)) {
        /* While other hashes hold memory, the budget was more than the OS gives: wait for them
         * (a login must not fail for that, nor be told its password is wrong). */
        if (argonishche_work_memory_refused(ticket, &lease, wait_ms != 0) ==
            ARGONISHCHE_WAIT_MEMORY) {
            *os_error = 0;
            return ARGONISHCHE_WAIT_MEMORY;
        }
        return status; /* nothing else held memory: a real refusal */
    }
    if (memory != NULL) {
        /* Fresh memory is faulted in by the lane threads, in parallel, each its own lanes;
         * the hugepages allocator's on use (one fault per 2 MiB), and locked memory was by
         * map(). */
        int prefault = fresh && !(kind & (ARGONISHCHE_ARENA_HUGE_PAGES | ARGONISHCHE_ARENA_LOCKED));
        status = run_hashes(argon2_kernels, blake2b_kernels, r, inputs, count, tags, memory,
                            lease.size, prefault, done);
    }
    /* The hugepages allocator's memory is never kept: a fresh mapping per call is what it is. */
    argonishche_work_memory_give_back(&lease, memory, !(kind & ARGONISHCHE_ARENA_HUGE_PAGES),
                                      !r->wipe_memory);
    return status;
}

int argonishche_arena_argon2_hash(argonishche_arena *a, const void *argon2_kernels,
                                  const void *blake2b_kernels, argonishche_argon2_request *r,
                                  argonishche_memory_ticket *ticket, uint32_t wait_ms,
                                  int *os_error) {
    uint32_t done;
    return hash_leased(a, argon2_kernels, blake2b_kernels, r, NULL, 1, NULL, &done, ticket,
                       wait_ms, os_error);
}

int argonishche_arena_argon2_hash_many(argonishche_arena *a, const void *argon2_kernels,
                                       const void *blake2b_kernels,
                                       argonishche_argon2_request *r,
                                       const argonishche_argon2_input *inputs, uint32_t count,
                                       uint8_t *tags, uint32_t *done,
                                       argonishche_memory_ticket *ticket, uint32_t wait_ms,
                                       int *os_error) {
    *os_error = 0;
    *done = 0;
    if (count == 0) return ARGONISHCHE_OK;
    if (inputs == NULL || tags == NULL) return ARGONISHCHE_ERR_PARAMETER;
    return hash_leased(a, argon2_kernels, blake2b_kernels, r, inputs, count, tags, done, ticket,
                       wait_ms, os_error);
}

uint64_t argonishche_arena_trim(argonishche_arena *a) {
    return argonishche_work_memory_trim(a->flags);
}

uint64_t argonishche_arena_cached_bytes(argonishche_arena *a) {
    return argonishche_work_memory_idle_bytes(a->flags);
}

uint32_t argonishche_arena_idle_mappings(argonishche_arena *a, uintptr_t *addresses,
                                         uint64_t *sizes, uint32_t max) {
    return argonishche_work_memory_idle_list(a->flags, addresses, sizes, max);
}
