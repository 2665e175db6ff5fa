"""What every UPP check shares: fresh users, what the server offers, citing the catalogue, and
failure messages a vendor can act on (docs/live-upp.md).

All checks run against one shared server, so each works on its own entity_key (`fresh_entity`)
and never relies on what another check wrote. A missing operation is charged once, by its
`upp/op-*` check; every other check that needs it is skipped with the reason
(`require_offered`).
"""

from __future__ import annotations

import json
import secrets
import weakref
from collections.abc import Iterable
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.runner import observe  # noqa: F401 (the checks take it from here)
from memconform.suite.outcomes import Inconclusive, NotApplicable
from memconform.suite.upp import jsonrpc, model, ontology
from memconform.suite.upp.client import OMIT, RpcExchange, RpcReply

LIVE = ("http", "stdio")

# JSON-RPC 2.0 and UPP error codes (upp/05 §4).
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)
USER_NOT_FOUND, ONTOLOGY_NOT_FOUND, INGEST_FAILED, EXTRACTION_FAILED = -32001, -32002, -32003, -32004

#: How many problems one finding lists before it says "and N more".
SHOWN = 8


def fresh_entity(tag: str) -> str:
    """An entity_key no other check (or earlier run) uses: `mcf-<tag>-<hex>`."""
    return f"mcf-{tag}-{secrets.token_hex(6)}"


# -- per-client memory: info and method probes are asked once per client ----------------------------

_STATE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STATE_BY_ID: dict[int, tuple[Any, dict[str, Any]]] = {}


def client_state(client: Any) -> dict[str, Any]:
    try:
        return _STATE.setdefault(client, {})
    except TypeError:  # not weak-referenceable: keep the client alive beside its state
        return _STATE_BY_ID.setdefault(id(client), (client, {}))[1]


def info_reply(ctx: Any) -> RpcReply:
    """upp/info's reply, asked once per client."""
    state = client_state(ctx.client)
    if "info" not in state:
        state["info"] = ctx.client.info()
    return state["info"]


def still_answers(ctx: Any, when: str) -> None:
    """An upp/info request gets a response on this binding: only then does a notification's
    silence say anything (a server that answers nothing is silent to notifications too)."""
    control = ctx.client.call("upp/info", {})
    if control.response is None:
        raise Inconclusive(f"the control request upp/info sent {when} got no JSON-RPC response "
                           f"({control.describe()}): a server that answers no request says nothing to a notification "
                           "either, so no reply to one shows nothing (the wire checks judge the missing response)")


def aliases(ctx: Any) -> dict[str, str]:
    """The target's own names for spec operations (a descriptor's [upp.methods]): spec name -> its
    name. The naming checks (upp/op-*, upp/info-operations, upp/l1/info) never use them; every other
    check judges the operation's semantics through them, and its messages say "called as …"."""
    methods = getattr(ctx.client, "methods", None)
    return dict(methods) if isinstance(methods, dict) else {}


def call_op(ctx: Any, op: str, params: Any = OMIT) -> RpcReply:
    """The operation `op` (a spec name) under the target's name for it (`aliases`)."""
    via = getattr(ctx.client, "call_op", None)
    return via(op, params) if callable(via) else ctx.client.call(op, params)


def listed_operations(ctx: Any) -> frozenset[str]:
    """The names upp/info lists, as listed (empty when info fails or has no usable list)."""
    reply = info_reply(ctx)
    ops = reply.result.get("operations") if reply.ok and isinstance(reply.result, dict) else None
    return frozenset(op for op in ops if isinstance(op, str)) if isinstance(ops, list) else frozenset()


def offered(ctx: Any) -> frozenset[str]:
    """The operations upp/info lists, by spec name: a name the target maps an operation to counts
    as that operation."""
    listed = listed_operations(ctx)
    return listed | {op for op, name in aliases(ctx).items() if name in listed}


def probe(ctx: Any, method: str, *, raw: bool = False) -> RpcReply:
    """`method` called with empty params, once per client: a served operation answers (a result,
    or -32602 for the missing parameters), an unserved one -32601. Empty params change nothing.
    Through the target's name for it (`aliases`) unless `raw`: the naming checks probe names."""
    probes = client_state(ctx.client).setdefault("raw_probes" if raw else "probes", {})
    if method not in probes:
        probes[method] = ctx.client.call(method, {}) if raw else call_op(ctx, method, {})
    return probes[method]


