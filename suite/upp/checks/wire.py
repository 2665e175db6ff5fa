"""The JSON-RPC 2.0 wire rules of UPP (upp/05; docs/live-upp.md, "Wire rules"): one check per
wire requirement, reported apart from UPP semantics.

Two sources of evidence, both judged by `memconform.suite.upp.jsonrpc`:

* ordinary exchanges (a sample of calls every server answers: info, a call for an unknown method,
  a call with wrong params, a call with a string id), judged on every rule that holds for any
  response. The drivers put what they saw in `exchange.wire_problems` (only they see the raw
  stdio lines, so framing problems come from there); the checks also judge the received text
  themselves, so a driver that files nothing still gets a verdict on the text.
* deliberately provoked exchanges (a message that is not JSON, an invalid request, an empty
  batch, a batch, a notification, an unknown method), each judged with the `expect_*` rule for
  it. Raw messages never contain a newline, so they stay one line over stdio.
"""

from __future__ import annotations

import json
import time
from typing import Any

from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.upp import jsonrpc
from memconform.suite.upp.checks._common import (
    LIVE, answer_of, client_state, compact, fail, fail_exchange, fold, fresh_entity, require_offered, served,
    server_error_status, still_answers, wire_problems,
)
from memconform.suite.upp.checks._placing import client_timeout
from memconform.suite.upp.client import RpcExchange

HTTP = ("http",)
STDIO = ("stdio",)
UNKNOWN_METHOD = "upp/mcf_no_such_method"


# -- the sample of ordinary exchanges ------------------------------------------------------------

def _sample(ctx: CheckContext) -> list[RpcExchange]:
    """Ordinary exchanges, made once per client: what every server answers somehow."""
    state = client_state(ctx.client)
    if "wire_sample" not in state:
        client = ctx.client
        replies = [
            client.call("upp/info", {}),
            client.call("upp/info", {}, id="mcf-string-id"),
            client.call("upp/info", {}, id=424242),
            client.call(UNKNOWN_METHOD, {}),
            client.call("upp/retrieve", {"entity_key": fresh_entity("wire"), "query": "José's café in Zürich, 東京"}),
            # Text the server extracts from comes back in the events: non-ASCII on the way out.
            client.call("upp/ingest", {"entity_key": fresh_entity("wire"),
                                       "text": "My name is José Núñez. I live in Zürich. I love crème brûlée."}),
            client.call("upp/retrieve", {"entity_key": 17, "query": ["not", "a", "string"]}),
        ]
        # every other operation once, for a user holding events: a server may frame (or log around)
        # one operation's answer alone (round 16: an export pretty-printed over 12 lines, a log line
        # on stdout before upp/get_labels' answer)
        who = fresh_entity("wire")
        replies += [client.call("upp/ingest", {"entity_key": who, "text": "My name is Ada Lovelace. I love chess."}),
                    client.call("upp/get_events", {"entity_key": who}),
                    client.call("upp/get_labels", {}),
                    client.call("upp/export_events", {"entity_key": who}),
                    client.call("upp/get_tasks", {"task_ids": ["mcf-no-such-task"]})]
        state["wire_sample"] = [r.exchange for r in replies]
    return state["wire_sample"]


def _problems(ctx: CheckContext, exchanges: list[RpcExchange], rid: str) -> list[tuple[RpcExchange, str]]:
    """The `rid` problems of `exchanges`: the driver's, then the judge's reading of the received
    text (duplicates dropped)."""
    http = ctx.binding == "http"
    out: list[tuple[RpcExchange, str]] = []
    for ex in exchanges:
        seen: set[str] = set()
        for req, message in wire_problems(ex):
            if req == rid and message not in seen:
                seen.add(message)
                out.append((ex, message))
        if ex.received_text is not None:
            for p in jsonrpc.judge_exchange(ex.sent_text, ex.received_text, content_type=ex.content_type, http=http):
                if p.requirement == rid and p.message not in seen:
                    seen.add(p.message)
                    out.append((ex, p.message))
    return out


