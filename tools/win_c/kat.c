/*
 * kat.c - the core and every x86 kernel file, built for Windows with mingw-w64 and run under
 * wine by tools/win_c/run.py.  Exits 0 only if everything matches:
 *
 *   - the CPU probe (argonishche_cpuid/xcr0, and the MSVC-intrinsics variant of cpu_features.c,
 *     compiled separately as msvc_cpuid/msvc_xcr0, must answer the same), and the gate: a
 *     backend runs only if CPUID + XCR0 show every feature it is compiled for (the rows of
 *     argonishche/_features.py, generated into kat_vectors.h), never otherwise;
 *   - per usable backend: its table (ABI, compiled_for), every BLAKE2b and Argon2 known answer
 *     of argonishche/vectors.py, through every memory path (driver-allocated, caller memory
 *     at an odd address, the system allocator's admitted heap, the arena, the locked and
 *     huge-page arenas);
 *   - a 4-lane hash on 4 threads against the same hash on 1 thread and against ref;
 *   - the process's work memory: a finished thread's memory kept for another thread's hash,
 *     trim, the budget refusing a hash larger than all of it, a timed wait for room
 *     (SleepConditionVariableSRW) and the idle reaper thread (_beginthreadex, detached)
 *     giving idle memory back;
 *   - secure wipe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argonishche_core.h"
#include "platform.h"

typedef struct kat_feature {
    const char *name;
    uint32_t leaf, subleaf, reg, bit;
    uint64_t xcr0;
    uint32_t implies; /* bit i: kat_features[i] */
} kat_feature;

typedef struct kat_backend {
    const char *name;
    const void *(*kernels)(void);
    uint32_t features; /* bit i: kat_features[i], implied ones included */
    const char *target;
} kat_backend;

typedef struct kat_blake2b {
    const char *data;
    size_t data_len, digest_size;
    const char *key;
    size_t key_len;
    const char *salt;
    size_t salt_len;
    const char *person;
    size_t person_len;
    const char *digest;
    const char *source;
} kat_blake2b;

/* BLAKE2b with the tree parameters (vectors.py's BLAKE2B_TREE_VECTORS). */
typedef struct kat_blake2b_tree {
    kat_blake2b plain;
    argonishche_blake2b_tree tree;
} kat_blake2b_tree;

typedef struct kat_argon2 {
    uint32_t type, version, time_cost, memory_cost, lanes;
    const char *password;
    size_t password_len;
    const char *salt;
    size_t salt_len;
    const char *secret;
    size_t secret_len;
    const char *associated_data;
    size_t associated_data_len;
    const char *tag;
    size_t tag_len;
    const char *source;
} kat_argon2;

#include "kat_vectors.h"

int msvc_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t registers[4]);
uint64_t msvc_xcr0(void);

static int failures, checks;

static void check(int ok, const char *what, const char *backend, const char *detail) {
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL %-6s %s: %s\n", backend, what, detail);
    }
}

static void hex(char *out, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n && i < 64; i++) sprintf(out + 2 * i, "%02x", p[i]);
}

static int check_bytes(const uint8_t *got, const char *want, size_t n, const char *what,
                       const char *backend, const char *source) {
    int ok = memcmp(got, want, n) == 0;
    char detail[400], g[129] = "", w[129] = "";
    if (!ok) {
        hex(g, got, n);
        hex(w, (const uint8_t *)want, n);
        snprintf(detail, sizeof detail, "%s\n       got  %s\n       want %s", source, g, w);
    }
    check(ok, what, backend, ok ? "" : detail);
    return ok;
}

/* ---- CPU probe and gate -------------------------------------------------------------------- */

static uint32_t usable_features(void) {
    uint64_t xcr0 = argonishche_xcr0();
    uint32_t present = 0;
    for (int i = 0; i < KAT_FEATURE_COUNT; i++) {
        const kat_feature *f = &kat_features[i];
        uint32_t r[4];
        if (!argonishche_cpuid(f->leaf, f->subleaf, r)) continue;
        if (!(r[f->reg] >> f->bit & 1)) continue;
        if ((xcr0 & f->xcr0) != f->xcr0) continue;
        present |= 1u << i;
    }
    /* A feature counts only with everything it builds on (as argonishche._trust.cpu_gate.usable). */
    uint32_t usable = 0;
    for (int i = 0; i < KAT_FEATURE_COUNT; i++)
        if ((present >> i & 1) && (kat_features[i].implies & present) == kat_features[i].implies)
            usable |= 1u << i;
    return usable;
}