def served(ctx: Any, op: str) -> bool:
    """False only when upp/info does not list `op` and the server answers it -32601."""
    return op in offered(ctx) or probe(ctx, op).error_code != METHOD_NOT_FOUND


def require_offered(ctx: Any, op: str) -> None:
    """Skip a check that needs `op` when the server does not serve it (charged by upp/op-*)."""
    if not served(ctx, op):
        raise NotApplicable(
            f"{op} is not offered: upp/info does not list it and the server answers it with -32601 "
            f"Method Not Found. Its absence is judged once, by the requirement {op_requirement(op)}.")


def op_requirement(op: str) -> str:
    return "upp/op-" + op.removeprefix("upp/").replace("_", "-")


def need(reply: RpcReply, what: str) -> Any:
    """The result of a call a check needs as a precondition; when it failed the check cannot judge
    its own requirement (the failing operation is judged by its own check): skip."""
    if not reply.ok:
        raise NotApplicable(f"precondition failed: {what} did not succeed ({reply.describe()}); "
                            f"the operation itself is judged by its own check")
    return reply.result


def known_labels(ctx: Any) -> frozenset[str] | None:
    """The label names of the server's ontology: upp/get_labels when it answers a list, else the
    user/v1 file when info names user/v1; None when neither says."""
    state = client_state(ctx.client)
    if "labels" not in state:
        names: frozenset[str] | None = None
        if "upp/get_labels" in offered(ctx):
            reply = ctx.client.get_labels()
            if reply.ok and isinstance(reply.result, list):
                found = [d.get("name") for d in reply.result if isinstance(d, dict)]
                if found and all(isinstance(n, str) for n in found):
                    names = frozenset(found)
        if names is None and server_ontology(ctx) == ontology.USER_V1:
            names = ontology.user_v1().label_names
        state["labels"] = names
    return state["labels"]


#: The sensitivity tiers, least sensitive first (06 §6).
TIERS = ("tier_public", "tier_work", "tier_personal", "tier_sensitive", "tier_internal")
#: Tiers a server may keep out of upp/retrieve by default: 06 §6 "Implementations should support
#: filtering events by sensitivity tier", and 03 §2 leaves what is relevant to the server.
FILTERABLE_TIERS = frozenset({"tier_sensitive", "tier_internal"})


def label_tiers(ctx: Any) -> dict[str, str]:
    """Each label's sensitivity tier: as upp/get_labels serves it when it answers, else as the
    user/v1 file has it when info names user/v1; {} when neither says."""
    state = client_state(ctx.client)
    if "tiers" not in state:
        tiers: dict[str, str] = {}
        if "upp/get_labels" in offered(ctx):
            reply = ctx.client.get_labels()
            if reply.ok and isinstance(reply.result, list):
                tiers = {d["name"]: d["sensitivity"] for d in reply.result if isinstance(d, dict)
                         and isinstance(d.get("name"), str) and isinstance(d.get("sensitivity"), str)}
        if not tiers and server_ontology(ctx) == ontology.USER_V1:
            tiers = {d.name: d.sensitivity for d in ontology.user_v1().labels}
        state["tiers"] = tiers
    return state["tiers"]


def tier_rank(ctx: Any, event: dict[str, Any]) -> int:
    """How sensitive an event is: the rank in TIERS of its most sensitive label (a label of no
    known tier counts as tier_personal)."""
    labels = event.get("labels") if isinstance(event.get("labels"), list) else []
    tiers = label_tiers(ctx)
    ranks = [TIERS.index(tiers[x]) if isinstance(x, str) and tiers.get(x) in TIERS else 2 for x in labels]
    return max(ranks, default=2)


def server_ontology(ctx: Any) -> str | None:
    reply = info_reply(ctx)
    value = reply.result.get("ontology") if reply.ok and isinstance(reply.result, dict) else None
    return value if isinstance(value, str) else None


# -- citing the catalogue, and saying what went wrong ----------------------------------------------

def requirement(rid: str) -> catalogues.Requirement:
    return catalogues.load("upp").get(rid)


def spec_ref(rid: str) -> str:
    """`upp/ingest-returns-stored-events (UPP 03 §2 upp/ingest, MUST): <summary>`; a derived
    requirement says so, as Requirement.cite does (its reading is the catalogue's note)."""
    r = requirement(rid)
    return f"{r.id} (UPP {r.section}, {r.keyword.value}{', derived' if r.derived else ''}): {r.summary}"


