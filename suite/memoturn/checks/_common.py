"""What every memoturn check shares: fresh profiles, placing memories, reading them back, citing the
catalogue, and failure messages that say what was sent, what came back and what the page says
(docs/memoturn.md).

A step a check needs but does not judge (placing its memories, reading them back) that fails is a
precondition: the check is not applicable, with the reason, never passed; the operation itself is
judged by its own check (memoturn/operations-served)."""

from __future__ import annotations

import secrets
import weakref
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.runner import observe
from memconform.suite.memoturn import model
from memconform.suite.memoturn.client import MemoturnReply, fresh_profile, shown
from memconform.suite.outcomes import NotApplicable

LIVE = ("http", "mcp")
HTTP = ("http",)


def cite(rid: str) -> str:
    r = catalogues.load("memoturn").get(rid)
    return f"{r.id} ({r.section}, {r.keyword.value}{', derived' if r.derived else ''}): {r.summary}"


def say(ctx: Any, rid: str, what: str, reply: MemoturnReply | None = None, **details: Any) -> None:
    """A finding: what was wrong, what was sent and came back, what the page asks."""
    exchange = f" ({reply.describe()})" if reply is not None else ""
    ctx.violation(rid, f"{what}{exchange}. The page: {cite(rid)}",
                  sent=details.pop("sent", reply.sent if reply is not None else None),
                  received=details.pop("received", (reply.received if reply.received is not None
                                                    else reply.received_text) if reply is not None else None),
                  where=details.pop("where", reply.request if reply is not None else None))


def profile(tag: str = "p") -> str:
    return fresh_profile(tag)


def word(tag: str = "w") -> str:
    """A word no other memory holds (the keyword channel finds exactly what a check placed)."""
    return f"{tag}{secrets.token_hex(4)}"


def served(reply: MemoturnReply) -> MemoturnReply:
    if reply.not_served:
        raise NotApplicable(f"{reply.request} is not served ({reply.describe()}; judged by its own check)")
    return reply


def precondition(reply: MemoturnReply, what: str) -> MemoturnReply:
    served(reply)
    if not reply.ok:
        raise NotApplicable(f"precondition failed: {what}: {reply.describe()}")
    return reply


def ingest(ctx: Any, prof: str, memories: list[dict[str, Any]], what: str = "ingesting") -> MemoturnReply:
    """Ingest `memories` as a precondition; the answer must hold one result per memory, in order
    (where the target's ids are the engine's, the order is seen: results that name the batch's
    memories in another order would make every later step judge the wrong memory)."""
    return ingest_answer(precondition(ctx.client.ingest(prof, memories), f"{what} into {prof!r}"), memories, what)


def ingest_answer(reply: MemoturnReply, memories: list[dict[str, Any]], what: str) -> MemoturnReply:
    """An accepted ingest's answer, as a precondition: one result per memory, in order."""
    if model.ingest_problems(reply.body, len(memories)):
        raise NotApplicable(f"precondition failed: {what}: the answer is not an ingest result "
                            f"({'; '.join(model.ingest_problems(reply.body, len(memories)))}; judged by "
                            f"memoturn/ingest-status-per-memory)")
    if len(memories) > 1:
        expected = [model.id_of(m) if isinstance(m, dict) and isinstance(m.get("type"), str) else None for m in memories]
        got = [reply.result(i).get("id") for i in range(len(memories))]
        if got != expected and sorted(map(str, got)) == sorted(map(str, expected)):
            raise NotApplicable(f"precondition failed: {what}: the results name the batch's memories in another order "
                                f"({reply.describe()}; judged by memoturn/ingest-statuses)")
    return reply


def ingest_carrying(ctx: Any, prof: str, memories: list[dict[str, Any]], member: str, rule: str,
                    what: str, sent: MemoturnReply | None = None) -> MemoturnReply | None:
    """Ingest memories carrying a member the page documents (`ttl`, `embedding`) that `rule` is about.
    Refused, while a memory of the same type without it is accepted in the same profile (the control:
    not otherwise a precondition), the refusal is a finding against `rule`, and None comes back:
    refusing the documented input is failing the rule, not leaving it unjudged. `sent`: the answer
    to that very ingest, made earlier (lifecycle's shared TTL placement), judged as if just made."""
    reply = served(sent if sent is not None else ctx.client.ingest(prof, memories))
    if reply.ok:
        return ingest_answer(reply, memories, f"{what} into {prof!r}")
    mtype = memories[0].get("type", "event")
    bare = model.new_memory(mtype, f"{word()} the same kind of memory", {"w": word()},
                            **({"topic_key": f"k.{word()}"} if mtype in ("fact", "instruction") else {}))
    precondition(ctx.client.ingest(prof, [bare]), f"{what}: the control, a {mtype} without {member}, into {prof!r}")
    say(ctx, rule, f"{what} was refused, while a {mtype} without `{member}` was accepted in the same profile: the "
                   f"page documents `{member}`", reply)
    return None


def ready_profile(ctx: Any, tag: str) -> str:
    """A fresh profile holding one memory: a refusal the check then provokes is about what it sent,
    not about a profile that is not there yet (memoturn/profile-auto-create's)."""
    prof = profile(tag)
    ingest(ctx, prof, [model.new_memory("event", "the profile's first memory", {"w": word()})], "a first memory")
    return prof


def record(ctx: Any, prof: str, id: str, what: str = "reading back") -> dict[str, Any] | None:
    """GET a memory: the record, or None when the answer says it is not there; a GET that answers
    neither is a precondition failure."""
    reply = served(ctx.client.get(prof, id))
    if reply.ok and reply.memory() is not None:
        return reply.memory()
    if reply.missing:
        return None
    raise NotApplicable(f"precondition failed: {what} {id!r}: {reply.describe()}")