def _charge(ctx: CheckContext, rid: str, found: list[tuple[RpcExchange, str]], expected: str) -> None:
    """One finding per exchange with problems (the first few exchanges)."""
    by_exchange: dict[int, tuple[RpcExchange, list[str]]] = {}
    for ex, message in found:
        by_exchange.setdefault(id(ex), (ex, []))[1].append(message)
    for ex, messages in list(by_exchange.values())[:4]:
        fail_exchange(ctx, rid, "; ".join(messages[:4]), ex, expected)


def _sample_rule(rid: str, expected: str):
    def judge(ctx: CheckContext) -> None:
        _charge(ctx, rid, _problems(ctx, _sample(ctx), rid), expected)
    judge.__doc__ = (f"The sample exchanges (upp/info with number and string ids, an unknown method, upp/retrieve "
                     f"with non-ASCII text and with wrong params, upp/ingest of non-ASCII text) are judged on {rid}: {expected}.")
    return judge


# =============================================================================================
# rules that hold for every response
# =============================================================================================

check("upp/wire/jsonrpc-version", spec="upp", requirements=("upp/jsonrpc-version",), bindings=LIVE,
      title="every response carries \"jsonrpc\": \"2.0\"")(
    _sample_rule("upp/jsonrpc-version", "a response object with \"jsonrpc\": \"2.0\""))

check("upp/wire/result-xor-error", spec="upp", requirements=("upp/jsonrpc-result-xor-error",), bindings=LIVE,
      title="every response has exactly one of result and error")(
    _sample_rule("upp/jsonrpc-result-xor-error", "exactly one of `result` and `error`"))

check("upp/wire/error-object", spec="upp", requirements=("upp/jsonrpc-error-object",), bindings=LIVE,
      title="every error is an object with an integer code and a string message")(
    _sample_rule("upp/jsonrpc-error-object", "`error`: {\"code\": <integer>, \"message\": <string>, \"data\"?: any}"))

check("upp/wire/utf8-json", spec="upp", requirements=("upp/jsonrpc-utf8-json",), bindings=LIVE,
      title="every message the server sends is UTF-8 JSON")(
    _sample_rule("upp/jsonrpc-utf8-json", "one JSON text, UTF-8 encoded (no byte order mark)"))

check("upp/wire/http-content-type", spec="upp", requirements=("upp/http-content-type",), bindings=HTTP,
      title="over HTTP, responses are application/json")(
    _sample_rule("upp/http-content-type", "Content-Type: application/json on every response with a body"))

check("upp/wire/stdio-line-framing", spec="upp", requirements=("upp/stdio-line-framing",), bindings=STDIO,
      title="over stdio, each response is one JSON text on one line")(
    _sample_rule("upp/stdio-line-framing", "each response one JSON text on one \\n-terminated line"))

@check("upp/wire/id-echo", spec="upp", requirements=("upp/jsonrpc-id-echo",), bindings=LIVE,
       title="a response carries its request's id, with the same type")
def id_echo(ctx: CheckContext) -> None:
    """Requests with a number id, a string id, a string that looks like a number ("7") and a
    fractional number: each response's id must equal the request's in value and JSON type; the
    sample's exchanges are judged too."""
    exchanges = list(_sample(ctx))
    for rid_value in (7, "mcf-id-echo", "7", 2.5, 0):
        reply = ctx.client.call("upp/info", {}, id=rid_value)
        exchanges.append(reply.exchange)
        got = reply.exchange.received
        if isinstance(got, dict) and "id" in got and not jsonrpc.same_id(got["id"], rid_value):
            # every probe is judged and every failing one reported, not only the first
            fail(ctx, "upp/jsonrpc-id-echo", f"the request had \"id\": {json.dumps(rid_value)}, the response "
                 f"\"id\": {json.dumps(got['id'])}", reply, f"\"id\": {json.dumps(rid_value)} (same value and type)")
            exchanges.pop()  # judged just now: not charged twice below
    _charge(ctx, "upp/jsonrpc-id-echo", _problems(ctx, exchanges, "upp/jsonrpc-id-echo"),
            "the request's id, same value and type")


# =============================================================================================
# provoked rules
# =============================================================================================

#: Texts that are not JSON (one line each: no raw newline).
NOT_JSON = (
    '{"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": 1',
    "upp/info please",
    '{"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": 1,}',
    "{'jsonrpc': '2.0', 'method': 'upp/info', 'id': 1}",
)


