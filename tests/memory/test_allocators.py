"""The allocators by name: every built-in one gives the reference tag, the ``allocator=``
argument and ``ARGONISHCHE_ALLOCATOR`` choose one, and plugins add more through the
``argonishche_register_allocators`` hook."""

from __future__ import annotations

import pytest
from argonishche import (
    BackendError,
    PasswordHasher,
    VerifyMismatchError,
    _allocators,
    argon2_hash,
    argon2_hash_encoded,
    argon2_verify,
)
from support import (
    ARENA,
    BUILTIN_NAMES,
    KNOWN_TAG,
    PASSWORD,
    SALT,
    SMALL,
    FakeEntryPoint,
    Pool,
    address_of,
    allocator_plugin,
    make_registry,
    needed,
    run_python,
)

REGISTERED = "Registered: arena, hugepages, locked, system"


# ---- every allocator gives the same tag -----------------------------------------------------


@pytest.mark.parametrize("type_", ["d", "i", "id"])
@pytest.mark.parametrize("parallelism, threads", [(1, 1), (4, 1), (4, 4)])
def test_every_builtin_allocator_gives_argon2_cffi_tag(type_, parallelism, threads,
                                                       acquire_log):
    low_level = pytest.importorskip("argon2.low_level")
    # m=67 rounds down to m'=64 for both p=1 and p=4: the rounding must agree too.
    costs = dict(time_cost=2, memory_cost=67, parallelism=parallelism)
    expected = low_level.hash_secret_raw(PASSWORD, SALT, hash_len=32, version=19,
                                         type=getattr(low_level.Type, type_.upper()), **costs)
    for name in BUILTIN_NAMES:
        tag = argon2_hash(PASSWORD, SALT, type=type_, threads=threads, allocator=name, **costs)
        assert tag == expected, name
        assert acquire_log[-1] == name
    assert acquire_log == list(BUILTIN_NAMES)


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_password_hasher_uses_its_allocator(name, acquire_log):
    argon2 = pytest.importorskip("argon2")
    salt = bytes(range(16))
    hasher = PasswordHasher(time_cost=2, memory_cost=64, parallelism=2, allocator=name)
    encoded = hasher.hash("pässword", salt=salt)
    assert encoded == argon2.low_level.hash_secret(
        "pässword".encode(), salt, time_cost=2, memory_cost=64, parallelism=2, hash_len=32,
        type=argon2.low_level.Type.ID, version=19).decode("ascii")
    assert hasher.verify(encoded, "pässword") is True
    with pytest.raises(VerifyMismatchError):
        hasher.verify(encoded, "password")
    assert acquire_log == [name] * 3
    assert argon2.PasswordHasher().verify(encoded, "pässword") is True


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_allocator_environment_variable_selects_the_allocator(name):
    result = run_python("""
        import argonishche
        from argonishche import _allocators
        registry = argonishche._registry
        print("selected", registry.get().allocator().name)
        used = []
        original = registry.Registry.allocator
        def spy(self, name=None):
            allocator = original(self, name)
            used.append(allocator.name)
            return allocator
        registry.Registry.allocator = spy
        costs = dict(time_cost=1, memory_cost=32, parallelism=1)
        print("tag", argonishche.argon2_hash(b"password", b"somesalt", **costs).hex())
        hasher = argonishche.PasswordHasher(**costs)
        assert hasher.verify(hasher.hash("pw"), "pw")
        print("used", ",".join(used))
        print("arena", _allocators.BUILTIN[1].cached_bytes())
        print("locked", _allocators.BUILTIN[3].cached_bytes())
        """, ARGONISHCHE_ALLOCATOR=name)
    assert result.returncode == 0, result.stderr
    out = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert out["selected"] == name
    assert out["tag"] == KNOWN_TAG.hex()
    assert out["used"] == ",".join([name] * 3)
    # Only the arena allocators keep memory between hashes, and only the one in use.
    assert (int(out["arena"]) > 0) == (name == "arena")
    assert (int(out["locked"]) > 0) == (name == "locked")


def test_unknown_allocator_argument_is_an_error_listing_the_registered_ones():
    for call in (lambda: argon2_hash(PASSWORD, SALT, allocator="nosuch", **SMALL),
                 lambda: argon2_hash_encoded(PASSWORD, SALT, allocator="nosuch", **SMALL),
                 lambda: argon2_verify(argon2_hash_encoded(PASSWORD, SALT, **SMALL), PASSWORD,
                                       allocator="nosuch"),
                 lambda: PasswordHasher(**SMALL, allocator="nosuch").hash("pw")):
        with pytest.raises(BackendError) as info:
            call()
        message = str(info.value)
        assert "'nosuch'" in message and REGISTERED in message
        assert "ARGONISHCHE_ALLOCATOR" not in message  # the argument, not the environment


