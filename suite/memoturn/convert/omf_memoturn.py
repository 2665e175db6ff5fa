"""OMF items ↔ memoturn typed memories (rows: mapping.table()[("omf", "memoturn")] and
[("memoturn", "omf")]).

memoturn → OMF: summary (the content) and id (memd's chunk_id) are native; created_at and a task's
expires_at hint OMF's timestamps, keywords the tags, a superseded memory status "superseded"; the rest
rides in `extensions.memoturn`. OMF → memoturn: content is the summary; created_at and tags hint
created_at and keywords, memd's lifecycle supersedes / superseded_by the supersession fields (as the ids
those chunks became); every item is a fact without topic_key, the rest (and the envelope's members)
rides in its content.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import carry, mapping, omfside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.common import Ctx, as_date_time
from memconform.suite.convert.documents import note_lost_fields, record_id
from memconform.suite.convert.home import carried_home
from memconform.suite.convert.pointers import get
from memconform.suite.memoturn.convert import side as memoturnside

MEMOTURN_TO_OMF = (
    Native("/summary", "/content"),
    Native("/id", "/extensions/memd/chunk_id"),
)
OMF_TO_MEMOTURN = (
    Native("/content", "/summary"),
)


# -- memoturn → OMF ----------------------------------------------------------------------------------

def memoturn_to_omf(document: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    memoturnside.note_lost_envelope(ctx, document)
    records = memoturnside.records(document)
    items = []
    for i, record in enumerate(records):
        rid = record_id("memoturn", record, i)
        note_lost_fields(ctx, record, rid)
        home = carried_home(record, "memoturn", "omf", OMF_TO_MEMOTURN, rid, ctx)
        items.append(home if home is not None else fresh_item(record, ctx))
    return omfside.envelope(items, ctx, carry.carried_document(records, "memoturn", "omf"))


def fresh_item(record: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(record, MEMOTURN_TO_OMF, native)
    item: dict[str, Any] = {"content": native["content"]}
    tags = memoturnside.terms_of(record.get("keywords"))
    if tags:
        item["tags"] = tags
    if record.get("superseded_by") is not None:
        item["status"] = "superseded"
    for name, ms in (("created_at", record.get("created_at")), ("expires_at", record.get("expires_at"))):
        stamp = memoturnside.rfc3339(ms)
        if stamp is not None:
            item[name] = stamp
    item["extensions"] = native["extensions"]
    omfside.new_memd(item, ctx)
    carry.attach(item, "omf", "memoturn", carry.payload(record, moved=moved, natives=MEMOTURN_TO_OMF, built=item,
                                                        lost=mapping.lost_pointers("memoturn", "omf")))
    return omfside.tidy(item)


# -- OMF → memoturn ----------------------------------------------------------------------------------

def omf_to_memoturn(document: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    part = omfside.document_part(document)
    if part and not document["memories"]:
        ctx.warn(f"the envelope's {', '.join(sorted(part))} had no item to travel on")
    entries = []
    for i, item in enumerate(document["memories"]):
        rid = record_id("omf", item, i)
        note_lost_fields(ctx, item, rid)
        home = carried_home(item, "omf", "memoturn", MEMOTURN_TO_OMF, rid, ctx)
        record = home if home is not None else fresh_record(item, part, ctx)
        lifecycle = get(item, "/extensions/memd/lifecycle")
        lifecycle = lifecycle if isinstance(lifecycle, dict) else {}
        entries.append((record, home is None, get(item, "/extensions/memd/chunk_id"),
                        [lifecycle.get("superseded_by")], [lifecycle.get("supersedes")], None))
    memoturnside.link(entries)
    return memoturnside.envelope([e[0] for e in entries])


def fresh_record(item: dict[str, Any], part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(item, OMF_TO_MEMOTURN, native)
    created = memoturnside.unix_ms(as_date_time(item.get("created_at"), ctx.now))
    record = memoturnside.fresh("fact", native["summary"],
                                created_at=created if created is not None else memoturnside.now_ms(ctx),
                                keywords=memoturnside.keywords_of(item.get("tags")))
    carry.attach(record, "memoturn", "omf", carry.payload(item, moved=moved, natives=OMF_TO_MEMOTURN, built=record,
                                                          lost=mapping.lost_pointers("omf", "memoturn"),
                                                          document=part))
    return memoturnside.seal(record)


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("omf", "memoturn"): omf_to_memoturn, ("memoturn", "omf"): memoturn_to_omf}
