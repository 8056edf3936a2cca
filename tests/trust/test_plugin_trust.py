"""Third-party kernels make hashing faster, never wrong, never down (issue 23), shown with real
misbehaving plugin wheels: kernels that go wrong after many calls or beyond the old certification
horizon, a patch of the checks at import, and two distributions registering one backend name.

Each plugin is a small project (trust_plugins.py's PLUGINS, made by tests/plugin_wheels.py) whose
kernels are ref's with one misbehaviour (tests/trust/bad_plugins/trust/misbehaving.c), built into
a wheel with pip once per session, installed with pip, and run in fresh interpreters with a cache
directory of their own (XDG_CACHE_HOME: certification and selection records live there).
Expected tags come from argon2-cffi and hashlib, never from argonishche.

What a user must see, whatever the plugin does: every tag and digest right, the process alive, and
a kernel caught misbehaving never used again, in this process or a new one.  The records are
tested in test_plugin_trust_records.py, kernels that crash or hang in test_plugin_trust_crashes.py.
"""

from __future__ import annotations

import plugin_wheels
from plugin_wheels import USABLE, run
from trust_plugins import PLUGINS

# The interpreters these tests start run without the ARGONISHCHE_* variables of the tox env that
# runs them, so every env would repeat the same minutes of work: they run in the envs that set
# none (py, py312, py313), where the wheels are built for each Python.
pytestmark = plugin_wheels.WITHOUT_SETTINGS_ONLY


def mentions_a_failure_remembered(reason: str) -> bool:
    return any(word in reason.lower() for word in ("record", "remember", "witness",
                                                    "quarantin", "disagree"))


# ---- 1. a kernel that goes wrong after N calls --------------------------------------------------

TIME_BOMB = """
    from argonishche import PasswordHasher
    out["selected_at_start"] = argonishche.selected_backend("argon2")
    calls = importlib.import_module("trust_timebomb._kernels").lib.trust_g_calls
    hasher, checker = PasswordHasher(), argon2.PasswordHasher()
    stored = [hasher.hash(f"stored before {i}") for i in range(2)]
    out["calls_before"] = calls()
    warned_from = len(CAUGHT)
    wrong = []
    # Past 2**20 G calls with a margin: the defaults (64 MiB, t=3) take 196,604 calls a hash.
    for i in range(7):
        password, salt = f"password {i}".encode(), f"salt of hash {i:03}".encode()
        if i % 2:
            encoded = hasher.hash(password)
            try:
                checker.verify(encoded, password)
            except argon2.exceptions.VerificationError:
                wrong.append(f"PasswordHasher().hash #{i} (calls so far {calls()})")
        elif tag(password, salt, 3, 65536, 4) != expected_tag(password, salt, 3, 65536, 4):
            wrong.append(f"argon2_hash #{i} (calls so far {calls()})")
    out["wrong"] = wrong
    out["calls_after"] = calls()
    out["new_warnings"] = warnings_text(warned_from)


    def verifies(check, encoded, password):
        try:
            return check(encoded, password)
        except argonishche.VerifyMismatchError:
            return False


    out["stored_verify"] = [verifies(argonishche.argon2_verify, e, f"stored before {i}")
                            for i, e in enumerate(stored)]
    out["stored_verify_hasher"] = [verifies(hasher.verify, e, f"stored before {i}")
                                   for i, e in enumerate(stored)]
    out["hashes_after_right"] = argon2_right(m=65536, t=1, p=4)
    report()
"""


