"""Bounded work inside the limits: ``Limits.max_work`` (t x m), ``Limits.max_encoded_len`` (the
string's length, checked before it is parsed) and ``argonishche verify``'s limit flags.

The other limits, and the published profiles that must pass the defaults, are in
tests/api/test_hardening.py; the ``recorder`` and ``no_work`` fixtures (conftest.py) stand in for
the C call in both.
"""

from __future__ import annotations

import re
import tracemalloc

import argonishche
import pytest
from argonishche import (
    InvalidHashError,
    LimitExceededError,
    Limits,
    ParameterError,
    PasswordHasher,
    argon2_hash_encoded,
    argon2_verify,
)
from support import UINT32_MAX, b64, encoded_with
from support import call_cli as call

#: The string issue 12 found inside the old limits: 4 GiB, 64 passes, 64 lanes; 10-15 minutes.
TEN_MINUTES = encoded_with(m=4 * 2**20, t=64, p=64)


def verifiers(limits=None):
    """The two calls that run the costs a hash string asks for, as one-argument callables.
    (check_needs_rehash answers True for such strings instead: tested with each.)"""
    ph = PasswordHasher(limits=limits)
    return [lambda e: argon2_verify(e, b"password", limits=limits),
            lambda e: ph.verify(e, b"password")]


# ---- max_work -------------------------------------------------------------------------------


def test_the_ten_minute_hash_is_refused_by_max_work_before_any_work(no_work):
    for check in verifiers():
        with pytest.raises(LimitExceededError) as info:
            check(TEN_MINUTES)
        message = str(info.value)
        assert message.startswith("hash has time_cost x memory_cost 268435456 KiB-passes "
                                  "(t=64 x m=4194304), over the limit of 8388608 KiB-passes "
                                  "(Limits.max_work); refused before any work was done")
        assert "limits=argonishche.Limits(max_work=268435456)" in message
        assert "Limits.none()" in message
    assert PasswordHasher().check_needs_rehash(TEN_MINUTES) is True


def test_one_over_max_work_is_refused(no_work):
    with pytest.raises(LimitExceededError, match=r"^hash has time_cost x memory_cost 8388609 "):
        argon2_verify(encoded_with(m=2796203, t=3), b"pw")  # 3 x 2796203 = 8388608 + 1


def test_a_hash_at_max_work_runs(recorder):
    assert argon2_verify(encoded_with(m=4 * 2**20, t=2), b"pw", allocator="system") is True
    assert [(c["memory_cost"], c["time_cost"]) for c in recorder] == [(4 * 2**20, 2)]


def test_max_work_raised_or_disabled_lets_the_hash_run(recorder):
    assert argon2_verify(TEN_MINUTES, b"pw", limits=Limits(max_work=64 * 4 * 2**20),
                         allocator="system") is True
    assert argon2_verify(TEN_MINUTES, b"pw", limits=Limits(max_work=None),
                         allocator="system") is True
    assert argon2_verify(TEN_MINUTES, b"pw", limits=Limits.none(), allocator="system") is True
    assert len(recorder) == 3


def test_a_service_sets_max_work_just_above_its_own_costs(no_work):
    ph = PasswordHasher(limits=Limits(max_work=3 * 65536))  # t=3 x 64 MiB, its own costs
    for encoded in (encoded_with(m=65537, t=3), encoded_with(m=32768, t=7)):
        with pytest.raises(LimitExceededError, match=r"\(Limits.max_work\)"):
            ph.verify(encoded, "pw")


def test_a_password_hasher_over_its_own_max_work_is_a_parameter_error():
    with pytest.raises(ParameterError, match=r"^time_cost x memory_cost=12582912 is over this "
                                             r"hasher's limit Limits.max_work=8388608 "):
        PasswordHasher(time_cost=3, memory_cost=4 * 2**20)
    assert PasswordHasher(time_cost=3, memory_cost=4 * 2**20,
                          limits=Limits(max_work=3 * 4 * 2**20)).memory_cost == 4 * 2**20