static void probe(void) {
    static const uint32_t leaves[][2] = {{0, 0}, {1, 0}, {7, 0}, {7, 1}, {0x80000000u, 0},
                                         {0x80000001u, 0}, {0x7fffffffu, 0}};
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
        uint32_t a[4] = {0}, b[4] = {0};
        int ra = argonishche_cpuid(leaves[i][0], leaves[i][1], a);
        int rb = msvc_cpuid(leaves[i][0], leaves[i][1], b);
        printf("cpuid(%#x, %u) -> %d %08x %08x %08x %08x\n", leaves[i][0], leaves[i][1], ra,
               a[0], a[1], a[2], a[3]);
        char what[80];
        snprintf(what, sizeof what, "cpuid(%#x, %u): <cpuid.h> and <intrin.h> paths agree",
                 leaves[i][0], leaves[i][1]);
        check(ra == rb && memcmp(a, b, sizeof a) == 0, what, "probe", "they differ");
    }
    uint32_t r[4];
    check(argonishche_cpuid(0, 0, r) == 1, "cpuid leaf 0 answers", "probe", "it does not");
    check(argonishche_cpuid(0x7fffffffu, 0, r) == 0, "a leaf above the highest is refused",
          "probe", "it was answered");
    uint64_t xcr0 = argonishche_xcr0();
    printf("xcr0 = %#llx\n", (unsigned long long)xcr0);
    check(xcr0 == msvc_xcr0(), "xcr0: both paths agree", "probe", "they differ");
    uint32_t usable = usable_features();
    printf("usable CPU features:");
    for (int i = 0; i < KAT_FEATURE_COUNT; i++)
        if (usable >> i & 1) printf(" %s", kat_features[i].name);
    printf("\n");
    check(usable & 1, "sse2 (every x86-64 CPU has it) is detected", "probe", "it is not");
}

/* ---- known answers --------------------------------------------------------------------------- */

static void blake2b_vectors(const kat_backend *b, const void *k) {
    for (int i = 0; i < KAT_BLAKE2B_COUNT; i++) {
        const kat_blake2b *v = &kat_blake2b_vectors[i];
        argonishche_blake2b_state state;
        uint8_t out[64];
        int status = argonishche_blake2b_init(
            &state, k, v->digest_size, (const uint8_t *)v->key, v->key_len,
            (const uint8_t *)v->salt, v->salt_len, (const uint8_t *)v->person, v->person_len);
        check(status == ARGONISHCHE_OK, "blake2b_init", b->name, v->source);
        /* In two pieces, so update's buffering across calls is exercised too. */
        size_t half = v->data_len / 2;
        argonishche_blake2b_update(&state, (const uint8_t *)v->data, half);
        argonishche_blake2b_update(&state, (const uint8_t *)v->data + half, v->data_len - half);
        argonishche_blake2b_final(&state, out);
        check_bytes(out, v->digest, v->digest_size, "blake2b", b->name, v->source);
        if (v->key_len == 0 && v->salt_len == 0 && v->person_len == 0) {
            memset(out, 0, sizeof out);
            status = argonishche_blake2b_oneshot(k, out, v->digest_size,
                                                 (const uint8_t *)v->data, v->data_len);
            check(status == ARGONISHCHE_OK, "blake2b_oneshot", b->name, v->source);
            check_bytes(out, v->digest, v->digest_size, "blake2b_oneshot", b->name, v->source);
        }
    }
}

/* Tree parameters and the last-node flag: the core's parameter block and the kernels' f1. */
static void blake2b_tree_vectors(const kat_backend *b, const void *k) {
    for (int i = 0; i < KAT_BLAKE2B_TREE_COUNT; i++) {
        const kat_blake2b *v = &kat_blake2b_tree_vectors[i].plain;
        argonishche_blake2b_state state;
        uint8_t out[64];
        int status = argonishche_blake2b_init_tree(
            &state, k, v->digest_size, (const uint8_t *)v->key, v->key_len,
            (const uint8_t *)v->salt, v->salt_len, (const uint8_t *)v->person, v->person_len,
            &kat_blake2b_tree_vectors[i].tree);
        check(status == ARGONISHCHE_OK, "blake2b_init_tree", b->name, v->source);
        argonishche_blake2b_update(&state, (const uint8_t *)v->data, v->data_len);
        argonishche_blake2b_final(&state, out);
        check_bytes(out, v->digest, v->digest_size, "blake2b tree", b->name, v->source);
    }
}

