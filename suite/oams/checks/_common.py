"""What every OAMS check shares: fresh namespaces of the target's owners, placing memories, reading
a namespace back through LIST, citing the catalogue, and failure messages that say what was sent,
what came back and what the spec asks (docs/oams.md).

A step a check needs but does not judge (placing its memories, reading them back) that fails is a
precondition: the check is skipped with the reason, never passed; the operation itself is judged
by its own check (oams/operations-served)."""

from __future__ import annotations

from typing import Any, NoReturn

from memconform.suite import catalogue as catalogues
from memconform.suite.runner import observe
from memconform.suite.oams import model
from memconform.suite.oams.client import OamsReply, fresh_key, fresh_namespace, list_every, shown
from memconform.suite.outcomes import NotApplicable

LIVE = ("http", "jsonrpc", "stdio")
FILE = ("file",)


def cite(rid: str) -> str:
    r = catalogues.load("oams").get(rid)
    return f"{r.id} (§{r.section}, {r.keyword.value}): {r.summary}"


def say(ctx: Any, rid: str, what: str, reply: OamsReply | None = None, **details: Any) -> None:
    """A finding: what was wrong, what was sent and came back, what the spec asks."""
    exchange = f" ({reply.describe()})" if reply is not None else ""
    ctx.violation(rid, f"{what}{exchange}. The spec: {cite(rid)}",
                  sent=details.pop("sent", reply.sent if reply is not None else None),
                  received=details.pop("received", (reply.received if reply.received is not None
                                                    else reply.received_text) if reply is not None else None),
                  where=details.pop("where", reply.request if reply is not None else None))


#: The §2 rules about a memory's optional members: judged only where a memory holds the member.
OPTIONAL_MEMBER_RULES = {
    "tags": ("oams/tags-strings",), "metadata": ("oams/metadata-object",),
    "embedding": ("oams/embedding-floats", "oams/embedding-model-required"),
    "embedding_model": ("oams/embedding-model-required",),
    "parent_id": ("oams/provenance-fields",), "source_id": ("oams/provenance-fields",),
}
#: What each §2 rule is about, for saying what a subject held none of.
MEMORY_ABOUT = {
    "oams/key-required": "memory object", "oams/namespace-required": "memory object",
    "oams/value-string": "memory object", "oams/timestamps-utc": "memory object",
    "oams/updated-not-before-created": "memory with both timestamps valid",
    "oams/tags-strings": "memory with tags", "oams/metadata-object": "memory with metadata",
    "oams/embedding-floats": "memory with an embedding",
    "oams/embedding-model-required": "memory with an embedding or embedding_model",
    "oams/provenance-fields": "memory with parent_id or source_id",
    "oams/scope-no-slash-colon": "namespace with a scope (<owner>:<scope>)",
    "oams/ns-key-unique": "two memories whose (namespace, key) could repeat",
}


def memory_rules_held(memories: Any) -> set[str]:
    """The §2 rules memory objects exercised: the required members' on any object; an optional
    member's where a memory holds it; updated-not-before-created where both times parse; a
    namespace's scope rule where a namespace has a scope (absence is never evidence)."""
    seen: set[str] = set()
    for m in memories:
        if not isinstance(m, dict):
            continue
        seen |= {"oams/key-required", "oams/namespace-required", "oams/value-string", "oams/timestamps-utc"}
        seen.update(r for member, rules in OPTIONAL_MEMBER_RULES.items() if member in m for r in rules)
        if model.parse_time(m.get("created_at")) and model.parse_time(m.get("updated_at")):
            seen.add("oams/updated-not-before-created")
        ns = m.get("namespace")
        if isinstance(ns, str) and model.split_namespace(ns)[1] is not None:
            seen.add("oams/scope-no-slash-colon")
    return seen


def unjudged(ctx: Any, what: str, about: dict[str, str]) -> None:
    """Note, for each requirement the check names and neither observed nor found, what `what` held none of."""
    missing = ctx.unobserved()
    if missing:
        ctx.note(f"{what} holds no " + "; no ".join(f"{about.get(r, r)} ({r})" for r in missing))


def owners(ctx: Any) -> tuple[str, str]:
    return tuple(getattr(ctx.client, "owners", ("mc-owner-a", "mc-owner-b")))  # type: ignore[return-value]


def namespace(ctx: Any, owner: int = 0, tag: str = "t") -> str:
    return fresh_namespace(owners(ctx)[owner], tag)


def key(tag: str = "m") -> str:
    return fresh_key(tag)


def served(reply: OamsReply) -> OamsReply:
    """The reply, unless the operation is not there at all: then the check cannot run (the missing
    operation is oams/operations-served's finding, not this check's)."""
    if reply.not_served:
        raise NotApplicable(f"{reply.request} is not served ({reply.describe()}; judged by oams/operations-served)")
    return reply


def precondition(reply: OamsReply, what: str) -> None:
    if not reply.ok:
        raise NotApplicable(f"precondition failed: {what}: {reply.describe()} (judged by oams/operations-served)")


