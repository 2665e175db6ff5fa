"""UPP level 1 over the live bindings: upp/info and conformance discovery, each operation served
under its spec name (judged once, at its own level), the shapes of upp/ingest and upp/retrieve,
and the level-1 rules about users, params and errors (docs/live-upp.md).

How these checks stay fair:

* Each check works on its own entity_key (`fresh_entity`): the server is shared.
* Extraction is the server's business: text is written for the documented extractor subset, and
  when the server extracts nothing the check is inconclusive, never failed.
* A precondition that fails skips the check with the reason; only the check that owns an
  operation fails for it. A missing operation is charged once, by its `upp/op-*` check.

Requirements judged nowhere here, and why:

* `upp/concurrency` (05 §5, SHOULD): the drivers promise one request at a time per client; a
  check firing simultaneous requests would test the driver as much as the server.
* `upp/retrieve-ranked`, `upp/stateless`: not observable (catalogue: testable = false).
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from typing import Any

from memconform.suite.outcomes import Inconclusive, NotApplicable, TargetError
from memconform.suite.registry import check
from memconform.suite.runner import CheckContext
from memconform.suite.upp import model
from memconform.suite.upp.checks._common import (
    EXTRACTION_FAILED, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, LIVE, METHOD_NOT_FOUND, PROFILE_TEXT,
    USER_NOT_FOUND, aliases, call_op, check_events, check_stored_events, compact, fail, fold, fresh_entity,
    info_reply, ingested, known_labels, listed_operations, need, observe, observe_events, observe_stored_events,
    offered, op_requirement, probe, report_problems, require_offered, served, FILTERABLE_TIERS, TIERS, tier_rank,
)
from memconform.suite.upp.client import LEVEL_OPERATIONS, OMIT, OPERATIONS, RpcReply

#: The names public implementations answer instead of the spec's (docs/live-upp.md, Near-miss).
NEAR_MISS = {"upp/get_events": "upp/events", "upp/delete_events": "upp/delete", "upp/get_labels": "upp/labels",
             "upp/export_events": "upp/export", "upp/import_events": "upp/import"}

#: The protocol-defined parameters of each operation (upp/03): anything a server asks for beyond
#: these is an extension it made required (upp/extension-params-optional).
PROTOCOL_PARAMS = {
    "upp/ingest": {"entity_key", "text"}, "upp/retrieve": {"entity_key", "query"}, "upp/info": set(),
    "upp/contextualize": {"entity_key", "text"}, "upp/get_tasks": {"task_ids"},
    "upp/get_events": {"entity_key"}, "upp/delete_events": {"entity_key", "event_ids"},
    "upp/get_labels": set(), "upp/export_events": {"entity_key"}, "upp/import_events": {"entity_key", "file"},
}

#: The version this suite judges (01 §8), and what speaks it: 1.0.0 or any later 1.x release, which
#: semver makes backward-compatible (minor: "backward-compatible" additions; patch: clarifications).
PROTOCOL_VERSION = "1.0.0"
SPEAKS_1_0 = re.compile(r"1\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\+[0-9A-Za-z.-]+)?")


def _level_of(op: str) -> int:
    return next(level for level, ops in LEVEL_OPERATIONS.items() if op in ops)


def _required_ops(level: int) -> set[str]:
    return {op for lv, ops in LEVEL_OPERATIONS.items() if lv <= level for op in ops}


# =============================================================================================
# upp/info (03 §3; 01 §8; 08 §4)
# =============================================================================================

@check("upp/l1/info", spec="upp",
       requirements=("upp/info-result-fields", "upp/info-protocol-version", "upp/info-no-entity-key",
                     "upp/info-conformance-level", "upp/conformance-level-matches", "upp/conformance-highest-level",
                     "upp/info-ontology", "upp/single-ontology"),
       bindings=LIVE, title="upp/info answers protocol_version 1.0.0, an ontology, its operations and a matching level")
def info(ctx: CheckContext) -> None:
    """upp/info with `params: {}` (no entity_key, no credentials): the four members and their
    types; protocol_version "1.0.0"; conformance_level 1..3 with every operation of that level
    listed (08 §4), and no higher level fully listed (SHOULD); an ontology identifier
    `<type>/v<major>`, the same on a second call (one ontology per instance). Credited with the
    members the result carries."""
    ctx.credit_only_observed()
    reply = ctx.client.info()
    if reply.error_code == METHOD_NOT_FOUND:
        raise NotApplicable("upp/info answers -32601: judged once, by upp/op-info")
    if not reply.ok:
        fail(ctx, "upp/info-no-entity-key", "upp/info without an entity_key or credentials did not answer", reply,
             "a result: info needs no user context and no authentication")
        return
    result = reply.result
    found = model.info_result_problems(result)
    report_problems(ctx, "upp/info-result-fields", found, "upp/info result", reply)
    observe(ctx, "upp/info-no-entity-key", "upp/info-result-fields")
    if not isinstance(result, dict):
        return
    observe(ctx, *(rid for member, rid in (("protocol_version", "upp/info-protocol-version"),
                                          ("conformance_level", "upp/info-conformance-level"),
                                          ("ontology", "upp/info-ontology")) if member in result))
    version = result.get("protocol_version")
    if isinstance(version, str) and SPEAKS_1_0.fullmatch(version) is None:
        why = ("another major version" if re.fullmatch(r"\d+\.\d+\.\d+.*", version) and not version.startswith("1.")
               else "not a MAJOR.MINOR.PATCH release of major version 1")
        fail(ctx, "upp/info-protocol-version",
             f"upp/info reports protocol_version {version!r} ({why}): this server does not speak the UPP "
             f"{PROTOCOL_VERSION} this suite judges", reply,
             f"protocol_version \"{PROTOCOL_VERSION}\" or a later 1.x release (\"1.0.1\", \"1.2.0\"), which semver "
             f"makes backward-compatible")
    ops = result.get("operations")
    level = result.get("conformance_level")
    if isinstance(ops, list) and level in (1, 2, 3) and not isinstance(level, bool):
        listed = {op for op in ops if isinstance(op, str)}
        observe(ctx, "upp/conformance-level-matches", "upp/conformance-highest-level")
        missing = sorted(_required_ops(level) - listed, key=OPERATIONS.index)
        if missing:
            fail(ctx, "upp/conformance-level-matches",
                 f"upp/info declares conformance_level {level} but its operations leave out {', '.join(missing)}",
                 reply, f"operations listing every operation of levels 1..{level}")
        highest = max((lv for lv in (1, 2, 3) if _required_ops(lv) <= listed), default=0)
        if highest > level:
            fail(ctx, "upp/conformance-highest-level",
                 f"upp/info lists every operation of level {highest} but declares conformance_level {level}",
                 reply, f"conformance_level {highest}, the highest fully supported level")
    again = ctx.client.info()
    first, second = result.get("ontology"), (again.result.get("ontology") if again.ok and isinstance(again.result, dict)
                                             else None)
    if again.ok and isinstance(first, str):
        observe(ctx, "upp/single-ontology")
    if again.ok and isinstance(first, str) and first != second:
        fail(ctx, "upp/single-ontology",
             f"two upp/info calls report different ontologies: {first!r}, then {second!r}", again,
             "the same ontology on every call: one server instance has exactly one ontology")


@check("upp/l1/info-operations", spec="upp", requirements=("upp/info-operations",), bindings=LIVE,
       title="upp/info lists exactly the operations the server answers")
def info_operations(ctx: CheckContext) -> None:
    """Each of the ten operations, and each name info lists, is called with empty params: a
    served method answers (a result, or -32602 for its missing parameters), an unserved one
    -32601. A listed method answering -32601, or a spec operation answered but not listed, fails."""
    reply = info_reply(ctx)
    need(reply, "upp/info")
    ops = reply.result.get("operations") if isinstance(reply.result, dict) else None
    if not isinstance(ops, list):
        raise NotApplicable("upp/info has no operations list (judged by upp/info-result-fields)")
    listed = [op for op in ops if isinstance(op, str)]
    for op in dict.fromkeys([*listed[:40], *OPERATIONS]):
        answer = probe(ctx, op, raw=True)  # names are judged here: never through an alias
        if answer.response is None:
            continue  # no JSON-RPC answer at all: the wire checks say why
        if op in listed and answer.error_code == METHOD_NOT_FOUND:
            fail(ctx, "upp/info-operations", f"upp/info lists {op}, but the server answers it -32601 Method Not Found",
                 answer, f"{op} served (a result, or -32602 for the empty params), or left out of operations")
        elif op not in listed and answer.error_code != METHOD_NOT_FOUND:
            fail(ctx, "upp/info-operations", f"the server answers {op} but upp/info does not list it "
                 f"(operations: {compact(listed)})", answer, f"{op} in upp/info's operations")


# =============================================================================================
# every operation under its spec name (08 §2), each judged once at its level
# =============================================================================================

def _sample_params(ctx: CheckContext, op: str) -> Any:
    """Well-formed params that change nothing anyone else reads."""
    entity = fresh_entity("op")
    return {
        "upp/ingest": {"entity_key": entity, "text": PROFILE_TEXT},
        "upp/retrieve": {"entity_key": entity, "query": "What is the user's name?"},
        "upp/info": {},
        "upp/contextualize": {"entity_key": entity, "text": PROFILE_TEXT},
        "upp/get_tasks": {"task_ids": ["mcf-no-such-task"]},
        "upp/get_events": {"entity_key": entity},
        "upp/delete_events": {"entity_key": entity},
        "upp/get_labels": {},
        "upp/export_events": {"entity_key": entity},
        # No such file: a served import_events refuses it (-32602), which still shows it is served.
        "upp/import_events": {"entity_key": entity, "file": f"/nonexistent/memconform/{entity}.json"},
    }[op]


def _extension_demanded(reply: RpcReply, op: str) -> list[str]:
    """Parameters outside the protocol that a -32602 says are missing."""
    if reply.error_code != INVALID_PARAMS or not isinstance(reply.error, dict):
        return []
    data = reply.error.get("data")
    missing = data.get("missing_params") if isinstance(data, dict) else None
    if not isinstance(missing, list):
        return []
    return [str(m) for m in missing if str(m) not in PROTOCOL_PARAMS[op]]


def _op_check(op: str) -> None:
    rid = op_requirement(op)
    level = _level_of(op)
    near = NEAR_MISS.get(op)

    def served_under_spec_name(ctx: CheckContext) -> None:
        ctx.credit_only_observed()  # an operation not served shows nothing of its parameters
        params = _sample_params(ctx, op)
        reply = ctx.client.call(op, params)
        if reply.response is None:
            raise Inconclusive(f"{op} got no JSON-RPC response ({reply.describe()}); the wire checks say why")
        if reply.error_code == METHOD_NOT_FOUND:
            what = f"the server does not serve {op}: it answers -32601 Method Not Found"
            if near is not None:
                other = ctx.client.call(near, params)
                if other.response is not None and other.error_code != METHOD_NOT_FOUND:
                    what += (f". It does answer the near-miss name {near} ({other.describe()}): serve the "
                             f"operation under its spec name {op}")
            if op in listed_operations(ctx):
                what += " (and upp/info lists it)"
            if op in aliases(ctx):
                what += (f". The target's descriptor maps {op} to {aliases(ctx)[op]} ([upp.methods]): the other "
                         f"checks judge the operation through that name, this one judges the name")
            fail(ctx, rid, what, reply, f"{op} answered: UPP level {level} includes it (upp/08 §2)")
            ctx.note(f"{op} is not served, so which parameters it demands was not seen")
            return
        observe(ctx, rid, "upp/extension-params-optional")
        extra = _extension_demanded(reply, op)
        if extra:
            fail(ctx, "upp/extension-params-optional",
                 f"{op} with only its protocol parameters was refused for missing {', '.join(extra)}, which the "
                 f"protocol does not define", reply, f"{op} works with only {sorted(PROTOCOL_PARAMS[op]) or 'no params'}")

    served_under_spec_name.__doc__ = (
        f"{op} is called with well-formed params{' (a file that does not exist)' if op == 'upp/import_events' else ''}; "
        f"-32601 fails {rid}" + (f", naming {near} when the server answers that instead" if near else "")
        + ". A -32602 that asks for a parameter the protocol does not define fails upp/extension-params-optional.")
    check(f"upp/l{level}/op-{op.removeprefix('upp/').replace('_', '-')}", spec="upp", requirements=(rid, "upp/extension-params-optional"),
          bindings=LIVE, title=f"{op} is served under its spec name (level {level})")(served_under_spec_name)


for _op in OPERATIONS:
    _op_check(_op)


# =============================================================================================
# upp/ingest (03 §2)
# =============================================================================================

@check("upp/l1/ingest-shape", spec="upp",
       requirements=("upp/ingest-returns-stored-events", "upp/stored-event-required-fields",
                     "upp/stored-event-field-types", "upp/stored-event-status", "upp/stored-event-created-at",
                     "upp/stored-event-id-unique", "upp/stored-event-entity-key", "upp/event-confidence-range",
                     "upp/event-source-type", "upp/superseded-by-consistent", "upp/ingest-labels-from-ontology"),
       bindings=LIVE, title="upp/ingest answers the StoredEvents it stored, labelled from the ontology")
def ingest_shape(ctx: CheckContext) -> None:
    """Text written for the documented extractor subset is ingested for two fresh users: each
    answer is a StoredEvent[] (ids, the request's entity_key, a status and source_type from
    their vocabularies, confidence 0..1, an ISO-8601 created_at) with at least one label per
    event, every label in the server's ontology; no id is shared within or across the answers.
    A server that extracts nothing leaves the check inconclusive. Credited with the members the
    events carry; the labels rule only when the server's ontology is known."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/ingest")
    first, second = fresh_entity("shape"), fresh_entity("shape")
    texts = {first: PROFILE_TEXT, second: "My name is Grace Hopper. I live in Arlington. I love chess."}
    answers: list[tuple[RpcReply, list[Any]]] = []
    for entity, text in texts.items():
        reply = ctx.client.ingest(entity, text)
        if reply.error_code == EXTRACTION_FAILED or (reply.ok and reply.result == []):
            continue  # nothing extracted: the server's business
        if reply.error_code == INTERNAL_ERROR:
            raise TargetError(f"upp/ingest failed inside the server: {reply.describe()}")
        if not reply.ok or not isinstance(reply.result, list):
            fail(ctx, "upp/ingest-returns-stored-events", "upp/ingest of well-formed params did not answer a list "
                 "of events", reply, "a result: an array of the StoredEvents persisted (possibly empty)")
            return
        check_stored_events(ctx, "upp/ingest-returns-stored-events", reply.result, "upp/ingest result",
                            entity_key=entity, reply=reply)
        observe(ctx, "upp/ingest-returns-stored-events")
        observe_stored_events(ctx, reply.result, entity_key=entity)
        answers.append((reply, reply.result))
    if not answers:
        raise Inconclusive(f"the server extracted no event from {list(texts.values())!r}: extraction is the "
                           f"server's business, so there is no shape to judge")
    _judge_labels(ctx, answers)
    if len(answers) == 2:
        first_ids, second_ids = ({e.get("id") for e in events if isinstance(e, dict) and isinstance(e.get("id"), str)}
                                 for _, events in answers)
        shared = first_ids & second_ids
        if first_ids and second_ids:
            observe(ctx, "upp/stored-event-id-unique")  # compared across the answers
        if shared:
            fail(ctx, "upp/stored-event-id-unique",
                 f"two upp/ingest calls for different users returned events with the same id(s) {sorted(shared)}",
                 answers[1][0], "a server-assigned id unique to each event")


