"""BLAKE2b's byte counter and final-block flags are certified (issue 31, item 6).

A third-party F wrong once the byte counter passes 4 MiB was certified (certification's longest
message is about 3 MiB), and then argonishche.blake2b of 4-5 MiB returned a wrong digest with no
error.  F takes the counter as an input, so certification calls it directly with counters at
every carry of both words and with the flags (argonishche._trust.certification_blake2b), comparing
with ref's F, without hashing gigabytes.

The first tests wrap ref's F in Python (as tests/trust/test_self_test.py does); the last ones
install real misbehaving plugin wheels (tests/plugin_wheels.py, the TRUST_F_COUNTER_PAST,
TRUST_F_HIGH_WORD and TRUST_F_LAST_NODE_PAST switches of misbehaving.c) with pip and use them from
a fresh interpreter with a cache directory of its own.
"""

from __future__ import annotations

import os
import shutil

import plugin_wheels
import pytest
from argonishche._core import ffi
from argonishche._trust import certification_blake2b, kernel_table

FOUR_MIB = 4 << 20
MASK64 = 2**64 - 1


@pytest.fixture(scope="module")
def ref():
    return kernel_table.reference_table()


class CounterWrongKernels:
    """ref's kernels, with an F that flips a bit of h when *wrong(counter, last_node)* says so
    (counter: the 128-bit byte counter after the call, t1 * 2**64 + t0)."""

    def __init__(self, ref, wrong):
        def compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag):
            ref.blake2b_compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag)
            if wrong((t[1] << 64) | t[0], last_node_flag != 0):
                h[7] ^= 1

        self._callback = ffi.callback("argonishche_blake2b_compress_fn", compress)
        self.table = ffi.new("argonishche_kernel_table *", dict(
            abi_version=ref.abi_version, table_size=ref.table_size,
            argon2_fill_block=ref.argon2_fill_block, blake2b_compress=self._callback,
            compiled_for=ref.compiled_for))


# The variants of the installed plugins below, and a few more carries, as Python predicates.
VARIANTS = {
    "past 4 MiB": (lambda counter, f1: counter > FOUR_MIB, "2^22 (t0=0x400000 t1=0x0)"),
    "high word set": (lambda counter, f1: counter >> 64 != 0, "2^64 (t0=0x0 t1=0x1)"),
    "f1 past 4 MiB": (lambda counter, f1: f1 and counter > FOUR_MIB,
                      "2^22 (t0=0x400000 t1=0x0): a last block of 1 bytes after t0=0x400000 "
                      "t1=0x0 with f0 (last block) and f1 (last node) set"),
    "32-bit counter": (lambda counter, f1: counter >= 2**32, "2^32 (t0=0x100000000 t1=0x0)"),
    "high word past 2^32": (lambda counter, f1: counter >> 96 != 0,
                            "2^96 (t0=0x0 t1=0x100000000)"),
    "top bit of t1": (lambda counter, f1: counter >> 127 != 0,
                      "2^127 (t0=0x0 t1=0x8000000000000000)"),
}


def test_ref_passes_the_counter_checks(ref):
    assert certification_blake2b.counter_failures(ref, ref) == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_counter_checks_catch_each_variant_that_messages_under_4_mib_miss(ref, variant):
    wrong, named = VARIANTS[variant]
    wrapped = CounterWrongKernels(ref, wrong)
    # The message checks stay blind to it: no certification message reaches 4 MiB.
    assert certification_blake2b.blake2b_failures(wrapped.table) == []
    found = certification_blake2b.counter_failures(wrapped.table, ref)
    assert len(found) == 1, found
    assert found[0].startswith("BLAKE2b F unlike ref's"), found
    assert named in found[0], found
    # ... and certification as a whole says so.
    assert found[0] in certification_blake2b.failures(wrapped.table, ref)


