/*
 * memory.c - wiping secrets so that the compiler cannot optimise the wipe away, and keeping them
 * out of swap.
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
