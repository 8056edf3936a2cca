"""The docs never state a kernel ABI number other than the header's.

The number lives in one place, ``ARGONISHCHE_KERNEL_ABI`` in
core/argonishche/include/argonishche_kernel.h; the docs point there (or at
``argonishche.KERNEL_ABI``) instead of repeating it.  A doc that states a number anyway
("kernel ABI (now 2)") must state the header's, or this fails: the README said "now 2" for a
whole ABI after the bump to 3.
"""

from __future__ import annotations

import re
from pathlib import Path

import argonishche
import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "core" / "argonishche" / "include" / "argonishche_kernel.h"
#: Every page of the docs (README.md, and the site under docs/, the plugin guide among them).
DOCS = ("README.md", *sorted(str(page.relative_to(ROOT)) for page in (ROOT / "docs").rglob("*.md")))

#: "ABI" (or "..._ABI"), then within a few words a number: "kernel ABI (now 2)", "ABI 3",
#: "`ARGONISHCHE_KERNEL_ABI` (now 3:", "KERNEL_ABI = 3", "ABI version 3".  Not "abi3" (the
#: CPython stable ABI's wheel tag), which is lower case and has no word break.
STATED = re.compile(r"(?:\bABI|_ABI)\b`*\s*[(:=]?\s*(?:(?:now|is|version|number)\s*)?[:=]?\s*"
                    r"(\d+)\b")


def header_abi() -> int:
    match = re.search(r"^#define ARGONISHCHE_KERNEL_ABI (\d+)\s*$", HEADER.read_text(), re.M)
    assert match, f"no ARGONISHCHE_KERNEL_ABI definition in {HEADER}"
    return int(match.group(1))


def stated_numbers(text: str) -> list[int]:
    return [int(number) for number in STATED.findall(text)]


def test_the_finder_sees_every_way_of_stating_a_number():
    # So that the check below cannot pass by missing a statement.
    assert stated_numbers("another kernel ABI (now 2), or") == [2]
    assert stated_numbers("bumps `ARGONISHCHE_KERNEL_ABI` (now 3: BLAKE2b's") == [3]
    assert stated_numbers("KERNEL_ABI = 4; the ABI is 5, ABI version 6, ABI 7") == [4, 5, 6, 7]
    assert stated_numbers("one cp311-abi3 wheel; the stable ABI; the ABI rules") == []


def test_the_plugin_guide_is_among_the_docs_checked():
    assert "docs/plugins.md" in DOCS


def test_the_header_is_what_the_package_reports():
    assert header_abi() == argonishche.KERNEL_ABI


@pytest.mark.parametrize("doc", DOCS)
def test_no_doc_states_another_kernel_abi(doc):
    text = (ROOT / doc).read_text()
    wrong = [number for number in stated_numbers(text) if number != header_abi()]
    assert not wrong, (f"{doc} states kernel ABI {wrong}, the header says {header_abi()}: "
                       f"point at ARGONISHCHE_KERNEL_ABI in argonishche_kernel.h instead")
