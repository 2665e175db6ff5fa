"""memoturn typed memories (../shared/specs/memoturn-typed-memories.md, the docs page of June 2026):
the memory record, its content-addressed id, the ingest and recall answers, the error envelope.

The page is product documentation without RFC 2119 keywords; what it states as fact is the contract
(docs/catalogue-memoturn.md says how every loose rule is read). Judging functions return messages,
never raise on what a server sent: a vendor's answer is data, only ever compared.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from memconform.suite.quoting import shown  # noqa: F401 (re-exported: the checks quote with it)

#: The page carries no version; memconform names it by its date.
VERSION = "2026.06"
TYPES = ("fact", "event", "instruction", "task")
#: The types a topic_key is valid on, which supersede by (type, topic_key).
SUPERSEDING = ("fact", "instruction")
STATUSES = ("created", "revived", "duplicate")
#: "tasks only; default 24 h TTL" — in seconds, as `ttl` is sent.
TASK_TTL_DEFAULT = 86_400
#: "Batches cap at 1,000 memories per request."
BATCH_CAP = 1000
#: recall.md: "`k` | result cap, default 8"
RECALL_DEFAULT_K = 8
CHANNELS = ("topic", "keyword", "vector")
#: errors.md: the envelope's stable codes and their statuses.
ERROR_CODES = {"unauthorized": 401, "forbidden": 403, "not_found": 404, "database_not_found": 404,
               "branch_not_found": 404, "already_exists": 409, "conflict": 409, "invalid_request": 400,
               "payload_too_large": 413, "request_timeout": 408, "overloaded": 429, "unconfigured": 503,
               "unavailable": 503, "internal": 500}
#: ADR-0009: a namespace or profile segment.
SEGMENT = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
ID_PATTERN = re.compile(r"^mem_[0-9a-f]{32}$")


def canonical_content(content: Any) -> str:
    """The content as the engine hashes it: compact JSON, keys sorted by code point, non-ASCII raw.

    This is serde_json's `to_string` of a `Value` (a BTreeMap: keys in byte order, which is code-point
    order) byte for byte for strings, integers within 2^53, booleans, null, arrays and objects. Floats
    are implementation-defined (serde_json prints with ryu, Python with repr: `1e21` vs `1e+21`), so no
    check or vector depends on a float's text."""
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def memory_id(mtype: str, topic_key: str | None, content: Any) -> str:
    """`mem_` + the first 16 bytes, hex, of SHA-256(type ‖ 0x00 ‖ topic_key or "" ‖ 0x00 ‖ canonical
    content): the engine's construction (crates/docstore/src/memories.rs `memory_id`). An absent and
    an empty topic_key give the same id (reported as implementation-defined, never tested)."""
    data = (mtype.encode("utf-8") + b"\0" + (topic_key or "").encode("utf-8") + b"\0"
            + canonical_content(content).encode("utf-8"))
    return "mem_" + hashlib.sha256(data).digest()[:16].hex()


def has_float(value: Any) -> bool:
    """Whether `value` holds a float (or an integer beyond 2^53), where ids are implementation-defined."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return True
    if isinstance(value, int):
        return abs(value) > 2 ** 53
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    return False


def new_memory(mtype: str, summary: str, content: Any, **fields: Any) -> dict[str, Any]:
    """A memory to ingest: type, summary, content, and any of topic_key, keywords, embedding,
    session_id, source, ttl (a value of None leaves the field out)."""
    m: dict[str, Any] = {"type": mtype, "summary": summary, "content": content}
    m.update({k: v for k, v in fields.items() if v is not None})
    return m


def id_of(memory: dict[str, Any]) -> str:
    return memory_id(memory["type"], memory.get("topic_key"), memory.get("content"))


def is_integer(v: Any) -> bool:
    """A JSON number with no fractional part: 41, and also 41.0 (JSON has one number type; JSON
    Schema's "integer" is any number with a zero fractional part), never a bool."""
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


#: Below this, a Unix time is seconds (1e11 ms is 1973; 1e11 s is the year 5138).
SECONDS_BELOW = 10 ** 11
#: RFC 3339's date-time (with a `T` or, as RFC 3339 allows, a space), an offset required.
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def instant_ms(value: Any) -> float | None:
    """A time as the record states it, in Unix milliseconds, or None when it is no readable time.

    The page gives no type or format for superseded_at, expires_at (nor any created_at): integer
    Unix milliseconds are recall.md's and the engine's (memoturn/created-at-ms, a SHOULD), seconds
    api-rest.md's example, and an RFC 3339 string is as plainly a time. Every MUST compares
    instants; only created-at-ms judges the form."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value <= 0:
            return None
        return float(value) * (1000 if value < SECONDS_BELOW else 1)
    if isinstance(value, str) and RFC3339.match(value):
        from datetime import datetime

        text = value.upper().replace(" ", "T").replace("Z", "+00:00")
        # fromisoformat (3.11) reads any number of fraction digits only up to microseconds
        m = re.match(r"^(.*?:\d{2})(\.\d+)?([+-]\d{2}:\d{2})$", text)
        if m is None:
            return None
        fraction = float(m.group(2)) if m.group(2) else 0.0
        try:
            whole = datetime.fromisoformat(m.group(1) + m.group(3))
        except ValueError:
            return None
        return whole.timestamp() * 1000 + fraction * 1000
    return None


def ingest_problems(body: Any, sent: int) -> list[str]:
    """Why an ingest answer is not `{"results": [{id, status, superseded}] × sent, "txid": int}`."""
    if not isinstance(body, dict):
        return [f"the answer is {shown(body)}, not an object with `results` and `txid`"]
    out = []
    results = body.get("results")
    if not isinstance(results, list):
        out.append(f"`results` is {shown(results)}, not an array")
    else:
        if len(results) != sent:
            out.append(f"`results` holds {len(results)} entries for {sent} memories sent")
        for i, r in enumerate(results):
            if not isinstance(r, dict):
                out.append(f"results[{i}] is {shown(r)}, not an object")
                continue
            if not isinstance(r.get("id"), str):
                out.append(f"results[{i}].id is {shown(r.get('id'))}, not a string")
            if r.get("status") not in STATUSES:
                out.append(f"results[{i}].status is {shown(r.get('status'))}, not one of {', '.join(STATUSES)}")
            sup = r.get("superseded")
            if not isinstance(sup, list) or not all(isinstance(s, str) for s in sup):
                out.append(f"results[{i}].superseded is {shown(sup)}, not an array of ids")
    if not is_integer(body.get("txid")):
        out.append(f"`txid` is {shown(body.get('txid'))}, not an integer")
    return out


def record_problems(memory: Any, *, where: str = "the memory") -> list[str]:
    """Why a memory as GET or recall shows it lacks the record's fields (the page's table)."""
    if not isinstance(memory, dict):
        return [f"{where} is {shown(memory)}, not an object"]
    out = []
    if not isinstance(memory.get("id"), str):
        out.append(f"{where}.id is {shown(memory.get('id'))}")
    if memory.get("type") not in TYPES:
        out.append(f"{where}.type is {shown(memory.get('type'))}, not one of {', '.join(TYPES)}")
    if not isinstance(memory.get("summary"), str):
        out.append(f"{where}.summary is {shown(memory.get('summary'))}, not a string")
    if "content" not in memory:
        out.append(f"{where} has no `content`")
    return out

