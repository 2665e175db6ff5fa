"""Attacks (issue 14): what a hostile client sends on purpose, and what a server must (or should)
do with it. Each probe is bounded for the harness too: the transports read at most 16 MiB of an
answer (targets/http_session.MAX_BODY, one stdio line likewise), and a finding carries excerpts,
never a whole hostile answer.

* upp/jsonrpc-id-unreadable (MUST): ids that are no JSON-RPC id a server can echo — numbers no
  double holds (1e400, -1e400), booleans, arrays, objects — alone and inside a batch: -32600 with
  id null, never -32603 or silence, and the server keeps serving.
* upp/batch-bounded (SHOULD, security): a batch of 1,000 cheap requests is refused or answered
  within a modest multiple of its size.
* upp/body-bounded (SHOULD, security): one request of 2 MiB (a long unknown param of upp/info) is
  answered (a refusal or its result), never a crash, and the server goes on.
* upp/jsonrpc-unpaired-surrogate (MUST, derived): an ingest whose text holds `\\ud800`, and a
  get_events whose entity_key holds `\\udc00`, each get a JSON-RPC response that is UTF-8 JSON, the
  server answers on, and a user whose text was taken is listed in UTF-8 JSON too.

Path confinement of export and import (06 §7) is judged in l3.py (upp/l3/export-confined-paths,
upp/l3/import-confined-paths), beside the operations.
"""

from __future__ import annotations

import json
import math
from typing import Any

from memconform.suite.outcomes import TargetError
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.upp import jsonrpc
from memconform.suite.upp.checks._common import (
    INTERNAL_ERROR, INVALID_REQUEST, LIVE, METHOD_NOT_FOUND, aliases, answer_of, compact, server_error_status,
    spec_ref, served,
)
from memconform.suite.upp.client import RpcExchange

#: (the id's JSON text, what it is). Numbers beyond a double read as infinities in most JSON parsers.
BAD_IDS = (
    ("1e400", "a number above the largest double"),
    ("-1e400", "a number below the lowest double"),
    ("true", "a boolean"),
    ("[1]", "an array"),
    ('{"n": 1}', "an object"),
)
AFTER_ID = "mcf-after-bad-id"

#: The batch probe: enough requests to show amplification, few enough for the harness to send.
BATCH_SIZE = 1000
#: An answer larger than this multiple of the request (and than FLOOR bytes) amplifies.
AMPLIFICATION = 64
FLOOR = 1 << 20
#: The body probe: over the 1 MiB a server commonly bounds a body with, small for the harness.
BODY_SIZE = 2 << 20


def _request(id_text: str, method: str = "upp/info") -> str:
    return f'{{"jsonrpc": "2.0", "method": "{method}", "params": {{}}, "id": {id_text}}}'


def _violation(ctx: CheckContext, rid: str, what: str, sent: str, received: str | None, expected: str,
               status: int | None = None, *, unread: str | None = None) -> None:
    """A finding with excerpts of what went both ways (a hostile answer may be megabytes); `unread`
    says why there is no answer to show."""
    got = (f"no answer read ({unread})" if unread else "nothing") if received is None else compact(received, 400)
    code = f" (HTTP {status})" if status is not None else ""
    ctx.violation(rid, f"{what.rstrip('.')}. Sent over {ctx.binding}: {compact(sent, 300)}. Came back{code}: {got}. "
                       f"Expected: {expected.rstrip('.')}. The spec: {spec_ref(rid)}",
                  sent=sent[:2000], received=None if received is None else received[:2000])


def _echoes(response_id: Any, id_text: str) -> bool:
    """The response carries the very number sent (a server that holds 1e400 exactly)."""
    sent = json.loads(id_text)
    return isinstance(sent, float) and isinstance(response_id, float) and math.isinf(sent) \
        and math.isinf(response_id) and (sent > 0) == (response_id > 0)


def _id_problem(answer: Any, id_text: str) -> str | None:
    """Why `answer` is not what a request with the id `id_text` must get, or None."""
    if answer is None:
        return "no answer"
    if answer is jsonrpc.NOT_JSON:
        return "an answer that is not JSON"
    if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0":
        return "an answer that is not one JSON-RPC response object"
    error = answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if code == INTERNAL_ERROR:
        return "-32603 Internal error: the server failed on a request the client got wrong"
    if _echoes(answer.get("id"), id_text):
        return None  # read exactly and echoed: the id was a number this server can hold
    if code != INVALID_REQUEST:
        return f"error code {code}" if error is not None else "a result, not -32600"
    if answer.get("id") is not None:
        return f"-32600 with \"id\": {compact(answer.get('id'), 60)}, not null (the id could not be read)"
    return None