static argonishche_argon2_request request_for(const kat_argon2 *v, uint8_t *tag,
                                              uint32_t threads) {
    argonishche_argon2_request r;
    memset(&r, 0, sizeof r);
    r.type = v->type, r.version = v->version, r.time_cost = v->time_cost;
    r.memory_cost = v->memory_cost, r.lanes = v->lanes, r.threads = threads;
    r.password = (const uint8_t *)v->password, r.password_len = v->password_len;
    r.salt = (const uint8_t *)v->salt, r.salt_len = v->salt_len;
    r.secret = (const uint8_t *)v->secret, r.secret_len = v->secret_len;
    r.associated_data = (const uint8_t *)v->associated_data;
    r.associated_data_len = v->associated_data_len;
    r.tag = tag, r.tag_len = v->tag_len;
    r.wipe_memory = 1;
    return r;
}

/* argonishche_arena_argon2_hash with a ticket of its own, waiting up to a second for room. */
static int admitted_hash(argonishche_arena *arena, const void *k, argonishche_argon2_request *r,
                         int *os_error) {
    argonishche_memory_ticket ticket;
    memset(&ticket, 0, sizeof ticket);
    int status = argonishche_arena_argon2_hash(arena, k, k, r, &ticket, 1000, os_error);
    argonishche_memory_ticket_close(&ticket);
    return status;
}

static void argon2_vectors(const kat_backend *b, const void *k, argonishche_arena *arenas[4]) {
    static const char *const arena_names[4] = {"system (admitted heap)", "arena", "locked arena",
                                               "hugepages arena"};
    for (int i = 0; i < KAT_ARGON2_COUNT; i++) {
        const kat_argon2 *v = &kat_argon2_vectors[i];
        uint8_t tag[256];
        if (v->tag_len > sizeof tag) continue;
        const uint32_t thread_counts[2] = {1, v->lanes};
        for (int c = 0; c < (v->lanes > 1 ? 2 : 1); c++) {
            const uint32_t threads = thread_counts[c];
            char what[96];
            /* 1. driver-allocated memory (argonishche_aligned_alloc) */
            argonishche_argon2_request r = request_for(v, tag, threads);
            memset(tag, 0, sizeof tag);
            snprintf(what, sizeof what, "argon2 own memory, %u thread(s)", threads);
            check(argonishche_argon2_hash(k, k, &r) == ARGONISHCHE_OK, what, b->name, v->source);
            check_bytes(tag, v->tag, v->tag_len, what, b->name, v->source);

            /* 2. caller memory starting at an odd address (the driver aligns it) */
            size_t need = argonishche_argon2_memory_size(v->memory_cost, v->lanes) + 64;
            uint8_t *buffer = malloc(need + 1);
            r = request_for(v, tag, threads);
            r.memory = buffer + 1, r.memory_len = need;
            memset(tag, 0, sizeof tag);
            snprintf(what, sizeof what, "argon2 caller memory, %u thread(s)", threads);
            check(buffer != NULL && argonishche_argon2_hash(k, k, &r) == ARGONISHCHE_OK, what,
                  b->name, v->source);
            check_bytes(tag, v->tag, v->tag_len, what, b->name, v->source);
            free(buffer);

            /* 3. admitted: the heap, the arenas (VirtualAlloc; VirtualLock; huge pages
             *    compiled out) */
            for (int a = 0; a < 4; a++) {
                int os_error = -1;
                r = request_for(v, tag, threads);
                memset(tag, 0, sizeof tag);
                int status = admitted_hash(arenas[a], k, &r, &os_error);
                snprintf(what, sizeof what, "argon2 %s, %u thread(s) (status %d, os_error %d)",
                         arena_names[a], threads, status, os_error);
                check(status == ARGONISHCHE_OK && os_error == 0, what, b->name, v->source);
                check_bytes(tag, v->tag, v->tag_len, what, b->name, v->source);
            }
        }
    }
}

