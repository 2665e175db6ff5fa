"""The sqlite store behind the reference UPP server (`service.UppService`).

Two tables: `users` (an entity_key the server knows) and `events` (StoredEvents in insertion
order, `seq`). Events are immutable (upp/02 §6) and the schema enforces it with triggers: the
content columns never change, and `status` moves only staged → valid (reinforcement) and
valid → superseded (contradiction). `superseded_by` is set when an event is superseded and is
cleared when the event it names is deleted (docs/live-upp.md: nothing returns to `valid`, no
pointer dangles). Deletion is physical.

The store knows nothing of the ontology or ranking; the service decides and calls it.
Not thread-safe by itself: the service holds one lock around every use. Writes that belong
together run inside `transaction()`, so a refused request leaves the store as it was.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    entity_key TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    entity_key TEXT NOT NULL,
    value TEXT NOT NULL,
    labels TEXT NOT NULL,            -- JSON array of label names
    confidence REAL NOT NULL,
    source_type TEXT NOT NULL,
    valid_from TEXT,
    valid_until TEXT,
    status TEXT NOT NULL CHECK (status IN ('valid', 'staged', 'superseded')),
    created_at TEXT NOT NULL,
    superseded_by TEXT,
    UNIQUE (entity_key, id)
);
CREATE INDEX IF NOT EXISTS events_user_status ON events (entity_key, status);
CREATE TRIGGER IF NOT EXISTS events_immutable
BEFORE UPDATE OF id, entity_key, value, labels, confidence, source_type, valid_from, valid_until, created_at
ON events
BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;
CREATE TRIGGER IF NOT EXISTS events_status_transitions
BEFORE UPDATE OF status ON events
WHEN NOT (OLD.status = NEW.status
          OR (OLD.status = 'staged' AND NEW.status = 'valid')
          OR (OLD.status = 'valid' AND NEW.status = 'superseded'))
BEGIN SELECT RAISE(ABORT, 'forbidden status transition'); END;
"""

_COLUMNS = ("seq", "id", "entity_key", "value", "labels", "confidence", "source_type", "valid_from",
            "valid_until", "status", "created_at", "superseded_by")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM events"


@dataclass(frozen=True)
class Row:
    """One stored event as kept (labels decoded)."""

    seq: int
    id: str
    entity_key: str
    value: str
    labels: tuple[str, ...]
    confidence: float
    source_type: str
    valid_from: str | None
    valid_until: str | None
    status: str
    created_at: str
    superseded_by: str | None

    def stored_event(self) -> dict[str, Any]:
        """The StoredEvent (upp/02 §2). valid_from / valid_until are optional: left out when
        unknown; superseded_by is always present (null unless superseded)."""
        event: dict[str, Any] = {"id": self.id, "entity_key": self.entity_key, "value": self.value,
                                 "labels": list(self.labels), "confidence": self.confidence,
                                 "source_type": self.source_type}
        if self.valid_from is not None:
            event["valid_from"] = self.valid_from
        if self.valid_until is not None:
            event["valid_until"] = self.valid_until
        event.update(status=self.status, created_at=self.created_at, superseded_by=self.superseded_by)
        return event


def _row(values: Sequence[Any]) -> Row:
    d = dict(zip(_COLUMNS, values, strict=True))
    d["labels"] = tuple(json.loads(d["labels"]))
    return Row(**d)


