/*
 * work_memory.h - private to core/csrc: how arena.c leases work memory from the process's one
 * budget (work_memory.c).  Python sees only the ARGONISHCHE_API functions of argonishche_core.h.
 *
 * A lease is one hash's share of the budget: taken by argonishche_work_memory_take (after waiting
 * in arrival order if the budget is full), given back by argonishche_work_memory_give_back, both
 * within the one C call that hashes.  It lives on that call's stack and is linked into the busy
 * list meanwhile, so that a forked child can drop the leases of threads it does not have.
 */
#ifndef ARGONISHCHE_WORK_MEMORY_H
#define ARGONISHCHE_WORK_MEMORY_H

#include "argonishche_core.h"

/* What a lease's memory is, beside the arena flags (ARGONISHCHE_ARENA_LOCKED, _HUGE_PAGES). */
#define ARGONISHCHE_LEASE_HEAP (1 << 8) /* no mapping: the driver allocates on the C heap */

typedef struct argonishche_lease {
    struct argonishche_lease *next; /* in the busy list */
    void *memory;                   /* a mapping to reuse; NULL: map `size` bytes afresh */
    size_t size;                    /* bytes counted against the budget */
    int kind;                       /* arena flags, or ARGONISHCHE_LEASE_HEAP */
    int huge;                       /* whole 2 MiB pages, advised for transparent huge pages */
    void *node;                     /* the idle list's node of a reused mapping, kept for it */
} argonishche_lease;

/* Admits a hash needing `needed` bytes of `kind`: ARGONISHCHE_OK with *lease filled (its memory
 * NULL when the caller must map lease->size bytes itself); ARGONISHCHE_ERR_OVER_BUDGET if it needs
 * more than the whole budget; ARGONISHCHE_WAIT_MEMORY if `wait_ms` passed without room (the
 * ticket keeps its place in the queue: call again with it, or close it).  With `wait_ms` 0 a
 * ticket not queued yet is only tried: never queued, so nothing to close. */
int argonishche_work_memory_take(argonishche_memory_ticket *ticket, size_t needed, int kind,
                                 uint32_t wait_ms, argonishche_lease *lease);

/* The OS refused the lease's memory (a mapping, the heap or mlock said ENOMEM or EAGAIN): ends
 * the lease.  ARGONISHCHE_WAIT_MEMORY if other hashes hold memory (or some was kept idle, now
 * given back): the budget is more than the OS gives this process now, so the ticket waits, first
 * in line, until memory comes back, and tries again (`may_queue` 0, a try: it is left to the
 * caller's next ticket).  ARGONISHCHE_ERR_NO_MEMORY if nothing else holds any: a real refusal. */
int argonishche_work_memory_refused(argonishche_memory_ticket *ticket, argonishche_lease *lease,
                                    int may_queue);

/* Ends the lease.  `memory`: its mapping (or NULL: none was made, or the heap's); `keep`: the
 * mapping may serve later hashes; `dirty`: its last hash opted out of the wipe (wiped before it
 * is unmapped). */
void argonishche_work_memory_give_back(argonishche_lease *lease, void *memory, int keep,
                                       int dirty);

/* Gives back the idle memory of `kind` (-1: every kind); bytes given back. */
uint64_t argonishche_work_memory_trim(int kind);
/* Bytes of `kind` kept idle now. */
uint64_t argonishche_work_memory_idle_bytes(int kind);
/* The idle mappings of `kind`, oldest first (see argonishche_arena_idle_mappings). */
uint32_t argonishche_work_memory_idle_list(int kind, uintptr_t *addresses, uint64_t *sizes,
                                           uint32_t max);

/* Unmaps `size` bytes at `memory` (wiped first if `dirty`) in pieces, so that no one munmap
 * holds the memory-map lock for long. */
void argonishche_unmap_work_memory(void *memory, size_t size, int dirty);

#endif /* ARGONISHCHE_WORK_MEMORY_H */
