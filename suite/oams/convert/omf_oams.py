"""OMF items ↔ OAMS memories (rows: mapping.table()[("omf", "oams")] and [("oams", "omf")]).

OMF → OAMS: content, chunk_id (the key), tags and the timestamps (when RFC 3339 UTC) are native; the
namespace is derived (owner-hash: --tenant, else "omf"; scope: memd's project_id); the rest of the
item rides in the memory's `metadata["x-extensions"].omf`, with the envelope's members. OAMS → OMF:
value, key, tags, created_at and updated_at are native, the namespace's scope hints memd's
project_id; the rest of the memory rides in the item's `extensions.oams`.
"""

from __future__ import annotations

import base64
from typing import Any

import blake3

from memconform.suite.convert import carry, mapping, omfside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.common import Ctx, LostField, as_date_time
from memconform.suite.convert.documents import note_lost_fields, policy_row, record_id
from memconform.suite.convert.home import carried_home
from memconform.suite.convert.pointers import get
from memconform.suite.convert.ump_omf import blank
from memconform.suite.oams import model as oams_model
from memconform.suite.oams.convert import side as oamsside


def _non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _is_utc(value: Any) -> bool:
    return oams_model.parse_time(value) is not None


OMF_TO_OAMS = (
    Native("/content", "/value"),
    Native("/extensions/memd/chunk_id", "/key", _non_empty_str),
    Native("/tags", "/tags"),
    Native("/created_at", "/created_at", _is_utc),
    Native("/updated_at", "/updated_at", _is_utc),
)
OAMS_TO_OMF = (
    Native("/value", "/content"),
    Native("/key", "/extensions/memd/chunk_id"),
    Native("/tags", "/tags"),
    Native("/created_at", "/created_at"),
    Native("/updated_at", "/updated_at"),
)
#: The owner-hash of a namespace when --tenant does not name the owner.
DEFAULT_OWNER = "omf"


# -- OMF → OAMS --------------------------------------------------------------------------------------

def omf_to_oams(document: dict[str, Any], ctx: Ctx) -> list[dict[str, Any]]:
    part = omfside.document_part(document)
    if part and not document["memories"]:
        ctx.warn(f"the envelope's {', '.join(sorted(part))} had no item to travel on")
    memories: list[dict[str, Any]] = []
    taken: set[tuple[str, str]] = set()
    for i, item in enumerate(document["memories"]):
        rid = record_id("omf", item, i)
        note_lost_fields(ctx, item, rid)
        memory = carried_home(item, "omf", "oams", OAMS_TO_OMF, rid, ctx)
        if memory is None or (memory["namespace"], memory["key"]) in taken:
            memory = fresh_memory(item, i, part, taken, ctx)
        taken.add((memory["namespace"], memory["key"]))
        memories.append(memory)
    return memories


def fresh_memory(item: dict[str, Any], index: int, part: dict[str, Any], taken: set[tuple[str, str]],
                 ctx: Ctx) -> dict[str, Any]:
    ns = oamsside.namespace(ctx.options.tenant or DEFAULT_OWNER, get(item, "/extensions/memd/project_id"), "omf")
    chunk = get(item, "/extensions/memd/chunk_id")
    refuse = []
    if _non_empty_str(chunk) and (ns, chunk) in taken:
        refuse.append("/extensions/memd/chunk_id")
    created = item.get("created_at") if _is_utc(item.get("created_at")) else (
        oamsside.utc(as_date_time(item.get("created_at"), ctx.now)) or oams_model.now())
    updated = item.get("updated_at")
    if not _is_utc(updated) or oams_model.parse_time(updated) < oams_model.parse_time(created):
        refuse.append("/updated_at")   # §2: updated_at is not before created_at
    native: dict[str, Any] = {}
    moved = carry.move_natives(item, OMF_TO_OAMS, native, refuse)
    key = native.get("key") or oamsside.unique_key(ns, _derived_key(index, chunk, item["content"]), taken)
    memory: dict[str, Any] = {"key": key, "namespace": ns, "value": native["value"]}
    if "tags" in native:
        memory["tags"] = native["tags"]
    memory["metadata"] = {}
    memory["created_at"] = created
    memory["updated_at"] = native.get("updated_at", created)
    carry.attach(memory, "oams", "omf", carry.payload(item, moved=moved, natives=OMF_TO_OAMS, built=memory,
                                                      lost=mapping.lost_pointers("omf", "oams"), document=part))
    return oamsside.tidy(memory)


def _derived_key(index: int, chunk: Any, content: str) -> str:
    digest = blake3.blake3(f"{index}:{chunk!r}:{content}".encode("utf-8", "surrogatepass")).digest()
    return "omf-" + base64.b32encode(digest).decode("ascii").rstrip("=").lower()[:26]


# -- OAMS → OMF --------------------------------------------------------------------------------------

def oams_to_omf(memories: list[Any], ctx: Ctx) -> dict[str, Any]:
    items, leaving = [], []
    for i, memory in enumerate(memories):
        rid = record_id("oams", memory, i)
        if blank(memory["value"]):
            row = policy_row(ctx, "@blank-text")
            ctx.lost.append(LostField(rid, "/value", row.id, row.note))
            continue
        note_lost_fields(ctx, memory, rid)
        home = carried_home(memory, "oams", "omf", OMF_TO_OAMS, rid, ctx)
        items.append(home if home is not None else fresh_item(memory, ctx))
        leaving.append(memory)
    return omfside.envelope(items, ctx, carry.carried_document(leaving, "oams", "omf"))


def fresh_item(memory: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(memory, OAMS_TO_OMF, native)
    item: dict[str, Any] = {"content": native["content"]}
    for name in ("tags", "created_at", "updated_at"):
        if name in native:
            item[name] = native[name]
    item["extensions"] = native["extensions"]
    _owner, scope = oams_model.split_namespace(memory["namespace"])
    if scope:
        item["extensions"]["memd"]["project_id"] = scope
    omfside.new_memd(item, ctx)
    carry.attach(item, "omf", "oams", carry.payload(memory, moved=moved, natives=OAMS_TO_OMF, built=item,
                                                    lost=mapping.lost_pointers("oams", "omf")))
    return omfside.tidy(item)


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("omf", "oams"): omf_to_oams, ("oams", "omf"): oams_to_omf}