def _batch_problem(answer: Any, id_text: str) -> tuple[str | None, str | None]:
    """The batch [bad id, upp/info with AFTER_ID]: the bad member gets -32600 with id null; a server
    without batches answers the whole with one -32600 (upp/jsonrpc-batch warns). The problem with the
    bad member's answer, and a note on what this rule does not judge: whether the well-formed request
    beside it was answered is upp/jsonrpc-batch's business (one response per request in a batch, a
    SHOULD, judged by upp/wire/batch), not this rule's (red team round 11: a batch that stops at its
    first error was charged here as a MUST)."""
    if isinstance(answer, dict):
        return _id_problem(answer, id_text), None
    if not isinstance(answer, list):
        return _id_problem(answer, id_text) or "not an array of responses", None
    rest = [r for r in answer if not (isinstance(r, dict) and r.get("id") == AFTER_ID)]
    unanswered = None
    if len(rest) == len(answer):
        unanswered = (f"no response for the well-formed request with \"id\": \"{AFTER_ID}\" beside the bad id "
                      f"{id_text}: one response per request in a batch is upp/jsonrpc-batch's (upp/wire/batch), "
                      "not judged here")
    if len(rest) > 1:
        return f"{len(rest)} responses besides the one for \"{AFTER_ID}\", not one", unanswered
    return _id_problem(rest[0] if rest else None, id_text), unanswered


def _send(ctx: CheckContext, text: str) -> tuple[RpcExchange | None, str | None]:
    try:
        return ctx.client.send_raw(text), None
    except TargetError as exc:
        return None, str(exc)


@check("upp/attacks/id-unreadable", spec="upp", requirements=("upp/jsonrpc-id-unreadable",), bindings=LIVE,
       title="ids no server can echo (1e400, -1e400, booleans, arrays, objects) get -32600, and the server goes on")
def id_unreadable(ctx: CheckContext) -> None:
    """upp/info with each id of BAD_IDS, alone and inside a batch beside a well-formed upp/info:
    each must get -32600 with `"id": null` (or, for a number, an answer echoing it exactly), never
    -32603 Internal error, no answer, or an answer that is not JSON; after each, upp/info with a
    plain id must still be answered."""
    expected = ("error -32600 Invalid Request with \"id\": null (JSON-RPC 2.0 §5: when the id cannot be detected "
                "it MUST be null), the server answering on afterwards")
    for id_text, what in BAD_IDS:
        for text, judge, how in (
                (_request(id_text), _id_problem, "alone"),
                (f"[{_request(id_text)}, {_request(json.dumps(AFTER_ID))}]", _batch_problem, "in a batch")):
            ex, broke = _send(ctx, text)
            if ex is None:
                _violation(ctx, "upp/jsonrpc-id-unreadable", f"upp/info with an id that is {what} ({id_text}), "
                           f"{how}, got no answer the harness could read", text, None, expected, unread=broke)
            else:
                problem = judge(answer_of(ex), id_text)  # the JSON-RPC answer, whatever HTTP status carries it
                if isinstance(problem, tuple):
                    problem, unjudged = problem
                    if unjudged is not None:
                        ctx.note(unjudged)
                # an id echoed as Infinity reads as the number sent in Python, but is no JSON (round 16)
                unjson = jsonrpc.non_finite(ex.wire_problems)
                if unjson:
                    problem = f"an answer that is not JSON: {unjson[0]}"
                if problem is not None:
                    _violation(ctx, "upp/jsonrpc-id-unreadable", f"upp/info with an id that is {what} ({id_text}), "
                               f"{how}: {problem}", text, ex.received_text, expected, ex.http_status)
            if not _answers_after(ctx, "upp/jsonrpc-id-unreadable", f"upp/info with the id {id_text} ({how})",
                                  text, expected):
                return  # nothing after this can be judged


def _answers_after(ctx: CheckContext, rid: str, what: str, sent: str, expected: str) -> bool:
    """A plain upp/info must still get a JSON-RPC response after `what`: whether it did."""
    try:
        reply = ctx.client.call("upp/info", {})
    except TargetError as exc:
        broke: str | None = str(exc)
    else:
        broke = None if reply.response is not None else f"upp/info -> {reply.describe()}"
    if broke is not None:
        _violation(ctx, rid, f"after {what}, the server no longer answers: {broke}", sent, None, expected)
    return broke is None