def _judge_labels(ctx: CheckContext, answers: list[tuple[RpcReply, list[Any]]]) -> None:
    known = known_labels(ctx)
    for reply, events in answers:
        bare = [i for i, e in enumerate(events) if isinstance(e, dict) and e.get("labels") == []]
        if bare:
            fail(ctx, "upp/ingest-labels-from-ontology", f"upp/ingest returned event(s) {bare} with no label", reply,
                 "each extracted fact mapped to one or more ontology labels")
        if known is None:
            continue  # a label outside an ontology nobody named cannot be seen
        if any(isinstance(e, dict) and isinstance(e.get("labels"), list) and e["labels"] for e in events):
            observe(ctx, "upp/ingest-labels-from-ontology")
        unknown = {lab for e in events for lab in model.unknown_labels(e, known)}
        if unknown:
            fail(ctx, "upp/ingest-labels-from-ontology",
                 f"upp/ingest returned events labelled {sorted(unknown)}, which the server's ontology does not define",
                 reply, "labels of the server's configured ontology only (upp/get_labels, or the user/v1 file)")


@check("upp/l1/ingest-persists", spec="upp", requirements=("upp/ingest-persists",), bindings=LIVE,
       title="the events upp/ingest returns are stored")
def ingest_persists(ctx: CheckContext) -> None:
    """After an ingest, upp/get_events (when served) lists every id the ingest returned. Without
    get_events, upp/retrieve asked for each value must find it; when it does not, retrieval and
    storage cannot be told apart at level 1 and the check is inconclusive (retrieval is judged by
    upp/retrieve-finds-stored)."""
    require_offered(ctx, "upp/ingest")
    entity = fresh_entity("persist")
    reply, events = ingested(ctx, entity)
    ids = [e["id"] for e in events if isinstance(e.get("id"), str)]
    if served(ctx, "upp/get_events"):
        listed = ctx.client.get_events(entity)
        # -32001 for a user ingest just stored events for says the same as an empty list: none kept.
        result = [] if listed.error_code == USER_NOT_FOUND else need(listed, "upp/get_events")
        have = {e.get("id") for e in result if isinstance(e, dict)} if isinstance(result, list) else set()
        lost = [i for i in ids if i not in have]
        if lost:
            fail(ctx, "upp/ingest-persists", f"upp/ingest returned ids {ids} for {entity!r}, but upp/get_events "
                 f"does not list {lost}", listed, "every event ingest returned stored, so get_events lists it")
        return
    values = [e["value"] for e in events if isinstance(e.get("value"), str) and e.get("status") in ("valid", None)]
    for value in values[:3]:
        found = ctx.client.retrieve(entity, value)
        if found.ok and isinstance(found.result, list) and any(
                isinstance(e, dict) and fold(e.get("value")) == fold(value) for e in found.result):
            continue
        raise Inconclusive(f"upp/retrieve for {value!r} did not return it ({found.describe()}) and the server has "
                           f"no upp/get_events: whether ingest stored it cannot be told at level 1")
    if not values:
        raise Inconclusive("upp/ingest returned no valid event whose value could be looked up")


