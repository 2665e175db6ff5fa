"""OMF on either side of a conversion: the envelope a converted document gets (the converter is its
producer, so memd's trust gate never honours lifecycle claims that came through another format),
the envelope members carried on each record, and memd's namespace on a new item."""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import corpora, validate
from memconform.suite.convert.common import CONVERTER_APP, Ctx, utc_seconds
from memconform.suite.convert.formats import Format
from memconform.suite.omf.vocabulary import MEMD_EXT_VERSION, VERSION

#: Envelope members that are not carried: structure, or lost by the table (source, exported_at).
NOT_CARRIED = ("omf", "memories", "source", "exported_at")


def envelope(items: list[dict[str, Any]], ctx: Ctx, carried: dict[str, Any] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"omf": VERSION, "exported_at": utc_seconds(ctx.now), "source": {"app": CONVERTER_APP}}
    for key, value in (carried or {}).items():
        if key not in NOT_CARRIED:
            doc[key] = value
    doc["memories"] = items
    return doc


def document_part(document: dict[str, Any]) -> dict[str, Any]:
    """What an OMF envelope gives every record converted out of it."""
    return {k: v for k, v in document.items() if k not in NOT_CARRIED}


def new_memd(item: dict[str, Any], ctx: Ctx) -> None:
    """memd's namespace on a new item: v, the chunk_id and project_id the mapped fields wrote, the
    --project default. No lifecycle block: memd ignores one from a producer that is not memd."""
    ext = item.setdefault("extensions", {})
    memd = ext.setdefault("memd", {})
    ordered = {"v": MEMD_EXT_VERSION, **memd}
    if "project_id" not in ordered and ctx.options.project is not None:
        ordered["project_id"] = ctx.options.project
    ext["memd"] = ordered


def tidy(item: dict[str, Any]) -> dict[str, Any]:
    order = ("content", "category", "tags", "status", "created_at", "updated_at", "expires_at", "extensions")
    out = {k: item[k] for k in order if k in item}
    out.update({k: v for k, v in item.items() if k not in out})
    return out


FORMAT = Format(
    "omf", label="OMF", version=VERSION, record="item", carrier="/extensions",
    record_fields=("/content", "/category", "/tags", "/status", "/created_at", "/updated_at", "/expires_at",
                   "/extensions/memd/v", "/extensions/memd/chunk_id", "/extensions/memd/project_id",
                   "/extensions/memd/chunk_type", "/extensions/memd/ingestion_mode", "/extensions/memd/lifecycle",
                   "/extensions/memd/*", "/extensions/*", "/*"),
    # the format version member `omf` is not data
    document_fields=("document:/exported_at", "document:/source", "document:/*"), envelope=("omf", "memories"),
    problems=validate.omf_problems, record_problems=validate.omf_item_problems, corpus=corpora.omf_corpus,
    records_member="memories", id_pointer="/extensions/memd/chunk_id", tidy=tidy,
    extensions=(".omf.json",), extensions_help=".omf.json",
)
