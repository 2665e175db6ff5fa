"""The JSON-RPC envelope of OAMS's JSON-RPC binding (§3: "Each is offered as a REST verb and a JSON-RPC
method", so JSON-RPC 2.0's rules for a response hold): the response carries its request's id."""

from __future__ import annotations

from typing import Any

from memconform.suite.oams.checks._common import namespace, say, served
from memconform.suite.registry import check

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
