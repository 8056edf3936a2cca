"""The PHC string tests' cases: a reference string, and the malformed strings every test of the
decoder (test_phc_malformed.py) and of the reference (test_phc_reference.py) runs."""

from __future__ import annotations

import pytest
from support import SALT_B64, TAG_B64, VALID

# RFC 9106 / reference test.c parameters: password "password", salt "somesalt", t=2, m=2**16,
# p=1, 32-byte tag (RFC_I_V19 and RFC_I_V16_WITHOUT_V are support's). The tags are what the
# reference implementation computes.
RFC_ID_V19 = (
    "$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc"
)

# VALID, a cheap real hash (PASSWORD, SALT, t=1, m=32, p=1), is what the malformed cases below
# are derived from, so that every case differs from a valid string in exactly one way.


def with_field(old: str, new: str) -> str:
    """VALID with one piece replaced; fails loudly if the piece is not in it exactly once."""
    assert VALID.count(old) == 1, old
    return VALID.replace(old, new)


MALFORMED = [
    # whole-string problems
    pytest.param("", id="empty-string"),
    pytest.param(b"", id="empty-bytes"),
    pytest.param("$", id="only-dollar"),
    pytest.param("argon2id", id="bare-type"),
    pytest.param(VALID[1:], id="missing-leading-dollar"),
    pytest.param(" " + VALID, id="leading-space"),
    pytest.param(VALID + "$", id="trailing-dollar"),
    pytest.param(VALID + "!", id="trailing-character"),
    pytest.param(VALID + "\n", id="trailing-newline"),
    pytest.param(VALID + "\x00", id="trailing-nul"),
    pytest.param(VALID + " ", id="trailing-space"),
    pytest.param(VALID + "$" + TAG_B64, id="extra-field"),
    pytest.param(VALID + "$keyid=abc", id="keyid-field"),
    pytest.param(VALID + "é", id="non-ascii-str"),
    pytest.param(VALID + "\udc80", id="lone-surrogate"),
    pytest.param(VALID.encode("ascii") + b"\xff", id="non-ascii-bytes"),
    pytest.param(with_field(TAG_B64, TAG_B64[:-1] + "\u0433"), id="cyrillic-in-tag"),
    pytest.param(VALID.replace("=19", "=\u0661\u0669"), id="arabic-indic-digits"),
    # type
    pytest.param(with_field("$argon2id$", "$argon2x$"), id="unknown-type"),
    pytest.param(with_field("$argon2id$", "$argon2$"), id="no-type"),
    pytest.param(with_field("$argon2id$", "$argon2ID$"), id="upper-case-type"),
    pytest.param(with_field("$argon2id$", "$Argon2id$"), id="upper-case-argon"),
    pytest.param(with_field("$argon2id$", "$argon2di$"), id="type-di"),
    pytest.param(with_field("$argon2id$", "$argon2idd$"), id="type-with-suffix"),
    pytest.param(with_field("$argon2id$", "$scrypt$"), id="other-algorithm"),
    # version
    pytest.param(with_field("$v=19$", "$v=18$"), id="version-18"),
    pytest.param(with_field("$v=19$", "$v=0$"), id="version-0"),
    pytest.param(with_field("$v=19$", "$v=013$"), id="version-leading-zero"),
    pytest.param(with_field("$v=19$", "$v=0x13$"), id="version-hex"),
    pytest.param(with_field("$v=19$", "$v=$"), id="version-empty"),
    pytest.param(with_field("$v=19$", "$V=19$"), id="version-upper-case-key"),
    pytest.param(with_field("$v=19$", "$v=19,m=32$"), id="version-with-extra-key"),
    pytest.param(with_field("$v=19$", "$v=19$v=19$"), id="version-repeated"),
    pytest.param(
        with_field("$v=19$m=32,t=1,p=1$", "$m=32,t=1,p=1$v=19$"), id="version-after-params"
    ),
    pytest.param(with_field("$v=19$", "$v=4294967315$"), id="version-overflows-to-19"),
    # parameters
    pytest.param(with_field("m=32", "m=032"), id="leading-zero"),
    pytest.param(with_field("t=1", "t=00"), id="double-zero"),
    pytest.param(with_field("t=1", "t=+1"), id="plus-sign"),
    pytest.param(with_field("t=1", "t=-1"), id="minus-sign"),
    pytest.param(with_field("t=1", "t= 1"), id="space-before-number"),
    pytest.param(with_field("t=1", "t=1 "), id="space-after-number"),
    pytest.param(with_field("m=32,", "m=32, "), id="space-after-comma"),
    pytest.param(with_field("t=1", "t=1.0"), id="decimal-point"),
    pytest.param(with_field("t=1", "t=1_0"), id="underscore-in-number"),
    pytest.param(with_field("m=32", f"m={2**32}"), id="m-2-to-the-32"),
    pytest.param(with_field("p=1", "p=99999999999999999999"), id="p-twenty-digits"),
    pytest.param(with_field("t=1", "t=" + "9" * 5000), id="t-five-thousand-digits"),
    pytest.param(with_field("t=1", "t="), id="empty-number"),
    pytest.param(with_field("t=1", "t"), id="missing-equals"),
    pytest.param(with_field("t=1", "t==1"), id="double-equals"),
    pytest.param(with_field("m=32,t=1,p=1", "m=32,p=1"), id="missing-t"),
    pytest.param(with_field("m=32,t=1,p=1", "t=1,p=1"), id="missing-m"),
    pytest.param(with_field("m=32,t=1,p=1", "m=32,t=1"), id="missing-p"),
    pytest.param(with_field("m=32,t=1,p=1", "t=1,m=32,p=1"), id="wrong-order"),
    pytest.param(with_field("m=32,t=1,p=1", "m=32,t=1,t=1,p=1"), id="repeated-t"),
    pytest.param(with_field("m=32,t=1,p=1", "m=32,t=1,p=1,"), id="trailing-comma"),
    pytest.param(with_field("m=32,t=1,p=1", "m=32,t=1,p=1,k=1"), id="extra-param"),
    pytest.param(with_field("m=32,t=1,p=1", "m=32;t=1;p=1"), id="semicolons"),
    pytest.param(with_field("m=32,t=1,p=1", "M=32,T=1,P=1"), id="upper-case-keys"),
    pytest.param(with_field("$m=32,t=1,p=1$", "$$"), id="empty-params"),
    pytest.param(with_field("$m=32,t=1,p=1$", "$"), id="missing-params"),
    # salt and tag
    pytest.param(with_field(SALT_B64, ""), id="empty-salt"),
    pytest.param(with_field(TAG_B64, ""), id="empty-tag"),
    pytest.param(with_field("$" + SALT_B64, ""), id="missing-salt"),
    pytest.param(with_field("$" + TAG_B64, ""), id="missing-tag"),
    pytest.param(with_field(SALT_B64, SALT_B64 + "="), id="salt-padding"),
    pytest.param(with_field(TAG_B64, TAG_B64 + "="), id="tag-padding"),
    pytest.param(with_field(SALT_B64, SALT_B64 + "=="), id="salt-double-padding"),
    pytest.param(with_field(SALT_B64, SALT_B64[:-1] + "R"), id="salt-non-canonical-last-char"),
    pytest.param(with_field(TAG_B64, TAG_B64[:-1] + "h"), id="tag-non-canonical-last-char"),
    pytest.param(with_field(SALT_B64, "AB"), id="two-chars-non-canonical"),
    pytest.param(with_field(SALT_B64, "AAB"), id="three-chars-non-canonical"),
    pytest.param(with_field(SALT_B64, SALT_B64 + "AA"), id="salt-length-mod-4-is-1"),
    pytest.param(with_field(TAG_B64, "A"), id="tag-single-char"),
    pytest.param(with_field(SALT_B64, "c29tZ-NhbHQ"), id="urlsafe-minus"),
    pytest.param(with_field(SALT_B64, "c29tZ_NhbHQ"), id="urlsafe-underscore"),
    pytest.param(with_field(SALT_B64, "c29tZ XNhbHQ"), id="space-in-salt"),
    pytest.param(with_field(SALT_B64, "c29tZ.NhbHQ"), id="dot-in-salt"),
    pytest.param(with_field(TAG_B64, TAG_B64[:20] + "\n" + TAG_B64[20:]), id="newline-in-tag"),
    pytest.param(with_field(TAG_B64, TAG_B64[:20] + "*" + TAG_B64[20:]), id="star-in-tag"),
]


# Where the reference's C decoder is laxer than decode(), and why decode() does not copy it:
# - it reads any version number and only fails later, when the recomputed tag differs;
# - it treats a string as ending at the first NUL, so anything after a NUL goes unseen;
# - its base64 reader is written for ASCII and consumes bytes >= 0x80 as if they were
#   base64 digits (seen with argon2-cffi's bundled build), so the tag is misread, not rejected.
REFERENCE_MISMATCHES = {"version-18", "version-0", "non-ascii-bytes", "cyrillic-in-tag"}
REFERENCE_STOPS_AT_NUL = {"trailing-nul"}
