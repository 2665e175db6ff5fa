"""Relevance for `upp/retrieve` and `upp/contextualize` (upp/03: "the server decides what
constitutes relevant").

The reference's reading, deterministic on purpose: an event's score is the number of distinct
query words found among the words of its value and of its labels' names and display names
("Where does Alice live?" finds where_* events by the word "where", "hobbies" finds
what_interests_hobbies). Words are runs of letters and digits, lower-cased, a plural "s"/"ies"
taken off; a few function words ("the", "is", "user", ...) never count. Higher scores first, ties (zero included) by
recency: newest first. Every candidate is returned, up to `limit`: the events nothing in the
query names come last rather than not at all, so a vague query still sees the profile.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

__all__ = ["words", "rank", "DEFAULT_LIMIT"]

DEFAULT_LIMIT = 50

_WORD = re.compile(r"[^\W_]+")
#: Words that say nothing about which fact is wanted. "user" is in every value the extractor
#: writes ("User lives in ..."), so it would tie everything.
STOPWORDS = frozenset("""
a an and are as at be by do does for from has have her his i in is it its me my of on or our she so
s tell than that the their them they this to us user was we which with you your
""".split())

T = TypeVar("T")


def _stem(word: str) -> str:
    """A plural's singular, crudely ("hobbies" → "hobby", "lives" → "live"): enough for a
    question and a stored fact to meet."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def rank(query: str, candidates: Sequence[T], *, text_of: Callable[[T], Iterable[str]],
         recency_of: Callable[[T], tuple], limit: int = DEFAULT_LIMIT) -> list[T]:
    """`candidates` ordered by score, then newest first (`recency_of` grows with recency).
    `text_of` gives the texts an event is known by (value, label names, display names)."""
    wanted = words(query)

    def score(item: T) -> int:
        known: set[str] = set()
        for text in text_of(item):
            known |= words(text.replace("_", " "))
        return len(wanted & known)

    scored = [(score(c), recency_of(c), i, c) for i, c in enumerate(candidates)]
    scored.sort(key=lambda s: (-s[0], _negate(s[1]), s[2]))
    return [c for *_, c in scored[:max(0, limit)]]


def _negate(key: tuple) -> tuple:
    return tuple(-k for k in key)
