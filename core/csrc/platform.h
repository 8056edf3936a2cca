/*
 * platform.h - the operating-system and compiler differences of the core, written once.
 *
 * Private to core/csrc (never included by argonishche_core.h, so cffi and kernel files do not
 * see <windows.h>).  Two families: POSIX (Linux, macOS, the BSDs; GCC or clang) and Windows
 * (mingw-w64's GCC, proven with wine by tools/win_c; MSVC is written for but untested).  Each
 * shim is a macro or a static inline function, so the POSIX build compiles to the same calls as
 * before the shims existed.
 *
 *   threads        argonishche_thread_start/join, argonishche_thread_start_detached,
 *                  ARGONISHCHE_THREAD_FN/_RETURN
 *   mutex, cond    argonishche_mutex (static ARGONISHCHE_MUTEX_INIT), argonishche_cond;
 *                  argonishche_cond_init_timed and argonishche_cond_wait_until for waits with
 *                  a deadline on argonishche_monotonic_ns's clock
 *   clock          argonishche_monotonic_ns: never steps back (the wall clock may)
 *   once           argonishche_once_flag, argonishche_call_once
 *   thread slots   argonishche_tls_key, ARGONISHCHE_TLS_DESTRUCTOR: a per-thread pointer whose
 *                  destructor runs when the thread ends (pthread key; Windows: a fiber-local
 *                  slot from FlsAlloc, whose callback runs at thread exit, or when a fiber is
 *                  deleted: then per fiber, which is harmless, as a hash never switches fibers)
 *   pages          argonishche_pages_map/unmap/lock/prefault, argonishche_page_size (mmap vs
 *                  VirtualAlloc; mlock vs VirtualLock, whose limit is the working-set minimum;
 *                  a write fault per page, never a populate call)
 *   errors         argonishche_os_error: errno, or on Windows the errno nearest GetLastError(),
 *                  so that Python's os.strerror explains it on both
 *   aligned heap   argonishche_aligned_alloc/free (aligned_alloc vs _aligned_malloc)
 *   CPU            ARGONISHCHE_X86, ARGONISHCHE_MSVC_INTRINSICS, ARGONISHCHE_PREFETCH
 *   POSIX only     ARGONISHCHE_HAVE_FORK (pthread_atfork; Windows has no fork) and
 *                  ARGONISHCHE_HAVE_HUGE_PAGES (trimmable mappings + MADV_HUGEPAGE; Windows
 *                  large pages need SeLockMemoryPrivilege: an ordinary mapping there)
 */
#ifndef ARGONISHCHE_PLATFORM_H
#define ARGONISHCHE_PLATFORM_H

/* Include this first in a .c file: glibc reads _DEFAULT_SOURCE (MAP_ANONYMOUS, MAP_POPULATE,
 * madvise, explicit_bzero under -std=c11) at its first header only. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- compiler and CPU ---------------------------------------------------------------------- */

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define ARGONISHCHE_X86 1
#else
#define ARGONISHCHE_X86 0
#endif

/* CPUID/XGETBV through <intrin.h> (__cpuid, __cpuidex, _xgetbv) rather than GCC's <cpuid.h>
 * and inline asm: MSVC has only the former.  tools/win_c forces it on to exercise that path
 * with mingw's GCC (ARGONISHCHE_FORCE_MSVC_INTRINSICS). */
#if ARGONISHCHE_X86 && ((defined(_MSC_VER) && !defined(__clang__)) || \
                        defined(ARGONISHCHE_FORCE_MSVC_INTRINSICS))
#define ARGONISHCHE_MSVC_INTRINSICS 1
#else
#define ARGONISHCHE_MSVC_INTRINSICS 0
#endif

/* Start loading the cache line at p for reading, kept in every cache level. */
#if defined(__GNUC__) || defined(__clang__)
#define ARGONISHCHE_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#elif defined(_MSC_VER) && ARGONISHCHE_X86
#include <xmmintrin.h>
#define ARGONISHCHE_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define ARGONISHCHE_PREFETCH(p) ((void)(p))
#endif

/* ---- Windows ------------------------------------------------------------------------------- */

#if defined(_WIN32)

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <malloc.h>
#include <process.h>
#include <windows.h>

