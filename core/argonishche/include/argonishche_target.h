/*
 * argonishche_target.h - compile a kernel file's kernels, and only them, for one instruction set.
 *
 * The instruction set is not chosen in the C file: the build passes ARGONISHCHE_KERNEL_TARGET,
 * made from the backend's cpu_features (argonishche.build.backend_ffibuilder), e.g. "sse2,ssse3",
 * and ARGONISHCHE_KERNEL_TARGET_CLANG, clang's spelling of the same (they differ on aarch64).
 * A kernel file includes its intrinsics headers, then wraps its kernels:
 *
 *     #include <tmmintrin.h>
 *     #include "argonishche_target.h"
 *     ARGONISHCHE_TARGET_BEGIN
 *     ... kernels ...
 *     ARGONISHCHE_TARGET_END
 *     ARGONISHCHE_DEFINE_KERNELS(my_compress, my_fill_block)
 *
 * Between BEGIN and END every function is compiled for that target: GCC's "#pragma GCC target",
 * or clang's "#pragma clang attribute", which gives each function a target attribute (clang
 * ignores GCC's pragma).  Everything else, above all the exported argonishche_kernels() that the
 * core calls before any CPU check, stays baseline, so importing the module is safe on any CPU
 * (the kernel contract's rule 1).  The same string is stored in the kernel table, where the
 * registry checks it against the backend's descriptor (rule 2).
 *
 * Intrinsics headers go before BEGIN: both compilers' headers enable their own instruction sets
 * function by function, and clang would otherwise apply the target to them a second time.
 */
#ifndef ARGONISHCHE_TARGET_H
#define ARGONISHCHE_TARGET_H

#include "argonishche_kernel.h"

#define ARGONISHCHE_PRAGMA_(text) _Pragma(#text)
/* One more expansion, so that ARGONISHCHE_KERNEL_TARGET becomes its string before _Pragma. */
#define ARGONISHCHE_PRAGMA(text) ARGONISHCHE_PRAGMA_(text)

#if defined(__clang__)
/* clang's names differ from GCC's on aarch64 ("neon,sha3" for "+simd,arch=armv8.2-a+sha3"); the
 * build passes both, from the CPU-feature table. */
#ifndef ARGONISHCHE_KERNEL_TARGET_CLANG
#define ARGONISHCHE_KERNEL_TARGET_CLANG ARGONISHCHE_KERNEL_TARGET
#endif
#define ARGONISHCHE_TARGET_BEGIN                                                             \
    ARGONISHCHE_PRAGMA(clang attribute push(                                                 \
        __attribute__((target(ARGONISHCHE_KERNEL_TARGET_CLANG))), apply_to = function))
#define ARGONISHCHE_TARGET_END ARGONISHCHE_PRAGMA(clang attribute pop)
#elif defined(__GNUC__)
#define ARGONISHCHE_TARGET_BEGIN                                                             \
    ARGONISHCHE_PRAGMA(GCC push_options) ARGONISHCHE_PRAGMA(GCC target(ARGONISHCHE_KERNEL_TARGET))
#define ARGONISHCHE_TARGET_END ARGONISHCHE_PRAGMA(GCC pop_options)
#else
#error "argonishche kernels need GCC or clang to enable an instruction set per function"
#endif

/* Kernel helpers that must be inlined into their kernel (so they share its target). */
#define ARGONISHCHE_INLINE static inline __attribute__((always_inline))

#endif /* ARGONISHCHE_TARGET_H */