# =============================================================================================
# upp/retrieve (03 §2)
# =============================================================================================

@check("upp/l1/retrieve-shape", spec="upp",
       requirements=("upp/retrieve-returns-events", "upp/event-required-fields", "upp/event-field-types",
                     "upp/event-confidence-range", "upp/event-source-type", "upp/retrieve-finds-stored",
                     "upp/error-user-not-found"),
       bindings=LIVE, title="upp/retrieve answers Events and finds what was ingested")
def retrieve_shape(ctx: CheckContext) -> None:
    """Events are ingested for a fresh user; upp/retrieve with each valid event's value as the
    query (the easiest question there is) answers an Event[] (StoredEvent members allowed) that
    contains that value (case and spacing folded). A -32001 for this user, who has events, is a
    misuse of User Not Found, also for a query that matches none of them. Credited with the members
    the returned events carry."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/ingest")
    require_offered(ctx, "upp/retrieve")
    entity = fresh_entity("retrieve")
    # a language besides the profile: who_languages is tier_public in user/v1, so a server filtering
    # retrieve by tier still has one event to find; two of them, so that its value is a query of more than
    # three words too (a server dropping long queries was passed where only public events were probed)
    _, events = ingested(ctx, entity, PROFILE_TEXT + " I speak Portuguese and Spanish.")
    wanted = [e for e in events if isinstance(e.get("value"), str) and e.get("status", "valid") == "valid"]
    if not wanted:
        raise Inconclusive("upp/ingest stored no valid event with a value to look for")
    # A server may keep sensitive tiers out of retrieve by default (06 §6 "Implementations should
    # support filtering events by sensitivity tier"; what is relevant is the server's, 03 §2): a
    # blind red team's server (round 16) left tier_sensitive where_current_location out and was
    # failed for it. The probes are the least sensitive events, none of a filterable tier.
    open_ = sorted((e for e in wanted if TIERS[tier_rank(ctx, e)] not in FILTERABLE_TIERS),
                   key=lambda e: tier_rank(ctx, e))
    if not open_:
        ctx.note(f"upp/ingest stored only events of labels the server may keep out of retrieve by sensitivity tier "
                 f"({sorted({str(x) for e in wanted for x in e.get('labels') or []})}; 06 §6): finding one is not "
                 f"judged")
    for event in open_[:3]:
        reply = ctx.client.retrieve(entity, event["value"])
        if reply.error_code == USER_NOT_FOUND:
            fail(ctx, "upp/error-user-not-found", f"upp/retrieve answered -32001 User Not Found for {entity!r}, "
                 f"which upp/ingest had just stored events for", reply, "the user's events, ranked")
            continue  # the next event is judged too: every failing one is reported
        if reply.error_code == INTERNAL_ERROR:
            raise TargetError(f"upp/retrieve failed inside the server: {reply.describe()}")
        if not reply.ok or not isinstance(reply.result, list):
            fail(ctx, "upp/retrieve-returns-events", "upp/retrieve of well-formed params did not answer a list",
                 reply, "a result: an array of Events ranked by relevance")
            continue
        observe(ctx, "upp/error-user-not-found", "upp/retrieve-returns-events")
        observe_events(ctx, reply.result)
        if check_events(ctx, "upp/retrieve-returns-events", reply.result, "upp/retrieve result", reply=reply):
            continue
        if not any(fold(e.get("value")) == fold(event["value"]) for e in reply.result if isinstance(e, dict)):
            if _not_stored(ctx, entity, event):
                # an event the server never kept is upp/ingest-persists' failure: not finding it says nothing
                # of retrieve (found where a server that answers [] for an unknown user also lost the ingest)
                ctx.note(f"upp/retrieve did not return {event['value']!r}, but upp/get_events does not list it "
                         f"either: it was not stored (upp/ingest-persists), so retrieve was not judged on it")
                continue
            observe(ctx, "upp/retrieve-finds-stored")
            fail(ctx, "upp/retrieve-finds-stored",
                 f"upp/retrieve asked for the exact value of a stored valid event ({event['value']!r}, labels "
                 f"{event.get('labels')}) did not return it", reply,
                 "that event among the results: it is the best possible match for the query")
            continue
        observe(ctx, "upp/retrieve-finds-stored")
    # A question nothing matches is still a question about a known user: [] (or a ranking of
    # whatever the server holds), never User Not Found.
    reply = ctx.client.retrieve(entity, "quarks gluons chromodynamics zeppelin")
    if reply.ok:
        observe(ctx, "upp/error-user-not-found")
    if reply.error_code == USER_NOT_FOUND:
        fail(ctx, "upp/error-user-not-found", f"upp/retrieve answered -32001 User Not Found for {entity!r}, which "
             f"upp/ingest had just stored events for, when the query matched none of them", reply,
             "an empty array (or the user's events ranked): the user exists")


def _not_stored(ctx: CheckContext, entity: str, event: dict[str, Any]) -> bool:
    """Whether upp/get_events (when served) shows that `event`, returned by upp/ingest, was never stored:
    it lists none of the user's events with its id or its value (-32001 for the user lists none)."""
    if not served(ctx, "upp/get_events"):
        return False
    listed = ctx.client.get_events(entity)
    if listed.error_code == USER_NOT_FOUND:
        return True
    if not listed.ok or not isinstance(listed.result, list):
        return False
    return not any(isinstance(e, dict) and (e.get("id") == event.get("id") or fold(e.get("value")) == fold(event["value"]))
                   for e in listed.result)


