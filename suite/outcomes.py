"""Outcome value types shared by every spec (DESIGN.md, idea 3).

A check records *findings*; the keyword of the requirement a finding names decides what the
finding means: a MUST finding fails the check, a SHOULD finding makes it a warning, a MAY
finding is informational. A target that cannot be reached is an *error*, never a failure.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any


class Keyword(enum.StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    MAY = "MAY"

    @property
    def strength(self) -> int:
        return {"MUST": 3, "SHOULD": 2, "MAY": 1}[self.value]


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # a MUST was violated
    WARNING = "warning"  # a SHOULD was violated
    INFO = "info"  # a MAY is missing
    SKIPPED = "skipped"  # not claimed, not offered, or not testable on this target
    ERROR = "error"  # the target could not be exercised (unreachable, timeout, garbage)
    XFAILED = "xfailed"  # failed as the baseline expects
    STALE = "stale"  # listed in the baseline but now passes


#: The outcome a violated requirement of each keyword gives.
OUTCOME_FOR_KEYWORD = {
    Keyword.MUST: Outcome.FAILED,
    Keyword.SHOULD: Outcome.WARNING,
    Keyword.MAY: Outcome.INFO,
}

LEVELS = ("L0", "L1", "L2", "L3")


def level_index(level: str) -> int:
    return LEVELS.index(level)


def _short(value: Any, limit: int = 2000) -> str | None:
    """Render what was sent or received for a human, bounded so a 50 MB reply stays readable."""
    if value is None:
        return None
    if isinstance(value, bytes):
        text = value.decode("utf-8", "replace")
    elif isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters)"
    return text


class SentRequest(dict):
    """A request object as a driver sent it, knowing how: the request line ("POST /ump/remember",
    "tools/call remember") and the identity it carried ("token of owner-a", "no token"). It is the
    dict it was (checks compare it as before); a finding renders it with that line first, so a
    vendor reads what was sent, where and as whom from the message alone."""

    def __init__(self, body: dict, request: str, identity: str | None = None):
        super().__init__(body)
        self.request = request
        self.identity = identity

    def head(self) -> str:
        return self.request + (f" ({self.identity})" if self.identity else "")


@dataclass(frozen=True)
class Finding:
    """One observed violation of one requirement."""

    requirement: str
    message: str
    sent: str | None = None
    received: str | None = None
    where: str | None = None  # file and JSON pointer, record id, route …

    @classmethod
    def make(cls, requirement: str, message: str, *, sent: Any = None, received: Any = None,
             where: str | None = None) -> Finding:
        text = _short(sent)
        if isinstance(sent, SentRequest):
            text = sent.head() + "\n" + (text or "")
        return cls(requirement, message, text, _short(received), where)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class CheckResult:
    """What one check item concluded, before the baseline is applied."""

    outcome: Outcome
    findings: tuple[Finding, ...] = ()
    reason: str | None = None  # why skipped or errored
    duration: float = 0.0
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class TargetError(Exception):
    """The target could not be exercised: unreachable, crashed, timed out, or spoke garbage."""


class Inconclusive(Exception):
    """The check ran but the target gave it nothing to judge (e.g. a server's own extraction made
    no event from the text the check needs): informational, never a pass or a failure."""


class NotApplicable(Exception):
    """The check cannot run on this target (a binding or feature it does not offer)."""


class Waived(NotApplicable):
    """The target took an option its spec gives to leave out what the check judges (UMP §4.1: "a
    minimal server can skip the explicit [capabilities] tool"): the check's requirements bind
    nothing there. Skipped, never a pass; they do not keep a level from being reached, and the
    report lists them with the reason."""


class NotExercised(NotApplicable):
    """The subject holds nothing the requirement is about (an export in which no record declares
    consent.redact cannot break the redaction rule). Skipped like NotApplicable, never a pass; a
    claim about the subject itself (a file's "L0 (emitted file)") may be reached without it, and
    says so."""
