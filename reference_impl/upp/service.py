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

This module holds only the right implementation. The deliberate violations are entries of one
table (`faults.py`), made apart from it: a decision point of the policy set to a value the text
forbids, or a method replaced by a wrong one on one service object (`faulty.py`). Methods that
are small on purpose (`_present`, `_new_status`, `_superseded_by`, `_retrieved`, `_delete`,
`_package`, `_import_event`, …) are the seams those wraps hold on to: each says the one rule it
implements.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
import unicodedata
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from memconform.reference_impl.upp import exports, params, ranking
from memconform.reference_impl.upp.extractor import ExtractedEvent, Extractor, RuleExtractor
from memconform.reference_impl.upp.labels import Ontology, user_v1
from memconform.reference_impl.upp.rpc import (ABSENT, EXTRACTION_FAILED, INGEST_FAILED, INTERNAL_ERROR,
                                               DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_BATCH, INVALID_PARAMS,
                                               METHOD_NOT_FOUND, USER_NOT_FOUND, RpcEndpoint, RpcError)
from memconform.reference_impl.upp.store import Row, Store
from memconform.reference_impl.upp.tasks import TaskRunner
from memconform.suite.upp.client import LEVEL_OPERATIONS, OPERATIONS

# Kept importable from here for the tests that import it from the service (tests/harness/test_upp_aliases.py).
from memconform.reference_impl.upp.faulty import NEAR_MISS  # noqa: E402,F401

__all__ = ["UppService", "RpcError", "PROTOCOL_VERSION", "CONFORMANCE_LEVEL", "format_time"]

log = logging.getLogger("memconform.reference_impl.upp.service")

PROTOCOL_VERSION = "1.0.0"  # the reference's; policy.protocol_version is what info reports
CONFORMANCE_LEVEL = 3
#: Checked (exports.private_folder) before use: a fixed name in a shared folder (issue 14).
DEFAULT_EXPORT_DIR = exports.default_export_dir()

#: The ten operations (upp/03) and the method answering each.
SERVED = {"upp/ingest": "_ingest", "upp/retrieve": "_retrieve", "upp/info": "_info",
          "upp/contextualize": "_contextualize", "upp/get_tasks": "_get_tasks", "upp/get_events": "_get_events",
          "upp/delete_events": "_delete_events", "upp/get_labels": "_get_labels",
          "upp/export_events": "_export_events", "upp/import_events": "_import_events"}
#: These extract (maybe slowly: an LLM) outside the lock and take it to store.
_EXTRACTING = ("_ingest", "_contextualize")

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


