"""The public UMP reference implementation's own conformance runner, as a named subset.

Its runner has 13 checks, HTTP only (REFERENCE-IMPLEMENTATION-NOTES.md, "Its own conformance
runner"); each is reproduced here with exactly the verdict rule the notes give, as
`ump/runner13/<name>`, and names the catalogue requirement(s) that rule bears on, so a vendor
sees where the two suites agree: a server that passes `ump/runner13/*` passes the public runner;
the full suite (`ump/l1/*`, `ump/l2/*`, `ump/l3/*`) asks more of the same requirements.

| runner check | verdict rule (the notes) | requirements |
|---|---|---|
| capabilities | 200, `ump` equals the version, exactly 5 kinds | http-route-capabilities, capabilities-version, capabilities-kinds |
| remember | 200, an id, `result: "created"` | http-route-remember, remember-returns-id, remember-reports-result |
| get | 200, body.text present | http-route-get, get-returns-record |
| recall | the new id is found and results carry `signals` | http-route-recall, recall-finds-remembered, recall-result-shape |
| revise | 200, `supersedes` holds the prior id | http-route-revise, revise-creates-successor |
| bitemporal | the prior has `valid_to` and a non-empty `superseded_by` | revise-sets-valid-to, revise-sets-superseded-by |
| forget | 200, tombstoned or erased | http-route-forget, forget-tombstones |
| validation | remember without body → 400 `invalid_record` | remember-invalid-record, http-error-status |
| discovery | the well-known document has `ump` and `conformance` | well-known-manifest |
| signed | the created record verifies (hash, Ed25519) | integrity-sign-on-write, integrity-content-hash, integrity-signature |
| feedback | `ok: true` | http-route-feedback (no route, or a success without `ok: true`), feedback-accepts-outcome (refused) |
| capability-tokens | recall without a token → 401 | cap-token-required (not refused), http-error-status (refused, other status) |
| subscribe | 200, `text/event-stream` | http-route-subscribe |

Where the runner's rule is narrower than our reading the rule is kept as the runner has it
(e.g. "exactly 5 kinds", `result: "created"` for a fresh record, `ok: true` literally, 401 by
status alone) — that is the point of the subset. Its exact statuses (200 for every success, 400,
401) are the runner's, not the text's: they are charged to `ump/runner-rules`, of the class
ump-reference-interop, so a server answering 201 or 422 loses no level; the route itself fails
only when the answer is no success at all. Preconditions (the record the later checks
need) come from the preceding runner step and skip with the reason when it failed, as the other
live checks do.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.ump import integrity as ump_integrity
from memconform.suite.ump.checks._live import (OWNER_A, did, marker, need, recalled_ids, refused_for_token,
                                                results_of, sample_record, shown_records)
from memconform.suite.ump.checks.l2 import _fail
from memconform.suite.ump.client import Auth, Reply

SPEC = "ump"
HTTP = ("http",)
KINDS = 5


def _created(ctx: CheckContext, label: str) -> tuple[str, str]:
    """(id, text) of a fresh record, as the runner's remember step makes it."""
    m = marker(label)
    text = f"{m} the runner's memory"
    reply = ctx.client.remember(sample_record(text=text))
    body = need(reply, "the runner's remember step")
    rid = body.get("id")
    if not isinstance(rid, str):
        raise NotApplicable(f"precondition failed: remember answered no id ({reply.describe()})")
    return rid, text


def _succeeded(ctx: CheckContext, reply: Reply, route: str, what: str) -> bool:
    """The runner's "→ 200": any success is the route answering (`route` fails only when there is
    none); a success other than 200 is the runner's narrower rule (ump/runner-rules)."""
    if reply.status is None or not 200 <= reply.status < 300:
        _fail(ctx, route, f"{what} did not succeed", reply)
        _unread(ctx, f"{what} did not succeed, so its answer was not read")
        return False
    ctx.observed("ump/runner-rules")
    if reply.status != 200:
        _fail(ctx, "ump/runner-rules", f"{what} answered HTTP {reply.status}; the public runner expects 200 exactly "
                                       "(the text fixes no success status)", reply)
    return True


def _unread(ctx: CheckContext, why: str) -> None:
    """The rest of the runner's rule was not applied: say why (what it names is then not judged)."""
    ctx.note(why)


