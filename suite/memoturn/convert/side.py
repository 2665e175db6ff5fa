"""memoturn on either side of a conversion.

A document is `{"memories": [memory, …]}`, each memory as GET shows it (id, type, topic_key, summary,
content, keywords, session_id, source, created_at, superseded_by, superseded_at, expires_at,
supersedes; an embedding or a recall hit's score and channels are other members). That is the shape of
an ingest body and of a recall answer, so a store's answers convert as they are; a recall answer's
`txid` is lost (it says where one store's log stood). Read from a file: that object, a JSON array of
memories, one memory, or JSONL (one memory a line).

As a target: a new memory's id is content-addressed like the engine's (mem_ + SHA-256 of type,
topic_key and content; suite/memoturn/model.py), and its content is where the source record rides,
so the id changes whenever anything carried changes: a memory converted from the same record twice
has the same id, which is what makes a re-ingest a `duplicate` instead of a copy.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from memconform.suite.convert import mapping
from memconform.suite.convert.common import Ctx, LostField, parse_instant
from memconform.suite.convert.documents import policy_row
from memconform.suite.convert.formats import Format
from memconform.suite.memoturn import model as mt

FIELDS = ("id", "type", "topic_key", "summary", "content", "keywords", "session_id", "source", "created_at",
          "superseded_by", "superseded_at", "expires_at", "supersedes")
#: A blank text cannot be a summary (the engine refuses it); the text itself travels in the extension.
NO_TEXT = "(no text)"
TASK_TTL_MS = mt.TASK_TTL_DEFAULT * 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: Durations a task's lifetime can be read from: weeks, days, hours, minutes, seconds (years and months
#: have no fixed length).
_DURATION = re.compile(r"P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:\.(\d{1,3}))?S)?)?")
#: datetime's range, in Unix ms: a timestamp outside it has no RFC 3339 form.
_MS_MIN, _MS_MAX = -62_135_596_800_000, 253_402_300_799_999


def is_str(value: Any) -> bool:
    return isinstance(value, str)


def not_blank(value: Any) -> bool:
    """What a summary can be: the engine refuses an empty or blank one."""
    return isinstance(value, str) and value.strip() != ""


# -- the document ------------------------------------------------------------------------------------

def records(document: Any) -> list[Any]:
    if isinstance(document, list):
        return document
    return document["memories"]


def normalized(document: Any) -> Any:
    """The document form of what was given: a list of memories or one memory becomes the envelope."""
    if isinstance(document, list):
        return {"memories": document}
    if isinstance(document, dict) and "memories" not in document and "type" in document:
        return {"memories": [document]}
    return document


def envelope(memories: list[dict[str, Any]]) -> dict[str, Any]:
    return {"memories": memories}


def note_lost_envelope(ctx: Ctx, document: dict[str, Any]) -> None:
    extra = [k for k in document if k not in mapping.ENVELOPE["memoturn"]]
    if extra:
        row = policy_row(ctx, "document:/*")
        ctx.lost.extend(LostField("", f"document:/{k}", row.id, row.note) for k in extra)


def _opt_str(memory: dict[str, Any], name: str, where: str) -> list[str]:
    value = memory.get(name)
    if value is None or isinstance(value, str):
        return []
    return [f"{where}/{name}: {mt.shown(value)} is not a string or null"]


def _opt_int(memory: dict[str, Any], name: str, where: str) -> list[str]:
    value = memory.get(name)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return []
    return [f"{where}/{name}: {mt.shown(value)} is not Unix ms (an integer) or null"]


def memory_problems(memory: Any, where: str = "") -> list[str]:
    """Why `memory` is not a typed memory as GET shows it (the record table of the page)."""
    if not isinstance(memory, dict):
        return [f"{where or '/'}: {mt.shown(memory)} is not a memory object (memoturn/record-fields)"]
    out: list[str] = []
    mid = memory.get("id")
    if not isinstance(mid, str) or not mt.ID_PATTERN.fullmatch(mid):
        out.append(f"{where}/id: {mt.shown(mid)} is not mem_ + 32 lowercase hex digits (memoturn/id-construction)")
    mtype = memory.get("type")
    if mtype not in mt.TYPES:
        out.append(f"{where}/type: {mt.shown(mtype)} is not one of {', '.join(mt.TYPES)} (memoturn/type-enum)")
    topic = memory.get("topic_key")
    if topic is not None and (not isinstance(topic, str) or mtype not in mt.SUPERSEDING):
        out.append(f"{where}/topic_key: {mt.shown(topic)} on a {mtype}: a string, and only on "
                   f"{' and '.join(mt.SUPERSEDING)} (memoturn/topic-key-only-fact-instruction)")
    summary = memory.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        out.append(f"{where}/summary: {mt.shown(summary)} is not a non-blank string (memoturn/summary-required)")
    if "content" not in memory:
        out.append(f"{where}: no content (memoturn/record-fields)")
    for name in ("keywords", "session_id", "source", "superseded_by"):
        out += _opt_str(memory, name, where)
    for name in ("created_at", "superseded_at", "expires_at"):
        out += _opt_int(memory, name, where)
    if memory.get("expires_at") is not None and mtype != "task":
        out.append(f"{where}/expires_at: set on a {mtype}: tasks only (memoturn/record-fields)")
    sup = memory.get("supersedes", [])
    if not isinstance(sup, list) or not all(isinstance(s, str) for s in sup):
        out.append(f"{where}/supersedes: {mt.shown(sup)} is not an array of ids (memoturn/supersedes-listed)")
    emb = memory.get("embedding")
    if emb is not None and not (isinstance(emb, list) and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in emb)):
        out.append(f"{where}/embedding: {mt.shown(emb)} is not an array of numbers or null (memoturn/record-fields)")
    return out


def document_problems(document: Any) -> list[str]:
    if not isinstance(document, dict) or not isinstance(document.get("memories"), list):
        return ['/: a memoturn document is {"memories": [memory, …]} (or a JSON array of memories, one memory, '
                'or JSONL)']
    return [p for i, m in enumerate(document["memories"]) for p in memory_problems(m, f"/memories/{i}")]


def tidy(memory: dict[str, Any]) -> dict[str, Any]:
    out = {k: memory[k] for k in FIELDS if k in memory}
    out.update({k: v for k, v in memory.items() if k not in out})
    return out


# -- time --------------------------------------------------------------------------------------------

def rfc3339(ms: Any) -> str | None:
    """Unix ms as an RFC 3339 UTC date-time (milliseconds only when there are some), or None."""
    if not isinstance(ms, int) or isinstance(ms, bool) or not _MS_MIN <= ms <= _MS_MAX:
        return None
    moment = _EPOCH + timedelta(milliseconds=ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return text + (f".{ms % 1000:03d}" if ms % 1000 else "") + "Z"


def unix_ms(value: Any) -> int | None:
    moment = parse_instant(value) if isinstance(value, str) else None
    if moment is None:
        return None
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def now_ms(ctx: Ctx) -> int:
    return (ctx.now - _EPOCH) // timedelta(milliseconds=1)


def duration_ms(value: Any) -> int | None:
    match = _DURATION.fullmatch(value) if isinstance(value, str) and value not in ("P", "PT") else None
    if match is None or value.endswith("T"):
        return None
    w, d, h, m, s = (int(g or 0) for g in match.groups()[:5])
    frac = match.group(6)
    ms = ((((w * 7 + d) * 24 + h) * 60 + m) * 60 + s) * 1000
    return ms + (int(frac.ljust(3, "0")) if frac else 0)


def duration(ms: int) -> str:
    seconds, rest = divmod(ms, 1000)
    return f"PT{seconds}.{rest:03d}S" if rest else f"PT{seconds}S"


# -- a new memory ------------------------------------------------------------------------------------

def fresh(mtype: str, summary: Any, *, created_at: int, keywords: str | None = None, session_id: Any = None,
          source: Any = None, expires_at: int | None = None) -> dict[str, Any]:
    """A memory without id and content yet: the converter attaches the payload, then `seal` names it."""
    if mtype == "task" and expires_at is None:
        expires_at = created_at + TASK_TTL_MS
    return {"type": mtype, "topic_key": None,
            "summary": summary if isinstance(summary, str) and summary.strip() else NO_TEXT,
            "content": {}, "keywords": keywords, "session_id": session_id, "source": source,
            "created_at": created_at, "superseded_by": None, "superseded_at": None,
            "expires_at": expires_at if mtype == "task" else None, "supersedes": []}


def seal(memory: dict[str, Any]) -> dict[str, Any]:
    """The memory with its content-addressed id, id first."""
    memory["id"] = mt.memory_id(memory["type"], memory.get("topic_key"), memory["content"])
    return tidy(memory)


def keywords_of(terms: Any) -> str | None:
    """Tags or labels as memoturn's space-separated keywords, when each is one term."""
    if not isinstance(terms, list) or not terms:
        return None
    if not all(isinstance(t, str) and t and not any(c.isspace() for c in t) for t in terms):
        return None
    return " ".join(terms)