@check("upp/l1/retrieve-unknown-user", spec="upp", requirements=("upp/retrieve-unknown-user",), bindings=LIVE,
       title="upp/retrieve for a user never written answers [] or -32001")
def retrieve_unknown_user(ctx: CheckContext) -> None:
    """An entity_key nobody wrote: an empty array and -32001 User Not Found both conform
    (docs/live-upp.md); any other error, or events, fail."""
    require_offered(ctx, "upp/retrieve")
    entity = fresh_entity("nobody")
    reply = ctx.client.retrieve(entity, "What is the user's name?")
    if reply.error_code == USER_NOT_FOUND or (reply.ok and reply.result == []):
        return
    if reply.ok and isinstance(reply.result, list):
        fail(ctx, "upp/retrieve-unknown-user", f"upp/retrieve returned events for {entity!r}, a user never written",
             reply, "an empty array, or error -32001 User Not Found")
        return
    fail(ctx, "upp/retrieve-unknown-user", f"upp/retrieve for {entity!r}, a user never written, did not answer "
         f"an empty list or -32001", reply, "an empty array, or error -32001 User Not Found")


@check("upp/l1/entity-isolation", spec="upp", requirements=("upp/entity-isolation",), bindings=LIVE,
       title="upp/retrieve for one user never returns another user's events")
