/*
 * argonishche_core.h - the C side of the core: BLAKE2b, the Argon2 driver and the CPU probe.
 *
 * Everything here is written once and calls the ISA-specific kernels only through an
 * argonishche_kernel_table (see argonishche_kernel.h).  The Python package reaches these functions
 * through the cffi module argonishche._core, whose declarations core/build_core.py makes from this
 * header.
 */
#ifndef ARGONISHCHE_CORE_H
#define ARGONISHCHE_CORE_H

#include "argonishche_kernel.h"

/* Marks what argonishche._core exports to Python: core/build_core.py makes its cffi declarations
 * from this header, taking the ARGONISHCHE_API functions, every typedef and the integer #defines,
 * so the two cannot drift apart. */
#define ARGONISHCHE_API

/* Status codes of the functions below (0 is success). */
#define ARGONISHCHE_OK 0
#define ARGONISHCHE_ERR_PARAMETER (-1)        /* a value the Python layer should have refused */
#define ARGONISHCHE_ERR_NO_MEMORY (-2)        /* the work memory could not be allocated */
#define ARGONISHCHE_ERR_MEMORY_TOO_SMALL (-3) /* caller memory smaller than argon2_memory_size */
#define ARGONISHCHE_ERR_LOCK (-4)             /* memory could not be locked (mlock; see os_error) */
#define ARGONISHCHE_ERR_OVER_BUDGET (-5)      /* the hash needs more than the whole work-memory
                                                 budget (argonishche_memory_configure) */
#define ARGONISHCHE_ERR_MEMORY_IN_USE (-6)    /* caller memory overlaps a running hash's */
#define ARGONISHCHE_WAIT_MEMORY 1             /* not a failure: the budget had no room within
                                                 the wait asked for; call again (same ticket) */

/* ---- BLAKE2b (RFC 7693) ------------------------------------------------------------------ */

typedef struct argonishche_blake2b_state {
    uint64_t h[8];
    uint64_t t[2];
    uint64_t last_node; /* f1 for the final block: all ones for a tree's last node, else 0 */
    uint8_t buf[ARGONISHCHE_BLAKE2B_BLOCK_BYTES];
    size_t buflen;      /* bytes in buf not yet compressed; the last block waits here for final */
    size_t digest_size;
    argonishche_blake2b_compress_fn compress;
} argonishche_blake2b_state;

/* The tree-hashing fields of BLAKE2b's parameter block (RFC 7693 section 2.5 lays the block
 * out; the fields' meaning is the BLAKE2 paper's tree mode) and the last-node flag.  Sequential
 * hashing is fanout 1, depth 1, the rest 0: what argonishche_blake2b_init uses. */
typedef struct argonishche_blake2b_tree {
    uint64_t node_offset; /* parameter bytes 8..15 */
    uint32_t leaf_size;   /* bytes 4..7; 0: unlimited */
    uint8_t fanout;       /* byte 2; 0: unlimited */
    uint8_t depth;        /* byte 3; 1..255 */
    uint8_t node_depth;   /* byte 16; 0 for leaves */
    uint8_t inner_size;   /* byte 17; 0..64 */
    int last_node;        /* nonzero: the final block is compressed with f1 = all ones */
} argonishche_blake2b_tree;

/* Sequential BLAKE2b (argonishche_blake2b_init_tree with the sequential tree). */
ARGONISHCHE_API
int argonishche_blake2b_init(argonishche_blake2b_state *state, const void *kernel_table,
                             size_t digest_size, const uint8_t *key, size_t key_len,
                             const uint8_t *salt, size_t salt_len, const uint8_t *person,
                             size_t person_len);
/* *tree* NULL: sequential.  ARGONISHCHE_ERR_PARAMETER for a value out of range (depth 0,
 * inner_size over 64, as for the other arguments). */
ARGONISHCHE_API
int argonishche_blake2b_init_tree(argonishche_blake2b_state *state, const void *kernel_table,
                                  size_t digest_size, const uint8_t *key, size_t key_len,
                                  const uint8_t *salt, size_t salt_len, const uint8_t *person,
                                  size_t person_len, const argonishche_blake2b_tree *tree);
ARGONISHCHE_API
void argonishche_blake2b_update(argonishche_blake2b_state *state, const uint8_t *data,
                                size_t len);
/* Writes state->digest_size bytes.  Hashing can continue: h, t and the buffered bytes are left
 * as they were; only buf past buflen, which nothing reads, is zeroed. */
ARGONISHCHE_API
void argonishche_blake2b_final(argonishche_blake2b_state *state, uint8_t *out);

/* Unkeyed init + update + final with the state on the stack: all of hashlib-style
 * blake2b(data).digest() in one C call, for short messages where calls dominate. */
