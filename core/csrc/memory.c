/*
 * memory.c - wiping secrets so that the compiler cannot optimise the wipe away, keeping them out
 * of swap, and faulting work memory in a page at a time (with the statistic tests read).
 */
#define _DEFAULT_SOURCE /* explicit_bzero in glibc's <string.h> */
#include "platform.h"   /* first: mlock vs VirtualLock */

#include <errno.h>
#include <string.h>

#include "argonishche_core.h"

void argonishche_secure_wipe(void *p, size_t n) {
    if (p == NULL || n == 0) return;
#if defined(_WIN32)
    SecureZeroMemory(p, n);
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))
    explicit_bzero(p, n);
#else
    /* Calling memset through a volatile pointer hides from the optimiser that the stores are
     * dead, which is what lets it drop a plain memset before free(). */
    static void *(*const volatile memset_unelided)(void *, int, size_t) = memset;
    memset_unelided(p, 0, n);
#endif
}

int argonishche_lock_memory(void *p, size_t n) {
    return argonishche_pages_lock(p, n);
}

/* ---- pre-faulting, and its statistic for tests ------------------------------------------- */

/* Here, not in platform.h (which holds no state) nor in a caller (the driver and the arenas
 * both pre-fault): the lowest file that every pre-fault passes through. */
static size_t largest_populate; /* bytes, the most one pre-fault faulted in at a time */

void argonishche_prefault(void *memory, size_t size) {
    size_t bytes = argonishche_pages_prefault(memory, size);
    size_t seen = __atomic_load_n(&largest_populate, __ATOMIC_RELAXED);
    while (bytes > seen && !__atomic_compare_exchange_n(&largest_populate, &seen, bytes, 1,
                                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

size_t argonishche_largest_populate(int reset) {
    if (reset) return __atomic_exchange_n(&largest_populate, 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&largest_populate, __ATOMIC_RELAXED);
}
