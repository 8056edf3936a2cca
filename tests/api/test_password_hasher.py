"""``PasswordHasher``: its defaults, hash and verify, fresh or given salts, and when
``check_needs_rehash`` says a stored hash needs redoing."""

from __future__ import annotations

import base64

import pytest
from argonishche import PasswordHasher, Type, VerifyMismatchError, argon2_hash_encoded
from support import PASSWORD


def test_password_hasher_defaults():
    ph = PasswordHasher()
    assert (ph.time_cost, ph.memory_cost, ph.parallelism, ph.hash_len, ph.salt_len) == (
        3, 65536, 4, 32, 16)
    assert ph.type == Type.ID
    assert "memory_cost=65536" in repr(ph)


def test_password_hasher_hash_and_verify():
    ph = PasswordHasher(time_cost=1, memory_cost=64, parallelism=2)
    encoded = ph.hash("secret")
    assert encoded.startswith("$argon2id$v=19$m=64,t=1,p=2$")
    _, _, _, _, salt_b64, tag_b64 = encoded.split("$")
    assert len(base64.b64decode(salt_b64 + "==")) == 16
    assert len(base64.b64decode(tag_b64 + "==")) == 32
    assert ph.verify(encoded, "secret") is True
    assert ph.verify(encoded, b"secret") is True
    with pytest.raises(VerifyMismatchError):
        ph.verify(encoded, "Secret")


def test_password_hasher_random_salt_differs():
    ph = PasswordHasher(time_cost=1, memory_cost=16, parallelism=1, salt_len=8)
    hashes = {ph.hash(PASSWORD) for _ in range(8)}
    assert len(hashes) == 8
    assert len({h.split("$")[4] for h in hashes}) == 8  # the salts themselves differ
    assert all(ph.verify(h, PASSWORD) for h in hashes)


def test_password_hasher_explicit_salt_and_options():
    ph = PasswordHasher(time_cost=2, memory_cost=40, parallelism=2, hash_len=20, salt_len=10,
                        type="i")
    encoded = ph.hash(PASSWORD, salt=b"0123456789")
    assert encoded == argon2_hash_encoded(PASSWORD, b"0123456789", type="i", time_cost=2,
                                          memory_cost=40, parallelism=2, hash_len=20)
    assert len(base64.b64decode(ph.hash(PASSWORD).split("$")[4] + "==")) == 10


def test_password_hasher_verify_takes_costs_from_the_hash():
    old = PasswordHasher(time_cost=2, memory_cost=24, parallelism=3, hash_len=16, type="d")
    new = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
    encoded = old.hash(PASSWORD)
    assert new.verify(encoded, PASSWORD) is True
    assert new.check_needs_rehash(encoded) is True
    assert old.check_needs_rehash(encoded) is False


REHASH_BASE = dict(time_cost=2, memory_cost=32, parallelism=2, hash_len=16, salt_len=12,
                   type="id")


@pytest.mark.parametrize("change", [
    dict(time_cost=1), dict(time_cost=3), dict(memory_cost=33), dict(memory_cost=48),
    dict(parallelism=1), dict(parallelism=4), dict(hash_len=17), dict(hash_len=32),
    dict(salt_len=8), dict(salt_len=16), dict(type="i"), dict(type="d"),
], ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_check_needs_rehash_when_a_parameter_differs(change):
    ph = PasswordHasher(**REHASH_BASE)
    other = PasswordHasher(**{**REHASH_BASE, **change})
    assert ph.check_needs_rehash(other.hash(PASSWORD)) is True
    assert other.check_needs_rehash(ph.hash(PASSWORD)) is True
    assert other.check_needs_rehash(other.hash(PASSWORD)) is False


def test_check_needs_rehash_own_hashes_and_version():
    ph = PasswordHasher(**REHASH_BASE)
    assert ph.check_needs_rehash(ph.hash(PASSWORD)) is False
    assert ph.check_needs_rehash(ph.hash(PASSWORD).encode("ascii")) is False
    same_v16 = argon2_hash_encoded(PASSWORD, b"x" * 12, type="id", time_cost=2, memory_cost=32,
                                   parallelism=2, hash_len=16, version=0x10)
    same_v19 = argon2_hash_encoded(PASSWORD, b"x" * 12, type="id", time_cost=2, memory_cost=32,
                                   parallelism=2, hash_len=16, version=0x13)
    assert ph.check_needs_rehash(same_v19) is False
    assert ph.check_needs_rehash(same_v16) is True
    assert ph.check_needs_rehash(same_v16.replace("$v=16", "")) is True
    assert ph.verify(same_v16, PASSWORD) is True
