"""Conformance checks for kernel backends: what this project's tests run, exposed to plugin authors.

A plugin's test suite needs only::

    import argonishche.testing as conformance

    def test_my_backend_conforms():
        conformance.usable_or_skip("mine")
        assert conformance.check_backend("mine") == []

:func:`check_backend` runs the kernels directly against ``ref``'s on the cases the API cannot
reach (aliased blocks, a byte counter about to carry), every known-answer vector
(``argonishche.vectors``), then differential tests against ``ref`` (Argon2) and ``hashlib``
(BLAKE2b) on seeded random and boundary inputs.  The case generators are public too.

:func:`certify_backend` runs the slower certification that argonishche runs once per kernel
module file (far references, BLAKE2b runs over 8,192 blocks, Argon2 of several MiB).

:func:`expected_backend` says which backend the selection policy must have chosen, recomputed
from what the registry reports, for tests that check the selection on any CPU: which kernel is
fastest differs between CPUs, so no test may assume the priority ladder's order.

:func:`usable_or_skip` fails the calling test for a backend argonishche refused (it failed to
load, its self-test or its certification) or that no plugin registered, and skips it only where
this CPU lacks a feature it declares or the user blocked it: a plugin's CI must not go green on
a kernel users never get.  ``ARGONISHCHE_REQUIRE_BACKENDS=a,b`` (or ``all``) names backends
that must be usable: their skips become failures too, so that a run on an emulated CPU cannot
pass by skipping what it was meant to prove.
"""

from __future__ import annotations

import hashlib
import importlib
import random
from typing import Any, NoReturn, Protocol

from . import _discovery, _registry, _settings
from ._argon2 import argon2_hash
from ._blake2 import blake2b
from ._core import ffi
from ._trust import certification_checks, self_test
from ._wording import stated

#: Incremental split points that cross BLAKE2b's block boundary in every way.
SPLITS = (0, 1, 127, 128, 129)


