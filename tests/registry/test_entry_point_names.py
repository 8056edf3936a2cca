"""The start-up path reads names with string methods, not ``re`` (imported for nothing else):
each reader gives what the regular expression it replaced gives, on names built to hit its
edges."""

from __future__ import annotations

import itertools
import re

import pytest
from argonishche import _entry_points, _phc
from argonishche.exceptions import InvalidHashError

# The regular expressions the readers replaced: the oracle.
DIST_INFO = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+?)(-py[^-]*)?\.(dist|egg)-info$")
DECIMAL = re.compile(r"0|[1-9][0-9]*")
BASE64 = re.compile(r"[A-Za-z0-9+/]+")


def strings(alphabet: str, longest: int) -> list[str]:
    return ["".join(chars) for n in range(longest + 1)
            for chars in itertools.product(alphabet, repeat=n)]


def metadata_names() -> list[str]:
    stems = ["a", "a-1", "a-1-py3", "a-1-py3.11", "a-1-cp3", "a-1-py", "-1", "a-", "a--1",
             "a-1-py3-x", "a.b_c-1.0rc1", "a-1.py", "A_B-2", "a-1-", "a-1--py3", ""]
    return [stem + suffix for stem in stems
            for suffix in (".dist-info", ".egg-info", ".info", "-info", ".dist-infox", "")]


@pytest.mark.parametrize("entry", metadata_names())
def test_a_metadata_directory_name_is_read_as_the_regular_expression_read_it(entry):
    match = DIST_INFO.match(entry)
    expected = (None if match is None
                else (match["name"].replace("_", "-"), match["version"]))
    found = _entry_points._distribution(entry)
    assert (found if found is None else tuple(found)) == expected


def test_a_name_is_normalized_as_pep_503_says():
    for name in strings("a-_.", 4):
        assert _entry_points._normalize(name) == re.sub(r"[-_.]+", "-", name).lower()
    assert _entry_points._normalize("Zope.Interface__X") == "zope-interface-x"


def test_phc_numbers_and_base64_are_read_as_the_regular_expressions_read_them():
    for digits in strings("019a٣", 3):  # "٣": an Arabic-Indic digit, which isdigit() accepts
        accepted = DECIMAL.fullmatch(digits) is not None
        try:
            _phc._parse_uint32("m", digits)
        except InvalidHashError:
            assert not accepted, digits
        else:
            assert accepted, digits
    for text in strings("Az09+/=_-", 2)[1:]:  # the empty text has its own message
        accepted = BASE64.fullmatch(text) is not None
        try:
            _phc._b64decode("salt", text)
        except InvalidHashError as error:  # the alphabet's message, or a later rule's
            assert ("must be unpadded standard base64" in str(error)) == (not accepted), text
        else:
            assert accepted, text