class UppService:
    """The ten UPP operations over sqlite. Thread-safe: one lock around the store."""

    def __init__(self, *, db: str = ":memory:", export_dir: Path | None = None, import_dirs: Sequence[Path] = (),
                 extractor: Extractor | None = None, fault: str | None = None,
                 clock: Callable[[], datetime] | None = None, variants: tuple[str, ...] = (),
                 max_batch: int = DEFAULT_MAX_BATCH, max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES):
        from memconform.reference_impl.faults import FAULTS, deviate, install_wraps
        from memconform.reference_impl.upp.policy import UppPolicy

        if fault is not None:
            if fault not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}")
            if FAULTS[fault].spec != "upp":  # a UMP fault is the UMP server's business
                fault = None
        self.fault = fault
        self.policy = deviate(UppPolicy(), "upp", fault, variants)
        self.ontology: Ontology = user_v1()
        # a folder given is the operator's choice; the default one is shared by name, so checked
        self.export_dir = Path(export_dir) if export_dir is not None else exports.private_folder(DEFAULT_EXPORT_DIR)
        self.import_dirs = tuple(Path(d) for d in import_dirs)
        self.extractor: Extractor = extractor if extractor is not None else RuleExtractor()
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._lock = threading.RLock()
        self._store = Store(db)
        self._closed = False
        self._tasks = TaskRunner(self._now, self._format_utc)
        # max_batch / max_answer_bytes: issue 14, a batch must not amplify (rpc.py, "bounds")
        self._endpoint = RpcEndpoint(self.call, batches=self.policy.batches, max_batch=max_batch,
                                     max_answer_bytes=max_answer_bytes)
        install_wraps(self, "upp", fault)
        self._methods = self._served()

    # -- public API -----------------------------------------------------------------------------

    def call(self, method: str, params: Any = ABSENT) -> Any:
        """One operation: its result, or RpcError. `params` ABSENT means the request had none
        (None is JSON null: not an object, so -32602 like any other non-object)."""
        name = self._methods.get(method) if isinstance(method, str) else None
        if name is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {str(method)[:100]!r}")
        operation = getattr(self, name)
        if name in _EXTRACTING:
            self._check_open()
            return operation(params)
        with self._lock:
            self._check_open()
            return operation(params)

    def handle_text(self, text: str | bytes) -> str | None:
        """One JSON-RPC message (or batch) in, the response text out; None: nothing to send."""
        return self._endpoint.handle_text(text)

    def encode(self, text: str) -> bytes:
        """The bytes a binding sends for a response text (upp/05 §5)."""
        return self._endpoint.encode(text)

    def line(self, text: str) -> bytes:
        """A response text as the stdio binding sends it: one line (upp/05 §2)."""
        return self._endpoint.line(text)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._tasks.close(wait=True)  # outside the lock: a running task needs it to finish
        with self._lock:
            self._store.close()

    # -- plumbing -------------------------------------------------------------------------------

    def _served(self) -> dict[str, str]:
        """The methods this server answers, each with the method of this class that answers it."""
        return dict(SERVED)

    def _now(self) -> datetime:
        now = self._clock()
        return (now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now).astimezone(timezone.utc)

    def _format(self, t: datetime) -> str:
        if self.policy.times_with_offset:
            return format_time(t)
        return t.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")

    def _format_utc(self, t: datetime) -> str:
        """The task times (03 §3 upp/get_tasks: "ISO-8601 UTC"): UTC with its Z whatever the policy,
        as ISO-8601 reads a time without a designator as local time (upp/get-tasks-returns-statuses)."""
        return format_time(t)

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
        if self.policy.params_by_position and isinstance(raw, list):
            names = [*required, *(optional or {})]
            if len(raw) > len(names):
                raise RpcError(INVALID_PARAMS, f"Invalid params: {method} takes at most {len(names)} by position",
                               {"invalid_params": ["params"]})
            raw = dict(zip(names, raw))
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
            raise RpcError(USER_NOT_FOUND, f"User not found: {entity_key[:200]!r}", {"entity_key": entity_key})

    def _new_id(self, entity_key: str) -> str:
        # upp/stored-event-id-unique: unique across users, not only within one
        return f"evt_{uuid.uuid4()}"

    def _present(self, row: Row) -> dict[str, Any]:
        """A stored event as every operation shows it (StoredEvent, upp/02 §2)."""
        return row.stored_event()

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

    def _retrievable(self, owner: str | None) -> list[Row]:
        """What retrieve and contextualize rank: valid events only (upp/retrieve-excludes-superseded;
        a staged event is not yet believed)."""
        return self._store.events(owner, statuses=("valid",))

    def _ranked(self, owner: str | None, query: str, limit: int) -> list[dict[str, Any]]:
        """The retrievable events of `owner` (None: every user's) ranked for `query`."""
        rows = self._retrievable(owner)
        best = ranking.rank(query, rows, text_of=self._texts_of, recency_of=lambda r: (r.seq,), limit=limit)
        return [self._present(r) for r in best]

    # -- storing events (supersession, staged) --------------------------------------------------

    def _store_event(self, entity_key: str, *, value: str, labels: Sequence[str], confidence: float,
                     source_type: str, valid_from: str | None, valid_until: str | None, created_at: str,
                     id: str | None = None, supersede: bool = True, status: str | None = None) -> Row:
        """One new event of the user, or the staged one it reinforces. `id` None mints one;
        `supersede` False stores it touching no other event (the reference always supersedes)."""
        labels = tuple(dict.fromkeys(labels))
        for staged in self._store.events(entity_key, statuses=("staged",)):
            if self._reinforces(staged, labels, value):
                self._store.promote(staged.seq)  # reinforced: staged → valid
                if supersede:
                    self._supersede(entity_key, staged, labels)
                return self._store.by_seq(staged.seq)
        status = status or self._new_status(entity_key, labels, confidence)
        row = self._store.insert(id=id or self._new_id(entity_key), entity_key=entity_key, value=value,
                                 labels=labels, confidence=float(confidence), source_type=source_type,
                                 valid_from=valid_from, valid_until=valid_until, status=status, created_at=created_at)
        if supersede and self._supersedes(row):
            self._supersede(entity_key, row, labels)
        return row

    def _reinforces(self, staged: Row, labels: Sequence[str], value: str) -> bool:
        """upp/staged-reinforcement: whether a new event matches a staged one of the user, which it then
        reinforces (staged → valid): the same labels and the same value, ignoring case and spacing."""
        return set(staged.labels) == set(labels) and _same_value(staged.value, value)

    def _new_status(self, entity_key: str, labels: Sequence[str], confidence: float) -> str:
        """upp/high-confidence-valid, upp/low-confidence-staged: the threshold is the policy's."""
        return "staged" if confidence < self.policy.staged_below else "valid"

    def _supersedes(self, row: Row) -> bool:
        """upp/supersession-new-valid: only a valid event supersedes (a staged one is not yet believed)."""
        return row.status == "valid"

    def _triggering(self, labels: Sequence[str]) -> set[str]:
        """The labels of a new event that supersede: its singular ones (upp/02 §3)."""
        return {label for label in labels if self.ontology.cardinality(label) == "singular"}

    def _contradicts(self, entity_key: str, labels: Sequence[str]) -> bool:
        triggering = self._triggering(labels)
        return any(triggering.intersection(r.labels) for r in self._store.events(entity_key, statuses=("valid",)))

    def _supersede(self, entity_key: str, new: Row, labels: Sequence[str]) -> None:
        triggering = self._triggering(labels)
        if not triggering:
            return
        by = self._superseded_by(new)
        for row in self._store.events(entity_key, statuses=("valid",)):
            if row.seq != new.seq and triggering.intersection(row.labels):
                self._store.supersede(row.seq, by)

    def _superseded_by(self, new: Row) -> str | None:
        """upp/supersession-superseded-by: the pointer names the event that superseded."""
        return new.id

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
        operations = [op for op in OPERATIONS if op in self._methods]
        operations += [name for name in self._methods if name not in OPERATIONS]  # names outside the spec's
        return {"protocol_version": self.policy.protocol_version, "ontology": self.ontology.id,
                "operations": operations, "conformance_level": level_of(operations)}

    def _get_labels(self, raw: Any) -> Any:
        self._no_params(raw, "upp/get_labels")
        definitions = self.ontology.label_definitions()
        if self.policy.stricter_sensitivity:
            definitions = [{**d, "sensitivity": "tier_sensitive"} if d["sensitivity"] == "tier_personal" else d
                           for d in definitions]
        return definitions

    def _ingest(self, raw: Any) -> Any:
        p = self._take(raw, "upp/ingest", {"entity_key": self._key, "text": params.string})
        return [self._present(r) for r in self._extract_and_store(p["entity_key"], p["text"])]

    def _retrieve(self, raw: Any) -> Any:
        p = self._take(raw, "upp/retrieve", {"entity_key": self._key, "query": params.string},
                       {"max_results": params.positive_int})
        self._known_user(p["entity_key"])
        return self._retrieved(p["entity_key"], p["query"], p.get("max_results", ranking.DEFAULT_LIMIT))

    def _retrieved(self, entity_key: str, query: str, limit: int) -> list[dict[str, Any]]:
        """What retrieve answers: the user's own events only (upp/entity-isolation), ranked."""
        events = self._ranked(entity_key, query, limit)
        if self.policy.retrieve_hidden_tiers:
            served = {d["name"]: d["sensitivity"] for d in self._get_labels({})}
            events = [e for e in events if not any(served.get(x) in self.policy.retrieve_hidden_tiers
                                                   for x in e["labels"])]
        if self.policy.retrieve_members == "event":
            events = [{k: e[k] for k in EVENT_MEMBERS if k in e} for e in events]
        return events

    def _contextualize(self, raw: Any) -> dict[str, Any]:
        p = self._take(raw, "upp/contextualize", {"entity_key": self._key, "text": params.string},
                       {"max_results": params.positive_int})
        key, text = p["entity_key"], p["text"]
        job = self._ingest_later(key, text)
        with self._lock:  # the existing events, retrieved before the ingest can run
            self._check_open()
            with self._store.transaction():
                self._store.ensure_user(key, self._format(self._now()))
            events = self._ranked(key, text, p.get("max_results", ranking.DEFAULT_LIMIT))
            task_id = self._tasks.submit(job)
        return {"events": events, "task_id": task_id}

    def _ingest_later(self, entity_key: str, text: str) -> Callable[[], Callable[[], list[Any]]]:
        """contextualize's background task (upp/contextualize-background-ingest): ingest the text;
        the task's result shows the events as they are when asked."""
        def job() -> Callable[[], list[Any]]:
            ids = [r.id for r in self._extract_and_store(entity_key, text)]
            return lambda: self._current(entity_key, ids)
        return job

    def _current(self, entity_key: str, ids: list[str]) -> list[dict[str, Any]]:
        """The events of `ids` as they are now (deleted ones left out)."""
        with self._lock:
            if self._closed:
                return []
            rows = {r.id: r for r in self._store.by_ids(entity_key, ids)}
            return [self._present(rows[i]) for i in ids if i in rows]

    def _get_tasks(self, raw: Any) -> Any:
        p = self._take(raw, "upp/get_tasks", {"task_ids": params.string_array})
        return self._tasks.statuses(p["task_ids"])

    def _get_events(self, raw: Any) -> Any:
        p = self._take(raw, "upp/get_events", {"entity_key": self._key})
        self._known_user(p["entity_key"])
        return [self._present(r) for r in self._listing(p["entity_key"])]

    def _delete_events(self, raw: Any) -> Any:
        p = self._take(raw, "upp/delete_events", {"entity_key": self._key},
                       {"event_ids": params.string_array})
        ids = list(dict.fromkeys(p.get("event_ids") or [])) or None  # omitted or empty: all
        return {"deleted_count": self._delete(p["entity_key"], ids)}

    def _delete(self, entity_key: str, ids: list[str] | None) -> int:
        """Physical deletion of the user's events with `ids` (all when None); how many were deleted."""
        with self._store.transaction():
            gone = self._store.delete(entity_key, ids)
            if gone or ids is None:
                for user in {entity_key, *(r.entity_key for r in gone)}:
                    self._store.drop_user_if_empty(user)
        return len(gone)

    def _export_events(self, raw: Any) -> dict[str, Any]:
        p = self._take(raw, "upp/export_events", {"entity_key": self._key})
        key = p["entity_key"]
        self._known_user(key)
        now = self._now()
        package = self._package(key, now)
        try:
            path = self._write_export(package, key, now)
        except OSError as exc:
            log.error("cannot write an export into %s: %s", self.export_dir, exc)
            raise RpcError(INTERNAL_ERROR, "Internal error: the export file could not be written") from None
        shown = os.path.relpath(path) if self.policy.export_path_form == "relative" else str(path)
        return {"file": shown, "event_count": len(package["events"]), "exported_at": package["exported_at"]}

    def _package(self, entity_key: str, now: datetime) -> dict[str, Any]:
        """The user's ExportPackage (upp/02 §5): every event, whatever its status."""
        return {"entity_key": entity_key, "ontology": self.ontology.id,
                "events": [self._present(r) for r in self._listing(entity_key)], "exported_at": self._format(now)}

    def _write_export(self, package: dict[str, Any], entity_key: str, now: datetime) -> Path:
        # upp/export-confined-paths: the file name never comes from the entity_key as given
        folder = self.export_dir
        if self.policy.export_layout == "nested":  # users/<hash>/: imports still read the whole export folder
            folder = folder / "users"
        if self.policy.export_layout in ("per-user", "nested"):
            folder = folder / hashlib.sha256(entity_key.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        return exports.write_package(folder, package, entity_key, now)

    def _import_events(self, raw: Any) -> dict[str, Any]:
        p = self._take(raw, "upp/import_events", {"entity_key": self._key, "file": params.nonempty_string})
        package = self._read_import(p["file"])
        foreign = package["ontology"] != self.ontology.id
        if foreign and self.policy.foreign_ontology == "skip-all":
            return {"imported_count": 0, "skipped_count": len(package["events"])}
        if not (foreign and self.policy.foreign_ontology == "by-labels"):
            exports.check_ontology(package, self.ontology.id)  # every refusal happens before a write
        return self._store_imported(p["entity_key"], package["events"])

    def _read_import(self, file: str) -> dict[str, Any]:
        """The ExportPackage at `file`, read only from the export and import folders."""
        if self.policy.export_path_form == "relative" and not os.path.isabs(file):
            file = os.path.abspath(file)  # relative to the working folder, as this server's exports are named
        try:
            return exports.read_package(exports.resolve_import(file, self.export_dir, self.import_dirs))
        except RpcError as exc:
            code = self.policy.bad_file_code
            if exc.code == INVALID_PARAMS and code != INVALID_PARAMS:
                message = "Internal error" if code == INTERNAL_ERROR else exc.message.replace("Invalid params", "Bad file")
                raise RpcError(code, message, exc.data if code != INTERNAL_ERROR else None) from None
            raise

    def _store_imported(self, key: str, events: list[Any]) -> dict[str, Any]:
        start = self._now()
        imported = skipped = 0
        with self._store.transaction():
            self._store.ensure_user(key, self._format(start))
            for event in (exports.storage_order(events) if self.policy.import_order == "created" else events):
                if self._import_problem(event) is not None or self._duplicate(key, event):
                    skipped += 1
                    continue
                # one microsecond apart, in the order stored: a later import of this server's export
                # recovers that order from created_at whatever order the file lists the events in
                self._import_event(key, event, self._format(start + timedelta(microseconds=imported)))
                imported += 1
        return {"imported_count": imported, "skipped_count": skipped}

    def _duplicate(self, key: str, event: dict[str, Any]) -> bool:
        """Under duplicate detection (policy import_duplicates "skip"): whether the user holds a
        valid event with the event's value and labels, as the store stands now (an earlier event
        of the same package may have superseded it). "skip-folded": whether the user holds any
        event, whatever its status, with its labels and its value but for case, runs of whitespace
        and compatibility forms."""
        if self.policy.import_duplicates not in ("skip", "skip-folded"):
            return False

        def same(value: str) -> str:
            if self.policy.import_duplicates == "skip":
                return value
            return " ".join(unicodedata.normalize("NFKC", value).split()).casefold()

        labels, value = set(event["labels"]), same(event["value"])
        held = self._store.events(key, statuses=("valid",) if self.policy.import_duplicates == "skip" else None)
        return any(same(r.value) == value and set(r.labels) == labels for r in held)

    def _import_problem(self, event: Any) -> str | None:
        """upp/import-skips-invalid-labels: why a package's event is skipped (not an Event, or a
        label outside this ontology), or None."""
        return exports.event_problem(event, self.ontology.names)

    def _import_event(self, key: str, event: dict[str, Any], created_at: str, **store: Any) -> Row:
        """One package event stored anew: a new id and created_at (upp/import-new-ids), supersession
        as for an ingest (upp/import-supersession); `store` goes to `_store_event`."""
        kept = event.get("status") if self.policy.import_status == "package" else None
        return self._store_event(key, value=event["value"], labels=event["labels"],
                                 confidence=float(event["confidence"]), source_type=event["source_type"],
                                 valid_from=event.get("valid_from"), valid_until=event.get("valid_until"),
                                 created_at=created_at, **store,
                                 **({"status": kept} if kept in ("valid", "staged") else {}))