def place(ctx: Any, memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Store `memories` one by one (each a STORE the check does not judge); the answers."""
    out = []
    for m in memories:
        reply = ctx.client.store(m)
        precondition(reply, f"storing {m['key']!r} in {m['namespace']!r}")
        out.append(reply.result)
    return out


def seed_as_given(ctx: Any, memories: list[dict[str, Any]]) -> dict[str, Any]:
    """Place memories that carry a given updated_at with one BATCH_STORE; with one STORE each when the
    batch is refused or its answer does not carry the given times (noted: keeping given timestamps is
    oams/store-keeps-given-timestamps' to judge, and filters judged on other times would be blamed for
    it). The stored memories by key: what the answers hold, or the memory as sent where an answer
    holds no array of memories. Not applicable when STORE does not keep them either."""
    reply = ctx.client.batch_store(memories)
    if reply.ok:
        answers = reply.result if isinstance(reply.result, list) else reply.memories()[0]
        stored, why = _as_given(memories, answers, f"BATCH_STORE of {len(memories)} memories")
        if why is None:
            return stored
        ctx.note(f"{why}; the memories were placed again with one STORE each")
    answers = []
    for m in memories:
        one = ctx.client.store(m)
        precondition(one, f"storing {m['key']!r} in {m['namespace']!r}")
        answers.append(one.result)
    stored, why = _as_given(memories, answers, "STORE")
    if why is not None:
        raise NotApplicable(f"precondition failed: {why}: the check's memories are not at the times it judges by")
    return stored


def _as_given(memories: list[dict[str, Any]], answers: Any, how: str) -> tuple[dict[str, Any], str | None]:
    """(the stored memories by key, None), or why an answer does not carry a given updated_at."""
    stored: dict[str, Any] = {m["key"]: m for m in memories}
    for got in answers or ():
        sent = stored.get(got.get("key")) if isinstance(got, dict) else None
        if sent is None:
            continue
        if "updated_at" in sent and not same_instant(got.get("updated_at"), sent["updated_at"]):
            return stored, (f"{how}, each given its updated_at, answered {got['key']!r} with updated_at "
                            f"{shown(got.get('updated_at'))}, not the given {sent['updated_at']} (keeping given "
                            f"timestamps is judged by oams/store-keeps-given-timestamps)")
        stored[got["key"]] = got
    return stored, None


def listed(ctx: Any, ns: str, **filters: Any) -> list[Any]:
    """Every memory LIST shows for `ns`, following cursors (client.list_every)."""
    def refused(reply: OamsReply, how: str | None) -> NoReturn:
        precondition(reply, f"listing {ns!r}")
        raise NotApplicable(f"precondition failed: LIST of {ns!r} holds {how} (judged by oams/list-paging)")

    return list_every(ctx.client, ns, refused, **filters)


def recalled(reply: OamsReply) -> list[Any] | None:
    items, _how = reply.memories()
    return items


def keys_of(items: list[Any] | None) -> list[Any]:
    return [m.get("key") if isinstance(m, dict) else m for m in items or []]


def find(items: list[Any] | None, k: str) -> dict[str, Any] | None:
    return next((m for m in items or [] if isinstance(m, dict) and m.get("key") == k), None)


def error_shape_problem(reply: OamsReply) -> str | None:
    """Why an error answer is not §3's shape, or None when it is."""
    value = reply.received
    if reply.binding == "http":
        if not isinstance(value, dict) or not isinstance(value.get("error"), dict):
            return f"the error body is {shown(value) if value is not None else repr((reply.received_text or '')[:200])}, not {{\"error\": {{code, message, data?}}}}"
    err = reply.error
    if not isinstance(err, dict):
        return f"no error object (got {shown(value)})"
    code, message = err.get("code"), err.get("message")
    if not isinstance(code, int) or isinstance(code, bool):
        return f"error.code is {shown(code)}, not an integer"
    if not isinstance(message, str):
        return f"error.message is {shown(message)}, not a string"
    return None


def judge_error(ctx: Any, reply: OamsReply, *, code: int | None, refused_rule: str | None, what: str,
                shape_rule: str = "oams/error-shape", code_rule: str = "oams/error-codes") -> bool:
    """A request that must be refused: refused (`refused_rule`), in §3's shape, with `code`. True
    when it was refused."""
    served(reply)
    if reply.ok or (reply.status is not None and 200 <= reply.status < 300 and reply.error is None):
        if refused_rule:
            say(ctx, refused_rule, f"{what} was accepted; it must be refused"
                + (f" with {code} ({model.RESERVED_CODES.get(code, '')})" if code else ""), reply)
        if ctx.judged is not None:
            ctx.note("a request that must be refused was accepted: the error shape and code are judged only on "
                     "what was refused")
        return False
    observe(ctx, *(r for r in (refused_rule,) if r))
    problem = error_shape_problem(reply)
    if problem is not None:
        say(ctx, shape_rule, f"{what} was refused, but {problem}", reply)
        if ctx.judged is not None and code is not None:
            ctx.note("a refusal not in §3's error shape shows no code to judge")
        return True
    observe(ctx, shape_rule)
    if code is not None:
        observe(ctx, code_rule)
    if code is not None and reply.error_code != code:
        say(ctx, code_rule, f"{what} was refused with code {reply.error_code}, not {code} "
                            f"({model.RESERVED_CODES.get(code, '')})", reply)
    return True


def same_instant(a: Any, b: Any) -> bool:
    ta, tb = model.parse_time(a), model.parse_time(b)
    return ta is not None and ta == tb
