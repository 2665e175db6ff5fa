"""The wrong OMF implementations, each small and named after its fault (Bowtie's miniatures).

A fault of `faults.py` that is not just a decision point set to a forbidden value wraps one operation
of the reference engine: each function here is `wrap(engine, original) -> the wrong operation`, and
changes what the right one is given or gives back. They are grouped by the operation they wrap; the
engine (`engine.py`) holds no trace of them.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
from collections.abc import Callable
from typing import Any

from memconform.reference_impl.omf.engine import (MEMD_APP, LifecycleError, ValidationError, _is_int, _Resolved,
                                                  trigrams)
from memconform.suite.omf.vocabulary import CHUNK_TYPES, INGESTION_MODES, MEMD_EXT_VERSION, STATUSES, VERSION

Wrap = Callable[[Any, Callable[..., Any]], Callable[..., Any]]


def _stamp_ms(stamp: Any) -> int | None:
    """An RFC 3339 stamp (or a bare date) as epoch ms; None when it does not parse."""
    if not isinstance(stamp, str):
        return None
    try:
        when = _dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return int(when.timestamp() * 1000)


# -- validate_envelope(document) -> memories ---------------------------------------------------------

def accepts_other_version(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def validate_envelope(document: Any) -> list[Any]:
        if isinstance(document, dict) and isinstance(document.get("omf"), str):
            document = {**document, "omf": VERSION}
        return original(document)
    return validate_envelope


def memories_optional(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def validate_envelope(document: Any) -> list[Any]:
        if isinstance(document, dict) and "memories" not in document:
            document = {**document, "memories": []}
        return original(document)
    return validate_envelope


def refuses_empty_memories(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def validate_envelope(document: Any) -> list[Any]:
        memories = original(document)
        if not memories:
            raise ValidationError("\"memories\" is empty")
        return memories
    return validate_envelope


# -- the trust gate: _source_trusted(document), _ext_trusted(v) ----------------------------------------

def trusts_any_source(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda document: True


def trust_gate_casefold(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """source.app compared as a forgiving string compare would: stripped and lower-cased, so "MEMD",
    "Memd" and "memd " (any producer calling itself so) are trusted as memd."""
    def source_trusted(document: dict[str, Any]) -> bool:
        source = document.get("source")
        app = source.get("app") if isinstance(source, dict) else None
        if isinstance(app, str):
            document = {**document, "source": {**source, "app": app.strip().lower()}}
        return original(document)
    return source_trusted


def trusts_other_ext_version(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return _is_int


def missing_v_trusted(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda v: v is None or original(v)


def trust_v_truthy(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """extensions.memd.v compared with the language's loose `==`: true (and 1.0) equal 1, so a
    document saying `"v": true` is trusted and its lifecycle honoured."""
    return lambda v: v == MEMD_EXT_VERSION


# -- _is_blank(content) ------------------------------------------------------------------------------

def accepts_blank_content(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda content: False


# -- _lifecycle(where, block, now_ms): the trusted lifecycle block ----------------------------------

def lenient_lifecycle(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Each malformed field (or a block that is no object) is dropped, so it takes the default."""
    def lifecycle(where: str, block: Any, now_ms: int) -> dict[str, Any]:
        def parses(name: str, value: Any) -> bool:
            try:
                original(where, {name: value}, now_ms)
            except LifecycleError:
                return False
            return True
        if not isinstance(block, dict):
            return original(where, None, now_ms)
        return original(where, {k: v for k, v in block.items() if parses(k, v)}, now_ms)
    return lifecycle


