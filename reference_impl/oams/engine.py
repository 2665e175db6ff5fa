"""The OAMS 0.1 reference engine (sqlite): the five operations of §3, namespaces and the cross-owner
refusal of §4, provenance kept as given (§5), and a consolidation pass writing §6's dream fields
(an operation of its own, which §3 allows: "Implementations MAY add operations").

Readings (docs/catalogue-oams.md): STORE is an upsert on (namespace, key) that keeps a given
created_at/updated_at and otherwise assigns them (an identical repeat changes nothing); RECALL needs
a namespace (or `namespaces` of one owner), `k` defaults to 8 and is clamped to MAX_K, ranks by the
share of query words found in value and tags, filters tags any-of and updated_at in [since, until);
LIST pages by updated_at desc then key, with an opaque cursor; FORGET is hard (soft as a variant);
BATCH_STORE validates everything first and writes in one transaction. Every refusal is an
`OamsError` with a reserved code; bounded sizes give -32004.

The engine holds no branch on a fault's name: a fault wraps its methods (faults.py), a variant sets
a policy point (policy.py)."""

from __future__ import annotations

import base64
import binascii
import copy
import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from memconform.reference_impl.oams.policy import OamsPolicy, configure
from memconform.suite.oams import model
from memconform.suite.oams.model import (CROSS_NAMESPACE_DENIED, MEMORY_NOT_FOUND, NAMESPACE_NOT_FOUND,
                                         QUOTA_EXCEEDED, VALIDATION_FAILED)

MAX_K = 100
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_BATCH = 1000
MAX_KEY = 512
MAX_VALUE = 1024 * 1024
MAX_TAGS = 256
MAX_EMBEDDING = 16384
MAX_MEMORY_BYTES = 2 * 1024 * 1024
MAX_NAMESPACES = 64
_WORD = re.compile(r"\w+", re.UNICODE)
_OFFSET_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$")


def _in_utc(value: Any) -> Any:
    """An RFC 3339 time with an offset as the same instant in UTC ("…Z"); anything else as it is."""
    if not isinstance(value, str) or not _OFFSET_TIME.match(value):
        return value
    try:
        moment = datetime.fromisoformat(value).astimezone(timezone.utc)
    except ValueError:
        return value
    return moment.strftime("%Y-%m-%dT%H:%M:%S" + (".%f" if moment.microsecond else "")) + "Z"


