"""Runs one check on one subject and returns a `CheckResult` value; never raises."""

from __future__ import annotations

import dataclasses
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from memconform.suite.outcomes import (
    OUTCOME_FOR_KEYWORD, CheckResult, Finding, Inconclusive, NotApplicable, NotExercised, Outcome, TargetError,
    Waived,
)
from memconform.suite.registry import Case, Check


@dataclass
class CheckContext:
    """What a check function sees: the client for the subject, the case, and a findings list."""

    check: Check
    version: str
    binding: str
    client: Any
    case: Case | None = None
    findings: list[Finding] = field(default_factory=list)
    seed: int = 0
    seed_used: bool = False
    #: what a generated-input check spent (a state machine's sequences, steps, seconds), for the report
    effort: dict[str, Any] | None = None
    #: Which requirements bind the target under its profile (OMF: memd or a plain consumer); a
    #: finding on one that does not is left out: that profile promised nothing there.
    applies: Any = None
    #: The requirements the check observed, when it says so (a state machine: suite/stateful.py);
    #: None: every requirement it names. Only these are credited; the others are not judged.
    judged: set[str] | None = None
    #: why part of what the check names was not judged (in the result's reason)
    notes: list[str] = field(default_factory=list)

    def credit_only_observed(self) -> None:
        """Opt in to being credited only with what `observed` names (a check naming many
        requirements whose subject may not hold what some are about: absence is never evidence).
        Call it first, before any path that may return."""
        if self.judged is None:
            self.judged = set()

    def observed(self, *requirements: str) -> None:
        """Credit `requirements`: the check compared what the target showed with what they ask."""
        if self.judged is None:
            raise AssertionError(f"check {self.check.id} calls observed() without credit_only_observed() first")
        self.judged.update(requirements)

    def unobserved(self) -> list[str]:
        """The requirements the check names but has not observed (a finding is an observation);
        empty for a check credited with all it names."""
        if self.judged is None:
            return []
        seen = self.judged | {f.requirement for f in self.findings}
        return [r.id for r in self.check.requirements_for(self.version, self.case) if r.id not in seen]

    def note(self, text: str) -> None:
        """Say why part of what the check names was not judged: an operation the target does not
        offer, a document holding nothing a requirement is about (for a file: not exercised)."""
        if text not in self.notes:
            self.notes.append(text)

    def property_seed(self) -> int:
        """The run's seed (`--seed`) for a property-based check's generator. Asking for it records
        it in the result, so `memconform replay` can re-run that exact case."""
        self.seed_used = True
        return self.seed

    @property
    def payload(self) -> Any:
        return self.case.payload if self.case else None

    def violation(self, requirement: str, message: str, *, sent: Any = None, received: Any = None,
                  where: str | None = None) -> None:
        allowed = self.case.requirements if self.case and self.case.requirements else self.check.requirements
        if requirement not in allowed:
            # A check may only report against the requirements it names; anything else is a
            # bug in the suite, not in the target.
            raise AssertionError(f"check {self.check.id} reported {requirement}, which it does not name")
        if self.applies is not None and not self.applies(requirement):
            return
        self.findings.append(Finding.make(requirement, message, sent=sent, received=received, where=where))

    def require(self, condition: bool, requirement: str, message: str, **details: Any) -> bool:
        if not condition:
            self.violation(requirement, message, **details)
        return bool(condition)


def observe(ctx: CheckContext, *requirements: str) -> None:
    """`ctx.observed` from a judging helper several checks share: only the requirements the running
    check (or its case) names count, and a check that did not opt in, credited with all it names
    anyway, is left as it is."""
    if ctx.judged is None:
        return
    named = ctx.case.requirements if ctx.case and ctx.case.requirements else ctx.check.requirements
    ctx.observed(*(r for r in requirements if r in named))


def outcome_of(check: Check, version: str, case: Case | None, findings: list[Finding]) -> Outcome:
    if not findings:
        return Outcome.PASSED
    keywords = {r.id: r.keyword for r in check.requirements_for(version, case)}
    strongest = max((keywords[f.requirement] for f in findings if f.requirement in keywords),
                    key=lambda k: k.strength, default=None)
    if strongest is None:  # findings only against requirements outside this version
        return Outcome.PASSED
    return OUTCOME_FOR_KEYWORD[strongest]