def argon2_cases(count: int = 60, seed: int = 0) -> list[dict[str, Any]]:
    """Keyword arguments for :func:`argonishche.argon2_hash`: every type and version, t 1..4,
    p 1..8, m at 8p, just above it and odd, odd tag lengths, secret and associated data."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        lanes = 1 + index % 8
        memory = rng.choice((8 * lanes, 8 * lanes + 1, 4 * lanes * rng.randint(2, 6) + 3))
        cases.append(dict(
            password=rng.randbytes(rng.choice((0, 1, 16, 64, 129))),
            salt=rng.randbytes(rng.choice((8, 16, 33))),
            type=("d", "i", "id")[index % 3], version=(0x10, 0x13)[index // 3 % 2],
            time_cost=1 + index % 4, memory_cost=memory, parallelism=lanes,
            hash_len=rng.choice((4, 16, 32, 33, 64, 65, 100)),
            secret=rng.randbytes(rng.choice((0, 8, 32))),
            associated_data=rng.randbytes(rng.choice((0, 12, 200))),
            threads=rng.randint(1, lanes)))
    return cases


def blake2b_cases(count: int = 60, seed: int = 0) -> list[dict[str, Any]]:
    """Keyword arguments for ``blake2b``: every digest size, keys, salts, personalization."""
    rng = random.Random(seed)
    return [dict(data=rng.randbytes(rng.choice((0, 1, 127, 128, 129, 256, 1000, 4097))),
                 digest_size=1 + index % 64,
                 key=rng.randbytes(rng.choice((0, 1, 32, 64))),
                 salt=rng.randbytes(rng.randint(0, 16)),
                 person=rng.randbytes(rng.randint(0, 16)))
            for index in range(count)]


def blake2b_failures(backend: str, case: dict[str, Any]) -> list[str]:
    """Compare one-shot, incremental and copied hashing on *backend* with hashlib."""
    data, params = case["data"], {k: v for k, v in case.items() if k != "data"}
    expected = hashlib.blake2b(data, **params).digest()
    failures = []
    if blake2b(data, backend=backend, **params).digest() != expected:
        failures.append(f"BLAKE2b one-shot {len(data)} bytes, {params['digest_size']}-byte digest")
    for split in SPLITS:
        h = blake2b(data[:split], backend=backend, **params)
        clone = h.copy()
        h.update(data[split:])
        clone.update(data[split:])
        if h.digest() != expected or clone.digest() != expected:
            failures.append(f"BLAKE2b split at {split} of {len(data)} bytes")
    return failures


REQUIRE_ENV = "ARGONISHCHE_REQUIRE_BACKENDS"
USABLE_STATES = _registry.USABLE_STATES
#: Unusable for a reason that is not the backend's fault: this CPU lacks a feature it declares,
#: or the user blocked it.  Every other unusable state says the backend is broken.
SKIPPABLE_STATES = (_discovery.UNSUPPORTED_CPU, _discovery.BLOCKED)
#: A plugin never imported, so its backends are not registered: blocked by the user, or
#: deferred while ``ARGONISHCHE_BACKEND`` forces a built-in.
SKIPPABLE_PLUGIN_STATES = (_discovery.PLUGIN_BLOCKED, _discovery.PLUGIN_DEFERRED)


def required_backends() -> set[str]:
    """Backend names ``ARGONISHCHE_REQUIRE_BACKENDS`` lists (``all``: every registered one)."""
    names = set(_settings.current().required_backends)
    if "all" in names:
        names = {b.name for b in _registry.get().report()}
    return names


def usable_or_skip(name: str) -> None:
    """Return if backend *name* can run here; skip the calling pytest test only where it cannot
    for a reason that is not the backend's fault; fail it everywhere else.

    - usable (``selected``, ``available``): returns;
    - ``unsupported-cpu`` (this CPU lacks a declared feature) or ``blocked`` (by
      ``ARGONISHCHE_DISABLE_BACKENDS``, the backend or its plugin), and a plugin not imported
      because ``ARGONISHCHE_BACKEND`` forces a built-in: a skip saying why;
    - every other state (``load-failed``, ``selftest-failed``, ``certification-failed``, and any
      state a later argonishche adds): a failure with the state and the reason.  A kernel that
      argonishche refuses is a kernel users never get, so its tests must not pass;
    - not registered at all: a failure naming the plugins that failed to load, if any (the
      plugin is not installed, or failed to import or to register).

    ``ARGONISHCHE_REQUIRE_BACKENDS`` turns the skips into failures for the backends it names.
    """
    pytest: _PytestOutcomes = importlib.import_module("pytest")
    registry = _registry.get()
    info = next((b for b in registry.report() if b.name == name), None)
    if info is not None and info.state in USABLE_STATES:
        return
    if info is None:
        skippable, message = _not_registered(registry, name)
    else:
        skippable = info.state in SKIPPABLE_STATES
        message = f"backend {name} is {stated(info.state, info.reason)}"
    if not skippable:
        pytest.fail(message, pytrace=False)
    if name in required_backends():
        pytest.fail(f"{message} (required by {REQUIRE_ENV})", pytrace=False)
    pytest.skip(message)


class _PytestOutcomes(Protocol):
    """The part of pytest :func:`usable_or_skip` calls.  pytest is imported when it is called,
    through importlib: it is a dependency of a plugin's tests, not of argonishche, so a type
    checker of a project using argonishche may not have it (tests/project/test_typing_wheel.py).
    """

    def fail(self, reason: str = "", pytrace: bool = True) -> NoReturn: ...

    def skip(self, reason: str = "") -> NoReturn: ...


def _not_registered(registry: _registry.Registry, name: str) -> tuple[bool, str]:
    """Why no backend *name* is registered: (whether that is a skip, the message)."""
    plugins = registry.plugins
    own = [p for p in plugins if p.name.lower() == name]  # the entry point named after it
    if own and own[0].state in SKIPPABLE_PLUGIN_STATES:
        return True, f"backend {name} is not registered: plugin {own[0].name!r} from " \
                     f"{own[0].distribution} is {stated(own[0].state, own[0].reason)}"
    failed = [p for p in plugins if p.state == _discovery.PLUGIN_FAILED]
    if failed:
        because = "; ".join(f"plugin {p.name!r} from {p.distribution}: {p.reason}"
                            for p in failed)
        return False, f"backend {name} is not registered, and plugins failed: {because}"
    return False, (f"backend {name} is not registered: no installed plugin registers it (is "
                   f"its distribution installed in this environment? `python -m argonishche "
                   f"info` lists the plugins and backends found)")


def expected_backend(algorithm: str) -> str:
    """The backend the selection policy must have chosen for *algorithm* (``"argon2"`` or
    ``"blake2b"``) in this process, recomputed independently of the code that chose: the forced
    one; by priority, the usable backend with the highest priority (ties: the name); by
    measurement, among the backends slower than the fastest by no more than 3 % plus the noise
    measured in both, the one with the highest priority.  Compare it with
    :func:`argonishche.selected_backend`."""
    reg = _registry.get()
    choice = reg.choices[algorithm]
    usable = {b.name: b.priority for b in reg.report() if b.state in USABLE_STATES}
    if choice.how == "forced":
        return choice.backend
    candidates = list(usable)
    if choice.how in ("measured", "remembered"):
        times, noise = choice.ns_per_kib, choice.noise
        if set(times) != set(usable) or set(noise) != set(usable):
            raise AssertionError(f"a measured choice without a time for every usable backend: "
                                 f"{choice}")
        fastest = min(times, key=lambda name: times[name])
        candidates = [name for name in usable
                      if times[name] <= times[fastest] * (1.03 + noise[name] + noise[fastest])]
    return max(candidates, key=lambda name: (usable[name], name))


def _aligned_blocks(count: int) -> tuple[Any, Any]:  # cffi objects (cffi has no stubs)
    """*count* 64-byte aligned blocks (the contract's alignment) and the buffer that owns them."""
    owner = ffi.new("char[]", 1024 * count + 64)
    address = int(ffi.cast("uintptr_t", owner))
    return owner, ffi.cast("argonishche_block *", address + (-address % 64))


def kernel_failures(name: str, rounds: int = 8, seed: int = 0) -> list[str]:
    """The two kernels of backend *name* called directly, against ref's, one line per failure.

    Covers what the API reaches rarely or never: prev == ref (allowed by the contract),
    xor_into_next, runs of 0..5 BLAKE2b blocks, final blocks with their own byte count (and
    with the last-node flag f1), and the 128-bit counter carrying from t[0] into t[1].
    """
    reg = _registry.get()
    ours, ref = reg.kernel_table("argon2", name), reg.kernel_table("argon2", "ref")
    rng = random.Random(seed)
    failures = []
    owner, blocks = _aligned_blocks(6)  # prev, ref, next for each of the two kernels
    for same_prev_and_ref in (False, True):
        for xor_into_next in (0, 1):
            for _ in range(rounds):
                words = [rng.getrandbits(64) for _ in range(3 * 128)]
                results = []
                for kernel, base in ((ours, 0), (ref, 3)):
                    prev, other, out = blocks + base, blocks + base + 1, blocks + base + 2
                    for i in range(128):
                        prev.v[i], other.v[i], out.v[i] = words[i], words[128 + i], words[256 + i]
                    kernel.argon2_fill_block(out, prev, prev if same_prev_and_ref else other,
                                             xor_into_next)
                    results.append(list(out.v))
                if results[0] != results[1]:
                    failures.append(f"argon2_fill_block prev==ref={same_prev_and_ref} "
                                    f"xor_into_next={xor_into_next}")
                    break
    data = ffi.new("uint8_t[]", rng.randbytes(128 * 5))
    for t0 in (0, 2**64 - 300, 2**64 - 128):
        for nblocks in range(6):
            last = 2**64 - 1
            runs = [(128, 0, 0)] + ([(1, last, 0), (77, last, 0), (77, last, last), (0, last, last)]
                                    if nblocks == 1 else [])
            for increment, final_flag, last_node_flag in runs:
                h0 = [rng.getrandbits(64) for _ in range(8)]
                outputs = []
                for kernel in (ours, ref):
                    h, t = ffi.new("uint64_t[8]", h0), ffi.new("uint64_t[2]", [t0, 3])
                    kernel.blake2b_compress(h, t, data, nblocks, increment, final_flag,
                                            last_node_flag)
                    outputs.append((list(h), list(t)))
                if outputs[0] != outputs[1]:
                    failures.append(f"blake2b_compress t0={t0:#x} nblocks={nblocks} "
                                    f"increment={increment} final={final_flag:#x} "
                                    f"last_node={last_node_flag:#x}")
    del owner
    return failures


def check_backend(name: str, count: int = 60, seed: int = 0) -> list[str]:
    """The kernels, every vector and *count* differential cases on backend *name*; one line
    per failure.

    :raises argonishche.BackendError: the backend is not usable here (unknown, blocked, the CPU
        lacks its features, or it failed the start-up self-test).
    """
    table = _registry.get().kernel_table("argon2", name)
    failures = kernel_failures(name, seed=seed)
    failures += [f"known answer: {line}" for line in self_test.run(table, full=True)]
    for case in argon2_cases(count, seed):
        if argon2_hash(backend=name, **case) != argon2_hash(backend="ref", **case):
            shown = {k: v for k, v in case.items() if not isinstance(v, bytes)}
            failures.append(f"Argon2 differs from ref: {shown}")
    for case in blake2b_cases(count, seed):
        failures += blake2b_failures(name, case)
    return failures


def certify_backend(name: str) -> list[str]:
    """The certification's checks (:mod:`argonishche._trust.certification_checks`: what
    argonishche runs once per kernel module file before trusting it) on backend *name*, run now
    and not remembered; one line per failure.  Slower than :func:`check_backend`: Argon2 of up
    to 4 MiB against ref, every distance of ref from prev up to 1,100 blocks and powers of two up
    to 64 MiB, BLAKE2b runs of up to 24,577 blocks in one call.

    :raises argonishche.BackendError: the backend is not usable here.
    """
    return certification_checks.failures(_registry.get().kernel_table("argon2", name))
