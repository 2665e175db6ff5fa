"""OMF round trip between two implementations (issue 7): import a trusted document into A, export
it, import A's export into B, export again, and name every field that did not survive.

The journey:

1. **placing** — the suite's document (`plan()`, below: `source.app` "memd", `extensions.memd.v` 1,
   an explicit lifecycle on every item) is imported into a fresh tenant of A;
2. A exports that tenant with every include flag true (`include_history`, `include_superseded`,
   `include_expired`: the round trip moves everything a memd export can carry);
3. A's exported document, byte for byte, is imported into a fresh tenant of B (`include_archived`
   true: nothing is filtered);
4. B exports its tenant the same way.

OMF has no read operation besides export, so a server's import is only ever seen through its own
export: there are two views, A's export and B's export, and a loss is charged at the first of them
where the field differs from the plan ("import into A + export from A", "import into B + export
from B"). Chunk ids are re-minted by every import (omf/fresh-chunk-id), so items are matched by
their content (unique within the plan: dedup would merge repeats); an item whose content changed is
paired with a leftover in export order. A record is named by a digest of its placed content
(`sha256:<16 hex>`); `extra["records"]` maps each name to the content.

The trust gate decides what B must keep. A's export is judged item by item with the spec's
predicate (source.app == "memd" AND extensions.memd.v == 1, `model.is_trusted`): a trusted item
must keep its lifecycle and supersession edges through B (omf/lifecycle-honoured,
omf/supersedes-replayed, omf/superseded-by-derived); an untrusted one must land at memd's defaults
(status final, tier long_term, no expiry, no review, no edges: omf/untrusted-defaults), while its
content, tags, project, chunk_type and ingestion_mode still flow. The reference exports as memd, so
reference ↔ reference is trusted end to end; an implementation that exports under its own app name
makes B reset the lifecycle, and the round trip checks that B did (a note says so).

What is placed (`plan()`, in this document order):

| key | lifecycle (status / tier) | project | other |
|---|---|---|---|
| working | final / working, review_after_ms (future) | p-interop (category c-ignored loses to project_id) | 4 tags out of order, decision, conversation, top-level updated_at |
| chain-head | final / long_term, supersedes chain-mid | p-interop | the newest of a chain of three, placed **first** |
| chain-mid | superseded / long_term, supersedes chain-old, superseded_by chain-head | p-interop | |
| chain-old | superseded / long_term, superseded_by chain-mid | p-interop | |
| expired | expired / long_term, expires_at_ms (past) | none (project_id null) | no tags, message, conversation, top-level expires_at |
| draft-history | draft / history, expires_at_ms and review_after_ms (future) | c-fallback (from category) | plan, non-ASCII content |
| long | final / long_term | p-interop | 320 characters of content, research |
| orphan | superseded / long_term, edges to ids outside the document | p-interop | no tags member |
| error | error / long_term | p-interop | never exported (omf/export-never-deleted-error) |
| deleted | deleted / long_term | p-interop | never exported |

Chains placed newest first: OMF replays edges in a second pass (`source_chunk_id → target_chunk_id`),
so an edge must survive whatever the order of its two sides in the document.

Fields compared, and the requirement (suite/omf/catalogue.toml) that promises each survives:

| field (JSON pointer into the exported item) | requirement |
|---|---|
| the item itself (`""`), missing | omf/export-include-history (tier history), omf/export-include-superseded (status superseded), omf/export-include-expired (status expired), else omf/export-every-eligible |
| the item itself (`""`), present although status error/deleted | omf/export-never-deleted-error |
| `/content` | omf/content-required (the memory text) |
| `/tags` (the same array: strings, order, repeats) | omf/tags-verbatim |
| `/extensions/memd/project_id` (null: none; only when the member is absent, the category an importer falls back to) | omf/project-resolution |
| `/extensions/memd/chunk_type` | omf/chunk-type-import |
| `/extensions/memd/ingestion_mode` | omf/ingestion-mode-import |
| `/extensions/memd/lifecycle/{status,tier,expires_at_ms,review_after_ms,lifecycle_updated_at_ms}` | trusted: omf/lifecycle-honoured; untrusted at B: omf/untrusted-defaults (lifecycle_updated_at_ms not compared) |
| `/extensions/memd/lifecycle/supersedes` (the re-id'd predecessor in the same export) | omf/supersedes-replayed (orphan: omf/orphan-edge-dropped; untrusted: omf/untrusted-defaults) |
| `/extensions/memd/lifecycle/superseded_by` (the re-id'd successor in the same export) | omf/superseded-by-derived (orphan: omf/orphan-edge-dropped; untrusted: omf/untrusted-defaults) |

Allowances (what an implementation may change without a loss):

* `chunk_id` is minted afresh by every import; edges are compared as a structure (each pointer must
  name, in the same export, the item the plan's other side became), never as strings.
* `exported_at`, the top-level `created_at` / `updated_at` / `expires_at` and `status` hint
  (informational, and the status hint a SHOULD), `category` once the project is resolved, and
  `source` are not compared; the shape of each export (member types, every lifecycle field
  present) is the single-target checks' business.
* An absent nullable lifecycle member equals null (`supersedes`, `superseded_by`, `expires_at_ms`,
  `review_after_ms`), and an absent `tags` equals `[]`. An absent `project_id` is read as the
  category an importer would fall back to (a nanomem-style exporter carries the project there); a
  `project_id` that is present but null means no project, whatever the category.
* Items beyond the plan in an export are listed in the notes, not charged (the tenant is fresh).

Preconditions (the round trip is skipped with the reason, `NotApplicable`; each is judged by the
single-target checks): A accepts the placed document, and A's and B's exports succeed with a
document holding a `memories` array. B refusing A's export is no precondition: every travelling
item is lost at the import into B (the requirement A's document breaks when it is no valid OMF 1.0
document, else omf/import-buckets: no item landed in any bucket).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from memconform.suite.interop.model import MISSING, Loss, RoundTrip, charge_once
from memconform.suite.omf import model
from memconform.suite.omf.client import OmfRun, OmfTarget
from memconform.suite.outcomes import NotApplicable

SPEC = "omf"
ALL_FLAGS = dict(include_history=True, include_superseded=True, include_expired=True)
DAY_MS = 86_400_000
LIFECYCLE_VALUES = ("status", "tier", "expires_at_ms", "review_after_ms", "lifecycle_updated_at_ms")
NEVER_EXPORTED = ("error", "deleted")
MEMD = "/extensions/memd"


@dataclass(frozen=True)
class Planned:
    """One item of the plan: the OmfItem placed, and what every export must show of it."""

    key: str
    item: dict[str, Any]
    project: str | None
    tags: tuple[str, ...]
    chunk_type: str
    ingestion_mode: str
    lifecycle: dict[str, Any]            # status, tier, expires_at_ms, review_after_ms, lifecycle_updated_at_ms
    supersedes: str | None = None        # the key of its predecessor
    superseded_by: str | None = None     # the key of its successor
    orphan: bool = False                 # its edges point outside the document: dropped on import

    @property
    def content(self) -> str:
        return self.item["content"]

    @property
    def exported(self) -> bool:
        return self.lifecycle["status"] not in NEVER_EXPORTED

    @property
    def record(self) -> str:
        return "sha256:" + hashlib.sha256(self.content.encode("utf-8")).hexdigest()[:16]


LONG_CONTENT = ("mcf interop: the long memo — " + "the archive keeps every signed release manifest for seven "
                "years, mirrored to two regions, and the restore drill runs each quarter. ") * 2
LONG_CONTENT = LONG_CONTENT[:320]


def plan(now_ms: int | None = None) -> tuple[Planned, ...]:
    """The items to place, with fresh chunk ids (and expiries relative to `now_ms`)."""
    now = model.now_ms() if now_ms is None else now_ms
    future = now + 30 * DAY_MS
    ids = {k: model.uuid7() for k in ("working", "chain-head", "chain-mid", "chain-old", "expired",
                                      "draft-history", "long", "orphan", "error", "deleted")}
    outside_a, outside_b = model.uuid7(), model.uuid7()

    def lc(status: str, tier: str, updated: int, *, expires: int | None = None, review: int | None = None,
           **edges: Any) -> dict[str, Any]:
        return {"status": status, "tier": tier, "expires_at_ms": expires, "review_after_ms": review,
                "lifecycle_updated_at_ms": updated, **edges}

    out = []

    def add(key: str, content: str, lifecycle: dict[str, Any], *, project: str | None, tags: list[str] | None,
            chunk_type: str = "doc", ingestion_mode: str = "document", category: str | None = None,
            project_member: bool = True, supersedes: str | None = None, superseded_by: str | None = None,
            orphan: bool = False, **standard: Any) -> None:
        edges = {"supersedes": ids[supersedes] if supersedes else None,
                 "superseded_by": ids[superseded_by] if superseded_by else None}
        if orphan:
            edges = {"supersedes": outside_a, "superseded_by": outside_b}
        kw: dict[str, Any] = {"chunk_id": ids[key], "chunk_type": chunk_type, "ingestion_mode": ingestion_mode,
                              "lifecycle": {**lifecycle, **edges}}
        if project_member:
            kw["project"] = project
        if category is not None:
            kw["category"] = category
        if tags is not None:
            kw["tags"] = list(tags)
        out.append(Planned(key, model.item(content, **kw, **standard),
                           project if project_member else category, tuple(tags or ()), chunk_type, ingestion_mode,
                           {k: lifecycle[k] for k in LIFECYCLE_VALUES}, supersedes, superseded_by, orphan))

    add("working", "mcf interop: the release train leaves every second Tuesday",
        lc("final", "working", 1_700_000_000_123, review=future), project="p-interop", category="c-ignored",
        tags=["release", "Zeta", "alpha", "release-2"], chunk_type="decision", ingestion_mode="conversation",
        updated_at="2023-11-14T22:13:20Z")
    add("chain-head", "mcf interop: the staging database is db-3", lc("final", "long_term", 1_700_000_300_456),
        project="p-interop", tags=["infra"], supersedes="chain-mid")
    add("chain-mid", "mcf interop: the staging database is db-2", lc("superseded", "long_term", 1_700_000_200_789),
        project="p-interop", tags=["infra"], supersedes="chain-old", superseded_by="chain-head", status="superseded")
    add("chain-old", "mcf interop: the staging database is db-1", lc("superseded", "long_term", 1_700_000_100_012),
        project="p-interop", tags=["infra", "old"], superseded_by="chain-mid", status="superseded")
    add("expired", "mcf interop: the conference badge code was 4411",
        lc("expired", "long_term", 1_600_000_000_250, expires=1_600_000_000_250), project=None, tags=[],
        chunk_type="message", ingestion_mode="conversation", status="expired", expires_at="2020-09-13T12:26:40Z")
    add("draft-history", "mcf interop: draft — migrate the wiki to Markdown (ü, 東京, emoji ✓)",
        lc("draft", "history", 1_700_000_400_001, expires=future, review=future + 1), project="c-fallback",
        category="c-fallback", project_member=False, tags=["draft"], chunk_type="plan")
    add("long", LONG_CONTENT, lc("final", "long_term", 1_700_000_500_999), project="p-interop", tags=["long"],
        chunk_type="research")
    add("orphan", "mcf interop: superseded by a fact that is not in this document",
        lc("superseded", "long_term", 1_700_000_600_600), project="p-interop", tags=None, orphan=True,
        status="superseded")
    add("error", "mcf interop: an ingestion that failed", lc("error", "long_term", 1_700_000_700_700),
        project="p-interop", tags=["never"])
    add("deleted", "mcf interop: a memory the user deleted", lc("deleted", "long_term", 1_700_000_800_800),
        project="p-interop", tags=["never"])
    return tuple(out)


@dataclass
class View:
    """One export: what a server shows of its tenant after importing."""

    stage: str
    side: str                               # "source" or "destination"
    document: dict[str, Any]
    items: list[dict[str, Any]]


def round_trip(source: OmfTarget, destination: OmfTarget, *, version: str, source_label: str,
               destination_label: str) -> RoundTrip:
    """Place `plan()` in `source`, move it to `destination` through export and import, and compare
    both exports with the plan (module docstring). Raises NotApplicable when a precondition fails;
    a driver's TargetError passes through."""
    planned = plan()
    tenant_a, tenant_b = model.fresh_tenant("interop-src"), model.fresh_tenant("interop-dst")
    notes: list[str] = []
    extra: dict[str, Any] = {"source_tenant": tenant_a, "destination_tenant": tenant_b,
                             "records": {p.record: p.content[:80] for p in planned}}
    placed_doc = model.document([p.item for p in planned], trusted=True)
    run = source.import_document(tenant_a, model.dumps(placed_doc), include_archived=True)
    if not run.ok:
        raise NotApplicable(f"precondition failed: {source_label} did not import the round trip's trusted document "
                            f"({run.describe()}); its imports are judged by the single-target checks")
    _note_counts(notes, source_label, run, len(planned))
    view_a, text_a = _exported(source, tenant_a, "source", source_label)
    views = [view_a]
    into_b = destination.import_document(tenant_b, text_a, include_archived=True)
    if not into_b.ok:  # what A lost is charged to A; what it exported, B lost whole
        notes.append(f"{destination_label} refused {source_label}'s export: {into_b.describe()}")
        losses, _ = _compare(planned, views, notes, source_label)
        losses += _refused(planned, view_a, into_b, source_label, destination_label)
        return RoundTrip(SPEC, version, source_label, destination_label, placed=len(planned), compared=0,
                         losses=tuple(losses), notes=tuple(notes), extra=extra)
    _note_counts(notes, destination_label, into_b, len(view_a.items))
    view_b, _ = _exported(destination, tenant_b, "destination", destination_label)
    views.append(view_b)
    losses, compared = _compare(planned, views, notes, source_label)
    return RoundTrip(SPEC, version, source_label, destination_label, placed=len(planned), compared=compared,
                     losses=tuple(losses), notes=tuple(notes), extra=extra)


