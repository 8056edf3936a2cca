/*
 * arena.c - per-thread Argon2 work memory kept between hashes, managed entirely in C.
 *
 * Why in C, not in Python:
 *   - One C call acquires the thread's memory, hashes and gives it back.  A Python exception
 *     (a signal handler's, say) can only arrive before or after that call, never between
 *     "taken" and "given back", so no memory is ever left marked busy.
 *   - Mapping, pre-faulting, wiping and unmapping run without the GIL (cffi releases it), so a
 *     large first hash on a new thread does not stall every other Python thread.
 *   - A thread-specific-data destructor (Windows: a fiber-local-storage callback) returns a thread's memory when the thread ends, however
 *     it was started (threading, _thread, a C library's or an embedding server's thread).
 *   - fork() handlers (POSIX only: Windows has no fork) leave the child with free locks and without the memory of threads that do
 *     not exist in it (nor locked memory, whose lock the child did not inherit).
 *
 * Every list below is guarded by one mutex, held for list updates and trims, never while
 * hashing or mapping.  A slot is one thread's memory for one arena; it is busy while a hash on
 * that thread uses it, and nothing but that hash touches a busy slot's memory.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_POPULATE, madvise */
#include "platform.h"       /* first: threads, thread slots, mappings (see there) */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argonishche_core.h"

typedef struct slot {
    struct slot *next_in_arena;
    struct slot *next_in_thread;
    argonishche_arena *arena;
    void *memory;       /* a mapping of `size` bytes, or NULL */
    size_t size;
#if ARGONISHCHE_HAVE_FORK
    pthread_t owner;    /* only a forked child asks whose it is */
#endif
    int busy;           /* a hash is using `memory` */
    int dirty;          /* the last hash opted out of the wipe: wipe before unmapping */
    int orphaned;       /* its thread does not exist in this (forked) process: never used */
} slot;

struct argonishche_arena {
    argonishche_arena *next;
    slot *slots;
    int flags;
};

static argonishche_mutex lock = ARGONISHCHE_MUTEX_INIT;
static argonishche_once_flag once = ARGONISHCHE_ONCE_INIT;
static argonishche_tls_key thread_slots; /* the calling thread's slots, one per arena it used */
static argonishche_arena *arenas;
static argonishche_memory_claim *claims; /* work memory of the hashes running now */

static const size_t huge_page = 2u << 20;

/* ---- mappings ---------------------------------------------------------------------------- */

/* Not a flag of the API: the mapping is kept after the hash (within the retain bound). */
#define KEPT (1 << 8)

/* Where huge pages are asked for.  The per-size policy of work memory (argonishche_arena_argon2_hash
 * and grow decide):
 *   - memory a thread keeps between hashes (up to ARGONISHCHE_ARENA_RETAIN_MIB): from 2 MiB up
 *     advised for transparent huge pages, rounded up to whole 2 MiB pages and pre-faulted, so
 *     that a hash's random references do not miss the TLB on every 4 KiB page (32 MiB is 8,192
 *     small pages, 16 huge ones): 1.15x at 32 MiB.  Below 2 MiB a huge page could not be used
 *     whole: small pages, pre-faulted.
 *   - memory mapped for one hash and unmapped after it (above the retain bound, and above the
 *     arena's bound): small pages.  Fresh huge pages are faster back to back (2 GiB p=4: 0.66 s
 *     against 1.03 s) but a VM with free page reporting (virtio-balloon, page_reporting_order 9,
 *     e.g. Firecracker) gives every freed 2 MiB block back to the host, and faulting it in again
 *     after a few idle seconds cost 4-5 s instead (256 MiB: 0.35-0.46 s against 0.19 s); small
 *     pages are not affected.  Above the arena's bound the mapping is faulted in and wiped by the
 *     lane threads in parallel, each its own lanes (argon2.c).
 *   - the hugepages allocator: a fresh mapping per hash, advised at any size, faulted on use.
 * Where the OS gives no huge pages (THP "never", Windows) the advice is ignored. */
static int wants_huge_pages(size_t size, int flags) {
    return (flags & ARGONISHCHE_ARENA_HUGE_PAGES) || ((flags & KEPT) && size >= huge_page);
}

