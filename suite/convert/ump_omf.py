"""UMP records ↔ OMF items (rows: mapping.table()[("ump", "omf")] and [("omf", "ump")]).

UMP → OMF: text, id, creation time and project are native; everything else of the record rides in
`extensions.ump`. OMF → UMP: content, chunk_id (when it is a UMP id), created_at (when a date-time)
and project_id are native; the rest of the item rides in `body.structured["x-extensions"].omf`,
the only open object a UMP record has.
"""

from __future__ import annotations

import re
from typing import Any

from memconform.suite.convert import carry, mapping, omfside, umpside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.home import carried_home
from memconform.suite.convert.common import UMP_ID, Ctx, LostField, as_date_time, ump_id_for
from memconform.suite.convert.documents import note_lost_fields, policy_row, record_id
from memconform.suite.convert.pointers import get
from memconform.suite.formats import is_date_time


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_ump_id(value: Any) -> bool:
    return isinstance(value, str) and UMP_ID.fullmatch(value) is not None


UMP_TO_OMF = (
    Native("/id", "/extensions/memd/chunk_id"),
    Native("/body/text", "/content"),
    Native("/scope/project", "/extensions/memd/project_id", _is_str),
    Native("/time/created", "/created_at", _is_str),
)
OMF_TO_UMP = (
    Native("/content", "/body/text"),
    Native("/created_at", "/time/created", is_date_time),
    Native("/extensions/memd/chunk_id", "/id", _is_ump_id),
    Native("/extensions/memd/project_id", "/scope/project", _is_str),
)


def blank(text: Any) -> bool:
    # The OMF schema's own test (pattern "\S"): whitespace only is blank.
    return not isinstance(text, str) or re.search(r"\S", text) is None


# -- UMP → OMF ---------------------------------------------------------------------------------------

def ump_to_omf(records: list[Any], ctx: Ctx) -> dict[str, Any]:
    items, leaving = [], []
    for i, original, rec in umpside.exportable(records, ctx):
        rid = record_id("ump", rec, i)
        if blank(get(rec, "/body/text")):
            row = policy_row(ctx, "@blank-text")
            ctx.lost.append(LostField(rid, "/body/text", row.id, row.note))
            continue
        note_lost_fields(ctx, original, rid)
        items.append(item_from_record(rec, rid, ctx))
        leaving.append(rec)
    return omfside.envelope(items, ctx, carry.carried_document(leaving, "ump", "omf"))


def item_from_record(rec: dict[str, Any], rid: str, ctx: Ctx) -> dict[str, Any]:
    home = carried_home(rec, "ump", "omf", OMF_TO_UMP, rid, ctx)
    return home if home is not None else fresh_item(rec, ctx)


def fresh_item(rec: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(rec, UMP_TO_OMF, native)
    item: dict[str, Any] = {"content": native["content"]}
    status = _status_hint(rec)
    if status:
        item["status"] = status
    if "created_at" in native:
        item["created_at"] = native["created_at"]
    item["extensions"] = native.get("extensions", {})
    omfside.new_memd(item, ctx)
    carry.attach(item, "omf", "ump", carry.payload(rec, moved=moved, natives=UMP_TO_OMF, built=item,
                                                   lost=mapping.lost_pointers("ump", "omf")))
    return omfside.tidy(item)


def _status_hint(rec: dict[str, Any]) -> str | None:
    # OMF's archival vocabulary: "archived" is skipped by an import with include_archived=false,
    # "superseded" is what memd itself writes for a replaced chunk.
    if get(rec, "/lifecycle/status") == "tombstoned":
        return "archived"
    if rec.get("superseded_by"):
        return "superseded"
    return None


# -- OMF → UMP ---------------------------------------------------------------------------------------

def omf_to_ump(document: dict[str, Any], ctx: Ctx) -> list[dict[str, Any]]:
    part = omfside.document_part(document)
    if part and not document["memories"]:
        ctx.warn(f"the envelope's {', '.join(sorted(part))} had no item to travel on")
    records = []
    for i, item in enumerate(document["memories"]):
        rid = record_id("omf", item, i)
        note_lost_fields(ctx, item, rid)
        records.append(record_from_item(item, rid, part, ctx))
    _warn_repeated_ids(records, ctx)
    return umpside.finish(records, ctx)


def record_from_item(item: dict[str, Any], rid: str, part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    home = carried_home(item, "omf", "ump", UMP_TO_OMF, rid, ctx)
    return home if home is not None else fresh_record(item, part, ctx)


def fresh_record(item: dict[str, Any], part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(item, OMF_TO_UMP, native)
    owner = umpside.owner(ctx, ctx.options.tenant)
    chunk = get(item, "/extensions/memd/chunk_id")
    scope: dict[str, Any] = {"owner": owner}
    if "project" in native.get("scope", {}):
        scope["project"] = native["scope"]["project"]
    scope["visibility"] = "private"
    rec: dict[str, Any] = {
        "ump": umpside.UMP_VERSION,
        "id": native.get("id") or ump_id_for("omf", chunk) or "",
        "kind": "semantic",
        "body": {"text": native["body"]["text"]},
        "scope": scope,
        "time": {"created": get(native, "/time/created") if "time" in native
                 else as_date_time(item.get("created_at"), ctx.now)},
    }
    _lifecycle_hints(item, rec)
    rec["provenance"] = umpside.provenance(owner, "omf", chunk)
    carry.attach(rec, "ump", "omf", carry.payload(item, moved=moved, natives=OMF_TO_UMP, built=rec,
                                                  lost=mapping.lost_pointers("omf", "ump"), document=part))
    return umpside.with_content_id(rec) if not rec["id"] else rec


def _lifecycle_hints(item: dict[str, Any], rec: dict[str, Any]) -> None:
    lc = get(item, "/extensions/memd/lifecycle")
    lc = lc if isinstance(lc, dict) else {}
    status = {"draft": "candidate", "expired": "tombstoned", "deleted": "tombstoned",
              "error": "tombstoned"}.get(lc.get("status"))
    if status is None and lc.get("status") is None and item.get("status") in ("archived", "expired"):
        status = "tombstoned"
    if status:
        rec["lifecycle"] = {"status": status}
    # Supersession edges name chunk ids; a chunk's UMP id is derived the same way everywhere, so
    # the edge lands on the record that chunk became.
    for edge in ("supersedes", "superseded_by"):
        target = ump_id_for("omf", lc.get(edge))
        if target:
            rec[edge] = [target]


def _warn_repeated_ids(records: list[dict[str, Any]], ctx: Ctx) -> None:
    seen: set[str] = set()
    for rec in records:
        if rec["id"] in seen:
            ctx.warn(f"two records have the id {rec['id']} (their items share a chunk_id or are identical)")
        seen.add(rec["id"])


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("ump", "omf"): ump_to_omf, ("omf", "ump"): omf_to_ump}
