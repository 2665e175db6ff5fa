"""UMP attacks (issue 14): what one hostile token, or one owner's hostile record, must not do to a
server and to the other owners it serves.

* Absurd token times: owner-a's tokens, signed right, whose `exp` or `nbf` is no time (a boolean,
  null, a string no calendar reads), a time in 1970 or before, or a number past any calendar
  (10**400, 1e308). None may grant anything (ump/cap-token-absurd-time, MUST; the numbers past the
  calendar ump/cap-token-time-beyond-calendar, SHOULD: §5.2 fixes no range), and each refusal is
  unauthorized, never a crash (ump/cap-token-absurd-time-answered, SHOULD).
* A redact that would strip what a record cannot lack: owner-a remembers a public record whose
  consent.redact names `id`, `$..*`, `scope.owner` …; owner-b then gets, recalls and rehydrates it.
  Refused at remember, or served valid (ump/consent-redact-keeps-record, SHOULD, derived); never a crash
  (ump/consent-redact-hostile-answered, SHOULD).

Why the crash findings are SHOULDs: the text states no MUST for a failure a server did not foresee;
the catalogue entries give the security reason (docs/catalogue-ump.md, "Attacks (issue 14)").
"""

from __future__ import annotations

from typing import Any

from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.ump import owners as ump_owners
from memconform.suite.ump.checks._live import (LIVE, OWNER_A, did, marker, results_of, sample_record, served_problems,
                                               which_refusal)
from memconform.suite.ump.checks.l2 import AS_A, AS_B, _fail, _not_stored, _record_of
from memconform.suite.ump.client import Auth, Reply

SPEC = "ump"
ERROR_CODES = ("unauthorized", "forbidden_scope", "not_found", "invalid_record", "consent_violation",
               "signature_invalid", "unsupported", "rate_limited")

R_ABSURD = "ump/cap-token-absurd-time"
R_CALENDAR = "ump/cap-token-time-beyond-calendar"
R_TOKEN_ANSWERED = "ump/cap-token-absurd-time-answered"
R_KEEPS = "ump/consent-redact-keeps-record"
R_REJECT_POLICY = "ump/remember-reject-policy"
R_REDACT_ANSWERED = "ump/consent-redact-hostile-answered"

#: (what the token carries, claim, value, the requirement its acceptance breaks). Each is refused in
#: both token encodings: no ISO reader reads it, and a NumericDate reader finds no number or a past one.
ABSURD_TIMES: tuple[tuple[str, str, Any, str], ...] = (
    ("exp true (a boolean)", "exp", True, R_ABSURD),
    ("exp null", "exp", None, R_ABSURD),
    ("nbf true (a boolean, 1 to a reader that takes it for a number)", "nbf", True, R_ABSURD),
    ("exp \"+10000-01-01T00:00:00Z\" (a year RFC 3339 cannot write)", "exp", "+10000-01-01T00:00:00Z", R_ABSURD),
    ("nbf \"2026-02-30T00:00:00Z\" (a day no calendar has)", "nbf", "2026-02-30T00:00:00Z", R_ABSURD),
    ("exp \"9999999999\" (digits in a string)", "exp", "9999999999", R_ABSURD),
    ("exp 1.5 (1970 as NumericDate)", "exp", 1.5, R_ABSURD),
    ("exp -1 (before 1970)", "exp", -1, R_ABSURD),
    ("exp 10**400 (no float holds it)", "exp", 10 ** 400, R_CALENDAR),
    ("exp -10**400", "exp", -(10 ** 400), R_CALENDAR),
    ("exp 1e308", "exp", 1e308, R_CALENDAR),
    ("nbf 10**400", "nbf", 10 ** 400, R_CALENDAR),
)


def _crashed(reply: Reply) -> bool:
    """An answer a server did not foresee: a 5xx, or an error whose code is no §3.7 code."""
    return (reply.status or 0) >= 500 or (not reply.ok and reply.error_code not in ERROR_CODES)


def _granted(name: str, reply: Reply) -> bool:
    return reply.ok and not (name == "remember" and reply.body.get("result") == "rejected")


def _absurd_token(claim: str, value: Any) -> str:
    """owner-a's token, otherwise valid for an hour, with `claim` set to `value`."""
    try:
        return ump_owners.active().token(OWNER_A, ttl=3600, extra={claim: value})
    except ump_owners.CannotSign as exc:
        raise NotApplicable(f"cannot make the tokens this check needs (owner-a's with a chosen exp/nbf): {exc}") \
            from None


