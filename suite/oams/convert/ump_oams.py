"""UMP records ↔ OAMS memories (rows: mapping.table()[("ump", "oams")] and [("oams", "ump")]).

UMP → OAMS: id, text, creation time (when UTC) and confidence are native; the namespace is derived
from the record's scope (owner → owner-hash, project → scope, OAMS §4); the rest of the record rides
in the memory's `metadata["x-extensions"].ump`. OAMS → UMP: value, key (when a UMP id), created_at
and metadata.confidence are native, the namespace's owner-hash and scope hint scope.owner and
scope.project; the rest of the memory rides in `body.structured["x-extensions"].oams`.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import carry, mapping, umpside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.common import UMP_ID, Ctx, ump_id_for
from memconform.suite.convert.documents import note_lost_fields, record_id
from memconform.suite.convert.home import carried_home
from memconform.suite.convert.pointers import get
from memconform.suite.oams import model as oams_model
from memconform.suite.oams.convert import side as oamsside


def _is_ump_id(value: Any) -> bool:
    return isinstance(value, str) and UMP_ID.fullmatch(value) is not None


def _is_utc(value: Any) -> bool:
    return oams_model.parse_time(value) is not None


UMP_TO_OAMS = (
    Native("/id", "/key"),
    Native("/body/text", "/value"),
    Native("/time/created", "/created_at", _is_utc),
    Native("/lifecycle/confidence", "/metadata/confidence"),
)
OAMS_TO_UMP = (
    Native("/key", "/id", _is_ump_id),
    Native("/value", "/body/text"),
    Native("/created_at", "/time/created"),
    Native("/metadata/confidence", "/lifecycle/confidence"),
)


# -- UMP → OAMS --------------------------------------------------------------------------------------

def ump_to_oams(records: list[Any], ctx: Ctx) -> list[dict[str, Any]]:
    memories: list[dict[str, Any]] = []
    taken: set[tuple[str, str]] = set()
    for i, original, rec in umpside.exportable(records, ctx):
        rid = record_id("ump", rec, i)
        note_lost_fields(ctx, original, rid)
        memory = carried_home(rec, "ump", "oams", OAMS_TO_UMP, rid, ctx)
        if memory is None or (memory["namespace"], memory["key"]) in taken:
            memory = fresh_memory(rec, ctx, taken)
        taken.add((memory["namespace"], memory["key"]))
        memories.append(memory)
    return memories


def fresh_memory(rec: dict[str, Any], ctx: Ctx, taken: set[tuple[str, str]] = frozenset()) -> dict[str, Any]:
    scope = rec["scope"]
    ns = oamsside.namespace(scope["owner"], scope.get("project"), "ump")
    key = oamsside.unique_key(ns, rec["id"], taken)
    native: dict[str, Any] = {}
    moved = carry.move_natives(rec, UMP_TO_OAMS, native, refuse=["/id"] if key != rec["id"] else [])
    created = native.get("created_at") or oamsside.utc(rec["time"]["created"]) or oams_model.now()
    memory: dict[str, Any] = {"key": key, "namespace": ns, "value": native["value"],
                              "metadata": native.get("metadata", {}), "created_at": created, "updated_at": created}
    source = _source_hint(rec)
    if source is not None:
        memory["source_id"] = source
    carry.attach(memory, "oams", "ump", carry.payload(rec, moved=moved, natives=UMP_TO_OAMS, built=memory,
                                                      lost=mapping.lost_pointers("ump", "oams")))
    return oamsside.tidy(memory)


def _source_hint(rec: dict[str, Any]) -> str | None:
    ref = get(rec, "/provenance/source/ref")
    if isinstance(ref, str) and ref:
        return ref
    evidence = get(rec, "/provenance/evidence")
    if isinstance(evidence, list) and evidence and isinstance(evidence[0], dict):
        first = evidence[0].get("ref")
        return first if isinstance(first, str) and first else None
    return None


# -- OAMS → UMP --------------------------------------------------------------------------------------

def oams_to_ump(memories: list[Any], ctx: Ctx) -> list[dict[str, Any]]:
    records = []
    for i, memory in enumerate(memories):
        rid = record_id("oams", memory, i)
        note_lost_fields(ctx, memory, rid)
        home = carried_home(memory, "oams", "ump", UMP_TO_OAMS, rid, ctx)
        records.append(home if home is not None else fresh_record(memory, ctx))
    seen: set[str] = set()
    for rec in records:
        if rec["id"] in seen:
            ctx.warn(f"two records have the id {rec['id']} (their memories share a UMP id as key)")
        seen.add(rec["id"])
    return umpside.finish(records, ctx)


def fresh_record(memory: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(memory, OAMS_TO_UMP, native)
    owner_hash, scope_part = oams_model.split_namespace(memory["namespace"])
    owner = umpside.owner(ctx, owner_hash or memory["namespace"])
    scope: dict[str, Any] = {"owner": owner}
    if scope_part:
        scope["project"] = scope_part
    scope["visibility"] = "private"
    rec: dict[str, Any] = {
        "ump": umpside.UMP_VERSION,
        "id": native.get("id") or ump_id_for("oams", oamsside.derived_id_source(memory)),
        "kind": "semantic",
        "body": {"text": native["body"]["text"]},
        "scope": scope,
        "time": {"created": native["time"]["created"]},
    }
    if "lifecycle" in native:
        rec["lifecycle"] = native["lifecycle"]
    rec["provenance"] = umpside.provenance(owner, "oams", memory["key"])
    if isinstance(memory.get("source_id"), str):
        rec["provenance"]["evidence"] = [{"ref": memory["source_id"]}]
    carry.attach(rec, "ump", "oams", carry.payload(memory, moved=moved, natives=OAMS_TO_UMP, built=rec,
                                                   lost=mapping.lost_pointers("oams", "ump")))
    return rec


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("ump", "oams"): ump_to_oams, ("oams", "ump"): oams_to_ump}