def _judge_provoked(ctx: CheckContext, rid: str, exchange: RpcExchange, problems: list[jsonrpc.WireProblem],
                    expected: str) -> bool:
    mine = [p.message for p in problems if p.requirement == rid]
    status = server_error_status(exchange)
    if mine and status is not None:
        mine.insert(0, status)
    if mine:
        fail_exchange(ctx, rid, "; ".join(mine), exchange, expected)
    return not mine


@check("upp/wire/parse-error", spec="upp", requirements=("upp/jsonrpc-parse-error",), bindings=LIVE,
       title="a message that is not JSON gets -32700 with id null")
def parse_error(ctx: CheckContext) -> None:
    """Four texts that are not JSON (truncated, plain words, a trailing comma, single quotes):
    each must get one error response with code -32700 and `"id": null`."""
    for text in NOT_JSON:  # each judged: every failing text is reported
        ex = ctx.client.send_raw(text)
        # the driver's own finding first: the process ended on the line (then no more are sent)
        ended = [p for p in ex.wire_problems if p.requirement == jsonrpc.PARSE_ERROR and ex.received_text is None]
        _judge_provoked(ctx, "upp/jsonrpc-parse-error", ex, ended or jsonrpc.expect_parse_error(answer_of(ex)),
                        "{\"jsonrpc\": \"2.0\", \"error\": {\"code\": -32700, …}, \"id\": null}")
        if ended:
            return


#: JSON values that are not request objects, with why.
INVALID_REQUESTS = (
    ('{"jsonrpc": "2.0", "method": 1, "params": {}, "id": 11}', "method is not a string"),
    ('{"jsonrpc": "1.0", "method": "upp/info", "params": {}, "id": 12}', "jsonrpc is not \"2.0\""),
    ('{"method": "upp/info", "params": {}, "id": 13}', "no jsonrpc member"),
    ('{"jsonrpc": "2.0", "params": {}, "id": 14}', "no method"),
    ('{"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": {"a": 1}}', "an id that is an object"),
    ("1", "a number"),
    ('"upp/info"', "a string"),
    ("null", "null"),
)


@check("upp/wire/invalid-request", spec="upp", requirements=("upp/jsonrpc-invalid-request",), bindings=LIVE,
       title="a JSON value that is not a request gets -32600")
def invalid_request(ctx: CheckContext) -> None:
    """Eight JSON values that are not valid request objects (a non-string method, jsonrpc 1.0,
    no jsonrpc, no method, an object id, a number, a string, null): each gets -32600 with `id:
    null`, or with its id when one can be read."""
    for text, why in INVALID_REQUESTS:  # each judged: every failing value is reported
        ex = ctx.client.send_raw(text)
        _judge_provoked(ctx, "upp/jsonrpc-invalid-request", ex, jsonrpc.expect_invalid_request(answer_of(ex), text),
                        f"error -32600 Invalid Request ({why})")


@check("upp/wire/method-not-found", spec="upp", requirements=("upp/jsonrpc-method-not-found",), bindings=LIVE,
       title="an unknown method gets -32601")
def method_not_found(ctx: CheckContext) -> None:
    """`upp/mcf_no_such_method` and `mcf.nothing` (no upp/ prefix), with ids 21 and "m-22": each
    gets -32601 with its id."""
    for method, rid_value in ((UNKNOWN_METHOD, 21), ("mcf.nothing", "m-22")):
        reply = ctx.client.call(method, {}, id=rid_value)
        problems = jsonrpc.expect_method_not_found(answer_of(reply.exchange), rid_value)
        if problems:
            fail(ctx, "upp/jsonrpc-method-not-found", "; ".join(p.message for p in problems), reply,
                 f"error -32601 Method Not Found with \"id\": {json.dumps(rid_value)}")


@check("upp/wire/notification-no-reply", spec="upp", requirements=("upp/jsonrpc-notification-no-reply",),
       bindings=LIVE, title="a notification gets no response")