/* 4 lanes on 4 threads against 1 thread, and against the reference backend's tag. */
static void threads_vs_one(const kat_backend *b, const void *k, uint8_t ref_tag[32]) {
    static const uint8_t password[] = "correct horse battery staple", salt[] = "saltsaltsaltsalt";
    uint8_t one[32], four[32];
    argonishche_argon2_request r;
    memset(&r, 0, sizeof r);
    r.type = ARGONISHCHE_ARGON2ID, r.version = 0x13, r.time_cost = 3, r.memory_cost = 4096;
    r.lanes = 4, r.password = password, r.password_len = sizeof password - 1;
    r.salt = salt, r.salt_len = sizeof salt - 1, r.tag_len = 32, r.wipe_memory = 1;
    r.threads = 1, r.tag = one;
    check(argonishche_argon2_hash(k, k, &r) == ARGONISHCHE_OK, "p=4 on 1 thread", b->name, "");
    r.threads = 4, r.tag = four;
    check(argonishche_argon2_hash(k, k, &r) == ARGONISHCHE_OK, "p=4 on 4 threads", b->name, "");
    check_bytes(four, (const char *)one, 32, "p=4: 4 threads == 1 thread", b->name,
                "m=4096 t=3 Argon2id");
    if (strcmp(b->name, "ref") == 0)
        memcpy(ref_tag, one, 32);
    else
        check_bytes(one, (const char *)ref_tag, 32, "p=4: same tag as ref", b->name,
                    "m=4096 t=3 Argon2id");
}

/* ---- the process's work memory ------------------------------------------------------------ */

typedef struct thread_job {
    argonishche_arena *arena;
    const void *kernels;
    int status;
    uint8_t tag[32];
} thread_job;

static ARGONISHCHE_THREAD_FN(hash_on_a_thread, arg) {
    thread_job *job = arg;
    const kat_argon2 *v = &kat_argon2_vectors[0];
    argonishche_argon2_request r = request_for(v, job->tag, 1);
    int os_error;
    job->status = admitted_hash(job->arena, job->kernels, &r, &os_error);
    return ARGONISHCHE_THREAD_RETURN;
}

static argonishche_memory_stats stats_now(void) {
    argonishche_memory_stats stats;
    argonishche_memory_stats_read(&stats, 0);
    return stats;
}

static void work_memory(const void *k) {
    argonishche_arena *arena = argonishche_arena_new(0);
    check(arena != NULL, "arena_new", "arena", "NULL");
    if (arena == NULL) return;
    const kat_argon2 *v = &kat_argon2_vectors[0];
    size_t need = argonishche_argon2_memory_size(v->memory_cost, v->lanes);
    argonishche_memory_trim();
    argonishche_memory_configure((uint64_t)64 << 20, 60000, 0);

    /* Threads one after another: the first maps, the others reuse what it left. */
    uint64_t maps = stats_now().maps;
    enum { THREADS = 3 };
    for (int i = 0; i < THREADS; i++) {
        thread_job job;
        memset(&job, 0, sizeof job);
        job.arena = arena, job.kernels = k, job.status = -100;
        argonishche_thread handle;
        int started = argonishche_thread_start(&handle, hash_on_a_thread, &job) == 0;
        check(started, "thread started", "arena", "thread_start failed");
        if (!started) return;
        argonishche_thread_join(handle);
        check(job.status == ARGONISHCHE_OK, "arena hash on its own thread", "arena", "status");
        check_bytes(job.tag, v->tag, v->tag_len, "arena hash on its own thread", "arena",
                    v->source);
    }
    argonishche_memory_stats after = stats_now();
    printf("work memory: %d threads in turn made %llu mapping(s), reused %llu time(s)\n",
           THREADS, (unsigned long long)(after.maps - maps), (unsigned long long)after.reuses);
    check(after.maps - maps == 1, "ended threads' memory serves the next thread's hash",
          "arena", "each thread mapped its own");
    check(argonishche_arena_cached_bytes(arena) >= need, "kept after the threads ended",
          "arena", "nothing kept");
    check(argonishche_arena_trim(arena) >= need, "trim frees the kept memory", "arena",
          "it does not");
    check(argonishche_arena_cached_bytes(arena) == 0, "nothing cached after trim", "arena",
          "still cached");

    /* A hash larger than the whole budget is refused at once. */
    uint8_t tag[64];
    argonishche_argon2_request r = request_for(v, tag, 1);
    int os_error;
    argonishche_memory_configure(need / 2, 60000, 0);
    check(admitted_hash(arena, k, &r, &os_error) == ARGONISHCHE_ERR_OVER_BUDGET,
          "a hash over the whole budget is refused", "budget", "it was not");

    /* A full budget: a second ticket waits (a timed wait), then gets the room. */
    argonishche_memory_configure((uint64_t)need, 60000, 0);
    argonishche_memory_ticket holder, waiter;
    memset(&holder, 0, sizeof holder), memset(&waiter, 0, sizeof waiter);
    check(argonishche_memory_reserve(&holder, need, 0) == ARGONISHCHE_OK, "reserve the budget",
          "budget", "refused");
    uint64_t before = argonishche_monotonic_ns();
    int status = argonishche_memory_reserve(&waiter, need, 50);
    uint64_t waited_ms = (argonishche_monotonic_ns() - before) / 1000000u;
    printf("budget: a full budget made the next reservation wait %llu ms (status %d)\n",
           (unsigned long long)waited_ms, status);
    check(status == ARGONISHCHE_WAIT_MEMORY && waited_ms >= 40, "a full budget makes it wait",
          "budget", "it did not wait");
    argonishche_memory_ticket_close(&holder);
    check(argonishche_memory_reserve(&waiter, need, 0) == ARGONISHCHE_OK,
          "room once the holder is done", "budget", "still refused");
    argonishche_memory_ticket_close(&waiter);

    /* The reaper thread gives idle memory back after the idle time. */
    argonishche_memory_configure((uint64_t)64 << 20, 100, 0);
    r = request_for(v, tag, 1);
    check(admitted_hash(arena, k, &r, &os_error) == ARGONISHCHE_OK, "hash for the reaper",
          "arena", "status");
    for (int i = 0; i < 100 && argonishche_arena_cached_bytes(arena) != 0; i++) Sleep(20);
    check(argonishche_arena_cached_bytes(arena) == 0, "idle memory given back by the reaper",
          "arena", "still kept after 2 s");
    argonishche_memory_configure(UINT64_MAX, 10000, 0);
}

