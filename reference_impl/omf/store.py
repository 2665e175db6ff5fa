"""The OMF reference store: one sqlite table of chunks, partitioned by tenant.

A file (`--db PATH`) is shared by successive CLI invocations; ":memory:" serves one process (the
HTTP server). Every method runs under one lock, so the HTTP threadpool can share a store.
Writes happen only inside `transaction()`, which the engine commits or rolls back as a whole: an
import that fails validation, and every preview, leave the store exactly as it was.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    created INTEGER PRIMARY KEY AUTOINCREMENT,  -- monotonic insertion order = export order
    chunk_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    project_id TEXT,
    content TEXT NOT NULL,
    canonical TEXT NOT NULL,                    -- whitespace-collapsed, casefolded: the dedup key
    tags TEXT NOT NULL DEFAULT '[]',            -- JSON array of strings
    category TEXT,
    chunk_type TEXT NOT NULL,
    ingestion_mode TEXT NOT NULL,
    status TEXT NOT NULL,
    tier TEXT NOT NULL,
    supersedes TEXT,
    superseded_by TEXT,
    expires_at_ms INTEGER,
    review_after_ms INTEGER,
    lifecycle_updated_at_ms INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_dedup ON chunks (tenant, canonical);
CREATE INDEX IF NOT EXISTS chunks_id ON chunks (tenant, chunk_id);
"""

COLUMNS = ("chunk_id", "tenant", "project_id", "content", "canonical", "tags", "category", "chunk_type",
           "ingestion_mode", "status", "tier", "supersedes", "superseded_by", "expires_at_ms",
           "review_after_ms", "lifecycle_updated_at_ms", "created_at_ms")

_INSERT = f"INSERT INTO chunks ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


class OmfStore:
    def __init__(self, db: str = ":memory:"):
        self.db = db
        self._lock = threading.RLock()
        # isolation_level None: transactions are explicit (BEGIN/COMMIT/ROLLBACK in `transaction`).
        self._conn = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Hold the lock and an open transaction; the caller decides with `commit()` or
        `rollback()` (anything left open is rolled back, so an exception writes nothing)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            finally:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")

    def commit(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("COMMIT")

    def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    # -- writes (inside a transaction) ------------------------------------------------------------

    def insert(self, row: dict[str, Any]) -> None:
        values = [row.get(c) for c in COLUMNS]
        values[COLUMNS.index("tags")] = json.dumps(row.get("tags") or [], ensure_ascii=False)
        self._conn.execute(_INSERT, values)

    def link_supersedes(self, tenant: str, new_id: str, old_id: str) -> None:
        """The `atomic_supersede` of the spec: both pointers of one edge, in the caller's transaction."""
        self._conn.execute("UPDATE chunks SET supersedes = ? WHERE tenant = ? AND chunk_id = ?",
                           (old_id, tenant, new_id))
        self._conn.execute("UPDATE chunks SET superseded_by = ? WHERE tenant = ? AND chunk_id = ?",
                           (new_id, tenant, old_id))

    def clear_supersedes(self, tenant: str, chunk_id: str) -> None:
        """A row's own supersedes pointer cleared: only the fault omf-supersede-chain-clobber does."""
        self._conn.execute("UPDATE chunks SET supersedes = NULL WHERE tenant = ? AND chunk_id = ?", (tenant, chunk_id))

    def mark_superseded(self, tenant: str, chunk_id: str) -> None:
        """The older side of an edge marked superseded (policy supersede_marks_status)."""
        self._conn.execute("UPDATE chunks SET status = 'superseded' WHERE tenant = ? AND chunk_id = ?",
                           (tenant, chunk_id))

    def canonical_rows_in_scope(self, tenant: str, project_id: str | None) -> Iterator[tuple[str, str]]:
        """(chunk_id, canonical) of the scope's rows in the order they were written."""
        cur = self._conn.execute("SELECT chunk_id, canonical FROM chunks WHERE tenant = ? AND project_id IS ? "
                                 "AND status != 'deleted' ORDER BY rowid", (tenant, project_id))
        yield from ((chunk_id, canonical) for chunk_id, canonical in cur)

    def set_supersedes_raw(self, tenant: str, new_id: str, value: str) -> None:
        """A supersedes pointer with no row behind it: the reference drops such an edge
        (omf/orphan-edge-dropped); only the fault omf-dangling-edges (faulty.py) writes one."""
        self._conn.execute("UPDATE chunks SET supersedes = ? WHERE tenant = ? AND chunk_id = ?",
                           (value, tenant, new_id))

    # -- reads -------------------------------------------------------------------------------------

    def has_canonical(self, tenant: str | None, canonical: str, project_id: str | None, *,
                      any_project: bool = False) -> bool:
        """An exact-canonical duplicate in the scope: that project, or (project None) the
        NULL-project rows only. `IS` compares NULL with NULL, so one query serves both scopes.
        `tenant` None looks in every tenant's rows: the reference never asks so (dedup is the importing
        tenant's, omf/dedup-scope-tenant); only the fault omf-dedup-across-tenants (faulty.py) does."""
        if tenant is None:
            sql, args = ("SELECT 1 FROM chunks WHERE canonical = ? AND project_id IS ? AND status != 'deleted' LIMIT 1",
                         (canonical, project_id))
        elif any_project:
            sql, args = ("SELECT 1 FROM chunks WHERE tenant = ? AND canonical = ? AND status != 'deleted' LIMIT 1",
                         (tenant, canonical))
        else:
            sql, args = ("SELECT 1 FROM chunks WHERE tenant = ? AND canonical = ? AND project_id IS ? "
                         "AND status != 'deleted' LIMIT 1", (tenant, canonical, project_id))
        return self._conn.execute(sql, args).fetchone() is not None

    def canonicals_in_scope(self, tenant: str, project_id: str | None, *, any_project: bool = False) -> Iterator[str]:
        if not any_project:
            yield from (canonical for _, canonical in self.canonical_rows_in_scope(tenant, project_id))
            return
        for (canonical,) in self._conn.execute("SELECT canonical FROM chunks WHERE tenant = ? AND status != 'deleted'",
                                               (tenant,)):
            yield canonical

    def rows_for_export(self, tenant: str, project_id: str | None, *, include_history: bool) -> Iterator[sqlite3.Row]:
        """The tenant's rows in insertion order (the `list_for_export` filter: tier History only
        when asked). A cursor, so an export of any size streams."""
        sql = "SELECT * FROM chunks WHERE tenant = ?"
        args: list[Any] = [tenant]
        if project_id is not None:
            sql += " AND project_id = ?"
            args.append(project_id)
        if not include_history:
            sql += " AND tier != 'history'"
        sql += " ORDER BY created"
        with self._lock:
            rows = self._conn.execute(sql, args)
            yield from rows

    def get(self, tenant: str, chunk_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT * FROM chunks WHERE tenant = ? AND chunk_id = ?",
                                     (tenant, chunk_id)).fetchone()
        return None if row is None else {**dict(row), "tags": json.loads(row["tags"])}

    def all_rows(self, tenant: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM chunks WHERE tenant = ? ORDER BY created", (tenant,)).fetchall()
        return [{**dict(r), "tags": json.loads(r["tags"])} for r in rows]

    def count(self, tenant: str | None = None) -> int:
        with self._lock:
            if tenant is None:
                return self._conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            return self._conn.execute("SELECT COUNT(*) FROM chunks WHERE tenant = ?", (tenant,)).fetchone()[0]
