"""The shape of a whole document of each format: where its records are, what names a record, and
the accounting every converter does for the fields the table drops."""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import formats, mapping
from memconform.suite.convert.common import Ctx, LostField
from memconform.suite.convert.pointers import has


def records_of(fmt: str, document: Any) -> list[Any]:
    """The records of a (valid) document, in order."""
    return formats.get(fmt).records(document)


def record_id(fmt: str, rec: Any, index: int) -> str:
    """What names a record in messages: its id as its format declares it, else its position."""
    return formats.get(fmt).record_id(rec, index)


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