def test_a_hash_over_several_limits_is_told_to_raise_them_all_at_once(recorder):
    # Over max_memory_cost and max_work: raising only the first, as the message once said,
    # would just meet the second.
    encoded = encoded_with(m=8 * 2**20, t=3)
    with pytest.raises(LimitExceededError) as info:
        argon2_verify(encoded, b"pw")
    message = str(info.value)
    assert message.startswith("hash has memory_cost 8388608 KiB (m=8388608), over the limit of "
                              "4194304 KiB (Limits.max_memory_cost), and time_cost x memory_cost "
                              "25165824 KiB-passes (t=3 x m=8388608), over the limit of 8388608 "
                              "KiB-passes (Limits.max_work); refused before any work was done")
    assert ("raise them: limits=argonishche.Limits(max_memory_cost=8388608, max_work=25165824) "
            in message)
    limits = Limits(max_memory_cost=8388608, max_work=25165824)
    with pytest.raises(ParameterError, match=r"^memory_cost=8388608 is over .* and time_cost x "
                                             r"memory_cost=25165824 is over .*"
                                             r"Limits\(max_memory_cost=8388608, "
                                             r"max_work=25165824\)"):
        PasswordHasher(time_cost=3, memory_cost=8 * 2**20)
    assert PasswordHasher(time_cost=3, memory_cost=8 * 2**20, parallelism=1, salt_len=8,
                          limits=limits).check_needs_rehash(encoded) is False
    assert argon2_verify(encoded, b"pw", limits=limits, allocator="system") is True
    assert len(recorder) == 1


def test_max_work_may_be_set_above_32_bits_but_not_to_nothing():
    assert Limits(max_work=UINT32_MAX * UINT32_MAX).max_work == UINT32_MAX * UINT32_MAX
    for value in (0, UINT32_MAX * UINT32_MAX + 1):
        with pytest.raises(ParameterError, match="Limits.max_work must be in 1"):
            Limits(max_work=value)


# ---- max_encoded_len ------------------------------------------------------------------------


def test_max_encoded_len_is_the_longest_string_within_the_limits_plus_1024():
    longest = ("$argon2id$v=4294967295$m=4294967295,t=4294967295,p=4294967295"
               f"${b64(bytes(4096))}${b64(bytes(4096))}")
    assert Limits().max_encoded_len == len(longest) + 1024 == 12011
    assert Limits(max_salt_len=16, max_hash_len=32).max_encoded_len == 63 + 22 + 43 + 1024
    assert Limits.none().max_encoded_len is None
    assert Limits(max_salt_len=None).max_encoded_len is None


def test_the_longest_valid_string_within_the_limits_is_run(recorder):
    encoded = encoded_with(m=4 * 2**20, t=2, p=64, salt=bytes(4096), tag=bytes(4096))
    assert argon2_verify(encoded, b"pw", allocator="system") is True
    assert len(recorder) == 1


@pytest.fixture
def no_decode(monkeypatch):
    """Fail the test if the PHC decoder is called at all."""
    def refuse(encoded):
        raise AssertionError(f"the decoder read a {len(encoded)}-character hash string")

    monkeypatch.setattr(argonishche._phc, "decode", refuse)


@pytest.mark.parametrize("kind", [str, bytes])
def test_a_64_mib_salt_field_is_refused_unread(kind, no_decode):
    text = f"$argon2id$v=19$m=32,t=1,p=1${'A' * 64 * 2**20}${b64(bytes(32))}"
    encoded = text if kind is str else text.encode("ascii")
    del text
    for check in verifiers():
        tracemalloc.start()
        try:
            with pytest.raises(LimitExceededError) as info:
                check(encoded)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 64 * 1024, f"{peak} bytes allocated to refuse it"
        message = str(info.value)
        assert message.startswith(f"hash has {len(encoded)} characters, over the limit of 12011 "
                                  f"(Limits.max_encoded_len, ")
        assert "refused before it was parsed" in message and "Limits.none()" in message
    tracemalloc.start()
    try:  # longer than any hash within the limits: answered unread
        assert PasswordHasher().check_needs_rehash(encoded) is True
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, f"{peak} bytes allocated to answer"


def test_the_length_limit_is_refused_one_past_it_and_parsed_at_it():
    limit = Limits().max_encoded_len
    with pytest.raises(InvalidHashError) as info:
        argon2_verify("$" + "A" * (limit - 1), b"pw")
    assert not isinstance(info.value, LimitExceededError)  # the decoder's own message
    with pytest.raises(LimitExceededError, match=f"^hash has {limit + 1} characters"):
        argon2_verify("$" + "A" * limit, b"pw")


def test_the_length_message_says_what_to_raise_and_that_is_enough():
    encoded = argon2_hash_encoded(b"pw", bytes(15000), time_cost=1, memory_cost=8,
                                  parallelism=1)
    with pytest.raises(LimitExceededError) as info:
        argon2_verify(encoded, b"pw")
    suggested = re.search(r"limits=argonishche\.Limits\((.*?)\)", str(info.value)).group(1)
    limits = Limits(**{name: int(value)
                       for name, value in re.findall(r"(max_\w+)=(\d+)", suggested)})
    assert limits.max_salt_len >= 15000
    assert argon2_verify(encoded, b"pw", limits=limits) is True