def _absurd_tokens_refused(ctx: CheckContext, requirement: str) -> None:
    """For each absurd time of `requirement`: recall, get (of owner-a's private record) and remember
    with owner-a's token carrying it. None may succeed (`requirement`) and the remember must store
    nothing; every refusal should be unauthorized, never a 5xx or an internal error
    (ump/cap-token-absurd-time-answered)."""
    ctx.credit_only_observed()  # the answered rule is judged only on refusals
    m = marker("abs")
    text = f"{m} owner-a's private record"
    reply = ctx.client.remember(sample_record(text=text), auth=AS_A)
    rid = reply.body.get("id") if reply.ok and isinstance(reply.body, dict) else None
    if not isinstance(rid, str):
        raise NotApplicable(f"precondition failed: owner-a's remember did not succeed ({reply.describe()})")
    for label, claim, value, bound in ABSURD_TIMES:
        if bound != requirement:
            continue
        auth = Auth.bearer(_absurd_token(claim, value))
        m2 = marker("abs")
        calls = (
            ("recall", ctx.client.recall({"query": m, "scope": {"owner": did(OWNER_A)}, "limit": 5}, auth=auth)),
            ("get", ctx.client.get(rid, auth=auth)),
            ("remember", ctx.client.remember(sample_record(text=f"{m2} written with an absurd token"), auth=auth)),
        )
        for name, answer in calls:
            what = f"{name} as owner-a with a token whose {label}"
            ctx.observed(requirement)
            if not _granted(name, answer):
                ctx.observed(R_TOKEN_ANSWERED)
            if _granted(name, answer):
                _fail(ctx, requirement, f"{what} succeeded: a token whose time bound names no moment (or a past "
                                        "one) grants nothing, it is refused with unauthorized", answer)
            else:
                which_refusal(answer, f"{what} (expected unauthorized)")
                if _crashed(answer):
                    _fail(ctx, R_TOKEN_ANSWERED, f"{what} was answered with a failure the server did not foresee "
                                                 "(a 5xx or a code outside §3.7) instead of unauthorized; times are "
                                                 "read before anything is granted, so any caller can set this off",
                          answer)
                elif answer.error_code != "unauthorized":
                    _fail(ctx, R_TOKEN_ANSWERED, f"{what} was refused with {answer.error_code!r}, not unauthorized "
                                                 "(the §3.7 code for a token that does not authorise)", answer)
        leak = _not_stored(ctx, m2, None, auth=AS_A)
        if leak:
            _fail(ctx, requirement, f"remember as owner-a with a token whose {label} was stored: {leak}")


@check("ump/l3/absurd-token-times", spec=SPEC, requirements=(R_ABSURD, R_TOKEN_ANSWERED), bindings=LIVE,
       title="tokens whose exp/nbf is no time (booleans, null, impossible dates) or a past one grant nothing and "
             "are refused with unauthorized, never a 5xx")
def absurd_token_times(ctx: CheckContext) -> None:
    """exp true, exp null, nbf true, exp "+10000-01-01T00:00:00Z", nbf "2026-02-30T00:00:00Z",
    exp "9999999999", exp 1.5, exp -1: see `_absurd_tokens_refused`."""
    _absurd_tokens_refused(ctx, R_ABSURD)


@check("ump/l3/token-times-beyond-calendar", spec=SPEC, requirements=(R_CALENDAR, R_TOKEN_ANSWERED),
       bindings=LIVE, title="tokens whose exp/nbf is a number past any calendar (10**400, 1e308) grant nothing and "
                            "are refused with unauthorized, never a 5xx")
def token_times_beyond_calendar(ctx: CheckContext) -> None:
    """exp 10**400, exp -10**400, exp 1e308, nbf 10**400: see `_absurd_tokens_refused`. Apart from
    the check above because its bound is a SHOULD (§5.2 fixes no range), so that it shows as its own
    warning beside a failure there."""
    _absurd_tokens_refused(ctx, R_CALENDAR)


# -- a redact that would strip what a record cannot lack --------------------------------------------

#: Redact paths naming REQUIRED members (§2), provenance (REQUIRED at L2+, §2.6), or everything.
HOSTILE_REDACTS = ("id", "$..*", "[*]", "ump", "kind", "scope.owner", "time", "provenance")


def _served_problem(rec: Any, rid: str, version: str) -> str | None:
    problems = served_problems(rec, version)
    if isinstance(rec, dict) and not isinstance(rec.get("provenance"), dict):
        problems.append("/provenance: missing (REQUIRED at L2 and above, §2.6)")
    if not problems and rec.get("id") != rid:
        problems.append(f"/id: {rec.get('id')!r}, not the id {rid} remember answered")
    return "; ".join(problems[:4]) or None


@check("ump/l2/redact-required-members", spec=SPEC, requirements=(R_KEEPS, R_REDACT_ANSWERED, R_REJECT_POLICY),
       bindings=LIVE,
       title="a consent.redact naming id, $..*, scope.owner … is refused at remember or served to other owners "
             "as a valid record; never a 5xx")
