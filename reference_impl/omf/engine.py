"""OMF 1.0 export, import and preview (../shared/specs/omf-1.0.md, docs/omf.md).

Import iterates `document.memories` once, inside one store transaction: each item is validated,
resolved (project, trust gate, lifecycle), filtered, deduplicated against the store *and* the items
already written from this document, and written (pass 1); then every `supersedes` edge is replayed
through the source→target id map (pass 2). A ValidationError anywhere rolls the whole transaction
back, so an invalid document writes nothing. Preview runs exactly the same code and always rolls
back: its counts are what the import would do, by construction.

This module is the reference reading only. Where the text leaves a choice open the engine asks its
policy (policy.py; variants.py reads choices the other way); the deliberate faults are made apart
(faults.py's table: a decision point set to a value the text forbids, or an operation of this class
wrapped by a small wrong one in faulty.py), so nothing below tests for a fault.

Memory text is untrusted data: it is stored and exported verbatim and never interpreted.
"""

from __future__ import annotations

import datetime as _dt
import json
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from memconform.reference_impl.omf.store import OmfStore
from memconform.suite.jsonvalue import a_json_type
from memconform.suite.omf.vocabulary import (  # the spec's vocabularies, as the judge reads them
    CHUNK_TYPES, INGESTION_MODES, MEMD_EXT_VERSION, MS_FIELDS, STATUSES, TIERS, VERSION,
)

MEMD_APP = "memd"
ARCHIVAL_STATUSES = ("archived", "expired")  # top-level item status skipped when include_archived=false
_I64 = (-(1 << 63), (1 << 63) - 1)  # memd's *_ms are i64: wider integers fail like any non-integer


class ValidationError(Exception):
    """A document (or request) that fails validation: nothing is written."""


class LifecycleError(ValidationError):
    """A trusted item's malformed lifecycle block (extract_lifecycle_strict): found while the items
    are walked, so an importer that writes item by item may already have written earlier ones."""


def canonical(content: str, form: str = "folded") -> str:
    """The dedup form: whitespace collapsed, casefolded (or, `verbatim`, the text as given; `trimmed`,
    the text without leading and trailing white space)."""
    if form == "verbatim":
        return content
    if form == "trimmed":
        return content.strip()
    return " ".join(content.split()).casefold()


