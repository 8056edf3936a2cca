"""``argonishche bench``'s BLAKE2b table has the 64-byte latency rows of issue 34: one-shot, and
objects (new, update, digest) unkeyed and keyed, ours against hashlib's, in aligned columns."""

from __future__ import annotations

import io

from argonishche._bench import suites


def test_the_64_byte_rows_are_ours_and_hashlibs():
    out = io.StringIO()
    report = suites.bench_blake2b(repetitions=2, budget=0.001, out=out)
    lines = out.getvalue().splitlines()
    for label in ("64 B one-shot", "64 B object", "64 B keyed object"):
        rows = [line for line in lines if line.strip().startswith(label + " ")]
        assert len(rows) == 2, (label, lines)
        assert "argonishche (" in rows[0] and "hashlib.blake2b" in rows[1]
        assert [r["subject"] for r in report[label]][-1] == "hashlib.blake2b"
    # The subject column starts at the same place on every row.
    starts = {line.index("argonishche (") for line in lines if "argonishche (" in line}
    starts |= {line.index("hashlib.blake2b") for line in lines if "hashlib.blake2b" in line}
    assert len(starts) == 1, lines
