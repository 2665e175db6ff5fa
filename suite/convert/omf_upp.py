"""OMF items ↔ UPP StoredEvents (rows: mapping.table()[("omf", "upp")] and [("upp", "omf")]).

OMF → UPP: content, chunk_id, created_at (when a date-time) and tags (when all are user/v1 labels)
are native; the rest of the item rides in the event's `extensions.omf`. UPP → OMF: value, id,
labels and created_at are native; the rest of the event rides in `extensions.upp`, with the
package's members.
"""

from __future__ import annotations

import base64
from typing import Any

import blake3

from memconform.suite.convert import carry, mapping, omfside, uppside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.home import carried_home
from memconform.suite.convert.common import Ctx, LostField, as_date_time
from memconform.suite.convert.documents import note_lost_fields, policy_row, record_id
from memconform.suite.convert.pointers import get
from memconform.suite.convert.ump_omf import blank
from memconform.suite.formats import is_date_time


def _non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _all_labels(value: Any) -> bool:
    names = uppside.label_names()
    return isinstance(value, list) and all(isinstance(t, str) and t in names for t in value)


OMF_TO_UPP = (
    Native("/content", "/value"),
    Native("/extensions/memd/chunk_id", "/id", _non_empty_str),
    Native("/created_at", "/created_at", is_date_time),
    Native("/tags", "/labels", _all_labels),
)
UPP_TO_OMF = (
    Native("/id", "/extensions/memd/chunk_id"),
    Native("/value", "/content"),
    Native("/labels", "/tags"),
    Native("/created_at", "/created_at"),
)
STRUCTURAL = ("/entity_key",)


# -- OMF → UPP ---------------------------------------------------------------------------------------

def omf_to_upp(document: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    part = omfside.document_part(document)
    if part and not document["memories"]:
        ctx.warn(f"the envelope's {', '.join(sorted(part))} had no item to travel on")
    events: list[dict[str, Any]] = []
    taken: set[str] = set()
    for i, item in enumerate(document["memories"]):
        rid = record_id("omf", item, i)
        note_lost_fields(ctx, item, rid)
        event = event_from_item(item, i, rid, part, taken, ctx)
        taken.add(event["id"])
        events.append(event)
    carried = carry.carried_document(document["memories"], "omf", "upp")
    key = uppside.choose_entity_key(ctx, carried, ctx.options.tenant, "omf")
    return uppside.package(events, ctx, key, carried)


def event_from_item(item: dict[str, Any], index: int, rid: str, part: dict[str, Any], taken: set[str],
                    ctx: Ctx) -> dict[str, Any]:
    home = carried_home(item, "omf", "upp", UPP_TO_OMF, rid, ctx)
    return home if home is not None else fresh_event(item, index, part, taken, ctx)


def fresh_event(item: dict[str, Any], index: int, part: dict[str, Any], taken: set[str], ctx: Ctx) -> dict[str, Any]:
    chunk = get(item, "/extensions/memd/chunk_id")
    # A chunk_id an earlier item took stays in the extension: two events must not share an id.
    refuse = ["/extensions/memd/chunk_id"] if chunk in taken else []
    native: dict[str, Any] = {}
    moved = carry.move_natives(item, OMF_TO_UPP, native, refuse)
    status, by = _status_hint(item)
    eid = native.get("id") or _derived_id(index, chunk, item["content"])
    event: dict[str, Any] = {
        "id": eid, "entity_key": "", "value": native["value"],
        "labels": native["labels"] if "labels" in native else _labels_among(item.get("tags")),
        "confidence": 1.0, "source_type": "inferred", "status": status,
        "created_at": native.get("created_at") or as_date_time(item.get("created_at"), ctx.now),
        "superseded_by": by if by != eid else None,
    }
    carry.attach(event, "upp", "omf", carry.payload(item, moved=moved, natives=OMF_TO_UPP, built=event,
                                                    lost=mapping.lost_pointers("omf", "upp"), document=part))
    return event


def _labels_among(tags: Any) -> list[str]:
    names = uppside.label_names()
    return list(dict.fromkeys(t for t in tags if isinstance(t, str) and t in names)) if isinstance(tags, list) else []


def _status_hint(item: dict[str, Any]) -> tuple[str, str | None]:
    lc = get(item, "/extensions/memd/lifecycle")
    lc = lc if isinstance(lc, dict) else {}
    status = lc.get("status")
    if status in ("superseded", "expired", "deleted", "error") or (
            status is None and item.get("status") in ("superseded", "expired", "archived")):
        by = lc.get("superseded_by")
        # the chunk id is the id that chunk became (chunk_id → id is native)
        return "superseded", by if isinstance(by, str) and by else None
    return ("staged" if status == "draft" else "valid"), None


def _derived_id(index: int, chunk: Any, content: str) -> str:
    digest = blake3.blake3(f"{index}:{chunk!r}:{content}".encode("utf-8", "surrogatepass")).digest()
    return "omf_" + base64.b32encode(digest).decode("ascii").rstrip("=").lower()[:26]


# -- UPP → OMF ---------------------------------------------------------------------------------------

def upp_to_omf(package: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    part = uppside.document_part(package)
    if not package["events"]:
        ctx.warn("the package has no event: its entity_key and ontology had nothing to travel on")
    items, leaving = [], []
    for i, event in enumerate(package["events"]):
        rid = record_id("upp", event, i)
        if blank(event["value"]):
            row = policy_row(ctx, "@blank-text")
            ctx.lost.append(LostField(rid, "/value", row.id, row.note))
            continue
        note_lost_fields(ctx, event, rid)
        items.append(item_from_event(event, rid, part, ctx))
        leaving.append(event)
    return omfside.envelope(items, ctx, carry.carried_document(leaving, "upp", "omf"))


def item_from_event(event: dict[str, Any], rid: str, part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    home = carried_home(event, "upp", "omf", OMF_TO_UPP, rid, ctx)
    return home if home is not None else fresh_item(event, part, ctx)


def fresh_item(event: dict[str, Any], part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(event, UPP_TO_OMF, native)
    item: dict[str, Any] = {"content": native["content"], "tags": native["tags"]}
    if event["status"] == "superseded":
        item["status"] = "superseded"   # what memd writes for a replaced chunk
    item["created_at"] = native["created_at"]
    item["extensions"] = native["extensions"]
    omfside.new_memd(item, ctx)
    carry.attach(item, "omf", "upp", carry.payload(event, moved=moved, natives=UPP_TO_OMF, built=item,
                                                   lost=mapping.lost_pointers("upp", "omf"),
                                                   also_drop=STRUCTURAL, document=part))
    return omfside.tidy(item)


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("omf", "upp"): omf_to_upp, ("upp", "omf"): upp_to_omf}
