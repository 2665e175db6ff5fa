"""UPP on either side of a conversion: the ExportPackage a conversion writes (one entity_key for
every event, ids unique), the envelope members carried on each record, and the user/v1 labels."""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import corpora, validate
from memconform.suite.convert.common import Ctx, utc_seconds
from memconform.suite.convert.formats import Format
from memconform.suite.upp import ontology

#: Package members that are not carried: the events, and exported_at (lost by the table).
NOT_CARRIED = ("events", "exported_at")


def label_names() -> frozenset[str]:
    return ontology.user_v1().label_names


def document_part(package: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in package.items() if k not in NOT_CARRIED}


def package(events: list[dict[str, Any]], ctx: Ctx, entity_key: str, carried: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """The package: every event belongs to `entity_key` (02 §4), ids unique (a repeated id gets a
    suffix, said in a warning)."""
    carried = carried or {}
    seen: set[str] = set()
    for event in events:
        event["entity_key"] = entity_key
        eid = event["id"]
        if eid in seen:
            n = 2
            while f"{eid}~{n}" in seen:
                n += 1
            event["id"] = f"{eid}~{n}"
            ctx.warn(f"event id {eid!r} repeats: the later event is {event['id']!r}")
        seen.add(event["id"])
    pkg: dict[str, Any] = {"entity_key": entity_key,
                           "ontology": carried.get("ontology") if isinstance(carried.get("ontology"), str)
                           and carried.get("ontology") else ontology.USER_V1}
    for key, value in carried.items():
        if key not in NOT_CARRIED and key not in pkg:
            pkg[key] = value
    pkg["events"] = [tidy(e) for e in events]
    pkg["exported_at"] = utc_seconds(ctx.now)
    return pkg


def choose_entity_key(ctx: Ctx, carried: dict[str, Any], fallback: str | None, what: str) -> str:
    if ctx.options.entity_key:
        return ctx.options.entity_key
    key = carried.get("entity_key")
    if isinstance(key, str) and key:
        return key
    if fallback:
        return fallback
    ctx.warn(f"no entity_key given: the package says {what!r} (give --entity-key)")
    return what


def tidy(event: dict[str, Any]) -> dict[str, Any]:
    order = ("id", "entity_key", "value", "labels", "confidence", "source_type", "valid_from", "valid_until",
             "status", "created_at", "superseded_by")
    out = {k: event[k] for k in order if k in event}
    out.update({k: v for k, v in event.items() if k not in out})
    return out


def _event_problems(event: Any) -> list[str]:
    # an event is judged without its package: the entity_key lives on the package
    return validate.upp_event_problems({**event, "entity_key": "-"})


FORMAT = Format(
    "upp", label="UPP", version="1.0.0", record="event", carrier="/extensions",
    record_fields=("/id", "/entity_key", "/value", "/labels", "/confidence", "/source_type", "/valid_from",
                   "/valid_until", "/status", "/created_at", "/superseded_by", "/*"),
    document_fields=("document:/entity_key", "document:/ontology", "document:/exported_at", "document:/*"),
    envelope=("events",),
    problems=validate.upp_problems, record_problems=_event_problems, corpus=corpora.upp_corpus,
    # no `tidy`: a restored event is left as carried, `package` orders every event when it builds the package
    records_member="events",
    # UPP has no extension of its own: .upp.json is memconform's
    extensions=(".upp.json",), extensions_help=".upp.json", tenant_help="UPP entity_key",
)