_REFERENCE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference_impl", "")


def _who_crashed(exc: BaseException) -> str:
    """Which code raised: a target served in process (the reference implementation) runs inside the
    check's own call, so its crash is not the check's."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    if last and os.path.abspath(last).startswith(_REFERENCE_DIR):
        return "the reference implementation, served in process, crashed (its bug; not the check's, and no verdict):"
    return "the check itself crashed:"


def run_check(check: Check, version: str, binding: str, client_factory, case: Case | None,
              seed: int = 0, applies: Any = None) -> CheckResult:
    started = time.perf_counter()
    ctx: CheckContext | None = None

    def result(outcome: Outcome, reason: str | None = None) -> CheckResult:
        extra: dict[str, Any] = {"effort": ctx.effort} if ctx and ctx.effort else {}
        missed = ctx.unobserved() if ctx else []
        if missed:
            extra["not_judged"] = missed
        return CheckResult(outcome, reason=reason, findings=tuple(ctx.findings) if ctx else (),
                           duration=time.perf_counter() - started,
                           seed=ctx.seed if ctx and ctx.seed_used else None, extra=extra)

    try:
        client = client_factory()
        # a live UMP client makes its target's owners the ones the checks act as (suite/ump/owners.py)
        getattr(client, "activate", lambda: None)()
        ctx = CheckContext(check=check, version=version, binding=binding, client=client, case=case, seed=seed,
                           applies=applies)
        check.func(ctx)
    except NotApplicable as exc:
        if ctx is not None and ctx.findings:
            # it found something before it had to stop: the findings stand, and only what it
            # observed up to there is credited
            if ctx.judged is None:
                ctx.judged = set()
            ctx.note(f"stopped early: {exc}")
            return result(outcome_of(check, version, case, ctx.findings), f"stopped early: {exc}")
        if isinstance(exc, NotExercised):
            return CheckResult(Outcome.SKIPPED, reason=str(exc), duration=time.perf_counter() - started,
                               extra={"not_exercised": True})
        if isinstance(exc, Waived):
            return CheckResult(Outcome.SKIPPED, reason=str(exc), duration=time.perf_counter() - started,
                               extra={"waived": True})
        return CheckResult(Outcome.SKIPPED, reason=str(exc), duration=time.perf_counter() - started)
    except Inconclusive as exc:
        return result(Outcome.INFO, f"inconclusive: {exc}")
    except TargetError as exc:
        # suite/breaker.py counts failures to get an answer, not answers outside the protocol
        return dataclasses.replace(result(Outcome.ERROR, f"target error: {exc}"),
                                   extra={"transport_failure": getattr(exc, "transport_failure", True)})
    except Exception as exc:  # a bug in the suite itself: an error, never a verdict on the target
        return CheckResult(Outcome.ERROR, reason=_who_crashed(exc) + "\n" + traceback.format_exc(),
                           duration=time.perf_counter() - started)
    missed = ctx.unobserved()
    if missed and not ctx.findings:
        named = [r.id for r in check.requirements_for(version, case)]
        if len(missed) == len(named):  # nothing observed: no verdict at all
            skipped = result(Outcome.SKIPPED, f"judged none of its requirements: {_why_not_judged(ctx)}")
            return dataclasses.replace(skipped, extra={**skipped.extra, "not_exercised": True})
        return result(Outcome.PASSED, f"judged {len(named) - len(missed)} of its {len(named)} requirements; not "
                                      f"judged: {', '.join(missed)} ({_why_not_judged(ctx)})")
    # what the check said while judging everything it names (a reading the server took that changed
    # what it could compare, a case it could not judge) stays with the result, for the vendor
    return result(outcome_of(check, version, case, ctx.findings), "; ".join(ctx.notes) if ctx.notes else None)


def _why_not_judged(ctx: CheckContext) -> str:
    return "; ".join(ctx.notes) if ctx.notes else "nothing the check saw was about them"