ARGONISHCHE_API
int argonishche_blake2b_oneshot(const void *kernel_table, uint8_t *out, size_t digest_size,
                                const uint8_t *data, size_t len);

/* ---- Argon2 (RFC 9106) ------------------------------------------------------------------- */

#define ARGONISHCHE_ARGON2D 0   /* the type codes y of RFC 9106 section 3.2 */
#define ARGONISHCHE_ARGON2I 1
#define ARGONISHCHE_ARGON2ID 2

typedef struct argonishche_argon2_request {
    uint32_t type;          /* ARGONISHCHE_ARGON2D / I / ID */
    uint32_t version;       /* 0x10 or 0x13 */
    uint32_t time_cost;     /* t: passes */
    uint32_t memory_cost;   /* m: KiB */
    uint32_t lanes;         /* p */
    uint32_t threads;       /* 1..lanes C threads fill the lanes of each slice */
    const uint8_t *password;
    size_t password_len;
    const uint8_t *salt;
    size_t salt_len;
    const uint8_t *secret;
    size_t secret_len;
    const uint8_t *associated_data;
    size_t associated_data_len;
    uint8_t *tag;
    size_t tag_len;
    void *memory;           /* caller's work memory (any alignment: the driver uses it from the
                               first 64-byte boundary), or NULL to allocate per call */
    size_t memory_len;
    int wipe_memory;        /* nonzero: securely wipe the work memory before returning */
} argonishche_argon2_request;

/* Bytes of work memory a hash with these parameters uses (m' blocks of 1 KiB); a caller's
 * buffer that is not 64-byte aligned needs up to 63 bytes more. */
ARGONISHCHE_API
size_t argonishche_argon2_memory_size(uint32_t memory_cost, uint32_t lanes);

/* Computes the tag.  argon2_kernels supplies G, blake2b_kernels supplies F for H0, H' and the
 * tag; they may be the same table.  Every secret-derived buffer of the driver's own is wiped; the
 * work memory too unless request->wipe_memory is 0 (the caller's explicit opt-out). */
ARGONISHCHE_API
int argonishche_argon2_hash(const void *argon2_kernels, const void *blake2b_kernels,
                            const argonishche_argon2_request *request);

/* argonishche_argon2_hash into request->memory, a fresh mapping that the lane threads fault in
 * (each its own lanes) before filling them (arena.c's hashes above an arena's bound). */
int argonishche_argon2_hash_prefault(const void *argon2_kernels, const void *blake2b_kernels,
                                     const argonishche_argon2_request *request);

/* ---- The process's work memory: one budget, admission, reuse (work_memory.c, arena.c) --- */

/* Work memory is a resource of the process, not of a thread.  Every hash whose memory argonishche
 * allocates (any allocator; not a caller's own buffer) is admitted against one budget first:
 * while the memory of the hashes running now and the memory kept idle for the next ones would go
 * over it, hashes wait in arrival order (idle memory is given back first to make room).  A
 * finished hash's mapping is kept for the next hash of any thread, and given back to the OS once
 * it has been idle for the configured time, or on a trim. */

/* A hash's place in the queue for the budget, and what it reserved through
 * argonishche_memory_reserve.  Zeroed by its owner (cffi's ffi.new does), passed to every call of
 * one hash, then closed.  The owner must close it before freeing it (Python does in a finally,
 * and with ffi.gc as the backstop). */
typedef struct argonishche_memory_ticket {
    struct argonishche_memory_ticket *next; /* in the queue */
    uint64_t wanted;       /* bytes it waits for */
    uint64_t reserved;     /* bytes argonishche_memory_reserve granted it */
    uint64_t last_seen_ns; /* its owner's last call; a queue head unseen for long is dropped */
    uint64_t generation;   /* the process it was queued or granted in (a fork begins another) */
    uint64_t refused_at;   /* the releases seen when the OS refused its memory (if refused) */
    int queued;
    int refused;           /* the OS refused its memory while other hashes held some: it waits
                              for one of them to give memory back before it tries again */
} argonishche_memory_ticket;

typedef struct argonishche_memory_stats {
    uint64_t budget;     /* bytes; UINT64_MAX until configured */
    uint64_t in_use;     /* bytes the running hashes hold, and memory being unmapped */
    uint64_t idle;       /* bytes kept mapped for the next hashes */
    uint64_t high_water; /* the most in_use + idle has been (since the last reset) */
    uint64_t idle_ms;    /* how long idle memory is kept */
    uint64_t maps;       /* mappings made since the process started */
    uint64_t reuses;     /* hashes served from kept memory */
    uint64_t waits;      /* hashes that had to queue for room */
    uint32_t running;    /* hashes holding memory now */
    uint32_t waiting;    /* hashes in the queue now */
    int huge_pages;      /* kept memory from 2 MiB up gets huge pages */
} argonishche_memory_stats;