def notification_no_reply(ctx: CheckContext) -> None:
    """Notifications (no id) for upp/info, for an unknown method, and for upp/retrieve with wrong
    params: none may be answered, not even with an error. Silence counts only from a server seen
    to answer: an upp/info request on the same binding before the notifications and after each
    must get its response. The line runs where JSON-RPC 2.0 §4.1 draws it: a notification has no
    "id" member, so an upp/info request with `"id": null` is a call and must get a response (its id
    null; a -32600 for a server reading 05 §2's number-or-string id strictly is a response too).
    That probe is made over HTTP only: over stdio answers are paired with requests by id, and a
    response with "id": null cannot be told from the answer to an unreadable message."""
    still_answers(ctx, "before any notification")
    if ctx.binding == "http":
        _judge_null_id(ctx)
    for method, params in (("upp/info", {}), (UNKNOWN_METHOD, {}),
                           ("upp/retrieve", {"entity_key": 5, "query": None})):
        ex = ctx.client.notify(method, params)
        still_answers(ctx, f"right after the notification {method}")
        problems = jsonrpc.expect_no_reply(ex.received_text)
        problems += [p for p in _notification_problems(ex)]
        if problems:
            fail_exchange(ctx, "upp/jsonrpc-notification-no-reply", "; ".join(dict.fromkeys(p.message for p in problems)),
                          ex, "no response at all (HTTP: an empty body; stdio: no line)")


#: A call whose id is null: no notification (JSON-RPC 2.0 §4.1, a notification has no "id" member).
NULL_ID_REQUEST = '{"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": null}'


def _judge_null_id(ctx: CheckContext) -> None:
    """A request with `"id": null` gets a response object (silence treats it as a notification)."""
    ex = ctx.client.send_raw(NULL_ID_REQUEST)
    answer = answer_of(ex)
    if isinstance(answer, dict):
        return
    got = ("no response at all" if ex.received_text is None or not ex.received_text.strip()
           else f"no response object: {jsonrpc.excerpt(ex.received_text)}")
    fail_exchange(ctx, "upp/jsonrpc-notification-no-reply",
                  f"a request with \"id\": null (a call, not a notification: JSON-RPC 2.0 §4.1 makes a notification "
                  f"a request without an \"id\" member, and §5 has the server reply to every other request) got "
                  f"{got}", ex, "one response object with \"id\": null (a result, or -32600)")


def _notification_problems(ex: RpcExchange) -> list[jsonrpc.WireProblem]:
    return [jsonrpc.WireProblem(r, m) for r, m in wire_problems(ex) if r == "upp/jsonrpc-notification-no-reply"]


@check("upp/wire/batch-empty", spec="upp", requirements=("upp/jsonrpc-batch-empty",), bindings=LIVE,
       title="an empty batch gets one -32600 error object")
def batch_empty(ctx: CheckContext) -> None:
    """`[]` must be answered with a single -32600 response object (id null), not an array and
    not nothing."""
    ex = ctx.client.send_raw("[]")
    _judge_provoked(ctx, "upp/jsonrpc-batch-empty", ex, jsonrpc.expect_batch_empty(answer_of(ex)),
                    "{\"jsonrpc\": \"2.0\", \"error\": {\"code\": -32600, …}, \"id\": null}")


_MIXED_BATCH: list[Any] = [
    {"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": 31},
    {"jsonrpc": "2.0", "method": UNKNOWN_METHOD, "params": {}, "id": "b-32"},
    {"jsonrpc": "2.0", "method": "upp/info", "params": {}},
    1,
]
_NOTIFICATIONS_ONLY: list[Any] = [{"jsonrpc": "2.0", "method": "upp/info", "params": {}}]
#: A batch of exactly one request: its answer is an array of one too, not the bare response.
_SINGLE_BATCH: list[Any] = [{"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": 33}]


def _batches(ctx: CheckContext) -> tuple[RpcExchange, RpcExchange]:
    """The mixed batch and the batch of notifications only, sent once per client (both batch
    checks judge the same two exchanges)."""
    state = client_state(ctx.client)
    if "batches" not in state:
        state["batches"] = (ctx.client.send_raw(json.dumps(_MIXED_BATCH)),
                            ctx.client.send_raw(json.dumps(_NOTIFICATIONS_ONLY)))
    return state["batches"]


