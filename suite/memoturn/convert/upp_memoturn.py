"""UPP StoredEvents ↔ memoturn typed memories (rows: mapping.table()[("upp", "memoturn")] and
[("memoturn", "upp")]).

memoturn → UPP: id and summary (the value) are native; created_at hints created_at, a superseded
memory status "superseded" and superseded_by, a source source_type agent_observed; the package is one
entity_key (--entity-key, else "memoturn"); the rest rides in `extensions.memoturn`. UPP → memoturn:
the value (when not blank) is the summary; created_at, labels and superseded_by hint created_at,
keywords and superseded_by; every event is a fact without topic_key, the rest (and the package's
members) rides in its content.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import carry, mapping, uppside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.common import Ctx, utc_seconds
from memconform.suite.convert.documents import note_lost_fields, record_id
from memconform.suite.convert.home import carried_home
from memconform.suite.memoturn.convert import side as memoturnside

MEMOTURN_TO_UPP = (
    Native("/id", "/id"),
    Native("/summary", "/value"),
)
UPP_TO_MEMOTURN = (
    Native("/value", "/summary", memoturnside.not_blank),
)
#: The event member that is the package's (02 §4: every event belongs to the package's user).
STRUCTURAL = ("/entity_key",)
DEFAULT_ENTITY = "memoturn"


# -- memoturn → UPP ----------------------------------------------------------------------------------

def memoturn_to_upp(document: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    memoturnside.note_lost_envelope(ctx, document)
    records = memoturnside.records(document)
    events: list[dict[str, Any]] = []
    taken: set[str] = set()
    for i, record in enumerate(records):
        rid = record_id("memoturn", record, i)
        note_lost_fields(ctx, record, rid)
        event = carried_home(record, "memoturn", "upp", UPP_TO_MEMOTURN, rid, ctx)
        if event is None or event["id"] in taken:
            event = fresh_event(record, ctx, taken)
        taken.add(event["id"])
        events.append(event)
    carried = carry.carried_document(records, "memoturn", "upp")
    key = uppside.choose_entity_key(ctx, carried, DEFAULT_ENTITY, "memoturn")
    return uppside.package(events, ctx, key, carried)


def fresh_event(record: dict[str, Any], ctx: Ctx, taken: set[str] = frozenset()) -> dict[str, Any]:
    refuse = ["/id"] if record["id"] in taken else []
    native: dict[str, Any] = {}
    moved = carry.move_natives(record, MEMOTURN_TO_UPP, native, refuse)
    eid = native.get("id")
    if eid is None:
        n = 2
        while f"{record['id']}~{n}" in taken:
            n += 1
        eid = f"{record['id']}~{n}"
    successor = record.get("superseded_by")
    event: dict[str, Any] = {
        "id": eid, "entity_key": "", "value": native["value"], "labels": [], "confidence": 1.0,
        "source_type": "agent_observed" if isinstance(record.get("source"), str) else "inferred",
        "status": "superseded" if isinstance(successor, str) else "valid",
        "created_at": memoturnside.rfc3339(record.get("created_at")) or utc_seconds(ctx.now),
        "superseded_by": successor if isinstance(successor, str) else None}
    carry.attach(event, "upp", "memoturn", carry.payload(record, moved=moved, natives=MEMOTURN_TO_UPP, built=event,
                                                         lost=mapping.lost_pointers("memoturn", "upp")))
    return event


# -- UPP → memoturn ----------------------------------------------------------------------------------

def upp_to_memoturn(package: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    part = uppside.document_part(package)
    if not package["events"]:
        ctx.warn("the package has no event: its entity_key and ontology had nothing to travel on")
    entries = []
    for i, event in enumerate(package["events"]):
        rid = record_id("upp", event, i)
        note_lost_fields(ctx, event, rid)
        home = carried_home(event, "upp", "memoturn", MEMOTURN_TO_UPP, rid, ctx)
        record = home if home is not None else fresh_record(event, part, ctx)
        entries.append((record, home is None, event["id"], [event.get("superseded_by")], [], None))
    memoturnside.link(entries)
    return memoturnside.envelope([e[0] for e in entries])


def fresh_record(event: dict[str, Any], part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(event, UPP_TO_MEMOTURN, native)
    created = memoturnside.unix_ms(event.get("created_at"))
    record = memoturnside.fresh("fact", native.get("summary"),
                                created_at=created if created is not None else memoturnside.now_ms(ctx),
                                keywords=memoturnside.keywords_of(event.get("labels")))
    carry.attach(record, "memoturn", "upp", carry.payload(event, moved=moved, natives=UPP_TO_MEMOTURN, built=record,
                                                          lost=mapping.lost_pointers("upp", "memoturn"),
                                                          also_drop=STRUCTURAL, document=part))
    return memoturnside.seal(record)


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("upp", "memoturn"): upp_to_memoturn, ("memoturn", "upp"): memoturn_to_upp}
