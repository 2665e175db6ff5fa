"""The reference UPP server's engine: `UppService` (UPP 1.0.0, levels 1-3, ontology user/v1).

The contract is docs/live-upp.md; this module is its reading over the sqlite store (`store.py`),
the extractor (`extractor.py`), the ranking (`ranking.py`), background tasks (`tasks.py`) and
ExportPackage files (`exports.py`). Bindings call `handle_text` (one JSON-RPC message in, the
response text out, `rpc.py`); tests and embedders may call `call(method, params)`, which returns
the result or raises `RpcError`.

The reference's readings (docs/live-upp.md, "Readings of the loose parts"):

* Users: `ingest`, `contextualize` and `import_events` create the user; `retrieve`, `get_events`
  and `export_events` answer -32001 for a user the server does not know; `delete_events` of an
  unknown user deletes nothing (`deleted_count: 0`). When a delete leaves a user without events,
  the user is unknown again.
* Status: an event with confidence below 0.5 is stored `staged`, otherwise `valid`. A new event
  with the same labels and the same value (ignoring case and spacing) as a `staged` event of the
  user reinforces it: that event becomes `valid` and is what the operation reports; nothing new
  is stored. Staged events never supersede.
* Supersession (upp/02 §6): storing (or reinforcing into) a `valid` event marks every other
  `valid` event of the user that shares one of its `singular` labels `superseded`, with
  `superseded_by` the new id. Deleting the event a pointer names clears the pointer (the event
  stays superseded).
* retrieve / contextualize return valid events only, ranked (`ranking.py`), at most
  `max_results` (an extension parameter, default 50) — full StoredEvents, a superset of Event.
* get_events lists every event of the user (valid, staged, superseded) in the order stored.
* delete_events is physical; `deleted_count` counts events actually deleted; another user's ids
  are never deleted. `event_ids` omitted or empty deletes all the user's events.
* export_events writes an ExportPackage under the export folder and answers its absolute path.
  import_events reads only from the export folder and the import folders; every event gets a new
  id and created_at, events are stored oldest first (package order for ties) with supersession;
  events that are not Events or carry a label outside user/v1 are skipped. A package of another
  ontology is -32002, a file that is not an ExportPackage -32602; a refused import stores nothing.
* Background tasks (`tasks.py`): kept one hour after they finish; a task's `result` shows its
  events as they are when asked (an event deleted since is left out).
* Errors: bad params -32602 (`params.py`); extraction that raises -32004; a store failure while
  ingesting -32003.

Where the text leaves a choice open, the reading above is a default of `self.policy`
(`policy.py`: the staging threshold, unknown users, params, times, protocol_version, foreign
packages, the bad-file code, batches, listing order, …); a variant (`variants.py`) takes the other
reading, and the suite passes it.

Faults (`reference_impl/upp/faults.py`): each is an `if self.fault == ...` where the behaviour
changes, or a decision point set to a value the text forbids (`policy.FAULT_POLICIES`); the wire
faults are in `rpc.RpcEndpoint`.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memconform.reference_impl.upp import exports, params, ranking
from memconform.reference_impl.upp.extractor import ExtractedEvent, Extractor, RuleExtractor
from memconform.reference_impl.upp.labels import Ontology, user_v1
from memconform.reference_impl.upp.rpc import (ABSENT, EXTRACTION_FAILED, INGEST_FAILED, INTERNAL_ERROR,
                                               INVALID_PARAMS, METHOD_NOT_FOUND, USER_NOT_FOUND, RpcEndpoint,
                                               RpcError)
from memconform.reference_impl.upp.store import Row, Store
from memconform.reference_impl.upp.tasks import TaskRunner
from memconform.suite.upp.client import LEVEL_OPERATIONS, OPERATIONS

__all__ = ["UppService", "RpcError", "PROTOCOL_VERSION", "CONFORMANCE_LEVEL", "format_time"]

log = logging.getLogger("memconform.reference_impl.upp.service")

PROTOCOL_VERSION = "1.0.0"  # the reference's; policy.protocol_version is what info reports
CONFORMANCE_LEVEL = 3
DEFAULT_EXPORT_DIR = Path(tempfile.gettempdir()) / "memconform-upp-exports"

#: Fault upp-near-miss-method-names: the names public implementations answer instead.
NEAR_MISS = {"upp/get_events": "upp/events", "upp/delete_events": "upp/delete", "upp/get_labels": "upp/labels",
             "upp/export_events": "upp/export", "upp/import_events": "upp/import"}
#: Faults that leave one operation out (not served, not listed by info).
UNSERVED = {"upp-no-info": "upp/info", "upp-no-ingest": "upp/ingest", "upp-no-retrieve": "upp/retrieve",
            "upp-no-contextualize": "upp/contextualize", "upp-no-get-tasks": "upp/get_tasks"}


#: The members of an Event (upp/02 §1), what retrieve returns when policy.retrieve_members is "event".
EVENT_MEMBERS = ("value", "labels", "confidence", "source_type", "valid_from", "valid_until")


def format_time(t: datetime) -> str:
    """RFC 3339 UTC with a Z and microseconds: an event imported in the same second as it was
    exported still gets a created_at of its own (upp/03 import: new timestamps)."""
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def level_of(operations: Sequence[str]) -> int:
    """The highest conformance level whose operations (and those below) are all in `operations`
    (upp/08 §4); 1 when even level 1 is incomplete (the lowest there is)."""
    level = 0
    for n in sorted(LEVEL_OPERATIONS):
        if not set(LEVEL_OPERATIONS[n]) <= set(operations):
            break
        level = n
    return max(level, 1)


def _same_value(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


class _Discard(Exception):
    """Rolls a transaction back on purpose (fault upp-ingest-not-persisted)."""


class UppService:
    """The ten UPP operations over sqlite. Thread-safe: one lock around the store."""

    def __init__(self, *, db: str = ":memory:", export_dir: Path | None = None, import_dirs: Sequence[Path] = (),
                 extractor: Extractor | None = None, fault: str | None = None,
                 clock: Callable[[], datetime] | None = None, variants: tuple[str, ...] = ()):
        from memconform.reference_impl import variants as switches
        from memconform.reference_impl.upp.policy import FAULT_POLICIES, UppPolicy

        policy = switches.apply(UppPolicy(), "upp", variants)
        if fault in FAULT_POLICIES:
            policy = replace(policy, **FAULT_POLICIES[fault])
        self.policy = policy
        if fault is not None:
            from memconform.reference_impl.faults import FAULTS

            if fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}")
            if FAULTS[fault].spec != "upp":  # a UMP fault is the UMP server's business
                fault = None
        self.fault = fault
        self.ontology: Ontology = user_v1()
        self.export_dir = Path(export_dir) if export_dir is not None else DEFAULT_EXPORT_DIR
        self.import_dirs = tuple(Path(d) for d in import_dirs)
        self.extractor: Extractor = extractor if extractor is not None else RuleExtractor()
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._lock = threading.RLock()
        self._store = Store(db)
        self._closed = False
        self._hidden: set[tuple[str, str]] = set()  # fault upp-delete-soft: "deleted" events
        self._ids_per_user: dict[str, int] = {}      # fault upp-ids-per-user
        self._info_calls = 0                          # fault upp-info-ontology-changes
        self._tasks = TaskRunner(self._now, self._format, hold_running=fault == "upp-task-never-completes")
        self._endpoint = RpcEndpoint(self.call, fault=fault, batches=self.policy.batches)
        methods: dict[str, Callable[[Any], Any]] = {
            "upp/ingest": self._ingest, "upp/retrieve": self._retrieve, "upp/info": self._info,
            "upp/contextualize": self._contextualize, "upp/get_tasks": self._get_tasks,
            "upp/get_events": self._get_events, "upp/delete_events": self._delete_events,
            "upp/get_labels": self._get_labels, "upp/export_events": self._export_events,
            "upp/import_events": self._import_events,
        }
        if fault == "upp-near-miss-method-names":
            methods = {NEAR_MISS.get(name, name): op for name, op in methods.items()}
        if fault in UNSERVED:
            del methods[UNSERVED[fault]]
        self._methods = methods

    # -- public API -----------------------------------------------------------------------------

    def call(self, method: str, params: Any = ABSENT) -> Any:
        """One operation: its result, or RpcError. `params` ABSENT means the request had none
        (None is JSON null: not an object, so -32602 like any other non-object)."""
        operation = self._methods.get(method) if isinstance(method, str) else None
        if operation is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {str(method)[:100]!r}")
        if operation in (self._ingest, self._contextualize):
            # These extract (maybe slowly: an LLM) outside the lock and take it to store.
            self._check_open()
            return operation(params)
        with self._lock:
            self._check_open()
            return operation(params)

    def handle_text(self, text: str | bytes) -> str | None:
        """One JSON-RPC message (or batch) in, the response text out; None: nothing to send."""
        return self._endpoint.handle_text(text)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._tasks.close(wait=True)  # outside the lock: a running task needs it to finish
        with self._lock:
            self._store.close()

    # -- plumbing -------------------------------------------------------------------------------

    def _now(self) -> datetime:
        now = self._clock()
        return (now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now).astimezone(timezone.utc)

    def _format(self, t: datetime) -> str:
        if self.policy.times_with_offset:
            return format_time(t)
        return t.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")

    @property
    def _key(self) -> Callable[[Any], bool]:
        """What an entity_key parameter must be: a non-empty string, or any string where the
        policy reads "" as one more user nobody wrote."""
        return params.string if self.policy.empty_entity_key_valid else params.entity_key

    def _check_open(self) -> None:
        if self._closed:
            raise RpcError(INTERNAL_ERROR, "Internal error: the server is shutting down")

    def _take(self, raw: Any, method: str, required: dict[str, Callable[[Any], bool]],
              optional: dict[str, Callable[[Any], bool]] | None = None) -> dict[str, Any]:
        if self.policy.unknown_params == "reject":
            extra = sorted(set(params.params_object(raw, method)) - set(required) - set(optional or {}))
            if extra:
                raise RpcError(INVALID_PARAMS, f"Invalid params: unknown parameter {extra[0][:100]!r}",
                               {"invalid_params": extra})
        return params.take(raw, method, required, optional)

    def _no_params(self, raw: Any, method: str) -> None:
        """info and get_labels: params absent or an object (whose members are ignored)."""
        if self.policy.params_required and raw is ABSENT:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {method} needs params", {"missing_params": ["params"]})
        self._take(raw, method, {})

    def _known_user(self, entity_key: str) -> None:
        if not self._store.user_exists(entity_key) and self.policy.unknown_user == "error":
            if self.fault == "upp-unknown-user-invalid-params":
                raise RpcError(INVALID_PARAMS, f"Invalid params: no user {entity_key[:200]!r}",
                               {"invalid_params": ["entity_key"]})
            raise RpcError(USER_NOT_FOUND, f"User not found: {entity_key[:200]!r}", {"entity_key": entity_key})

    def _new_id(self, entity_key: str) -> str:
        if self.fault == "upp-ids-per-user":
            self._ids_per_user[entity_key] = self._ids_per_user.get(entity_key, 0) + 1
            return f"evt_{self._ids_per_user[entity_key]}"
        return f"evt_{uuid.uuid4()}"

    def _present(self, row: Row) -> dict[str, Any]:
        """A stored event as every operation shows it (StoredEvent, upp/02 §2)."""
        event = row.stored_event()
        if self.fault == "upp-event-missing-source-type":
            del event["source_type"]
        if self.fault == "upp-confidence-as-string":
            event["confidence"] = str(event["confidence"])
        if self.fault == "upp-created-at-not-iso":
            event["created_at"] = exports.parse_time(event["created_at"]).strftime("%a, %d %b %Y %H:%M:%S GMT")
        if self.fault == "upp-entity-key-prefixed":
            event["entity_key"] = f"user:{event['entity_key']}"
        if self.fault == "upp-superseded-by-empty" and event["superseded_by"] is None:
            event["superseded_by"] = ""
        if self.fault == "upp-superseded-value-rewritten" and event["status"] == "superseded":
            event["value"] = f"[superseded] {event['value']}"
        return event

    def _listing(self, entity_key: str) -> list[Row]:
        """Every event of the user, in the order the policy lists them (get_events, exports)."""
        rows = self._store.events(entity_key)
        return rows[::-1] if self.policy.listing_order == "newest-first" else rows

    def _texts_of(self, row: Row) -> list[str]:
        """What ranking matches a query against: the value, label names and display names."""
        texts = [row.value]
        for label in row.labels:
            texts.append(label)
            definition = self.ontology.definition(label)
            if definition is not None:
                texts.append(str(definition.get("display_name", "")))
        return texts

    def _ranked(self, owner: str | None, query: str, limit: int) -> list[dict[str, Any]]:
        """The valid events of `owner` (None: every user's, only a fault asks) ranked for `query`."""
        statuses = ("valid",)
        if self.fault == "upp-retrieve-returns-superseded":
            statuses = ("valid", "superseded")
        rows = self._store.events(owner, statuses=statuses)
        best = ranking.rank(query, rows, text_of=self._texts_of, recency_of=lambda r: (r.seq,), limit=limit)
        return [self._present(r) for r in best]

    # -- storing events (supersession, staged) --------------------------------------------------

    def _store_event(self, entity_key: str, *, value: str, labels: Sequence[str], confidence: float,
                     source_type: str, valid_from: str | None, valid_until: str | None, created_at: str,
                     id: str | None = None, supersede: bool = True) -> Row:
        labels = tuple(dict.fromkeys(labels))
        for staged in self._store.events(entity_key, statuses=("staged",)):
            if set(staged.labels) == set(labels) and _same_value(staged.value, value):
                self._store.promote(staged.seq)  # reinforced: staged → valid
                if supersede:
                    self._supersede(entity_key, staged, labels)
                return self._store.by_seq(staged.seq)
        threshold = self.policy.staged_below
        status = "staged" if confidence < threshold else "valid"
        if self.fault == "upp-supersedes-as-staged" and self._contradicts(entity_key, labels):
            status = "staged"
        row = self._store.insert(id=id or self._new_id(entity_key), entity_key=entity_key, value=value,
                                 labels=labels, confidence=float(confidence), source_type=source_type,
                                 valid_from=valid_from, valid_until=valid_until, status=status, created_at=created_at)
        if supersede and (status == "valid" or self.fault == "upp-supersedes-as-staged"):
            self._supersede(entity_key, row, labels)
        return row

    def _triggering(self, labels: Sequence[str]) -> set[str]:
        """The labels of a new event that supersede: its singular ones (upp/02 §3)."""
        if self.fault == "upp-singular-accumulates":
            return set()
        if self.fault == "upp-plural-supersedes":
            return set(labels)
        return {label for label in labels if self.ontology.cardinality(label) == "singular"}

    def _contradicts(self, entity_key: str, labels: Sequence[str]) -> bool:
        triggering = self._triggering(labels)
        return any(triggering.intersection(r.labels) for r in self._store.events(entity_key, statuses=("valid",)))

    def _supersede(self, entity_key: str, new: Row, labels: Sequence[str]) -> None:
        triggering = self._triggering(labels)
        if not triggering:
            return
        by: str | None = new.id
        if self.fault == "upp-superseded-by-missing":
            by = None
        if self.fault == "upp-superseded-by-dangling":
            by = f"evt_{uuid.uuid4()}"
        for row in self._store.events(entity_key, statuses=("valid",)):
            if row.seq != new.seq and triggering.intersection(row.labels):
                self._store.supersede(row.seq, by)

    def _checked(self, events: Any) -> list[ExtractedEvent]:
        """What an extractor returned, keeping only Events of this ontology (a plugged-in
        extractor may invent labels or confidences)."""
        out = []
        for event in events if isinstance(events, list) else []:
            if not isinstance(event, ExtractedEvent):
                continue
            labels = [label for label in event.labels if label in self.ontology.names]
            shape = {"value": event.value, "labels": labels, "confidence": event.confidence,
                     "source_type": event.source_type, "valid_from": event.valid_from,
                     "valid_until": event.valid_until}
            if exports.event_problem(shape, self.ontology.names) is None:
                out.append(ExtractedEvent(event.value, tuple(labels), float(event.confidence), event.source_type,
                                          event.valid_from, event.valid_until))
        if self.fault == "upp-confidence-percent":
            out = [replace(e, confidence=round(e.confidence * 100, 6)) for e in out]
        if self.fault == "upp-source-type-unknown":
            out = [replace(e, source_type="user_said") for e in out]
        if self.fault == "upp-ingest-unknown-label":
            out = [replace(e, labels=tuple(f"{label}_v0" for label in e.labels)) for e in out]
        return out

    def _extract_and_store(self, entity_key: str, text: str) -> list[Row]:
        """ingest's work (also contextualize's background task): extract without the lock, then
        store all the events or none under it."""
        try:
            extracted = self._checked(self.extractor.extract(text))
        except Exception as exc:
            log.warning("extraction failed: %s: %s", type(exc).__name__, exc)
            raise RpcError(EXTRACTION_FAILED, "Failed to extract events from text",
                           {"reason": "the extractor failed on this text"}) from None
        with self._lock:
            self._check_open()
            now = self._format(self._now())
            told = self._now().date().isoformat() if self.policy.valid_from_date else None
            try:
                with self._store.transaction():
                    self._store.ensure_user(entity_key, now)
                    seqs = [self._store_event(entity_key, value=e.value, labels=e.labels, confidence=e.confidence,
                                              source_type=e.source_type, valid_from=e.valid_from or told,
                                              valid_until=e.valid_until, created_at=now).seq for e in extracted]
            except sqlite3.Error as exc:
                log.error("storing events failed: %s", exc)
                raise RpcError(INGEST_FAILED, "Error persisting events to storage") from None
            return [self._store.by_seq(s) for s in dict.fromkeys(seqs)]  # as they stand after the whole ingest

    # -- the operations -------------------------------------------------------------------------

    def _info(self, raw: Any) -> dict[str, Any]:
        self._no_params(raw, "upp/info")
        if self.fault == "upp-info-needs-entity-key":
            self._take(raw, "upp/info", {"entity_key": self._key})
        operations = [op for op in OPERATIONS if op in self._methods]
        operations += [name for name in self._methods if name not in OPERATIONS]  # near-miss names
        level = level_of(operations)
        if self.fault == "upp-info-level-mismatch":
            operations.remove("upp/import_events")
        result: dict[str, Any] = {"protocol_version": self.policy.protocol_version, "ontology": self.ontology.id,
                                  "operations": operations, "conformance_level": level}
        if self.fault == "upp-info-version-2":
            result["protocol_version"] = "2.0.0"
        if self.fault == "upp-info-missing-ontology":
            del result["ontology"]
        if self.fault == "upp-info-level-as-string":
            result["conformance_level"] = str(level)
        if self.fault == "upp-info-ontology-unversioned":
            result["ontology"] = "user"
        self._info_calls += 1
        if self.fault == "upp-info-ontology-changes" and self._info_calls > 1:
            result["ontology"] = "user/v2"
        return result

    def _get_labels(self, raw: Any) -> Any:
        self._no_params(raw, "upp/get_labels")
        definitions = self.ontology.label_definitions()
        if self.policy.stricter_sensitivity:
            definitions = [{**d, "sensitivity": "tier_sensitive"} if d["sensitivity"] == "tier_personal" else d
                           for d in definitions]
        if self.fault == "upp-get-labels-partial":
            definitions = definitions[:50]
        if self.fault == "upp-label-missing-durability":
            for d in definitions:
                del d["durability"]
        if self.fault == "upp-label-examples-string":
            for d in definitions:
                d["examples"] = "; ".join(d["examples"])
        if self.fault == "upp-label-cardinality-changed":
            for d in definitions:
                if d["name"] == "who_languages":
                    d["cardinality"] = "singular"
        if self.fault == "upp-get-labels-object":
            return {"labels": definitions}
        return definitions

    def _ingest(self, raw: Any) -> Any:
        p = self._take(raw, "upp/ingest", {"entity_key": self._key, "text": params.string})
        if self.fault == "upp-ingest-not-persisted":
            with self._lock:
                try:
                    with self._store.transaction():
                        events = [self._present(r) for r in self._extract_and_store(p["entity_key"], p["text"])]
                        raise _Discard
                except _Discard:
                    return events
        events = [self._present(r) for r in self._extract_and_store(p["entity_key"], p["text"])]
        if self.fault == "upp-status-stored":
            for event in events:
                event["status"] = "stored"
        if self.fault == "upp-ingest-returns-object":
            return {"events": events}
        return events

    def _retrieve(self, raw: Any) -> Any:
        optional = {"max_results": params.positive_int}
        required = {"entity_key": self._key, "query": params.string}
        if self.fault == "upp-requires-extension-param":
            required |= optional
        p = self._take(raw, "upp/retrieve", required, optional)
        self._known_user(p["entity_key"])
        if self.fault == "upp-retrieve-drops-long-queries" and len(p["query"].split()) > 3:
            return []
        owner: str | None = p["entity_key"]
        if self.fault == "upp-retrieve-all-users":
            owner = None
        events = self._ranked(owner, p["query"], p.get("max_results", ranking.DEFAULT_LIMIT))
        if self.fault == "upp-user-not-found-when-nothing-matches" \
                and not any(ranking.words(p["query"]) & ranking.words(" ".join((e["value"], *e["labels"])))
                            for e in events):
            raise RpcError(USER_NOT_FOUND, f"User not found: {p['entity_key'][:200]!r}",
                           {"entity_key": p["entity_key"]})
        if self.policy.retrieve_members == "event":
            events = [{k: e[k] for k in EVENT_MEMBERS if k in e} for e in events]
        if self.fault == "upp-retrieve-returns-object":
            return {"events": events}
        return events

    def _contextualize(self, raw: Any) -> dict[str, Any]:
        p = self._take(raw, "upp/contextualize", {"entity_key": self._key, "text": params.string},
                       {"max_results": params.positive_int})
        key, text = p["entity_key"], p["text"]
        limit = p.get("max_results", ranking.DEFAULT_LIMIT)
        if self.fault == "upp-contextualize-returns-new":
            ids = [r.id for r in self._extract_and_store(key, text)]  # ingests first, then retrieves
            with self._lock:
                events = self._ranked(key, text, limit)
            return {"events": events, "task_id": self._tasks.submit(lambda: lambda: self._current(key, ids))}

        def job() -> Callable[[], list[Any]]:
            if self.fault == "upp-contextualize-no-ingest":
                return list
            ids = [r.id for r in self._extract_and_store(key, text)]
            return lambda: self._current(key, ids)

        with self._lock:  # the existing events, retrieved before the ingest can run
            self._check_open()
            with self._store.transaction():
                self._store.ensure_user(key, self._format(self._now()))
            events = self._ranked(key, text, limit)
            task_id = self._tasks.submit(job)
        result: dict[str, Any] = {"events": events, "task_id": task_id}
        if self.fault == "upp-contextualize-no-task-id":
            del result["task_id"]
        if self.fault == "upp-task-id-unknown":
            result["task_id"] = f"task_{uuid.uuid4()}"
        return result

    def _current(self, entity_key: str, ids: list[str]) -> list[dict[str, Any]]:
        """The events of `ids` as they are now (deleted ones left out)."""
        with self._lock:
            if self._closed:
                return []
            rows = {r.id: r for r in self._store.by_ids(entity_key, ids)}
            return [self._present(rows[i]) for i in ids if i in rows]

    def _get_tasks(self, raw: Any) -> Any:
        p = self._take(raw, "upp/get_tasks", {"task_ids": params.string_array})
        found = self._tasks.statuses(p["task_ids"])
        if self.fault == "upp-unknown-task-errors":
            known = {s["task_id"] for s in found}
            unknown = [t for t in p["task_ids"] if t not in known]
            if unknown:
                raise RpcError(INVALID_PARAMS, f"Invalid params: unknown task id {unknown[0][:100]!r}",
                               {"invalid_params": ["task_ids"]})
        if self.fault == "upp-get-tasks-first-only":
            found = found[:1]
        if self.fault == "upp-task-completed-at-missing":
            for status in found:
                status["completed_at"] = None
        if self.fault == "upp-tasks-forgotten":
            for status in found:
                if status["status"] in ("completed", "failed"):
                    self._tasks.forget(status["task_id"])
        if self.fault == "upp-get-tasks-object":
            return {"tasks": found}
        return found

    def _get_events(self, raw: Any) -> Any:
        p = self._take(raw, "upp/get_events", {"entity_key": self._key})
        key = p["entity_key"]
        self._known_user(key)
        rows = self._listing(key)
        if self.fault == "upp-get-events-hides-superseded":
            rows = [r for r in rows if r.status != "superseded"]
        if self.fault == "upp-delete-soft":
            rows = [r for r in rows if (key, r.id) not in self._hidden]
        if self.fault == "upp-get-events-capped":
            rows = rows[:2]
        if self.fault == "upp-get-events-returns-object":
            return {"events": [self._present(r) for r in rows]}
        return [self._present(r) for r in rows]

    def _delete_events(self, raw: Any) -> Any:
        p = self._take(raw, "upp/delete_events", {"entity_key": self._key},
                       {"event_ids": params.string_array})
        key = p["entity_key"]
        ids = list(dict.fromkeys(p.get("event_ids") or [])) or None  # omitted or empty: all
        if self.fault == "upp-delete-ignores-ids":
            ids = None
        if self.fault == "upp-delete-all-needs-ids" and ids is None:
            return {"deleted_count": 0}
        if self.fault == "upp-delete-soft":
            hidden = [r for r in self._store.events(key)
                      if (ids is None or r.id in ids) and (key, r.id) not in self._hidden]
            self._hidden.update((key, r.id) for r in hidden)
            return {"deleted_count": len(hidden)}
        owner: str | None = key
        if self.fault == "upp-delete-other-user":
            owner = None
        with self._store.transaction():
            gone = self._store.delete(owner, ids)
            if gone or ids is None:
                for user in {key, *(r.entity_key for r in gone)}:
                    self._store.drop_user_if_empty(user)
        count = len(gone)
        if self.fault == "upp-delete-count-wrong" and ids is not None:
            count = len(ids)
        if self.fault == "upp-delete-result-number":
            return count
        return {"deleted_count": count}

    def _export_events(self, raw: Any) -> dict[str, Any]:
        p = self._take(raw, "upp/export_events", {"entity_key": self._key})
        key = p["entity_key"]
        self._known_user(key)
        now = self._now()
        rows = self._listing(key)
        if self.fault == "upp-export-valid-only":
            rows = [r for r in rows if r.status == "valid"]
        events = [self._present(r) for r in rows]
        if self.fault == "upp-export-drops-superseded-by":
            events = [{k: v for k, v in e.items() if k != "superseded_by"} for e in events]
        if self.fault == "upp-export-rounds-confidence":
            events = [{**e, "confidence": round(e["confidence"], 1)} for e in events]
        package: dict[str, Any] = {"entity_key": key, "ontology": self.ontology.id, "events": events,
                                   "exported_at": self._format(now)}
        if self.fault == "upp-export-package-no-ontology":
            del package["ontology"]
        try:
            if self.fault == "upp-export-path-from-entity-key":
                path = self.export_dir / f"{key}-{now:%Y%m%dT%H%M%S%fZ}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(package), encoding="utf-8")
            else:
                path = exports.write_package(self.export_dir, package, key, now)
        except OSError as exc:
            log.error("cannot write an export into %s: %s", self.export_dir, exc)
            raise RpcError(INTERNAL_ERROR, "Internal error: the export file could not be written") from None
        if self.fault == "upp-export-no-file":
            path.unlink()
        result: dict[str, Any] = {"file": str(path), "event_count": len(events), "exported_at": package["exported_at"]}
        if self.fault == "upp-export-returns-events":
            result["events"] = events
        return result

    def _import_events(self, raw: Any) -> dict[str, Any]:
        p = self._take(raw, "upp/import_events", {"entity_key": self._key, "file": params.nonempty_string})
        key = p["entity_key"]
        try:
            path = exports.resolve_import(p["file"], self.export_dir, self.import_dirs)
            package = exports.read_package(path)
        except RpcError as exc:
            code = self.policy.bad_file_code
            if exc.code == INVALID_PARAMS and code != INVALID_PARAMS:
                message = "Internal error" if code == INTERNAL_ERROR else exc.message.replace("Invalid params", "Bad file")
                raise RpcError(code, message, exc.data if code != INTERNAL_ERROR else None) from None
            raise
        if self.fault == "upp-import-into-package-user":
            key = package["entity_key"] or key
        foreign = package["ontology"] != self.ontology.id
        if self.fault == "upp-bad-input-changes-state":
            result = self._store_imported(key, package["events"])
            exports.check_ontology(package, self.ontology.id)
            return result
        if not (foreign and self.policy.foreign_ontology == "by-labels"):
            exports.check_ontology(package, self.ontology.id)  # every refusal happens before a write
        result = self._store_imported(key, package["events"])
        if self.fault == "upp-import-result-renamed":
            return {"imported": result["imported_count"], "skipped": result["skipped_count"]}
        return result

    def _store_imported(self, key: str, events: list[Any]) -> dict[str, Any]:
        now = self._format(self._now())
        imported = skipped = 0
        check_labels = self.fault != "upp-import-ignores-labels"
        supersede = self.fault != "upp-import-no-supersession"
        drop_validity = self.fault == "upp-import-drops-validity"
        with self._store.transaction():
            self._store.ensure_user(key, now)
            for event in exports.storage_order(events):
                if exports.event_problem(event, self.ontology.names, check_labels=check_labels) is not None:
                    skipped += 1
                    continue
                kept_id = None
                if self.fault == "upp-import-keeps-ids" and params.nonempty_string(event.get("id")) \
                        and not self._store.id_taken(key, event["id"]):
                    kept_id = event["id"]
                row = self._store_event(key, value=event["value"], labels=event["labels"],
                                        confidence=float(event["confidence"]), source_type=event["source_type"],
                                        valid_from=None if drop_validity else event.get("valid_from"),
                                        valid_until=None if drop_validity else event.get("valid_until"),
                                        created_at=now, id=kept_id, supersede=supersede)
                if self.fault == "upp-import-keeps-superseded-by" and isinstance(event.get("superseded_by"), str):
                    self._store.supersede(row.seq, event["superseded_by"])
                imported += 1
        return {"imported_count": imported, "skipped_count": skipped}
