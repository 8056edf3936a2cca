#!/usr/bin/env python3
"""Compare two ``pytest --collect-only -q`` listings by test id, so that tests moved between
files or folders count as the same tests, with object addresses in parametrized ids
(``<memory at 0x7f...>``, different in every run) masked:

    python tools/compare_collections.py BEFORE.txt AFTER.txt

A test is its id without its file (``TestClass::test_name[params]``), counted: a name that two
files share counts twice, so a test that stopped running is still seen.

Prints each listing's count and the ids only one of them has; exit status 1 if any test of
BEFORE is missing from AFTER (a test that stopped running), 0 otherwise.
"""

from __future__ import annotations

import collections
import re
import sys

ADDRESS = re.compile(r"0x[0-9a-f]+")


def node_ids(listing: str) -> collections.Counter[str]:
    """The node ids of a ``-q`` collection listing, each without its file, counted."""
    ids: collections.Counter[str] = collections.Counter()
    for line in listing.splitlines():
        path, separator, test = line.partition("::")
        if separator and not line.startswith(" ") and path.endswith(".py"):
            test = ADDRESS.sub("0x?", test)
            ids[test] += 1
    return ids


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = (node_ids(open(name, encoding="utf-8").read()) for name in argv)
    missing, added = before - after, after - before
    print(f"before: {sum(before.values())} tests, after: {sum(after.values())} tests")
    for title, ids in (("only before (stopped running)", missing), ("only after (new)", added)):
        if ids:
            print(f"{title}: {sum(ids.values())}")
            for name in sorted(ids):
                print(f"  {name}" + (f" (x{ids[name]})" if ids[name] > 1 else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
