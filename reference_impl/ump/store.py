"""The sqlite store behind the reference UMP server (`service.UmpService`).

One table of records, partitioned by runtime version: each record is kept as its canonical JSON
(RFC 8785) plus the columns recall filters and ranks on, all indexed. An FTS5 table over
``body.text`` (rowid = the record's rowid) finds the records a query matches; the store also keeps
each term's document frequency and the collection's size (`terms`, `text_stats`, tokenized as
`ranking.tokens`), so BM25 is computed for the candidates alone (FTS5's own bm25() counts every
matching document of each query term first, which costs milliseconds for common words at 100k
records). Feedback and forget reasons go to tables of their own.

The store knows nothing of visibility, tokens or faults: the service builds those conditions and
passes them in as SQL fragments over the alias ``r`` (columns as in ``_SCHEMA``).
Not thread-safe by itself: the service holds one lock around every use.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import blake3

from memconform.reference_impl.ump import ranking

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    rowid INTEGER PRIMARY KEY,
    version TEXT NOT NULL,
    id TEXT NOT NULL,
    owner TEXT NOT NULL,
    kind TEXT NOT NULL,
    visibility TEXT NOT NULL,
    status TEXT NOT NULL,
    scope_project TEXT,
    scope_agent TEXT,
    scope_user TEXT,
    scope_session TEXT,
    created INTEGER NOT NULL,      -- epoch microseconds, as all times here
    valid_from INTEGER NOT NULL,
    valid_to INTEGER,
    expires INTEGER,
    salience REAL,
    depth INTEGER NOT NULL DEFAULT 0,
    superseded INTEGER NOT NULL DEFAULT 0,
    text_hash TEXT NOT NULL,
    json TEXT NOT NULL,
    UNIQUE (version, id)
);
CREATE INDEX IF NOT EXISTS records_owner ON records (version, owner, status);
CREATE INDEX IF NOT EXISTS records_visibility ON records (version, visibility, status);
CREATE INDEX IF NOT EXISTS records_created ON records (version, created);
CREATE INDEX IF NOT EXISTS records_merge ON records (version, owner, kind, text_hash);
CREATE INDEX IF NOT EXISTS records_expires ON records (expires) WHERE expires IS NOT NULL;
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS text_stats (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS feedback (
    n INTEGER PRIMARY KEY,
    version TEXT NOT NULL,
    record_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    session TEXT,
    actor TEXT,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS feedback_record ON feedback (version, record_id);
CREATE TABLE IF NOT EXISTS forgotten (
    n INTEGER PRIMARY KEY,
    version TEXT NOT NULL,
    record_id TEXT NOT NULL,
    reason TEXT,
    actor TEXT,
    hard INTEGER NOT NULL,
    at TEXT NOT NULL
);
"""

#: Columns of `records` that recall reads to rank a candidate without parsing its JSON.
RANK_COLUMNS = ("rowid", "id", "created", "salience", "depth", "scope_project", "scope_agent",
                "scope_user", "scope_session")

_DURATION = re.compile(
    r"P(?!$)(?:(?P<Y>\d+(?:[.,]\d+)?)Y)?(?:(?P<M>\d+(?:[.,]\d+)?)M)?(?:(?P<W>\d+(?:[.,]\d+)?)W)?"
    r"(?:(?P<D>\d+(?:[.,]\d+)?)D)?(?:T(?=\d)(?:(?P<h>\d+(?:[.,]\d+)?)H)?(?:(?P<m>\d+(?:[.,]\d+)?)M)?"
    r"(?:(?P<s>\d+(?:[.,]\d+)?)S)?)?")
