"""The shape of a whole document of each format: where its records are, what names a record, and
the accounting every converter does for the fields the table drops."""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import mapping
from memconform.suite.convert.common import Ctx, LostField
from memconform.suite.convert.pointers import get, has


def records_of(fmt: str, document: Any) -> list[Any]:
    """The records of a (valid) document, in order."""
    if fmt in ("ump", "oams"):
        return list(document)
    if fmt == "memoturn" and isinstance(document, list):
        return list(document)
    return list(document["memories"] if fmt in ("omf", "memoturn") else document["events"])


def record_id(fmt: str, rec: Any, index: int) -> str:
    """What names a record in messages: the UMP / UPP id, the OMF chunk_id, the OAMS namespace/key,
    else its position."""
    if fmt == "oams" and isinstance(rec, dict) and isinstance(rec.get("key"), str):
        return f"{rec.get('namespace')}/{rec['key']}"
    found = {"ump": "/id", "omf": "/extensions/memd/chunk_id", "upp": "/id", "oams": "/key", "memoturn": "/id"}[fmt]
    value = get(rec, found)
    if isinstance(value, str) and value:
        return value
    return f"{'/memories' if fmt in ('omf', 'memoturn') else '/events' if fmt == 'upp' else ''}/{index}"


def note_lost_fields(ctx: Ctx, rec: Any, rid: str) -> None:
    """Record every field of `rec` the pair's table drops (policy rows are the converters' own)."""
    for row in mapping.rows(ctx.source, ctx.target):
        if row.promised or not row.field.startswith("/"):
            continue
        if has(rec, row.field):
            ctx.lost.append(LostField(rid, row.field, row.id, row.note))


def note_lost_document(ctx: Ctx, document: Any) -> None:
    for row in mapping.rows(ctx.source, ctx.target):
        if not row.promised and row.is_document and has(document, row.pointer):
            ctx.lost.append(LostField("", row.field, row.id, row.note))


def policy_row(ctx: Ctx, name: str) -> mapping.Row:
    return mapping.pair(ctx.source, ctx.target).row(name)