/* Sets the budget (bytes), how long idle memory is kept (0: given back after every hash), and
 * whether kept memory from 2 MiB up gets transparent huge pages (mappings made from now on);
 * idle memory above a lowered budget is given back at once. */
ARGONISHCHE_API
void argonishche_memory_configure(uint64_t budget, uint64_t idle_ms, int huge_pages);
/* Non-zero `reset_high_water`: the high-water mark starts again from what is held now. */
ARGONISHCHE_API
void argonishche_memory_stats_read(argonishche_memory_stats *stats, int reset_high_water);
/* Reserves `bytes` for memory allocated outside the C arenas (a plugin allocator's, or a mapping
 * Python must see): ARGONISHCHE_OK, ARGONISHCHE_ERR_OVER_BUDGET or ARGONISHCHE_WAIT_MEMORY, as
 * argonishche_arena_argon2_hash.  argonishche_memory_ticket_close gives it back. */
ARGONISHCHE_API
int argonishche_memory_reserve(argonishche_memory_ticket *ticket, uint64_t bytes,
                               uint32_t wait_ms);
/* Leaves the queue and gives back what the ticket reserved; safe to call more than once. */
ARGONISHCHE_API
void argonishche_memory_ticket_close(argonishche_memory_ticket *ticket);
/* Gives every idle mapping back to the OS (wiped first where its last hash opted out of the
 * wipe); bytes given back. */
ARGONISHCHE_API
uint64_t argonishche_memory_trim(void);

/* An allocator's kind of memory: what a mapping is made with. */
typedef struct argonishche_arena argonishche_arena;

#define ARGONISHCHE_ARENA_LOCKED 1     /* mlock every mapping: never written to swap */
#define ARGONISHCHE_ARENA_HUGE_PAGES 2 /* a fresh mapping per hash, advised for transparent huge
                                          pages, faulted on first use; never kept */

/* The arena of these flags (one per combination, never freed: allocators of one kind share
 * it); NULL for a flag that does not exist. */
ARGONISHCHE_API
argonishche_arena *argonishche_arena_new(int flags);

/* argonishche_argon2_hash, admitted against the budget with `ticket`, in work memory of `arena`
 * (kept memory of its kind if there is some, else a fresh mapping) or, `arena` NULL, on the C
 * heap (the system allocator).  Waits at most `wait_ms` for room: ARGONISHCHE_WAIT_MEMORY then,
 * with the ticket still queued, except that a ticket not queued before and `wait_ms` 0 is only
 * tried, never queued (the common case costs no clean-up).  request->memory must be NULL.
 * *os_error is the errno behind ARGONISHCHE_ERR_NO_MEMORY or ARGONISHCHE_ERR_LOCK, else 0. */
ARGONISHCHE_API
int argonishche_arena_argon2_hash(argonishche_arena *arena, const void *argon2_kernels,
                                  const void *blake2b_kernels,
                                  argonishche_argon2_request *request,
                                  argonishche_memory_ticket *ticket, uint32_t wait_ms,
                                  int *os_error);

/* What differs between the hashes of one argonishche_arena_argon2_hash_many call. */
typedef struct argonishche_argon2_input {
    const uint8_t *password;
    size_t password_len;
    const uint8_t *salt;
    size_t salt_len;
} argonishche_argon2_input;

/* argonishche_arena_argon2_hash of `count` hashes in one lease of work memory: `request` with
 * inputs[i]'s password and salt (its own password, salt and tag are not read) writes tag i at
 * tags + i * request->tag_len.  The memory is wiped once, after the last hash (unless
 * request->wipe_memory is 0), not between hashes: it never leaves the call in between.  Stops at
 * the first hash that fails, wipes the memory all the same, and returns that hash's status;
 * *done: the hashes whose tags were written (count on success; the failed one's index else;
 * 0 with ARGONISHCHE_WAIT_MEMORY and the other admission statuses, when nothing was hashed). */
ARGONISHCHE_API
int argonishche_arena_argon2_hash_many(argonishche_arena *arena, const void *argon2_kernels,
                                       const void *blake2b_kernels,
                                       argonishche_argon2_request *request,
                                       const argonishche_argon2_input *inputs, uint32_t count,
                                       uint8_t *tags, uint32_t *done,
                                       argonishche_memory_ticket *ticket, uint32_t wait_ms,
                                       int *os_error);