class OamsError(Exception):
    """A refusal in §3's error shape: {"error": {"code", "message", "data"}}."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return {"error": error}


def invalid(message: str, **data: Any) -> OamsError:
    return OamsError(VALIDATION_FAILED, f"validation failed: {message}", data or None)


def _sort_key(stamp: str) -> str:
    """A timestamp as a string that sorts in time order (UTC, microseconds)."""
    t = model.parse_time(stamp)
    assert t is not None
    return t.strftime("%Y-%m-%dT%H:%M:%S.%f")


class OamsService:
    def __init__(self, db: str = ":memory:", fault: Any = None, variants: Iterable[str] = ()):
        self.fault = fault if isinstance(fault, str) or fault is None else fault.name
        self.variants = tuple(variants)
        self._fault_obj = fault
        self._db = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        self._lock = threading.RLock()
        self._db.execute("PRAGMA journal_mode=MEMORY")
        self._db.execute("""CREATE TABLE IF NOT EXISTS memories (
            namespace TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL, created TEXT NOT NULL,
            updated TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (namespace, key))""")
        self._db.execute("CREATE INDEX IF NOT EXISTS by_updated ON memories (namespace, updated DESC, key)")
        self.policy: OamsPolicy = configure(self, fault, self.variants)

    def close(self) -> None:
        self._db.close()

    # -- time ------------------------------------------------------------------------------------

    def _now(self) -> str:
        t = datetime.now(timezone.utc)
        if self.policy.time_style == "offset":
            return t.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    # -- validation (§2, §4) -----------------------------------------------------------------------

    def _validate(self, memory: Any, where: str = "memory") -> dict[str, Any]:
        """A memory as sent, checked: what §2 requires (timestamps only if given) and the bounds."""
        if not isinstance(memory, dict):
            raise invalid(f"{where} is not a JSON object")
        try:
            size = len(json.dumps(memory, ensure_ascii=False, allow_nan=False).encode("utf-8"))
        except (TypeError, ValueError, RecursionError):  # a lone surrogate, a number beyond double range, …
            raise invalid(f"{where} is not JSON-serializable as UTF-8 (a lone surrogate or a non-finite number)") \
                from None
        if size > MAX_MEMORY_BYTES:
            raise OamsError(QUOTA_EXCEEDED, f"quota exceeded: {where} is {size} bytes (at most {MAX_MEMORY_BYTES})")
        for name in ("key", "namespace"):
            v = memory.get(name)
            if not isinstance(v, str) or not v:
                raise invalid(f"{where}.{name} must be a non-empty string", field=name)
            if len(v) > MAX_KEY:
                raise OamsError(QUOTA_EXCEEDED, f"quota exceeded: {where}.{name} is longer than {MAX_KEY}")
        if not isinstance(memory.get("value"), str):
            raise invalid(f"{where}.value must be a string", field="value")
        if len(memory["value"].encode("utf-8", "surrogatepass")) > MAX_VALUE:
            raise OamsError(QUOTA_EXCEEDED, f"quota exceeded: {where}.value is over {MAX_VALUE} bytes")
        if "\x00" in memory["value"]:
            raise invalid(f"{where}.value holds a NUL: binary is not permitted", field="value")
        self._check_namespace(memory["namespace"])
        if self.policy.offset_times == "normalize":
            memory = {k: _in_utc(v) if k in ("created_at", "updated_at") else v for k, v in memory.items()}
        probe = dict(memory)
        probe.setdefault("created_at", "2000-01-01T00:00:00Z")
        probe.setdefault("updated_at", probe["created_at"] if "created_at" in memory else "2000-01-01T00:00:00Z")
        if "created_at" in memory and "updated_at" not in memory:
            probe["updated_at"] = memory["created_at"]
        # the scope rule is _check_namespace's (above); the order of times only binds given ones
        problems = [p for p in model.memory_problems(probe) if p.requirement != "oams/scope-no-slash-colon"
                    and (p.requirement != "oams/updated-not-before-created" or "updated_at" in memory)]
        if problems:
            raise invalid("; ".join(str(p) for p in problems[:5]), problems=[p.requirement for p in problems])
        if len(memory.get("tags") or ()) > MAX_TAGS or len(memory.get("embedding") or ()) > MAX_EMBEDDING:
            raise OamsError(QUOTA_EXCEEDED, f"quota exceeded: {where} has more than {MAX_TAGS} tags or "
                                            f"{MAX_EMBEDDING} embedding values")
        return memory

    def _check_namespace(self, namespace: Any, field: str = "namespace") -> str:
        if not isinstance(namespace, str) or not namespace:
            raise invalid(f"{field} must be a non-empty string", field=field)
        problems = model.namespace_problems(namespace)
        if problems:
            raise invalid(problems[0].message, field=field)
        return namespace

    # -- rows ----------------------------------------------------------------------------------

    def _row(self, namespace: str, key: str, *, with_deleted: bool = False) -> dict[str, Any] | None:
        row = self._db.execute("SELECT doc, deleted FROM memories WHERE namespace=? AND key=?",
                               (namespace, key)).fetchone()
        if row is None or (row[1] and not with_deleted):
            return None
        return json.loads(row[0])

    def _present(self, doc: dict[str, Any], *, read: bool = False) -> dict[str, Any]:
        """A stored memory as answered (a copy); `read`: by RECALL or LIST."""
        answered = copy.deepcopy(doc)
        if read and self.policy.read_embeddings == "omitted":
            answered.pop("embedding", None)
            answered.pop("embedding_model", None)
        if self.policy.null_parent_id == "omit" and "parent_id" in answered and answered["parent_id"] is None:
            del answered["parent_id"]
        return answered

    def _stamp(self, memory: dict[str, Any], existing: dict[str, Any] | None, now: str) -> dict[str, Any]:
        doc = copy.deepcopy(memory)
        if self.policy.lowercase_tags and isinstance(doc.get("tags"), list):
            doc["tags"] = [t.lower() for t in doc["tags"]]
        if self.policy.tags_order == "sorted" and isinstance(doc.get("tags"), list):
            doc["tags"] = sorted(doc["tags"])
        if self.policy.embedding_precision == "float32" and isinstance(doc.get("embedding"), list):
            doc["embedding"] = [model.as_float32(v) for v in doc["embedding"]]
        if existing is None:
            doc.setdefault("created_at", doc.get("updated_at", now))
            doc.setdefault("updated_at", doc["created_at"])
        else:
            doc.setdefault("created_at", existing["created_at"])
            if "updated_at" not in doc:
                same = {k: v for k, v in doc.items() if k not in ("created_at", "updated_at")} == \
                       {k: v for k, v in existing.items() if k not in ("created_at", "updated_at")}
                doc["updated_at"] = existing["updated_at"] if same and not self.policy.repeat_store_touches else now
                if model.parse_time(doc["updated_at"]) < model.parse_time(doc["created_at"]):  # type: ignore[operator]
                    doc["updated_at"] = doc["created_at"]
        if model.parse_time(doc["updated_at"]) < model.parse_time(doc["created_at"]):  # type: ignore[operator]
            raise invalid(f"updated_at {doc['updated_at']} is before created_at {doc['created_at']}",
                          field="updated_at")
        return doc

    def _write(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Stamp and write `docs` in one transaction: all of them or none."""
        out = []
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for memory in docs:
                    now = self._now()
                    existing = self._row(memory["namespace"], memory["key"])
                    doc = self._stamp(memory, existing, now)
                    self._put(doc)
                    out.append(self._present(doc))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        return out

    def _put(self, doc: dict[str, Any]) -> None:
        self._db.execute("INSERT OR REPLACE INTO memories (namespace, key, doc, created, updated, deleted) "
                         "VALUES (?, ?, ?, ?, ?, 0)",
                         (doc["namespace"], doc["key"], json.dumps(doc, ensure_ascii=False),
                          _sort_key(doc["created_at"]), _sort_key(doc["updated_at"])))

    def _live(self, namespaces: list[str]) -> list[dict[str, Any]]:
        marks = ",".join("?" * len(namespaces))
        rows = self._db.execute(f"SELECT doc FROM memories WHERE deleted=0 AND namespace IN ({marks}) "
                                "ORDER BY updated DESC, key", namespaces).fetchall()
        return [json.loads(r[0]) for r in rows]

    def _known(self, namespace: str) -> bool:
        return self._db.execute("SELECT 1 FROM memories WHERE namespace=? LIMIT 1", (namespace,)).fetchone() is not None

    def _require_known(self, namespaces: list[str]) -> None:
        if self.policy.unknown_namespace in ("error", "error-first"):
            for ns in namespaces:
                if not self._known(ns):
                    raise OamsError(NAMESPACE_NOT_FOUND, f"namespace not found: {ns}", {"namespace": ns})

    # -- STORE -------------------------------------------------------------------------------------

    def store(self, memory: Any, namespace: str | None = None, key: str | None = None) -> dict[str, Any]:
        """STORE: upsert one memory. `namespace`/`key` are REST's path segments: the body may leave
        them out; when it carries them they must agree."""
        if isinstance(memory, dict) and (namespace is not None or key is not None):
            memory = dict(memory)
            for name, given in (("namespace", namespace), ("key", key)):
                if name in memory and memory[name] != given:
                    raise invalid(f"the body's {name} {memory[name]!r} is not the path's {given!r}", field=name)
                memory[name] = given
        if isinstance(memory, dict) and "key" not in memory and self.policy.missing_key == "assign":
            memory = {**memory, "key": uuid.uuid4().hex}
        return self._write([self._validate(memory)])[0]

    # -- BATCH_STORE -------------------------------------------------------------------------------

    def batch_store(self, memories: Any) -> list[dict[str, Any]]:
        if not isinstance(memories, list):
            raise invalid("memories must be an array of memory objects", field="memories")
        if len(memories) > MAX_BATCH:
            raise OamsError(QUOTA_EXCEEDED, f"quota exceeded: {len(memories)} memories in one batch (at most "
                                            f"{MAX_BATCH})")
        checked = []
        for i, m in enumerate(memories):
            try:
                checked.append(self._validate(m, f"memories[{i}]"))
            except OamsError as exc:
                raise OamsError(exc.code, f"{exc.message} (nothing of the batch was written)",
                                {"index": i, **(exc.data or {})}) from None
        return self._write(checked)

    # -- RECALL ------------------------------------------------------------------------------------

    def _scope(self, params: dict[str, Any]) -> list[str]:
        if "namespaces" in params and params["namespaces"] is not None:
            spaces = params["namespaces"]
            if not isinstance(spaces, list) or not spaces or not all(isinstance(s, str) and s for s in spaces):
                raise invalid("namespaces must be a non-empty array of namespace strings", field="namespaces")
            if len(spaces) > MAX_NAMESPACES:
                raise OamsError(QUOTA_EXCEEDED, f"quota exceeded: more than {MAX_NAMESPACES} namespaces")
            for s in spaces:
                self._check_namespace(s, "namespaces")
            owners = sorted({model.owner_of(s) for s in spaces})
            if len(owners) > 1:
                raise OamsError(CROSS_NAMESPACE_DENIED, "cross-namespace access denied: the namespaces span owners "
                                f"{', '.join(owners)} and no consent for both was presented", {"owners": owners})
            return list(dict.fromkeys(spaces))
        if params.get("namespace") is None:
            raise invalid("namespace (or namespaces) is required", field="namespace")
        return [self._check_namespace(params["namespace"])]

    def _time_param(self, params: dict[str, Any], name: str) -> datetime | None:
        value = params.get(name)
        if value is None:
            return None
        # a server normalizing offset times in memories takes a bound with an offset as its instant too
        t = model.parse_time(_in_utc(value) if self.policy.offset_times == "normalize" else value)
        if t is None:
            raise invalid(f"{name} must be an RFC 3339 UTC timestamp", field=name)
        return t

    @staticmethod
    def _tags_param(params: dict[str, Any]) -> list[str] | None:
        tags = params.get("tags")
        if tags is None:
            return None
        if isinstance(tags, str):
            tags = [t for t in tags.split(",") if t]
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags) or len(tags) > MAX_TAGS:
            raise invalid("tags must be an array of strings", field="tags")
        return tags

    def _filtered(self, docs: list[dict[str, Any]], params: dict[str, Any]) -> list[dict[str, Any]]:
        tags = self._tags_param(params)
        since, until = self._time_param(params, "since"), self._time_param(params, "until")
        wanted = {t.lower() if self.policy.lowercase_tags else t for t in tags} if tags else None
        out = []
        for d in docs:
            updated = model.parse_time(d["updated_at"])
            if wanted is not None and not wanted & set(d.get("tags") or ()):
                continue
            if since is not None and updated < since:  # type: ignore[operator]
                continue
            if until is not None and updated >= until:  # type: ignore[operator]
                continue
            out.append(d)
        return out

    def _k(self, params: dict[str, Any]) -> int:
        k = params.get("k")
        if k is None:
            return model.RECALL_DEFAULT_K
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise invalid("k must be a positive integer", field="k")
        return min(k, MAX_K)

    def _rank(self, query: str, docs: list[dict[str, Any]]) -> list[tuple[float, dict[str, Any]]]:
        words = {w.lower() for w in _WORD.findall(query)}
        ranked = []
        for d in docs:
            have = {w.lower() for w in _WORD.findall(d["value"] + " " + " ".join(d.get("tags") or ()))}
            score = len(words & have) / len(words) if words else 0.0
            if score > 0:
                ranked.append((score, d))
        ranked.sort(key=lambda sd: (-sd[0], tuple(-ord(c) for c in _sort_key(sd[1]["updated_at"])), sd[1]["key"]))
        return ranked

    def recall(self, params: Any) -> list[dict[str, Any]] | dict[str, Any]:
        if not isinstance(params, dict):
            raise invalid("recall parameters must be an object")
        if self.policy.unknown_namespace == "error-first":
            with self._lock:
                self._require_known(self._scope(params))
        query = params.get("query")
        if not isinstance(query, str) or not query.strip():
            raise invalid("query must be a non-empty string", field="query")
        if len(query) > MAX_VALUE:
            raise OamsError(QUOTA_EXCEEDED, "quota exceeded: query too long")
        spaces = self._scope(params)
        k = self._k(params)
        with self._lock:
            self._require_known(spaces)
            docs = self._filtered(self._live(spaces), params)
        out = []
        for score, d in self._rank(query, docs)[:k]:
            m = self._present(d, read=True)
            meta = dict(m.get("metadata") or {})
            meta["score"] = round(score, 6)
            m["metadata"] = meta
            out.append(m)
        return out if self.policy.recall_envelope == "array" else {"memories": out}

    # -- LIST ------------------------------------------------------------------------------------

    def list(self, namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None,
             tags: Any = None) -> dict[str, Any]:
        ns = self._check_namespace(namespace)
        if limit in (None, ""):
            n = DEFAULT_LIMIT
        else:
            try:
                n = int(limit) if not isinstance(limit, bool) else -1
            except (TypeError, ValueError):
                n = -1
            if n < 1 or (isinstance(limit, float) and not limit.is_integer()):
                raise invalid("limit must be a positive integer", field="limit")
            n = min(n, MAX_LIMIT)
        if self.policy.list_page_cap is not None:
            n = min(n, self.policy.list_page_cap)
        after = self._cursor(cursor)
        with self._lock:
            self._require_known([ns])
            docs = self._filtered(self._live([ns]), {"since": since, "tags": tags})
        if after is not None:
            docs = [d for d in docs if (_desc(_sort_key(d["updated_at"])), d["key"]) > (_desc(after[0]), after[1])]
        page, more = docs[:n], len(docs) > n
        nxt = self._cursor_of(page[-1]) if more and page else None
        items = [self._present(d, read=True) for d in page]
        if self.policy.list_envelope == "items":
            return {"items": items, "cursor": nxt}
        return {"memories": items, "next_cursor": nxt}

    @staticmethod
    def _cursor_of(doc: dict[str, Any]) -> str:
        raw = json.dumps([_sort_key(doc["updated_at"]), doc["key"]], ensure_ascii=False).encode("utf-8")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @staticmethod
    def _cursor(cursor: Any) -> tuple[str, str] | None:
        if cursor in (None, ""):
            return None
        try:
            if not isinstance(cursor, str) or len(cursor) > 4096:
                raise ValueError
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            value = json.loads(raw.decode("utf-8"))
            if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
                raise ValueError
            return value[0], value[1]
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise invalid("cursor is not one this server gave", field="cursor") from None

    # -- FORGET ------------------------------------------------------------------------------------

    def forget(self, namespace: Any, key: Any) -> None:
        ns = self._check_namespace(namespace)
        if not isinstance(key, str) or not key:
            raise invalid("key must be a non-empty string", field="key")
        with self._lock:
            if self._row(ns, key) is None:
                if self.policy.forget_unknown == "ok":
                    return None
                raise OamsError(MEMORY_NOT_FOUND, f"memory not found: ({ns}, {key})", {"namespace": ns, "key": key})
            if self.policy.forget_mode == "soft":
                self._db.execute("UPDATE memories SET deleted=1 WHERE namespace=? AND key=?", (ns, key))
            else:
                self._db.execute("DELETE FROM memories WHERE namespace=? AND key=?", (ns, key))
        return None

    # -- consolidation (§5, §6; an added operation) ----------------------------------------------------

    def consolidate(self, namespace: Any, strategy: Any = "synthesize") -> list[dict[str, Any]]:
        """One pass over the namespace's memories that are not themselves consolidations: one new
        memory merging them, with parent_id, source_id and the dream_* metadata of §5/§6."""
        ns = self._check_namespace(namespace)
        if strategy is None:
            strategy = "synthesize"
        if not model.strategy_known(strategy):
            raise invalid(f"unknown dream_strategy {strategy!r}", field="strategy")
        with self._lock:
            inputs = [d for d in self._live([ns]) if not model.is_consolidated(d)]
        if not inputs:
            return []
        inputs = inputs[:MAX_BATCH]
        strongest = max(inputs, key=self._strength)
        run = str(uuid.uuid4())
        source = strongest.get("source_id")
        memory = {
            "key": f"dream-{run}", "namespace": ns,
            "value": "\n\n".join(d["value"] for d in reversed(inputs))[:MAX_VALUE // 2],
            "tags": sorted({t for d in inputs for t in d.get("tags") or ()})[:MAX_TAGS],
            "metadata": {"dream_strategy": strategy, "dream_inputs": [[d["namespace"], d["key"]] for d in inputs],
                         "dream_run_id": run},
            "parent_id": strongest["key"],
            "source_id": source if source is not None else f"dream:{strategy}:{run}",
        }
        return self._write([memory])

    @staticmethod
    def _strength(doc: dict[str, Any]) -> tuple[float, str]:
        conf = (doc.get("metadata") or {}).get("confidence")
        return (float(conf) if isinstance(conf, (int, float)) and not isinstance(conf, bool) else 0.5,
                _sort_key(doc["updated_at"]))

    # -- for export --------------------------------------------------------------------------------

    def all_memories(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute("SELECT doc FROM memories WHERE deleted=0 ORDER BY created, namespace, key").fetchall()
        return [self._present(json.loads(r[0])) for r in rows]


def _desc(stamp: str) -> tuple[int, ...]:
    """A key that sorts newest first."""
    return tuple(-ord(c) for c in stamp)