_DURATION_SECONDS = {"Y": 365 * 86400.0, "M": 30 * 86400.0, "W": 7 * 86400.0, "D": 86400.0,
                     "h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(text: Any) -> int | None:
    """Microseconds in an ISO-8601 duration (``P365D``, ``PT1S``, ``P1Y2M``, ``P2W``), or None when the
    text is not one. A year counts 365 days, a month 30."""
    if not isinstance(text, str) or len(text) > 64:
        return None
    m = _DURATION.fullmatch(text.strip())
    if not m or not any(m.groupdict().values()):
        return None
    total = 0.0
    for unit, value in m.groupdict().items():
        if value:
            total += float(value.replace(",", ".")) * _DURATION_SECONDS[unit]
    if total > 1e13:  # beyond ~300 000 years: as good as forever
        return 1 << 62
    return int(total * 1_000_000)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def parse_time(value: Any) -> int | None:
    """Epoch microseconds (exact) of an RFC 3339 date-time, or None."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip().upper().replace("Z", "+00:00")
    text = re.sub(r":60(?=[.+\-]|$)", ":59", text)  # a leap second counts as the second before
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return None
    return to_us(dt)


def to_us(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - _EPOCH) // _MICROSECOND


def format_time(dt: datetime) -> str:
    """RFC 3339 in UTC with microseconds (what `parse_time` reads back exactly)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond:06d}Z"