@check("ump/runner13/capabilities", spec=SPEC, bindings=HTTP, title="runner: capabilities (200, ump, 5 kinds)",
       requirements=("ump/http-route-capabilities", "ump/capabilities-version", "ump/capabilities-kinds", "ump/runner-rules"))
def runner_capabilities(ctx: CheckContext) -> None:
    """Runner rule: GET /ump/capabilities → 200, `ump` equals the version, exactly 5 kinds. No
    success: the members are not judged."""
    ctx.credit_only_observed()
    reply = ctx.client.capabilities()
    if not _succeeded(ctx, reply, "ump/http-route-capabilities", "GET /ump/capabilities"):
        return
    ctx.observed("ump/http-route-capabilities", "ump/capabilities-version", "ump/capabilities-kinds")
    body = reply.body if isinstance(reply.body, dict) else {}
    if body.get("ump") != ctx.version:
        _fail(ctx, "ump/capabilities-version", f"capabilities.ump is {body.get('ump')!r}; the runner expects "
                                               f"{ctx.version!r}", reply)
    kinds = body.get("kinds")
    if not isinstance(kinds, list) or len(kinds) != KINDS:
        _fail(ctx, "ump/capabilities-kinds", f"capabilities.kinds is {kinds!r}; the runner expects exactly 5 kinds",
              reply)


@check("ump/runner13/remember", spec=SPEC, bindings=HTTP, title="runner: remember (200, id, created)",
       requirements=("ump/http-route-remember", "ump/remember-returns-id", "ump/remember-reports-result", "ump/runner-rules"))
def runner_remember(ctx: CheckContext) -> None:
    """Runner rule: POST /ump/remember of a fresh record → 200, an `id`, `result: "created"`. No
    success: the answer's members are not judged."""
    ctx.credit_only_observed()
    reply = ctx.client.remember(sample_record(text=f"{marker('r13')} the runner's memory"))
    if not _succeeded(ctx, reply, "ump/http-route-remember", "POST /ump/remember of a fresh record"):
        return
    ctx.observed("ump/http-route-remember", "ump/remember-returns-id", "ump/remember-reports-result")
    body = reply.body if isinstance(reply.body, dict) else {}
    if not isinstance(body.get("id"), str) or not body.get("id"):
        _fail(ctx, "ump/remember-returns-id", "remember answered no id", reply)
    if body.get("result") != "created":
        _fail(ctx, "ump/remember-reports-result", f"remember of a fresh record answered result {body.get('result')!r}; "
                                                  "the runner expects \"created\"", reply)


@check("ump/runner13/get", spec=SPEC, bindings=HTTP, title="runner: get (200, body.text)",
       requirements=("ump/http-route-get", "ump/get-returns-record", "ump/runner-rules"))
def runner_get(ctx: CheckContext) -> None:
    """Runner rule: GET /ump/memory/{id} of the created record → 200 with record.body.text. No
    success: the record is not judged."""
    ctx.credit_only_observed()
    rid, _ = _created(ctx, "r13g")
    reply = ctx.client.get(rid)
    if not _succeeded(ctx, reply, "ump/http-route-get", f"GET /ump/memory/{rid}"):
        return
    ctx.observed("ump/http-route-get", "ump/get-returns-record")
    rec = reply.body.get("record") if isinstance(reply.body, dict) else None
    body = rec.get("body") if isinstance(rec, dict) else None
    if not isinstance(body, dict) or "text" not in body:
        _fail(ctx, "ump/get-returns-record", f"GET /ump/memory/{rid} answered no record.body.text", reply)


@check("ump/runner13/recall", spec=SPEC, bindings=HTTP, title="runner: recall (finds the id, signals)",
       requirements=("ump/http-route-recall", "ump/recall-finds-remembered", "ump/recall-result-shape"))
def runner_recall(ctx: CheckContext) -> None:
    """Runner rule: POST /ump/recall for the created record's text → its id is among the results
    and the results carry `signals`. A failed recall: the results are not judged."""
    ctx.credit_only_observed()
    rid, text = _created(ctx, "r13r")
    reply = ctx.client.recall({"query": text, "scope": {"owner": did(OWNER_A)}})
    if not reply.ok:
        _fail(ctx, "ump/http-route-recall", "POST /ump/recall did not succeed", reply)
        return _unread(ctx, "POST /ump/recall did not succeed, so no results were read")
    ctx.observed("ump/http-route-recall", "ump/recall-finds-remembered", "ump/recall-result-shape")
    if rid not in recalled_ids(reply):
        _fail(ctx, "ump/recall-finds-remembered", f"recall for the created record's text did not return {rid}", reply)
    results = results_of(reply)
    if not results or not all(isinstance(r.get("signals"), dict) for r in results):
        _fail(ctx, "ump/recall-result-shape", "recall results do not all carry `signals`", reply)


