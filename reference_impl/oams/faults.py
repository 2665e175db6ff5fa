"""OAMS faults of the reference implementation (spec "oams", since 0.1): each one deliberate
violation, made apart from the right implementation by wrapping a method (reference_impl/wraps.py)
of the engine (plain keys: `store`, `_stamp`, `_validate`, …), of its REST adapter (`rest.<method>`,
http.RestBinding), its JSON-RPC endpoint (`rpc.<method>`, rpc.RpcEndpoint) or its exporter
(`file.<method>`, bundle.Exporter), or by setting a decision point of policy.OamsPolicy
(`overrides`). engine.py, http.py, rpc.py and bundle.py hold no branch on a fault's name.

`breaks` are exactly the requirements the checks report against each fault (tests/oams/
test_faults.py holds the suite to it); where a fault shows in more than one check, the reason is
in its description. `bindings` None: every live binding (http, jsonrpc, stdio)."""

from __future__ import annotations

import base64
import json
import re
import struct
import unicodedata
from collections.abc import Callable
from datetime import timedelta, timezone
from typing import Any

from memconform.reference_impl.faults import Fault
from memconform.reference_impl.oams.engine import OamsError, invalid
from memconform.reference_impl.wraps import after, before, instead
from memconform.suite.oams import model

LIVE = ("http", "jsonrpc", "stdio")
ALL = (*LIVE, "file")


def _f(name: str, description: str, *breaks: str, bindings: tuple[str, ...] | None = LIVE,
       overrides: dict[str, Any] | None = None, wraps: dict[str, Callable[..., Any]] | None = None) -> Fault:
    return Fault(f"oams-{name}", "oams", description, tuple(f"oams/{b}" for b in breaks), since="0.1",
                 bindings=bindings, overrides=dict(overrides or {}), wraps=dict(wraps or {}))


def _wrap(name: str, make: Callable[[Any, Callable[..., Any]], Callable[..., Any]]) -> dict[str, Any]:
    return {name: make}