def entity_isolation(ctx: CheckContext) -> None:
    """Two fresh users each ingest a profile; upp/retrieve for the second, asked for the first
    user's exact values, must return none of them (nor any event carrying the first
    entity_key)."""
    require_offered(ctx, "upp/ingest")
    require_offered(ctx, "upp/retrieve")
    one, two = fresh_entity("iso-a"), fresh_entity("iso-b")
    # a language too: who_languages is tier_public, so a server keeping sensitive tiers out of retrieve (06 §6,
    # variant upp-retrieve-hides-sensitive) would still show another user's event if it leaked one
    _, events = ingested(ctx, one, PROFILE_TEXT + " I speak Portuguese.")
    own = ctx.client.ingest(two, "My name is Grace Hopper. I live in Arlington. I love chess.")
    mine = {fold(e.get("value")) for e in own.result if isinstance(e, dict)} \
        if own.ok and isinstance(own.result, list) else set()
    theirs = {fold(e["value"]) for e in events if isinstance(e.get("value"), str)} - mine
    # the least sensitive first: those no server keeps out of retrieve by tier
    rank = {fold(e["value"]): tier_rank(ctx, e) for e in events if isinstance(e.get("value"), str)}
    probes = sorted(theirs, key=lambda v: (rank.get(v, 2), v))[:3]
    if probes and all(TIERS[rank.get(v, 2)] in FILTERABLE_TIERS for v in probes):
        ctx.note("the first user's events are all of tiers a server may keep out of retrieve (06 §6): a leak of them "
                 "may not show")
    for value in probes:
        reply = ctx.client.retrieve(two, value)
        if not reply.ok or not isinstance(reply.result, list):
            continue  # the shape is judged by retrieve-shape; -32001 here leaks nothing
        leaked = [e for e in reply.result if isinstance(e, dict)
                  and (e.get("entity_key") == one or fold(e.get("value")) in theirs)]
        if leaked:
            fail(ctx, "upp/entity-isolation", f"upp/retrieve for {two!r} returned {len(leaked)} event(s) of {one!r}: "
                 f"{compact(leaked[:3])}", reply, f"only events of {two!r}")