def got(ctx: Any, prof: str, id: str) -> tuple[MemoturnReply, dict[str, Any] | None]:
    reply = served(ctx.client.get(prof, id))
    return reply, reply.memory() if reply.ok else None


def recall(ctx: Any, prof: str, params: dict[str, Any], what: str = "recall") -> tuple[MemoturnReply, list[dict[str, Any]]]:
    reply = precondition(ctx.client.recall(prof, params), what)
    hits = reply.memories()
    if hits is None:
        raise NotApplicable(f"precondition failed: {what}: no `memories` array ({reply.describe()}; judged by "
                            f"memoturn/recall-answer-shape)")
    return reply, [h for h in hits if isinstance(h, dict)]


def ids_of(hits: list[dict[str, Any]]) -> list[Any]:
    return [h.get("id") for h in hits]


def judge_refused(ctx: Any, reply: MemoturnReply, *, rule: str, what: str, code: str | None = "invalid_request",
                  status: int | None = 400) -> bool:
    """A request that must be refused: `rule` fails when it was accepted. The envelope and code are
    memoturn/error-envelope's and memoturn/error-codes' (judged where a check names them). True when refused."""
    served(reply)
    if reply.ok:
        should = catalogues.load("memoturn").get(rule).keyword.value == "SHOULD"
        say(ctx, rule, f"{what} was accepted; it {'should' if should else 'must'} be refused", reply)
        return False
    observe(ctx, rule)
    rules = ctx.check.requirements
    if reply.binding == "http":
        if reply.status is not None and reply.status >= 500 and "memoturn/no-server-error" in rules:
            say(ctx, "memoturn/no-server-error", f"{what} was answered HTTP {reply.status}, a server error; "
                                                 f"bad input is the client's error (4xx)", reply)
            return True
        observe(ctx, "memoturn/no-server-error")
        if "memoturn/error-envelope" in rules and reply.status not in (408, 413):
            problem = envelope_problem(reply)
            if problem:
                say(ctx, "memoturn/error-envelope", f"{what} was refused, but {problem}", reply)
                return True
            observe(ctx, "memoturn/error-envelope")
        if "memoturn/error-codes" in rules and code is not None:
            observe(ctx, "memoturn/error-codes")
            allowed = {code} | ({"payload_too_large"} if status == 413 else set())
            if reply.code not in allowed or (status is not None and reply.status != status
                                             and not (reply.status == 413 and "payload_too_large" in allowed)):
                say(ctx, "memoturn/error-codes", f"{what} was refused with HTTP {reply.status} code "
                                                 f"{shown(reply.code)}, not {status} {code}", reply)
    return True


def http_only(ctx: Any) -> None:
    """On a binding other than HTTP, the error envelope, codes and statuses are not judged: note so."""
    if ctx.binding != "http":
        ctx.note(f"over {ctx.binding}, the HTTP error envelope, codes and statuses are not judged "
                  "(they bind the HTTP binding)")


def envelope_problem(reply: MemoturnReply) -> str | None:
    value = reply.received
    if not isinstance(value, dict):
        return f"the body is {shown(value) if value is not None else repr((reply.received_text or '')[:200])}, not {{\"error\", \"code\"}}"
    if not isinstance(value.get("error"), str):
        return f"`error` is {shown(value.get('error'))}, not a string message"
    if not isinstance(value.get("code"), str):
        return f"`code` is {shown(value.get('code'))}, not a string"
    return None


#: The source an MCP server gave the first memory sent with none, per client: mcp.md's server
#: "defaults it from the MEMOTURN_SOURCE environment variable", one value for the server's life.
_default_sources: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def source_problem(ctx: Any, sent: dict[str, Any], answered: Any) -> str | None:
    """What is wrong with the source a memory came back with, or None. A source sent comes back as
    sent. A memory sent with none comes back with none (null or left out), or, over MCP, with the
    server's default (the page: "The MCP server defaults it from the MEMOTURN_SOURCE environment
    variable"): one string, the same for every memory of the run sent without one."""
    return sourceless_problem(ctx.client, ctx.binding, answered) if sent.get("source") is None else (
        None if answered == sent["source"] else f"source was sent {sent['source']!r}")


def sourceless_problem(client: Any, binding: str, answered: Any) -> str | None:
    """`source_problem` for a memory sent with no source."""
    if answered is None:
        return None
    if binding != "mcp":
        return (f"the memory was sent with no source and came back with {shown(answered)}: over REST nothing "
                f"defaults it (the page: the MCP server defaults it from MEMOTURN_SOURCE, the SDKs and the CLI "
                f"on the client's side)")
    if not isinstance(answered, str):
        return f"the memory was sent with no source and came back with {shown(answered)}, not a string"
    try:
        default = _default_sources.setdefault(client, answered)
    except TypeError:  # a client that cannot be weakly referenced: each answer stands alone
        default = answered
    if answered != default:
        return (f"the memory was sent with no source and came back with {answered!r}, while an earlier memory sent "
                f"with none came back with {default!r}: the MCP server's default (MEMOTURN_SOURCE) is one value")
    return None


def mentions(value: Any, text: str) -> bool:
    """Whether `text` is a string anywhere in a JSON value (a key or a value): for answers whose shape
    the pages leave undocumented (the sessions and profiles listings)."""
    if value == text:
        return True
    if isinstance(value, dict):
        return any(k == text or mentions(v, text) for k, v in value.items())
    if isinstance(value, list):
        return any(mentions(v, text) for v in value)
    return False