#define ARGONISHCHE_HAVE_FORK 0
#define ARGONISHCHE_HAVE_HUGE_PAGES 0

typedef HANDLE argonishche_thread;
#define ARGONISHCHE_THREAD_FN(name, arg) unsigned __stdcall name(void *arg)
#define ARGONISHCHE_THREAD_RETURN 0

/* 0, or nonzero if the thread could not be made. */
static inline int argonishche_thread_start(argonishche_thread *thread,
                                           unsigned(__stdcall *fn)(void *), void *arg) {
    uintptr_t handle = _beginthreadex(NULL, 0, fn, arg, 0, NULL);
    if (handle == 0) return -1;
    *thread = (HANDLE)handle;
    return 0;
}

static inline void argonishche_thread_join(argonishche_thread thread) {
    WaitForSingleObject(thread, INFINITE);
    CloseHandle(thread);
}

/* A thread nobody joins: 0, or nonzero if it could not be made. */
static inline int argonishche_thread_start_detached(unsigned(__stdcall *fn)(void *), void *arg) {
    argonishche_thread thread;
    if (argonishche_thread_start(&thread, fn, arg) != 0) return -1;
    CloseHandle(thread);
    return 0;
}

typedef SRWLOCK argonishche_mutex;
typedef CONDITION_VARIABLE argonishche_cond;
#define ARGONISHCHE_MUTEX_INIT SRWLOCK_INIT
#define ARGONISHCHE_COND_INIT CONDITION_VARIABLE_INIT
#define argonishche_mutex_lock(m) AcquireSRWLockExclusive(m)
#define argonishche_mutex_unlock(m) ReleaseSRWLockExclusive(m)
#define argonishche_mutex_destroy(m) ((void)(m)) /* SRW locks hold no resources */
#define argonishche_cond_wait(c, m) SleepConditionVariableSRW((c), (m), INFINITE, 0)
#define argonishche_cond_broadcast(c) WakeAllConditionVariable(c)
#define argonishche_cond_destroy(c) ((void)(c))

static inline uint64_t argonishche_monotonic_ns(void) {
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (uint64_t)((double)count.QuadPart * 1e9 / (double)frequency.QuadPart);
}

#define argonishche_cond_init_timed(c) InitializeConditionVariable(c)

/* Waits until signalled (or spuriously woken) or until the monotonic clock reads deadline_ns. */
static inline void argonishche_cond_wait_until(argonishche_cond *c, argonishche_mutex *m,
                                               uint64_t deadline_ns) {
    uint64_t now = argonishche_monotonic_ns();
    uint64_t ms = deadline_ns > now ? (deadline_ns - now + 999999) / 1000000 : 0;
    SleepConditionVariableSRW(c, m, ms >= INFINITE ? INFINITE - 1 : (DWORD)ms, 0);
}

typedef INIT_ONCE argonishche_once_flag;
#define ARGONISHCHE_ONCE_INIT INIT_ONCE_STATIC_INIT

typedef struct argonishche_once_call {
    void (*fn)(void);
} argonishche_once_call;

static inline BOOL CALLBACK argonishche_once_trampoline(PINIT_ONCE once, PVOID call, PVOID *context) {
    (void)once;
    (void)context;
    ((argonishche_once_call *)call)->fn();
    return TRUE;
}

static inline void argonishche_call_once(argonishche_once_flag *flag, void (*fn)(void)) {
    argonishche_once_call call = {fn};
    InitOnceExecuteOnce(flag, argonishche_once_trampoline, &call, NULL);
}

typedef DWORD argonishche_tls_key;
#define ARGONISHCHE_TLS_DESTRUCTOR(name, arg) void NTAPI name(PVOID arg)
static inline void argonishche_tls_create(argonishche_tls_key *key, PFLS_CALLBACK_FUNCTION fn) {
    *key = FlsAlloc(fn); /* unchecked, like pthread_key_create: fails only when the process
                            has used up every slot */
}
#define argonishche_tls_get(key) FlsGetValue(key)
#define argonishche_tls_set(key, value) ((void)FlsSetValue((key), (value)))