def server_error_status(exchange: RpcExchange) -> str | None:
    """"HTTP <status>" when an answer came with a 5xx status, else None. Said only beside a JSON-RPC
    answer that is wrong or missing: UPP is transport-agnostic (05 §5) and the JSON-RPC-over-HTTP
    convention answers -32700 and -32602 with 500, so a right error stands whatever status carries it
    (variant upp-http-status-by-code)."""
    status = exchange.http_status
    return f"HTTP {status}" if status is not None and status >= 500 else None


def compact(value: Any, limit: int = 400) -> str:
    """JSON on one line, cut at `limit` characters (messages stay readable for 50 MB answers)."""
    if value is OMIT:
        return "(omitted)"
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def came_back(reply: RpcReply) -> str:
    """reply.describe() plus the response itself (or the raw answer when it was not JSON-RPC)."""
    if reply.response is not None:
        return f"{reply.describe()} — {compact(reply.response)}"
    text = reply.exchange.received_text
    status = f" (HTTP {reply.exchange.http_status})" if reply.exchange.http_status is not None else ""
    if text is None:
        return f"{reply.describe()}{status}"
    return f"{reply.describe()}{status} — raw answer {compact(text, 300)}"


def fail(ctx: Any, rid: str, what: str, reply: RpcReply | None, expected: str) -> None:
    """Record a violation of `rid`: what was wrong, what was sent, what came back, what the spec
    asks. `reply` may be None when the finding is about several calls (say them in `what`)."""
    parts = [what.rstrip(".") + "."]
    if reply is not None:
        parts.append(f"Sent: {reply.named} with params {compact(reply.params)}.")
        parts.append(f"Came back: {came_back(reply)}.")
    parts.append(f"Expected: {expected.rstrip('.')}.")
    parts.append(f"The spec: {spec_ref(rid)}")
    ctx.violation(rid, " ".join(parts),
                  sent=reply.exchange.sent_text if reply is not None else None,
                  received=(reply.exchange.received_text if reply is not None else None),
                  where=reply.method if reply is not None else None)


def fail_exchange(ctx: Any, rid: str, what: str, exchange: RpcExchange, expected: str) -> None:
    """`fail` for a raw exchange (a message sent with send_raw or notify)."""
    status = f" (HTTP {exchange.http_status})" if exchange.http_status is not None else ""
    got = "nothing" if exchange.received_text is None else compact(exchange.received_text, 400)
    ctx.violation(rid, f"{what.rstrip('.')}. Sent: {compact(exchange.sent_text, 300)}. "
                       f"Came back{status}: {got}. Expected: {expected.rstrip('.')}. The spec: {spec_ref(rid)}",
                  sent=exchange.sent_text, received=exchange.received_text)


def allowed(ctx: Any) -> tuple[str, ...]:
    """The requirements the running check may report against."""
    case = getattr(ctx, "case", None)
    return case.requirements if case is not None and case.requirements else ctx.check.requirements


def report_problems(ctx: Any, rid: str, found: Iterable[model.Problem], where: str,
                    reply: RpcReply | None = None) -> list[model.Problem]:
    """Charge model problems: each to its own requirement when the check names it, else to `rid`.
    One finding per requirement, listing the problems (the first SHOWN of them)."""
    found = list(found)
    names = allowed(ctx)
    grouped: dict[str, list[str]] = {}
    for p in found:
        target = p.requirement if p.requirement in names else rid
        grouped.setdefault(target, []).append(str(p))
    for target, items in grouped.items():
        listed = "; ".join(items[:SHOWN]) + (f"; and {len(items) - SHOWN} more" if len(items) > SHOWN else "")
        what = f"{where}: {len(items)} problem{'s' if len(items) != 1 else ''} in what the server returned: {listed}"
        fail(ctx, target, what, reply, "every member listed fixed to the shape the spec gives (below)")
    return found


def check_stored_events(ctx: Any, rid: str, events: Any, where: str, *, entity_key: str | None = None,
                        reply: RpcReply | None = None) -> list[model.Problem]:
    """Validate a StoredEvent[] (02 §2) and charge what is wrong; returns the problems."""
    return report_problems(ctx, rid, model.stored_events_problems(events, entity_key=entity_key), where, reply)


def check_events(ctx: Any, rid: str, events: Any, where: str, *, reply: RpcReply | None = None) -> list[model.Problem]:
    """Validate an Event[] (02 §1) and charge what is wrong; returns the problems."""
    return report_problems(ctx, rid, model.events_problems(events), where, reply)


