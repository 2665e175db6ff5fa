"""OAMS memories ↔ memoturn typed memories (rows: mapping.table()[("oams", "memoturn")] and
[("memoturn", "oams")]).

memoturn → OAMS: the id (the key), summary (the value) and source (source_id, OAMS §5's provenance)
are native; created_at hints created_at and updated_at, keywords the tags; the namespace is
memoturn:default (a memory names no profile); the rest rides in `metadata["x-extensions"].memoturn`.
OAMS → memoturn: value (when not blank) and source_id are native, created_at and tags hint created_at
and keywords; every memory is a fact without topic_key, the rest rides in its content.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import carry, mapping
from memconform.suite.convert.carry import Native
from memconform.suite.convert.common import Ctx
from memconform.suite.convert.documents import note_lost_fields, record_id
from memconform.suite.convert.home import carried_home
from memconform.suite.memoturn.convert import side as memoturnside
from memconform.suite.oams import model as oams_model
from memconform.suite.oams.convert import side as oamsside

MEMOTURN_TO_OAMS = (
    Native("/id", "/key"),
    Native("/summary", "/value"),
    Native("/source", "/source_id", memoturnside.is_str),
)
OAMS_TO_MEMOTURN = (
    Native("/value", "/summary", memoturnside.not_blank),
    Native("/source_id", "/source", memoturnside.is_str),
)
#: Whose memories these are is the profile in the URL they were read from, which a memory does not say.
OWNER = "memoturn"


# -- memoturn → OAMS ---------------------------------------------------------------------------------

def memoturn_to_oams(document: dict[str, Any], ctx: Ctx) -> list[dict[str, Any]]:
    memoturnside.note_lost_envelope(ctx, document)
    memories: list[dict[str, Any]] = []
    taken: set[tuple[str, str]] = set()
    for i, record in enumerate(memoturnside.records(document)):
        rid = record_id("memoturn", record, i)
        note_lost_fields(ctx, record, rid)
        memory = carried_home(record, "memoturn", "oams", OAMS_TO_MEMOTURN, rid, ctx)
        if memory is None or (memory["namespace"], memory["key"]) in taken:
            memory = fresh_memory(record, ctx, taken)
        taken.add((memory["namespace"], memory["key"]))
        memories.append(memory)
    return memories


def fresh_memory(record: dict[str, Any], ctx: Ctx, taken: set[tuple[str, str]] = frozenset()) -> dict[str, Any]:
    ns = oamsside.namespace(OWNER, None, OWNER)
    key = oamsside.unique_key(ns, record["id"], taken)
    native: dict[str, Any] = {}
    moved = carry.move_natives(record, MEMOTURN_TO_OAMS, native, refuse=["/id"] if key != record["id"] else [])
    created = memoturnside.rfc3339(record.get("created_at")) or oams_model.now()
    memory: dict[str, Any] = {"key": key, "namespace": ns, "value": native["value"]}
    tags = memoturnside.terms_of(record.get("keywords"))
    if tags:
        memory["tags"] = tags
    memory.update({"metadata": {}, "created_at": created, "updated_at": created})
    if "source_id" in native:
        memory["source_id"] = native["source_id"]
    carry.attach(memory, "oams", "memoturn", carry.payload(record, moved=moved, natives=MEMOTURN_TO_OAMS,
                                                           built=memory,
                                                           lost=mapping.lost_pointers("memoturn", "oams")))
    return oamsside.tidy(memory)


# -- OAMS → memoturn ---------------------------------------------------------------------------------

def oams_to_memoturn(memories: list[Any], ctx: Ctx) -> dict[str, Any]:
    entries = []
    for i, memory in enumerate(memories):
        rid = record_id("oams", memory, i)
        note_lost_fields(ctx, memory, rid)
        home = carried_home(memory, "oams", "memoturn", MEMOTURN_TO_OAMS, rid, ctx)
        record = home if home is not None else fresh_record(memory, ctx)
        entries.append((record, home is None, None, [], [], None))
    memoturnside.link(entries)
    return memoturnside.envelope([e[0] for e in entries])


def fresh_record(memory: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(memory, OAMS_TO_MEMOTURN, native)
    created = memoturnside.unix_ms(memory["created_at"])
    record = memoturnside.fresh("fact", native.get("summary"),
                                created_at=created if created is not None else memoturnside.now_ms(ctx),
                                keywords=memoturnside.keywords_of(memory.get("tags")), source=native.get("source"))
    carry.attach(record, "memoturn", "oams", carry.payload(memory, moved=moved, natives=OAMS_TO_MEMOTURN,
                                                           built=record,
                                                           lost=mapping.lost_pointers("oams", "memoturn")))
    return memoturnside.seal(record)


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("oams", "memoturn"): oams_to_memoturn, ("memoturn", "oams"): memoturn_to_oams}