def _revised(ctx: CheckContext) -> tuple[str, Reply]:
    rid, _ = _created(ctx, "r13v")
    reply = ctx.client.revise({"id": rid, "patch": {"body": {"text": f"{marker('r13v')} revised by the runner"}}})
    return rid, reply


@check("ump/runner13/revise", spec=SPEC, bindings=HTTP, title="runner: revise (200, supersedes the prior)",
       requirements=("ump/http-route-revise", "ump/revise-creates-successor", "ump/runner-rules"))
def runner_revise(ctx: CheckContext) -> None:
    """Runner rule: POST /ump/revise → 200 and `supersedes` holds the prior id. No success: the
    successor is not judged."""
    ctx.credit_only_observed()
    rid, reply = _revised(ctx)
    if not _succeeded(ctx, reply, "ump/http-route-revise", f"POST /ump/revise of {rid}"):
        return
    ctx.observed("ump/http-route-revise", "ump/revise-creates-successor")
    sup = reply.body.get("supersedes") if isinstance(reply.body, dict) else None
    if not isinstance(sup, list) or rid not in sup:
        _fail(ctx, "ump/revise-creates-successor", f"revise answered supersedes {sup!r}; the runner expects it to hold "
                                                   f"{rid}", reply)


@check("ump/runner13/bitemporal", spec=SPEC, bindings=HTTP, title="runner: bitemporal (prior valid_to, superseded_by)",
       requirements=("ump/revise-sets-valid-to", "ump/revise-sets-superseded-by"))
def runner_bitemporal(ctx: CheckContext) -> None:
    """Runner rule: after revise, the prior has `time.valid_to` and a non-empty `superseded_by`."""
    rid, reply = _revised(ctx)
    need(reply, "the runner's revise step")
    got = ctx.client.get(rid)
    body = need(got, "get of the prior")
    prior = body.get("record") if isinstance(body.get("record"), dict) else {}
    time = prior.get("time") if isinstance(prior.get("time"), dict) else {}
    if not time.get("valid_to"):
        _fail(ctx, "ump/revise-sets-valid-to", f"after revise the prior {rid} has no time.valid_to", got)
    if not prior.get("superseded_by"):
        _fail(ctx, "ump/revise-sets-superseded-by", f"after revise the prior {rid} has an empty superseded_by", got)


@check("ump/runner13/forget", spec=SPEC, bindings=HTTP, title="runner: forget (200, tombstoned or erased)",
       requirements=("ump/http-route-forget", "ump/forget-tombstones", "ump/runner-rules"))
def runner_forget(ctx: CheckContext) -> None:
    """Runner rule: POST /ump/forget → 200 with result tombstoned or erased. No success: the result
    is not judged."""
    ctx.credit_only_observed()
    rid, _ = _created(ctx, "r13f")
    reply = ctx.client.forget({"id": rid, "reason": "runner"})
    if not _succeeded(ctx, reply, "ump/http-route-forget", f"POST /ump/forget of {rid}"):
        return
    ctx.observed("ump/http-route-forget", "ump/forget-tombstones")
    result = reply.body.get("result") if isinstance(reply.body, dict) else None
    if result not in ("tombstoned", "erased"):
        _fail(ctx, "ump/forget-tombstones", f"forget answered result {result!r}; the runner expects tombstoned or "
                                            "erased", reply)


@check("ump/runner13/validation", spec=SPEC, bindings=HTTP, title="runner: validation (no body → 400 invalid_record)",
       requirements=("ump/remember-invalid-record", "ump/http-error-status", "ump/runner-rules"))
