/*
 * work_memory.c - the process's Argon2 work memory: one budget, admission in arrival order, and
 * the mappings finished hashes leave for the next ones, whatever thread runs them.
 *
 * Why one pool for the process: a server's hashes run on whichever worker thread is free, so
 * memory kept per thread is reused only by luck, and bounded only per thread (8 threads could
 * keep 8 times the bound).  Here any hash reuses memory any other hash has finished with.
 *
 * Why admission: every login asks for the whole of its memory at once, and a burst of them asks
 * for their sum (64 verifications at Django's 100 MiB: 6.4 GiB) whatever the machine has.  A
 * hash whose memory would take the process over its budget waits, in arrival order, until
 * running hashes give theirs back; idle memory is given back first to make room.  The waiting
 * happens here in C, with the GIL released, in slices: the caller returns to Python between
 * them (signal handlers run, the deadline is checked there) and comes back with its ticket,
 * keeping its place.
 *
 * Why idle memory is kept, and given back after a while: reusing mapped memory skips a page
 * fault and the kernel's zeroing per page (the largest cost of a hash from 32 MiB up); keeping it
 * forever would hold a burst's memory after the burst.
 *
 * Everything below is guarded by one mutex, held for bookkeeping only: never while mapping,
 * faulting in, hashing, wiping or unmapping.
 */
#include "platform.h" /* first: it sets the feature macros */

#include <stdlib.h>

#include "work_memory.h"

/* An idle mapping, kept for the next hash of its kind. */
typedef struct kept_mapping {
    struct kept_mapping *next; /* the list is oldest first: appended when a hash ends */
    void *memory;
    size_t size;
    int kind;
    int huge;
    int dirty;            /* its last hash opted out of the wipe: wiped before it is unmapped */
    uint64_t idle_since;  /* argonishche_monotonic_ns() */
} kept_mapping;

static argonishche_mutex lock = ARGONISHCHE_MUTEX_INIT;
static argonishche_once_flag once = ARGONISHCHE_ONCE_INIT;
static argonishche_cond room;    /* broadcast when memory is given back or the budget grows */
static argonishche_cond expired; /* wakes the reaper early: a trim or a new idle time */

static struct {
    uint64_t budget, idle_ns;
    uint64_t in_use, idle, high_water;
    uint64_t leaving; /* given back but not unmapped yet: still counted, so that no hash maps
                         its memory while another's is still there */
    uint64_t maps, reuses, waits;
    uint32_t running, waiting;
    int huge_kept; /* kept memory from 2 MiB up gets huge pages (see huge_pages_for) */
    argonishche_memory_ticket *queue_head, *queue_tail;
    kept_mapping *kept;
    argonishche_lease *busy;
    argonishche_memory_claim *claims; /* caller memory of the hashes running now */
    uint64_t releases;                /* memory given back so far (refused tickets wait for one) */
    uint64_t generation;              /* forks survived: a ticket of an earlier one is stale */
    int reaper_running;
} pool = {.budget = UINT64_MAX, .idle_ns = 10 * 1000000000ull};

static const size_t huge_page = 2u << 20;
/* A queue head whose owner has not called for this long is taken to be abandoned (its Python
 * frame died without closing it) and dropped, so that it cannot hold up everyone behind it.  Far
 * longer than a live owner spends between two slices, even waiting for the GIL. */
static const uint64_t abandoned_ns = 5 * 1000000000ull;

/* ---- mappings ---------------------------------------------------------------------------- */

/* Whether a mapping of `kind` for `needed` bytes gets huge pages: the hugepages allocator's
 * always; kept memory from 2 MiB up when configured so (the Python side decides: on, except
 * where the OS gives freed memory back to a hypervisor).  Huge pages make a hash's random
 * references miss the TLB less, most at 1-2 GiB, and fault 512 times fewer; but a fresh one
 * needs a whole free 2 MiB block, and a VM with free page reporting has given exactly those to
 * its host, so that after an idle pause they fault in slower than small pages, which come from
 * memory the guest still has (docs/memory.md has the figures). */
static int huge_pages_for(size_t needed, int kind) {
    if (kind & ARGONISHCHE_LEASE_HEAP) return 0;
    return (kind & ARGONISHCHE_ARENA_HUGE_PAGES) || (pool.huge_kept && needed >= huge_page);
}

