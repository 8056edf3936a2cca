/*
 * argonishche_kernel.h - the contract between the argonishche core and a kernel backend.
 *
 * The core owns everything that is the same on every CPU: the Argon2 driver (H0, H', reference
 * indexing, segments, passes, lane threads, memory) and BLAKE2b's init/update/final.  A backend owns
 * only the two inner loops whose speed depends on the instruction set:
 *
 *   - the BLAKE2b compression function F (RFC 7693 section 3.2), and
 *   - the Argon2 compression function G applied to one 1 KiB block (RFC 9106 section 3.5).
 *
 * A backend is a compiled Python module (built with cffi, see argonishche.build) that exports
 *
 *     const void *argonishche_kernels(void);      returns a const argonishche_kernel_table *
 *     #define ARGONISHCHE_KERNEL_ABI ...           the ABI the module was compiled against
 *
 * and a pluggy plugin that registers a descriptor naming that module and the CPU features its
 * kernels need.  The core checks the CPU first, then the ABI number, then runs known-answer tests,
 * and only then calls the kernels through these function pointers; nothing else runs per block.
 *
 * Rules a backend must keep:
 *   1. Importing the module and calling argonishche_kernels() must be safe on ANY CPU of its
 *      architecture.  Enable the instruction set on the kernel functions only, with
 *      ARGONISHCHE_TARGET_BEGIN / ARGONISHCHE_TARGET_END from argonishche_target.h, never with -m
 *      flags on the whole module: cffi's glue and the module's init code would then be compiled
 *      for that ISA too and could fault at import.
 *   2. Compile for no more than the descriptor's cpu_features.  The table records the target the
 *      kernels were compiled for (compiled_for, filled in by ARGONISHCHE_DEFINE_KERNELS), and the
 *      core refuses a module whose target exceeds the features its descriptor declares: the CPU
 *      gate checks the declared features only, so an undeclared one would be SIGILL, not an error.
 *   3. Kernels are pure functions of their arguments: no globals, no allocation, no locks.  The core
 *      calls them concurrently from one thread per Argon2 lane.
 *   4. Blocks passed to argon2_fill_block are 64-byte aligned; BLAKE2b input is not aligned.
 *   5. Change nothing here without bumping ARGONISHCHE_KERNEL_ABI: the core refuses a table whose
 *      abi_version differs from its own, so a stale plugin wheel fails loudly instead of corrupting.
 */
#ifndef ARGONISHCHE_KERNEL_H
#define ARGONISHCHE_KERNEL_H

#include <stddef.h>
#include <stdint.h>

/* 2: the table gained compiled_for.
 * 3: blake2b_compress gained last_node_flag, the f1 word (BLAKE2 tree hashing's last node). */
#define ARGONISHCHE_KERNEL_ABI 3

#define ARGONISHCHE_BLOCK_BYTES 1024   /* one Argon2 memory block */
#define ARGONISHCHE_BLOCK_WORDS 128    /* ... as little-endian 64-bit words */
#define ARGONISHCHE_BLAKE2B_BLOCK_BYTES 128

typedef struct argonishche_block {
    uint64_t v[ARGONISHCHE_BLOCK_WORDS];
} argonishche_block;

/*
 * BLAKE2b compression F over `nblocks` consecutive 128-byte blocks.
 * Before each block the 128-bit byte counter t (t[0] low, t[1] high) is increased by `increment`;
 * `final_flag` is the f0 word (0, or all ones for the last block) and `last_node_flag` the f1
 * word (all ones for the last block of the last node of a tree level, else 0): F computes with
 * v[14] = IV[6] ^ f0 and v[15] = IV[7] ^ f1 (RFC 7693 section 3.2; f1 is the
 * BLAKE2 paper's, for tree hashing).
 * The core passes several blocks only with increment 128 and both flags 0, and the last block
 * of a message alone, with its own byte count as increment: so a kernel may keep h in registers
 * across a run of full blocks.
 * F is never called with more than ARGONISHCHE_BLAKE2B_MAX_RUN blocks: the core splits a longer
 * run into calls of at most that many.  Certification runs F over exactly that many blocks (and
 * one more, split), so no run a user's input makes is longer than one certification checked: a
 * kernel wrong only for longer runs is never reached.
 */
#define ARGONISHCHE_BLAKE2B_MAX_RUN 16384 /* blocks: 2 MiB; see above */
typedef void (*argonishche_blake2b_compress_fn)(uint64_t h[8], uint64_t t[2],
                                                const uint8_t *blocks, size_t nblocks,
                                                uint64_t increment, uint64_t final_flag,
                                                uint64_t last_node_flag);

/*
 * Argon2 compression G (RFC 9106 section 3.5): next = G(prev, ref), or, when xor_into_next is
 * nonzero (version 0x13 after the first pass), next = G(prev, ref) XOR next.
 * `next` never aliases `prev` or `ref`; `prev` and `ref` may be the same block.
 */
typedef void (*argonishche_argon2_fill_block_fn)(argonishche_block *next,
                                                 const argonishche_block *prev,
                                                 const argonishche_block *ref,
                                                 int xor_into_next);

typedef struct argonishche_kernel_table {
    uint32_t abi_version;   /* ARGONISHCHE_KERNEL_ABI as the backend was built */
    uint32_t table_size;    /* sizeof(argonishche_kernel_table) as the backend was built */
    argonishche_blake2b_compress_fn blake2b_compress;     /* required */
    argonishche_argon2_fill_block_fn argon2_fill_block;   /* required */
    const char *compiled_for;   /* the compiler target of the kernels, e.g. "sse2,ssse3"; "" for
                                   the architecture's baseline (see argonishche_target.h) */
} argonishche_kernel_table;

/* The one function a backend module exports: its table, as a const argonishche_kernel_table *. */
const void *argonishche_kernels(void);

/* The compiler target a kernel file's ARGONISHCHE_TARGET_BEGIN enables; the build defines it from
 * the backend's cpu_features (argonishche.build), and a file without SIMD kernels has none. */
#ifndef ARGONISHCHE_KERNEL_TARGET
#define ARGONISHCHE_KERNEL_TARGET ""
#endif

/* Define a backend's table and its exported accessor in one line, after the kernels. */
#define ARGONISHCHE_DEFINE_KERNELS(compress, fill_block)                                    \
    static const argonishche_kernel_table argonishche_kernel_table_instance = {             \
        ARGONISHCHE_KERNEL_ABI, (uint32_t)sizeof(argonishche_kernel_table), compress,       \
        fill_block, ARGONISHCHE_KERNEL_TARGET};                                             \
    const void *argonishche_kernels(void) { return &argonishche_kernel_table_instance; }

#endif /* ARGONISHCHE_KERNEL_H */
