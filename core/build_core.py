"""cffi build script for argonishche._core: the Argon2 driver, BLAKE2b and the CPU probe.

Run by setuptools (see setup.py's cffi_modules) from the project root.  The declarations below
mirror core/csrc/argonishche_core.h, which documents them; byte inputs are declared ``char *``
here so that cffi passes a Python ``bytes`` object straight through, without a from_buffer.
"""

import os

from cffi import FFI

HERE = os.path.relpath(os.path.dirname(os.path.abspath(__file__)))
CSRC = os.path.join(HERE, "csrc")
INCLUDE = os.path.join(HERE, "argonishche", "include")

CDEF = """
#define ARGONISHCHE_KERNEL_ABI ...
#define ARGONISHCHE_OK ...
#define ARGONISHCHE_ERR_PARAMETER ...
#define ARGONISHCHE_ERR_NO_MEMORY ...
#define ARGONISHCHE_ERR_MEMORY_TOO_SMALL ...
#define ARGONISHCHE_ARGON2D ...
#define ARGONISHCHE_ARGON2I ...
#define ARGONISHCHE_ARGON2ID ...
#define ARGONISHCHE_CPU_SSE2 ...
#define ARGONISHCHE_CPU_SSSE3 ...
#define ARGONISHCHE_CPU_SSE4_1 ...
#define ARGONISHCHE_CPU_AVX ...
#define ARGONISHCHE_CPU_AVX2 ...
#define ARGONISHCHE_CPU_AVX512F ...
#define ARGONISHCHE_CPU_AVX512VL ...
#define ARGONISHCHE_CPU_AVX512BW ...

typedef struct argonishche_block { uint64_t v[128]; } argonishche_block;
typedef struct argonishche_kernel_table {
    uint32_t abi_version;
    uint32_t table_size;
    void (*blake2b_compress)(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                             size_t nblocks, uint64_t increment, uint64_t final_flag);
    void (*argon2_fill_block)(argonishche_block *next, const argonishche_block *prev,
                              const argonishche_block *ref, int xor_into_next);
} argonishche_kernel_table;

typedef struct argonishche_blake2b_state { size_t digest_size; ...; } argonishche_blake2b_state;

int argonishche_blake2b_init(argonishche_blake2b_state *state, const void *kernel_table,
                             size_t digest_size, const char *key, size_t key_len,
                             const char *salt, size_t salt_len, const char *person,
                             size_t person_len);
void argonishche_blake2b_update(argonishche_blake2b_state *state, const char *data, size_t len);
void argonishche_blake2b_final(const argonishche_blake2b_state *state, char *out);
int argonishche_blake2b_oneshot(const void *kernel_table, char *out, size_t digest_size,
                                const char *data, size_t len);

typedef struct argonishche_argon2_request {
    uint32_t type;
    uint32_t version;
    uint32_t time_cost;
    uint32_t memory_cost;
    uint32_t lanes;
    uint32_t threads;
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
    void *memory;
    size_t memory_len;
    int wipe_memory;
} argonishche_argon2_request;

size_t argonishche_argon2_memory_size(uint32_t memory_cost, uint32_t lanes);
int argonishche_argon2_hash(const void *argon2_kernels, const void *blake2b_kernels,
                            const argonishche_argon2_request *request);
void argonishche_secure_wipe(void *p, size_t n);
uint32_t argonishche_cpu_features(void);

/* From the C library, for the built-in allocators (argonishche.allocators). */
void *aligned_alloc(size_t alignment, size_t size);
void free(void *p);
int mlock(const void *p, size_t n);
int munlock(const void *p, size_t n);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "argonishche._core",
    '#include <stdlib.h>\n#include <sys/mman.h>\n#include "argonishche_core.h"',
    sources=[os.path.join(CSRC, name) for name in
             ("argon2.c", "blake2b.c", "cpu_features.c", "memory.c")],
    include_dirs=[CSRC, INCLUDE],
    # Optimisation only: the core must import on any x86-64 CPU, so no ISA flags here.
    extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra"],
    libraries=["pthread"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
