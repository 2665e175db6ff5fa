"""UMP records ↔ UPP StoredEvents (rows: mapping.table()[("ump", "upp")] and [("upp", "ump")]).

UMP → UPP: id, text, creation time, validity window and confidence are native; the rest of the
record rides in the event's `extensions.ump`. The package belongs to one entity_key; each record's
own scope travels with it. UPP → UMP: value, id (when a UMP id), confidence, validity window and
creation time are native, the entity_key becomes the subject; the rest of the event rides in
`body.structured["x-extensions"].upp`, with the package's members.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import carry, mapping, umpside, uppside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.home import carried_home
from memconform.suite.convert.common import UMP_ID, Ctx, parse_instant, ump_id_for
from memconform.suite.convert.documents import note_lost_fields, record_id
from memconform.suite.convert.pointers import get


def _is_ump_id(value: Any) -> bool:
    return isinstance(value, str) and UMP_ID.fullmatch(value) is not None


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


UMP_TO_UPP = (
    Native("/id", "/id"),
    Native("/body/text", "/value"),
    Native("/time/created", "/created_at"),
    Native("/time/valid_from", "/valid_from"),
    Native("/time/valid_to", "/valid_until"),
    Native("/lifecycle/confidence", "/confidence"),
)
UPP_TO_UMP = (
    Native("/id", "/id", _is_ump_id),
    Native("/value", "/body/text"),
    Native("/confidence", "/lifecycle/confidence"),
    Native("/valid_from", "/time/valid_from", _is_str),
    Native("/valid_until", "/time/valid_to"),
    Native("/created_at", "/time/created"),
)
#: The event member that is the package's (02 §4: every event belongs to the package's user).
STRUCTURAL = ("/entity_key",)
_SOURCE_TYPE = {"user": "user_stated", "agent": "agent_observed"}


# -- UMP → UPP ---------------------------------------------------------------------------------------

def ump_to_upp(records: list[Any], ctx: Ctx) -> dict[str, Any]:
    events, leaving, subjects = [], [], []
    taken: set[str] = set()
    for i, original, rec in umpside.exportable(records, ctx):
        rid = record_id("ump", rec, i)
        note_lost_fields(ctx, original, rid)
        events.append(event_from_record(rec, rid, taken, ctx))
        taken.add(events[-1]["id"])
        leaving.append(rec)
        subjects.append(subject(rec))
    carried = carry.carried_document(leaving, "ump", "upp")
    key = uppside.choose_entity_key(ctx, carried, subjects[0] if subjects else None, "ump")
    if len(set(subjects)) > 1 and not ctx.options.entity_key and not carried.get("entity_key"):
        ctx.warn(f"the records have {len(set(subjects))} subjects; the package is {key!r}'s "
                 f"(each record's own scope travels in its extension; --entity-key chooses)")
    return uppside.package(events, ctx, key, carried)


def subject(rec: dict[str, Any]) -> str:
    scope = rec["scope"]
    return scope.get("user") or scope["owner"]


def event_from_record(rec: dict[str, Any], rid: str, taken: set[str], ctx: Ctx) -> dict[str, Any]:
    home = carried_home(rec, "ump", "upp", UPP_TO_UMP, rid, ctx)
    return home if home is not None else fresh_event(rec, ctx, taken)


def fresh_event(rec: dict[str, Any], ctx: Ctx, taken: set[str] = frozenset()) -> dict[str, Any]:
    # An id an earlier record took stays in the extension (two events must not share an id; a UMP
    # list may repeat one): the event gets the first free "<id>~n".
    refuse = ["/id"] if rec["id"] in taken else []
    native: dict[str, Any] = {}
    moved = carry.move_natives(rec, UMP_TO_UPP, native, refuse)
    status, by = _status_hint(rec)
    event: dict[str, Any] = {
        "id": native.get("id") or _free(rec["id"], taken), "entity_key": "", "value": native["value"], "labels": [],
        "confidence": native.get("confidence", 1.0),
        "source_type": _SOURCE_TYPE.get(get(rec, "/provenance/actor_kind"), "inferred"),
        **{k: native[k] for k in ("valid_from", "valid_until") if k in native},
        "status": status, "created_at": native["created_at"], "superseded_by": by,
    }
    carry.attach(event, "upp", "ump", carry.payload(rec, moved=moved, natives=UMP_TO_UPP, built=event,
                                                    lost=mapping.lost_pointers("ump", "upp")))
    return event


def _free(eid: str, taken: set[str]) -> str:
    n = 2
    while f"{eid}~{n}" in taken:
        n += 1
    return f"{eid}~{n}"


def _status_hint(rec: dict[str, Any]) -> tuple[str, str | None]:
    successors = rec.get("superseded_by") or []
    if successors:
        first = successors[0]
        return "superseded", first if first != rec["id"] else None
    lc_status = get(rec, "/lifecycle/status")
    if lc_status == "tombstoned":
        return "superseded", None   # UPP has no tombstone: superseded is "retained for audit trail"
    return ("staged" if lc_status == "candidate" else "valid"), None


# -- UPP → UMP ---------------------------------------------------------------------------------------

def upp_to_ump(package: dict[str, Any], ctx: Ctx) -> list[dict[str, Any]]:
    part = uppside.document_part(package)
    if not package["events"]:
        ctx.warn("the package has no event: its entity_key and ontology had nothing to travel on")
    records = []
    for i, event in enumerate(package["events"]):
        rid = record_id("upp", event, i)
        note_lost_fields(ctx, event, rid)
        records.append(record_from_event(event, rid, package["entity_key"], part, ctx))
    return umpside.finish(records, ctx)


def record_from_event(event: dict[str, Any], rid: str, key: str, part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    home = carried_home(event, "upp", "ump", UMP_TO_UPP, rid, ctx)
    return home if home is not None else fresh_record(event, key, part, ctx)


def fresh_record(event: dict[str, Any], key: str, part: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    refuse = ["/valid_until"] if _ends_before_start(event) else []
    moved = carry.move_natives(event, UPP_TO_UMP, native, refuse)
    owner = umpside.owner(ctx, key)
    scope = {"owner": owner, **({"user": key} if key != owner else {}), "visibility": "private"}
    time = native["time"]
    rec: dict[str, Any] = {
        "ump": umpside.UMP_VERSION,
        "id": native.get("id") or ump_id_for("upp", event["id"]),
        "kind": "identity" if any(str(label).startswith("who_") for label in event["labels"]) else "semantic",
        "body": {"text": native["body"]["text"]},
        "scope": scope,
        "time": {k: time[k] for k in ("created", "valid_from", "valid_to") if k in time},
        "lifecycle": {"confidence": native["lifecycle"]["confidence"]},
    }
    if event["status"] == "staged":
        rec["lifecycle"]["status"] = "candidate"
    successor = ump_id_for("upp", event.get("superseded_by"))
    if successor:
        rec["superseded_by"] = [successor]
    rec["provenance"] = umpside.provenance(owner, "upp", event["id"])
    carry.attach(rec, "ump", "upp", carry.payload(event, moved=moved, natives=UPP_TO_UMP, built=rec,
                                                  lost=mapping.lost_pointers("upp", "ump"),
                                                  also_drop=STRUCTURAL, document=part))
    return rec


def _ends_before_start(event: dict[str, Any]) -> bool:
    start, end = event.get("valid_from"), event.get("valid_until")
    if not (isinstance(start, str) and isinstance(end, str)):
        return False
    a, b = parse_instant(start), parse_instant(end)
    return a is not None and b is not None and b < a


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("ump", "upp"): ump_to_upp, ("upp", "ump"): upp_to_ump}