def terms_of(keywords: Any) -> list[str]:
    return keywords.split() if isinstance(keywords, str) else []


def link(entries: list[tuple[dict[str, Any], bool, Any, list[Any], list[Any], int | None]]) -> None:
    """Supersession hints between new memories, as the ids the records became. Each entry:
    (memory, new?, the source record's id, the ids that replaced it, the ids it replaced, when its
    validity ended in Unix ms). A memory that went home keeps what it carried."""
    became = {foreign: memory["id"] for memory, _new, foreign, *_rest in entries if isinstance(foreign, str)}
    created = {memory["id"]: memory.get("created_at") for memory, *_rest in entries}
    # an edge either end states is the memory's (formats say it on one side, both, or inconsistently)
    replaced: dict[str, list[str]] = {}
    successor: dict[str, str] = {}
    for memory, _new, _foreign, successors, predecessors, _ended in entries:
        for s in successors[:1]:
            if isinstance(s, str) and s in became and became[s] != memory["id"]:
                successor.setdefault(memory["id"], became[s])
                replaced.setdefault(became[s], []).append(memory["id"])
        for p in predecessors:
            if isinstance(p, str) and p in became and became[p] != memory["id"]:
                successor.setdefault(became[p], memory["id"])
                replaced.setdefault(memory["id"], []).append(became[p])
    for memory, new, _foreign, _successors, _predecessors, ended in entries:
        if not new:
            continue
        after = successor.get(memory["id"])
        if after is not None:
            memory["superseded_by"] = after
            memory["superseded_at"] = ended if ended is not None else created.get(after)
        memory["supersedes"] = list(dict.fromkeys(replaced.get(memory["id"], [])))