#: A key with capitals, a composed letter (ë, NFC) and a compatibility ligature (ﬁ): folding its case or
#: normalizing its Unicode gives other strings, so other users (01 §7: "An opaque string").
KEY_TAIL = "-Zo\u00eb-\ufb01"


def key_forms(key: str) -> list[tuple[str, str]]:
    """(how it was made, the key) for each string a server that folds keys would read as `key`: lower-
    and upper-cased, NFD, NFKC and NFKC case-folded, a space before or after; each differs from `key`
    and from the others."""
    made = [("lower-cased", key.lower()), ("upper-cased", key.upper()),
            ("in NFD (ë decomposed)", unicodedata.normalize("NFD", key)),
            ("in NFKC (the ligature ﬁ as fi)", unicodedata.normalize("NFKC", key)),
            ("in NFKC and case-folded", unicodedata.normalize("NFKC", key).casefold()),
            # white space is part of an opaque string (round 23's server trimmed keys)
            ("with a space before it", " " + key), ("with a space after it", key + " ")]
    out: list[tuple[str, str]] = []
    for how, form in made:
        if form != key and all(form != f for _, f in out):
            out.append((how, form))
    return out


#: The lengths of the long keys upp/l1/entity-key-exact gives a user: past 64 and past 255 characters, where
#: a store's column or a cache's key is often cut (blind red team round 27: keys cut to 64 characters).
LONG_KEYS = (80, 300)