/* Bytes a lease for `needed` bytes takes: whole pages, or whole 2 MiB pages if `huge`; `needed`
 * on the C heap. */
static size_t lease_size(size_t needed, int kind, int huge) {
    if (kind & ARGONISHCHE_LEASE_HEAP) return needed;
    size_t unit = huge ? huge_page : argonishche_page_size();
    return (needed + unit - 1) / unit * unit;
}

void argonishche_unmap_work_memory(void *memory, size_t size, int dirty) {
    if (memory == NULL) return;
    if (dirty) argonishche_secure_wipe(memory, size);
#if ARGONISHCHE_HAVE_HUGE_PAGES /* POSIX: any page-aligned part of a mapping can go */
    /* munmap holds the memory-map lock while it zaps the range: pieces of 32 MiB bound how long
     * another thread's mmap (a thread start's stack) waits behind it. */
    const size_t unmap_piece = 32u << 20;
    for (size_t done = 0; done < size; done += unmap_piece)
        argonishche_pages_unmap((uint8_t *)memory + done,
                                size - done < unmap_piece ? size - done : unmap_piece);
#else /* Windows releases a whole mapping at once */
    argonishche_pages_unmap(memory, size);
#endif
}

/* The memory given back no longer counts once it is unmapped: room for those who wait.  The
 * lock not held. */
static void left(uint64_t bytes) {
    if (bytes == 0) return;
    argonishche_mutex_lock(&lock);
    pool.leaving -= bytes;
    pool.releases++;
    argonishche_cond_broadcast(&room);
    argonishche_mutex_unlock(&lock);
}

/* Unmaps what drop_* moved onto a list, then stops counting it.  The lock not held. */
static void unmap_all(kept_mapping *list) {
    uint64_t bytes = 0;
    for (kept_mapping *k = list, *next; k != NULL; k = next) {
        next = k->next;
        argonishche_unmap_work_memory(k->memory, k->size, k->dirty);
        bytes += k->size;
        free(k);
    }
    left(bytes);
}

/* ---- bookkeeping (the lock held) --------------------------------------------------------- */

/* Everything the budget counts: running hashes', idle, and leaving. */
static uint64_t held(void) { return pool.in_use + pool.idle + pool.leaving; }

static void note_held(void) {
    if (held() > pool.high_water) pool.high_water = held();
}

/* Moves idle mappings onto *dropped, oldest first, until what stays held, with `extra` more,
 * fits the budget (what it drops still counts, as leaving, until it is unmapped). */
static void drop_idle(uint64_t extra, kept_mapping **dropped) {
    uint64_t staying = held();
    while (pool.kept != NULL && staying + extra > pool.budget) {
        kept_mapping *k = pool.kept;
        pool.kept = k->next;
        staying -= k->size;
        pool.idle -= k->size, pool.leaving += k->size;
        k->next = *dropped;
        *dropped = k;
    }
}

/* Idle mappings of `kind` (-1: every kind) onto *dropped, all of them. */
static uint64_t drop_kind(int kind, kept_mapping **dropped) {
    uint64_t freed = 0;
    for (kept_mapping **p = &pool.kept; *p != NULL;) {
        kept_mapping *k = *p;
        if (kind != -1 && k->kind != kind) {
            p = &k->next;
            continue;
        }
        *p = k->next;
        pool.idle -= k->size, pool.leaving += k->size;
        freed += k->size;
        k->next = *dropped;
        *dropped = k;
    }
    return freed;
}

/* Idle mappings kept longer than the idle time onto *dropped; the oldest remaining one's
 * expiry in *next_expiry (0 if none is left). */
static void drop_expired(uint64_t now, kept_mapping **dropped, uint64_t *next_expiry) {
    *next_expiry = 0;
    for (kept_mapping **p = &pool.kept; *p != NULL;) {
        kept_mapping *k = *p;
        if (now - k->idle_since < pool.idle_ns) {
            uint64_t at = k->idle_since + pool.idle_ns;
            if (*next_expiry == 0 || at < *next_expiry) *next_expiry = at;
            p = &k->next;
            continue;
        }
        *p = k->next;
        pool.idle -= k->size, pool.leaving += k->size;
        k->next = *dropped;
        *dropped = k;
    }
}

/* The smallest idle mapping of `kind` that holds `size` bytes (a lease's, rounded to its pages)
 * without wasting more than it holds (a 2 GiB mapping kept for a 100 MiB hash would shut out
 * others), unlinked; or NULL. */