# -- the journey ----------------------------------------------------------------------------------

def _exported(target: OmfTarget, tenant: str, side: str, label: str) -> tuple[View, str]:
    run = target.export(tenant, **ALL_FLAGS)
    doc = run.parsed_document()
    if not run.ok or not isinstance(doc, dict) or not isinstance(doc.get("memories"), list) or run.document is None:
        raise NotApplicable(f"precondition failed: {label}'s export of {tenant!r} gave no document with a memories "
                            f"array ({run.describe()}); the export is judged by the single-target checks")
    items = [it for it in doc["memories"] if isinstance(it, dict)]
    return View(f"import into {label} + export from {label}", side, doc, items), run.document


def _note_counts(notes: list[str], label: str, run: OmfRun, sent: int) -> None:
    result = run.result if isinstance(run.result, dict) else {}
    landed = {k: result.get(k) for k in ("imported", "duplicates", "skipped")}
    if landed.get("imported") != sent:
        notes.append(f"{label} answered {json.dumps(landed)} for a document of {sent} item(s)")


def _refused(planned: tuple[Planned, ...], view_a: View, run: OmfRun, source_label: str,
             destination_label: str) -> list[Loss]:
    """B refused A's export: every item that travelled is lost there, charged to A when A's
    document breaks OMF 1.0, else to B."""
    problems = model.problems(view_a.document, produced_by_memd=False)
    if problems:
        rid, stage = problems[0].requirement, f"export from {source_label}"
        got = f"{destination_label} refused it ({run.describe()}); the document breaks {problems[0]}"
    else:
        rid, stage = "omf/import-buckets", f"import into {destination_label}"
        got = f"refused: {run.describe()}"
    found, _ = _match(planned, view_a.items)
    return [Loss(p.record, "", rid, "imported", got, stage) for p in planned if p.key in found]