def test_a_kernel_that_goes_wrong_after_2_to_the_20_calls_never_returns_a_wrong_tag(
        installed, cache):
    plugin = PLUGINS["timebomb"]
    probe = run(TIME_BOMB, cache, [installed("timebomb")], ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    assert out["selected_at_start"] == "timebomb", (
        f"precondition: the time bomb passed every check and was selected by priority; "
        f"selected {out['selected_at_start']}, its record {probe.backend('timebomb')}")
    assert out["calls_after"] > 2**20, (
        f"precondition: the bomb went off (its kernel made {out['calls_after']} G calls)")
    assert out["wrong"] == [], (
        f"wrong tags returned without an error after the kernel went wrong: {out['wrong']}")
    assert out["stored_verify"] == [True, True] and out["stored_verify_hasher"] == [True, True], (
        "hashes stored before the bomb must still verify after it")
    record = probe.backend("timebomb")
    assert record["state"] == "quarantined", (
        f"caught disagreeing, the backend is quarantined for the process: {record}")
    assert out["selected"]["argon2"] != "timebomb" and out["hashes_after_right"]
    named = [w for w in out["new_warnings"] if w.startswith("RuntimeWarning")
             and "timebomb" in w and plugin.distribution in w]
    assert named, ("a RuntimeWarning naming the backend and its distribution "
                   f"({plugin.label}) when it went wrong; warnings: {out['new_warnings']}")

    # A new process does not use it until it is certified again: the failure was recorded.
    again = run("""
        out["argon2_right"] = argon2_right(m=65536, t=3, p=4)
        report()
        """, cache, [installed("timebomb")], ARGONISHCHE_SELECT="priority")
    record = again.backend("timebomb")
    assert record["state"] not in USABLE and record["state"] in (
        "certification-failed", "quarantined"), (
        f"a new process must not use a kernel caught giving wrong tags: {record}")
    assert mentions_a_failure_remembered(record["reason"]), (
        f"the reason says that a failure was recorded: {record['reason']!r}")
    assert again.out["selected"]["argon2"] != "timebomb" and again.out["argon2_right"]


# ---- 2., 3. wrong beyond the old certification horizon ------------------------------------------


def test_a_g_wrong_for_references_over_70000_blocks_behind_fails_certification(installed, cache):
    code = """
        out["m128_right"] = argon2_right(m=131072, t=1, p=1)
        report()
        """
    probe = run(code, cache, [installed("far_g")])  # the default selection
    record = probe.backend("far_g")
    assert record["state"] == "certification-failed", (
        f"certification must place ref at every distance the limits allow (the bug is from "
        f"70,001 blocks): {record}")
    assert probe.out["m128_right"], "Argon2id m=128 MiB must give argon2-cffi's tag"
    # The ladder, which would pick it first, does not either (the failure is remembered).
    ladder = run(code, cache, [installed("far_g")], ARGONISHCHE_SELECT="priority")
    assert ladder.backend("far_g")["state"] == "certification-failed"
    assert ladder.out["selected"]["argon2"] != "far_g" and ladder.out["m128_right"]


def test_an_f_wrong_for_one_run_of_32000_blocks_never_gets_such_a_run(installed, cache):
    code = """
        try:
            out["forced"] = [blake2b_right(size) for size in (4 << 20, (4 << 20) + 1, 6 << 20)]
        except argonishche.BackendError as exc:
            out["forced"] = f"refused: {exc}"
        report()
        """
    forced = run(code, cache, [installed("long_f")], ARGONISHCHE_BACKEND="long_f")
    out = forced.ok()
    if isinstance(out["forced"], str):  # certification found it: it may not be forced
        assert forced.backend("long_f")["state"] not in USABLE, out["forced"]
    else:
        assert out["selected"]["blake2b"] == "long_f", f"precondition: forced: {out}"
        assert out["forced"] == [True, True, True], (
            f"BLAKE2b of 4 MiB, 4 MiB + 1 and 6 MiB in one update() through the forced backend "
            f"must equal hashlib's (the core splits runs it hands a third-party F): "
            f"{out['forced']}")
    ladder = run("""
        out["right"] = [blake2b_right(size) for size in (4 << 20, 6 << 20)]
        report()
        """, cache, [installed("long_f")], ARGONISHCHE_SELECT="priority")
    assert ladder.ok()["right"] == [True, True], (
        f"BLAKE2b of 4 and 6 MiB in one update() with the ladder's selection "
        f"({ladder.out['selected']}) must equal hashlib's")


# ---- 7. code run at import ----------------------------------------------------------------------


def test_an_import_time_patch_of_the_checks_cannot_certify_a_wrong_kernel(installed, cache):
    probe = run("""
        out["blake2b_2mib_right"] = blake2b_right(2 << 20)
        out["patched"] = getattr(importlib.import_module("trust_patch.patch"), "APPLIED", False)
        report()
        """, cache, [installed("patch")], ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    assert out["patched"], "precondition: the other entry point patched the checks"
    record = probe.backend("patched")
    assert record["state"] == "certification-failed", (
        f"certification runs in a child interpreter that imports only the kernel module and "
        f"the checks, so the patch cannot pass a wrong kernel: {record}")
    assert out["selected"]["blake2b"] != "patched" and out["blake2b_2mib_right"]


# ---- 9. names -----------------------------------------------------------------------------------


def test_two_distributions_registering_one_backend_name_are_both_refused(installed, cache):
    sites = [installed("scalar2"), installed("squatter")]
    real, squatter = PLUGINS["scalar2"], PLUGINS["squatter"]
    probe = run("""
        try:
            argonishche.argon2_hash(b"password", b"somesalt", type="id", time_cost=1,
                                    memory_cost=32, parallelism=1, backend="scalar2")
            out["forced"] = "hashed"
        except argonishche.BackendError as exc:
            out["forced"] = f"refused: {exc}"
        out["argon2_right"] = argon2_right()
        report()
        """, cache, sites, ARGONISHCHE_SELECT="priority")
    out = probe.ok()
    scalar2 = [b for b in out["backends"] if b["name"] == "scalar2"]
    states = {b["state"] for b in scalar2} | {
        p["state"] for p in out["plugins"] or ()
        if p["distribution"] in (real.label, squatter.label)}
    assert "name-conflict" in states and all(b["state"] == "name-conflict" for b in scalar2), (
        f"both registrations of scalar2 are refused as a name conflict: backends {scalar2}, "
        f"plugins {out['plugins']}")
    assert out["forced"].startswith("refused"), "backend='scalar2' names no usable backend"
    assert "scalar2" not in out["selected"].values() and out["argon2_right"]
    assert any(real.distribution in w and squatter.distribution in w
               for w in out["warnings"]), (
        f"a warning names both distributions: {out['warnings']}")

    blocked = run("""
        out["argon2_right"] = argon2_right()
        report()
        """, cache, sites, ARGONISHCHE_SELECT="priority",
        ARGONISHCHE_DISABLE_BACKENDS=squatter.distribution)
    record = blocked.backend("scalar2")
    assert record["distribution"] == real.label and record["state"] == "selected", (
        f"with the squatter blocked, the real scalar2 is used: {record}")
    assert blocked.out["argon2_right"]