def long_key(length: int) -> tuple[str, str]:
    """A fresh key of `length` characters ending in "A", and the same key ending in "B"."""
    key = (fresh_entity("Long") + "-").ljust(length - 1, "k") + "A"
    return key, key[:-1] + "B"


@check("upp/l1/entity-key-exact", spec="upp", requirements=("upp/entity-isolation",), bindings=LIVE,
       title="an entity_key is matched exactly: keys differing only in case, Unicode form or a last character "
             "are other users")
def entity_key_exact(ctx: CheckContext) -> None:
    """A fresh user keyed `mcf-Key-<hex>-Zoë-ﬁ` (capitals, a composed ë, the ligature ﬁ) ingests a name
    and a home of its own. The same key lower-cased, upper-cased, in NFD, in NFKC and NFKC case-folded are
    other strings, so other users: the User Key is "An opaque string that identifies a user" (01 §7), and
    06 §7 "Users can only access their own data" (blind red team round 11: keys NFKC-folded and
    lower-cased before lookup). upp/retrieve for each other key, asked for the profile's values, and
    upp/get_events when served, must return none of its events. The same for users keyed with 80 and
    300 characters, each against the key differing only in its last character (blind red team round 27:
    keys cut to 64 characters, so two keys sharing their first 64 name one user); a server refusing so
    long a key is noted, not judged. A value upp/retrieve does not find for the key itself judges
    nothing through retrieve (noted); credited only with what was compared."""
    ctx.credit_only_observed()
    require_offered(ctx, "upp/ingest")
    require_offered(ctx, "upp/retrieve")
    key = fresh_entity("Key") + KEY_TAIL
    _judge_key(ctx, key, key_forms(key))
    for length in LONG_KEYS:
        key, other = long_key(length)
        try:
            _judge_key(ctx, key, [(f"with its last character changed (both {length} characters long, the first "
                                   f"{length - 1} shared)", other)])
        except (Inconclusive, NotApplicable) as exc:
            ctx.note(f"a user keyed with {length} characters was not judged: {exc}")


def _judge_key(ctx: CheckContext, key: str, forms: list[tuple[str, str]]) -> None:
    """`key` ingests a name and a home; each of `forms` (how it was made, another key) must see none
    of them through upp/retrieve and upp/get_events."""
    town = "".join(secrets.choice("bcdfghjklmnprstvwz") + secrets.choice("aeiou") for _ in range(4)).title()
    _, events = ingested(ctx, key, f"My name is Ada Lovelace. I live in {town}.")
    values = sorted({e["value"] for e in events if isinstance(e.get("value"), str)})[:2]
    if not values:
        raise Inconclusive(f"upp/ingest for {key!r} returned no event with a string value, so there is no value "
                           "to look for under the other keys")
    found_by_owner = [v for v in values if _retrieved(ctx.client.retrieve(key, v), {fold(v)}, key)]
    for v in values:
        if v not in found_by_owner:
            ctx.note(f"upp/retrieve for {key!r} itself does not return {v!r}: what it returns for the other keys "
                     "says nothing of that value, so it is not judged through retrieve")
    listing = ctx.client.get_events(key) if served(ctx, "upp/get_events") else None
    listed_by_owner = listing is not None and listing.ok and isinstance(listing.result, list) and any(
        isinstance(e, dict) and fold(e.get("value")) in {fold(v) for v in values} for e in listing.result)
    if listing is not None and not listed_by_owner:
        ctx.note(f"upp/get_events for {key!r} itself does not list its events ({listing.describe()}): not judged "
                 "through get_events")
    theirs = {fold(v) for v in values}
    if found_by_owner:
        _judge_forms(ctx, key, theirs, [(how, other, ctx.client.retrieve(other, found_by_owner[0])) for how, other in forms],
                     f"upp/retrieve asked for {found_by_owner[0]!r}")
    if listed_by_owner:
        _judge_forms(ctx, key, theirs, [(how, other, ctx.client.get_events(other)) for how, other in forms],
                     "upp/get_events")
    if served(ctx, "upp/delete_events"):
        ctx.client.delete_events(key)  # leave nothing behind in the shared server


