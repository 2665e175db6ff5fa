"""The MCP binding (mcp.md): the four memory tools answer, memory_get reports a miss as its result,
and every tool result carries the operation's txid."""

from __future__ import annotations

from typing import Any

from memconform.suite.memoturn import model
from memconform.suite.memoturn.checks._common import ingest, profile, say, word
from memconform.suite.memoturn.client import OPERATIONS, MemoturnReply, shown
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check

MCP = ("mcp",)


def tool(op: str) -> str:
    return OPERATIONS[op][1]


def never_ingested() -> str:
    """A well-formed id (the engine's construction) of content no check ever sends."""
    return model.memory_id("fact", None, {"never": word("n")})



@check("memoturn/mcp-tools", spec="memoturn", bindings=MCP, requirements=("memoturn/mcp-tools",),
       title="memory_ingest, memory_recall, memory_get and memory_forget answer a well-formed call")
def mcp_tools(ctx: Any) -> None:
    rule = "memoturn/mcp-tools"
    prof = profile("tools")
    w = word()

    def answered(reply: MemoturnReply) -> bool:
        # a tool that answers, even with a refusal, is there: what it answers is judged by the rule
        # of that answer (ingest-status-per-memory, profile-auto-create, recall-answer-shape, …)
        if reply.not_served:
            say(ctx, rule, f"the tool {tool(reply.op)} is not served", reply)
        return reply.ok

    memory = model.new_memory("fact", f"{w} prefers dark mode", {"theme": word("c")}, topic_key=f"user.{word('t')}")
    reply = ctx.client.ingest(prof, [memory])
    mid = None
    if answered(reply) and not model.ingest_problems(reply.body, 1):
        mid = reply.result(0).get("id")
    answered(ctx.client.recall(prof, {"query": w}))
    if isinstance(mid, str):
        answered(ctx.client.get(prof, mid))
        answered(ctx.client.forget(prof, mid))
        return
    # nothing was ingested: a call about an unknown id may be refused (forget) or a miss (get), and
    # still shows whether the tool is there
    for reply in (ctx.client.get(prof, never_ingested()), ctx.client.forget(prof, never_ingested())):
        if reply.not_served:
            say(ctx, rule, f"the tool {tool(reply.op)} is not served", reply)


@check("memoturn/mcp-get-not-found", spec="memoturn", bindings=MCP, requirements=("memoturn/mcp-get-not-found",),
       title="memory_get of an unknown id reports not-found as its result, not as a tool error")
def mcp_get_not_found(ctx: Any) -> None:
    rule = "memoturn/mcp-get-not-found"
    prof = profile("miss")
    ingest(ctx, prof, [model.new_memory("event", f"{word()} happened", {"note": word("c")})])
    unknown = never_ingested()
    reply = ctx.client.get(prof, unknown)
    if reply.not_served:
        raise NotApplicable(f"memory_get is not served ({reply.describe()}; judged by memoturn/mcp-tools)")
    if not reply.ok:
        say(ctx, rule, f"memory_get of {unknown}, never ingested, answered a tool error; mcp.md: it reports "
                       f"not-found rather than erroring", reply)
    elif reply.memory() is not None:
        say(ctx, rule, f"memory_get of {unknown}, never ingested, answered a record", reply)
    elif not says_not_found(reply):
        say(ctx, rule, f"memory_get of {unknown}, never ingested, answered a result that does not say the memory "
                       f"was not found", reply)
    # a profile never written holds no id either: the lookup misses the same way (a blind red team's
    # server, round 30, answered a tool error there)
    nobody = profile("never-written")
    reply = ctx.client.get(nobody, unknown)
    if not reply.ok:
        say(ctx, rule, f"memory_get of {unknown} in the profile {nobody!r}, never written, answered a tool error; "
                       f"mcp.md: it reports not-found rather than erroring", reply)
    elif reply.memory() is not None or not says_not_found(reply):
        say(ctx, rule, f"memory_get of {unknown} in the profile {nobody!r}, never written, answered a result that "
                       f"does not say the memory was not found", reply)


def says_not_found(reply: MemoturnReply) -> bool:
    """A result that says so: found: false, memory: null, or the words "not found" / not_found."""
    body = reply.body if isinstance(reply.body, dict) else {}
    if body.get("found") is False or ("memory" in body and body["memory"] is None):
        return True
    text = " ".join(filter(None, (reply.received_text, shown(reply.body, 10_000)))).lower()
    return "not found" in text or "not_found" in text


@check("memoturn/mcp-txid", spec="memoturn", bindings=MCP, requirements=("memoturn/mcp-txid",),
       title="The results of memory_ingest, memory_recall, memory_get and memory_forget carry an integer txid")
def mcp_txid(ctx: Any) -> None:
    rule = "memoturn/mcp-txid"
    prof = profile("txid")
    w = word()
    # not `ingest()`: its precondition asks for the txid this check judges
    placed = ctx.client.ingest(prof, [model.new_memory("fact", f"{w} likes jazz", {"genre": word("c")})])
    mid = placed.result(0).get("id")
    if not placed.ok or not isinstance(mid, str):
        raise NotApplicable(f"precondition failed: ingesting a memory: {placed.describe()} (judged by "
                            f"memoturn/mcp-tools)")
    unseen = []
    for reply in (placed, ctx.client.recall(prof, {"query": w}), ctx.client.get(prof, mid),
                  ctx.client.forget(prof, mid)):
        if not reply.ok:
            unseen.append(f"{tool(reply.op)} ({reply.describe()})")
        elif not model.is_integer(reply.txid):
            say(ctx, rule, f"{tool(reply.op)}'s result carries txid {shown(reply.txid)}, not an integer; mcp.md: every "
                           f"tool result carries the txid of the operation", reply)
    if unseen and not ctx.findings:
        raise NotApplicable(f"no result to judge from {'; '.join(unseen)} (judged by memoturn/mcp-tools)")
