"""Small print shared by the messages and reports: a count with its noun agreeing ("1 lane",
"2 lanes", never "lane(s)"), and a state with its reason said once ("blocked by ...", not
"blocked: blocked by ...")."""

from __future__ import annotations

from collections.abc import Sized


def noun(count: int | Sized, singular: str, plural: str | None = None) -> str:
    """*singular* for a count (or a collection's length) of one, else *plural* (default: an
    added "s")."""
    number = count if isinstance(count, int) else len(count)
    return singular if number == 1 else plural or f"{singular}s"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """*count* (thousands separated) and its noun: "1 hash", "0 hashes", "2,000 lanes"."""
    return f"{count:,} {noun(count, singular, plural)}"


def stated(state: str, reason: str) -> str:
    """*state* and *reason* in one phrase: the reason alone when it already starts with the
    state's words ("blocked by ...", "failed to load: ...", "not loaded: ..."), else
    "state: reason", or the state alone without a reason."""
    if not reason:
        return state
    words = state.replace("-", " ")
    if reason.startswith((f"{words} ", f"{words}:")):
        return reason
    return f"{state}: {reason}"