static kept_mapping *take_kept(size_t size, int kind) {
    kept_mapping **best = NULL;
    for (kept_mapping **p = &pool.kept; *p != NULL; p = &(*p)->next) {
        kept_mapping *k = *p;
        if (k->kind == kind && k->size >= size && k->size - size <= size &&
            (best == NULL || k->size < (*best)->size))
            best = p;
    }
    if (best == NULL) return NULL;
    kept_mapping *k = *best;
    *best = k->next;
    pool.idle -= k->size;
    return k;
}

static void unqueue(argonishche_memory_ticket *t) {
    argonishche_memory_ticket **p = &pool.queue_head, *previous = NULL;
    for (; *p != NULL && *p != t; previous = *p, p = &(*p)->next) {
    }
    if (*p == NULL) return;
    *p = t->next;
    if (pool.queue_tail == t) pool.queue_tail = previous;
    t->next = NULL, t->queued = 0;
    pool.waiting--;
    argonishche_cond_broadcast(&room); /* the next in line may fit */
}

static void enqueue(argonishche_memory_ticket *t, uint64_t wanted) {
    t->next = NULL, t->queued = 1, t->wanted = wanted, t->generation = pool.generation;
    if (pool.queue_tail != NULL)
        pool.queue_tail->next = t;
    else
        pool.queue_head = t;
    pool.queue_tail = t;
    pool.waiting++;
    pool.waits++;
}

/* First in line: a ticket that had its turn, whose memory the OS then refused. */
static void enqueue_first(argonishche_memory_ticket *t, uint64_t wanted) {
    t->queued = 1, t->wanted = wanted, t->generation = pool.generation;
    t->next = pool.queue_head;
    pool.queue_head = t;
    if (pool.queue_tail == NULL) pool.queue_tail = t;
    pool.waiting++;
}

/* A ticket left queued by an earlier process (before a fork) or by an earlier hash is taken
 * for a fresh one. */
static int is_queued(const argonishche_memory_ticket *t) {
    return t->queued && t->generation == pool.generation;
}

static void drop_abandoned_heads(uint64_t now) {
    while (pool.queue_head != NULL && now - pool.queue_head->last_seen_ns > abandoned_ns)
        unqueue(pool.queue_head);
}

/* Admission, the lock held: OK (room taken, and in *k an idle mapping of `kind` to reuse, or
 * NULL: map afresh), OVER_BUDGET, or WAIT_MEMORY once `deadline` has passed without room.  When
 * the room is there only once idle memory is gone, that memory is given back first (unmapped
 * with the lock released, then admission tried again): so no hash counts, or maps, its memory
 * while memory given back for it is still there. */
static int admit(argonishche_memory_ticket *t, uint64_t size, int kind, uint64_t deadline,
                 kept_mapping **k) {
    *k = NULL;
    for (;;) {
        if (size > pool.budget) {
            if (is_queued(t)) unqueue(t);
            return ARGONISHCHE_ERR_OVER_BUDGET;
        }
        uint64_t now = argonishche_monotonic_ns();
        t->last_seen_ns = now;
        drop_abandoned_heads(now);
        int first = is_queued(t) ? pool.queue_head == t : pool.queue_head == NULL;
        /* Refused by the OS: not before memory has come back, or nothing else holds any. */
        int ready = !t->refused || pool.releases != t->refused_at || pool.running == 0;
        if (first && ready) {
            kept_mapping *reused = (kind & ARGONISHCHE_LEASE_HEAP) ? NULL : take_kept(size, kind);
            if (reused != NULL && pool.in_use + pool.leaving + reused->size > pool.budget) {
                /* Larger than what fits now: back among the idle ones (first to be given back,
                 * if a fresh mapping needs the room). */
                reused->next = pool.kept, pool.kept = reused, pool.idle += reused->size;
                reused = NULL;
            }
            uint64_t cost = reused != NULL ? reused->size : size;
            if (pool.in_use + pool.leaving + cost <= pool.budget) {
                if (reused == NULL && held() + cost > pool.budget) {
                    kept_mapping *dropped = NULL; /* room once idle memory is gone */
                    drop_idle(cost, &dropped);
                    argonishche_mutex_unlock(&lock);
                    unmap_all(dropped);
                    argonishche_mutex_lock(&lock);
                    continue;
                }
                if (is_queued(t)) unqueue(t);
                t->refused = 0;
                pool.in_use += cost;
                pool.running++;
                *k = reused;
                note_held();
                return ARGONISHCHE_OK;
            }
        }
        if (now >= deadline) return ARGONISHCHE_WAIT_MEMORY; /* queued only by one that waits */
        if (!is_queued(t)) enqueue(t, size);
        /* Bounded so that abandoned heads are noticed even if nothing else happens. */
        uint64_t until = deadline - now > abandoned_ns ? now + abandoned_ns : deadline;
        argonishche_cond_wait_until(&room, &lock, until);
    }
}

