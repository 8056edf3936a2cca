/*
 * misbehaving.c - ref's kernels with the misbehaviour a #define before this file switches on
 * (tests/plugin_wheels.py writes one small C file per kernel module: the defines, then
 * #include "misbehaving.c"; ref.c is copied next to it).  The third-party kernels the trust
 * tests (tests/trust/test_plugin_trust.py) install as real wheels:
 *
 *   TRUST_G_AFTER_CALLS n  G is right for the first n calls in a process, then flips a bit of
 *                          every result: a time bomb no check done before it goes off can see;
 *   TRUST_G_BEHIND n       G flips a bit when ref lies more than n blocks behind prev;
 *   TRUST_F_RUN_FROM n     F flips a bit of h after a run of n or more blocks in one call;
 *   TRUST_F_TRAP_FROM n    F executes ud2 (SIGILL) for a run of n or more blocks;
 *   TRUST_F_HANG_FROM n    F never returns for a run of n or more blocks;
 *   TRUST_F_COUNTER_PAST n F flips a bit of h once the byte counter t passes n (a message of
 *                          more than n bytes): certification's messages are shorter;
 *   TRUST_F_HIGH_WORD      F flips a bit of h whenever the counter's high word t[1] is not 0;
 *   TRUST_F_LAST_NODE_PAST n  F flips a bit of h when the last-node flag f1 is set and the
 *                          counter has passed n;
 *   TRUST_AVX512_IN_G      every G call runs an AVX-512 instruction in a helper compiled with its
 *                          own target("avx512f") attribute, whatever the module declares: right
 *                          results where AVX-512 exists, SIGILL where it does not.
 *
 * Every module also exports trust_g_calls(), the number of G calls this process made, so that a
 * test can tell that a time bomb did go off.
 */
#include <stdint.h>
#include <unistd.h>

/* ref.c, with its table and accessor renamed: this file defines the module's own below. */
#define argonishche_kernels ref_argonishche_kernels
#define argonishche_kernel_table_instance ref_kernel_table_instance
#include "ref.c"
#undef argonishche_kernels
#undef argonishche_kernel_table_instance

static unsigned long long g_calls;

unsigned long long trust_g_calls(void) { return __atomic_load_n(&g_calls, __ATOMIC_RELAXED); }

#ifdef TRUST_AVX512_IN_G
#include <immintrin.h>
/* Zero, read at run time: the compiler cannot fold the XOR below away. */
static volatile uint64_t zero_mask;

__attribute__((target("avx512f"), noinline)) static void avx512_touch(argonishche_block *next) {
    __m512i mask = _mm512_set1_epi64((long long)zero_mask);
    __m512i words = _mm512_loadu_si512((const void *)next->v);
    _mm512_storeu_si512((void *)next->v, _mm512_xor_si512(words, mask));
}
#endif

static void trust_blake2b_compress(uint64_t h[8], uint64_t t[2], const uint8_t *blocks,
                                   size_t nblocks, uint64_t increment, uint64_t final_flag,
                                   uint64_t last_node_flag) {
#ifdef TRUST_F_TRAP_FROM
    if (nblocks >= TRUST_F_TRAP_FROM) __builtin_trap();
#endif
#ifdef TRUST_F_HANG_FROM
    if (nblocks >= TRUST_F_HANG_FROM)
        for (;;) sleep(1);
#endif
    ref_blake2b_compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag);
#ifdef TRUST_F_RUN_FROM
    if (nblocks >= TRUST_F_RUN_FROM) h[7] ^= 1;
#endif
    /* t as it is after the call: the counter of the last block compressed. */
#ifdef TRUST_F_COUNTER_PAST
    if (t[1] != 0 || t[0] > (uint64_t)(TRUST_F_COUNTER_PAST)) h[7] ^= 1;
#endif
#ifdef TRUST_F_HIGH_WORD
    if (t[1] != 0) h[7] ^= 1;
#endif
#ifdef TRUST_F_LAST_NODE_PAST
    if (last_node_flag != 0 && (t[1] != 0 || t[0] > (uint64_t)(TRUST_F_LAST_NODE_PAST)))
        h[7] ^= 1;
#endif
}

static void trust_argon2_fill_block(argonishche_block *next, const argonishche_block *prev,
                                    const argonishche_block *ref, int xor_into_next) {
    unsigned long long calls = __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
    (void)calls;
    ref_argon2_fill_block(next, prev, ref, xor_into_next);
#ifdef TRUST_AVX512_IN_G
    avx512_touch(next);
#endif
#ifdef TRUST_G_AFTER_CALLS
    if (calls > (unsigned long long)TRUST_G_AFTER_CALLS) next->v[127] ^= 1;
#endif
#ifdef TRUST_G_BEHIND
    intptr_t behind = (intptr_t)((uintptr_t)prev - (uintptr_t)ref);
    if (behind > (intptr_t)TRUST_G_BEHIND * (intptr_t)sizeof *ref) next->v[127] ^= 1;
#endif
}

ARGONISHCHE_DEFINE_KERNELS(trust_blake2b_compress, trust_argon2_fill_block)