def _server_failed(ex: RpcExchange) -> str | None:
    """Why the answer shows the server failed on the message (-32603, an HTTP 5xx), or None."""
    answer = answer_of(ex)
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict) and error.get("code") == INTERNAL_ERROR:
        return "-32603 Internal error: the server failed on it"
    refused = isinstance(error, dict) and isinstance(error.get("code"), int) or isinstance(answer, list)
    return None if refused else server_error_status(ex)  # a JSON-RPC error other than -32603 is an answer


@check("upp/attacks/batch-bounded", spec="upp", requirements=("upp/batch-bounded",), bindings=LIVE,
       title="a batch of 1,000 cheap requests is refused or answered within a bounded size (SHOULD)")
def batch_bounded(ctx: CheckContext) -> None:
    """One batch of BATCH_SIZE upp/get_labels (upp/info when get_labels is not served; through the
    target's own name for it), about 60 KB: the answer should be one refusal (-32600, or an
    implementation code of -32000..-32099) or stay within AMPLIFICATION times the request (at least
    FLOOR bytes). The harness reads at most 16 MiB of it; more is a finding, never a crash of the
    run. Afterwards upp/info must still be answered."""
    op = "upp/get_labels" if served(ctx, "upp/get_labels") else "upp/info"
    method = aliases(ctx).get(op, op)
    text = "[" + ",".join(json.dumps({"jsonrpc": "2.0", "method": method, "params": {}, "id": i})
                          for i in range(1, BATCH_SIZE + 1)) + "]"
    bound = max(AMPLIFICATION * len(text.encode("utf-8")), FLOOR)
    rid = "upp/batch-bounded"
    expected = (f"one error object refusing the batch (-32600, or an implementation code of -32000..-32099), or an "
                f"answer of at most {bound} bytes ({AMPLIFICATION} times the request): one message must not cost "
                "the server, or a client reading it, hundreds of times its size")
    what = f"a batch of {BATCH_SIZE} {method} requests ({len(text)} bytes)"
    ex, broke = _send(ctx, text)
    if ex is None:
        _violation(ctx, rid, f"{what} got no answer the harness could read: larger than the 16 MiB it reads (so past "
                   f"the {bound}-byte bound too), too slow, or none", text, None, expected, unread=broke)
    else:
        size = len((ex.received_text or "").encode("utf-8"))
        failed = _server_failed(ex)
        if failed is not None:
            _violation(ctx, rid, f"{what} got {failed}", text, ex.received_text, expected, ex.http_status)
        elif size > bound:
            _violation(ctx, rid, f"{what} got an answer of {size} bytes, {size / max(len(text), 1):.0f} times the "
                       f"request", text, ex.received_text, expected, ex.http_status)
    _answers_after(ctx, rid, what, text, expected)


@check("upp/attacks/body-bounded", spec="upp", requirements=("upp/body-bounded",), bindings=LIVE,
       title="a 2 MiB request is answered (refused or served), never a crash, and the server goes on (SHOULD)")
def body_bounded(ctx: CheckContext) -> None:
    """upp/info whose params carry one unknown member of BODY_SIZE bytes (unknown params are ignored,
    upp/unknown-params-ignored): any JSON-RPC response will do — a refusal (-32600, -32602, an
    implementation code of -32000..-32099; over HTTP with 413 too) or upp/info's result — but not
    -32603 Internal error, a 5xx, no answer or one that is not JSON; afterwards upp/info must still
    be answered."""
    method = aliases(ctx).get("upp/info", "upp/info")
    text = json.dumps({"jsonrpc": "2.0", "method": method, "params": {"mcf_padding": "x" * BODY_SIZE},
                       "id": "mcf-large-body"})
    rid = "upp/body-bounded"
    expected = ("a JSON-RPC response: the request refused (-32600, or an implementation code of -32000..-32099; "
                "over HTTP 413 with the error object is fine) or answered; never a failure of the server, which "
                "answers on afterwards")
    what = f"{method} with a {len(text)}-byte body"
    ex, broke = _send(ctx, text)
    if ex is None:
        _violation(ctx, rid, f"{what} got no answer the harness could read", text, None, expected, unread=broke)
    else:
        answer = answer_of(ex)
        failed = _server_failed(ex)
        if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0":
            failed = "no JSON-RPC response object" if failed is None else failed
        if failed is not None:
            _violation(ctx, rid, f"{what} got {failed}", text, ex.received_text, expected, ex.http_status)
    _answers_after(ctx, rid, what, text, expected)