/* ---- threads, fork and the reaper -------------------------------------------------------- */

#if ARGONISHCHE_HAVE_FORK
static void before_fork(void) { pthread_mutex_lock(&lock); }

static void after_fork_in_parent(void) { pthread_mutex_unlock(&lock); }

/* Only the forking thread exists in the child, and it is not hashing (a hash is one C call).
 * The busy mappings are copy-on-write views of hashes running on threads the child does not
 * have: unmapped (wiping would copy every page first).  Locked idle memory is dropped too: the
 * child did not inherit the locks.  The queue's tickets belong to those threads' Python frames:
 * forgotten (the generation makes any that comes back a fresh one).  The reaper thread is gone:
 * the next idle mapping starts another.  The condition variables may have had waiters: made
 * anew. */
static void after_fork_in_child(void) {
    for (argonishche_lease *l = pool.busy; l != NULL; l = l->next)
        if (l->memory != NULL) argonishche_pages_unmap(l->memory, l->size);
    kept_mapping *dropped = NULL;
    drop_kind(ARGONISHCHE_ARENA_LOCKED, &dropped);
    for (kept_mapping *k = dropped, *next; k != NULL; k = next) {
        next = k->next;
        argonishche_pages_unmap(k->memory, k->size);
        free(k);
    }
    pool.busy = NULL, pool.in_use = 0, pool.running = 0;
    pool.leaving = 0; /* the threads unmapping it are not here: the child keeps a copy */
    pool.queue_head = pool.queue_tail = NULL, pool.waiting = 0;
    pool.claims = NULL;
    pool.generation++;
    pool.reaper_running = 0;
    pool.high_water = pool.idle;
    argonishche_cond_init_timed(&room);
    argonishche_cond_init_timed(&expired);
    pthread_mutex_unlock(&lock);
}
#endif /* ARGONISHCHE_HAVE_FORK: Windows has no fork */

static void initialise(void) {
    argonishche_cond_init_timed(&room);
    argonishche_cond_init_timed(&expired);
#if ARGONISHCHE_HAVE_FORK
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
#endif
}

/* Gives idle memory back once it has been idle for the idle time; exits when none is left. */
static ARGONISHCHE_THREAD_FN(reap, unused) {
    (void)unused;
    argonishche_mutex_lock(&lock);
    for (;;) {
        kept_mapping *dropped = NULL;
        uint64_t next_expiry;
        drop_expired(argonishche_monotonic_ns(), &dropped, &next_expiry);
        if (dropped != NULL) {
            argonishche_mutex_unlock(&lock);
            unmap_all(dropped);
            argonishche_mutex_lock(&lock);
            continue;
        }
        if (next_expiry == 0) break;
        argonishche_cond_wait_until(&expired, &lock, next_expiry);
    }
    pool.reaper_running = 0;
    argonishche_mutex_unlock(&lock);
    return ARGONISHCHE_THREAD_RETURN;
}

/* The lock held.  If no thread can be made, idle memory is given back by the hashes and trims
 * that come: it stays within the budget either way. */
static void ensure_reaper(void) {
    if (pool.reaper_running || pool.kept == NULL) return;
    if (argonishche_thread_start_detached(reap, NULL) == 0) pool.reaper_running = 1;
}

/* ---- the API ----------------------------------------------------------------------------- */

/* The lease leaves the busy list and stops counting as in use; the lock held. */
static void end_lease(argonishche_lease *lease) {
    for (argonishche_lease **p = &pool.busy; *p != NULL; p = &(*p)->next) {
        if (*p == lease) {
            *p = lease->next;
            break;
        }
    }
    pool.in_use -= lease->size;
    pool.running--;
}