# -- matching and comparing -----------------------------------------------------------------------

def _match(planned: tuple[Planned, ...], items: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]],
                                                                           list[dict[str, Any]]]:
    """Each planned key → the exported item it became (by content; then leftovers in order), and
    the items no planned one became."""
    left = list(items)
    found: dict[str, dict[str, Any]] = {}
    for p in planned:
        twin = next((it for it in left if it.get("content") == p.content), None)
        if twin is not None:
            found[p.key] = twin
            left.remove(twin)
    contents = {p.content for p in planned}
    strays = [it for it in left if it.get("content") not in contents]
    for p in planned:
        if p.key not in found and p.exported and strays:
            found[p.key] = strays.pop(0)
            left.remove(found[p.key])
    return found, left


def _compare(planned: tuple[Planned, ...], views: list[View], notes: list[str],
             source_label: str) -> tuple[list[Loss], int]:
    losses: list[Loss] = []
    charged: set[tuple[str, str]] = set()
    absent_everywhere = {p.key for p in planned if not p.exported}
    source_items: dict[str, dict[str, Any]] = {}
    compared = 0
    for n, view in enumerate(views):
        found, extras = _match(planned, view.items)
        if extras:
            notes.append(f"{view.stage}: {len(extras)} item(s) beyond the plan: "
                         + "; ".join(json.dumps(it.get("content"), ensure_ascii=False)[:80] for it in extras[:4]))
        if view.side == "source":
            source_items = found
        trusted = {p.key: view.side == "source" or (p.key in source_items and model.is_trusted(
            views[0].document, source_items[p.key])) for p in planned}
        if view.side == "destination":
            untrusted = [p.key for p in planned if p.key in source_items and not trusted[p.key]]
            if untrusted:
                notes.append(f"{len(untrusted)} item(s) of {source_label}'s export fail the trust gate (source.app "
                             f"{json.dumps((views[0].document.get('source') or {}).get('app'))}, extensions.memd.v): "
                             f"their lifecycle at the destination is compared with memd's defaults")
        for p in planned:
            got = found.get(p.key)
            if not p.exported:
                if got is not None:
                    absent_everywhere.discard(p.key)
                    charge_once(losses, charged, Loss(p.record, "", "omf/export-never-deleted-error", MISSING,
                                                  f"exported with lifecycle status {_lc(got, 'status')!r}",
                                                  view.stage))
                continue
            if got is None:
                charge_once(losses, charged, Loss(p.record, "", _missing_requirement(p), _brief(p), MISSING, view.stage))
                continue
            for pointer, expected, value, rid in _differences(p, got, found, trusted[p.key]):
                charge_once(losses, charged, Loss(p.record, pointer, rid, expected, value, view.stage))
        if n == len(views) - 1:
            compared = sum(1 for p in planned if p.exported and p.key in found) + len(absent_everywhere)
    return losses, compared