def text_hash(text: str) -> str:
    return blake3.blake3(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Stored:
    rowid: int
    version: str
    record: dict[str, Any]
    text: str = ""  # the stored JSON text


class Store:
    def __init__(self, path: str = ":memory:"):
        self.path = path
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        if path != ":memory:":
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.executescript(_SCHEMA)
        stats = dict(self.db.execute("SELECT k, v FROM text_stats").fetchall())
        self.docs = int(stats.get("docs", 0))
        self.tokens = int(stats.get("tokens", 0))

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside happen together or not at all."""
        if self.db.in_transaction:  # nested: the outer transaction decides
            yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            self.reload_stats()
            raise
        else:
            self.db.execute("COMMIT")

    # -- records ------------------------------------------------------------------------------

    @staticmethod
    def _columns(rec: Mapping[str, Any], depth: int) -> dict[str, Any]:
        scope = rec.get("scope") or {}
        time = rec.get("time") or {}
        lifecycle = rec.get("lifecycle") or {}
        consent = rec.get("consent") or {}
        created = parse_time(time.get("created"))
        if created is None:  # validated records always have one; be safe anyway
            created = 0
        valid_from = parse_time(time.get("valid_from"))
        valid_to = parse_time(time.get("valid_to"))
        retention = parse_duration(consent.get("retention")) if isinstance(consent, Mapping) else None
        salience = lifecycle.get("salience") if isinstance(lifecycle, Mapping) else None
        text = (rec.get("body") or {}).get("text", "")
        return {
            "owner": scope.get("owner", ""),
            "kind": rec.get("kind", ""),
            "visibility": scope.get("visibility", "private"),
            "status": (lifecycle.get("status") if isinstance(lifecycle, Mapping) else None) or "active",
            "scope_project": scope.get("project"),
            "scope_agent": scope.get("agent"),
            "scope_user": scope.get("user"),
            "scope_session": scope.get("session"),
            "created": created,
            "valid_from": created if valid_from is None else valid_from,
            "valid_to": valid_to,
            "expires": None if retention is None else created + retention,
            "salience": float(salience) if isinstance(salience, (int, float)) and not isinstance(salience, bool) else None,
            "depth": depth,
            "superseded": 1 if rec.get("superseded_by") else 0,
            "text_hash": text_hash(text if isinstance(text, str) else ""),
            # Storage needs exact round-tripping, not JCS: the hash is computed on the record,
            # never on these bytes, and plain json.dumps is several times faster.
            "json": json.dumps(rec, ensure_ascii=False, separators=(",", ":"), allow_nan=False),
        }

    #: consent.retention counted from when the record was stored, not from its time.created (variant
    #: retention-from-receipt; the service sets it from its policy)
    retention_from_receipt = False

    def insert(self, version: str, rec: Mapping[str, Any], depth: int = 0, received_us: int | None = None) -> int:
        cols = self._columns(rec, depth)
        if self.retention_from_receipt and cols["expires"] is not None and received_us is not None:
            cols["expires"] = received_us + (cols["expires"] - cols["created"])
        names = ["version", "id", *cols]
        cur = self.db.execute(
            f"INSERT INTO records ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [version, rec["id"], *cols.values()])
        rowid = int(cur.lastrowid)
        self._index(rowid, rec["body"]["text"])
        return rowid

    def update(self, rowid: int, rec: Mapping[str, Any]) -> None:
        old = self.db.execute("SELECT depth, text_hash FROM records WHERE rowid = ?", (rowid,)).fetchone()
        cols = self._columns(rec, old["depth"] if old else 0)
        if self.retention_from_receipt:
            cols.pop("expires")  # counted from the record's receipt, which an update does not move
        self.db.execute(f"UPDATE records SET id = ?, {', '.join(f'{k} = ?' for k in cols)} WHERE rowid = ?",
                        [rec["id"], *cols.values(), rowid])
        if old is not None and old["text_hash"] != cols["text_hash"]:
            self._unindex(rowid)
            self._index(rowid, rec["body"]["text"])

    def delete(self, rowid: int) -> None:
        self._unindex(rowid)
        self.db.execute("DELETE FROM records WHERE rowid = ?", (rowid,))

    # -- the text index -------------------------------------------------------------------------

    def _index(self, rowid: int, text: str) -> None:
        self.db.execute("INSERT INTO records_fts (rowid, text) VALUES (?, ?)", (rowid, text))
        toks = ranking.tokens(text)
        self.db.executemany("INSERT INTO terms (term, df) VALUES (?, 1) ON CONFLICT (term) DO UPDATE SET df = df + 1",
                            [(t,) for t in set(toks)])
        self._stats(1, len(toks))

    def _unindex(self, rowid: int) -> None:
        row = self.db.execute("SELECT text FROM records_fts WHERE rowid = ?", (rowid,)).fetchone()
        if row is None:
            return
        toks = ranking.tokens(row[0])
        self.db.execute("DELETE FROM records_fts WHERE rowid = ?", (rowid,))
        self.db.executemany("UPDATE terms SET df = df - 1 WHERE term = ?", [(t,) for t in set(toks)])
        self.db.execute("DELETE FROM terms WHERE df <= 0 AND term IN (SELECT value FROM json_each(?))",
                        (json.dumps(sorted(set(toks))),))
        self._stats(-1, -len(toks))

    def _stats(self, docs: int, tokens: int) -> None:
        self.docs += docs
        self.tokens += tokens
        self.db.executemany("INSERT INTO text_stats (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v",
                            [("docs", self.docs), ("tokens", self.tokens)])

    def reload_stats(self) -> None:
        """After a rolled-back transaction: the counters as the database has them."""
        stats = dict(self.db.execute("SELECT k, v FROM text_stats").fetchall())
        self.docs = int(stats.get("docs", 0))
        self.tokens = int(stats.get("tokens", 0))

    def document_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        rows = self.db.execute(f"SELECT term, df FROM terms WHERE term IN ({', '.join('?' * len(terms))})", list(terms))
        return {t: int(df) for t, df in rows}

    def get(self, version: str, record_id: str) -> Stored | None:
        row = self.db.execute("SELECT rowid, version, json FROM records WHERE version = ? AND id = ?",
                              (version, record_id)).fetchone()
        return None if row is None else Stored(row["rowid"], row["version"], json.loads(row["json"]), row["json"])

    def by_rowid(self, rowid: int) -> Stored | None:
        row = self.db.execute("SELECT rowid, version, json FROM records WHERE rowid = ?", (rowid,)).fetchone()
        return None if row is None else Stored(row["rowid"], row["version"], json.loads(row["json"]), row["json"])

    def many(self, rowids: Sequence[int]) -> dict[int, Stored]:
        out: dict[int, Stored] = {}
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start:start + 500])
            rows = self.db.execute(
                f"SELECT rowid, version, json FROM records WHERE rowid IN ({', '.join('?' * len(chunk))})", chunk)
            for row in rows:
                out[row["rowid"]] = Stored(row["rowid"], row["version"], json.loads(row["json"]), row["json"])
        return out

    def depth(self, version: str, record_id: str) -> int | None:
        row = self.db.execute("SELECT depth FROM records WHERE version = ? AND id = ?",
                              (version, record_id)).fetchone()
        return None if row is None else int(row["depth"])

    def max_rowid(self, version: str) -> int | None:
        row = self.db.execute("SELECT max(rowid) AS m FROM records WHERE version = ?", (version,)).fetchone()
        return None if row is None else row["m"]

    def merge_target(self, version: str, owner: str, kind: str, text: str) -> Stored | None:
        """An active, current record of this owner and kind with exactly this body text."""
        rows = self.db.execute(
            "SELECT rowid, version, json FROM records WHERE version = ? AND owner = ? AND kind = ? "
            "AND text_hash = ? AND status = 'active' AND superseded = 0 AND valid_to IS NULL "
            "ORDER BY rowid", (version, owner, kind, text_hash(text)))
        for row in rows:
            rec = json.loads(row["json"])
            if rec.get("body", {}).get("text") == text:
                return Stored(row["rowid"], row["version"], rec, row["json"])
        return None

    def expired(self, now: int) -> list[Stored]:
        rows = self.db.execute(
            "SELECT rowid, version, json FROM records WHERE expires IS NOT NULL AND expires <= ? "
            "AND status != 'tombstoned' ORDER BY rowid", (now,)).fetchall()
        return [Stored(r["rowid"], r["version"], json.loads(r["json"]), r["json"]) for r in rows]

    def visible(self, rowid: int, where: str, params: Sequence[Any]) -> bool:
        row = self.db.execute(f"SELECT 1 FROM records r WHERE r.rowid = ? AND ({where})",
                              [rowid, *params]).fetchone()
        return row is not None

    # -- recall ---------------------------------------------------------------------------

    def matches(self, fts: str, where: str, params: Sequence[Any], limit: int, *, newest: bool = False) -> list[sqlite3.Row]:
        """Records matching the FTS5 expression that pass `where`, with the rank columns and the
        body text: all of them up to `limit` (in rowid order), or the `limit` newest (newest=True)."""
        cols = ", ".join(f"r.{c}" for c in RANK_COLUMNS)
        order = "ORDER BY records_fts.rowid DESC " if newest else ""
        return self.db.execute(
            f"SELECT {cols}, records_fts.text AS text FROM records_fts CROSS JOIN records r "
            f"ON r.rowid = records_fts.rowid WHERE records_fts MATCH ? AND ({where}) "
            f"{order}LIMIT ?", [fts, *params, limit]).fetchall()

    def best(self, score_sql: str, score_params: Sequence[Any], where: str, params: Sequence[Any],
             limit: int, window: int) -> list[sqlite3.Row]:
        """Among the `window` most recently created records that pass `where`, the `limit` best by
        `score_sql` (ties by id), with the rank columns."""
        cols = ", ".join(f"r.{c}" for c in RANK_COLUMNS)
        return self.db.execute(
            f"SELECT {cols}, {score_sql} AS score FROM (SELECT * FROM records r WHERE ({where}) "
            f"ORDER BY r.created DESC LIMIT ?) r ORDER BY score DESC, r.id LIMIT ?",
            [*score_params, *params, window, limit]).fetchall()

    # -- side tables ------------------------------------------------------------------------

    def add_feedback(self, version: str, record_id: str, outcome: str, session: str | None,
                     actor: str | None, at: str) -> None:
        self.db.execute("INSERT INTO feedback (version, record_id, outcome, session, actor, at) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (version, record_id, outcome, session, actor, at))

    def feedback(self, version: str, record_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT outcome, session, actor, at FROM feedback WHERE version = ? AND "
                               "record_id = ? ORDER BY n", (version, record_id))
        return [dict(r) for r in rows]

    def log_forget(self, version: str, record_id: str, reason: str | None, actor: str | None,
                   hard: bool, at: str) -> None:
        self.db.execute("INSERT INTO forgotten (version, record_id, reason, actor, hard, at) "
                        "VALUES (?, ?, ?, ?, ?, ?)", (version, record_id, reason, actor, int(hard), at))

    def count(self, version: str | None = None) -> int:
        if version is None:
            return int(self.db.execute("SELECT count(*) FROM records").fetchone()[0])
        return int(self.db.execute("SELECT count(*) FROM records WHERE version = ?", (version,)).fetchone()[0])