@check("upp/wire/batch", spec="upp", requirements=("upp/jsonrpc-batch",), bindings=LIVE,
       title="a batch gets an array with one response per request with an id (SHOULD)")
def batch(ctx: CheckContext) -> None:
    """A batch of upp/info (id 31), an unknown method (id "b-32"), a notification and an invalid
    member (`1`): the answer should be an array of three responses (ids 31, "b-32", null). A server
    answering one -32600 object (it takes no batches: 05 §1 calls UPP messages JSON objects) is
    warned. A batch of exactly one upp/info (id 33) should get an array of one response too, not the
    bare response object (JSON-RPC 2.0 §6 makes no exception for one). Answers to the notifications
    are upp/wire/batch-notifications' business."""
    mixed, _ = _batches(ctx)
    problems = [p for p in jsonrpc.expect_batch(_MIXED_BATCH, answer_of(mixed)) if p.requirement == jsonrpc.BATCH]
    _judge_provoked(ctx, "upp/jsonrpc-batch", mixed, problems,
                    "an array of 3 responses: ids 31, \"b-32\" and null (-32600 for the member 1)")
    if not isinstance(answer_of(mixed), list):
        return  # no batches taken (warned just now): a batch of one says nothing more
    single = ctx.client.send_raw(json.dumps(_SINGLE_BATCH))
    problems = [p for p in jsonrpc.expect_batch(_SINGLE_BATCH, answer_of(single)) if p.requirement == jsonrpc.BATCH]
    _judge_provoked(ctx, "upp/jsonrpc-batch", single, problems,
                    "an array of 1 response with \"id\": 33 (a batch of one is still a batch)")


@check("upp/wire/batch-notifications", spec="upp", requirements=("upp/jsonrpc-batch-notifications",),
       bindings=LIVE, title="notifications inside a batch get no response; a batch of notifications only gets nothing")
def batch_notifications(ctx: CheckContext) -> None:
    """The mixed batch of upp/wire/batch holds one notification: no response in the answer may
    answer it (a response with "id": null beyond the one for the invalid member). A batch holding
    one notification only must get no answer at all — not `[]`, not a response (JSON-RPC 2.0 §4.1
    and §6, MUST NOT). A server that answers the mixed batch with one -32600 object takes no batches
    (05 §1 calls UPP messages JSON objects; upp/wire/batch warns): to it every batch is one invalid
    request, so its -32600 to the batch of notifications answers that request, not a notification;
    an array would still answer them."""
    mixed, only = _batches(ctx)
    takes_batches = isinstance(answer_of(mixed), list)
    still_answers(ctx, "after the batches")
    judged = [(_NOTIFICATIONS_ONLY, only, "nothing at all (HTTP: an empty body; stdio: no line)"
               + ("" if takes_batches else ", or the one -32600 object a server without batches answers"))]
    if takes_batches:
        judged.insert(0, (_MIXED_BATCH, mixed, "no response for the notification: 3 responses (ids 31, \"b-32\", "
                                               "null for the member 1)"))
    if not takes_batches:
        ctx.note("the server takes no batches (one -32600 object for the mixed batch, 05 §1): whether it would "
                 "answer a notification inside a batch it took was not seen; only that the batch of notifications "
                 "got no array is judged")
    for sent, ex, expected in judged:
        problems = [p for p in jsonrpc.expect_batch(sent, answer_of(ex), takes_batches=takes_batches)
                    if p.requirement == jsonrpc.BATCH_NOTIFICATIONS]
        _judge_provoked(ctx, "upp/jsonrpc-batch-notifications", ex, problems, expected)


# =============================================================================================
# a notification is carried out (JSON-RPC 2.0 §4.1)
# =============================================================================================

#: What the notification and its control ingest: two facts of the extractor subset.
NOTIFIED_TEXT = "My name is Ada Lovelace. I love chess."


def _holds(ctx: CheckContext, entity: str, value: str | None) -> tuple[Any, list[dict[str, Any]]]:
    """The events `entity` holds as far as the suite can see: upp/get_events when served, else
    upp/retrieve asked for `value`. Returns (the reply, its events)."""
    if served(ctx, "upp/get_events"):
        reply = ctx.client.get_events(entity)
    else:
        reply = ctx.client.retrieve(entity, value or NOTIFIED_TEXT)
    events = [e for e in reply.result if isinstance(e, dict)] if reply.ok and isinstance(reply.result, list) else []
    return reply, events