static void wipe_and_lock(void) {
    uint8_t buffer[4096];
    memset(buffer, 0xAB, sizeof buffer);
    argonishche_secure_wipe(buffer + 1, sizeof buffer - 2);
    int ok = buffer[0] == 0xAB && buffer[sizeof buffer - 1] == 0xAB;
    for (size_t i = 1; i < sizeof buffer - 1; i++) ok &= buffer[i] == 0;
    check(ok, "secure_wipe zeroes exactly the range", "memory", "it does not");
    void *page = VirtualAlloc(NULL, 65536, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    int error = argonishche_lock_memory(page, 65536);
    printf("lock_memory(64 KiB) -> %d\n", error);
    check(error == 0, "lock_memory of 64 KiB", "memory", "VirtualLock failed");
    VirtualFree(page, 0, MEM_RELEASE);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    probe();
    wipe_and_lock();
    uint32_t usable = usable_features();
    /* NULL: the system allocator (the driver's heap), admitted against the budget. */
    argonishche_arena *arenas[4] = {NULL, argonishche_arena_new(0),
                                    argonishche_arena_new(ARGONISHCHE_ARENA_LOCKED),
                                    argonishche_arena_new(ARGONISHCHE_ARENA_HUGE_PAGES)};
    uint8_t ref_tag[32] = {0};
    int ran = 0;
    for (int i = 0; i < KAT_BACKEND_COUNT; i++) {
        const kat_backend *b = &kat_backends[i];
        if ((b->features & usable) != b->features) {
            printf("skip %-6s (CPU lacks some of: %s)\n", b->name, b->target);
            continue; /* never executed: its instructions could fault */
        }
        const argonishche_kernel_table *k = b->kernels();
        int before = failures;
        check(k->abi_version == ARGONISHCHE_KERNEL_ABI &&
                  k->table_size == sizeof(argonishche_kernel_table),
              "kernel table ABI", b->name, "mismatch");
        check(strcmp(k->compiled_for, b->target) == 0, "compiled_for == the row's target",
              b->name, k->compiled_for);
        blake2b_vectors(b, k);
        blake2b_tree_vectors(b, k);
        argon2_vectors(b, k, arenas);
        threads_vs_one(b, k, ref_tag);
        printf("%-4s %-6s (compiled for \"%s\")\n", failures == before ? "ok" : "FAIL", b->name,
               k->compiled_for);
        ran++;
    }
    check(ran >= 2, "ref and at least sse2 ran", "main", "too few backends ran");
    work_memory(kat_backends[0].kernels());
    printf("%d checks, %d failed, %d of %d backends run\n", checks, failures, ran,
           KAT_BACKEND_COUNT);
    return failures == 0 ? 0 : 1;
}
