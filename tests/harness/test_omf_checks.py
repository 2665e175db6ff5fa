"""The OMF checks (suite/omf/checks) pass against a small, right in-memory OMF implementation and fail
against the same implementation broken on purpose, one switch at a time: each misbehaviour shows as
the requirement it breaks. The fake is driven directly (no driver): it is an OmfTarget."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from memconform.suite.omf import model
from memconform.suite.omf.client import OmfRun
from memconform.suite.outcomes import Outcome
from memconform.suite.registry import all_checks
from memconform.suite.runner import run_check

CHECKS = {c.id: c for c in all_checks("omf")}
SEQ = itertools.count()


class Refused(Exception):
    pass


def trigrams(text: str) -> set[str]:
    t = f"  {text.lower()} "
    return {t[i:i + 3] for i in range(len(t) - 2)}


class FakeOmf:
    """A right OMF 1.0 implementation in a few dozen lines; `broken` names switches that break one thing."""

    binding = "cli"

    def __init__(self, broken: set[str] = frozenset()):
        self.broken = set(broken)
        self.rows: dict[str, list[dict[str, Any]]] = {}

    def close(self) -> None: ...

    # -- import / preview -----------------------------------------------------------------------
    def import_document(self, tenant, document, *, include_archived=None, fuzzy_threshold=None, dry_run=False):
        op = "preview" if dry_run else "import"
        sent = f"{op} --tenant-id {tenant}"
        try:
            doc = json.loads(document)
            plan = self._plan(tenant, doc, include_archived is not False, fuzzy_threshold)
        except (ValueError, Refused) as exc:
            return OmfRun(op, sent, ok=False, exit_code=2, error=str(exc))
        rows, dups, skipped = plan
        if dry_run and "preview-store-only" in self.broken:  # the preview looks up stored rows only
            rows, dups, skipped = self._plan(tenant, doc, include_archived is not False, fuzzy_threshold,
                                             within=False)
        if dry_run:
            if "preview-writes" in self.broken:
                self._write(tenant, rows)
            unscoped = sum(1 for r in rows if r["project"] is None)
            by: dict[str, int] = {}
            for r in rows:
                if r["project"] is not None:
                    by[r["project"]] = by.get(r["project"], 0) + 1
            result = {"total": len(doc["memories"]), "to_import": len(rows) + ("preview-miscount" in self.broken),
                      "duplicates": dups, "filtered": skipped, "unscoped": unscoped, "by_project": by}
            return OmfRun(op, sent, ok=True, exit_code=0, result=result)
        self._write(tenant, rows)
        return OmfRun(op, sent, ok=True, exit_code=0,
                      result={"imported": len(rows), "duplicates": dups, "skipped": skipped})

    def _plan(self, tenant, doc, include_archived, fuzzy, within=True):
        if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
            raise Refused("memories")
        if doc.get("omf") != "1.0" and "accept-any-version" not in self.broken:
            raise Refused("omf version")
        parsed = []
        for it in doc["memories"]:
            if not isinstance(it, dict) or not isinstance(it.get("content"), str):
                raise Refused("content")
            if not it["content"].strip() and "blank-ok" not in self.broken:
                raise Refused("blank content")
            tags = it.get("tags", [])
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise Refused("tags")
            parsed.append(self._row(doc, it))
        rows, dups, skipped = [], 0, 0
        existing = list(self.rows.get(tenant, []) if "dedup-any-tenant" not in self.broken
                        else (r for rows in self.rows.values() for r in rows))

        def key(r):  # exact dedup by a set: the large-document check sends 10,000 items
            return r["content"] if "dedup-global" in self.broken else (r["project"], r["content"])

        seen = {key(r) for r in existing}
        for it, row in zip(doc["memories"], parsed):
            if not include_archived and it.get("status") in ("archived", "expired"):
                skipped += 1
                continue
            scope = [] if fuzzy is None else [r for r in existing
                                              if "dedup-global" in self.broken or r["project"] == row["project"]]
            if key(row) in seen or any(len(trigrams(r["content"]) & trigrams(row["content"])) / len(
                    trigrams(r["content"]) | trigrams(row["content"])) >= fuzzy for r in scope):
                dups += 1
                continue
            rows.append(row)
            if within:
                existing.append(row)
                seen.add(key(row))
        return rows, dups, skipped

    def _row(self, doc, it):
        memd = model.memd_extension(it) or {}
        trusted = model.is_trusted(doc, it) or "trust-any" in self.broken or (
            "v-truthy" in self.broken and (doc.get("source") or {}).get("app") == "memd" and memd.get("v") == 1)
        lc = dict(model.DEFAULT_LIFECYCLE, supersedes=None, superseded_by=None, lifecycle_updated_at_ms=1)
        raw = memd.get("lifecycle")
        if trusted and raw is not None:
            if not isinstance(raw, dict):
                raise Refused("lifecycle not an object")
            for k, vocab in (("status", model.STATUSES), ("tier", model.TIERS)):
                v = raw.get(k)
                if v is not None and (not isinstance(v, str) or v not in vocab) and "lenient" not in self.broken:
                    raise Refused(k)
                if isinstance(v, str) and v in vocab:
                    lc[k] = v
            for k in model.MS_FIELDS:
                v = raw.get(k)
                if v is not None and not (isinstance(v, int) and not isinstance(v, bool)):
                    raise Refused(k)
                if v is not None:
                    lc[k] = v
            for k in ("supersedes", "superseded_by"):
                lc[k] = raw.get(k) if "dangling-edges" in self.broken else None
        if "top-status-sets" in self.broken and it.get("status") in model.STATUSES:
            lc["status"] = it["status"]
        project = memd["project_id"] if "project_id" in memd else (
            None if "ignore-category" in self.broken else it.get("category"))
        ct = memd.get("chunk_type")
        im = memd.get("ingestion_mode")
        tags = sorted(set(it.get("tags", []))) if "tags-sorted" in self.broken else list(it.get("tags", []))
        return {"content": it["content"], "tags": tags, "project": project, "lc": lc,
                "chunk_type": ct if ct in model.CHUNK_TYPES or "keep-unknown-type" in self.broken and ct else "doc",
                "mode": im if im in model.INGESTION_MODES else "document",
                "source_id": memd.get("chunk_id"), "edge": raw.get("supersedes") if trusted and isinstance(raw, dict) else None}

    def _write(self, tenant, rows):
        store = self.rows.setdefault(tenant, [])
        ids = {}
        for r in rows:
            r = dict(r, lc=dict(r["lc"]), seq=next(SEQ))
            r["chunk_id"] = r["source_id"] if "keep-chunk-id" in self.broken and r["source_id"] else model.uuid7()
            ids[r["source_id"]] = r
            store.append(r)
        if "no-edges" in self.broken:
            return
        for r in ids.values():
            old = ids.get(r["edge"]) if r["edge"] else None
            if old is not None and old is not r:
                r["lc"]["supersedes"], old["lc"]["superseded_by"] = old["chunk_id"], r["chunk_id"]

    # -- export --------------------------------------------------------------------------------
    def export(self, tenant, *, project=None, include_history=None, include_superseded=None, include_expired=None):
        history = include_history is True or "history-default" in self.broken or (
            project is not None and "project-history" in self.broken)
        superseded, expired = include_superseded is not False, include_expired is not False
        now = model.now_ms()
        out = []
        order = (lambda r: r["lc"]["lifecycle_updated_at_ms"]) if "order-by-lifecycle" in self.broken else (
            lambda r: r["seq"])
        for r in sorted(self.rows.get(tenant, []), key=order, reverse="reverse-order" in self.broken):
            lc = r["lc"]
            if lc["status"] in ("deleted", "error") and "export-deleted" not in self.broken:
                continue
            if (lc["tier"] == "history" and not history) or (lc["status"] == "superseded" and not superseded):
                continue
            lapsed = lc["expires_at_ms"] is not None and lc["expires_at_ms"] < now and "no-lazy-expiry" not in self.broken
            if not expired and (lc["status"] == "expired" or lapsed):
                continue
            if project is not None and r["project"] != project:
                continue
            it = {"content": r["content"], "tags": r["tags"]}
            if lc["status"] in ("superseded", "expired"):
                it["status"] = lc["status"]
            it["extensions"] = {"memd": {"v": 1, "chunk_id": r["chunk_id"], "project_id": r["project"],
                                         "chunk_type": r["chunk_type"], "ingestion_mode": r["mode"], "lifecycle": lc}}
            out.append(it)
        doc = {"omf": "1.0", "exported_at": "2026-04-18T00:00:00.5Z" if "bad-exported-at" in self.broken
               else model.exported_at(), "source": {"app": "memd"}, "memories": out}
        return OmfRun("export", f"export --tenant-id {tenant}", ok=True, exit_code=0, document=json.dumps(doc))


def run(check_id: str, broken: set[str] = frozenset()):
    return run_check(CHECKS[check_id], "1.0", "cli", lambda: FakeOmf(broken), None)


@pytest.mark.parametrize("check_id", sorted(c for c, k in CHECKS.items() if "cli" in k.bindings))
def test_each_live_check_passes_on_a_right_implementation(check_id):
    result = run(check_id)
    assert result.outcome is Outcome.PASSED, (result.reason, [f.message for f in result.findings])


BREAKS = [
    ("accept-any-version", "omf/validation/omf-version", "omf/omf-version-gated"),
    ("blank-ok", "omf/validation/content-not-blank", "omf/content-not-blank"),
    ("trust-any", "omf/trust/untrusted-defaults", "omf/untrusted-defaults"),
    ("trust-any", "omf/trust/untrusted-lifecycle-not-parsed", "omf/untrusted-lifecycle-not-parsed"),
    ("lenient", "omf/fail-closed/vocabulary", "omf/fail-closed-vocabulary"),
    ("lenient", "omf/preview/fail-closed", "omf/preview-fail-closed"),
    ("top-status-sets", "omf/trust/status-informational", "omf/status-informational"),
    ("keep-unknown-type", "omf/trust/unknown-type-mode", "omf/chunk-type-import"),
    ("ignore-category", "omf/import/project-resolution", "omf/category-fallback-project"),
    ("ignore-category", "omf/trust/untrusted-fields-flow", "omf/category-fallback-project"),
    ("keep-chunk-id", "omf/import/fresh-chunk-id", "omf/fresh-chunk-id"),
    ("dedup-global", "omf/import/dedup-scopes", "omf/dedup-scope-project"),
    ("preview-writes", "omf/preview/no-write", "omf/preview-no-write"),
    ("preview-miscount", "omf/preview/matches-import", "omf/preview-fields"),
    ("no-edges", "omf/supersession/replayed", "omf/supersedes-replayed"),
    ("dangling-edges", "omf/supersession/orphans", "omf/orphan-edge-dropped"),
    ("export-deleted", "omf/export/exclusions", "omf/export-never-deleted-error"),
    ("export-deleted", "omf/export/shape", "omf/export-never-deleted-error"),
    ("history-default", "omf/export/exclusions", "omf/export-include-history"),
    ("no-lazy-expiry", "omf/export/exclusions", "omf/export-lazy-expiry"),
    ("reverse-order", "omf/export/order", "omf/export-order"),
    ("bad-exported-at", "omf/export/shape", "omf/exported-at-format"),
    # the blind red team's round 13 misses, each now shown by its own rule
    ("v-truthy", "omf/trust/untrusted-defaults", "omf/memd-v-gated"),
    ("tags-sorted", "omf/trust/untrusted-fields-flow", "omf/tags-verbatim"),
    ("project-history", "omf/export/exclusions", "omf/export-include-history"),
    ("order-by-lifecycle", "omf/export/order", "omf/export-order"),
    ("dedup-any-tenant", "omf/import/dedup-tenant", "omf/dedup-scope-tenant"),
    ("dedup-any-tenant", "omf/fail-closed/self-roundtrip", "omf/dedup-scope-tenant"),
]


def test_a_preview_that_writes_nothing_and_sees_stored_rows_only_is_a_reading():
    # "walks the same … path … but never writes": the document's repeat of its first item counted to_import
    # by the preview, a duplicate by the import (variant omf-preview-stored-rows-only; rounds 13 and 31)
    result = run("omf/preview/matches-import", {"preview-store-only"})
    assert result.outcome is Outcome.PASSED, (result.reason, [f.message for f in result.findings])
    assert "never writes" in (result.reason or ""), result.reason


@pytest.mark.parametrize("switch,check_id,rid", BREAKS, ids=[f"{s}-{c}" for s, c, _ in BREAKS])
def test_each_break_fails_its_check(switch, check_id, rid):
    result = run(check_id, {switch})
    assert result.outcome is Outcome.FAILED, (result.reason, [f.message for f in result.findings])
    assert rid in {f.requirement for f in result.findings}
    for f in result.findings:  # every message says what was sent, what came back and what the spec asks
        assert "The spec: omf/" in f.message