static inline int argonishche_os_error(void) {
    switch (GetLastError()) {
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
    case ERROR_COMMITMENT_LIMIT:
    case ERROR_WORKING_SET_QUOTA:
        return ENOMEM;
    case ERROR_ACCESS_DENIED:
    case ERROR_PRIVILEGE_NOT_HELD:
        return EPERM;
    default:
        return EINVAL;
    }
}

static inline size_t argonishche_page_size(void) {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return info.dwPageSize;
}

/* Zero-filled read/write pages, or NULL with *os_error set.  There is no MAP_POPULATE: pages
 * are faulted in by their first use (or by VirtualLock). */
static inline void *argonishche_pages_map(size_t size, int populate, int *os_error) {
    (void)populate;
    void *memory = VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (memory == NULL) *os_error = argonishche_os_error();
    return memory;
}

/* Releases a whole mapping made by argonishche_pages_map (Windows cannot release part of one). */
static inline void argonishche_pages_unmap(void *memory, size_t size) {
    (void)size;
    VirtualFree(memory, 0, MEM_RELEASE); /* also unlocks */
}

/* Keeps the pages in RAM: 0, or the errno (ENOMEM past the working-set minimum, which
 * SetProcessWorkingSetSize raises, as ulimit -l does for mlock). */
static inline int argonishche_pages_lock(void *memory, size_t size) {
    return VirtualLock(memory, size) ? 0 : argonishche_os_error();
}

static inline void *argonishche_aligned_alloc(size_t alignment, size_t size) {
    return _aligned_malloc(size, alignment);
}
#define argonishche_aligned_free(p) _aligned_free(p)

/* ---- POSIX --------------------------------------------------------------------------------- */

#else

#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ARGONISHCHE_HAVE_FORK 1
#define ARGONISHCHE_HAVE_HUGE_PAGES 1

typedef pthread_t argonishche_thread;
#define ARGONISHCHE_THREAD_FN(name, arg) void *name(void *arg)
#define ARGONISHCHE_THREAD_RETURN NULL
#define argonishche_thread_start(thread, fn, arg) pthread_create((thread), NULL, (fn), (arg))
#define argonishche_thread_join(thread) pthread_join((thread), NULL)

/* A thread nobody joins: 0, or nonzero if it could not be made. */
static inline int argonishche_thread_start_detached(void *(*fn)(void *), void *arg) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, fn, arg) != 0) return -1;
    pthread_detach(thread);
    return 0;
}

typedef pthread_mutex_t argonishche_mutex;
typedef pthread_cond_t argonishche_cond;
#define ARGONISHCHE_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define ARGONISHCHE_COND_INIT PTHREAD_COND_INITIALIZER
#define argonishche_mutex_lock(m) pthread_mutex_lock(m)
#define argonishche_mutex_unlock(m) pthread_mutex_unlock(m)
#define argonishche_mutex_destroy(m) pthread_mutex_destroy(m)
#define argonishche_cond_wait(c, m) pthread_cond_wait((c), (m))
#define argonishche_cond_broadcast(c) pthread_cond_broadcast(c)
#define argonishche_cond_destroy(c) pthread_cond_destroy(c)

static inline uint64_t argonishche_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* A condition variable whose deadlines are on the monotonic clock (a static initializer's are
 * on the wall clock, which an administrator or NTP may step).  macOS cannot choose the clock:
 * there argonishche_cond_wait_until waits a relative time instead. */
static inline void argonishche_cond_init_timed(argonishche_cond *c) {
#if defined(__APPLE__)
    pthread_cond_init(c, NULL);
#else
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(c, &attributes);
    pthread_condattr_destroy(&attributes);
#endif
}

/* Waits until signalled (or spuriously woken) or until the monotonic clock reads deadline_ns;
 * *c* made by argonishche_cond_init_timed. */
static inline void argonishche_cond_wait_until(argonishche_cond *c, argonishche_mutex *m,
                                               uint64_t deadline_ns) {
    struct timespec at;
#if defined(__APPLE__)
    uint64_t now = argonishche_monotonic_ns(), wait = deadline_ns > now ? deadline_ns - now : 0;
    at.tv_sec = (time_t)(wait / 1000000000u), at.tv_nsec = (long)(wait % 1000000000u);
    pthread_cond_timedwait_relative_np(c, m, &at);
#else
    at.tv_sec = (time_t)(deadline_ns / 1000000000u), at.tv_nsec = (long)(deadline_ns % 1000000000u);
    pthread_cond_timedwait(c, m, &at);
#endif
}