/* Gives back the idle memory of this arena's kind; bytes given back. */
ARGONISHCHE_API
uint64_t argonishche_arena_trim(argonishche_arena *arena);
/* Bytes of this arena's kind kept idle now. */
ARGONISHCHE_API
uint64_t argonishche_arena_cached_bytes(argonishche_arena *arena);
/* The idle mappings of this arena's kind, oldest first: up to `max` addresses and sizes written;
 * how many there are.  For tests and reports: which memory the next hash would reuse. */
ARGONISHCHE_API
uint32_t argonishche_arena_idle_mappings(argonishche_arena *arena, uintptr_t *addresses,
                                         uint64_t *sizes, uint32_t max);

/* Work memory a running hash uses, linked into one process-wide list while it runs, so that a
 * second hash given overlapping memory is refused (the driver does this).  Lives on the hashing
 * call's stack: no allocation. */
typedef struct argonishche_memory_claim {
    struct argonishche_memory_claim *next;
    uintptr_t start;
    uintptr_t end;
} argonishche_memory_claim;

/* 1 and `claim` linked in, or 0 if [start, start + len) overlaps a claim already made
 * (work_memory.c keeps the list, and forgets it in a forked child). */
int argonishche_claim_memory(argonishche_memory_claim *claim, const void *start, size_t len);
void argonishche_release_memory(argonishche_memory_claim *claim);

/* ---- Memory hygiene and pre-faulting (memory.c) ------------------------------------------ */

/* A wipe the compiler may not remove, for secrets and work memory. */
ARGONISHCHE_API
void argonishche_secure_wipe(void *p, size_t n);

/* Keeps n bytes at p in RAM, never written to swap (mlock).  0 on success, else the errno. */
ARGONISHCHE_API
int argonishche_lock_memory(void *p, size_t n);

/* Faults in [memory, memory + size) a page at a time, keeping its contents (GIL released); the
 * driver and the arenas pre-fault through it too. */
ARGONISHCHE_API
void argonishche_prefault(void *memory, size_t size);
/* The most bytes a pre-fault faulted in at a time since the last reset (non-zero `reset`: and
 * starts again from 0): a page, never a populate system call's range, for tests that nothing
 * holds the memory-map lock while faulting memory in; 0 if nothing was pre-faulted. */
ARGONISHCHE_API
size_t argonishche_largest_populate(int reset);

/* ---- Selection by measurement (kernel_workout.c) ------------------------------------------- */

/* The scratch buffer the workouts share: 16 KiB of blocks, plus room to align them to 64. */
#define ARGONISHCHE_WORKOUT_SCRATCH_BYTES (16 * 1024 + 63)

/* Fills scratch with the workouts' (arbitrary, non-zero) data; once, before any workout. */
ARGONISHCHE_API
void argonishche_workout_prepare(void *scratch);

/* `fills` calls of the table's Argon2 G over the 16 in-cache blocks of scratch (which it
 * changes), half of them XORing into next as version 0x13 does after the first pass. */
ARGONISHCHE_API
uint64_t argonishche_workout_argon2(const void *kernel_table, void *scratch, uint32_t fills);

/* BLAKE2b's F on `blocks` 128-byte blocks, in runs of 64 over the first 8 KiB of scratch. */
ARGONISHCHE_API
uint64_t argonishche_workout_blake2b(const void *kernel_table, const void *scratch,
                                     uint32_t blocks);

/* ---- CPU probe ---------------------------------------------------------------------------- */

/* CPUID leaf/subleaf executed in this process: eax, ebx, ecx, edx into registers.  Returns 0 (and
 * writes nothing) when the leaf is above the CPU's highest one, or on a CPU without CPUID. */
ARGONISHCHE_API
int argonishche_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t registers[4]);

/* XCR0, the register state the OS saves on a context switch; 0 where XGETBV may not run. */
ARGONISHCHE_API
uint64_t argonishche_xcr0(void);

/* aarch64 (cpu_features_arm.c): Linux's AT_HWCAP (word 1) or AT_HWCAP2 (word 2) for this
 * process, and macOS's integer sysctl `name` as 0 or 1; 0 wherever they do not exist. */
ARGONISHCHE_API
uint64_t argonishche_hwcap(int word);
ARGONISHCHE_API
int argonishche_sysctl_flag(const char *name);

/* ---- the code behind a kernel table (code_identity.c) ------------------------------------- */

/* The path of the shared object (or executable) whose mapping holds *address*, and in *base* the
 * address it is loaded at; NULL (and *base = 0) where that cannot be known: no dladdr (Windows),
 * an address in no loaded object (a cffi callback).  Certification records are keyed on these
 * files' contents (argonishche._trust.certification).  The string belongs to the dynamic loader and stays
 * valid while the object is loaded: copy it at once. */
ARGONISHCHE_API
const char *argonishche_code_file(const void *address, uintptr_t *base);

#endif /* ARGONISHCHE_CORE_H */