int argonishche_work_memory_take(argonishche_memory_ticket *t, size_t needed, int kind,
                                 uint32_t wait_ms, argonishche_lease *lease) {
    argonishche_call_once(&once, initialise);
    kept_mapping *k;
    argonishche_mutex_lock(&lock);
    int huge = huge_pages_for(needed, kind);
    size_t size = lease_size(needed, kind, huge);
    uint64_t deadline = argonishche_monotonic_ns() + (uint64_t)wait_ms * 1000000u;
    int status = admit(t, size, kind, deadline, &k);
    if (status == ARGONISHCHE_OK) {
        /* A dirty mapping (its last hash opted out of the wipe) is lent as it is: the next
         * hash writes every block before it reads it, and wipes it, or marks it dirty, in
         * turn.  Its list node goes with the lease, to hold it again afterwards. */
        lease->memory = k != NULL ? k->memory : NULL;
        lease->size = k != NULL ? k->size : size;
        lease->huge = k != NULL ? k->huge : huge;
        lease->kind = kind;
        lease->node = k;
        lease->next = pool.busy;
        pool.busy = lease;
        if (k != NULL) pool.reuses++;
        else if (!(kind & ARGONISHCHE_LEASE_HEAP)) pool.maps++;
    }
    argonishche_mutex_unlock(&lock);
    return status;
}

void argonishche_work_memory_give_back(argonishche_lease *lease, void *memory, int keep,
                                       int dirty) {
    kept_mapping *kept = lease->node;
    if (kept == NULL && keep && memory != NULL) kept = malloc(sizeof *kept);
    if (!keep || memory == NULL) free(kept), kept = NULL;
    kept_mapping *dropped = NULL;
    uint64_t now = argonishche_monotonic_ns(), next_expiry;
    argonishche_mutex_lock(&lock);
    end_lease(lease);
    pool.releases++;
    if (kept != NULL && pool.idle_ns != 0 && held() + lease->size <= pool.budget) {
        *kept = (kept_mapping){NULL, memory, lease->size, lease->kind, lease->huge, dirty, now};
        kept_mapping **tail = &pool.kept;
        while (*tail != NULL) tail = &(*tail)->next;
        *tail = kept;
        pool.idle += lease->size;
        memory = NULL, kept = NULL;
        ensure_reaper();
    } else if (memory != NULL) {
        pool.leaving += lease->size; /* until it is unmapped, below */
    }
    drop_expired(now, &dropped, &next_expiry);
    argonishche_cond_broadcast(&room);
    argonishche_mutex_unlock(&lock);
    free(kept);
    if (memory != NULL) {
        argonishche_unmap_work_memory(memory, lease->size, dirty);
        left(lease->size);
    }
    unmap_all(dropped);
}

int argonishche_work_memory_refused(argonishche_memory_ticket *t, argonishche_lease *lease,
                                    int may_queue) {
    kept_mapping *dropped = NULL;
    argonishche_mutex_lock(&lock);
    end_lease(lease);
    free(lease->node); /* none: only fresh memory is refused */
    uint64_t releases = pool.releases;
    /* Idle memory takes what the OS has just refused: give it all back, and try at once. */
    if (drop_kind(-1, &dropped) != 0) pool.releases++;
    int alone = pool.running == 0 && dropped == NULL;
    if (!alone) {
        t->refused = 1, t->refused_at = releases;
        if (may_queue && !is_queued(t)) enqueue_first(t, lease->size);
    }
    argonishche_cond_broadcast(&room);
    argonishche_mutex_unlock(&lock);
    unmap_all(dropped);
    return alone ? ARGONISHCHE_ERR_NO_MEMORY : ARGONISHCHE_WAIT_MEMORY;
}

int argonishche_memory_reserve(argonishche_memory_ticket *t, uint64_t bytes, uint32_t wait_ms) {
    argonishche_call_once(&once, initialise);
    kept_mapping *k;
    argonishche_mutex_lock(&lock);
    uint64_t deadline = argonishche_monotonic_ns() + (uint64_t)wait_ms * 1000000u;
    int status = t->reserved != 0 && t->generation == pool.generation
                     ? ARGONISHCHE_ERR_PARAMETER /* one reservation per ticket */
                     : admit(t, bytes, ARGONISHCHE_LEASE_HEAP, deadline, &k);
    if (status == ARGONISHCHE_OK) t->reserved = bytes, t->generation = pool.generation;
    argonishche_mutex_unlock(&lock);
    return status;
}