/* A mapping of `size` bytes for an arena with `flags`, or NULL with *status and *os_error set;
 * pre-faulted unless `fault_on_use`, a page fault per page (argonishche_pages_prefault): never
 * with MAP_POPULATE or MADV_POPULATE_WRITE, which fault memory in under the memory-map lock, so
 * that every other thread's mmap (an event loop starting a thread, say) waited for it. */
static void *map_pages(size_t size, int flags, int fault_on_use, int *status, int *os_error) {
    /* Without huge pages (Windows) the advice is dropped: an ordinary mapping. */
    int huge = ARGONISHCHE_HAVE_HUGE_PAGES && wants_huge_pages(size, flags);
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
    madvise(memory, size, MADV_DONTDUMP); /* password-derived data has no place in core dumps */
#endif
#ifdef MADV_HUGEPAGE
    if (huge) madvise(memory, size, MADV_HUGEPAGE);
#endif
    /* After the advice (huge pages are taken on fault), before mlock (which would otherwise
     * fault it all in at once, holding the lock). */
    if (!fault_on_use) argonishche_pages_prefault(memory, size);
    int lock_error;
    if ((flags & ARGONISHCHE_ARENA_LOCKED) &&
        (lock_error = argonishche_pages_lock(memory, size)) != 0) {
        *status = ARGONISHCHE_ERR_LOCK, *os_error = lock_error;
        argonishche_pages_unmap(memory, size);
        return NULL;
    }
    return memory;
}

/* An arena slot's mapping.  Pre-faulted here only when locked (mlock would fault it in at
 * once); otherwise faulted in by the first hash's lane threads, in parallel, each its own lanes
 * (the arena's), or on use (the hugepages allocator's: one fault per 2 MiB page). */
static void *map(size_t size, int flags, int *status, int *os_error) {
    return map_pages(size, flags, !(flags & ARGONISHCHE_ARENA_LOCKED), status, os_error);
}

/* ---- statistics for tests ---------------------------------------------------------------- */

static size_t largest_populate; /* bytes, the most one pre-fault faulted in at a time */