def runner_validation(ctx: CheckContext) -> None:
    """Runner rule: remember of a record without `body` → 400 `invalid_record`. Answered §3.3's own
    {result: "rejected"}: a refusal, but no error whose status could be judged."""
    ctx.credit_only_observed()
    rec = sample_record(text="x")
    del rec["body"]
    reply = ctx.client.remember(rec)
    ctx.observed("ump/remember-invalid-record")
    if reply.error_code is None and isinstance(reply.body, dict) and reply.body.get("result") == "rejected":
        # §3.3's own refusal: the runner's 400 invalid_record is its implementation's form, not the text's
        return _unread(ctx, "remember answered {result: \"rejected\"}, no error: there was no error status to judge")
    ctx.observed("ump/http-error-status")
    if reply.error_code == "invalid_record":
        ctx.observed("ump/runner-rules")  # the status of this refusal is the runner's rule
    if reply.error_code != "invalid_record":
        _fail(ctx, "ump/remember-invalid-record", "remember of a record without body did not answer invalid_record", reply)
    if reply.status is None or not 400 <= reply.status < 500:
        _fail(ctx, "ump/http-error-status", f"remember of a record without body answered HTTP {reply.status}; an "
                                            "invalid request is a 4xx", reply)
    elif reply.status != 400 and reply.error_code == "invalid_record":  # another refusal is judged above
        _fail(ctx, "ump/runner-rules", f"remember of a record without body answered invalid_record with HTTP "
                                       f"{reply.status}; the public runner expects 400 exactly (the text fixes no "
                                       "status)", reply)


@check("ump/runner13/discovery", spec=SPEC, bindings=HTTP, title="runner: discovery (well-known ump, conformance)",
       requirements=("ump/well-known-manifest", "ump/capabilities-open"))
def runner_discovery(ctx: CheckContext) -> None:
    """Runner rule: GET /.well-known/ump.json has `ump` and `conformance`, asked without a token as
    the runner does. Refused for want of a token: ump/capabilities-open (interop class), and the
    manifest is judged on the answer to owner-a's token."""
    ctx.credit_only_observed()
    reply = ctx.client.call_raw("GET", "/.well-known/ump.json", None, auth=Auth.anonymous())
    if refused_for_token(reply):
        ctx.observed("ump/capabilities-open")
        _fail(ctx, "ump/capabilities-open", "GET /.well-known/ump.json without a token was refused; the public "
                                            "implementation and its runner read it without auth (the notes, HTTP "
                                            "binding)", reply)
        reply = ctx.client.call_raw("GET", "/.well-known/ump.json", None, auth=Auth.as_owner("owner-a"))
    elif reply.status is not None and 200 <= reply.status < 300:
        ctx.observed("ump/capabilities-open")
    ctx.observed("ump/well-known-manifest")
    body = reply.body if isinstance(reply.body, dict) else {}
    if reply.status != 200 or "ump" not in body or "conformance" not in body:
        _fail(ctx, "ump/well-known-manifest", "GET /.well-known/ump.json did not answer a document with `ump` and "
                                              "`conformance`", reply)


@check("ump/runner13/signed", spec=SPEC, bindings=HTTP, title="runner: signed (the created record verifies)",
       requirements=("ump/integrity-sign-on-write", "ump/integrity-content-hash", "ump/integrity-signature"))
def runner_signed(ctx: CheckContext) -> None:
    """Runner rule: the created record verifies: integrity present, the recomputed hash equals
    content_hash, the Ed25519 signature verifies (the runner does not compare signer and owner).
    No integrity block: hash and signature are not judged."""
    ctx.credit_only_observed()
    rid, _ = _created(ctx, "r13s")
    got = ctx.client.get(rid)
    body = need(got, "get of the created record")
    rec: dict[str, Any] = body.get("record") if isinstance(body.get("record"), dict) else {}
    report = ump_integrity.verify(rec)
    if not report.present:
        _fail(ctx, "ump/integrity-sign-on-write", f"the created record {rid} carries no integrity", got)
        return _unread(ctx, f"the created record {rid} carries no integrity block to verify")
    ctx.observed("ump/integrity-sign-on-write", "ump/integrity-content-hash", "ump/integrity-signature")
    for p in report.problems:
        if p.requirement in ("ump/integrity-content-hash", "ump/integrity-signature"):
            _fail(ctx, p.requirement, f"the created record {rid}: {p.message}", got)


@check("ump/runner13/feedback", spec=SPEC, bindings=HTTP, title="runner: feedback (ok: true)",
       requirements=("ump/http-route-feedback", "ump/feedback-accepts-outcome"))