def test_other_types_still_reach_the_decoder_and_are_invalid():
    for value in (bytearray(2**20), memoryview(bytes(2**20)), None):
        with pytest.raises(InvalidHashError, match="must be str or bytes") as info:
            argon2_verify(value, b"pw")
        assert not isinstance(info.value, LimitExceededError)


# ---- argonishche verify ---------------------------------------------------------------------

#: A real, cheap hash of "pw" and, per flag, the value it has and one just under it.
CHEAP = argon2_hash_encoded(b"pw", bytes(16), time_cost=2, memory_cost=64, parallelism=2)
FLAGS = {
    "--max-memory": 64, "--max-time": 2, "--max-parallelism": 2, "--max-work": 128,
    "--max-hash-len": 32, "--max-salt-len": 16,
}


@pytest.mark.parametrize("flag", FLAGS)
def test_verify_flag_lowered_refuses_with_the_flag_named_and_raised_verifies(
        capsys, monkeypatch, flag):
    value = FLAGS[flag]
    status, out, err = call(capsys, monkeypatch, "verify", CHEAP, flag, str(value - 1),
                            stdin=b"pw")
    assert (status, out) == (2, "")
    assert f"({flag}); refused before any work was done" in err
    assert f"raise it: {flag} {value} (--no-limits disables every limit)" in err
    assert "Limits" not in err and "limits=" not in err  # no Python keywords on the command line
    assert call(capsys, monkeypatch, "verify", CHEAP, flag, str(value), stdin=b"pw") == (
        0, "Verification ok\n", "")


def test_verify_refuses_the_ten_minute_hash_with_status_2_naming_max_work(capsys, monkeypatch,
                                                                          no_work):
    status, out, err = call(capsys, monkeypatch, "verify", TEN_MINUTES, stdin=b"pw")
    assert (status, out) == (2, "")
    assert err == (
        "Error: hash has time_cost x memory_cost 268435456 KiB-passes (t=64 x m=4194304), over "
        "the limit of 8388608 KiB-passes (--max-work); refused before any work was done. If such "
        "hashes are legitimate here, raise it: --max-work 268435456 (--no-limits disables every "
        "limit)\n")


def test_verify_no_limits_lifts_them_and_max_flags_still_apply(capsys, monkeypatch):
    encoded = argon2_hash_encoded(b"pw", bytes(16), time_cost=65, memory_cost=8, parallelism=1)
    status, _, err = call(capsys, monkeypatch, "verify", encoded, stdin=b"pw")
    assert status == 2 and "raise it: --max-time 65 " in err
    assert call(capsys, monkeypatch, "verify", encoded, "--no-limits", stdin=b"pw")[0] == 0
    assert call(capsys, monkeypatch, "verify", encoded, "--max-time", "65", stdin=b"pw")[0] == 0
    status, _, err = call(capsys, monkeypatch, "verify", encoded, "--no-limits", "--max-time",
                          "64", stdin=b"pw")
    assert status == 2 and "(--max-time)" in err
    status, _, err = call(capsys, monkeypatch, "verify", CHEAP, "--max-time", "1",
                          "--max-work", "64", stdin=b"pw")
    assert status == 2 and "raise them: --max-time 2 --max-work 128 (--no-limits " in err


def test_verify_refuses_an_overlong_string_naming_the_length_flags(capsys, monkeypatch):
    encoded = argon2_hash_encoded(b"pw", bytes(15000), time_cost=1, memory_cost=8,
                                  parallelism=1)
    status, out, err = call(capsys, monkeypatch, "verify", encoded, stdin=b"pw")
    assert (status, out) == (2, "")
    assert "(the length limit, from --max-salt-len and --max-hash-len)" in err
    flags = re.search(r"raise those: (--max-salt-len \d+ --max-hash-len \d+) ", err).group(1)
    assert call(capsys, monkeypatch, "verify", encoded, *flags.split(), stdin=b"pw") == (
        0, "Verification ok\n", "")


@pytest.mark.parametrize("args", [("--max-work", "0"), ("--max-time", "-1"),
                                  ("--max-memory", str(UINT32_MAX + 1)), ("--max-salt-len", "x")])
def test_verify_bad_limit_values_are_a_usage_error(capsys, monkeypatch, args):
    status, out, err = call(capsys, monkeypatch, "verify", CHEAP, *args, stdin=b"pw")
    assert (status, out) == (2, "") and "usage: argonishche verify" in err