def test_the_cases_cover_every_carry_of_both_counter_words():
    cases = certification_blake2b.counter_cases()
    # The counters each block of each case is compressed at.
    reached: set[int] = set()
    for t0, t1, nblocks, increment, f0, f1, _ in cases:
        start = (t1 << 64) | t0
        reached.update(start + increment * (i + 1) for i in range(nblocks))
        # Within the core's contract: runs of full blocks without flags, a last block alone.
        assert (nblocks == 1 and f0 == MASK64) or (increment == 128 and f0 == f1 == 0)
        assert f1 in (0, MASK64)
    for bit in range(7, 128):  # every carry out of every bit of t0 and t1, 2^64's wrap included
        boundary = 2**bit
        assert {boundary - 128, boundary, boundary + 128} <= reached, bit
        # ... crossed inside one multi-block call, as well as by a last block.
        assert any(n > 1 and ((t1 << 64) | t0) < boundary < ((t1 << 64) | t0) + 128 * n
                   for t0, t1, n, *_ in cases), bit
    # Last blocks of every size around the carries, with f1 clear and set.
    finals = {(case.increment, case.last_node_flag) for case in cases if case.final_flag}
    assert {(inc, f1) for inc in (0, 1, 64, 127, 128) for f1 in (0, MASK64)} <= finals
    # Long runs that carry in their middle: 4 MiB, 2^32, t0 into t1.
    long_runs = {((t1 << 64) | t0) + 128 * n // 2 for t0, t1, n, *_ in cases if n >= 8192}
    assert {FOUR_MIB, 2**32, 2**64} <= long_runs


def test_a_wrong_h_or_a_wrong_counter_out_are_both_failures(ref):
    def compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag):
        ref.blake2b_compress(h, t, blocks, nblocks, increment, final_flag, last_node_flag)
        if t[0] < 128 * nblocks and t[1] != 0:  # a carry into t1 happened: left out
            t[1] -= 1

    callback = ffi.callback("argonishche_blake2b_compress_fn", compress)
    table = ffi.new("argonishche_kernel_table *", dict(
        abi_version=ref.abi_version, table_size=ref.table_size,
        argon2_fill_block=ref.argon2_fill_block, blake2b_compress=callback,
        compiled_for=ref.compiled_for))
    found = certification_blake2b.counter_failures(table, ref)
    assert len(found) == 1 and "the counter it leaves" in found[0], found


# ---- real wheels, installed with pip, in a fresh interpreter ---------------------------------

without_argonishche_settings = pytest.mark.skipif(
    any(name.startswith("ARGONISHCHE_") for name in os.environ),
    reason="the interpreters run without ARGONISHCHE_* settings: they run in the envs that set "
           "none (py, py312, py313)")


def _plugin(key: str, define: str) -> plugin_wheels.Plugin:
    package = f"counter_{key}"
    return plugin_wheels.Plugin(
        f"counter-{key}", package, {key: package},
        kernels=(plugin_wheels.Kernels("_kernels", (define,)),),
        files={"__init__.py": plugin_wheels.backend_plugin(key, f"{package}._kernels")})


PLUGINS = {
    "past4m": _plugin("past4m", "TRUST_F_COUNTER_PAST (4ULL << 20)"),
    "highword": _plugin("highword", "TRUST_F_HIGH_WORD"),
    "lastnode4m": _plugin("lastnode4m", "TRUST_F_LAST_NODE_PAST (4ULL << 20)"),
}

# What a user sees with the backend forced: its state and reason, and BLAKE2b of 4.5 MiB, plain
# and as a tree's last node, against hashlib.
PROBE = """
    import hashlib, json, sys
    import argonishche

    name = sys.argv[1]
    backend = {b.name: b for b in argonishche.backends()}[name]
    message = bytes(range(256)) * (18 << 10)  # 4.5 MiB
    try:
        right = [argonishche.blake2b(message).digest() == hashlib.blake2b(message).digest(),
                 argonishche.blake2b(message, last_node=True).digest()
                 == hashlib.blake2b(message, last_node=True).digest()]
        used = argonishche.selected_backend("blake2b")
    except argonishche.ArgonishcheError as exc:
        right, used = None, f"refused: {exc}"
    print(json.dumps(dict(state=backend.state, reason=backend.reason, right=right, used=used)))
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler to build the plugin wheels")
    from test_bad_kernels import run_with_plugin

    wheels = plugin_wheels.build_wheels(PLUGINS, tmp_path_factory.mktemp("counter_wheels"))
    found = {}
    for key, wheel in wheels.items():
        site = plugin_wheels.install(wheel, tmp_path_factory.mktemp(f"site-{key}"))
        found[key] = run_with_plugin(site, PROBE, tmp_path_factory.mktemp("cache"), key,
                                     ARGONISHCHE_BACKEND=key)
    return found


@without_argonishche_settings
@pytest.mark.parametrize(("key", "named"), [
    ("past4m", VARIANTS["past 4 MiB"][1]), ("highword", VARIANTS["high word set"][1]),
    ("lastnode4m", VARIANTS["f1 past 4 MiB"][1])])
def test_an_installed_f_wrong_past_a_counter_fails_certification(probe, key, named):
    out = probe[key]
    assert out["state"] == "certification-failed", (
        f"{key}: certified, and BLAKE2b of 4.5 MiB through it (plain, last node) right: "
        f"{out['right']}: {out}")
    assert "BLAKE2b F unlike ref's" in out["reason"] and named in out["reason"], out
    assert out["right"] is None and out["used"].startswith("refused"), out