@check("upp/wire/notification-executed", spec="upp", requirements=("upp/jsonrpc-notification-executed",),
       bindings=LIVE, title="a notification is carried out: only its response is left out")
def notification_executed(ctx: CheckContext) -> None:
    """upp/ingest of a name and a hobby sent as a request for a fresh user (the control) must make
    events, or the check is inconclusive. The same text sent as a notification (no id) for another
    fresh user must make events too: upp/get_events for that user (upp/retrieve asked for the
    control's value, without get_events) is polled for up to the client's timeout, so a server that
    runs notifications in the background passes. JSON-RPC 2.0 §4.1, adopted by 05 §1: a
    notification signals the client's lack of interest in the *response*; the request is still
    carried out (blind red team round 27: notifications acknowledged, never executed). Whether the
    notification got an answer is upp/wire/notification-no-reply's business."""
    require_offered(ctx, "upp/ingest")
    if not (served(ctx, "upp/get_events") or served(ctx, "upp/retrieve")):
        raise NotApplicable("neither upp/get_events nor upp/retrieve is offered: what a notification stored "
                            "cannot be seen")
    control = fresh_entity("notify-control")
    made = ctx.client.ingest(control, NOTIFIED_TEXT)
    values = [e["value"] for e in made.result if isinstance(e, dict) and isinstance(e.get("value"), str)] \
        if made.ok and isinstance(made.result, list) else []
    if not values:
        raise Inconclusive(f"the control, upp/ingest of {NOTIFIED_TEXT!r} sent as a request for {control!r}, made no "
                           f"event ({made.describe()}): there is nothing a notification of the same text should make")
    _, seen = _holds(ctx, control, values[0])
    if not any(fold(e.get("value")) in {fold(v) for v in values} for e in seen):
        raise Inconclusive(f"the control's events ({compact(values)}) are not shown by "
                           f"{'upp/get_events' if served(ctx, 'upp/get_events') else 'upp/retrieve'} for {control!r}: "
                           "how a notification's events would show is not seen")
    entity = fresh_entity("notify")
    sent = ctx.client.notify("upp/ingest", {"entity_key": entity, "text": NOTIFIED_TEXT})
    still_answers(ctx, "after the notification upp/ingest")
    bound = min(client_timeout(ctx.client), 10.0)
    deadline = time.monotonic() + bound
    pause, polls = 0.05, 0
    while True:
        reply, events = _holds(ctx, entity, values[0])
        polls += 1
        if events:
            return
        if time.monotonic() + pause > deadline:
            break
        time.sleep(pause)
        pause = min(pause * 2, 1.0)
    how = "upp/get_events" if served(ctx, "upp/get_events") else f"upp/retrieve asked for {values[0]!r}"
    fail_exchange(ctx, "upp/jsonrpc-notification-executed",
                  f"upp/ingest of {NOTIFIED_TEXT!r} sent as a notification (no id) for {entity!r} stored nothing: "
                  f"{how} for that user, asked {polls} time(s) over {bound:g} s, answered "
                  f"{reply.describe()}; the same text sent as a request for {control!r} made {len(values)} event(s) "
                  f"({compact(values, 200)})", sent,
                  "the notification carried out like the request (its events stored), only its response left out: "
                  "JSON-RPC 2.0 §4.1, a notification signals the client's lack of interest in the response")


# =============================================================================================
# HTTP: a chunked request body (RFC 9112 §7.1)
# =============================================================================================

