"""Extraction: from a text to Events (upp/03 `upp/ingest`; how is the server's business, upp/08 §6).

`Extractor` is the plug-in point (an LLM-backed extractor implements the same one method);
`RuleExtractor` is the reference's deterministic one. The service checks whatever an extractor
returns (labels in the ontology, confidence in 0..1, a known source_type) and drops the rest.

RuleExtractor understands a documented subset of user/v1, and nothing else. The text is cut into
sentences at `.`, `!`, `?`, `;` and line breaks, and a sentence into clauses at a comma or an
"and"/"but"/"so" that is followed by "I" or "my" ("My name is Alice and I live in Lima" is two
clauses; "I love hiking and chess" is one). A clause may open with a greeting or filler
("Hi,", "Hello", "Hey", "Well", "Also", "Oh", "Actually", "So", "And", "But", "Btw", "By the way").
Matching ignores case; "I'm" may be written "I am" and with a typographic apostrophe. Each
clause that matches one of these patterns (the whole clause) gives one event, confidence 0.9,
source_type user_stated, in text order:

| label | clause | value |
|---|---|---|
| who_name | "my name is N", "my name's N", "call me N", "I go by N", "I'm called N" — N is one to five words of letters (with ' . -) | "User's name is N" |
| where_home | "I live in P", "I'm living in P", "I moved to P", "I just/recently moved to P", "I'm based in P", "my home is in P", "home is P" | "User lives in P" |
| where_current_location | "I'm currently in P", "I'm now in P", "I'm in P right now", "I'm visiting P", "I'm currently/now visiting P" | "User is currently in P" |
| who_role | "I work as a/an R", "I'm a/an R by profession", "my job is R", "my job title is R", "my role is R", "my occupation is R", "my profession is R", "I work at E", "I work for E" (the employer: user/v1 files "works at Google" under who_role) | "User works as R" / "User works at E" |
| what_interests_hobbies | "I love X", "I like X", "I enjoy X", "I really love/like/enjoy X", "my hobby is X", "my hobbies are X", "I'm into X", "I'm interested in X", "I'm passionate about X" | "User loves X" / "User likes X" / "User enjoys X" / "User's hobbies: X" / "User is into X" / "User is interested in X" / "User is passionate about X" |
| who_languages | "I speak L", "I'm fluent in L", "my native language is L", "my mother tongue is L", "my first language is L" | "User speaks L" / "User is fluent in L" / "User's native language is L" |
| who_age | "I'm N years old", "I'm N" (N one to three digits), "I was born on D", "I was born in YYYY" | "User is N years old" / "User was born on D" / "User was born in YYYY" |

P, R, E, X, L and D are the rest of the clause (at least one letter, at most 120 characters).
Nothing else is extracted: a text with no such clause gives no event. Why these labels: user/v1
files "lives in Berlin" under where_home (where_current_location is where the user is at the
moment) and "works at Google" under who_role (it has no employer label).

Memory text is untrusted: it is only matched, never evaluated. Every pattern is anchored at the
clause start and has no nested or overlapping repetition, so matching is linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

__all__ = ["ExtractedEvent", "Extractor", "RuleExtractor", "CONFIDENCE"]

CONFIDENCE = 0.9
MAX_VALUE = 120


@dataclass(frozen=True)
class ExtractedEvent:
    """An Event before storage (upp/02 §1)."""

    value: str
    labels: tuple[str, ...]
    confidence: float
    source_type: str = "user_stated"
    valid_from: str | None = None
    valid_until: str | None = None


class Extractor(Protocol):
    def extract(self, text: str) -> list[ExtractedEvent]:
        """The events `text` states about its user (possibly none). May raise: the service
        answers -32004 Extraction Failed."""


# -- splitting -------------------------------------------------------------------------------------

_SENTENCES = re.compile(r"[.!?;\r\n]+")
#: A clause boundary: a comma, or and/but/so, each followed by "I" or "my" (a lookahead of
#: fixed words: no backtracking across the text).
_CLAUSES = re.compile(r"\s*,\s*(?=(?:i|my)\b)|\s*,?\s+(?:and|but|so)\s+(?=(?:i|my)\b)", re.IGNORECASE)
_FILLER = re.compile(r"(?:hi|hello|hey|well|also|oh|actually|so|and|but|btw|by the way)\b[,!:]?\s*", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def _clauses(text: str) -> list[str]:
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    out = []
    for sentence in _SENTENCES.split(text):
        # One space between words first: the boundary pattern then never rescans a long run
        # of whitespace (which would make splitting quadratic on hostile input).
        for clause in _CLAUSES.split(_SPACES.sub(" ", sentence)):
            clause = clause.strip(" ,:-")
            for _ in range(3):  # "Hi, well, ..." — a few fillers, not a loop over the text
                m = _FILLER.match(clause)
                if m is None or m.end() == 0:
                    break
                clause = clause[m.end():]
            if clause:
                out.append(clause)
    return out


# -- patterns -------------------------------------------------------------------------------------

_IM = r"i(?:'m| am)"
_NAME = r"(?P<v>[^\W\d_][\w'.-]*(?: [^\W\d_][\w'.-]*){0,4})"
_REST = r"(?P<v>.+)"

#: (pattern over a whole clause, label, value template with {v}). `.+` at the end of a
#: fullmatch-anchored pattern is matched greedily once: linear.
_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), label, template) for p, label, template in (
        (rf"(?:my name is|my name's|call me|i go by|{_IM} called) {_NAME}", "who_name", "User's name is {v}"),
        (rf"(?:i live in|{_IM} living in|i (?:just |recently )?moved to|{_IM} based in|my home is in|home is) {_REST}",
         "where_home", "User lives in {v}"),
        (rf"{_IM} (?:currently |now )?in (?P<v>.+) right now", "where_current_location", "User is currently in {v}"),
        (rf"{_IM} (?:currently |now )?(?:in|visiting) {_REST}", "where_current_location", "User is currently in {v}"),
        (rf"{_IM} (?P<v>an? .+) by profession", "who_role", "User works as {v}"),
        (rf"i work as {_REST}", "who_role", "User works as {v}"),
        (rf"my (?:job|job title|role|occupation|profession) is {_REST}", "who_role", "User works as {v}"),
        (rf"i work (?:at|for) {_REST}", "who_role", "User works at {v}"),
        (rf"i (?:really )?love {_REST}", "what_interests_hobbies", "User loves {v}"),
        (rf"i (?:really )?like {_REST}", "what_interests_hobbies", "User likes {v}"),
        (rf"i (?:really )?enjoy {_REST}", "what_interests_hobbies", "User enjoys {v}"),
        (rf"my (?:hobby is|hobbies are) {_REST}", "what_interests_hobbies", "User's hobbies: {v}"),
        (rf"{_IM} (?:really )?into {_REST}", "what_interests_hobbies", "User is into {v}"),
        (rf"{_IM} interested in {_REST}", "what_interests_hobbies", "User is interested in {v}"),
        (rf"{_IM} passionate about {_REST}", "what_interests_hobbies", "User is passionate about {v}"),
        (rf"i speak {_REST}", "who_languages", "User speaks {v}"),
        (rf"{_IM} fluent in {_REST}", "who_languages", "User is fluent in {v}"),
        (rf"my (?:native language|mother tongue|first language) is {_REST}", "who_languages",
         "User's native language is {v}"),
        (rf"{_IM} (?P<v>\d{{1,3}})(?: years old| years of age)?", "who_age", "User is {v} years old"),
        (rf"i was born on {_REST}", "who_age", "User was born on {v}"),
        (r"i was born in (?P<v>\d{4})", "who_age", "User was born in {v}"),
    ))

_LETTER = re.compile(r"[^\W\d_]")


class RuleExtractor:
    """The deterministic extractor of the module docstring."""

    def extract(self, text: str) -> list[ExtractedEvent]:
        events = []
        for clause in _clauses(text):
            event = self._match(clause)
            if event is not None:
                events.append(event)
        return events

    @staticmethod
    def _match(clause: str) -> ExtractedEvent | None:
        for pattern, label, template in _RULES:
            m = pattern.fullmatch(clause)
            if m is None:
                continue
            value = next(v for v in m.groups() if v is not None).strip()
            if label != "who_age" and (len(value) > MAX_VALUE or not _LETTER.search(value)):
                continue
            return ExtractedEvent(template.format(v=value), (label,), CONFIDENCE)
        return None