# -- wire problems the driver saw -------------------------------------------------------------------

answer_of = jsonrpc.answer_of  # the JSON-RPC judge's reading of an exchange (OAMS's checks share it)


def wire_problems(exchange: RpcExchange) -> list[tuple[str | None, str]]:
    """(requirement, message) for each JSON-RPC problem the driver judged in `exchange`. Items are
    `WireProblem(requirement, message)`; a bare sentence is accepted too, its requirement read from
    the first `upp/...` id it names (None when it names none)."""
    out: list[tuple[str | None, str]] = []
    for item in exchange.wire_problems or ():
        rid = getattr(item, "requirement", None)
        message = getattr(item, "message", None)
        if rid is None and isinstance(item, str):
            message = item
            rid = next((w.strip("().,;:'\"`") for w in item.split() if w.strip("().,;:'\"`").startswith("upp/")), None)
        out.append((rid, str(message if message is not None else item)))
    return out


# -- placing events -----------------------------------------------------------------------------

#: Text written for the documented extractor subset (reference_impl/upp/extractor.py): a name
#: (who_name, singular), a home (where_home, singular) and a hobby (what_interests_hobbies,
#: plural). Any extractor worth the name finds something here.
PROFILE_TEXT = "My name is Ada Lovelace. I live in Lisbon. I love hiking."


def ingested(ctx: Any, entity_key: str, text: str = PROFILE_TEXT) -> tuple[RpcReply, list[dict[str, Any]]]:
    """Ingest `text` for `entity_key` as a precondition: the reply and the events that came back
    as objects. The server extracting nothing (`[]` or -32004) makes the calling check
    inconclusive; any other failure skips it (upp/ingest is judged by its own checks)."""
    reply = ctx.client.ingest(entity_key, text)
    if reply.error_code == EXTRACTION_FAILED or (reply.ok and reply.result == []):
        raise Inconclusive(f"the server extracted no event from {text!r} ({reply.describe()}): extraction "
                           f"is the server's business, so there is nothing to judge")
    result = need(reply, f"upp/ingest of {text!r}")
    if not isinstance(result, list):
        raise NotApplicable(f"precondition failed: upp/ingest answered {reply.describe()}, not a list of "
                            f"events (judged by upp/ingest-returns-stored-events)")
    return reply, [e for e in result if isinstance(e, dict)]


def fold(text: Any) -> str:
    """A value compared loosely: case and runs of whitespace folded."""
    return " ".join(str(text).split()).casefold()


# -- what a check observed (ctx.credit_only_observed: absence is never evidence) -----------------

def observe_stored_events(ctx: Any, events: Any, *, entity_key: str | None = None,
                          cross_member: bool = True) -> None:
    """Mark the StoredEvent rules that validating `events` compared with what the server showed:
    the shape rules when there is an event, each member's rule when some event carries that member,
    the entity_key rule when it was compared with the request's, id uniqueness when two events
    carry ids (and `cross_member`: the ids were compared)."""
    items = [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []
    if not items:
        return
    # superseded-by-consistent is about every event: a pointer on one that is not superseded, or
    # one naming itself, breaks it, and each validated event was looked at for both.
    seen = ["upp/stored-event-required-fields", "upp/stored-event-field-types"]
    if cross_member:
        seen.append("upp/superseded-by-consistent")
    for member, rid in (("status", "upp/stored-event-status"), ("created_at", "upp/stored-event-created-at"),
                        ("confidence", "upp/event-confidence-range"), ("source_type", "upp/event-source-type")):
        if any(member in e for e in items):
            seen.append(rid)
    if entity_key is not None and any(isinstance(e.get("entity_key"), str) for e in items):
        seen.append("upp/stored-event-entity-key")
    if cross_member and sum(isinstance(e.get("id"), str) for e in items) >= 2:
        seen.append("upp/stored-event-id-unique")
    observe(ctx, *seen)


def observe_events(ctx: Any, events: Any) -> None:
    """`observe_stored_events` for an Event[] (upp/retrieve's result)."""
    items = [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []
    if not items:
        return
    seen = ["upp/event-required-fields", "upp/event-field-types"]
    for member, rid in (("confidence", "upp/event-confidence-range"), ("source_type", "upp/event-source-type")):
        if any(member in e for e in items):
            seen.append(rid)
    observe(ctx, *seen)