def redact_required_members(ctx: CheckContext) -> None:
    """Per hostile path: owner-a remembers a public record with consent.redact [path]. Refused (a
    §3.7 error or result rejected): nothing may be stored. Stored: owner-b's get of it and owner-b's
    recall finding it serve a valid record with that id (ump/consent-redact-keeps-record), and
    owner-b's rehydrate (by query and by id, where offered) answers. No answer along the way may be
    a 5xx or an internal error (ump/consent-redact-hostile-answered). The record rule is judged
    only where a refusal was checked for a stored copy or owner-b was served the record."""
    ctx.credit_only_observed()
    rehydrates = "rehydrate" in ctx.client.offered()
    judged = []  # paths whose outcome was seen: refused at remember, or the record served to owner-b
    for path in HOSTILE_REDACTS:
        m = marker("red")
        rec = sample_record(text=f"{m} a public record of owner-a", visibility="public",
                            consent={"redact": [path]})
        made = ctx.client.remember(rec, auth=AS_A)
        what = f"remember as owner-a of a public record with consent.redact [{path!r}]"
        ctx.observed(R_REDACT_ANSWERED)
        if _crashed(made):
            _fail(ctx, R_REDACT_ANSWERED, f"{what} was answered with a failure the server did not foresee (a 5xx "
                                          "or a code outside §3.7); refuse such a consent with consent_violation "
                                          "(§3.3) or store it and keep what a record cannot lack", made)
        rid = made.body.get("id") if _granted("remember", made) else None
        if not isinstance(rid, str):
            leak = _not_stored(ctx, m, None, auth=AS_A)
            if leak:
                _fail(ctx, R_REJECT_POLICY, f"{what} was refused, yet stored: {leak}; a store must not keep (and "
                                            "later serve) what it refused", made)
            judged.append(path)
            ctx.observed(R_KEEPS, R_REJECT_POLICY)
            continue
        got = ctx.client.get(rid, auth=AS_B)
        if _crashed(got):
            _fail(ctx, R_REDACT_ANSWERED, f"owner-b's get of {rid} (owner-a's public record, redact [{path!r}]) was "
                                          "answered with a failure the server did not foresee: one owner's record "
                                          "must not break another owner's reads", got)
        served = _record_of(got)
        if served is not None:
            judged.append(path)
            ctx.observed(R_KEEPS)
        problem = _served_problem(served, rid, ctx.version) if served is not None else None
        if problem:
            _fail(ctx, R_KEEPS, f"owner-b's get of {rid} (owner-a's public record, redact [{path!r}]) served an "
                                f"invalid record ({problem}); refuse the consent at remember or keep the members a "
                                "record cannot lack", got)
        found = ctx.client.recall({"query": m, "limit": 10}, auth=AS_B)
        if _crashed(found):
            _fail(ctx, R_REDACT_ANSWERED, f"owner-b's recall for {m!r} (meeting owner-a's public record with redact "
                                          f"[{path!r}]) was answered with a failure the server did not foresee", found)
        for result in results_of(found):
            item = result.get("record")
            if not isinstance(item, dict) or item.get("id") in (rid, None):  # no id: it lost the one it had
                ctx.observed(R_KEEPS)
                problem = _served_problem(item, rid, ctx.version)
                if problem:
                    _fail(ctx, R_KEEPS, f"owner-b's recall for {m!r} served owner-a's record (redact [{path!r}]) "
                                        f"invalid ({problem})", found)
        if rehydrates:
            for request in ({"query": m, "limit": 10}, {"ids": [rid]}):
                reh = ctx.client.rehydrate(request, auth=AS_B)
                if reh.error_code == "unsupported" or (reh.status in (404, 405) and not reh.ok):
                    # no rehydration helper (no binding of the text names one): nothing to answer
                    # (round 17: a plain 404 here was warned as an unforeseen failure)
                    rehydrates = False
                    break
                if _crashed(reh):
                    _fail(ctx, R_REDACT_ANSWERED, f"owner-b's rehydrate {request} (meeting owner-a's public record "
                                                  f"with redact [{path!r}]) was answered with a failure the server "
                                                  "did not foresee: one owner's record denies every other owner "
                                                  "rehydration", reh)
    if not judged:
        ctx.note("owner-b was served none of the accepted records, so whether they stay valid was not seen")
    if not judged and not ctx.findings:
        raise Inconclusive(f"every record with a hostile consent.redact ({', '.join(HOSTILE_REDACTS)}) was accepted, "
                           "but owner-b's get served none of them, so what crosses the boundary was never seen")
