/*
 * code_identity.h - which shared object holds a function, for certification records.
 *
 * A certification is remembered for the code that runs: the files holding the functions a kernel
 * table points at, found from the pointers themselves (a Python module that re-exports another
 * module's compiled kernels must not carry a certification across a change of that code).
 * core/build_core.py adds this header's ARGONISHCHE_API functions to argonishche._core.
 */
#ifndef ARGONISHCHE_CODE_IDENTITY_H
#define ARGONISHCHE_CODE_IDENTITY_H

#include <stdint.h>

#ifndef ARGONISHCHE_API
#define ARGONISHCHE_API
#endif

/* The path of the shared object (or executable) whose mapping holds *address*, and in *base* the
 * address it is loaded at; NULL (and *base = 0) where that cannot be known: no dladdr (Windows),
 * an address in no loaded object.  The string belongs to the dynamic loader and stays valid while
 * the object is loaded: copy it at once. */
ARGONISHCHE_API
const char *argonishche_code_file(const void *address, uintptr_t *base);

#endif