class Store:
    def __init__(self, db: str = ":memory:"):
        # isolation_level None: no implicit transactions; `transaction()` opens them explicitly.
        self._db = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        self._db.executescript(_SCHEMA)
        self._depth = 0

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing. Nested uses join the outer transaction."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")
        finally:
            self._depth = 0

    # -- users ----------------------------------------------------------------------------------

    def user_exists(self, entity_key: str) -> bool:
        return self._db.execute("SELECT 1 FROM users WHERE entity_key = ?", (entity_key,)).fetchone() is not None

    def ensure_user(self, entity_key: str, created_at: str) -> None:
        self._db.execute("INSERT OR IGNORE INTO users (entity_key, created_at) VALUES (?, ?)", (entity_key, created_at))

    def drop_user_if_empty(self, entity_key: str) -> None:
        self._db.execute("DELETE FROM users WHERE entity_key = ? AND NOT EXISTS "
                         "(SELECT 1 FROM events WHERE entity_key = ?)", (entity_key, entity_key))

    # -- events ---------------------------------------------------------------------------------

    def insert(self, *, id: str, entity_key: str, value: str, labels: Sequence[str], confidence: float,
               source_type: str, valid_from: str | None, valid_until: str | None, status: str,
               created_at: str) -> Row:
        cur = self._db.execute(
            "INSERT INTO events (id, entity_key, value, labels, confidence, source_type, valid_from, valid_until,"
            " status, created_at, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
            (id, entity_key, value, json.dumps(list(labels)), confidence, source_type, valid_from, valid_until,
             status, created_at))
        return self.by_seq(cur.lastrowid)

    def id_taken(self, entity_key: str, id: str) -> bool:
        return self._db.execute("SELECT 1 FROM events WHERE entity_key = ? AND id = ?",
                                (entity_key, id)).fetchone() is not None

    def by_seq(self, seq: int) -> Row:
        return _row(self._db.execute(f"{_SELECT} WHERE seq = ?", (seq,)).fetchone())

    def events(self, entity_key: str | None, *, statuses: Iterable[str] | None = None) -> list[Row]:
        """The user's events in insertion order, optionally only those of `statuses`.
        `entity_key` None means every user's."""
        where, args = [], []
        if entity_key is not None:
            where.append("entity_key = ?")
            args.append(entity_key)
        if statuses is not None:
            wanted = tuple(statuses)
            where.append(f"status IN ({', '.join('?' * len(wanted))})")
            args.extend(wanted)
        rows = self._db.execute(f"{_SELECT} WHERE {' AND '.join(where) or '1'} ORDER BY seq", args)
        return [_row(r) for r in rows]

    def by_ids(self, entity_key: str, ids: Iterable[str]) -> list[Row]:
        wanted = set(ids)
        return [r for r in self.events(entity_key) if r.id in wanted]

    def count(self, entity_key: str) -> int:
        return self._db.execute("SELECT count(*) FROM events WHERE entity_key = ?", (entity_key,)).fetchone()[0]

    def promote(self, seq: int) -> None:
        """staged → valid (reinforcement)."""
        self._db.execute("UPDATE events SET status = 'valid' WHERE seq = ? AND status = 'staged'", (seq,))

    def supersede(self, seq: int, by: str | None) -> None:
        """valid → superseded, naming the event that replaced it."""
        self._db.execute("UPDATE events SET status = 'superseded', superseded_by = ? WHERE seq = ? AND status = 'valid'",
                         (by, seq))

    def delete(self, entity_key: str | None, ids: Sequence[str] | None) -> list[Row]:
        """Physically delete the user's events with `ids` (all of them when `ids` is None) and
        return what was deleted. `entity_key` None matches every user.
        Pointers naming a deleted event are cleared (see the module docstring)."""
        where, args = [], []
        if entity_key is not None:
            where.append("entity_key = ?")
            args.append(entity_key)
        gone: list[Row] = []
        if ids is None:
            gone = [_row(r) for r in self._db.execute(f"{_SELECT} WHERE {' AND '.join(where) or '1'}", args)]
        else:
            for chunk in _chunks(list(dict.fromkeys(ids)), 500):
                marks = ", ".join("?" * len(chunk))
                cond = " AND ".join([*where, f"id IN ({marks})"])
                gone += [_row(r) for r in self._db.execute(f"{_SELECT} WHERE {cond}", (*args, *chunk))]
        for row in gone:
            self._db.execute("DELETE FROM events WHERE seq = ?", (row.seq,))
        for row in gone:
            self._db.execute("UPDATE events SET superseded_by = NULL WHERE entity_key = ? AND superseded_by = ?",
                             (row.entity_key, row.id))
        return gone


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