void argonishche_note_populate(size_t bytes) {
    size_t seen = __atomic_load_n(&largest_populate, __ATOMIC_RELAXED);
    while (bytes > seen && !__atomic_compare_exchange_n(&largest_populate, &seen, bytes, 1,
                                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

size_t argonishche_largest_populate(int reset) {
    if (reset) return __atomic_exchange_n(&largest_populate, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&largest_populate, __ATOMIC_RELAXED);
}

void argonishche_prefault(void *memory, size_t size) { argonishche_pages_prefault(memory, size); }

static void unmap(void *memory, size_t size, int wipe) {
    if (memory == NULL) return;
    if (wipe) argonishche_secure_wipe(memory, size);
    argonishche_pages_unmap(memory, size); /* also unlocks */
}

/* Whole pages, and whole 2 MiB pages where huge pages are wanted. */
static size_t mapping_size(size_t needed, int flags) {
    size_t unit = wants_huge_pages(needed, flags) ? huge_page : argonishche_page_size();
    return (needed + unit - 1) / unit * unit;
}

/* ---- threads and fork -------------------------------------------------------------------- */

static void unlink_from_arena(slot *s) {
    for (slot **p = &s->arena->slots; *p != NULL; p = &(*p)->next_in_arena) {
        if (*p == s) {
            *p = s->next_in_arena;
            return;
        }
    }
}

/* The thread ends (no hash of its own can be running): its slots' memory goes back to the OS. */
static ARGONISHCHE_TLS_DESTRUCTOR(thread_ended, value) {
    slot *next;
    argonishche_mutex_lock(&lock);
    for (slot *s = value; s != NULL; s = next) {
        next = s->next_in_thread;
        unlink_from_arena(s);
        unmap(s->memory, s->size, s->dirty);
        free(s);
    }
    argonishche_mutex_unlock(&lock);
}

#if ARGONISHCHE_HAVE_FORK
static void before_fork(void) { pthread_mutex_lock(&lock); }

static void after_fork_in_parent(void) { pthread_mutex_unlock(&lock); }

/* Only the forking thread exists in the child, holding the lock (before_fork took it).  Other
 * threads' memory is a copy-on-write view of theirs, maybe in the middle of a hash: unmapping it
 * drops it (wiping would copy every page first).  Locked memory is dropped too: the child did
 * not inherit the lock, and the next hash maps and locks anew.  Other threads' slots stay marked
 * busy and orphaned, never used again: freeing them would walk lists that their threads may have
 * been updating when the fork happened. */
static void after_fork_in_child(void) {
    pthread_t self = pthread_self();
    for (argonishche_arena *a = arenas; a != NULL; a = a->next) {
        for (slot *s = a->slots; s != NULL; s = s->next_in_arena) {
            int mine = pthread_equal(s->owner, self);
            if (!mine || (a->flags & ARGONISHCHE_ARENA_LOCKED)) {
                if (s->memory != NULL) munmap(s->memory, s->size);
                s->memory = NULL, s->size = 0;
            }
            if (!mine) s->busy = 1, s->orphaned = 1;
        }
    }
    claims = NULL; /* the hashes that claimed memory ran on threads the child does not have */
    pthread_mutex_unlock(&lock);
}
#endif /* ARGONISHCHE_HAVE_FORK: Windows has no fork */

static void initialise(void) {
    argonishche_tls_create(&thread_slots, thread_ended);
#if ARGONISHCHE_HAVE_FORK
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
#endif
}

/* ---- the arena --------------------------------------------------------------------------- */

argonishche_arena *argonishche_arena_new(int flags) {
    argonishche_call_once(&once, initialise);
    argonishche_arena *a = calloc(1, sizeof *a);
    if (a == NULL) return NULL;
    a->flags = flags;
    argonishche_mutex_lock(&lock);
    a->next = arenas;
    arenas = a;
    argonishche_mutex_unlock(&lock);
    return a;
}

/* The calling thread's slot of `a`, now busy; NULL if out of memory, or if it is busy already
 * (only possible in a forked child, for a slot of a thread that is gone). */
static slot *take_slot(argonishche_arena *a) {
    argonishche_mutex_lock(&lock);
    slot *first = argonishche_tls_get(thread_slots), *s;
    for (s = first; s != NULL && s->arena != a; s = s->next_in_thread) {
    }
    if (s == NULL && (s = calloc(1, sizeof *s)) != NULL) {
        s->arena = a;
#if ARGONISHCHE_HAVE_FORK
        s->owner = pthread_self();
#endif
        s->next_in_thread = first;
        s->next_in_arena = a->slots;
        a->slots = s;
        argonishche_tls_set(thread_slots, s);
    }
    if (s != NULL && s->busy) s = NULL;
    if (s != NULL) s->busy = 1;
    argonishche_mutex_unlock(&lock);
    return s;
}

/* Gives the slot back, keeping at most `retain` bytes mapped. */
static void give_back(slot *s, size_t retain, int dirty) {
    void *drop = NULL;
    size_t drop_size = 0;
    argonishche_mutex_lock(&lock);
    s->dirty = dirty;
    if (s->size > retain) {
        drop = s->memory, drop_size = s->size;
        s->memory = NULL, s->size = 0;
    }
    s->busy = 0;
    argonishche_mutex_unlock(&lock);
    unmap(drop, drop_size, dirty);
}

/* Makes the busy slot's mapping at least `needed` bytes (no lock needed: the slot is ours);
 * `kept`: it will stay mapped after the hash (see wants_huge_pages).  *fresh: a new mapping,
 * not faulted in yet (except locked memory). */
static int grow(slot *s, size_t needed, int kept, int *fresh, int *os_error) {
    *fresh = 0;
    if (s->size >= needed) return ARGONISHCHE_OK;
    int status = ARGONISHCHE_OK;
    int flags = s->arena->flags | (kept ? KEPT : 0);
    size_t size = mapping_size(needed, flags);
    void *old = s->memory;
    size_t old_size = s->size;
    s->memory = NULL, s->size = 0;
    unmap(old, old_size, s->dirty);
    s->dirty = 0;
    s->memory = map(size, flags, &status, os_error);
    if (s->memory != NULL) s->size = size, *fresh = 1;
    return status;
}

int argonishche_arena_argon2_hash(argonishche_arena *a, const void *argon2_kernels,
                                  const void *blake2b_kernels, argonishche_argon2_request *r,
                                  size_t max_bytes, size_t retain_bytes, int *os_error) {
    size_t needed = argonishche_argon2_memory_size(r->memory_cost, r->lanes);
    *os_error = 0;
    r->memory = NULL, r->memory_len = 0;
    if (needed > max_bytes) {
        /* Locked memory has no unlocked fallback: that would break its promise. */
        if (a->flags & ARGONISHCHE_ARENA_LOCKED) return ARGONISHCHE_ERR_OVER_BOUND;
        /* A fresh mapping for this hash alone (small pages: see wants_huge_pages), faulted in
         * by the lane threads; the driver wipes it (in parallel) unless the caller opted out. */
        int status = ARGONISHCHE_OK;
        size_t size = mapping_size(needed, 0);
        void *memory = map_pages(size, 0, 1, &status, os_error);
        if (memory == NULL) {
            *os_error = 0; /* reported like the driver's own allocation failing, as before */
            return status;
        }
        r->memory = memory, r->memory_len = size;
        status = argonishche_argon2_hash_prefault(argon2_kernels, blake2b_kernels, r);
        r->memory = NULL, r->memory_len = 0;
        argonishche_pages_unmap(memory, size);
        return status;
    }
    slot *s = take_slot(a);
    if (s == NULL) return ARGONISHCHE_ERR_NO_MEMORY;
    int fresh;
    int status = grow(s, needed, mapping_size(needed, a->flags | KEPT) <= retain_bytes, &fresh,
                      os_error);
    if (status == ARGONISHCHE_OK) {
        r->memory = s->memory, r->memory_len = s->size;
        /* A fresh arena mapping is faulted in by the lane threads, in parallel (the hugepages
         * allocator's on use, and locked memory was by mlock). */
        int prefault =
            fresh && !(a->flags & (ARGONISHCHE_ARENA_HUGE_PAGES | ARGONISHCHE_ARENA_LOCKED));
        status = prefault ? argonishche_argon2_hash_prefault(argon2_kernels, blake2b_kernels, r)
                          : argonishche_argon2_hash(argon2_kernels, blake2b_kernels, r);
        r->memory = NULL, r->memory_len = 0;
    }
    give_back(s, retain_bytes, !r->wipe_memory);
    return status;
}

/* ---- memory claims (see argonishche_core.h) ------------------------------------------------ */

int argonishche_claim_memory(argonishche_memory_claim *claim, const void *start, size_t len) {
    argonishche_call_once(&once, initialise); /* for the fork handler that clears the list */
    claim->start = (uintptr_t)start, claim->end = (uintptr_t)start + len;
    argonishche_mutex_lock(&lock);
    for (argonishche_memory_claim *c = claims; c != NULL; c = c->next) {
        if (claim->start < c->end && c->start < claim->end) {
            argonishche_mutex_unlock(&lock);
            return 0;
        }
    }
    claim->next = claims;
    claims = claim;
    argonishche_mutex_unlock(&lock);
    return 1;
}

void argonishche_release_memory(argonishche_memory_claim *claim) {
    argonishche_mutex_lock(&lock);
    for (argonishche_memory_claim **p = &claims; *p != NULL; p = &(*p)->next) {
        if (*p == claim) {
            *p = claim->next;
            break;
        }
    }
    argonishche_mutex_unlock(&lock);
}

size_t argonishche_arena_trim(argonishche_arena *a) {
    size_t freed = 0;
    /* Under the lock, so no hash takes a slot half-unmapped; trims are rare and brief next to
     * the hashes they follow. */
    argonishche_mutex_lock(&lock);
    for (slot *s = a->slots; s != NULL; s = s->next_in_arena) {
        if (s->busy || s->memory == NULL) continue;
        freed += s->size;
        unmap(s->memory, s->size, s->dirty);
        s->memory = NULL, s->size = 0, s->dirty = 0;
    }
    argonishche_mutex_unlock(&lock);
    return freed;
}

void *argonishche_arena_thread_memory(argonishche_arena *a, size_t *size) {
    void *memory = NULL;
    *size = 0;
    argonishche_mutex_lock(&lock);
    for (slot *s = argonishche_tls_get(thread_slots); s != NULL;
         s = s->next_in_thread) {
        if (s->arena == a) memory = s->memory, *size = s->size;
    }
    argonishche_mutex_unlock(&lock);
    return memory;
}

size_t argonishche_arena_cached_bytes(argonishche_arena *a) {
    size_t total = 0;
    argonishche_mutex_lock(&lock);
    for (slot *s = a->slots; s != NULL; s = s->next_in_arena)
        if (!s->orphaned) total += s->size;
    argonishche_mutex_unlock(&lock);
    return total;
}