def _retrieved(reply: RpcReply, values: set[str], key: str) -> list[Any]:
    """The events of `reply` (a retrieve or get_events answer) carrying one of `values` or `key`."""
    if not reply.ok or not isinstance(reply.result, list):
        return []
    return [e for e in reply.result if isinstance(e, dict)
            and (fold(e.get("value")) in values or e.get("entity_key") == key)]


def _judge_forms(ctx: CheckContext, key: str, theirs: set[str], answers: list[tuple[str, str, RpcReply]],
                 asked: str) -> None:
    """One operation's answers for the other forms of `key`: one finding naming every form that was
    answered with `key`'s events. Only an array or -32001 User Not Found was compared; any other answer
    judges nothing (the operation's own checks do)."""
    leaks = []
    for how, other, reply in answers:
        if reply.error_code == USER_NOT_FOUND or (reply.ok and isinstance(reply.result, list)):
            observe(ctx, "upp/entity-isolation")
        leaked = _retrieved(reply, theirs, key)
        if leaked:
            leaks.append((how, other, reply, leaked))
    if not leaks:
        return
    how, other, reply, leaked = leaks[0]
    also = "; also for the key " + ", ".join(f"{h} ({o!r})" for h, o, _, _ in leaks[1:]) if leaks[1:] else ""
    fail(ctx, "upp/entity-isolation", f"{asked} for {other!r} — the key {key!r} {how}, another string and so another "
         f"user — returned {len(leaked)} event(s) of {key!r}: {compact(leaked[:2], 300)}{also}", reply,
         f"none of the events of {key!r}: an entity_key is an opaque string (01 §7 \"User Key: An opaque string "
         "that identifies a user\"), matched exactly and whole, never case-folded, Unicode-normalized or cut "
         "short; 06 §7 \"Users can only access their own data\"")


# =============================================================================================
# params and errors at level 1 (05 §2, §4; 03 §5)
# =============================================================================================

@check("upp/l1/params-may-be-omitted", spec="upp", requirements=("upp/params-may-be-omitted",), bindings=LIVE,
       title="operations without parameters answer with params left out")
def params_may_be_omitted(ctx: CheckContext) -> None:
    """upp/info (and upp/get_labels when served) called with no `params` member at all must
    answer as with `params: {}`."""
    require_offered(ctx, "upp/info")
    judged = 0
    for op in ("upp/info", "upp/get_labels"):
        if op != "upp/info" and not served(ctx, op):
            continue
        with_empty = call_op(ctx, op, {})
        if not with_empty.ok:
            continue  # the operation itself is judged by its own checks
        judged += 1
        reply = call_op(ctx, op, OMIT)
        if not reply.ok:
            fail(ctx, "upp/params-may-be-omitted", f"{op} without a `params` member was refused, while it answers "
                 f"with `params: {{}}`", reply, "the same result as with params {} (JSON-RPC 2.0 lets params be omitted)")
    if not judged:
        raise NotApplicable("neither upp/info nor upp/get_labels answered with params {} (judged by their own checks)")


@check("upp/l1/unknown-params-ignored", spec="upp", requirements=("upp/unknown-params-ignored",), bindings=LIVE,
       title="an unknown extra parameter is ignored, not refused")
def unknown_params_ignored(ctx: CheckContext) -> None:
    """upp/info and upp/retrieve (for a fresh user) each with an extra member
    `mcf_unknown_extension`: answered as without it (a refusal with -32602 or -32600 fails;
    -32001 for the unknown user is fine)."""
    require_offered(ctx, "upp/info")
    calls = [("upp/info", {"mcf_unknown_extension": True})]
    if served(ctx, "upp/retrieve"):
        calls.append(("upp/retrieve", {"entity_key": fresh_entity("ext"), "query": "name",
                                       "mcf_unknown_extension": {"any": "value"}}))
    for op, params in calls:
        plain = {k: v for k, v in params.items() if k != "mcf_unknown_extension"}
        baseline = call_op(ctx, op, plain)
        reply = call_op(ctx, op, params)
        if reply.error_code in (INVALID_PARAMS, INVALID_REQUEST) and baseline.error_code != reply.error_code:
            fail(ctx, "upp/unknown-params-ignored", f"{op} refused a request for carrying the unknown member "
                 f"`mcf_unknown_extension` (without it: {baseline.describe()})", reply,
                 "the same answer as without the member: extension parameters of other servers are ignored")