def runner_feedback(ctx: CheckContext) -> None:
    """Runner rule: POST /ump/feedback {id, outcome: followed} → `ok: true`. The route not served:
    whether the outcome is accepted is not judged."""
    ctx.credit_only_observed()
    rid, _ = _created(ctx, "r13b")
    reply = ctx.client.feedback({"id": rid, "outcome": "followed"})
    if reply.status not in (404, 405):
        ctx.observed("ump/feedback-accepts-outcome")
        if reply.ok:
            ctx.observed("ump/http-route-feedback")
    if reply.status in (404, 405):  # the record was just created: a 404/405 is the route missing
        _fail(ctx, "ump/http-route-feedback", "POST /ump/feedback is not served", reply)
        _unread(ctx, "POST /ump/feedback is not served, so whether it accepts the outcome was not seen")
    elif not reply.ok:
        _fail(ctx, "ump/feedback-accepts-outcome", f"feedback {{id: {rid}, outcome: followed}} was refused", reply)
    elif reply.body.get("ok") is not True:
        _fail(ctx, "ump/http-route-feedback", f"POST /ump/feedback {{id: {rid}, outcome: followed}} answered a success "
                                              "without `ok: true` (the public runner's rule; the text gives feedback no response shape)", reply)


@check("ump/runner13/capability-tokens", spec=SPEC, bindings=HTTP, title="runner: capability tokens (no token → 401)",
       requirements=("ump/cap-token-required", "ump/http-error-status", "ump/runner-rules"))
def runner_capability_tokens(ctx: CheckContext) -> None:
    """Runner rule: POST /ump/recall without a token → HTTP 401. Not refused as unauthorized →
    cap-token-required, unless served as an anonymous requester's (public records only: §2.2, the
    runner's narrower rule alone); refused as unauthorized but with another status → http-error-status. Not
    refused as unauthorized: no status of that code to judge."""
    ctx.credit_only_observed()
    reply = ctx.client.recall({"query": "anything"}, auth=Auth.anonymous())
    if reply.status == 401 or reply.error_code == "unauthorized":
        ctx.observed("ump/cap-token-required", "ump/http-error-status", "ump/runner-rules")
    if reply.status == 401:
        return
    public, private = shown_records(reply) if reply.ok else ([], [])
    if reply.ok and not private:
        # served as an anonymous requester's, public records only: §2.2's public is "anyone" (variant
        # anonymous-public-reads), so only the runner's narrower rule is broken. cap-token-required is
        # credited only where a public record came back: an empty answer shows no reading at all
        # (ump/l3/cap-token-required places one and judges it)
        ctx.observed("ump/runner-rules", *(("ump/cap-token-required",) if public else ()))
        _fail(ctx, "ump/runner-rules", f"recall without a token was served (HTTP {reply.status}, "
                                       f"{len(public)} public record(s), nothing else, as to an anonymous "
                                       "requester); the public runner expects 401 unauthorized", reply)
    elif reply.error_code != "unauthorized":
        ctx.observed("ump/cap-token-required")
        _fail(ctx, "ump/cap-token-required", f"recall without a token answered HTTP {reply.status} (error "
                                             f"{reply.error_code!r}); the runner expects 401 unauthorized", reply)
    elif reply.status is None or not 400 <= reply.status < 500:
        _fail(ctx, "ump/http-error-status", f"recall without a token was refused as unauthorized with HTTP "
                                            f"{reply.status}, not a 4xx", reply)
    else:
        _fail(ctx, "ump/runner-rules", f"recall without a token was refused as unauthorized with HTTP {reply.status}; "
                                       "the public runner expects 401 exactly", reply)


@check("ump/runner13/subscribe", spec=SPEC, bindings=HTTP, title="runner: subscribe (200, text/event-stream)",
       requirements=("ump/http-route-subscribe",))
def runner_subscribe(ctx: CheckContext) -> None:
    """Runner rule: GET /ump/subscribe?owner=<owner> → 200 with Content-Type text/event-stream. The
    runner names the owner it subscribes for; the public implementation answers 403
    forbidden_scope to a subscription that names none."""
    m = marker("r13e")
    owner = did(OWNER_A)
    outcome = ctx.client.subscribe(lambda: ctx.client.remember(sample_record(text=f"{m} streamed")),
                                   request={"scope": {"owner": owner}}, expect=0)  # status and type only
    mime = (outcome.content_type or "").split(";")[0].strip().lower()
    if outcome.status != 200 or mime != "text/event-stream":
        ctx.violation("ump/http-route-subscribe", f"GET /ump/subscribe?owner={owner} answered status {outcome.status} "
                                                  f"with Content-Type {outcome.content_type!r}; the runner expects 200 "
                                                  "text/event-stream", sent=f"GET /ump/subscribe?owner={owner}",
                      received=outcome.raw)