# -- the format --------------------------------------------------------------------------------------

def corpus() -> dict[str, Any]:
    """Memories as GET shows them, in a recall answer's envelope (with its txid): all four types, a
    supersession pair (superseded_by / superseded_at / supersedes), a task with its expiry, a session, two
    sources and a null one, keywords, an instruction with an embedding and a recall hit's score and
    channels, content that is a string, nested content with floats and unicode, hostile text."""
    from memconform.suite.ump.corpus import INJECTION_TEXT

    at = 1_776_500_000_000   # 2026-04-18, fixed: the corpus is the same bytes every run

    def mem(mtype: str, summary: str, content: Any, created: int, topic_key: str | None = None,
            **members: Any) -> dict[str, Any]:
        record = {"id": mt.memory_id(mtype, topic_key, content), "type": mtype, "topic_key": topic_key,
                  "summary": summary, "content": content, "keywords": None, "session_id": None, "source": None,
                  "created_at": created, "superseded_by": None, "superseded_at": None, "expires_at": None,
                  "supersedes": []}
        record.update(members)
        return record

    old = mem("fact", "vegetarian since 2024", {"diet": "vegetarian"}, at, "user.diet",
              keywords="food preference", source="claude-code")
    new = mem("fact", "vegan since 2026", {"diet": "vegan"}, at + 60_000, "user.diet",
              keywords="food preference", source="cursor", supersedes=[old["id"]])
    old.update(superseded_by=new["id"], superseded_at=at + 60_000)
    memories = [
        old, new,
        mem("event", "deployed v2 to prod", {"version": "v2"}, at + 120_000, session_id="s-417"),
        mem("task", "follow up on refund #88", {}, at + 180_123, session_id="s-417",
            expires_at=at + 180_123 + mt.TASK_TTL_DEFAULT * 1000),
        mem("instruction", "answer concisely, no emoji", {"tone": "concise", "emoji": False}, at + 240_000,
            "agent.tone", source="cursor", embedding=[0.25, -0.5, 1], score=0.9, channels=["topic"]),
        mem("event", INJECTION_TEXT + " 日本語 ✓ 😀", "a string is content too", at + 300_000),
        mem("fact", "Prefers dark mode", {"ui": {"theme": "dark", "contrast": 0.75, "langs": ["en", "é"],
                                                 "n": None}}, at + 360_000, keywords="ui theme"),
    ]
    return {"memories": memories, "txid": 43}


def _rows() -> list[Any]:
    from memconform.suite.memoturn.convert.rows import pairs

    return pairs()


FORMAT = Format(
    "memoturn", label="memoturn", version="2026.06", record="memory",
    # the content is the only free-form member an ingest keeps (every other field is typed), so a carried
    # record is part of what the content-addressed id hashes
    carrier="/content/x-extensions",
    # a memory as GET shows it (a recall hit's score and channels are "other members")
    record_fields=("/id", "/type", "/topic_key", "/summary", "/content", "/keywords", "/embedding", "/session_id",
                   "/source", "/created_at", "/superseded_by", "/superseded_at", "/expires_at", "/supersedes", "/*"),
    # an ingest body's or a recall answer's shape; a recall answer's txid is "other"
    document_fields=("document:/*",), envelope=("memories",), rows=_rows,
    problems=document_problems, record_problems=memory_problems, corpus=corpus,
    records_member="memories", normalize=normalized, tidy=tidy, jsonl=True,
    # an empty JSONL file holds no memory: a valid, empty document
    empty=lambda: envelope([]), extensions=(".memoturn.jsonl", ".memoturn.json"),
    extensions_help=".memoturn.json or .memoturn.jsonl",
)