#: The unpaired surrogates: a high one in an ingest's text (stored where the server takes it), a low
#: one in an entity_key. Written as escapes: the message itself is ASCII, so UTF-8 JSON by the grammar.
SURROGATE_TEXT = "My name is \\ud800 Ada Lovelace and I love hiking."
SURROGATE_KEY = "mcf-surrogate-\\udc00"


@check("upp/attacks/unpaired-surrogate", spec="upp", requirements=("upp/jsonrpc-unpaired-surrogate",),
       bindings=LIVE, title="strings holding an unpaired surrogate escape get a UTF-8 JSON answer, and the server goes on")
def unpaired_surrogate(ctx: CheckContext) -> None:
    """upp/ingest for a fresh user whose text holds `\\ud800`, then upp/get_events for an entity_key
    holding `\\udc00`: each must get a JSON-RPC response (an error refusing it, or a result) that is
    UTF-8 JSON, and upp/info must still be answered after each. Where the ingest was taken,
    upp/get_events for that user must answer UTF-8 JSON as well (the text, if stored, escaped or
    replaced: never written as a raw surrogate)."""
    from memconform.suite.upp.checks._common import fresh_entity, observe, require_offered

    # an error answer of a method the server does not serve shows nothing about the string (nothing passes
    # on an empty server): judged where upp/ingest and upp/get_events are offered
    ctx.credit_only_observed()
    for op in ("upp/ingest", "upp/get_events"):
        require_offered(ctx, op)
    rid = "upp/jsonrpc-unpaired-surrogate"
    expected = ("a JSON-RPC response in UTF-8 JSON (refusing the string, -32700/-32600/-32602 or an implementation "
                "code, or serving it with the surrogate escaped or replaced), the server answering on afterwards")
    entity = fresh_entity("surrogate")
    ingest, get_events = (aliases(ctx).get(op, op) for op in ("upp/ingest", "upp/get_events"))
    probes = [(f'{{"jsonrpc": "2.0", "method": "{ingest}", "params": {{"entity_key": "{entity}", '
               f'"text": "{SURROGATE_TEXT}"}}, "id": "mcf-surrogate-ingest"}}', f"{ingest} of a text holding \\ud800"),
              (f'{{"jsonrpc": "2.0", "method": "{get_events}", "params": {{"entity_key": "{SURROGATE_KEY}"}}, '
               f'"id": "mcf-surrogate-key"}}', f"{get_events} for an entity_key holding \\udc00")]
    taken = False
    for text, what in probes:
        ex, broke = _send(ctx, text)
        if ex is None:
            observe(ctx, rid)
            _violation(ctx, rid, f"{what} got no answer the harness could read", text, None, expected, unread=broke)
        else:
            problem = _unreadable(ex)
            if problem is not None:
                _violation(ctx, rid, f"{what}: {problem}", text, ex.received_text, expected, ex.http_status)
            answer = answer_of(ex)
            error = answer.get("error") if isinstance(answer, dict) else None
            if not (isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND):
                observe(ctx, rid)  # an answer (or none) to a method the server serves
            taken = taken or (text is probes[0][0] and isinstance(answer, dict) and "result" in answer)
        if not _answers_after(ctx, rid, what, text, expected):
            return
    if taken:
        listing = json.dumps({"jsonrpc": "2.0", "method": get_events, "params": {"entity_key": entity},
                              "id": "mcf-surrogate-listing"})
        ex, broke = _send(ctx, listing)
        what = f"{get_events} for the user whose text holding \\ud800 was ingested"
        if ex is None:
            _violation(ctx, rid, f"{what} got no answer the harness could read", listing, None, expected, unread=broke)
        elif (problem := _unreadable(ex)) is not None:
            _violation(ctx, rid, f"{what}: {problem}", listing, ex.received_text, expected, ex.http_status)
        _answers_after(ctx, rid, what, listing, expected)


def _unreadable(ex: RpcExchange) -> str | None:
    """Why the answer is no UTF-8 JSON-RPC response (its bytes, its JSON, a 5xx without one), or None."""
    if ex.received_text is None:
        return "no answer: " + ("; ".join(p.message for p in ex.wire_problems) or "nothing came back")
    unjson = [p.message for p in ex.wire_problems if p.requirement in (jsonrpc.UTF8_JSON, jsonrpc.PARSE_ERROR)]
    if unjson:
        return f"an answer that is not UTF-8 JSON: {unjson[0]}"
    # a right JSON-RPC answer stands whatever HTTP status carries it (variant upp-http-status-by-code)
    answer = answer_of(ex)
    if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0":
        return server_error_status(ex) or "no JSON-RPC response object"
    return None
