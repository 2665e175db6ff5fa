"""The JSON-RPC envelope of OAMS's JSON-RPC binding (§3: "Each is offered as a REST verb and a JSON-RPC
method", so JSON-RPC 2.0's rules for a response hold): the response carries its request's id."""

from __future__ import annotations

import json
from typing import Any

from memconform.suite.oams.checks._common import namespace, say, served
from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.registry import check
# JSON-RPC 2.0's rules are one text whichever spec speaks it: UPP's module holds its judge
from memconform.suite.upp import jsonrpc

RPC = ("jsonrpc", "stdio")


@check("oams/jsonrpc-id-echo", spec="oams", bindings=RPC, requirements=("oams/jsonrpc-id-echo",),
       title="A JSON-RPC response carries its request's id, with the same JSON type")
def jsonrpc_id_echo(ctx: Any) -> None:
    """oams.list of a fresh namespace sent with a numeric id and with a string id: each response's id
    is the request's, value and type."""
    ns = namespace(ctx, tag="ids")
    for request_id in (7_000_001, "mc-id-7000002"):
        reply = served(ctx.client.call_with_id("list", {"namespace": ns}, request_id))
        got = reply.received.get("id", "<missing>") if isinstance(reply.received, dict) else "<no response object>"
        if got != request_id or type(got) is not type(request_id):
            say(ctx, "oams/jsonrpc-id-echo", f"oams.list sent with id {request_id!r} ({type(request_id).__name__}) was "
                                             f"answered with id {got!r}"
                                             f"{f' ({type(got).__name__})' if got != '<missing>' else ''}", reply)


def _exchanged(exchange: Any) -> str:
    got = "nothing" if exchange.received_text is None else jsonrpc.excerpt(exchange.received_text)
    return f"sent {jsonrpc.excerpt(exchange.sent_text)}; came back {got}"


#: Texts that are not JSON (no newline: one line over stdio).
NOT_JSON = ('{"jsonrpc": "2.0", "method": "oams.list", "params": {}, "id": 1', "oams.list please")


@check("oams/jsonrpc-parse-error", spec="oams", bindings=RPC, requirements=("oams/jsonrpc-parse-error",),
       title="A message that is not JSON gets -32700 with id null (JSON-RPC 2.0)")
def jsonrpc_parse_error(ctx: Any) -> None:
    for text in NOT_JSON:
        exchange = ctx.client.exchange_text(text)
        problems = jsonrpc.expect_parse_error(jsonrpc.answer_of(exchange))
        if problems:
            ctx.violation("oams/jsonrpc-parse-error", "; ".join(p.message for p in problems)
                          + f" ({_exchanged(exchange)}); JSON-RPC 2.0 §5.1: -32700 Parse error, \"id\": null",
                          sent=exchange.sent_text, received=exchange.received_text)


@check("oams/jsonrpc-method-not-found", spec="oams", bindings=RPC, requirements=("oams/jsonrpc-method-not-found",),
       title="An unknown method gets -32601 (JSON-RPC 2.0)")
def jsonrpc_method_not_found(ctx: Any) -> None:
    for method, request_id in (("oams.mcf_no_such_method", 7_000_101), ("mcf.nothing", "mc-id-7000102")):
        message = {"jsonrpc": "2.0", "method": method, "params": {}, "id": request_id}
        exchange = ctx.client.exchange_text(json.dumps(message))
        # the code is this rule's; the id is oams/jsonrpc-id-echo's (round 18: a server echoing ids as
        # strings was charged here too)
        problems = jsonrpc.expect_error(jsonrpc.answer_of(exchange), jsonrpc.METHOD_NOT_FOUND_CODE)
        if problems:
            ctx.violation("oams/jsonrpc-method-not-found", "; ".join(p.message for p in problems)
                          + f" ({_exchanged(exchange)}); JSON-RPC 2.0 §5.1: -32601 Method not found",
                          sent=exchange.sent_text, received=exchange.received_text)


@check("oams/jsonrpc-notification-no-reply", spec="oams", bindings=RPC,
       requirements=("oams/jsonrpc-notification-no-reply",),
       title="A notification (no id) gets no response (JSON-RPC 2.0)")