def _each_recalled(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """Every memory RECALL answers changed in place, a bare array or the {"memories": [...]} object
    (variant oams-recall-object-envelope) alike."""
    def apply(answer: Any) -> Any:
        for m in answer.get("memories", []) if isinstance(answer, dict) else answer:
            change(m)
        return answer
    return after("recall", apply)


# -- round 5 (listing, batches, forget) helpers -------------------------------------------------------

#: the page cap of oams-list-limit-capped
_PAGE_CAP = 20
#: the chunk size of oams-batch-chunked
_CHUNK = 5


def _page_items(page: dict[str, Any]) -> str:
    return "memories" if "memories" in page else "items"


def _list_cursor_drops_filters(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The continuation query (a cursor given) is built from the cursor alone: since and tags filter
    the first page only."""
    def list_(namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None, tags: Any = None) -> Any:
        if cursor not in (None, ""):
            return original(namespace, cursor, limit)
        return original(namespace, cursor, limit, since, tags)
    return list_


def _list_capped(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A page cut to _PAGE_CAP after its next_cursor was made for the limit asked: with a limit above
    the cap and no more memories than the limit, the cursor is null and the rest unreachable."""
    def list_(namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None, tags: Any = None) -> Any:
        page = original(namespace, cursor, limit, since, tags)
        items = _page_items(page)
        if len(page[items]) > _PAGE_CAP:
            page = {**page, items: page[items][:_PAGE_CAP]}
        return page
    return list_


def _list_later_pages_without_source(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Pages fetched with a cursor come from a continuation query whose projection leaves source_id out."""
    def list_(namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None, tags: Any = None) -> Any:
        page = original(namespace, cursor, limit, since, tags)
        if cursor not in (None, ""):
            for m in page[_page_items(page)]:
                m.pop("source_id", None)
        return page
    return list_


def _batch_in_chunks(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A batch of more than _CHUNK memories written _CHUNK at a time, each chunk validated and
    committed as a transaction of its own: an invalid memory in a later chunk fails the request after
    the earlier chunks were committed (and the error's index counts within its chunk)."""
    def batch_store(memories: Any) -> Any:
        if not isinstance(memories, list) or len(memories) <= _CHUNK:
            return original(memories)
        out: list[Any] = []
        for start in range(0, len(memories), _CHUNK):
            out.extend(original(memories[start:start + _CHUNK]))
        return out
    return batch_store


def _forget_by_owner_and_key(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """FORGET deletes by owner and key (`DELETE … WHERE owner = ? AND key = ?`): the same key in the
    owner's other namespaces goes too."""
    def forget(namespace: Any, key: Any) -> None:
        original(namespace, key)
        if isinstance(namespace, str) and isinstance(key, str):
            owner = model.owner_of(namespace) + ":"
            with service._lock:
                service._db.execute("DELETE FROM memories WHERE key=? AND substr(namespace, 1, ?)=?",
                                    (key, len(owner), owner))
        return None
    return forget


def _batch_tags_kept_case() -> dict[str, Any]:
    """BATCH_STORE (the import path) stamps its memories without STORE's ingest step: their tags are
    written with the case they came with."""
    def batch(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(memories: Any) -> Any:
            service._importing = True
            try:
                return original(memories)
            finally:
                service._importing = False
        return wrong

    def stamp(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
            doc = original(memory, existing, now)
            if getattr(service, "_importing", False) and isinstance(memory.get("tags"), list):
                doc["tags"] = list(memory["tags"])
            return doc
        return wrong

    return {"batch_store": batch, "_stamp": stamp}


def _forget_falls_back_to_owner(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """FORGET of a key its namespace does not hold looks the key up among the owner's namespaces (a
    lookup by owner and key) and deletes the memory it finds there, answering success. The lookup is made
    before the engine's own (not on its refusal): a server whose FORGET of an unknown pair answers success
    (variant oams-forget-unknown-ok) falls back the same way."""
    def forget(namespace: Any, key: Any) -> None:
        if isinstance(namespace, str) and isinstance(key, str) and key and ":" in namespace:
            owner = model.owner_of(namespace) + ":"
            with service._lock:
                held = service._db.execute("SELECT 1 FROM memories WHERE deleted=0 AND namespace=? AND key=?",
                                           (namespace, key)).fetchone()
                row = None if held else service._db.execute(
                    "SELECT namespace FROM memories WHERE deleted=0 AND key=? AND substr(namespace, 1, ?)=? "
                    "ORDER BY namespace LIMIT 1", (key, len(owner), owner)).fetchone()
            if row is not None:
                return original(row[0], key)
        return original(namespace, key)
    return forget


# -- the wrong implementations that need more than a line ---------------------------------------------

def _value_changed(change: Callable[[str], str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A validated memory whose value is stored changed (it reached the store that way)."""
    return lambda memory: {**memory, "value": change(memory["value"])}


def _metadata_mapped(change: Callable[[Any], Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A memory whose metadata reached the store with every leaf value `change`d."""
    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return change(v)
    return lambda memory: ({**memory, "metadata": walk(memory["metadata"])}
                           if isinstance(memory.get("metadata"), dict) else memory)


#: Metadata kept in a store whose JSON column has no boolean (true comes back 1).
_metadata_bools_as_ints = _metadata_mapped(lambda v: int(v) if isinstance(v, bool) else v)
#: Metadata kept in a store whose number type is float32: 0.1 comes back 0.10000000149011612.
_metadata_floats_as_float32 = _metadata_mapped(lambda v: model.as_float32(v) if isinstance(v, float) else v)
#: Metadata numbers rounded to four places, as a DECIMAL(10,4) column keeps them (round 18).
_metadata_floats_rounded = _metadata_mapped(lambda v: round(v, 4) if isinstance(v, float) else v)


def _namespace_folded(memory: dict[str, Any]) -> dict[str, Any]:
    return {**memory, "namespace": memory["namespace"].lower()}


def _source_url_normalized(memory: dict[str, Any]) -> dict[str, Any]:
    import urllib.parse

    source = memory.get("source_id")
    if not isinstance(source, str) or not source.lower().startswith(("http://", "https://")):
        return memory
    url = urllib.parse.urlsplit(source)
    return {**memory, "source_id": urllib.parse.urlunsplit((url.scheme.lower(), url.netloc.lower(), url.path or "/",
                                                             url.query, url.fragment))}


def _batch_source_urls_canonical(memories: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """An importer canonicalizing URL source_ids (RFC 3986 §6 normalization: scheme and host in lower
    case, unreserved characters percent-decoded, a trailing slash dropped) before writing them."""
    import urllib.parse

    def canonical(source: str) -> str:
        url = urllib.parse.urlsplit(source)
        path = re.sub(r"%(7[eE]|2[dDeE]|5[fF]|[46][1-9a-fA-F]|[57][0-9aA]|3[0-9])",
                      lambda m: chr(int(m.group(1), 16)), url.path).rstrip("/")
        return urllib.parse.urlunsplit((url.scheme.lower(), url.netloc.lower(), path, url.query, url.fragment))

    if isinstance(memories, list):
        memories = [{**m, "source_id": canonical(m["source_id"])} if isinstance(m, dict)
                    and isinstance(m.get("source_id"), str) and m["source_id"].lower().startswith(("http://", "https://"))
                    else m for m in memories]
    return (memories,), {}


def _offset_dropped(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def time_param(params: dict[str, Any], name: str) -> Any:
        value = params.get(name)
        if isinstance(value, str):
            params = {**params, name: re.sub(r"[+-]\d{2}:?\d{2}$", "Z", value)}  # the offset dropped
        return original(params, name)
    return time_param


def _id_as_string(answer: Any) -> Any:
    if isinstance(answer, dict) and isinstance(answer.get("id"), int) and not isinstance(answer["id"], bool):
        answer["id"] = str(answer["id"])
    return answer


def _two_hours_ahead(now: str) -> str:
    shifted = model.parse_time(now) + timedelta(hours=2)  # type: ignore[operator]
    return shifted.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _batch_times_dropped(memories: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if isinstance(memories, list):
        memories = [{k: v for k, v in m.items() if k not in ("created_at", "updated_at")} if isinstance(m, dict) else m
                    for m in memories]
    return (memories,), {}


def _upsert_keeps_source(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        doc = original(memory, existing, now)
        if existing is not None and "source_id" in existing:
            doc["source_id"] = existing["source_id"]
        return doc
    return stamp


def _answers_input(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def store(memory: Any, namespace: Any = None, key: Any = None) -> Any:
        original(memory, namespace, key)
        return dict(memory)
    return store


def _later_updated(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        doc = original(memory, existing, now)
        if existing is None and "updated_at" not in memory:
            t = model.parse_time(doc["created_at"]) + timedelta(milliseconds=1)  # type: ignore[operator]
            doc["updated_at"] = t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return doc
    return stamp


def _created_now(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        doc = original(memory, existing, now)
        if existing is None:
            doc["created_at"] = now
        return doc
    return stamp


def _upsert_resets_created(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        doc = original(memory, existing, now)
        if existing is not None and "created_at" not in memory:
            doc["created_at"] = now
            doc["updated_at"] = now
        return doc
    return stamp


def _upsert_keeps_updated_at(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The upsert's UPDATE sets every column but updated_at: a new value written without times keeps
    the updated_at of the row it replaces."""
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        doc = original(memory, existing, now)
        if existing is not None and "updated_at" not in memory:
            doc["updated_at"] = existing["updated_at"]
        return doc
    return stamp


def _upsert_keeps_old(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        return dict(existing) if existing is not None else original(memory, existing, now)
    return stamp


def _duplicate_pairs() -> dict[str, Any]:
    writes: dict[tuple[str, str], int] = {}

    def put(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(doc: dict[str, Any]) -> None:
            pair = (doc["namespace"], doc["key"])
            writes[pair] = writes.get(pair, 0) + 1
            original(doc)
        return wrong

    def live(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(namespaces: list[str]) -> list[dict[str, Any]]:
            out = []
            for d in original(namespaces):
                out.append(d)
                if writes.get((d["namespace"], d["key"]), 0) > 1:
                    out.append(dict(d))
            return out
        return wrong

    return {"_put": put, "_live": live}


def _accepts_any_value(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def validate(memory: Any, where: str = "memory") -> Any:
        if isinstance(memory, dict):
            value = memory.get("value", "")
            memory = {**memory, "value": value if isinstance(value, str) else json.dumps(value)}
        return original(memory, where)
    return validate


def _pairs_keyed_joined(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Rows keyed by namespace and key run together: a pair joining alike replaces another's row."""
    def put(doc: dict[str, Any]) -> None:
        joined = doc["namespace"] + doc["key"]
        service._db.execute("DELETE FROM memories WHERE namespace || key = ? AND NOT (namespace = ? AND key = ?)",
                            (joined, doc["namespace"], doc["key"]))
        original(doc)
    return put


def _in_utc(value: Any) -> Any:
    from datetime import datetime

    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
    except ValueError:
        return value
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ") if t and t.tzinfo else value


def _offset_times_kept() -> dict[str, Any]:
    """accepts-offset-times: a created_at / updated_at with an offset passes validation as its UTC
    instant, and the memory is kept, answered and listed with the times as sent."""
    kept: dict[tuple[str, str], dict[str, str]] = {}

    def validate(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(memory: Any, where: str = "memory") -> Any:
            if not isinstance(memory, dict):
                return original(memory, where)
            given = {k: memory[k] for k in ("created_at", "updated_at") if isinstance(memory.get(k), str)}
            checked = original({**memory, **{k: _in_utc(v) for k, v in given.items()}}, where)
            if isinstance(checked, dict):
                offsets = {k: v for k, v in given.items() if not v.endswith(("Z", "z", "+00:00"))}
                if offsets:
                    kept[(checked["namespace"], checked["key"])] = offsets
                else:
                    kept.pop((checked["namespace"], checked["key"]), None)
            return checked
        return wrong

    def present(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(doc: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            out = original(doc, *args, **kwargs)
            given = kept.get((doc.get("namespace"), doc.get("key"))) if isinstance(doc, dict) else None
            return {**out, **given} if given and isinstance(out, dict) else out
        return wrong
    return {"_validate": validate, "_present": present}


def _scope_unchecked(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def check_namespace(namespace: Any, field: str = "namespace") -> str:
        if isinstance(namespace, str) and namespace:
            return namespace
        return original(namespace, field)
    return check_namespace


def _recall_all_namespaces(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def scope(params: dict[str, Any]) -> list[str]:
        spaces = original(params)
        owners = {model.owner_of(s) for s in spaces}
        rows = service._db.execute("SELECT DISTINCT namespace FROM memories").fetchall()
        return sorted({r[0] for r in rows if model.owner_of(r[0]) in owners} | set(spaces))
    return scope


def _recall_tags_after_k(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """RECALL ranks without the tags filter and applies it to the k memories ranked best (a post-filter
    on a top-k search): a tagged memory outranked by k untagged ones is never answered."""
    def recall(params: Any) -> Any:
        if not isinstance(params, dict) or params.get("tags") is None:
            return original(params)
        wanted = {t.lower() for t in service._tags_param(params) or ()}
        answer = original({k: v for k, v in params.items() if k != "tags"})
        items = answer if isinstance(answer, list) else answer["memories"]
        kept = [m for m in items if wanted & {t.lower() for t in m.get("tags") or ()}]
        return kept if isinstance(answer, list) else {**answer, "memories": kept}
    return recall


def _recall_score_written_back(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """RECALL keeps each score it answers in the stored memory's metadata (a score cache written on the
    row): the next LIST, and the export, carry it."""
    def recall(params: Any) -> Any:
        answer = original(params)
        with service._lock:
            for m in answer if isinstance(answer, list) else answer["memories"]:
                doc = service._row(m["namespace"], m["key"])
                if doc is not None:
                    doc["metadata"] = {**(doc.get("metadata") or {}), "score": m["metadata"]["score"]}
                    service._put(doc)
        return answer
    return recall


def _cross_owner(code: int | None) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    def make(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def scope(params: dict[str, Any]) -> list[str]:
            try:
                return original(params)
            except OamsError as exc:
                if exc.code != model.CROSS_NAMESPACE_DENIED:
                    raise
                if code is not None:
                    raise OamsError(code, "validation failed: namespaces of several owners") from None
                return list(params["namespaces"])
        return scope
    return make


def _cursor_overlap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def cursor(value: Any) -> Any:
        after_ = original(value)
        return None if after_ is None else (after_[0], after_[1][:-1])
    return cursor


def _cursor_drops_ties(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A cursor read as the last row's updated_at alone: the next page takes only rows strictly older,
    so rows sharing that updated_at past the page boundary are never listed."""
    def cursor(value: Any) -> Any:
        after_ = original(value)
        return None if after_ is None else (after_[0], "\U0010ffff")  # after every key of that instant
    return cursor


def _cross_owner_first_two(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Owners compared between the first two namespaces only (the §4 example's pair)."""
    def scope(params: dict[str, Any]) -> list[str]:
        spaces = params.get("namespaces") if isinstance(params, dict) else None
        if not isinstance(spaces, list) or len(spaces) <= 2:
            return original(params)
        original({**params, "namespaces": spaces[:2]})
        for s in spaces[2:]:
            service._check_namespace(s, "namespaces")
        return list(dict.fromkeys(spaces))
    return scope


def _cross_owner_by_prefix(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Owners compared by prefix: every namespace must start with the first one's owner-hash."""
    def scope(params: dict[str, Any]) -> list[str]:
        spaces = params.get("namespaces") if isinstance(params, dict) else None
        if not isinstance(spaces, list) or len(spaces) < 2 or not all(isinstance(s, str) for s in spaces):
            return original(params)
        first = model.owner_of(spaces[0])
        if not all(s.startswith(first) for s in spaces):
            return original(params)
        for s in spaces:
            service._check_namespace(s, "namespaces")
        return list(dict.fromkeys(spaces))
    return scope


def _updated_column_as_written(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The sort column holds updated_at as the writer spelled it, so LIST's ORDER BY compares text:
    the server's own times (one spelling) sort right, a client's "…00Z" sorts after "…00.5Z"."""
    def put(doc: dict[str, Any]) -> None:
        original(doc)
        service._db.execute("UPDATE memories SET updated=? WHERE namespace=? AND key=?",
                            (doc["updated_at"], doc["namespace"], doc["key"]))
    return put


def _cross_owner_over_namespaces_only(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """RECALL searches `namespace` and `namespaces` together, but compares the owners of `namespaces`
    alone: one owner's namespace beside another owner's is searched without consent."""
    def scope(params: dict[str, Any]) -> list[str]:
        spaces = original(params)
        extra = params.get("namespace") if isinstance(params, dict) and params.get("namespaces") else None
        if extra is None:
            return spaces
        return list(dict.fromkeys([service._check_namespace(extra), *spaces]))
    return scope


def _tags_substring(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrong(docs: list[dict[str, Any]], params: dict[str, Any]) -> list[dict[str, Any]]:
        tags = params.get("tags")
        if not isinstance(tags, list) or not tags:
            return original(docs, params)
        kept = original(docs, {**params, "tags": None})
        return [d for d in kept if any(str(t) in str(own) for t in tags for own in d.get("tags") or ())]
    return wrong


def _missing_key_internal(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The memory's key read before it is validated: a memory without one fails as an internal error."""
    def store(memory: Any, namespace: str | None = None, key: str | None = None) -> Any:
        if isinstance(memory, dict) and "key" not in memory and key is None:
            raise OamsError(-32603, "internal error: KeyError('key')")
        return original(memory, namespace, key)
    return store


def _forget_noop(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def forget(namespace: Any, key: Any) -> None:
        if service._row(namespace, key) is None:
            return original(namespace, key)
        return None
    return forget


def _live_with_deleted(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def live(namespaces: list[str]) -> list[dict[str, Any]]:
        marks = ",".join("?" * len(namespaces))
        rows = service._db.execute(f"SELECT doc FROM memories WHERE namespace IN ({marks}) ORDER BY updated DESC, key",
                                   namespaces).fetchall()
        return [json.loads(r[0]) for r in rows]
    return live


def _tag_listing_with_deleted() -> dict[str, Any]:
    """LIST with a tags filter runs a query of its own (rows joined on their tags) that does not skip
    soft-deleted rows; LIST without it, and RECALL, do."""
    def list_(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None, tags: Any = None) -> Any:
            service._tag_query = bool(tags)
            try:
                return original(namespace, cursor, limit, since, tags)
            finally:
                service._tag_query = False
        return wrong

    def live(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        with_deleted = _live_with_deleted(service, original)
        return lambda namespaces: (with_deleted if getattr(service, "_tag_query", False) else original)(namespaces)

    return {"list": list_, "_live": live}


def _batch_partial(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def batch_store(memories: Any) -> Any:
        if not isinstance(memories, list):
            return original(memories)
        out = []
        for i, m in enumerate(memories):
            try:
                out.extend(service._write([service._validate(m, f"memories[{i}]")]))
            except OamsError as exc:
                raise OamsError(exc.code, exc.message, {"index": i}) from None
        return out
    return batch_store


def _validation_code(code: int) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    def make(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def validate(memory: Any, where: str = "memory") -> Any:
            try:
                return original(memory, where)
            except OamsError as exc:
                if exc.code == model.VALIDATION_FAILED:
                    raise OamsError(code, exc.message, exc.data) from None
                raise
        return validate
    return make


def _forget_unknown_code(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def forget(namespace: Any, key: Any) -> None:
        try:
            return original(namespace, key)
        except OamsError as exc:
            if exc.code == model.MEMORY_NOT_FOUND:
                raise OamsError(model.NAMESPACE_NOT_FOUND, "namespace not found") from None
            raise
    return forget


_KNOWN_SCHEMES = ("http://", "https://", "sha256:", "imap:", "slack:", "transcript:", "dream:")


def _unresolvable_dropped(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    memories = args[0] if args else kwargs.get("memories")
    if isinstance(memories, list):
        memories = [{**m, "source_id": None} if isinstance(m, dict) and isinstance(m.get("source_id"), str)
                    and not m["source_id"].startswith(_KNOWN_SCHEMES) else m for m in memories]
    return (memories,), {}


def _refuse_unknown_members(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def validate(memory: Any, where: str = "memory") -> Any:
        if isinstance(memory, dict):
            unknown = sorted(set(memory) - set(model.FIELDS))
            if unknown:
                raise invalid(f"unknown members {unknown}")
        return original(memory, where)
    return validate


def _refuse_unknown_strategy(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def validate(memory: Any, where: str = "memory") -> Any:
        meta = memory.get("metadata") if isinstance(memory, dict) else None
        if isinstance(meta, dict) and "dream_strategy" in meta and not model.strategy_known(meta["dream_strategy"]):
            raise invalid(f"unknown dream_strategy {meta['dream_strategy']!r}")
        return original(memory, where)
    return validate


def _vendor_rewritten(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        doc = original(memory, existing, now)
        meta = doc.get("metadata")
        if isinstance(meta, dict) and str(meta.get("dream_strategy", "")).startswith("vendor:"):
            doc["metadata"] = {**meta, "dream_strategy": "synthesize"}
        return doc
    return stamp


def _consolidation_without(member: str) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    def make(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def consolidate(namespace: Any, strategy: Any = "synthesize") -> Any:
            made = original(namespace, strategy)
            fixed = []
            for m in made:
                m = dict(m)
                if member == "parent_id":
                    m.pop("parent_id", None)
                else:
                    m["metadata"] = {k: v for k, v in (m.get("metadata") or {}).items() if k != member}
                with service._lock:
                    service._put(m)
                fixed.append(m)
            return fixed
        return consolidate
    return make


def _unserved(op: str) -> Callable[..., Any]:
    def wrong(*args: Any, **kwargs: Any) -> Any:
        raise OamsError(-32601, f"method not found: {op}")
    return wrong


def _ms(value: Any) -> Any:
    t = model.parse_time(value)
    return int(t.timestamp() * 1000) if t is not None else value


def _times_as_ms(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def present(doc: dict[str, Any], **kw: Any) -> dict[str, Any]:
        out = original(doc, **kw)
        for name in ("created_at", "updated_at"):
            if name in out:
                out[name] = _ms(out[name])
        return out
    return present


def _rank_embedded_only(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def rank(query: str, docs: list[dict[str, Any]]) -> Any:
        return original(query, [d for d in docs if "embedding" in d])
    return rank


# -- REST, JSON-RPC and file seams --------------------------------------------------------------------

def _forget_200(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    from starlette.responses import JSONResponse

    return lambda: JSONResponse({"deleted": True}, status_code=200)


def _flat_errors(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    from starlette.responses import JSONResponse

    from memconform.reference_impl.oams.http import STATUS

    return lambda exc: JSONResponse({"code": exc.code, "message": exc.message}, status_code=STATUS.get(exc.code, 400))


def _rpc_error_without_message(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def error(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
        answer = original(id_, code, message, data)
        answer["error"].pop("message", None)
        return answer
    return error


def _rpc_notification_answered(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A notification is answered as a call with id null (the id read with a default)."""
    def one(message: Any) -> Any:
        answer = original(message)
        if answer is None and isinstance(message, dict) and "id" not in message:
            return original({**message, "id": None})
        return answer
    return one


def _rpc_null_id_silent(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A request's id read as falsy-or-absent: an id of null makes it a notification."""
    def one(message: Any) -> Any:
        if isinstance(message, dict) and "id" in message and message["id"] is None:
            original({k: v for k, v in message.items() if k != "id"})
            return None
        return original(message)
    return one


def _rpc_unknown_method_invalid_request(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def call(method: str, params: Any) -> Any:
        if method not in endpoint.methods:
            from memconform.reference_impl.oams.rpc import INVALID_REQUEST, _RpcError

            raise _RpcError(INVALID_REQUEST, f"Invalid Request: no method {method[:100]}")
        return original(method, params)
    return call


def _rpc_parse_error_internal(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A body that is not JSON reaches the handler's catch-all: -32603 Internal error."""
    def handle(body: bytes | str) -> bytes | None:
        try:
            json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            from memconform.reference_impl.oams.rpc import INTERNAL_ERROR

            return endpoint.render(endpoint.error(None, INTERNAL_ERROR, "Internal error"))
        return original(body)
    return handle


def _errors_pretty(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Error responses written indented, over several lines (round 18's server)."""
    def render(answer: Any) -> bytes:
        if isinstance(answer, dict) and "error" in answer:
            return json.dumps(answer, ensure_ascii=False, indent=1).encode("utf-8")
        return original(answer)
    return render


def _rpc_batch_lines(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A batch's responses written one per line, as they are made, instead of one array (round 18's
    rpc-batch-lines)."""
    def render(answer: Any) -> bytes:
        if isinstance(answer, list):
            return b"\n".join(original(a) for a in answer)
        return original(answer)
    return render


def _rpc_batch_empty_array(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """An empty batch runs the batch loop over nothing and answers the empty array it made."""
    def handle(body: bytes | str) -> bytes | None:
        if (body.strip() if isinstance(body, bytes) else body.strip().encode()) == b"[]":
            return endpoint.render([])
        return original(body)
    return handle


def _rpc_batch_notifications_answered(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The batch loop reads each member's id with a default (`m.get("id")`), so a notification inside a
    batch is run as a call with id null and answered; a lone notification is not."""
    def handle(body: bytes | str) -> bytes | None:
        try:
            message = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return original(body)
        if isinstance(message, list) and message:
            message = [{**m, "id": None} if isinstance(m, dict) and "id" not in m else m for m in message]
            return original(json.dumps(message).encode("utf-8"))
        return original(body)
    return handle


def _rpc_batch_single_unwrapped(endpoint: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A batch whose answer holds one response is answered with that response, not an array of one."""
    def render(answer: Any) -> bytes:
        if isinstance(answer, list) and len(answer) == 1:
            return original(answer[0])
        return original(answer)
    return render


def _lines_descending(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda memories: b"".join(reversed(original(memories).splitlines(keepends=True)))


def _lines_crlf(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda memories: original(memories).replace(b"\n", b"\r\n")


def _lines_duplicate_first(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def lines(memories: list[dict[str, Any]]) -> bytes:
        data = original(memories)
        first = data.splitlines(keepends=True)[:1]
        return b"".join(first) + data
    return lines


def _lines_without_source(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda memories: original([{k: v for k, v in m.items() if k != "source_id"} for m in memories])


def _lines_offset_times(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    from datetime import timezone

    def shift(value: Any) -> Any:
        t = model.parse_time(value)
        return t.astimezone(timezone(timedelta(hours=2))).isoformat() if t else value

    return lambda memories: original([{**m, "created_at": shift(m["created_at"]), "updated_at": shift(m["updated_at"])}
                                      for m in memories])


def _lines_change(change: Callable[[list[dict[str, Any]]], None]) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    """memories.jsonl written from changed copies of the memories (sorted by the original times)."""
    def make(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def lines(memories: list[dict[str, Any]]) -> bytes:
            ordered = [json.loads(line) for line in original(memories).splitlines()]
            change(ordered)
            return b"".join(json.dumps(m, ensure_ascii=False).encode() + b"\n" for m in ordered)
        return lines
    return make


def _each_line(change: Callable[[dict[str, Any]], None]) -> Callable[[list[dict[str, Any]]], None]:
    def apply(memories: list[dict[str, Any]]) -> None:
        for m in memories:
            change(m)
    return apply


def _first_line(change: Callable[[dict[str, Any]], None]) -> Callable[[list[dict[str, Any]]], None]:
    return lambda memories: change(memories[0])


def _last_line(change: Callable[[dict[str, Any]], None]) -> Callable[[list[dict[str, Any]]], None]:
    return lambda memories: change(memories[-1])


def _lines_last_not_json(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def lines(memories: list[dict[str, Any]]) -> bytes:
        kept = original(memories).splitlines(keepends=True)
        return b"".join(kept[:-1]) + b'{"key": "cut-off", "namespace":\n'
    return lines


def _updated_day_before(m: dict[str, Any]) -> None:
    t = model.parse_time(m["created_at"]) - timedelta(days=1)  # type: ignore[operator]
    m["updated_at"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    def make(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def manifest(memories: Any, jsonl: bytes, exported_at: str) -> dict[str, Any]:
            m = original(memories, jsonl, exported_at)
            change(m)
            return m
        return manifest
    return make


def _export_then(change: Callable[[Any], Any]) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    def make(exporter: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        return lambda folder: change(original(folder))
    return make


def _float64_embeddings_bin(folder: Any) -> Any:
    """The vectors packed as float64 (a `d` where `f` was meant)."""
    lines = [json.loads(line) for line in (folder / "memories.jsonl").read_text("utf-8").splitlines() if line]
    vectors = [m["embedding"] for m in lines if isinstance(m.get("embedding"), list)]
    (folder / "embeddings.bin").write_bytes(b"".join(struct.pack(f"<{len(v)}d", *v) for v in vectors))
    return folder


def _renamed(folder: Any) -> Any:
    target = folder.with_name("export-" + folder.name.removeprefix("oams-export-"))
    folder.rename(target)
    return target


def _no_manifest(folder: Any) -> Any:
    (folder / "manifest.json").unlink()
    return folder


# -- round 25 (a blind red team's server): well-formed input that breaks the server -------------------

def _tags_lowercased_unchecked(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Tags lowercased before they are validated: a null among them raises AttributeError (a 500)."""
    def validate(memory: Any, where: str = "memory") -> Any:
        if isinstance(memory, dict) and isinstance(memory.get("tags"), list):
            memory = {**memory, "tags": [t.lower() for t in memory["tags"]]}
        return original(memory, where)
    return validate


def _cursor_decoded_unchecked(cursor: Any) -> Any:
    """The cursor decoded with nothing caught: one the server never gave raises (a 500)."""
    if cursor in (None, ""):
        return None
    value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8"))
    return value[0], value[1]


def _surrogate_unchecked(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The validator measures strings without encoding them: a lone surrogate passes, and the write
    to sqlite raises UnicodeEncodeError (a 500)."""
    def validate(memory: Any, where: str = "memory") -> Any:
        if isinstance(memory, dict) and isinstance(memory.get("value"), str):
            checked = original({**memory, "value": memory["value"].encode("utf-8", "replace").decode("utf-8")}, where)
            return {**checked, "value": memory["value"]}
        return original(memory, where)
    return validate


def _depth_asserted(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A recursive sanitizer asserting a nesting depth under 64 instead of refusing deeper input."""
    def depth(value: Any, level: int = 0) -> None:
        if level >= 64:
            raise RuntimeError("metadata too deep")
        for v in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
            depth(v, level + 1)

    def validate(memory: Any, where: str = "memory") -> Any:
        depth(memory)
        return original(memory, where)
    return validate


def _finite_only(value: Any) -> Any:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return 0.0
    if isinstance(value, dict):
        return {k: _finite_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite_only(v) for v in value]
    return value


def _nan_body(rest: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The REST body parsed with the JSON library's defaults: NaN and Infinity taken."""
    async def body(request: Any) -> Any:
        data = await request.body()
        try:
            return json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            raise OamsError(-32700, "parse error: the body is not JSON") from None
    return body


def _nan_validated(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Validation by type alone: a non-finite number is a float."""
    def validate(memory: Any, where: str = "memory") -> Any:
        original(_finite_only(memory), where)
        return memory
    return validate


def _nan_answered(rest: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    from starlette.responses import Response

    def answer(value: Any, status: int = 200) -> Any:
        return Response(json.dumps(value, ensure_ascii=False), status_code=status, media_type="application/json")
    return answer


def _nfc_keys(memory: Any, namespace: Any = None, key: Any = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """STORE normalizes keys to NFC (the path's and the body's): a decomposed key becomes another key."""
    if isinstance(memory, dict) and isinstance(memory.get("key"), str):
        memory = {**memory, "key": unicodedata.normalize("NFC", memory["key"])}
    if isinstance(key, str):
        key = unicodedata.normalize("NFC", key)
    return (memory, namespace, key), {}


def _path_key_decoded_again(memory: Any, namespace: Any = None, key: Any = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The REST router percent-decodes the key's path segment a second time: '%2525' becomes '%'."""
    import urllib.parse

    if isinstance(key, str):
        key = urllib.parse.unquote(key)
    return (memory, namespace, key), {}


def _stamped_cut(member: str, limit: int) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    """A column of `limit` characters: the member written is cut to it, silently."""
    def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
            doc = original(memory, existing, now)
            if isinstance(doc.get(member), str) and len(doc[member]) > limit:
                doc[member] = doc[member][:limit]
            return doc
        return stamp
    return wrap


# -- round 25 (a blind red team's server), second pass: writes that do not replace, scopes that leak ----

def _same_value_skipped(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """An upsert written `UPDATE … WHERE value <> ?`: a re-STORE whose value is unchanged writes nothing,
    its new tags and metadata lost (the old row answered)."""
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        if existing is not None and existing.get("value") == memory.get("value") \
                and "created_at" not in memory and "updated_at" not in memory:
            return dict(existing)
        return original(memory, existing, now)
    return stamp


def _stale_recall_index() -> dict[str, Any]:
    """A recall index filled on insert only (`INSERT OR IGNORE` into the search table): RECALL answers
    a memory with the value it was first written with; FORGET removes the entry."""
    def index(service: Any) -> dict[tuple[str, str], str]:
        return service.__dict__.setdefault("_recall_index", {})

    def put(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def put_(doc: dict[str, Any]) -> None:
            index(service).setdefault((doc["namespace"], doc["key"]), doc["value"])
            return original(doc)
        return put_

    def forget(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def forget_(namespace: Any, key: Any) -> None:
            out = original(namespace, key)
            index(service).pop((namespace, key), None)
            return out
        return forget_

    def recall(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def recall_(params: Any) -> Any:
            answer = original(params)
            for m in answer.get("memories", []) if isinstance(answer, dict) else answer:
                m["value"] = index(service).get((m["namespace"], m["key"]), m["value"])
            return answer
        return recall_
    return {"_put": put, "forget": forget, "recall": recall}


def _confidence_open_below(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The confidence range check written `0 < c <= 1`: confidence 0.0, the lower bound, is refused."""
    def validate(memory: Any, where: str = "memory") -> Any:
        checked = original(memory, where)
        meta = checked.get("metadata")
        conf = meta.get("confidence") if isinstance(meta, dict) else None
        if isinstance(conf, (int, float)) and not isinstance(conf, bool) and conf <= 0:
            raise invalid(f"{where}.metadata.confidence must be in (0, 1]", field="metadata")
        return checked
    return validate


def _tags_unscoped(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """RECALL with a tags filter is answered by a tag index queried without the namespace: every
    namespace holding the tag is searched, other owners' too."""
    def scope(params: dict[str, Any]) -> list[str]:
        spaces = original(params)
        if params.get("tags") is None:
            return spaces
        rows = service._db.execute("SELECT DISTINCT namespace FROM memories").fetchall()
        return sorted({r[0] for r in rows} | set(spaces))
    return scope


def _k_per_namespace(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A cross-namespace RECALL answered namespace by namespace, each with k, and the answers joined."""
    def recall(params: Any) -> Any:
        spaces = params.get("namespaces") if isinstance(params, dict) else None
        if not isinstance(spaces, list) or len(spaces) < 2 or not all(isinstance(s, str) for s in spaces):
            return original(params)
        service._scope(params)  # the refusals (owners, bounds) as before
        answers = [original({**{k: v for k, v in params.items() if k != "namespaces"}, "namespace": s})
                   for s in dict.fromkeys(spaces)]
        if all(isinstance(a, dict) for a in answers):
            return {"memories": [m for a in answers for m in a["memories"]]}
        return [m for a in answers for m in a]
    return recall


def _restored_from_deleted(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """FORGET is a soft delete, and a STORE of the pair merges the deleted row under what it sends
    (`INSERT … ON CONFLICT DO UPDATE SET value = …, deleted = 0`): tags, metadata, source_id and
    created_at of the forgotten memory come back."""
    def stamp(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
        if existing is None:
            dead = service._row(memory["namespace"], memory["key"], with_deleted=True)
            if dead is not None:
                memory = {**{k: v for k, v in dead.items() if k != "updated_at"}, **memory}
        return original(memory, existing, now)
    return stamp


def _list_by_prefix() -> dict[str, Any]:
    """LIST selects `WHERE namespace LIKE ? || '%'`: a namespace whose name begins with the one listed
    is listed too."""
    def list_(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def listed(*args: Any, **kwargs: Any) -> Any:
            service.__dict__["_listing"] = True
            try:
                return original(*args, **kwargs)
            finally:
                service.__dict__["_listing"] = False
        return listed

    def live(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def live_(namespaces: list[str]) -> list[dict[str, Any]]:
            if not service.__dict__.get("_listing"):
                return original(namespaces)
            rows = service._db.execute("SELECT DISTINCT namespace FROM memories").fetchall()
            return original(sorted({r[0] for r in rows if any(r[0].startswith(n) for n in namespaces)}
                                   | set(namespaces)))
        return live_
    return {"list": list_, "_live": live}


def _list_first_tag(namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None,
                    tags: Any = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """LIST's tags parameter read as one tag: of tags=a,b only a filters."""
    if isinstance(tags, str):
        tags = tags.split(",")[0]
    elif isinstance(tags, list) and tags:
        tags = tags[:1]
    return (namespace, cursor, limit, since, tags), {}


def _marks_batching(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """BATCH_STORE with the service marked as batching while it runs: the wraps of a fault whose bug
    lies on the batch's own path read the mark."""
    def batch_store(memories: Any) -> Any:
        service.__dict__["_batching"] = True
        try:
            return original(memories)
        finally:
            service.__dict__["_batching"] = False
    return batch_store


def _batch_scope_unchecked() -> dict[str, Any]:
    """BATCH_STORE validates its memories with a path of its own that leaves the scope check out: a
    scope holding / or : is written."""
    def check_namespace(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def check(namespace: Any, field: str = "namespace") -> str:
            if service.__dict__.get("_batching") and isinstance(namespace, str) and namespace:
                return namespace
            return original(namespace, field)
        return check
    return {"batch_store": _marks_batching, "_check_namespace": check_namespace}


# -- round 25, third pass: what a blind red team's server hid from the suite ---------------------------

def _offset_read_as_utc_on_store(memory: Any, where: str = "memory") -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A created_at / updated_at with a non-zero offset has its offset cut off before validation (the
    wall clock kept, 'Z' written): taken, at another instant."""
    if isinstance(memory, dict):
        memory = {k: re.sub(r"[+-](?!00:00)\d{2}:\d{2}$", "Z", v) if k in ("created_at", "updated_at")
                  and isinstance(v, str) else v for k, v in memory.items()}
    return (memory, where), {}


def _list_since_as_text() -> dict[str, Any]:
    """LIST's since, once parsed to validate it, goes into the query as the text sent (`WHERE updated_at
    >= ?` on the column as written): a bound with an offset is compared by its characters."""
    def list_wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def list_(namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None, tags: Any = None) -> Any:
            service.__dict__["_list_since"] = since
            try:
                return original(namespace, cursor, limit, since, tags)
            finally:
                service.__dict__["_list_since"] = None
        return list_

    def filtered(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(docs: list[dict[str, Any]], params: dict[str, Any]) -> Any:
            since = service.__dict__.get("_list_since")
            if isinstance(since, str) and model.parse_time(_in_utc(since)) is not None:
                docs = [d for d in docs if d["updated_at"] >= since]
                params = {**params, "since": None}
            return original(docs, params)
        return wrong
    return {"list": list_wrap, "_filtered": filtered}


def _list_negative_limit_sliced(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """limit is checked to be an integer, not to be positive: a negative one slices the page,
    `docs[:limit]`, and the last memories are dropped, no cursor to them."""
    def list_(namespace: Any, cursor: Any = None, limit: Any = None, since: Any = None, tags: Any = None) -> Any:
        try:
            n = int(limit) if limit not in (None, "") and not isinstance(limit, bool) else None
        except (TypeError, ValueError):
            n = None
        if n is None or n >= 0:
            return original(namespace, cursor, limit, since, tags)
        page = original(namespace, cursor, None, since, tags)
        items = _page_items(page)
        return {**page, items: page[items][:n]}
    return list_


def _batch_stamps_as_new() -> dict[str, Any]:
    """BATCH_STORE stamps each member as a new memory (`INSERT OR REPLACE` of the batch's rows): a
    pair STORE wrote first gets the batch's time as created_at."""
    def stamp(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(memory: dict[str, Any], existing: Any, now: str) -> dict[str, Any]:
            return original(memory, None if service.__dict__.get("_batching") else existing, now)
        return wrong
    return {"batch_store": _marks_batching, "_stamp": stamp}


def _single_input_no_parent(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """parent_id is set by the step that ranks several inputs to pick the strongest: a pass over one
    memory skips it, and its output's parent_id is null."""
    def consolidate(namespace: Any, strategy: Any = "synthesize") -> Any:
        made = []
        for m in original(namespace, strategy):
            if len((m.get("metadata") or {}).get("dream_inputs") or ()) == 1:
                m = {**m, "parent_id": None}
                with service._lock:
                    service._put(m)
            made.append(m)
        return made
    return consolidate


def _consolidation_reads_deleted() -> dict[str, Any]:
    """FORGET is a soft delete, and the consolidation pass selects its inputs without `deleted = 0`:
    a forgotten memory is read as an input (its pair in dream_inputs, its value in the output)."""
    def consolidate(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def dream(namespace: Any, strategy: Any = "synthesize") -> Any:
            service.__dict__["_dreaming"] = True
            try:
                return original(namespace, strategy)
            finally:
                service.__dict__["_dreaming"] = False
        return dream

    def live(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def rows(namespaces: list[str]) -> list[dict[str, Any]]:
            if not service.__dict__.get("_dreaming"):
                return original(namespaces)
            marks = ",".join("?" * len(namespaces))
            found = service._db.execute(f"SELECT doc FROM memories WHERE namespace IN ({marks}) "
                                        "ORDER BY updated DESC, key", namespaces).fetchall()
            return [json.loads(r[0]) for r in found]
        return rows
    return {"consolidate": consolidate, "_live": live}


OAMS_FAULTS: tuple[Fault, ...] = (
    # -- §3 operations -------------------------------------------------------------------------------
    _f("no-batch-store", "BATCH_STORE is not served (-32601 / 404): only four of the five operations",
       "five-operations", "batch-endpoint", wraps=instead("batch_store", _unserved("batch_store"))),
    _f("no-forget", "FORGET is not served (-32601 / 404)", "five-operations", "forget-endpoint",
       wraps=instead("forget", _unserved("forget"))),
    _f("store-answers-input", "STORE answers the memory as sent, without the server-assigned timestamps (so the "
       "answer lacks the required created_at/updated_at)",
       "store-returns-stored", "timestamps-utc", wraps=_wrap("store", _answers_input)),
    _f("updated-after-created", "a first STORE without timestamps writes updated_at 1 ms after created_at",
       "updated-equals-created", wraps=_wrap("_stamp", _later_updated)),
    _f("ignores-given-created-at", "a STORE that provides created_at gets the server's time instead (so the "
       "export holds memories updated before they were created)", "store-keeps-given-timestamps",
       "updated-not-before-created", bindings=ALL, wraps=_wrap("_stamp", _created_now)),
    _f("upsert-resets-created", "every STORE of an existing pair resets created_at (an identical repeat too)",
       "store-upsert", "store-idempotent", wraps=_wrap("_stamp", _upsert_resets_created)),
    _f("upsert-keeps-old", "a STORE of a new value on an existing pair keeps the old memory (insert or ignore)",
       "store-upsert", wraps=_wrap("_stamp", _upsert_keeps_old)),
    # found by the blind red team (round 12): an update that leaves updated_at at the first write's
    _f("upsert-keeps-updated-at", "a STORE of a new value on an existing pair, giving no times, keeps the updated_at "
       "of the row it replaces (the upsert sets every column but updated_at)", "store-upsert",
       wraps=_wrap("_stamp", _upsert_keeps_updated_at)),
    _f("duplicate-pairs", "a pair written twice is listed twice", "ns-key-unique", wraps=_duplicate_pairs()),
    _f("accepts-any-value", "a value that is not a string (or none) is stored as its JSON text",
       "invalid-memory-refused", wraps=_wrap("_validate", _accepts_any_value)),
    # round 18: ("o:a", "bc") and ("o:ab", "c") one row
    _f("pairs-keyed-joined", "memories are keyed by namespace and key run together: (ns, \"bc\") and (ns + \"b\", "
       "\"c\") share one row", "ns-key-unique", wraps=_wrap("_put", _pairs_keyed_joined)),
    # round 18's check of a taken non-UTC time: refused, or stored as its UTC instant; kept as sent is neither
    _f("accepts-offset-times", "created_at / updated_at with a non-zero offset are taken and stored as sent",
       "invalid-memory-refused", wraps=_offset_times_kept()),
    _f("scope-unchecked", "namespaces whose scope holds / or : are accepted", "scope-no-slash-colon",
       wraps=_wrap("_check_namespace", _scope_unchecked)),
    _f("validation-code-generic", "an invalid memory is refused with -32602 instead of -32003", "error-codes",
       wraps=_wrap("_validate", _validation_code(-32602))),
    _f("forget-unknown-wrong-code", "FORGET of an unknown memory is refused with -32001 instead of -32002",
       "error-codes", wraps=_wrap("forget", _forget_unknown_code)),
    _f("rest-flat-errors", "REST errors are {code, message} without the \"error\" envelope", "error-shape",
       bindings=("http",), wraps={"rest.error": _flat_errors}),
    _f("rpc-error-without-message", "JSON-RPC error objects carry no message", "error-shape",
       bindings=("jsonrpc", "stdio"), wraps={"rpc.error": _rpc_error_without_message}),
    # round 18: JSON-RPC 2.0's own rules (the class oams-jsonrpc-2.0)
    _f("rpc-notification-answered", "a JSON-RPC notification is answered as a call with id null",
       "jsonrpc-notification-no-reply", "jsonrpc-batch-notifications", bindings=("jsonrpc", "stdio"),
       wraps={"rpc.one": _rpc_notification_answered}),
    _f("rpc-null-id-silent", "a JSON-RPC request with \"id\": null is taken for a notification and not answered",
       "jsonrpc-notification-no-reply", bindings=("jsonrpc",), wraps={"rpc.one": _rpc_null_id_silent}),
    _f("rpc-unknown-method-invalid-request", "an unknown JSON-RPC method is answered -32600 instead of -32601",
       "jsonrpc-method-not-found", bindings=("jsonrpc", "stdio"),
       wraps={"rpc.call": _rpc_unknown_method_invalid_request}),
    _f("rpc-parse-error-internal", "a JSON-RPC message that is not JSON is answered -32603 instead of -32700",
       "jsonrpc-parse-error", bindings=("jsonrpc", "stdio"), wraps={"rpc.handle": _rpc_parse_error_internal}),
    _f("rpc-errors-pretty", "over stdio, error responses are written indented over several lines",
       "stdio-line-framing", bindings=("stdio",), wraps={"rpc.render": _errors_pretty}),
    _f("rpc-batch-lines", "over stdio, a batch's responses are written one per line instead of one array",
       "jsonrpc-batch", bindings=("stdio",), wraps={"rpc.render": _rpc_batch_lines}),
    _f("rpc-batch-empty-array", "an empty JSON-RPC batch is answered with an empty array",
       "jsonrpc-batch-empty", bindings=("jsonrpc", "stdio"), wraps={"rpc.handle": _rpc_batch_empty_array}),
    _f("rpc-batch-notifications-answered", "a notification inside a JSON-RPC batch is answered as a call with id null",
       "jsonrpc-batch-notifications", bindings=("jsonrpc", "stdio"),
       wraps={"rpc.handle": _rpc_batch_notifications_answered}),
    _f("rpc-batch-single-unwrapped", "a JSON-RPC batch of one request is answered with the bare response object",
       "jsonrpc-batch", bindings=("jsonrpc", "stdio"), wraps={"rpc.render": _rpc_batch_single_unwrapped}),
    _f("rpc-id-stringified", "JSON-RPC echoes a numeric request id as a string (7 becomes \"7\")",
       "jsonrpc-id-echo", bindings=("jsonrpc", "stdio"), wraps=after("rpc.one", _id_as_string)),
    # found by the blind red team (round 5): a STORE that changes what it stores
    # (a long run of the state machine may also catch an upsert's value changed, as store-upsert)
    _f("value-astral-replaced", "characters beyond U+FFFF in a value are stored as U+FFFD (a 3-byte UTF-8 column)",
       "store-returns-stored", wraps=after("_validate", _value_changed(
           lambda v: "".join("\ufffd" if ord(c) > 0xFFFF else c for c in v)))),
    _f("metadata-bools-as-ints", "booleans in metadata are stored as integers: true comes back 1 (Python's == "
       "called them equal)", "store-returns-stored", wraps=after("_validate", _metadata_bools_as_ints)),
    # found by the blind red team (round 12): metadata numbers through float32
    _f("metadata-floats-as-float32", "numbers in metadata are stored as float32: confidence 0.1 comes back "
       "0.10000000149011612", "store-returns-stored", wraps=after("_validate", _metadata_floats_as_float32)),
    # round 18: -32603 for a memory without a key, over JSON-RPC (REST's key is the path)
    _f("missing-key-internal-error", "oams.store of a memory without key answers -32603 (internal error) instead of "
       "-32003", "error-codes", bindings=("jsonrpc", "stdio"), wraps=_wrap("store", _missing_key_internal)),
    _f("metadata-floats-rounded", "numbers in metadata are kept to four decimal places: 0.123456789 comes back "
       "0.1235", "store-returns-stored", wraps=after("_validate", _metadata_floats_rounded)),
    _f("value-trailing-space-trimmed", "a value is stored with its trailing white space and line breaks trimmed",
       "store-returns-stored", wraps=after("_validate", _value_changed(str.rstrip))),
    # found by the blind red team (round 12): a value normalized to NFC on ingest
    _f("value-nfc-normalized", "a value is stored normalized to Unicode NFC: decomposed characters (e + U+0301) come "
       "back composed (é)", "store-returns-stored",
       wraps=after("_validate", _value_changed(lambda v: unicodedata.normalize("NFC", v)))),
    _f("namespace-casefolded", "namespaces are case-folded on every operation (a case-insensitive collation): a "
       "scope with capitals is stored, listed and forgotten in lower case", "store-returns-stored",
       wraps={**after("_validate", _namespace_folded), **after("_check_namespace", str.lower)}),
    _f("times-local-labelled-utc", "server-assigned times are the local time of a UTC+2 zone written with Z",
       "timestamps-utc", wraps=after("_now", _two_hours_ahead)),
    _f("batch-ignores-given-timestamps", "BATCH_STORE stamps every memory with the server's time, the created_at / "
       "updated_at it gives ignored (STORE keeps them)", "store-keeps-given-timestamps",
       wraps=before("batch_store", _batch_times_dropped)),
    _f("source-url-normalized", "an http(s) source_id is stored normalized: scheme and host in lower case, an empty "
       "path as / (what LIST exports and what BATCH_STORE imports both change)", "export-keeps-source-id",
       "import-preserves-source-id", wraps=after("_validate", _source_url_normalized)),
    _f("upsert-keeps-source-id", "a STORE on an existing pair replaces the value but keeps the old row's source_id",
       "store-upsert", wraps=_wrap("_stamp", _upsert_keeps_source)),
    # -- RECALL --------------------------------------------------------------------------------------
    # found by the blind red team (round 5): a bound with an offset read by its digits
    _f("since-offset-read-as-utc", "RECALL and LIST take since/until with an offset, but read its wall-clock digits "
       "as UTC (the offset dropped)", "recall-filters", "list-filters", overrides={"offset_times": "normalize"},
       wraps=_wrap("_time_param", _offset_dropped)),
    _f("recall-k-default-10", "RECALL without k answers up to 10", "recall-k-default",
       wraps=after("_k", lambda k: 10 if k == model.RECALL_DEFAULT_K else k)),
    _f("recall-ignores-k", "RECALL ignores k (always up to 8)", "recall-k", wraps=after("_k", lambda k: 8)),
    _f("recall-ignores-filters", "RECALL ignores tags, since and until", "recall-filters",
       wraps=before("recall", lambda params: (({k: v for k, v in params.items()
                                                if k not in ("tags", "since", "until")}
                                               if isinstance(params, dict) else params,), {}))),
    # found by the blind red team (round 12): the tags filter applied after the top k
    _f("recall-tags-after-k", "RECALL applies its tags filter to the k memories ranked best, not before ranking: a "
       "tagged memory outranked by k untagged ones is not answered", "recall-filters",
       wraps=_wrap("recall", _recall_tags_after_k)),
    # found by the blind red team (round 12): a read that writes
    _f("recall-score-written-back", "RECALL writes the score it answers into the stored memory's metadata, so LIST "
       "(and the export) carry it afterwards", "recall-read-only", wraps=_wrap("recall", _recall_score_written_back)),
    _f("recall-no-score", "recalled memories carry no metadata.score", "recall-score",
       wraps=_each_recalled(lambda m: m.__setitem__("metadata", {k: v for k, v in m["metadata"].items()
                                                                 if k != "score"}))),
    _f("recall-embedded-only", "RECALL finds only memories that carry an embedding (no re-embedding of the others): "
       "every recall check that needs a hit fails", "missing-embedding-handled", "recall-k", "recall-filters",
       "recall-single-namespace", wraps=_wrap("_rank", _rank_embedded_only)),
    _f("recall-all-namespaces", "RECALL on one namespace searches every namespace of its owner",
       "recall-single-namespace", wraps=_wrap("_scope", _recall_all_namespaces)),
    _f("cross-owner-allowed", "RECALL across two owners' namespaces is answered", "cross-owner-refused",
       wraps=_wrap("_scope", _cross_owner(None))),
    _f("cross-owner-wrong-code", "RECALL across owners is refused with -32003 instead of -32005", "cross-owner-refused",
       wraps=_wrap("_scope", _cross_owner(model.VALIDATION_FAILED))),
    _f("cross-owner-checks-first-two", "RECALL compares the owners of the first two namespaces only: a third "
       "namespace of another owner is searched too", "cross-owner-refused",
       wraps=_wrap("_scope", _cross_owner_first_two)),
    # round 18: "u-a" and "u-ab" taken for one owner
    _f("cross-owner-by-prefix", "RECALL compares owners by prefix: namespaces whose owner-hash extends the first "
       "one's are taken as that owner's", "cross-owner-refused", wraps=_wrap("_scope", _cross_owner_by_prefix)),
    # found by the blind red team (round 12): namespace beside namespaces
    _f("cross-owner-ignores-namespace", "RECALL searches namespace and namespaces together but compares the owners of "
       "namespaces alone: one owner's namespace beside another owner's is answered", "cross-owner-refused",
       wraps=_wrap("_scope", _cross_owner_over_namespaces_only)),
    _f("recall-drops-source-id", "RECALL answers memories without source_id", "export-keeps-source-id",
       wraps=_each_recalled(lambda m: m.pop("source_id", None))),
    # -- LIST, FORGET, BATCH_STORE ------------------------------------------------------------------------
    _f("list-ascending", "LIST pages are sorted by updated_at ascending (so the order across pages is broken too)",
       "list-sorted", "list-paging",
       wraps=after("list", lambda page: {**page, _page_items(page): list(reversed(page[_page_items(page)]))})),
    # found by the blind red team (round 12): times compared as text
    _f("list-sorted-as-text", "LIST orders by updated_at as written (a text column): given times spelled with and "
       "without a fraction, or with +00:00, are listed out of order", "list-sorted",
       wraps=_wrap("_put", _updated_column_as_written)),
    _f("list-cursor-overlap", "the next page starts with the last memory of the previous one", "list-paging",
       wraps=_wrap("_cursor", _cursor_overlap)),
    _f("list-cursor-drops-ties", "the next page takes only memories strictly older than the cursor's updated_at: "
       "memories sharing an updated_at across a page boundary are never listed", "list-paging",
       wraps=_wrap("_cursor", _cursor_drops_ties)),
    _f("list-ignores-limit", "LIST ignores limit (pages of 50)", "list-paging",
       wraps=before("list", lambda ns, cursor=None, limit=None, since=None, tags=None: ((ns, cursor, None, since, tags), {}))),
    # round 18: a tags filter written as a substring test ("work" finds "workshop")
    _f("tags-substring", "the tags filter of LIST and RECALL keeps a memory one of whose tags contains an asked tag",
       "list-filters", "recall-filters", wraps=_wrap("_filtered", _tags_substring)),
    _f("list-ignores-filters", "LIST ignores since and tags", "list-filters",
       wraps=before("list", lambda ns, cursor=None, limit=None, since=None, tags=None: ((ns, cursor, limit, None, None), {}))),
    _f("forget-200-body", "a REST FORGET answers 200 with a body instead of 204", "forget-204", bindings=("http",),
       wraps={"rest.forget_answer": _forget_200}),
    _f("forget-noop", "FORGET answers success and deletes nothing", "forget-gone", "soft-deleted-hidden",
       wraps=_wrap("forget", _forget_noop)),
    _f("soft-deleted-visible", "FORGET soft-deletes, and soft-deleted memories still appear in LIST and RECALL",
       "forget-gone", "soft-deleted-hidden", overrides={"forget_mode": "soft"},
       wraps=_wrap("_live", _live_with_deleted)),
    # found by the blind red team (round 12): a filtered listing that forgets the soft delete
    _f("soft-deleted-in-tag-listing", "FORGET soft-deletes, and LIST with a tags filter (a query of its own) still "
       "shows the deleted memories; LIST without it and RECALL do not", "forget-gone", "soft-deleted-hidden",
       overrides={"forget_mode": "soft"}, wraps=_tag_listing_with_deleted()),
    _f("batch-partial", "BATCH_STORE writes the memories before an invalid one, then fails", "batch-atomic",
       wraps=_wrap("batch_store", _batch_partial)),
    _f("batch-answers-count", "BATCH_STORE answers {\"stored\": n} instead of the array of stored memories",
       "batch-returns-array", wraps=after("batch_store", lambda stored: {"stored": len(stored)})),
    # -- §2 shapes, §5 provenance, §6, §8 --------------------------------------------------------------------------
    _f("times-as-ms", "memories are answered with integer-millisecond times (an earlier draft's): every check reading "
       "times fails", "timestamps-utc", "store-keeps-given-timestamps", "recall-ordered-array", "list-sorted",
       "batch-returns-array", bindings=ALL, wraps=_wrap("_present", _times_as_ms)),
    _f("tags-kept-case", "tags keep their case on ingest", "tags-lowercase", overrides={"lowercase_tags": False}),
    # found by the blind red team (round 12): the batch path skips the ingest lowercasing
    _f("batch-tags-kept-case", "BATCH_STORE writes tags with the case they came with (STORE lowercases them)",
       "tags-lowercase", wraps=_batch_tags_kept_case()),
    _f("batch-drops-unresolvable-source", "BATCH_STORE sets source_ids it cannot resolve to null",
       "import-preserves-source-id", wraps=before("batch_store", _unresolvable_dropped)),
    # found by the blind red team (round 12): an importer canonicalizing URLs
    _f("batch-normalizes-source-url", "BATCH_STORE (the import path) canonicalizes http(s) source_ids: scheme and "
       "host in lower case, unreserved characters percent-decoded, a trailing slash dropped (STORE keeps them)",
       "import-preserves-source-id", wraps=before("batch_store", _batch_source_urls_canonical)),
    _f("refuses-unknown-members", "a memory with a member 0.1 does not name is refused (-32003)",
       "accept-compatible-minor", wraps=_wrap("_validate", _refuse_unknown_members)),
    _f("refuses-unknown-strategy", "a memory with a dream_strategy outside the enum is refused",
       "unknown-enum-accepted", wraps=_wrap("_validate", _refuse_unknown_strategy)),
    _f("vendor-strategy-rewritten", "dream_strategy \"vendor:<name>\" is stored as \"synthesize\"",
       "vendor-strategy-passthrough", wraps=_wrap("_stamp", _vendor_rewritten)),
    _f("consolidation-no-parent", "consolidated memories carry no parent_id (the export's too)",
       "consolidated-parent-id", bindings=ALL, wraps=_wrap("consolidate", _consolidation_without("parent_id"))),
    _f("consolidation-no-run-id", "consolidated memories carry no metadata.dream_run_id (the export's too)",
       "dream-run-id", bindings=ALL, wraps=_wrap("consolidate", _consolidation_without("dream_run_id"))),
    # -- the export bundle (§7, §8) --------------------------------------------------------------------------
    _f("file-unsorted", "memories.jsonl is sorted by created_at descending", "jsonl-sorted", bindings=("file",),
       wraps={"file.lines": _lines_descending}),
    _f("file-crlf", "memories.jsonl lines end with CRLF", "jsonl-lines", bindings=("file",),
       wraps={"file.lines": _lines_crlf}),
    _f("file-duplicate-line", "memories.jsonl holds its first memory twice (memory_count counts memories, so it is "
       "off too)", "ns-key-unique", "manifest-count", bindings=("file",), wraps={"file.lines": _lines_duplicate_first}),
    _f("file-drops-source-id", "the export leaves source_id out of every line (the consolidated memory's too)",
       "source-id-present", "consolidated-source-id", bindings=("file",), wraps={"file.lines": _lines_without_source}),
    _f("file-offset-times", "the export writes times with a +02:00 offset", "timestamps-utc", bindings=("file",),
       wraps={"file.lines": _lines_offset_times}),
    _f("file-bad-checksum", "checksum_sha256 is the hash of nothing", "manifest-checksum", bindings=("file",),
       wraps={"file.manifest": _manifest(lambda m: m.__setitem__("checksum_sha256", model.checksum(b"")))}),
    _f("file-count-off", "memory_count is one more than the lines", "manifest-count", bindings=("file",),
       wraps={"file.manifest": _manifest(lambda m: m.__setitem__("memory_count", m["memory_count"] + 1))}),
    _f("file-namespaces-partial", "the manifest lists only the first namespace", "manifest-namespaces",
       bindings=("file",), wraps={"file.manifest": _manifest(lambda m: m.__setitem__("namespaces", m["namespaces"][:1]))}),
    _f("file-version", "oams_version is \"1.0\" in a 0.1 export", "manifest-version", bindings=("file",),
       wraps={"file.manifest": _manifest(lambda m: m.__setitem__("oams_version", "1.0"))}),
    _f("file-no-source-vendor", "the manifest has no source_vendor", "manifest-shape", bindings=("file",),
       wraps={"file.manifest": _manifest(lambda m: m.pop("source_vendor"))}),
    _f("file-embeddings-bin-float64", "embeddings.bin packs the lines' vectors as float64", "embeddings-bin-layout",
       bindings=("file",), wraps={"file.export": _export_then(_float64_embeddings_bin)}),
    _f("file-folder-renamed", "the bundle folder is named export-<timestamp>", "bundle-folder-name",
       bindings=("file",), wraps={"file.export": _export_then(_renamed)}),
    _f("file-no-manifest", "the bundle has no manifest.json", "bundle-layout", bindings=("file",),
       wraps={"file.export": _export_then(_no_manifest)}),
    # -- §2 shapes, seen in the export --------------------------------------------------------------------
    _f("file-key-number", "the first line's key is a number", "key-required", bindings=("file",),
       wraps={"file.lines": _lines_change(_first_line(lambda m: m.__setitem__("key", 7)))}),
    _f("file-namespace-missing", "the last line has no namespace", "namespace-required", bindings=("file",),
       wraps={"file.lines": _lines_change(_last_line(lambda m: m.pop("namespace")))}),
    _f("file-value-object", "the first line's value is an object", "value-string", bindings=("file",),
       wraps={"file.lines": _lines_change(_first_line(lambda m: m.__setitem__("value", {"text": m["value"]})))}),
    _f("file-tags-string", "tags are written as one comma-joined string", "tags-strings", bindings=("file",),
       wraps={"file.lines": _lines_change(_each_line(
           lambda m: m.__setitem__("tags", ",".join(m["tags"])) if isinstance(m.get("tags"), list) else None))}),
    _f("file-confidence-percent", "metadata.confidence is written as a percentage (90)", "metadata-object",
       bindings=("file",), wraps={"file.lines": _lines_change(_each_line(
           lambda m: m["metadata"].__setitem__("confidence", 90) if "confidence" in (m.get("metadata") or {})
           else None))}),
    _f("file-embedding-no-model", "lines with an embedding lack embedding_model", "embedding-model-required",
       bindings=("file",), wraps={"file.lines": _lines_change(_each_line(
           lambda m: m.pop("embedding_model", None) if "embedding" in m else None))}),
    _f("file-embedding-strings", "embedding values are written as strings", "embedding-floats", bindings=("file",),
       wraps={"file.lines": _lines_change(_each_line(
           lambda m: m.__setitem__("embedding", [str(x) for x in m["embedding"]]) if "embedding" in m else None))}),
    _f("file-source-id-number", "the first line's source_id is a number", "provenance-fields", bindings=("file",),
       wraps={"file.lines": _lines_change(_first_line(lambda m: m.__setitem__("source_id", 7)))}),
    _f("file-updated-before-created", "the first line's updated_at is a day before its created_at",
       "updated-not-before-created", bindings=("file",), wraps={"file.lines": _lines_change(_first_line(_updated_day_before))}),
    _f("file-line-not-json", "the last line of memories.jsonl is cut-off JSON", "jsonl-store", bindings=("file",),
       wraps={"file.lines": _lines_last_not_json}),
    _f("file-consolidation-labels", "the consolidated memory's dream_strategy is \"daydream\" and its dream_inputs "
       "a bare key list", "dream-strategy", "dream-inputs", bindings=("file",), wraps={"file.lines": _lines_change(
           _each_line(lambda m: m["metadata"].update(dream_strategy="daydream", dream_inputs=[i[1] for i in
                                                                                            m["metadata"]["dream_inputs"]])
                      if "dream_strategy" in (m.get("metadata") or {}) else None))}),
    _f("file-namespace-no-scope", "namespaces are written without the <owner-hash>: half", "ns-convention",
       bindings=("file",), wraps={"file.lines": _lines_change(_each_line(
           lambda m: m.__setitem__("namespace", m["namespace"].split(":")[-1]))),
           "file.manifest": _manifest(lambda m: m.__setitem__("namespaces", [n.split(":")[-1] for n in m["namespaces"]]))}),
    # -- found by the blind red team (round 5): listing, batches, forget ------------------------------
    _f("list-cursor-drops-filters", "LIST pages fetched with a cursor ignore since and tags (the continuation "
       "query is built from the cursor alone): only the first page of a filtered listing is filtered",
       "list-filters", wraps=_wrap("list", _list_cursor_drops_filters)),
    _f("list-limit-capped", f"LIST answers at most {_PAGE_CAP} memories a page, cut after the next cursor was made "
       f"for the limit asked: with a limit above {_PAGE_CAP} the cursor is null and the rest unreachable",
       "list-paging", wraps=_wrap("list", _list_capped)),
    _f("list-later-pages-drop-source-id", "LIST pages fetched with a cursor answer memories without source_id",
       "export-keeps-source-id", wraps=_wrap("list", _list_later_pages_without_source)),
    _f("batch-chunked", f"BATCH_STORE of more than {_CHUNK} memories is written {_CHUNK} at a time, each chunk its "
       "own transaction: an invalid memory in a later chunk leaves the earlier chunks written",
       "batch-atomic", wraps=_wrap("batch_store", _batch_in_chunks)),
    _f("forget-by-owner-and-key", "FORGET of (namespace, key) deletes the key in every namespace of the same owner",
       "forget-gone", wraps=_wrap("forget", _forget_by_owner_and_key)),
    # found by the blind red team (round 12): FORGET of a key the namespace never held
    _f("forget-falls-back-to-owner", "FORGET of a key its namespace does not hold deletes the memory with that key "
       "in another namespace of the same owner (a lookup by owner and key), answering success", "forget-gone",
       wraps=_wrap("forget", _forget_falls_back_to_owner)),
    # -- found by the blind red team (round 25): well-formed input answered with an internal error ----------
    _f("tags-null-internal-error", "STORE lowercases tags before validating them: tags holding a null raise, "
       "answered -32603 (HTTP 500) instead of taken or refused -32003", "error-codes",
       wraps=_wrap("_validate", _tags_lowercased_unchecked)),
    _f("cursor-garbage-internal-error", "LIST decodes its cursor with nothing caught: a cursor the server never gave "
       "is answered -32603 (HTTP 500) instead of refused -32003", "error-codes",
       wraps=instead("_cursor", _cursor_decoded_unchecked)),
    _f("surrogate-internal-error", "the validator never encodes the value: a lone surrogate (\\ud800, sent as the "
       "escape) passes, and the write fails, answered -32603 (HTTP 500)", "error-codes",
       wraps=_wrap("_validate", _surrogate_unchecked)),
    _f("deep-nesting-internal-error", "a recursive sanitizer asserts a nesting depth under 64: deeper metadata is "
       "answered -32603 (HTTP 500) instead of taken or refused -32003", "error-codes",
       wraps=_wrap("_validate", _depth_asserted)),
    _f("nan-accepted", "the REST body is parsed with the JSON library's defaults and validated by type: a body "
       "holding a bare NaN (not JSON) is stored and echoed with NaN", "error-shape", bindings=("http",),
       wraps={"rest._body": _nan_body, "rest.answer": _nan_answered, "_validate": _nan_validated}),
    # -- found by the blind red team (round 25): what STORE keeps is not what was sent ----------------------
    _f("key-nfc", "STORE normalizes keys to NFC: a key in decomposed form (e + U+0301) is stored and answered "
       "as another key", "store-returns-stored", wraps=before("store", _nfc_keys)),
    _f("key-double-decode", "the REST router percent-decodes the key's path segment twice: a key holding '%25' "
       "(sent as %2525) is stored with '%'", "store-returns-stored", bindings=("http",),
       wraps=before("store", _path_key_decoded_again)),
    _f("value-truncated", "values are written to a column of 65,535 characters: a longer value is cut, silently",
       "store-returns-stored", wraps=_wrap("_stamp", _stamped_cut("value", 65_535))),
    _f("source-id-truncated", "source_id is written to a VARCHAR(255): a longer one is cut, silently",
       "store-returns-stored", wraps=_wrap("_stamp", _stamped_cut("source_id", 255))),
    # -- found by the blind red team (round 25, second pass) -----------------------------------------------
    _f("upsert-same-value-skip", "the upsert is written UPDATE … WHERE value <> ?: a re-STORE of the same value "
       "with new tags and metadata writes nothing, the old ones kept", "store-upsert",
       wraps=_wrap("_stamp", _same_value_skipped)),
    _f("recall-stale-after-update", "the recall index is filled on insert only: after an update RECALL answers the "
       "memory with the value first written", "store-upsert", wraps=_stale_recall_index()),
    _f("confidence-zero-rejected", "the confidence range check is written 0 < c <= 1: metadata.confidence 0.0, the "
       "lower bound of (0.0–1.0), is refused with -32003", "metadata-object",
       wraps=_wrap("_validate", _confidence_open_below)),
    _f("recall-tags-unscoped", "RECALL with a tags filter is answered from a tag index queried without the "
       "namespace: another owner's memory with the tag is answered", "recall-single-namespace",
       wraps=_wrap("_scope", _tags_unscoped)),
    _f("k-per-namespace", "a cross-namespace RECALL is answered namespace by namespace, each with k, and the "
       "answers joined: up to k per namespace", "recall-k", wraps=_wrap("recall", _k_per_namespace)),
    _f("resurrect-after-forget", "FORGET is a soft delete, and a STORE of the forgotten pair merges the deleted row "
       "under what it sends: the forgotten tags, metadata and source_id come back", "forget-gone",
       overrides={"forget_mode": "soft"}, wraps=_wrap("_stamp", _restored_from_deleted)),
    _f("list-ns-prefix", "LIST selects its namespace with LIKE 'ns%': a namespace whose name begins with the one "
       "listed is listed too", "list-paging", wraps=_list_by_prefix()),
    _f("tags-filter-first-only", "LIST reads its tags parameter as one tag: of tags=a,b only a filters",
       "list-filters", wraps=before("list", _list_first_tag)),
    _f("batch-scope-unchecked", "BATCH_STORE validates its memories without the scope check: a scope holding / or : "
       "is written", "scope-no-slash-colon", wraps=_batch_scope_unchecked()),
    # -- found by the blind red team (round 25, third pass) ------------------------------------------------
    _f("offset-wall-clock-as-utc", "a created_at / updated_at with a non-zero offset is taken with its offset cut "
       "off: 2026-01-01T12:00:00+02:00 is stored as 2026-01-01T12:00:00Z, two hours later",
       "store-keeps-given-timestamps", wraps=before("_validate", _offset_read_as_utc_on_store)),
    _f("list-since-compared-as-text", "LIST's since is compared with updated_at as text: a bound with an offset "
       "(…T12:00:00+05:00) filters by its characters, not its instant", "list-filters", wraps=_list_since_as_text()),
    _f("list-negative-limit-sliced", "LIST takes a negative limit and slices the page with it (docs[:-1]): the last "
       "memory is dropped, no cursor leads to it", "list-paging", wraps=_wrap("list", _list_negative_limit_sliced)),
    _f("batch-resets-created", "BATCH_STORE stamps every member as a new memory: a pair STORE wrote first gets the "
       "batch's time as created_at", "store-upsert", wraps=_batch_stamps_as_new()),
    _f("consolidation-single-input-no-parent", "a consolidation of one memory leaves parent_id null (it is set by "
       "the step ranking several inputs)", "consolidated-parent-id",
       wraps=_wrap("consolidate", _single_input_no_parent)),
    _f("consolidation-reads-forgotten", "FORGET is a soft delete and the consolidation pass selects its inputs "
       "without deleted = 0: a forgotten memory is read, named in dream_inputs and carried into the output",
       "forget-gone-from-consolidation", overrides={"forget_mode": "soft"}, wraps=_consolidation_reads_deleted()),
    # -- operations not served (what the other checks cannot observe is skipped, never passed) ------------------
    _f("no-store", "STORE is not served (-32601 / 404)", "five-operations", "store-endpoint",
       wraps=instead("store", _unserved("store"))),
    _f("no-recall", "RECALL is not served (-32601 / 404)", "five-operations", "recall-endpoint",
       wraps=instead("recall", _unserved("recall"))),
    _f("no-list", "LIST is not served (-32601 / 404)", "five-operations", "list-endpoint",
       wraps=instead("list", _unserved("list"))),
)
