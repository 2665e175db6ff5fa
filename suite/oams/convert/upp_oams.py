"""UPP StoredEvents ↔ OAMS memories (rows: mapping.table()[("upp", "oams")] and [("oams", "upp")]).

UPP → OAMS: id (the key), value, labels (tags), confidence and created_at (when UTC) are native; the
namespace is the package's: <entity_key, hashed unless a token>:<the ontology as a scope>; the rest
of the event rides in the memory's `metadata["x-extensions"].upp`, with the package's members. OAMS
→ UPP: key, value, tags (when all user/v1 labels), confidence and created_at are native; the package
is one entity_key (--entity-key, else the first memory's owner-hash); the rest of the memory rides in
the event's `extensions.oams`.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import carry, mapping, uppside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.common import Ctx
from memconform.suite.convert.documents import note_lost_fields, record_id
from memconform.suite.convert.home import carried_home
from memconform.suite.oams import model as oams_model
from memconform.suite.oams.convert import side as oamsside


def _is_utc(value: Any) -> bool:
    return oams_model.parse_time(value) is not None


def _all_labels(value: Any) -> bool:
    names = uppside.label_names()
    return isinstance(value, list) and all(isinstance(t, str) and t in names for t in value)


UPP_TO_OAMS = (
    Native("/id", "/key"),
    Native("/value", "/value"),
    Native("/labels", "/tags"),
    Native("/confidence", "/metadata/confidence"),
    Native("/created_at", "/created_at", _is_utc),
)
OAMS_TO_UPP = (
    Native("/key", "/id"),
    Native("/value", "/value"),
    Native("/tags", "/labels", _all_labels),
    Native("/metadata/confidence", "/confidence"),
    Native("/created_at", "/created_at"),
)
#: The event member that is the package's (02 §4: every event belongs to the package's user).
STRUCTURAL = ("/entity_key",)


# -- UPP → OAMS --------------------------------------------------------------------------------------

def upp_to_oams(package: dict[str, Any], ctx: Ctx) -> list[dict[str, Any]]:
    part = uppside.document_part(package)
    if not package["events"]:
        ctx.warn("the package has no event: its entity_key and ontology had nothing to travel on")
    ns = oamsside.namespace(package["entity_key"], package["ontology"], "upp")
    memories: list[dict[str, Any]] = []
    taken: set[tuple[str, str]] = set()
    for i, event in enumerate(package["events"]):
        rid = record_id("upp", event, i)
        note_lost_fields(ctx, event, rid)
        memory = carried_home(event, "upp", "oams", OAMS_TO_UPP, rid, ctx)
        if memory is None or (memory["namespace"], memory["key"]) in taken:
            memory = fresh_memory(event, ns, part, taken, ctx)
        taken.add((memory["namespace"], memory["key"]))
        memories.append(memory)
    return memories


def fresh_memory(event: dict[str, Any], ns: str, part: dict[str, Any], taken: set[tuple[str, str]],
                 ctx: Ctx) -> dict[str, Any]:
    key = oamsside.unique_key(ns, event["id"], taken)
    native: dict[str, Any] = {}
    moved = carry.move_natives(event, UPP_TO_OAMS, native, refuse=["/id"] if key != event["id"] else [])
    created = native.get("created_at") or oamsside.utc(event["created_at"]) or oams_model.now()
    memory: dict[str, Any] = {"key": key, "namespace": ns, "value": native["value"], "tags": native["tags"],
                              "metadata": native["metadata"], "created_at": created, "updated_at": created}
    carry.attach(memory, "oams", "upp", carry.payload(event, moved=moved, natives=UPP_TO_OAMS, built=memory,
                                                      lost=mapping.lost_pointers("upp", "oams"),
                                                      also_drop=STRUCTURAL, document=part))
    return oamsside.tidy(memory)


# -- OAMS → UPP --------------------------------------------------------------------------------------

def oams_to_upp(memories: list[Any], ctx: Ctx) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    taken: set[str] = set()
    owners: list[str] = []
    for i, memory in enumerate(memories):
        rid = record_id("oams", memory, i)
        note_lost_fields(ctx, memory, rid)
        event = carried_home(memory, "oams", "upp", UPP_TO_OAMS, rid, ctx)
        if event is None or event["id"] in taken:
            event = fresh_event(memory, taken)
        taken.add(event["id"])
        events.append(event)
        owners.append(oams_model.owner_of(memory["namespace"]))
    carried = carry.carried_document(memories, "oams", "upp")
    key = uppside.choose_entity_key(ctx, carried, owners[0] if owners else None, "oams")
    if len(set(owners)) > 1 and not ctx.options.entity_key and not carried.get("entity_key"):
        ctx.warn(f"the memories have {len(set(owners))} owners; the package is {key!r}'s (each memory's "
                 f"namespace travels in its extension; --entity-key chooses)")
    return uppside.package(events, ctx, key, carried)


def fresh_event(memory: dict[str, Any], taken: set[str] = frozenset()) -> dict[str, Any]:
    # A key an earlier memory took (keys are unique per namespace, ids per package) stays in the
    # extension: the event gets the first free "<key>~n".
    refuse = ["/key"] if memory["key"] in taken else []
    native: dict[str, Any] = {}
    moved = carry.move_natives(memory, OAMS_TO_UPP, native, refuse)
    eid = native.get("id")
    if eid is None:
        n = 2
        while f"{memory['key']}~{n}" in taken:
            n += 1
        eid = f"{memory['key']}~{n}"
    labels = native["labels"] if "labels" in native else _labels_among(memory.get("tags"))
    event: dict[str, Any] = {"id": eid, "entity_key": "", "value": native["value"], "labels": labels,
                             "confidence": native.get("confidence", 1.0), "source_type": "inferred",
                             "status": "valid", "created_at": native["created_at"], "superseded_by": None}
    carry.attach(event, "upp", "oams", carry.payload(memory, moved=moved, natives=OAMS_TO_UPP, built=event,
                                                     lost=mapping.lost_pointers("oams", "upp")))
    return event


def _labels_among(tags: Any) -> list[str]:
    names = uppside.label_names()
    return list(dict.fromkeys(t for t in tags if isinstance(t, str) and t in names)) if isinstance(tags, list) else []


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("upp", "oams"): upp_to_oams, ("oams", "upp"): oams_to_upp}