def test_unknown_allocator_environment_variable_is_an_error_naming_it():
    result = run_python("""
        import argonishche
        try:
            argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=32,
                                    parallelism=1)
        except argonishche.SettingError as exc:
            print("error:", exc)
        # an explicit allocator still works
        print(argonishche.argon2_hash(b"password", b"somesalt", time_cost=1, memory_cost=32,
                                      parallelism=1, allocator="system").hex())
        """, ARGONISHCHE_ALLOCATOR="nosuch")
    assert result.returncode == 0, result.stderr
    error, tag = result.stdout.splitlines()
    assert error.startswith("error: ARGONISHCHE_ALLOCATOR='nosuch': must be a registered allocator")
    assert REGISTERED.lower() in error
    assert tag == KNOWN_TAG.hex()


# ---- the allocator hookspec -----------------------------------------------------------------


def test_plugin_allocator_is_registered_and_used_by_name(install):
    pool = Pool("Pool")
    reg = install(make_registry(FakeEntryPoint("zz-pool", allocator_plugin(pool))))
    assert reg.allocator("pool") is pool and reg.allocator("POOL") is pool
    assert reg.allocators["pool"][1] == "fake-kernels 1.2"
    assert reg.allocator().name == "arena"  # the documented default
    assert [reg.allocator(name) for name in BUILTIN_NAMES] == list(_allocators.BUILTIN)

    assert argon2_hash(PASSWORD, SALT, allocator="pool", **SMALL) == KNOWN_TAG
    assert [len(b) for b in pool.acquired] == [needed(32)] and pool.released == pool.acquired
    assert not any(pool.acquired[0])  # wiped by C before release
    views = []
    assert argon2_hash(PASSWORD, SALT, allocator="pool", wipe=lambda v: views.append(
        address_of(v)), **SMALL) == KNOWN_TAG
    assert views == [address_of(pool.acquired[1])] and any(pool.acquired[1])
    hasher = PasswordHasher(**SMALL, allocator="pool")
    assert hasher.verify(hasher.hash("pw"), "pw")
    assert len(pool.acquired) == len(pool.released) == 4
    with pytest.raises(BackendError, match="Registered: arena, hugepages, locked, pool, system"):
        argon2_hash(PASSWORD, SALT, allocator="nosuch", **SMALL)


def test_plugin_registering_a_non_allocator_is_load_failed_and_others_work():
    good = Pool("good")
    with pytest.warns(RuntimeWarning, match="not an argonishche.Allocator"):
        reg = make_registry(
            FakeEntryPoint("zz-bad", allocator_plugin(_allocators.SystemAllocator),
                           dist=("bad-allocators", "0.1")),
            FakeEntryPoint("zz-good", allocator_plugin(good)))
    record = next(p for p in reg.plugins if p.name == "zz-bad")
    assert record.state == "failed" and record.distribution == "bad-allocators 0.1"
    assert "argonishche_register_allocators" in record.reason
    assert reg.allocator("good") is good
    assert sorted(reg.allocators) == sorted([*BUILTIN_NAMES, "good"])
    assert reg.selected_name("argon2") == make_registry().selected_name("argon2")


def test_two_allocators_with_one_name_keep_the_first():
    first, second, impostor = Pool("pool"), Pool("POOL"), Pool("arena")
    with pytest.warns(RuntimeWarning) as warned:
        reg = make_registry(
            FakeEntryPoint("zz-a", allocator_plugin(first), dist=("pool-a", "1.0")),
            FakeEntryPoint("zz-b", allocator_plugin(second, impostor), dist=("pool-b", "2.0")))
    assert reg.allocator("pool") is first
    assert reg.allocator("arena") is ARENA  # a plugin cannot take a built-in's name
    messages = sorted(str(w.message) for w in warned)
    assert len(messages) == 2
    assert "plugin 'zz-b' from pool-b 2.0: allocator 'arena' not used" in messages[0]
    assert "already registered by argonishche " in messages[0]
    assert "plugin 'zz-b' from pool-b 2.0: allocator 'pool' not used" in messages[1]
    assert "already registered by pool-a 1.0" in messages[1]
    (refused,) = [p for p in reg.plugins if p.state == "failed"]  # one record per plugin
    assert (refused.name, refused.distribution) == ("zz-b", "pool-b 2.0")
    assert sorted(reason.split(":")[0] for reason in refused.reason.split("; ")) == [
        "allocator 'arena' not used", "allocator 'pool' not used"]