def _chunked(ctx: CheckContext, message: dict[str, Any]) -> RpcExchange | None:
    """`message` POSTed with Transfer-Encoding: chunked (the body in three chunks, no Content-Length),
    through the client's own HTTP session; None when the client has none the suite can use."""
    transport = getattr(ctx.client, "transport", None)
    post_raw = getattr(transport, "post_raw", None)
    if not callable(post_raw):
        return None
    data = json.dumps(message).encode("utf-8")
    third = max(1, len(data) // 3)
    # a list, not a generator: httpx sends an iterable body chunked and may send it again on a fresh
    # connection (a generator could not be read twice)
    chunks = [data[:third], data[third:2 * third], data[2 * third:]]
    response = post_raw(chunks, f"POST {transport.url} of {jsonrpc.excerpt(data)} (Transfer-Encoding: chunked)")
    body = response.content
    sent_text = f"(Transfer-Encoding: chunked, 3 chunks) {data.decode('utf-8')}"
    if not body.strip():
        return RpcExchange(sent_text, None, None, response.status_code, response.headers.get("content-type"))
    answer = jsonrpc.read_message(body, f"the HTTP {response.status_code} response body")
    return RpcExchange(sent_text, answer.text, answer.value if answer.is_json else None, response.status_code,
                       response.headers.get("content-type"))


@check("upp/wire/http-chunked-body", spec="upp", requirements=("upp/http-chunked-body",), bindings=HTTP,
       title="over HTTP, a request body sent with Transfer-Encoding: chunked is read whole")
def http_chunked_body(ctx: CheckContext) -> None:
    """upp/info (id 41) and upp/retrieve for a user nobody wrote (id "c-42") are each POSTed with
    Transfer-Encoding: chunked (three chunks, no Content-Length), as any HTTP/1.1 client may send a
    body: each must get the response object for its id that the same request sent plainly gets (a
    result, or for the retrieve -32001 User Not Found) — not -32700 or -32600 for a body read as
    empty. RFC 9112 §7.1 "A recipient MUST be able to parse the chunked transfer coding"; 05 §5
    names HTTP as a transport (blind red team round 27: a chunked body read as empty, -32700). A 411
    Length Required is the refusal RFC 9112 §6.3 allows: the check is then not applicable."""
    probes = [({"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": 41}, "upp/info"),
              ({"jsonrpc": "2.0", "method": "upp/retrieve", "params": {"entity_key": fresh_entity("chunked"),
                                                                        "query": "name"}, "id": "c-42"},
               "upp/retrieve for a user nobody wrote")]
    for message, what in probes:
        plain = ctx.client.send_raw(json.dumps(message))
        expected = answer_of(plain)
        if not (isinstance(expected, dict) and ("result" in expected or "error" in expected)
                and jsonrpc.same_id(expected.get("id"), message["id"])):
            continue  # the plain request is not answered right: the other checks judge that
        exchange = _chunked(ctx, message)
        if exchange is None:
            raise NotApplicable("the client's HTTP transport offers no session the suite can send a chunked body "
                                "through")
        if exchange.http_status == 411:
            # RFC 9112 §6.3: "A server MAY reject a request that contains a message body but not a
            # Content-Length by responding with 411 (Length Required)": a refusal it may make
            raise NotApplicable(f"{what} POSTed with Transfer-Encoding: chunked was answered 411 Length Required, "
                                "which RFC 9112 §6.3 lets a server answer a body without a Content-Length: no "
                                "chunked body is read here, so none is judged")
        got = answer_of(exchange)
        kind = "result" if "result" in expected else "error"
        same = isinstance(got, dict) and jsonrpc.same_id(got.get("id"), message["id"]) and kind in got and (
            kind == "result" or (isinstance(got.get("error"), dict) and isinstance(expected.get("error"), dict)
                                 and got["error"].get("code") == expected["error"].get("code")))
        if not same:
            shown = (f"HTTP {exchange.http_status} with no body" if exchange.received_text is None
                     else f"HTTP {exchange.http_status}: {jsonrpc.excerpt(exchange.received_text)}")
            fail_exchange(ctx, "upp/http-chunked-body",
                          f"{what} POSTed with Transfer-Encoding: chunked (no Content-Length) was answered {shown}, "
                          f"while the same request sent with a Content-Length got {jsonrpc.excerpt(plain.received_text)}",
                          exchange, f"the same answer as the plain request (a {kind} with \"id\": "
                                    f"{json.dumps(message['id'])}): the chunked body read whole — RFC 9112 §7.1 "
                                    "\"A recipient MUST be able to parse the chunked transfer coding\"")