def _missing_requirement(p: Planned) -> str:
    if p.lifecycle["tier"] == "history":
        return "omf/export-include-history"
    return {"superseded": "omf/export-include-superseded",
            "expired": "omf/export-include-expired"}.get(p.lifecycle["status"], "omf/export-every-eligible")


def _differences(p: Planned, got: dict[str, Any], found: dict[str, dict[str, Any]], trusted: bool):
    """(pointer, expected, got, requirement) for each field of the exported item `got` that is not
    what the plan promises."""
    if got.get("content") != p.content:
        yield "/content", p.content, got.get("content", MISSING), "omf/content-required"
    tags = got.get("tags", [])
    # Verbatim is the array: its strings, their order and their repeats (absent ≡ []).
    if tags != list(p.tags):
        yield "/tags", list(p.tags), got.get("tags", MISSING), "omf/tags-verbatim"
    project = _resolved_project(got)
    if project != p.project:
        yield f"{MEMD}/project_id", p.project, project, "omf/project-resolution"
    for name, want, rid in (("chunk_type", p.chunk_type, "omf/chunk-type-import"),
                            ("ingestion_mode", p.ingestion_mode, "omf/ingestion-mode-import")):
        value = _memd(got).get(name, MISSING)
        if value != want:
            yield f"{MEMD}/{name}", want, value, rid
    lifecycle = p.lifecycle if trusted else dict(model.DEFAULT_LIFECYCLE)
    rid = "omf/lifecycle-honoured" if trusted else "omf/untrusted-defaults"
    for name in LIFECYCLE_VALUES:
        if name not in lifecycle:
            continue  # untrusted: lifecycle_updated_at_ms is the importer's own stamp
        value = _lc(got, name)
        if not _same_nullable(lifecycle[name], value):
            yield f"{MEMD}/lifecycle/{name}", lifecycle[name], value, rid
    for name, other in (("supersedes", p.supersedes), ("superseded_by", p.superseded_by)):
        if not trusted:
            expected, edge_rid = None, "omf/untrusted-defaults"
        elif p.orphan:
            expected, edge_rid = None, "omf/orphan-edge-dropped"
        elif other is None:
            expected, edge_rid = None, ("omf/supersedes-replayed" if name == "supersedes"
                                        else "omf/superseded-by-derived")
        else:
            if other not in found:
                continue  # the other side is missing: its own loss
            expected = _memd(found[other]).get("chunk_id", MISSING)
            edge_rid = "omf/supersedes-replayed" if name == "supersedes" else "omf/superseded-by-derived"
        value = _lc(got, name)
        # An edge whose other side shows no chunk_id cannot be followed: two missing values do not
        # make a kept edge.
        if expected is MISSING or not _same_nullable(expected, value):
            yield f"{MEMD}/lifecycle/{name}", expected, value, edge_rid


def _memd(it: dict[str, Any]) -> dict[str, Any]:
    return model.memd_extension(it) or {}


def _lc(it: dict[str, Any], name: str) -> Any:
    lc = _memd(it).get("lifecycle")
    return lc.get(name, MISSING) if isinstance(lc, dict) else MISSING


def _same_nullable(expected: Any, value: Any) -> bool:
    if expected is None:
        return value is None or value is MISSING
    if isinstance(expected, int) and (isinstance(value, bool) or not isinstance(value, int)):
        return False
    return value == expected


def _resolved_project(it: dict[str, Any]) -> str | None:
    """The item's project as exported: extensions.memd.project_id (null: none) — "the chunk's
    project"; only when that member is absent (an exporter without memd's extension), the category
    an importer falls back to (omf/project-resolution)."""
    memd = _memd(it)
    if "project_id" in memd:
        project = memd["project_id"]
        return project if isinstance(project, str) and project else None
    category = it.get("category")
    return category if isinstance(category, str) and category else None


def _brief(p: Planned) -> dict[str, Any]:
    return {"content": p.content[:80], "status": p.lifecycle["status"], "tier": p.lifecycle["tier"]}


__all__ = ["round_trip", "plan", "Planned", "View"]