def jsonrpc_notification_no_reply(ctx: Any) -> None:
    """Notifications of oams.list, of an unknown method and of oams.recall without a query: none may
    be answered. Silence counts only from a server seen to answer: an oams.list request before and
    after them must get its response."""
    ns = namespace(ctx, tag="notify")

    def still_answers(when: str) -> None:
        _still_answers(ctx, ns, when)

    still_answers("before the notifications")
    if ctx.binding == "jsonrpc":
        # a request whose id is null is a call, not a notification (§4.1: a notification has no "id"
        # member): it is answered. Over stdio answers pair with requests by id, and one with id null
        # cannot be told from the answer to an unreadable message, so HTTP only (as for UPP)
        exchange = ctx.client.exchange_text(json.dumps({"jsonrpc": "2.0", "method": "oams.list",
                                                        "params": {"namespace": ns}, "id": None}))
        if not isinstance(jsonrpc.answer_of(exchange), dict):
            ctx.violation("oams/jsonrpc-notification-no-reply",
                          f"a request with \"id\": null, a call and not a notification (JSON-RPC 2.0 §4.1: a "
                          f"notification has no \"id\" member), got no response object ({_exchanged(exchange)})",
                          sent=exchange.sent_text, received=exchange.received_text)
    for method, params in (("oams.list", {"namespace": ns}), ("oams.mcf_no_such_method", {}),
                           ("oams.recall", {"namespace": ns})):
        exchange = ctx.client.notify(method, params)
        still_answers(f"after the notification {method}")
        if jsonrpc.expect_no_reply(exchange.received_text):
            ctx.violation("oams/jsonrpc-notification-no-reply",
                          f"the notification {method} (no id) was answered ({_exchanged(exchange)}); JSON-RPC 2.0 "
                          "§4.1: \"The Server MUST NOT reply to a Notification\"",
                          sent=exchange.sent_text, received=exchange.received_text)


def _still_answers(ctx: Any, ns: str, when: str) -> None:
    """Silence counts only from a server seen to answer: an oams.list request must get its response."""
    control = ctx.client.list(ns)
    if not isinstance(control.received, dict):
        raise Inconclusive(f"the control request oams.list sent {when} got no JSON-RPC response "
                           f"({control.describe()}): silence to a notification shows nothing there")


def _batches(ns: str) -> tuple[list[Any], list[Any], list[Any]]:
    """A mixed batch (oams.list with a numeric id, an unknown method with a string id, a notification,
    an invalid member `1`), a batch of one oams.list, and a batch of one notification only."""
    listing = {"jsonrpc": "2.0", "method": "oams.list", "params": {"namespace": ns}}
    return ([listing | {"id": 7_000_301}, {"jsonrpc": "2.0", "method": "oams.mcf_no_such_method", "params": {},
                                           "id": "mc-id-7000302"}, listing, 1],
            [listing | {"id": 7_000_303}],
            [listing])


def _judge_batch(ctx: Any, requirement: str, wanted: str, exchange: Any, problems: list[Any], expected: str) -> None:
    mine = [p.message for p in problems if p.requirement == wanted]
    if mine:
        ctx.violation(requirement, "; ".join(mine) + f" ({_exchanged(exchange)}); expected {expected}",
                      sent=exchange.sent_text, received=exchange.received_text)


@check("oams/jsonrpc-batch-empty", spec="oams", bindings=RPC, requirements=("oams/jsonrpc-batch-empty",),
       title="An empty batch gets one -32600 error object (JSON-RPC 2.0)")
def jsonrpc_batch_empty(ctx: Any) -> None:
    exchange = ctx.client.exchange_text("[]")
    _judge_batch(ctx, "oams/jsonrpc-batch-empty", jsonrpc.BATCH_EMPTY, exchange,
                 jsonrpc.expect_batch_empty(jsonrpc.answer_of(exchange)),
                 "one {\"jsonrpc\": \"2.0\", \"error\": {\"code\": -32600, …}, \"id\": null} (JSON-RPC 2.0 §6)")


@check("oams/jsonrpc-batch", spec="oams", bindings=RPC, requirements=("oams/jsonrpc-batch",),
       title="A batch gets an array with one response per request with an id (JSON-RPC 2.0, SHOULD)")
