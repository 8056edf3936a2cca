"""A pytest plugin (``pytest -p measurement_disagrees``, with tools/ on the path): every selection
measurement in the run disagrees with the ladder, as an AMD Zen 5's does.

There the portable ``ref`` BLAKE2b is faster than every vector kernel (each vector instruction
takes two cycles, a scalar one one), so measurement picks the ladder's lowest rung for BLAKE2b.
Here, on any CPU, ``ref`` measures fastest for BLAKE2b and the second-lowest usable rung (``sse2``
on x86-64, ``neon`` on aarch64) for Argon2, where no ladder would take either.  The process's
registry is built with this in force (the module patches the timing when pytest imports it, before
conftest.py builds the registry), and the report header says what was selected, so that a run
in which the fake did not take effect cannot pass for one in which it did.

tests/registry/test_selection.py runs the tests that check the selection under it.
"""

from __future__ import annotations

from argonishche import _selection

#: What measures fastest: {algorithm: backend}; for Argon2, the second-lowest rung (by name here,
#: the rung above ref of each architecture built in).
WINNERS = {"blake2b": "ref", "argon2": ("sse2", "neon")}


def _sample(entry, algorithm, scratch):
    winner = WINNERS[algorithm]
    wins = entry.name == winner if isinstance(winner, str) else entry.name in winner
    return 100.0 if wins else 200.0


_selection.sample = _sample


def pytest_report_header(config):
    import argonishche

    selected = {a: argonishche.selected_backend(a) for a in ("argon2", "blake2b")}
    faked = selected["blake2b"] == "ref" and selected["argon2"] in WINNERS["argon2"]
    return (f"measurement disagrees with the ladder: selected: argon2 {selected['argon2']}, "
            f"blake2b {selected['blake2b']} ({'as faked' if faked else 'NOT AS FAKED'})")
