"""Hostile hash strings: whatever argon2_verify and PasswordHasher.verify are given, they return
True or raise VerifyMismatchError or InvalidHashError (LimitExceededError is one) -- nothing else
-- and never run a hash with more than the limits allow; check_needs_rehash answers, or raises
InvalidHashError for a string not structured like a hash.

Well-formed strings are generated with tiny costs, then mutated (characters replaced, inserted,
deleted, fields swapped, numbers made huge, base64 broken, non-ASCII added, str and bytes).
Every call into the C driver goes through a guard that fails the test if its costs are over the
limits in force, so "nothing takes long" is checked structurally, not with a timer.

``ARGONISHCHE_FUZZ_EXAMPLES`` sets the examples per test (default 300); the number of inputs
tried is printed at the end of the module (``tox -e fuzz`` runs 20,000 per test).
"""

from __future__ import annotations

import collections
import os
from unittest import mock

import argonishche
import pytest
from argonishche import (
    InvalidHashError,
    LimitExceededError,
    Limits,
    PasswordHasher,
    VerifyMismatchError,
    argon2_verify,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support import UINT32_MAX, b64

EXAMPLES = int(os.environ.get("ARGONISHCHE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

#: Small enough that any hash within them is instant; generated strings are inside them.
TIGHT = Limits(max_memory_cost=128, max_time_cost=3, max_parallelism=4, max_hash_len=128,
               max_salt_len=64)
TRIED: collections.Counter = collections.Counter()
REAL_ARGON2 = argonishche._hash_call.argon2


@pytest.fixture(scope="module", autouse=True)
def report_inputs_tried(request):
    argonishche._registry.get()  # initialised with the real driver before any guard is in place
    yield
    line = (f"test_fuzz: {sum(TRIED.values())} inputs tried "
            f"({', '.join(f'{k} {v}' for k, v in sorted(TRIED.items()))})")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line(line)


class Guard:
    """Stands in for driver.argon2: fails if a hash over *limits* would run; runs it, or (with
    run=False) returns a zero tag without computing anything."""

    def __init__(self, limits: Limits, run: bool = True):
        self.limits, self.run, self.calls = limits, run, []

    def __call__(self, argon2_table, blake2b_table, **request):
        for field, limit in (("memory_cost", self.limits.max_memory_cost),
                             ("time_cost", self.limits.max_time_cost),
                             ("parallelism", self.limits.max_parallelism),
                             ("hash_len", self.limits.max_hash_len)):
            assert limit is None or request[field] <= limit, (
                f"a hash with {field}={request[field]} over the limit {limit} was started")
        assert len(request["salt"]) <= self.limits.max_salt_len
        self.calls.append(request)
        if not self.run:
            return bytes(request["hash_len"])
        return REAL_ARGON2(argon2_table, blake2b_table, **request)


def outcome(call):
    """"ok", "mismatch", "limit" or "invalid"; anything else raised fails the test."""
    try:
        result = call()
    except LimitExceededError as exc:
        assert str(exc).startswith("hash has ") and "Limits." in str(exc)
        return "limit"
    except InvalidHashError as exc:
        assert isinstance(exc, ValueError) and str(exc)
        return "invalid"
    except VerifyMismatchError:
        return "mismatch"
    assert result is True or result is False
    return "ok" if result is True else "false"


# ---- strategies -----------------------------------------------------------------------------


@st.composite
def well_formed(draw):
    """A valid PHC string with tiny costs, and the password whose tag it holds (or not)."""
    type_name = draw(st.sampled_from(["d", "i", "id"]))
    p = draw(st.integers(1, 2))
    m = draw(st.integers(8 * p, 64))
    t = draw(st.integers(1, 2))
    version = draw(st.sampled_from([0x10, 0x13, None]))
    salt = draw(st.binary(min_size=8, max_size=24))
    password = draw(st.binary(max_size=16) | st.text(max_size=8))
    hash_len = draw(st.integers(4, 48))
    tag = argonishche.argon2_hash(password, salt, type=type_name, time_cost=t, memory_cost=m,
                                  parallelism=p, hash_len=hash_len, version=version or 0x10)
    if draw(st.booleans()):
        tag = draw(st.binary(min_size=4, max_size=48))  # a tag of another password
    v = "" if version is None else f"$v={version}"
    return f"$argon2{type_name}{v}$m={m},t={t},p={p}${b64(salt)}${b64(tag)}", password


JUNK_CHARS = st.sampled_from(list("$,=+/0123456789mtpvAZaz-_. \x00\t\n\x7f") +
                             ["\u00e9", "\u0660", "\uff10", "\ud800", "\U0001f511", "\u0130"])
HUGE_NUMBERS = st.one_of(
    st.integers(0, 2**33).map(str),
    st.integers(2**32 - 2, 2**32 + 2).map(str),
    st.integers(0, 10**400).map(str),
    st.sampled_from(["", "-1", "+1", "01", "00", "1e9", "0x10", "1_000", "\u0661", " 1", "1 ",
                     "9" * 5000, "4294967295", "4294967296", "18446744073709551616"]),
)


@st.composite
def mutated(draw):
    """A well-formed string after one to four random mutations, as str or bytes."""
    text, password = draw(well_formed())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["replace", "insert", "delete", "number", "field",
                                     "truncate", "duplicate", "swap", "pad", "case"]))
        fields = text.split("$")
        if kind == "replace" and text:
            i = draw(st.integers(0, len(text) - 1))
            text = text[:i] + draw(JUNK_CHARS) + text[i + 1:]
        elif kind == "insert":
            i = draw(st.integers(0, len(text)))
            text = text[:i] + draw(st.text(JUNK_CHARS, min_size=1, max_size=4)) + text[i:]
        elif kind == "delete" and text:
            i = draw(st.integers(0, len(text) - 1))
            text = text[:i] + text[i + draw(st.integers(1, 6)):]
        elif kind == "number":  # one of v, m, t, p becomes any number, huge or odd
            name = draw(st.sampled_from(["m", "t", "p", "v"]))
            value = draw(HUGE_NUMBERS)
            parts = []
            for field in fields:
                if name == "v" and field.startswith("v="):
                    field = "v=" + value
                elif field.startswith("m="):
                    field = ",".join(f"{name}={value}" if item.startswith(name + "=") else item
                                     for item in field.split(","))
                parts.append(field)
            text = "$".join(parts)
        elif kind == "field" and len(fields) > 1:  # a field replaced by random text
            i = draw(st.integers(0, len(fields) - 1))
            fields[i] = draw(st.text(max_size=12) | st.text(JUNK_CHARS, max_size=12))
            text = "$".join(fields)
        elif kind == "truncate":
            text = text[:draw(st.integers(0, len(text)))]
        elif kind == "duplicate" and len(fields) > 1:
            i = draw(st.integers(1, len(fields) - 1))
            fields.insert(i, fields[i])
            text = "$".join(fields)
        elif kind == "swap" and len(fields) > 2:
            i, j = draw(st.integers(1, len(fields) - 1)), draw(st.integers(1, len(fields) - 1))
            fields[i], fields[j] = fields[j], fields[i]
            text = "$".join(fields)
        elif kind == "pad":
            text += draw(st.sampled_from(["=", "==", "\n", " ", "$", "\x00"]))
        elif kind == "case":
            text = text.swapcase() if draw(st.booleans()) else text.upper()
    if draw(st.booleans()):
        return text.encode("utf-8", "surrogatepass"), password
    return text, password


random_input = st.one_of(
    st.text(max_size=120),
    st.binary(max_size=120),
    st.text(max_size=80).map(lambda s: "$argon2id$" + s),
    st.binary(max_size=80).map(lambda b: b"$argon2i$v=19$" + b),
    st.sampled_from([None, 0, 1.5, [], {}, bytearray(b"$argon2id$"), memoryview(b"$argon2d$"),
                     object()]),
)


# ---- properties -----------------------------------------------------------------------------


def within(limits: Limits, password, encoded, hasher=None):
    """Verify *encoded* with the driver guarded by *limits*; the outcome and the guard."""
    guard = Guard(limits)
    with mock.patch.object(argonishche._hash_call, "argon2", guard):
        if hasher is None:
            result = outcome(lambda: argon2_verify(encoded, password, limits=limits))
        else:
            result = outcome(lambda: hasher.verify(encoded, password))
    return result, guard


@FUZZ
@given(case=well_formed())
def test_well_formed_strings_verify_or_mismatch(case):
    TRIED["well-formed"] += 1
    encoded, password = case
    result, guard = within(TIGHT, password, encoded)
    assert result in ("ok", "mismatch")
    assert len(guard.calls) == 1
    assert outcome(lambda: argon2_verify(encoded.encode("ascii"), password,
                                         limits=TIGHT)) == result


@FUZZ
@given(case=mutated())
@example(case=("$argon2id$v=19$m=4294967295,t=1,p=1$c29tZXNhbHQ$AAAAAAAA", b""))
@example(case=("$argon2id$v=19$m=32,t=4294967295,p=1$c29tZXNhbHQ$AAAAAAAA", b""))
@example(case=("$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$AAAA\u0660", b""))
@example(case=(b"$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$AAAA\xed\xa0\x80", b""))
@example(case=("$argon2id$v=19$m=" + "9" * 5000 + ",t=1,p=1$c29tZXNhbHQ$AAAAAAAA", b""))
@example(case=("$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ=$AAAAAAAA", b""))
def test_mutated_strings_raise_only_invalid_hash_or_mismatch(case):
    TRIED["mutated"] += 1
    encoded, password = case
    result, guard = within(TIGHT, password, encoded)
    assert result in ("ok", "mismatch", "limit", "invalid")
    assert len(guard.calls) == (1 if result in ("ok", "mismatch") else 0)
    hasher = PasswordHasher(time_cost=1, memory_cost=32, parallelism=1, limits=TIGHT)
    assert within(TIGHT, password, encoded, hasher)[0] == result
    needs = outcome(lambda: hasher.check_needs_rehash(encoded))
    assert needs in ("ok", "false", "invalid")  # answered unless not structured like a hash
    if result in ("limit", "invalid"):
        assert needs != "false"  # a hash verify refuses is never this hasher's current one
    else:
        assert needs in ("ok", "false")  # a hash verify ran can always be answered


@FUZZ
@given(value=random_input, password=st.binary(max_size=8) | st.text(max_size=8))
@example(value="$argon2id$v=19$m=65536,t=3,p=4$$", password=b"")
@example(value="\ud800", password="")
@example(value=b"\xff\xfe", password=b"")
def test_random_input_raises_only_invalid_hash_error(value, password):
    TRIED["random"] += 1
    result, guard = within(TIGHT, password, value)
    assert result in ("invalid", "limit", "mismatch")
    for hasher in (PasswordHasher(limits=Limits.none()), PasswordHasher()):
        assert outcome(lambda h=hasher: h.check_needs_rehash(value)) in ("invalid", "ok")


@FUZZ
@given(case=mutated())
def test_default_limits_never_start_a_hash_over_them(case):
    # PasswordHasher() and argon2_verify with their default limits; the guard returns a zero
    # tag instead of computing, so a 4 GiB hash within the defaults costs nothing here.
    TRIED["default-limits"] += 1
    encoded, password = case
    guard = Guard(Limits(), run=False)
    with mock.patch.object(argonishche._hash_call, "argon2", guard):
        # allocator="system": the C driver (here the guard) allocates, so nothing is mapped
        first = outcome(lambda: argon2_verify(encoded, password, allocator="system"))
        second = outcome(lambda: PasswordHasher(allocator="system").verify(encoded, password))
    assert first == second and first in ("ok", "mismatch", "limit", "invalid")


@FUZZ
@given(case=well_formed(), field=st.sampled_from(["m", "t", "p"]),
       value=st.integers(0, UINT32_MAX), default=st.booleans())
@example(case=("$argon2id$v=19$m=32,t=1,p=1$c29tZXNhbHQ$AAAAAAAA", b""), field="m",
         value=UINT32_MAX, default=True)
def test_raising_a_cost_above_the_limit_is_a_limits_error_not_an_allocation(case, field, value,
                                                                            default):
    TRIED["raised-cost"] += 1
    encoded, password = case
    limits = Limits() if default else TIGHT
    head, params, salt, tag = encoded.rsplit("$", 3)
    costs = dict(item.split("=") for item in params.split(","))
    costs[field] = str(value)
    m, t, p = int(costs["m"]), int(costs["t"]), int(costs["p"])
    encoded = f"{head}$m={m},t={t},p={p}${salt}${tag}"
    guard = Guard(limits, run=False)
    with mock.patch.object(argonishche._hash_call, "argon2", guard):
        result = outcome(lambda: argon2_verify(encoded, password, limits=limits,
                                               allocator="system"))
    valid = t >= 1 and 1 <= p <= 2**24 - 1 and m >= 8 * p
    over = (m > limits.max_memory_cost or t > limits.max_time_cost
            or p > limits.max_parallelism)
    if not valid:
        assert result == "invalid"
    elif over:
        assert result == "limit" and guard.calls == []
    else:
        assert result in ("ok", "mismatch") and len(guard.calls) == 1
