"""The memoturn typed-memories reference engine (sqlite): per-profile batch ingest with
content-addressed ids and the created / revived / duplicate statuses, supersession by
(type, topic_key), task expiry, hard forget, hybrid recall (topic, keyword, vector channels fused by
reciprocal rank) and sessions (../shared/specs/memoturn-typed-memories.md and its sibling pages
recall.md, api-rest.md, mcp.md, errors.md).

Readings (docs/catalogue-memoturn.md): a batch is validated whole before anything is written, then
applied memory by memory, in order, in one transaction (so a memory repeated within a batch is
`duplicate` the second time); an expired task is not active, so ingesting it again is no duplicate
(policy point `expired_task_reingest`); times are integer Unix milliseconds; `txid` counts the
batches and removals of one profile; a profile exists from its first ingest on, and a read of one
never written creates nothing. Every refusal is a `MemoturnError` with a code of errors.md.

The engine holds no branch on a fault's name: a fault wraps its methods (faults.py), a variant sets
a policy point (policy.py)."""

from __future__ import annotations

import json
import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from memconform.reference_impl.memoturn.policy import MemoturnPolicy, configure
from memconform.suite.memoturn import model

#: The bounds of the record (api-rest.md's limits; the summary is "one-line", so a few KiB is ample).
MAX_SUMMARY = 8 * 1024
MAX_CONTENT = 1024 * 1024
MAX_EMBEDDING = 4096
#: api-rest.md: "recall `k` and result limits clamp to 1,000".
MAX_K = 1000
#: How deep each channel looks before fusion: never fewer than k, so a large k is not starved.
CHANNEL_DEPTH = 50
#: RRF (recall.md): score = Σ w / (60 + rank), rank counted from 1.
RRF_K = 60
WEIGHTS = {"topic": 2.0, "keyword": 1.0, "vector": 1.0}
#: A ttl beyond a century is a mistake, and would overflow the millisecond column.
MAX_TTL = 100 * 365 * 86_400
_WORD = re.compile(r"\w+", re.UNICODE)
_STRING_FIELDS = ("keywords", "session_id", "source")


