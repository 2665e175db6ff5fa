"""UMP records ↔ memoturn typed memories (rows: mapping.table()[("ump", "memoturn")] and
[("memoturn", "ump")]).

memoturn → UMP: summary, content (as body.structured.content), session_id and source (scope.session,
scope.agent) are native; the type hints the kind, created_at time.created, superseded_at time.valid_to,
a task's expires_at consent.retention, the supersession fields UMP's supersedes / superseded_by; the
rest rides in `body.structured["x-extensions"].memoturn`. UMP → memoturn: body.text (when not blank),
scope.session and scope.agent are native; the kind hints the type, and the UMP revise chains
(supersedes / superseded_by) become memoturn's; the rest of the record rides in the memory's content,
which the content-addressed id hashes.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.convert import carry, mapping, umpside
from memconform.suite.convert.carry import Native
from memconform.suite.convert.common import Ctx, as_date_time, ump_id_for
from memconform.suite.convert.documents import note_lost_fields, record_id
from memconform.suite.convert.home import carried_home
from memconform.suite.convert.pointers import get
from memconform.suite.memoturn.convert import side as memoturnside


MEMOTURN_TO_UMP = (
    Native("/summary", "/body/text"),
    Native("/content", "/body/structured/content"),
    Native("/session_id", "/scope/session", memoturnside.is_str),
    Native("/source", "/scope/agent", memoturnside.is_str),
)
UMP_TO_MEMOTURN = (
    Native("/body/text", "/summary", memoturnside.not_blank),
    Native("/scope/session", "/session_id"),
    Native("/scope/agent", "/source"),
)
#: The page's types and UMP's kinds (UMP §2.1), nearest first: a fact is semantic memory, an
#: instruction procedural, an event episodic, a task working memory; identity is a kind of fact.
KIND_OF_TYPE = {"fact": "semantic", "instruction": "procedural", "event": "episodic", "task": "working"}
TYPE_OF_KIND = {"semantic": "fact", "identity": "fact", "procedural": "instruction", "episodic": "event",
                "working": "task"}


# -- memoturn → UMP ----------------------------------------------------------------------------------

def memoturn_to_ump(document: dict[str, Any], ctx: Ctx) -> list[dict[str, Any]]:
    memoturnside.note_lost_envelope(ctx, document)
    records = []
    for i, memory in enumerate(memoturnside.records(document)):
        rid = record_id("memoturn", memory, i)
        note_lost_fields(ctx, memory, rid)
        home = carried_home(memory, "memoturn", "ump", UMP_TO_MEMOTURN, rid, ctx)
        records.append(home if home is not None else fresh_record(memory, ctx))
    return umpside.finish(records, ctx)


def fresh_record(memory: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(memory, MEMOTURN_TO_UMP, native)
    owner = umpside.owner(ctx, None)
    scope: dict[str, Any] = {"owner": owner, **native.get("scope", {}), "visibility": "private"}
    created = memoturnside.rfc3339(memory.get("created_at")) or as_date_time(None, ctx.now)
    time: dict[str, Any] = {"created": created}
    ended = memoturnside.rfc3339(memory.get("superseded_at"))
    if ended is not None and memory.get("superseded_by") is not None:
        time["valid_to"] = ended
    rec: dict[str, Any] = {"ump": umpside.UMP_VERSION, "id": ump_id_for("memoturn", memory["id"]),
                           "kind": KIND_OF_TYPE[memory["type"]], "body": native["body"], "scope": scope,
                           "time": time}
    if isinstance(memory.get("supersedes"), list) and memory["supersedes"]:
        rec["supersedes"] = [ump_id_for("memoturn", m) for m in memory["supersedes"]]
    if isinstance(memory.get("superseded_by"), str):
        rec["superseded_by"] = [ump_id_for("memoturn", memory["superseded_by"])]
    rec["provenance"] = umpside.provenance(owner, "memoturn", memory["id"])
    lifetime = _lifetime(memory)
    if lifetime is not None:
        rec["consent"] = {"retention": memoturnside.duration(lifetime)}
    carry.attach(rec, "ump", "memoturn", carry.payload(memory, moved=moved, natives=MEMOTURN_TO_UMP, built=rec,
                                                       lost=mapping.lost_pointers("memoturn", "ump")))
    return rec


def _lifetime(memory: dict[str, Any]) -> int | None:
    created, expires = memory.get("created_at"), memory.get("expires_at")
    if isinstance(created, int) and isinstance(expires, int) and expires >= created:
        return expires - created
    return None


# -- UMP → memoturn ----------------------------------------------------------------------------------

def ump_to_memoturn(records: list[Any], ctx: Ctx) -> dict[str, Any]:
    entries = []
    for i, original, rec in umpside.exportable(records, ctx):
        rid = record_id("ump", rec, i)
        note_lost_fields(ctx, original, rid)
        home = carried_home(rec, "ump", "memoturn", MEMOTURN_TO_UMP, rid, ctx)
        memory = home if home is not None else fresh_memory(rec, ctx)
        entries.append((memory, home is None, rec["id"], _ids(rec.get("superseded_by")), _ids(rec.get("supersedes")),
                        memoturnside.unix_ms(get(rec, "/time/valid_to"))))
    memoturnside.link(entries)
    return memoturnside.envelope([e[0] for e in entries])


def _ids(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def fresh_memory(rec: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    native: dict[str, Any] = {}
    moved = carry.move_natives(rec, UMP_TO_MEMOTURN, native)
    mtype = TYPE_OF_KIND.get(rec["kind"], "fact")
    created = memoturnside.unix_ms(rec["time"]["created"])
    created = created if created is not None else memoturnside.now_ms(ctx)
    expires = None
    if mtype == "task":
        lifetime = memoturnside.duration_ms(get(rec, "/consent/retention"))
        expires = created + (lifetime if lifetime is not None else memoturnside.TASK_TTL_MS)
    memory = memoturnside.fresh(mtype, native.get("summary"), created_at=created, session_id=native.get("session_id"),
                                source=native.get("source"), expires_at=expires)
    carry.attach(memory, "memoturn", "ump", carry.payload(rec, moved=moved, natives=UMP_TO_MEMOTURN, built=memory,
                                                          lost=mapping.lost_pointers("ump", "memoturn")))
    return memoturnside.seal(memory)


#: Read through the spec's `converters` (suite/specs.py): suite/convert imports no pair by name.
CONVERTERS = {("ump", "memoturn"): ump_to_memoturn, ("memoturn", "ump"): memoturn_to_ump}
