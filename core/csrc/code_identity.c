/*
 * code_identity.c - which shared object holds a function (see argonishche_code_file in
 * argonishche_core.h): a certification is remembered for the code a kernel table points at, found
 * from the pointers themselves, so that a Python module re-exporting another module's compiled
 * kernels cannot carry a certification across a change of that code.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* glibc declares dladdr and Dl_info only with it */
#endif

#include "argonishche_core.h"

#if !defined(_WIN32)
#include <dlfcn.h>
#endif

const char *argonishche_code_file(const void *address, uintptr_t *base) {
    *base = 0;
#if defined(_WIN32)
    (void)address; /* no dladdr: the caller treats the code as unidentified (no record) */
    return NULL;
#else
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0 || info.dli_fname == NULL ||
        info.dli_fname[0] == '\0') {
        return NULL;
    }
    *base = (uintptr_t)info.dli_fbase;
    return info.dli_fname;
#endif
}