class MemoturnError(Exception):
    """A refusal in errors.md's envelope: {"error": message, "code": code}, with the code's status."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def body(self) -> dict[str, Any]:
        return {"error": self.message, "code": self.code}


def refusal(code: str, message: str) -> MemoturnError:
    return MemoturnError(model.ERROR_CODES[code], code, message)


def invalid(message: str) -> MemoturnError:
    return refusal("invalid_request", message)


def not_found(message: str) -> MemoturnError:
    return refusal("not_found", message)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class MemoturnService:
    def __init__(self, db: str = ":memory:", fault: Any = None, variants: Iterable[str] = (),
                 now_ms: Callable[[], int] | None = None):
        self.fault = fault if isinstance(fault, str) or fault is None else fault.name
        self.variants = tuple(variants)
        self._fault_obj = fault
        if now_ms is not None:
            self.now_ms = now_ms  # type: ignore[method-assign]
        self._db = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA journal_mode=MEMORY")
        self._db.executescript("""
            CREATE TABLE IF NOT EXISTS profiles (
                ns TEXT NOT NULL, profile TEXT NOT NULL, txid INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (ns, profile));
            CREATE TABLE IF NOT EXISTS memories (
                rid INTEGER PRIMARY KEY, ns TEXT NOT NULL, profile TEXT NOT NULL, id TEXT NOT NULL,
                type TEXT NOT NULL, topic_key TEXT, summary TEXT NOT NULL, content TEXT NOT NULL,
                keywords TEXT, session_id TEXT, source TEXT, created_at INTEGER NOT NULL,
                superseded_by TEXT, superseded_at INTEGER, expires_at INTEGER,
                UNIQUE (ns, profile, id));
            CREATE INDEX IF NOT EXISTS by_topic ON memories (ns, profile, type, topic_key);
            CREATE INDEX IF NOT EXISTS by_session ON memories (ns, profile, session_id);
            CREATE INDEX IF NOT EXISTS by_successor ON memories (ns, profile, superseded_by);
            CREATE TABLE IF NOT EXISTS vectors (
                rid INTEGER PRIMARY KEY, dim INTEGER NOT NULL, vector TEXT NOT NULL);
        """)
        try:
            # The FTS row shares the memory's rowid, so forget removes exactly its entry.
            self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(summary, keywords)")
            self.fts = True
        except sqlite3.OperationalError:  # a sqlite built without FTS5: the keyword channel uses LIKE
            self.fts = False
        self.policy: MemoturnPolicy = configure(self, fault, self.variants)

    def close(self) -> None:
        self._db.close()

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    # -- profiles ----------------------------------------------------------------------------------

    def _check_segment(self, value: Any, name: str) -> str:
        if not isinstance(value, str) or not model.SEGMENT.match(value) or "--" in value:
            # ADR-0009: a profile is the database `{ns}--{profile}`, hence no `--` in a segment.
            raise invalid(f"{name} must match [a-z0-9][a-z0-9_-]* without '--', not {model.shown(value, 80)}")
        return value

    def _profile(self, ns: Any, profile: Any) -> tuple[str, str]:
        return self._check_segment(ns, "namespace"), self._check_segment(profile, "profile")

    def profiles(self, ns: Any) -> dict[str, Any]:
        """The profiles of a namespace, as created by their first write (recall creates none)."""
        ns = self._check_segment(ns, "namespace")
        with self._lock:
            rows = self._db.execute("SELECT profile FROM profiles WHERE ns=? ORDER BY profile", (ns,)).fetchall()
        return {"namespace": ns, "profiles": [r[0] for r in rows]}

    def txid(self, ns: str, profile: str) -> int:
        """The profile's last txid; 0 for a profile never written (and nothing is created)."""
        ns, profile = self._profile(ns, profile)
        with self._lock:
            row = self._db.execute("SELECT txid FROM profiles WHERE ns=? AND profile=?", (ns, profile)).fetchone()
        return row[0] if row else 0

    def _next_txid(self, ns: str, profile: str) -> int:
        """Inside a write transaction: the profile (created on first use) moves to its next txid."""
        self._db.execute("INSERT INTO profiles (ns, profile, txid) VALUES (?, ?, 0) ON CONFLICT DO NOTHING",
                         (ns, profile))
        self._db.execute("UPDATE profiles SET txid = txid + 1 WHERE ns=? AND profile=?", (ns, profile))
        return self._db.execute("SELECT txid FROM profiles WHERE ns=? AND profile=?", (ns, profile)).fetchone()[0]

    def _known(self, ns: str, profile: str) -> bool:
        return self._db.execute("SELECT 1 FROM profiles WHERE ns=? AND profile=?", (ns, profile)).fetchone() is not None

    def _transaction(self, work: Callable[[], Any]) -> Any:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                out = work()
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return out

    # -- validation --------------------------------------------------------------------------------

    def _validate_batch(self, body: Any) -> list[dict[str, Any]]:
        """The batch as sent, checked whole: one bad memory refuses all of them (the batch is atomic)."""
        if not isinstance(body, dict):
            raise invalid("the body must be an object {\"memories\": [...]}")
        memories = body.get("memories")
        if not isinstance(memories, list):
            raise invalid("`memories` must be an array of memories")
        if not memories:
            raise invalid("`memories` is empty: a batch holds at least one memory")
        if len(memories) > model.BATCH_CAP:
            raise refusal(self.policy.over_cap_code, f"{len(memories)} memories in one batch; batches cap at "
                                                     f"{model.BATCH_CAP} (nothing was stored)")
        checked = []
        for i, m in enumerate(memories):
            try:
                checked.append(self._validate_memory(m))
            except MemoturnError as exc:
                raise MemoturnError(exc.status, exc.code, f"memories[{i}]: {exc.message} (nothing of the batch "
                                                          "was stored)") from None
        return checked

    def _validate_memory(self, m: Any) -> dict[str, Any]:
        """One memory, checked and normalised: every field present (null where unset), content
        serialised once."""
        if not isinstance(m, dict):
            raise invalid("a memory must be an object")
        mtype = m.get("type")
        if mtype not in model.TYPES:
            raise invalid(f"type must be one of {', '.join(model.TYPES)}, not {model.shown(mtype, 80)}")
        topic_key = m.get("topic_key")
        if topic_key is not None:
            if not isinstance(topic_key, str):
                raise invalid("topic_key must be a string")
            if mtype not in model.SUPERSEDING and self.policy.topic_key_off_type == "drop":
                topic_key = None
            elif mtype not in model.SUPERSEDING:
                raise invalid(f"topic_key is valid only on {' and '.join(model.SUPERSEDING)}, not on a {mtype}")
        summary = m.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            raise invalid("summary must be a non-blank string")
        if len(summary.encode("utf-8", "surrogatepass")) > MAX_SUMMARY:
            raise invalid(f"summary is over {MAX_SUMMARY} bytes")
        # errors.md's invalid_request covers a malformed body; a missing content is read as null
        # (the engine's default), which hashes and returns like any other JSON value.
        content = m.get("content")
        try:
            text = json.dumps(content, ensure_ascii=False, allow_nan=False)
            model.canonical_content(content)
            text.encode("utf-8")
        except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
            raise invalid("content must be a JSON value (no NaN or infinity, no lone surrogate)") from None
        if len(text.encode("utf-8")) > MAX_CONTENT:
            raise invalid(f"content is over {MAX_CONTENT} bytes serialized")
        for name in _STRING_FIELDS:
            v = m.get(name)
            if v is not None and not isinstance(v, str):
                raise invalid(f"{name} must be a string or null")
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    raise invalid(f"{name} holds a lone surrogate") from None
        try:
            summary.encode("utf-8")
            if topic_key is not None:
                topic_key.encode("utf-8")
        except UnicodeEncodeError:
            raise invalid("summary or topic_key holds a lone surrogate") from None
        embedding = self._check_embedding(m.get("embedding"), "embedding")
        ttl = m.get("ttl")
        if ttl is not None:
            if mtype != "task":
                raise invalid(f"ttl is valid only on a task (expires_at is tasks only), not on a {mtype}")
            if not _is_int(ttl) or ttl < 1:
                raise invalid("ttl must be a positive integer (seconds)")
            if ttl > MAX_TTL:
                raise invalid(f"ttl is over {MAX_TTL} seconds")
        return {"type": mtype, "topic_key": topic_key, "summary": summary, "content": content, "content_text": text,
                "keywords": m.get("keywords"), "embedding": embedding, "session_id": m.get("session_id"),
                "source": m.get("source"), "ttl": ttl}

    @staticmethod
    def _check_embedding(value: Any, name: str) -> list[float] | None:
        if value is None:
            return None
        if not isinstance(value, list) or not value or not all(_is_number(x) for x in value):
            raise invalid(f"{name} must be a non-empty array of finite numbers")
        if len(value) > MAX_EMBEDDING:
            raise invalid(f"{name} has {len(value)} dimensions (at most {MAX_EMBEDDING})")
        return [float(x) for x in value]

    # -- rows --------------------------------------------------------------------------------------

    _COLUMNS = ("rid, id, type, topic_key, summary, content, keywords, session_id, source, created_at, "
                "superseded_by, superseded_at, expires_at")

    def _row(self, ns: str, profile: str, mid: str) -> dict[str, Any] | None:
        cur = self._db.execute(f"SELECT {self._COLUMNS} FROM memories WHERE ns=? AND profile=? AND id=?",
                               (ns, profile, mid))
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row))

    def _rows(self, sql: str, params: Iterable[Any]) -> list[dict[str, Any]]:
        cur = self._db.execute(f"SELECT {self._COLUMNS} FROM memories WHERE {sql}", tuple(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    @staticmethod
    def _expired(row: dict[str, Any], now: int) -> bool:
        return row["expires_at"] is not None and row["expires_at"] <= now

    def _active(self, row: dict[str, Any], now: int) -> bool:
        return row["superseded_by"] is None and not self._expired(row, now)

    def _expiry(self, memory: dict[str, Any], now: int) -> int | None:
        if memory["type"] != "task":
            return None
        ttl = memory["ttl"] if memory["ttl"] is not None else model.TASK_TTL_DEFAULT
        if self.policy.expiry == "whole-seconds":  # the next whole second at or after created + ttl
            return -(-(now + ttl * 1000) // 1000) * 1000
        return now + ttl * 1000

    def _insert(self, ns: str, profile: str, mid: str, memory: dict[str, Any], now: int) -> None:
        cur = self._db.execute(
            "INSERT INTO memories (ns, profile, id, type, topic_key, summary, content, keywords, session_id, source, "
            "created_at, superseded_by, superseded_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,NULL,NULL,?)",
            (ns, profile, mid, memory["type"], memory["topic_key"], memory["summary"], memory["content_text"],
             memory["keywords"], memory["session_id"], memory["source"], now, self._expiry(memory, now)))
        rid = cur.lastrowid
        if self.fts:
            self._db.execute("INSERT INTO memories_fts (rowid, summary, keywords) VALUES (?, ?, ?)",
                             (rid, memory["summary"], memory["keywords"] or ""))
        if memory["embedding"] is not None:
            self._db.execute("INSERT INTO vectors (rid, dim, vector) VALUES (?, ?, ?)",
                             (rid, len(memory["embedding"]), json.dumps(memory["embedding"])))

    def _delete(self, rid: int) -> None:
        """The hard removal: the row, its FTS entry and its vector."""
        self._db.execute("DELETE FROM memories WHERE rid=?", (rid,))
        if self.fts:
            self._db.execute("DELETE FROM memories_fts WHERE rowid=?", (rid,))
        self._db.execute("DELETE FROM vectors WHERE rid=?", (rid,))

    def _supersede(self, ns: str, profile: str, memory: dict[str, Any], by: str, now: int) -> list[str]:
        """Mark the active rows of the same (type, topic_key) as superseded by `by`: there is at most
        one, but every one found is marked so the invariant heals rather than spreads."""
        if memory["type"] not in model.SUPERSEDING or not memory["topic_key"]:
            return []
        rows = self._rows("ns=? AND profile=? AND type=? AND topic_key=? AND id<>? AND superseded_by IS NULL",
                          (ns, profile, memory["type"], memory["topic_key"], by))
        ids = [r["id"] for r in rows]
        for r in rows:
            self._db.execute("UPDATE memories SET superseded_by=?, superseded_at=? WHERE rid=?", (by, now, r["rid"]))
        return ids

    # -- ingest ------------------------------------------------------------------------------------

    def ingest(self, ns: Any, profile: Any, body: Any) -> dict[str, Any]:
        ns, profile = self._profile(ns, profile)
        memories = self._validate_batch(body)

        def work() -> dict[str, Any]:
            # One moment per batch: a supersession's superseded_at is the new row's created_at.
            now = self.now_ms()
            results = [self._ingest_one(ns, profile, m, now) for m in memories]
            return {"results": results, "txid": self._next_txid(ns, profile)}

        return self._transaction(work)

    def _memory_id(self, memory: dict[str, Any]) -> str:
        return model.memory_id(memory["type"], memory["topic_key"], memory["content"])

    def _ingest_one(self, ns: str, profile: str, memory: dict[str, Any], now: int) -> dict[str, Any]:
        mid = self._memory_id(memory)
        existing = self._row(ns, profile, mid)
        if existing is not None and self._active(existing, now):
            return {"id": mid, "status": "duplicate", "superseded": []}
        if existing is not None and existing["superseded_by"] is not None:
            # Revived: the old row is active again and the pointer moves to it. Its first writer's
            # source (and every other stored field) stays.
            self._db.execute("UPDATE memories SET superseded_by=NULL, superseded_at=NULL WHERE rid=?",
                             (existing["rid"],))
            return {"id": mid, "status": "revived", "superseded": self._supersede(ns, profile, memory, mid, now)}
        if existing is not None:  # an expired task
            if self.policy.expired_task_reingest == "revived":
                self._db.execute("UPDATE memories SET expires_at=? WHERE rid=?",
                                 (self._expiry(memory, now), existing["rid"]))
                return {"id": mid, "status": "revived", "superseded": []}
            self._delete(existing["rid"])
        self._insert(ns, profile, mid, memory, now)
        return {"id": mid, "status": "created", "superseded": self._supersede(ns, profile, memory, mid, now)}

    # -- get / forget ------------------------------------------------------------------------------

    def _record(self, row: dict[str, Any], supersedes: list[str]) -> dict[str, Any]:
        # The embedding is left out: the page's GET example shows the supersession state, not the
        # vector, and echoing up to 4096 floats on every read helps no one.
        return self._times({"id": row["id"], "type": row["type"], "topic_key": row["topic_key"],
                            "summary": row["summary"], "content": json.loads(row["content"]),
                            "keywords": row["keywords"], "session_id": row["session_id"], "source": row["source"],
                            "created_at": row["created_at"], "superseded_by": row["superseded_by"],
                            "superseded_at": row["superseded_at"], "expires_at": row["expires_at"],
                            "supersedes": supersedes})

    def _times(self, shown: dict[str, Any]) -> dict[str, Any]:
        """A record or hit with its times as the policy shows them (stored as integer Unix ms)."""
        if not self.policy.created_at_shown:
            shown.pop("created_at", None)
        if self.policy.times == "rfc3339":
            from datetime import datetime, timezone

            for name in ("created_at", "superseded_at", "expires_at"):
                if isinstance(shown.get(name), int):
                    at = datetime.fromtimestamp(shown[name] / 1000, tz=timezone.utc)
                    shown[name] = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return shown

    def _supersedes(self, ns: str, profile: str, mid: str) -> list[str]:
        """The rows `mid` replaced; with the "chain" policy, every row before it, transitively."""
        out: list[str] = []
        todo = [mid]
        while todo:
            replaced = [r[0] for r in self._db.execute(
                "SELECT id FROM memories WHERE ns=? AND profile=? AND superseded_by=? ORDER BY superseded_at, id",
                (ns, profile, todo.pop(0))).fetchall() if r[0] not in out and r[0] != mid]
            out += replaced
            if self.policy.supersedes_listed == "chain":
                todo += replaced
        return out

    def get(self, ns: Any, profile: Any, mid: Any) -> dict[str, Any]:
        ns, profile = self._profile(ns, profile)
        if not isinstance(mid, str):
            raise invalid("id must be a string")
        with self._lock:
            row = self._row(ns, profile, mid)
            if row is None or self._expired(row, self.now_ms()):
                # An expired task is hidden (expiry hides, it does not delete) until re-ingested or forgotten.
                raise not_found(f"memory not found: {mid}")
            supersedes = self._supersedes(ns, profile, mid)
        return self._record(row, supersedes)

    def forget(self, ns: Any, profile: Any, mid: Any) -> dict[str, Any]:
        ns, profile = self._profile(ns, profile)
        if not isinstance(mid, str):
            raise invalid("id must be a string")

        def work() -> dict[str, Any]:
            row = self._row(ns, profile, mid)
            if row is None:
                raise not_found(f"memory not found: {mid}")
            # Rows it superseded stay superseded: forget removes one row, and supersession history is
            # only ever moved by an ingest.
            self._delete(row["rid"])
            return {"deleted": mid, "txid": self._next_txid(ns, profile)}

        return self._transaction(work)

    # -- recall ------------------------------------------------------------------------------------

    def _recall_params(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise invalid("the body must be an object")
        query = body.get("query")
        if query is not None and not isinstance(query, str):
            raise invalid("query must be a string")
        topic_key = body.get("topic_key")
        if topic_key is not None and not isinstance(topic_key, str):
            raise invalid("topic_key must be a string")
        embedding = self._check_embedding(body.get("embedding"), "embedding")
        query = query if query and query.strip() else None
        topic_key = topic_key or None
        if query is None and embedding is None and topic_key is None:
            raise invalid("recall needs at least one of query, embedding, topic_key")
        types = body.get("types")
        if types is not None:
            if not isinstance(types, list) or not types or not all(t in model.TYPES for t in types):
                raise invalid(f"types must be a non-empty array of {', '.join(model.TYPES)}")
        k = body.get("k")
        if k is None:
            k = model.RECALL_DEFAULT_K
        elif not _is_int(k) or k < 1:
            raise invalid("k must be a positive integer")
        include_superseded = body.get("include_superseded", False)
        if include_superseded is None:
            include_superseded = False
        if not isinstance(include_superseded, bool):
            raise invalid("include_superseded must be a boolean")
        include_turns = body.get("include_turns", False)
        if include_turns is not None and not isinstance(include_turns, bool):
            raise invalid("include_turns must be a boolean")
        for name in ("session_id", "source"):
            if body.get(name) is not None and not isinstance(body.get(name), str):
                raise invalid(f"{name} must be a string")
        return {"query": query, "embedding": embedding, "topic_key": topic_key, "types": types,
                "k": min(k, MAX_K), "include_superseded": include_superseded, "include_turns": bool(include_turns),
                "session_id": body.get("session_id"), "source": body.get("source")}

    def _candidates(self, ns: str, profile: str, p: dict[str, Any], now: int) -> tuple[str, list[Any]]:
        """The SQL condition (over `memories m`) of the rows recall may return: the merged list drops
        superseded (unless asked) and expired rows, then the filters apply."""
        sql = ["m.ns=?", "m.profile=?", "(m.expires_at IS NULL OR m.expires_at > ?)"]
        params: list[Any] = [ns, profile, now]
        if not p["include_superseded"]:
            sql.append("m.superseded_by IS NULL")
        if p["types"]:
            sql.append(f"m.type IN ({','.join('?' * len(p['types']))})")
            params += p["types"]
        for name in ("session_id", "source"):
            if p[name] is not None:
                sql.append(f"m.{name}=?")
                params.append(p[name])
        return " AND ".join(sql), params

    def _topic_channel(self, where: str, params: list[Any], p: dict[str, Any], depth: int) -> list[int]:
        rows = self._db.execute(f"SELECT m.rid FROM memories m WHERE {where} AND m.topic_key=? "
                                "ORDER BY (m.superseded_by IS NULL) DESC, m.created_at DESC, m.id LIMIT ?",
                                (*params, p["topic_key"], depth)).fetchall()
        return [r[0] for r in rows]

    def _keyword_channel(self, where: str, params: list[Any], p: dict[str, Any], depth: int) -> list[int]:
        words = list(dict.fromkeys(w.lower() for w in _WORD.findall(p["query"])))
        if not words:
            return []
        if self.fts:
            match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            try:
                rows = self._db.execute(
                    f"SELECT m.rid FROM memories_fts f JOIN memories m ON m.rid = f.rowid "
                    f"WHERE memories_fts MATCH ? AND {where} ORDER BY bm25(memories_fts), m.created_at DESC, m.id "
                    "LIMIT ?", (match, *params, depth)).fetchall()
            except sqlite3.OperationalError:  # a word FTS5 cannot parse matches nothing
                return []
            return [r[0] for r in rows]
        # Without FTS5: any word as a substring of summary + keywords, ranked by words matched.
        hits = " + ".join("(instr(lower(m.summary || ' ' || coalesce(m.keywords, '')), ?) > 0)" for _ in words)
        rows = self._db.execute(f"SELECT rid FROM (SELECT m.rid, m.created_at, m.id, {hits} AS n FROM memories m "
                                f"WHERE {where}) WHERE n > 0 ORDER BY n DESC, created_at DESC, id LIMIT ?",
                                (*words, *params, depth)).fetchall()
        return [r[0] for r in rows]

    def _vector_channel(self, where: str, params: list[Any], p: dict[str, Any], depth: int) -> list[int]:
        query = p["embedding"]
        qnorm = math.sqrt(sum(x * x for x in query))
        if qnorm == 0:
            return []
        # Tasks skip the vector channel entirely; a vector of another dimension is skipped, not an
        # error (recall.md: the channel degrades rather than failing the request).
        rows = self._db.execute(f"SELECT m.rid, v.vector, m.created_at FROM memories m JOIN vectors v ON v.rid = m.rid "
                                f"WHERE {where} AND m.type <> 'task' AND v.dim = ?", (*params, len(query))).fetchall()
        scored = []
        for rid, text, created in rows:
            vec = json.loads(text)
            norm = math.sqrt(sum(x * x for x in vec))
            if norm == 0:
                continue
            scored.append((sum(a * b for a, b in zip(query, vec)) / (qnorm * norm), created, rid))
        scored.sort(key=lambda s: (-s[0], -s[1], s[2]))
        return [rid for _, _, rid in scored[:depth]]

    def _fuse(self, ranked: dict[str, list[int]]) -> list[tuple[int, float, list[str]]]:
        scores: dict[int, float] = {}
        found: dict[int, list[str]] = {}
        for channel in model.CHANNELS:
            for rank, rid in enumerate(ranked.get(channel, ()), start=1):
                scores[rid] = scores.get(rid, 0.0) + WEIGHTS[channel] / (RRF_K + rank)
                found.setdefault(rid, []).append(channel)
        return [(rid, scores[rid], found[rid]) for rid in scores]

    def _hit(self, row: dict[str, Any], score: float, channels: list[str]) -> dict[str, Any]:
        return self._times({"id": row["id"], "type": row["type"], "topic_key": row["topic_key"],
                            "summary": row["summary"], "content": json.loads(row["content"]),
                            "keywords": row["keywords"], "session_id": row["session_id"], "source": row["source"],
                            "created_at": row["created_at"], "superseded_by": row["superseded_by"],
                            "score": score, "channels": channels})

    def recall(self, ns: Any, profile: Any, body: Any) -> dict[str, Any]:
        ns, profile = self._profile(ns, profile)
        p = self._recall_params(body)
        with self._lock:
            if not self._known(ns, profile):
                # recall.md: a profile that does not exist answers empty, txid 0, creating nothing.
                return self._recall_answer([], 0, p)
            now = self.now_ms()
            where, params = self._candidates(ns, profile, p, now)
            depth = max(CHANNEL_DEPTH, p["k"])
            ranked: dict[str, list[int]] = {}
            if p["topic_key"] is not None:
                ranked["topic"] = self._topic_channel(where, params, p, depth)
            if p["query"] is not None:
                ranked["keyword"] = self._keyword_channel(where, params, p, depth)
            if p["embedding"] is not None:
                ranked["vector"] = self._vector_channel(where, params, p, depth)
            fused = self._fuse(ranked)
            rows = {r["rid"]: r for r in self._rows(
                f"rid IN ({','.join('?' * len(fused))})", [rid for rid, _, _ in fused])} if fused else {}
            txid = self.txid(ns, profile)
        fused = [f for f in fused if f[0] in rows]
        # Ties on score go to the more recent memory (recall.md: "tiebreaks on recency").
        fused.sort(key=lambda f: (-f[1], -rows[f[0]]["created_at"], rows[f[0]]["id"]))
        hits = [self._hit(rows[rid], score, channels) for rid, score, channels in fused[:p["k"]]]
        return self._recall_answer(hits, txid, p)

    @staticmethod
    def _recall_answer(hits: list[dict[str, Any]], txid: int, p: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"memories": hits, "txid": txid}
        if p["include_turns"]:
            out["turns"] = []  # no transcript layer here: no turn can match
        return out

    # -- sessions ----------------------------------------------------------------------------------

    def sessions(self, ns: Any, profile: Any, limit: int | None = None) -> dict[str, Any]:
        ns, profile = self._profile(ns, profile)
        if limit is not None and (not _is_int(limit) or limit < 1):
            raise invalid("limit must be a positive integer")
        with self._lock:
            rows = self._db.execute(
                "SELECT session_id, count(*), max(created_at) AS last FROM memories WHERE ns=? AND profile=? "
                "AND session_id IS NOT NULL AND (expires_at IS NULL OR expires_at > ?) "
                + ("AND type='task' " if self.policy.sessions_listed == "tasks" else "") + "GROUP BY session_id "
                "ORDER BY last DESC, session_id LIMIT ?",
                (ns, profile, self.now_ms(), limit if limit is not None else -1)).fetchall()
            txid = self.txid(ns, profile)
        return {"sessions": [{"session_id": s, "memories": n, "last_at": last} for s, n, last in rows], "txid": txid}

    def end_session(self, ns: Any, profile: Any, session_id: Any) -> dict[str, Any]:
        ns, profile = self._profile(ns, profile)
        if not isinstance(session_id, str) or not session_id:
            raise invalid("session_id must be a non-empty string")

        def work() -> dict[str, Any]:
            rids = [r[0] for r in self._db.execute(
                "SELECT rid FROM memories WHERE ns=? AND profile=? AND session_id=? AND type='task'",
                (ns, profile, session_id)).fetchall()]
            for rid in rids:
                self._delete(rid)
            # Nothing removed, nothing written: no txid of its own (and no profile created).
            txid = self._next_txid(ns, profile) if rids else self.txid(ns, profile)
            return {"session_id": session_id, "deleted": len(rids), "txid": txid}

        return self._transaction(work)