void argonishche_memory_ticket_close(argonishche_memory_ticket *t) {
    argonishche_call_once(&once, initialise);
    argonishche_mutex_lock(&lock);
    if (is_queued(t)) unqueue(t);
    t->queued = 0;
    if (t->reserved != 0 && t->generation == pool.generation) {
        pool.in_use -= t->reserved;
        pool.running--;
        pool.releases++;
        argonishche_cond_broadcast(&room);
    }
    t->reserved = 0;
    argonishche_mutex_unlock(&lock);
}

void argonishche_memory_configure(uint64_t budget, uint64_t idle_ms, int huge_pages) {
    argonishche_call_once(&once, initialise);
    kept_mapping *dropped = NULL;
    argonishche_mutex_lock(&lock);
    pool.budget = budget;
    pool.idle_ns = idle_ms * 1000000u;
    pool.huge_kept = huge_pages != 0;
    if (pool.idle_ns == 0) drop_kind(-1, &dropped);
    drop_idle(0, &dropped);
    argonishche_cond_broadcast(&room);
    argonishche_cond_broadcast(&expired);
    argonishche_mutex_unlock(&lock);
    unmap_all(dropped);
}

void argonishche_memory_stats_read(argonishche_memory_stats *s, int reset_high_water) {
    argonishche_call_once(&once, initialise);
    argonishche_mutex_lock(&lock);
    if (reset_high_water) pool.high_water = held();
    *s = (argonishche_memory_stats){pool.budget, pool.in_use + pool.leaving, pool.idle,
                                    pool.high_water,
                                    pool.idle_ns / 1000000u, pool.maps, pool.reuses, pool.waits,
                                    pool.running, pool.waiting, pool.huge_kept};
    argonishche_mutex_unlock(&lock);
}

/* Idle memory of `kind` (-1: every kind) back to the OS; bytes given back. */
uint64_t argonishche_work_memory_trim(int kind) {
    argonishche_call_once(&once, initialise);
    kept_mapping *dropped = NULL;
    argonishche_mutex_lock(&lock);
    uint64_t freed = drop_kind(kind, &dropped);
    argonishche_cond_broadcast(&room);
    argonishche_mutex_unlock(&lock);
    unmap_all(dropped);
    return freed;
}

uint64_t argonishche_memory_trim(void) { return argonishche_work_memory_trim(-1); }

uint64_t argonishche_work_memory_idle_bytes(int kind) {
    uint64_t total = 0;
    argonishche_mutex_lock(&lock);
    for (kept_mapping *k = pool.kept; k != NULL; k = k->next)
        if (k->kind == kind) total += k->size;
    argonishche_mutex_unlock(&lock);
    return total;
}

uint32_t argonishche_work_memory_idle_list(int kind, uintptr_t *addresses, uint64_t *sizes,
                                           uint32_t max) {
    uint32_t count = 0;
    argonishche_mutex_lock(&lock);
    for (kept_mapping *k = pool.kept; k != NULL; k = k->next) {
        if (k->kind != kind) continue;
        if (count < max) addresses[count] = (uintptr_t)k->memory, sizes[count] = k->size;
        count++;
    }
    argonishche_mutex_unlock(&lock);
    return count;
}

/* ---- memory claims (see argonishche_core.h) ------------------------------------------------ */

int argonishche_claim_memory(argonishche_memory_claim *claim, const void *start, size_t len) {
    argonishche_call_once(&once, initialise); /* for the fork handler that clears the list */
    claim->start = (uintptr_t)start, claim->end = (uintptr_t)start + len;
    argonishche_mutex_lock(&lock);
    for (argonishche_memory_claim *c = pool.claims; c != NULL; c = c->next) {
        if (claim->start < c->end && c->start < claim->end) {
            argonishche_mutex_unlock(&lock);
            return 0;
        }
    }
    claim->next = pool.claims;
    pool.claims = claim;
    argonishche_mutex_unlock(&lock);
    return 1;
}

void argonishche_release_memory(argonishche_memory_claim *claim) {
    argonishche_mutex_lock(&lock);
    for (argonishche_memory_claim **p = &pool.claims; *p != NULL; p = &(*p)->next) {
        if (*p == claim) {
            *p = claim->next;
            break;
        }
    }
    argonishche_mutex_unlock(&lock);
}