def refuses_null_lifecycle(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def lifecycle(where: str, block: Any, now_ms: int) -> dict[str, Any]:
        nulls = [name for name, value in block.items() if value is None] if isinstance(block, dict) else []
        if nulls:
            raise LifecycleError(f"{where}.extensions.memd.lifecycle.{nulls[0]} must not be null")
        return original(where, block, now_ms)
    return lifecycle


def restamps_lifecycle(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def lifecycle(where: str, block: Any, now_ms: int) -> dict[str, Any]:
        out = original(where, block, now_ms)
        out["lifecycle_updated_at_ms"] = now_ms
        return out
    return lifecycle


# -- resolve_item(index, item, source_trusted, now_ms): what one item becomes -------------------------

def _edits_resolved(edit: Callable[[_Resolved, dict[str, Any]], None]) -> Wrap:
    """A wrap of resolve_item whose `edit(resolved, item)` changes the right result in place."""
    def wrap(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def resolve_item(index: int, item: Any, source_trusted: bool, now_ms: int) -> _Resolved:
            resolved = original(index, item, source_trusted, now_ms)
            edit(resolved, item)
            return resolved
        return resolve_item
    return wrap


@_edits_resolved
def status_sets_lifecycle(r: _Resolved, item: dict[str, Any]) -> None:
    if not r.trusted and item.get("status") in STATUSES:
        r.lifecycle["status"] = item["status"]


@_edits_resolved
def dates_set_expiry(r: _Resolved, item: dict[str, Any]) -> None:
    if not r.trusted and _stamp_ms(item.get("expires_at")) is not None:
        r.lifecycle["expires_at_ms"] = _stamp_ms(item.get("expires_at"))


@_edits_resolved
def import_dates_override_lifecycle(r: _Resolved, item: dict[str, Any]) -> None:
    if r.trusted:
        for stamp, name in (("updated_at", "lifecycle_updated_at_ms"), ("expires_at", "expires_at_ms")):
            if _stamp_ms(item.get(stamp)) is not None:
                r.lifecycle[name] = _stamp_ms(item.get(stamp))


@_edits_resolved
def tags_lowercased(r: _Resolved, item: dict[str, Any]) -> None:
    r.tags = [t.lower() for t in r.tags]


@_edits_resolved
def tags_sorted_unique(r: _Resolved, item: dict[str, Any]) -> None:
    """Tags kept as a set (a tags table with a unique key, read back ordered): each string
    unaltered, but repeats dropped and the document's order lost."""
    r.tags = sorted(set(r.tags))


def v_of_first_item(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The gate's v read once per document, from its first item, and reused for every later one (a
    blind red team's memd, round 24): a v 2 item after a v 1 item is trusted, a v 1 item after a v 2
    one is not."""
    first: dict[str, Any] = {}

    def resolve_item(index: int, item: Any, source_trusted: bool, now_ms: int) -> _Resolved:
        memd = ((item.get("extensions") or {}).get("memd") if isinstance(item, dict) else None)
        if index == 0 or "v" not in first:
            first["v"] = memd.get("v") if isinstance(memd, dict) else None
        elif isinstance(memd, dict):
            item = dict(item, extensions=dict(item["extensions"], memd=dict(memd, v=first["v"])))
        return original(index, item, source_trusted, now_ms)
    return resolve_item


def _refuses_unknown(member: str, vocabulary: Any) -> Wrap:
    """A strict parser: an item whose extensions.memd.<member> is a string outside the vocabulary fails
    validation, instead of falling back to the default."""
    def wrap(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def resolve_item(index: int, item: Any, source_trusted: bool, now_ms: int) -> _Resolved:
            resolved = original(index, item, source_trusted, now_ms)
            memd = (item.get("extensions") or {}).get(MEMD_APP) if isinstance(item, dict) else None
            value = memd.get(member) if isinstance(memd, dict) else None
            if isinstance(value, str) and value.strip().lower() not in vocabulary:
                raise ValidationError(f"memories[{index}].extensions.memd.{member}: unknown value {value!r}")
            return resolved
        return resolve_item
    return wrap


refuses_unknown_chunk_type = _refuses_unknown("chunk_type", CHUNK_TYPES)
refuses_unknown_ingestion_mode = _refuses_unknown("ingestion_mode", INGESTION_MODES)


def untrusted_drops_fields(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """An untrusted item is read as if it had no extensions at all (it was validated with them)."""
    def resolve_item(index: int, item: Any, source_trusted: bool, now_ms: int) -> _Resolved:
        resolved = original(index, item, source_trusted, now_ms)
        if resolved.trusted:
            return resolved
        bare = {k: v for k, v in item.items() if k != "extensions"}
        return original(index, bare, source_trusted, now_ms)
    return resolve_item


# -- _project(item, memd): project resolution -----------------------------------------------------

def category_first(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda item, memd: item.get("category") or original(item, memd)


def category_ignored(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda item, memd: original({k: v for k, v in item.items() if k != "category"}, memd)


# -- the walk: _walk(run, memories), _land(run, index, item), _is_duplicate(run, r), _target_id,
#    _replay_edges, _keeps_written(error) ----------------------------------------------------------

def fuzzy_ignored(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda run, memories: original(dataclasses.replace(run, fuzzy_threshold=None), memories)


def archived_not_skipped(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda run, memories: original(dataclasses.replace(run, include_archived=True), memories)


def preview_miscounts(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A "fast" preview without the dedup lookups."""
    return lambda run, r: False if run.preview else original(run, r)


def keeps_source_ids(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda r, now_ms: r.source_id or original(r, now_ms)


def import_one_pass_edges(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The item's edge is kept only if its older side was already written."""
    def land(run: Any, index: int, item: Any) -> None:
        edges = len(run.edges)
        original(run, index, item)
        if len(run.edges) > edges and run.edges[-1][1] not in run.id_map:
            run.edges.pop()
    return land


def drops_supersession(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda tenant, id_map, edges: None


def replays_in_one_pass(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Edges replayed while the items are written: a supersedes naming an item later in the document
    finds no target id yet and is lost (the id map is in document order)."""
    def replay_edges(tenant: str, id_map: dict[str, str], edges: list[tuple[str, str]]) -> None:
        order = list(id_map)
        source_of = {target: source for source, target in id_map.items()}
        kept = [(new_id, old) for new_id, old in edges
                if old not in id_map or order.index(old) < order.index(source_of.get(new_id, old))]
        original(tenant, id_map, kept)
    return replay_edges


def blank_ascii_only(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A blank test that knows ASCII white space only: U+00A0, U+3000 … count as content."""
    return lambda content: not content.strip(" \t\n\r\f\v")


def dangling_edges(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def replay_edges(tenant: str, id_map: dict[str, str], edges: list[tuple[str, str]]) -> None:
        original(tenant, id_map, edges)
        for new_id, old_source_id in edges:
            if old_source_id not in id_map:
                engine.store.set_supersedes_raw(tenant, new_id, old_source_id)
    return replay_edges


def partial_write_on_invalid(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda error: True


def partial_write_walk(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The items before the bad one written when it stops the walk: also those held back until the walk's
    end (variant omf-dedup-stored-rows-only writes a document's rows after it), as an import writing item
    by item would have them."""
    def walk(run: Any, memories: list[Any]) -> None:
        try:
            original(run, memories)
        except ValidationError:
            if not run.preview:
                for row in run.pending:
                    engine.store.insert(row)
            raise
    return walk


def dedup_across_tenants(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The dedup index is keyed by (project, canonical text), not by tenant: a text another tenant
    holds in the same project (or unscoped) makes the item a duplicate, and it is not written."""
    def is_duplicate(run: Any, r: Any) -> bool:
        return original(run, r) or engine.store.has_canonical(None, r.canonical, r.project_id)
    return is_duplicate


# -- preview(tenant, document, **flags) --------------------------------------------------------------

def preview_writes(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def preview(tenant: str, document: Any, **flags: Any) -> dict[str, Any]:
        counts = original(tenant, document, **flags)
        engine.import_document(tenant, document, **flags)
        return counts
    return preview


def preview_no_by_project(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def preview(tenant: str, document: Any, **flags: Any) -> dict[str, Any]:
        counts = original(tenant, document, **flags)
        del counts["by_project"]
        return counts
    return preview


# -- export(out, tenant, **flags), _envelope(now_ms), _rows(...), _eligible(row, now_ms, ...) ----------

def history_by_default(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda out, tenant, **flags: original(out, tenant, **{**flags, "include_history": True})


def project_export_keeps_history(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The project-scoped export query lacks the tier filter (and the loop its defence-in-depth
    check): with a project_id, include_history=false still lists the project's tier=history rows."""
    def export(out: Any, tenant: str, **flags: Any) -> int:
        if flags.get("project_id") is not None:
            flags = {**flags, "include_history": True}
        return original(out, tenant, **flags)
    return export


def project_filter_ignored(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda out, tenant, **flags: original(out, tenant, **{**flags, "project_id": None})


def exported_at_millis(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def envelope(now_ms: int) -> dict[str, Any]:
        out = original(now_ms)
        out["exported_at"] = out["exported_at"][:-1] + f".{now_ms % 1000:03d}Z"
        return out
    return envelope


def dates_day_first(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """omf-export-dates-day-first: the informational dates are written as the locale shows them."""
    def item(row: Any, now_ms: int) -> dict[str, Any]:
        out = original(row, now_ms)
        for name in ("created_at", "updated_at", "expires_at"):
            if isinstance(out.get(name), str) and len(out[name]) >= 10:
                y, m, d = out[name][:10].split("-")
                out[name] = f"{d}/{m}/{y}"
        return out
    return item


def exports_version_1(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda now_ms: {**original(now_ms), "omf": "1"}


def superseded_by_dropped(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """omf-export-superseded-by-dropped: the export reads superseded_by from a column the edge replay
    never writes, so it is null on every item while the sibling's supersedes names it."""
    def item(row: Any, now_ms: int) -> dict[str, Any]:
        out = original(row, now_ms)
        lc = (((out.get("extensions") or {}).get("memd") or {}).get("lifecycle"))
        if isinstance(lc, dict):
            lc["superseded_by"] = None
        return out
    return item


def export_by_content(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *args: sorted(original(*args), key=lambda row: row["content"])


def export_by_lifecycle_updated(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The export reads rows through the lifecycle index: ordered by lifecycle_updated_at_ms (which a
    trusted import sets from the document), not by timestamp_created."""
    return lambda *args: sorted(original(*args), key=lambda row: row["lifecycle_updated_at_ms"])


def _as(row: Any, **changes: Any) -> dict[str, Any]:
    return {**dict(row), **changes}


def exports_deleted(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A deleted or error row is judged like a final one."""
    return lambda row, *flags: original(_as(row, status="final") if row["status"] in ("deleted", "error")
                                        else row, *flags)


def superseded_always_exported(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda row, now_ms, history, superseded, expired: original(row, now_ms, history, True, expired)


def expired_status_exported(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A status=expired row is judged like a final one (its expires_at_ms still counts)."""
    return lambda row, *flags: original(_as(row, status="final") if row["status"] == "expired" else row, *flags)


def no_lazy_expiry(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda row, *flags: original(_as(row, expires_at_ms=None), *flags)


def expiry_drops_future(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Any expiry, even a future one, counts as expired."""
    def eligible(row: Any, now_ms: int, history: bool, superseded: bool, expired: bool) -> bool:
        if not expired and row["expires_at_ms"] is not None:
            return False
        return original(row, now_ms, history, superseded, expired)
    return eligible


# -- _export_item(row, now_ms): one exported item ------------------------------------------------------

def _edits_item(edit: Callable[[dict[str, Any], dict[str, Any]], None]) -> Wrap:
    """A wrap of _export_item whose `edit(item, memd)` changes the right item in place."""
    def wrap(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def export_item(row: Any, now_ms: int) -> dict[str, Any]:
            item = original(row, now_ms)
            edit(item, item["extensions"][MEMD_APP])
            return item
        return export_item
    return wrap


@_edits_item
def exports_v_string(item: dict[str, Any], memd: dict[str, Any]) -> None:
    memd["v"] = str(MEMD_EXT_VERSION)


@_edits_item
def exports_status_active(item: dict[str, Any], memd: dict[str, Any]) -> None:
    if memd["lifecycle"]["status"] == "final":
        memd["lifecycle"]["status"] = "active"


@_edits_item
def exports_no_chunk_id(item: dict[str, Any], memd: dict[str, Any]) -> None:
    del memd["chunk_id"]


@_edits_item
def exports_null_category(item: dict[str, Any], memd: dict[str, Any]) -> None:
    item.setdefault("category", None)


@_edits_item
def exports_type_uppercase(item: dict[str, Any], memd: dict[str, Any]) -> None:
    memd["chunk_type"] = memd["chunk_type"].upper()


@_edits_item
def exports_mode_uppercase(item: dict[str, Any], memd: dict[str, Any]) -> None:
    memd["ingestion_mode"] = memd["ingestion_mode"].upper()


@_edits_item
def exports_tier_hyphen(item: dict[str, Any], memd: dict[str, Any]) -> None:
    memd["lifecycle"]["tier"] = memd["lifecycle"]["tier"].replace("_", "-")


@_edits_item
def exports_ms_strings(item: dict[str, Any], memd: dict[str, Any]) -> None:
    memd["lifecycle"] = {k: str(v) if k.endswith("_ms") and v is not None else v
                         for k, v in memd["lifecycle"].items()}


@_edits_item
def exports_sparse_project(item: dict[str, Any], memd: dict[str, Any]) -> None:
    if memd["project_id"] is None:
        del memd["project_id"]


@_edits_item
def exports_sparse_lifecycle(item: dict[str, Any], memd: dict[str, Any]) -> None:
    lifecycle = memd["lifecycle"]
    for name in ("supersedes", "superseded_by", "expires_at_ms", "review_after_ms"):
        if lifecycle[name] is None:
            del lifecycle[name]


@_edits_item
def exports_tier_top_level(item: dict[str, Any], memd: dict[str, Any]) -> None:
    item["tier"] = memd["lifecycle"]["tier"]


@_edits_item
def export_truncates_content(item: dict[str, Any], memd: dict[str, Any]) -> None:
    item["content"] = item["content"][:256]


def item_read_before_typed(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """omf-non-object-item-crash: the item's content is looked up before the item is known to be an
    object, so a number or null item raises what the engine never foresees (HTTP 500, a traceback);
    a string item still reaches the type test."""
    def resolve(index: int, item: Any, source_trusted: bool, now_ms: int) -> Any:
        if item is None or isinstance(item, (int, float)):
            item.get("content")  # AttributeError, as in an importer that trusts its input's shape
        return original(index, item, source_trusted, now_ms)
    return resolve


def fails_on_large_documents(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """omf-large-document-crash: more than 5,000 items raise what the engine never foresees."""
    def wrong(tenant: str, document: Any, **flags: Any) -> Any:
        try:
            parsed = json.loads(document) if isinstance(document, (str, bytes)) else document
        except ValueError:
            parsed = None
        items = parsed.get("memories") if isinstance(parsed, dict) else None
        if isinstance(items, list) and len(items) > 5_000:
            raise RuntimeError("out of memory reading the document (omf-large-document-crash)")
        return original(tenant, document, **flags)
    return wrong


# -- faults only a longer sequence shows (issue 16: omf/stateful/import-export) --------------------

def replay_skips_chained(engine: Any, original: Any) -> Any:
    """Pass 2 mistakes "this row already supersedes something" for "this edge was replayed": in a
    chain a ← b ← c, the edge c → b is skipped once b → a is linked (chains of two are right)."""
    def replay(tenant: str, id_map: dict[str, str], edges: list[tuple[str, str]]) -> None:
        linked: set[str] = set()
        for new_id, old_source_id in edges:
            old_id = id_map.get(old_source_id)
            if old_id is None or old_id in linked:
                continue
            engine.store.link_supersedes(tenant, new_id, old_id)
            linked.add(new_id)
    return replay


def preview_drops_fuzzy(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """omf-preview-ignores-fuzzy: the preview's own call of the walk forgets fuzzy_threshold."""
    def preview(tenant: str, document: Any, **flags: Any) -> Any:
        return original(tenant, document, **{k: v for k, v in flags.items() if k != "fuzzy_threshold"})
    return preview


def project_export_cached(engine: Any, original: Any) -> Any:
    """omf-project-export-cached: the rows of a project's export are kept from its first export,
    and no later import clears them."""
    cache: dict[tuple[str, Any, bool], list[Any]] = {}

    def rows(tenant: str, project_id: Any, include_history: bool) -> Any:
        if project_id is None:
            return original(tenant, project_id, include_history)
        key = (tenant, project_id, include_history)
        if key not in cache:
            cache[key] = list(original(tenant, project_id, include_history))
        return list(cache[key])
    return rows


def export_page_drops_last(engine: Any, original: Any) -> Any:
    """omf-export-page-drops-last: the export reads rows in pages of 1,000 and loses the last row of each
    full page (a `< 999` where `< 1000` was meant)."""
    def rows(tenant: str, project_id: Any, include_history: bool) -> Any:
        found = list(original(tenant, project_id, include_history))
        return [row for n, row in enumerate(found) if n % 1000 != 999 or n == len(found) - 1 and len(found) % 1000]
    return rows


def export_page_seam(engine: Any, original: Any) -> Any:
    """The export reads the tenant's rows in pages of 25 and the second page starts one row late:
    the 26th row of a tenant is never exported."""
    def rows(tenant: str, project_id: Any, include_history: bool) -> Any:
        found = list(original(tenant, project_id, include_history))
        return found[:25] + found[26:] if len(found) > 25 else found
    return rows


def preview_other_bucket_order(engine: Any, original: Any) -> Any:
    """preview runs its own copy of the bucket logic, with dedup and the include_archived filter in
    the other order than the import: an archived item that is also a duplicate lands in another
    bucket in the preview than in the import."""
    def preview(*args: Any, **kwargs: Any) -> Any:
        kept = engine.policy
        engine.policy = dataclasses.replace(kept, filter_before_dedup=not kept.filter_before_dedup)
        try:
            return original(*args, **kwargs)
        finally:
            engine.policy = kept
    return preview


def long_text_never_duplicate(engine: Any, original: Any) -> Any:
    """The dedup lookup goes through an index of the first 1,000 characters of the canonical text
    and compares the whole text against that prefix: a text longer than 1,000 characters never
    matches, so re-importing it writes it again."""
    def is_duplicate(run: Any, r: Any) -> bool:
        return False if len(r.canonical) > 1000 else original(run, r)
    return is_duplicate


def project_scope_ignores_case(engine: Any, original: Any) -> Any:
    """The project column compares without case (COLLATE NOCASE): the dedup scope of "Alpha" holds
    "alpha"'s rows, so a text held in "alpha" is a false duplicate in "Alpha"."""
    def is_duplicate(run: Any, r: Any) -> bool:
        if original(run, r):
            return True
        if not r.project_id:
            return False
        others = {r.project_id.lower(), r.project_id.upper(), r.project_id.capitalize()} - {r.project_id}
        return any(engine.store.has_canonical(run.tenant, r.canonical, p) for p in others)
    return is_duplicate


def fuzzy_on_raw_text(engine: Any, original: Any) -> Any:
    """Fuzzy dedup takes the incoming item's trigrams from its content as written while the stored
    side holds canonical (folded) texts: a near copy differing in case or spacing too ("HELLO WORLD
    AGAIN" beside "hello world") is never similar enough, so it is written. Exact dedup is right."""
    def is_duplicate(run: Any, r: Any) -> bool:
        if run.fuzzy_threshold is None or r.content == r.canonical:
            return original(run, r)
        if engine.store.has_canonical(run.tenant, r.canonical, r.project_id, any_project=run.any_project):
            return True
        return original(run, dataclasses.replace(r, canonical=r.content))
    return is_duplicate


def lazy_expiry_final_only(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Lazy expiry is written for final chunks only (`status = 'final' AND expires_at_ms <= now`): a
    draft or superseded row past its expires_at_ms is still exported with include_expired=false."""
    def eligible(row: Any, now_ms: int, history: bool, superseded: bool, expired: bool) -> bool:
        if row["status"] != "final" and row["expires_at_ms"] is not None:
            return original(_as(row, expires_at_ms=None), now_ms, history, superseded, expired)
        return original(row, now_ms, history, superseded, expired)
    return eligible


# -- found by the blind red team, round 24 (a memd CLI written from the spec alone) -------------------

def export_project_prefix(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The export's project filter is a prefix match (`LIKE 'p1%'`): p1 also exports p10's rows."""
    def rows(tenant: str, project_id: Any, include_history: bool) -> Any:
        if project_id is None:
            return original(tenant, project_id, include_history)
        return [row for row in original(tenant, None, include_history)
                if isinstance(row["project_id"], str) and row["project_id"].startswith(project_id)]
    return rows


@_edits_resolved
def untrusted_edges_replayed(r: _Resolved, item: dict[str, Any]) -> None:
    """Pass 2 reads supersedes straight from the raw extension: an untrusted item's edge is replayed."""
    memd = (item.get("extensions") or {}).get("memd") if isinstance(item.get("extensions"), dict) else None
    block = memd.get("lifecycle") if isinstance(memd, dict) else None
    if not r.trusted and isinstance(block, dict) and isinstance(block.get("supersedes"), str):
        r.lifecycle["supersedes"] = block["supersedes"]


def supersede_chain_clobber(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """atomic_supersede rewrites the older row's edge pair from scratch: writing its superseded_by it
    clears its own supersedes, so the middle of a chain A <- B <- C loses its link to A."""
    def replay_edges(tenant: str, id_map: dict[str, str], edges: list[tuple[str, str]]) -> None:
        for new_id, old_source_id in edges:
            original(tenant, id_map, [(new_id, old_source_id)])
            old_id = id_map.get(old_source_id)
            if old_id is not None:
                engine.store.clear_supersedes(tenant, old_id)
    return replay_edges


def fuzzy_skips_exact_short(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """With fuzzy_threshold the exact check is skipped and similarity alone decides; a text too short to
    have a trigram is then similar to nothing, so its exact copy is written again."""
    def is_duplicate(run: Any, r: Any) -> bool:
        if run.fuzzy_threshold is not None and len(r.canonical) < 3:
            return False
        return original(run, r)
    return is_duplicate


def fuzzy_overlap_coefficient(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Fuzzy dedup measures |A∩B| / min(|A|, |B|) instead of Jaccard's |A∩B| / |A∪B|: a short text
    whose trigrams all occur in a long stored one is a "duplicate" of it."""
    def is_duplicate(run: Any, r: Any) -> bool:
        if run.fuzzy_threshold is None or engine.store.has_canonical(run.tenant, r.canonical, r.project_id):
            return original(run, r)
        mine = trigrams(r.canonical, engine.policy.trigrams)
        for stored in engine.store.canonicals_in_scope(run.tenant, r.project_id):
            other = trigrams(stored, engine.policy.trigrams)
            if mine and other and len(mine & other) / min(len(mine), len(other)) >= run.fuzzy_threshold:
                return True
        return False
    return is_duplicate


def far_expiry_unguarded(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """omf-far-expiry-export-fails: the informational expires_at is written through a datetime with
    no range guard, so an expiry past the year 9999 fails the whole export."""
    import datetime as _dt

    def item(row: Any, now_ms: int) -> dict[str, Any]:
        out = original(row, now_ms)
        expires = row["expires_at_ms"]
        if expires is not None:
            out["expires_at"] = _dt.datetime.fromtimestamp(expires / 1000, _dt.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ")
        return out
    return item