typedef pthread_once_t argonishche_once_flag;
#define ARGONISHCHE_ONCE_INIT PTHREAD_ONCE_INIT
#define argonishche_call_once(flag, fn) pthread_once((flag), (fn))

typedef pthread_key_t argonishche_tls_key;
#define ARGONISHCHE_TLS_DESTRUCTOR(name, arg) void name(void *arg)
#define argonishche_tls_create(key, fn) pthread_key_create((key), (fn))
#define argonishche_tls_get(key) pthread_getspecific(key)
#define argonishche_tls_set(key, value) pthread_setspecific((key), (value))

#define argonishche_os_error() errno
#define argonishche_page_size() ((size_t)sysconf(_SC_PAGESIZE))

/* Zero-filled read/write pages, or NULL with *os_error set; populate: fault them all in now. */
static inline void *argonishche_pages_map(size_t size, int populate, int *os_error) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_POPULATE
    if (populate) flags |= MAP_POPULATE;
#else
    (void)populate;
#endif
    void *memory = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (memory == MAP_FAILED) {
        *os_error = errno;
        return NULL;
    }
    return memory;
}

/* Any page-aligned part of a mapping (huge-page trimming unmaps its edges). */
#define argonishche_pages_unmap(memory, size) munmap((memory), (size)) /* also unlocks */
#define argonishche_pages_lock(memory, size) (mlock((memory), (size)) == 0 ? 0 : errno)

#define argonishche_aligned_alloc(alignment, size) aligned_alloc((alignment), (size))
#define argonishche_aligned_free(p) free(p)

#endif

/* ---- both ---------------------------------------------------------------------------------- */

/* Faults in every page of [memory, memory + size) (any alignment) without changing its
 * contents, so it may run on memory part of which already holds data: an atomic OR of zero into
 * one byte per page, each a page fault of its own.
 *   - Not a read then a write (p[i] = p[i]): reading an untouched page maps the shared zero page,
 *     and the write after it faults again, copies, and flushes the TLB of every CPU running a
 *     thread of the process (inter-processor interrupts, and in a VM exits to the hypervisor):
 *     an order of magnitude slower.  A read-modify-write instruction faults once, as a write
 *     (tools/bench_fault_in.py measures both; docs/memory.md has the figures).
 *   - Not MADV_POPULATE_WRITE nor MAP_POPULATE: those hold the process's memory-map lock until
 *     the call returns, and meanwhile every other thread's mmap, munmap and mprotect waits (a
 *     thread start's stack, malloc's large blocks): a preempted populating thread stalled an
 *     event loop starting executor threads for longer than argon2-cffi's hashes did (issue 24,
 *     tools/bench_async_stall.py).  A page fault takes only its own range's lock (per-VMA
 *     locks, Linux 6.4+).
 * Where huge pages are advised, the first touch of each 2 MiB faults in the whole huge page.
 * Only the thread that owns the range may be writing it meanwhile.  Returns the bytes each touch
 * faulted in (a page; 0 for an empty range).  The core calls it through argonishche_prefault
 * (memory.c), which records that figure for the tests: this header calls nothing of the core. */
static inline size_t argonishche_pages_prefault(void *memory, size_t size) {
    if (size == 0) return 0;
    size_t page = argonishche_page_size();
    uintptr_t start = (uintptr_t)memory & ~(uintptr_t)(page - 1), end = (uintptr_t)memory + size;
    uint8_t *p = memory;
    for (uintptr_t at_page = start; at_page < end; at_page += page) {
        size_t offset = at_page < (uintptr_t)memory ? 0 : (size_t)(at_page - (uintptr_t)memory);
#if defined(_MSC_VER) && !defined(__clang__)
        _InterlockedOr8((volatile char *)(p + offset), 0);
#else
        __atomic_fetch_or(p + offset, (uint8_t)0, __ATOMIC_RELAXED);
#endif
    }
    return page;
}

#endif /* ARGONISHCHE_PLATFORM_H */