def trigrams(text: str, kind: str = "characters") -> frozenset[str]:
    if kind == "words":  # pg_trgm: each word padded with two blanks before and one after
        return frozenset(g for word in text.split() for padded in ("  " + word + " ",)
                         for g in (padded[i:i + 3] for i in range(len(padded) - 2)))
    if len(text) < 3:
        return frozenset((text,)) if text else frozenset()
    return frozenset(text[i:i + 3] for i in range(len(text) - 2))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def new_chunk_id(now_ms: int) -> str:
    """A UUIDv7-shaped id: 48-bit ms timestamp, version 7, variant 10, random rest."""
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = ((now_ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64
             | 0b10 << 62 | (rand & ((1 << 62) - 1)))
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def rfc3339(ms: int) -> str | None:
    """YYYY-MM-DDTHH:MM:SSZ, seconds precision; None for an instant no calendar date can show
    (a stored i64 far outside years 1..9999), so the informational field is left out instead."""
    try:
        return _dt.datetime.fromtimestamp(ms // 1000, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, ValueError, OSError):
        return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class ImportResult:
    imported: int = 0
    duplicates: int = 0
    skipped: int = 0
    # preview's extra counters
    total: int = 0
    unscoped: int = 0
    by_project: dict[str, int] = field(default_factory=dict)

    def as_import(self) -> dict[str, int]:
        return {"imported": self.imported, "duplicates": self.duplicates, "skipped": self.skipped}

    def as_preview(self) -> dict[str, Any]:
        return {"total": self.total, "to_import": self.imported, "duplicates": self.duplicates,
                "filtered": self.skipped, "unscoped": self.unscoped, "by_project": dict(self.by_project)}


@dataclass
class _Resolved:
    """What one item becomes (validated; nothing copied that is not needed)."""
    content: str
    canonical: str
    project_id: str | None
    trusted: bool
    lifecycle: dict[str, Any]
    source_id: str | None
    tags: list[str]
    category: str | None
    chunk_type: str
    ingestion_mode: str


@dataclass
class _Pass:
    """The state of one import (or preview) walk over a document."""
    tenant: str
    source_trusted: bool
    now_ms: int
    include_archived: bool
    fuzzy_threshold: float | None
    result: ImportResult
    preview: bool
    any_project: bool
    id_map: dict[str, str] = field(default_factory=dict)          # source chunk_id → target (imported only)
    pending: list[dict[str, Any]] = field(default_factory=list)   # rows held back until the walk ends
    edges: list[tuple[str, str]] = field(default_factory=list)    # (new target id, source id it supersedes)
    fuzzy_cache: dict[Any, list[frozenset[str]]] = field(default_factory=dict)
    duplicate_of: dict[str, str] = field(default_factory=dict)    # a duplicate's source chunk_id → the row it matched

    def scope(self, project_id: str | None) -> Any:
        # "*" never collides with a project name: the cache keys are None, a str, or this tuple.
        return ("*",) if self.any_project else project_id


class OmfEngine:
    """Export / import / preview over an `OmfStore`. `clock()` returns epoch milliseconds
    (injectable, for lazy expiry and the exported_at stamp). `variants` and `fault` (one `omf-…`
    name) are applied here, once: the variants and the fault's overrides to the policy, the fault's
    wraps to this object's operations (reference_impl/faults.py)."""

    def __init__(self, store: OmfStore, *, fault: str | None = None, clock: Callable[[], int] | None = None,
                 variants: tuple[str, ...] = ()):
        # Imported here: the fault table wraps this module's operations, so it imports this module.
        from memconform.reference_impl.faults import deviate, install_wraps
        from memconform.reference_impl.omf.policy import OmfPolicy

        self.store = store
        self.clock = clock or (lambda: time.time_ns() // 1_000_000)
        self.policy = deviate(OmfPolicy(), "omf", fault, variants)
        install_wraps(self, "omf", fault)

    def close(self) -> None:
        self.store.close()

    # -- validation ------------------------------------------------------------------------------

    def validate_envelope(self, document: Any) -> list[Any]:
        if not isinstance(document, dict):
            raise ValidationError(f"the document must be a JSON object, not {a_json_type(document)}")
        version = document.get("omf")
        if version != VERSION:
            raise ValidationError(f"\"omf\" must be \"{VERSION}\" (got {json.dumps(version)[:40]})"
                                  if "omf" in document else "\"omf\" is required")
        if not isinstance(document.get("exported_at"), str):
            raise ValidationError("\"exported_at\" is required and must be a string")
        source = document.get("source")
        if source is not None and not isinstance(source, dict):
            raise ValidationError(f"\"source\" must be an object, not {a_json_type(source)}")
        memories = document.get("memories")
        if not isinstance(memories, list):
            raise ValidationError("\"memories\" is required and must be an array"
                                  if memories is None else f"\"memories\" must be an array, not {a_json_type(memories)}")
        return memories

    def _source_trusted(self, document: dict[str, Any]) -> bool:
        source = document.get("source")
        return isinstance(source, dict) and source.get("app") == MEMD_APP

    def _ext_trusted(self, v: Any) -> bool:
        return _is_int(v) and v == MEMD_EXT_VERSION

    def resolve_item(self, index: int, item: Any, source_trusted: bool, now_ms: int) -> _Resolved:
        where = f"memories[{index}]"
        if not isinstance(item, dict):
            raise ValidationError(f"{where} must be an object, not {a_json_type(item)}")
        content = item.get("content")
        if not isinstance(content, str):
            raise ValidationError(f"{where}.content is required and must be a string")
        if self._is_blank(content):
            raise ValidationError(f"{where}.content is empty or whitespace-only")
        for name in ("category", "status", "created_at", "updated_at", "expires_at"):
            value = item.get(name)
            if value is not None and not isinstance(value, str):
                raise ValidationError(f"{where}.{name} must be a string, not {a_json_type(value)}")
        tags = item.get("tags")
        if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) for t in tags)):
            raise ValidationError(f"{where}.tags must be an array of strings")
        extensions = item.get("extensions")
        if extensions is not None and not isinstance(extensions, dict):
            raise ValidationError(f"{where}.extensions must be an object, not {a_json_type(extensions)}")
        memd = (extensions or {}).get(MEMD_APP)
        if memd is not None and not isinstance(memd, dict):
            raise ValidationError(f"{where}.extensions.memd must be an object, not {a_json_type(memd)}")
        memd = memd or {}
        for name in ("chunk_id", "project_id", "chunk_type", "ingestion_mode"):
            value = memd.get(name)
            if value is not None and not isinstance(value, str):
                raise ValidationError(f"{where}.extensions.memd.{name} must be a string, not {a_json_type(value)}")
        # v's type is a decision point: by default any value but the integer 1 ("1", 2, missing) is
        # simply not trusted; a typed reader refuses a v that is no integer like any mistyped member.
        v = memd.get("v")
        if self.policy.ext_v_typed and v is not None and not _is_int(v):
            raise ValidationError(f"{where}.extensions.memd.v must be an integer, not {a_json_type(v)}")
        trusted = source_trusted and self._ext_trusted(v)
        lifecycle = (self._lifecycle(where, memd.get("lifecycle"), now_ms) if trusted
                     else self._default_lifecycle(now_ms))  # untrusted: the block is not even parsed
        tags = list(item.get("tags") or [])  # "Applied verbatim": the array as given, order and repeats kept
        # What flows in whatever the trust: content, tags, category, and extensions.memd's project_id,
        # chunk_type and ingestion_mode (only the lifecycle block is gated).
        fold = self.policy.vocab_case_insensitive
        return _Resolved(content=content, canonical=canonical(content, self.policy.canonical_form),
                         project_id=self._project(item, memd),
                         trusted=trusted, lifecycle=lifecycle, source_id=memd.get("chunk_id"),
                         tags=tags, category=item.get("category"),
                         chunk_type=_vocab(memd.get("chunk_type"), CHUNK_TYPES, self.policy.unknown_chunk_type,
                                           fold=fold),
                         ingestion_mode=_vocab(memd.get("ingestion_mode"), INGESTION_MODES,
                                               self.policy.import_ingestion_mode, fold=fold))

    @staticmethod
    def _is_blank(content: str) -> bool:
        """omf/content-not-blank: empty or whitespace-only content fails validate_omf."""
        return not content.strip()

    def _project(self, item: dict[str, Any], memd: dict[str, Any]) -> str | None:
        # Resolution order: extensions.memd.project_id, then category (nanomem convention), then None.
        project = memd.get("project_id")
        if "project_id" in memd and project is None and not self.policy.null_project_falls_back:
            return None  # an explicit null is a project_id present: "no project"
        if project:
            return project
        return item.get("category") or None

    @staticmethod
    def _default_lifecycle(now_ms: int) -> dict[str, Any]:
        return {"status": "final", "tier": "long_term", "supersedes": None, "expires_at_ms": None,
                "review_after_ms": None, "lifecycle_updated_at_ms": now_ms}

    def _lifecycle(self, where: str, block: Any, now_ms: int) -> dict[str, Any]:
        """`extract_lifecycle_strict`: fail closed on anything malformed; missing = null = unset."""
        out = self._default_lifecycle(now_ms)
        if block is None:
            return out
        where = f"{where}.extensions.memd.lifecycle"
        if not isinstance(block, dict):
            raise LifecycleError(f"{where} must be an object, not {a_json_type(block)}")
        for name, vocabulary in (("status", STATUSES), ("tier", TIERS)):
            value = block.get(name)
            if value is None:
                continue
            if not isinstance(value, str) or value not in vocabulary:
                raise LifecycleError(f"{where}.{name} must be one of {', '.join(vocabulary)} "
                                      f"(got {json.dumps(value)[:60]})")
            out[name] = value
        for name in MS_FIELDS:
            value = block.get(name)
            if value is None:
                continue
            if not _is_int(value) or not _I64[0] <= value <= _I64[1]:
                raise LifecycleError(f"{where}.{name} must be an integer (milliseconds), not {a_json_type(value)}")
            out[name] = value
        for name in ("supersedes", "superseded_by"):
            value = block.get(name)
            if value is not None and not isinstance(value, str):
                raise LifecycleError(f"{where}.{name} must be a string or null, not {a_json_type(value)}")
        out["supersedes"] = block.get("supersedes")
        return out

    # -- import / preview --------------------------------------------------------------------------

    def import_document(self, tenant: str, document: Any, *, include_archived: bool = True,
                        fuzzy_threshold: float | None = None) -> dict[str, int]:
        return self._run(tenant, document, include_archived, fuzzy_threshold, preview=False).as_import()

    def preview(self, tenant: str, document: Any, *, include_archived: bool = True,
                fuzzy_threshold: float | None = None) -> dict[str, Any]:
        return self._run(tenant, document, include_archived, fuzzy_threshold, preview=True).as_preview()

    def _run(self, tenant: str, document: Any, include_archived: bool, fuzzy_threshold: float | None,
             *, preview: bool) -> ImportResult:
        _check_tenant(tenant)
        if fuzzy_threshold is not None and not (isinstance(fuzzy_threshold, (int, float))
                                                and not isinstance(fuzzy_threshold, bool)
                                                and 0.0 <= fuzzy_threshold <= 1.0):
            raise ValidationError("fuzzy_threshold must be a number between 0 and 1")
        memories = self.validate_envelope(document)
        run = _Pass(tenant=tenant, source_trusted=self._source_trusted(document), now_ms=self.clock(),
                    include_archived=include_archived, fuzzy_threshold=fuzzy_threshold,
                    result=ImportResult(total=len(memories)), preview=preview,
                    any_project=self.policy.dedup_scope != "project")
        store = self.store
        with store.transaction():
            try:
                self._walk(run, memories)
            except ValidationError as error:
                if not preview and self._keeps_written(error):
                    store.commit()  # keeps the items before the bad one
                raise
            if preview:
                store.rollback()
            else:
                store.commit()
        return run.result

    def _keeps_written(self, error: ValidationError) -> bool:
        """Whether an import stopped by `error` keeps the items it wrote before: never for a document
        that fails validate_omf (omf/malformed-document-refused); for a malformed trusted lifecycle,
        only under the reading that an import writes item by item (the policy's point)."""
        return isinstance(error, LifecycleError) and self.policy.lifecycle_error_keeps_earlier

    def _walk(self, run: _Pass, memories: list[Any]) -> None:
        for index, item in enumerate(memories):
            try:
                self._land(run, index, item)
            except UnicodeEncodeError:  # sqlite stores UTF-8: a lone surrogate (\ud800) cannot be stored
                raise ValidationError(f"memories[{index}] holds text that is not valid Unicode "
                                      "(a lone surrogate)") from None
        for row in run.pending:
            self.store.insert(row)
        for source_id, matched in run.duplicate_of.items():  # policy edges_to_duplicates
            run.id_map.setdefault(source_id, matched)
        self._replay_edges(run.tenant, run.id_map, run.edges)

    def _land(self, run: _Pass, index: int, item: Any) -> None:
        """Pass 1 for one item: validate, filter, dedupe, write; count it in exactly one bucket."""
        r = self.resolve_item(index, item, run.source_trusted, run.now_ms)
        result = run.result
        filtered = not run.include_archived and item.get("status") in ARCHIVAL_STATUSES
        if filtered and self.policy.filter_before_dedup:
            result.skipped += 1
            return
        if self._is_duplicate(run, r):
            result.duplicates += 1
            if self.policy.edges_to_duplicates and r.source_id and not run.preview:
                matched = self._matched_row(run, r)
                if matched is not None:
                    run.duplicate_of.setdefault(r.source_id, matched)
            return
        if filtered:
            result.skipped += 1
            return
        target_id = self._target_id(r, run.now_ms)
        lc = r.lifecycle
        row = {
            "chunk_id": target_id, "tenant": run.tenant, "project_id": r.project_id, "content": r.content,
            "canonical": r.canonical, "tags": r.tags, "category": r.category,
            "chunk_type": r.chunk_type, "ingestion_mode": r.ingestion_mode,
            "status": lc["status"], "tier": lc["tier"], "supersedes": None, "superseded_by": None,
            "expires_at_ms": lc["expires_at_ms"], "review_after_ms": lc["review_after_ms"],
            "lifecycle_updated_at_ms": lc["lifecycle_updated_at_ms"], "created_at_ms": run.now_ms,
        }
        if self.policy.dedup_within_document and (self.policy.preview_dedup_within_document or not run.preview):
            self.store.insert(row)
            if run.fuzzy_threshold is not None:  # later items of this document dedupe against this one too
                run.fuzzy_cache.setdefault(run.scope(r.project_id), []).append(
                    trigrams(r.canonical, self.policy.trigrams))
        else:  # written after the walk, so no item of this document is an "existing row" for another
            run.pending.append(row)
        if r.source_id:
            run.id_map[r.source_id] = target_id
        if lc["supersedes"]:
            run.edges.append((target_id, lc["supersedes"]))
        result.imported += 1
        if r.project_id is None:
            result.unscoped += 1
        else:
            result.by_project[r.project_id] = result.by_project.get(r.project_id, 0) + 1

    def _target_id(self, r: _Resolved, now_ms: int) -> str:
        """omf/fresh-chunk-id: imports mint a fresh chunk_id; the source's only maps the edges."""
        return new_chunk_id(now_ms)

    def _replay_edges(self, tenant: str, id_map: dict[str, str], edges: list[tuple[str, str]]) -> None:
        """Pass 2: only the supersedes side is replayed; link_supersedes writes superseded_by too."""
        for new_id, old_source_id in edges:
            old_id = id_map.get(old_source_id)
            if old_id is not None:
                self.store.link_supersedes(tenant, new_id, old_id)
                if self.policy.supersede_marks_status:
                    self.store.mark_superseded(tenant, old_id)
            # else: the other side is not in the document: the edge is dropped, the status kept.

    def _matched_row(self, run: _Pass, r: _Resolved) -> str | None:
        """The first row of the item's scope it is a duplicate of (policy edges_to_duplicates): the
        exact canonical match, else the first near-copy."""
        rows = list(self.store.canonical_rows_in_scope(run.tenant, r.project_id))
        exact = next((chunk_id for chunk_id, canonical in rows if canonical == r.canonical), None)
        if exact is not None or run.fuzzy_threshold is None:
            return exact
        mine = trigrams(r.canonical, self.policy.trigrams)
        return next((chunk_id for chunk_id, canonical in rows
                     if self._near(mine, trigrams(canonical, self.policy.trigrams), run.fuzzy_threshold)), None)

    def _near(self, mine: frozenset[str], other: frozenset[str], threshold: float) -> bool:
        """omf/dedup-fuzzy: a near-copy by trigram Jaccard (at the threshold too, unless fuzzy_strict)."""
        similarity = jaccard(mine, other)
        return similarity > threshold if self.policy.fuzzy_strict else similarity >= threshold

    def _is_duplicate(self, run: _Pass, r: _Resolved) -> bool:
        if self.store.has_canonical(run.tenant, r.canonical, r.project_id, any_project=run.any_project):
            return True
        if run.fuzzy_threshold is None:
            return False
        key = run.scope(r.project_id)
        if key not in run.fuzzy_cache:  # the scope's stored rows, read once per import
            run.fuzzy_cache[key] = [trigrams(c, self.policy.trigrams) for c in self.store.canonicals_in_scope(
                run.tenant, r.project_id, any_project=run.any_project)]
        mine = trigrams(r.canonical, self.policy.trigrams)
        return any(self._near(mine, other, run.fuzzy_threshold) for other in run.fuzzy_cache[key])

    # -- export ------------------------------------------------------------------------------------

    def export(self, out: IO[str], tenant: str, *, project_id: str | None = None, include_history: bool = False,
               include_superseded: bool = True, include_expired: bool = True) -> int:
        """Write the OMF document to `out` item by item; returns the number of items."""
        _check_tenant(tenant)
        now_ms = self.clock()
        out.write(json.dumps(self._envelope(now_ms))[:-1] + ', "memories": [')
        count = 0
        for row in self._rows(tenant, project_id, include_history):
            if not self._eligible(row, now_ms, include_history, include_superseded, include_expired):
                continue
            out.write(("\n" if count == 0 else ",\n") + json.dumps(self._export_item(row, now_ms), ensure_ascii=False))
            count += 1
        out.write("\n]}\n" if count else "]}\n")
        return count

    def export_document(self, tenant: str, **flags: Any) -> dict[str, Any]:
        import io

        buf = io.StringIO()
        self.export(buf, tenant, **flags)
        return json.loads(buf.getvalue())

    def _envelope(self, now_ms: int) -> dict[str, Any]:
        """The document's members before `memories` (which the export streams after them)."""
        return {"omf": VERSION, "exported_at": rfc3339(now_ms), "source": {"app": MEMD_APP}}

    def _rows(self, tenant: str, project_id: str | None, include_history: bool) -> Iterable[Any]:
        """omf/export-order: ascending creation order."""
        rows = self.store.rows_for_export(tenant, project_id, include_history=include_history)
        tick = self.policy.created_resolution_ms
        if tick is None:
            return rows
        by_id_descending = sorted(rows, key=lambda row: row["chunk_id"], reverse=True)
        return sorted(by_id_descending, key=lambda row: row["created_at_ms"] // tick)

    def _eligible(self, row: Any, now_ms: int, include_history: bool, include_superseded: bool,
                  include_expired: bool) -> bool:
        status = row["status"]
        if status in ("deleted", "error"):
            return False
        if not include_history and row["tier"] == "history":  # defence in depth behind the SQL filter
            return False
        if not include_superseded and status == "superseded":
            return False
        if not include_expired:
            if status == "expired":
                return False
            expires = row["expires_at_ms"]
            if expires is not None and expires <= now_ms:  # lazy expiry
                return False
        return True

    def _export_item(self, row: Any, now_ms: int) -> dict[str, Any]:
        return _item(row, now_ms, self.policy)


def _item(row: Any, now_ms: int, policy: Any) -> dict[str, Any]:
    status = row["status"]
    expires = row["expires_at_ms"]
    item: dict[str, Any] = {"content": row["content"]}
    if row["category"] is not None:
        item["category"] = row["category"]
    elif row["project_id"] is not None and policy.category_from_project:
        item["category"] = row["project_id"]  # nanomem routes by category
    tags = json.loads(row["tags"])
    if tags or policy.export_empty_tags:
        item["tags"] = tags
    # The archival hint: memd emits "superseded"/"expired" for those chunk states.
    lapsed = expires is not None and expires <= now_ms and policy.expired_hint_for_lapsed
    if status == "superseded":
        item["status"] = "superseded"
    elif status == "expired" or lapsed:
        item["status"] = "expired"
    for name, value in (("created_at", row["created_at_ms"]), ("updated_at", row["lifecycle_updated_at_ms"]),
                        ("expires_at", expires)):
        stamp = rfc3339(value) if value is not None and policy.export_dates else None
        if stamp is not None:
            item[name] = stamp
    item.update(policy.extra_item_members)
    item["extensions"] = {MEMD_APP: {
        "v": MEMD_EXT_VERSION, "chunk_id": row["chunk_id"], "project_id": row["project_id"],
        "chunk_type": row["chunk_type"], "ingestion_mode": row["ingestion_mode"],
        "lifecycle": {"status": status, "tier": row["tier"], "supersedes": row["supersedes"],
                      "superseded_by": row["superseded_by"], "expires_at_ms": expires,
                      "review_after_ms": row["review_after_ms"],
                      "lifecycle_updated_at_ms": row["lifecycle_updated_at_ms"]}}}
    return item


def _vocab(value: Any, vocabulary: Iterable[str], default: str, *, fold: bool = True) -> str:
    """`FromStr` with a fallback: unknown or missing values take the default."""
    if isinstance(value, str):
        value = value.strip().lower() if fold else value
        if value in vocabulary:
            return value
    return default


def _check_tenant(tenant: Any) -> None:
    if not isinstance(tenant, str) or not tenant.strip():
        raise ValidationError("tenant_id is required (a non-empty string)")
    try:
        tenant.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError("tenant_id is not valid Unicode") from None