def jsonrpc_batch(ctx: Any) -> None:
    """The mixed batch should get an array of three responses (ids 7000301, "mc-id-7000302", null for
    the member 1); a batch of one oams.list an array of one. A server answering one -32600 object takes
    no batches: warned, and the batch of one says nothing more."""
    ns = namespace(ctx, tag="batch")
    mixed, single, _ = _batches(ns)
    exchange = ctx.client.exchange_text(json.dumps(mixed))
    answer = jsonrpc.answer_of(exchange)
    _still_answers(ctx, ns, "after the batch")  # what a batch answered over several lines left behind is read here
    _judge_batch(ctx, "oams/jsonrpc-batch", jsonrpc.BATCH, exchange, jsonrpc.expect_batch(mixed, answer),
                 "one array of 3 responses: ids 7000301, \"mc-id-7000302\" and null (-32600 for the member 1)"
                 + (", on one line" if ctx.binding == "stdio" else ""))
    if not isinstance(answer, list):
        return
    exchange = ctx.client.exchange_text(json.dumps(single))
    _judge_batch(ctx, "oams/jsonrpc-batch", jsonrpc.BATCH, exchange,
                 jsonrpc.expect_batch(single, jsonrpc.answer_of(exchange)),
                 "an array of 1 response with \"id\": 7000303 (a batch of one is still a batch)")


@check("oams/jsonrpc-batch-notifications", spec="oams", bindings=RPC,
       requirements=("oams/jsonrpc-batch-notifications",),
       title="Notifications inside a batch get no response; a batch of notifications only gets nothing")
def jsonrpc_batch_notifications(ctx: Any) -> None:
    """The mixed batch's notification gets no response object in the array (a response with id null
    beyond the one for the member 1); a batch of one notification gets nothing at all, not `[]`. A
    server that answers the mixed batch with one -32600 object takes no batches: its -32600 to the
    batch of notifications answers that one invalid request, and only an array would answer them."""
    ns = namespace(ctx, tag="batchnote")
    mixed, _, only = _batches(ns)
    _still_answers(ctx, ns, "before the batches")
    mixed_exchange = ctx.client.exchange_text(json.dumps(mixed))
    takes_batches = isinstance(jsonrpc.answer_of(mixed_exchange), list)
    only_exchange = ctx.client.exchange_text(json.dumps(only))
    _still_answers(ctx, ns, "after the batches")
    judged = [(only, only_exchange, "nothing at all (HTTP: an empty body; stdio: no line)"
               + ("" if takes_batches else ", or the one -32600 object a server without batches answers"))]
    if takes_batches:
        judged.insert(0, (mixed, mixed_exchange, "no response for the notification: 3 responses (ids 7000301, "
                                                 "\"mc-id-7000302\", null for the member 1)"))
    else:
        ctx.note("the server takes no batches (one -32600 object for the mixed batch): whether it would answer a "
                 "notification inside a batch it took was not seen; only that the batch of notifications got no "
                 "array is judged")
    for sent, exchange, expected in judged:
        _judge_batch(ctx, "oams/jsonrpc-batch-notifications", jsonrpc.BATCH_NOTIFICATIONS, exchange,
                     jsonrpc.expect_batch(sent, jsonrpc.answer_of(exchange), takes_batches=takes_batches),
                     expected + "; JSON-RPC 2.0 §4.1: \"The Server MUST NOT reply to a Notification, including "
                     "those that are within a batch request\"")


@check("oams/stdio-line-framing", spec="oams", bindings=("stdio",), requirements=("oams/stdio-line-framing",),
       title="Over stdio each response is one line (newline-delimited JSON)")
def stdio_line_framing(ctx: Any) -> None:
    """A sample of ordinary calls (a LIST, a STORE, a refused RECALL, an unknown method), and every
    exchange this client made before: each answer came on one line of its own (the driver reads an
    answer spread over lines and files it; this check reports what it filed)."""
    ns = namespace(ctx, tag="framing")
    client = ctx.client
    client.list(ns)
    client.store({"key": "framed", "namespace": ns, "value": "one line"})
    client.recall({"namespace": ns})
    client.exchange_text(json.dumps({"jsonrpc": "2.0", "method": "oams.mcf_no_such_method", "params": {}, "id": 7}))
    if not hasattr(client, "framing"):  # a client that keeps no framing record shows nothing to judge
        raise NotApplicable("this client does not record how its stdio answers were framed")
    seen = list(client.framing)
    for sent, problem in seen[:3]:
        ctx.violation("oams/stdio-line-framing", f"{problem} (the answer to {jsonrpc.excerpt(sent)})", sent=sent)
    if len(seen) > 3:
        ctx.violation("oams/stdio-line-framing", f"… and {len(seen) - 3} more answers not on one line of their own")
