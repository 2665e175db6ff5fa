"""What an exported document shows alone (OMF 1.0 §Envelope, §Item, §extensions.memd, §Export
semantics): judged on a live export of a varied tenant, and on a vendor's file."""

from __future__ import annotations

import re
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.omf import model
from memconform.suite.omf.checks._common import ALL_FLAGS, FILE, LIVE, cite, fresh_tenant, is_memd, own, seed
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check

SHAPE_RULES = (
    "omf/omf-version", "omf/exported-at-format", "omf/memories-required", "omf/content-required",
    "omf/content-not-blank", "omf/item-field-types", "omf/item-date-format", "omf/memd-namespace", "omf/memd-v", "omf/memd-chunk-id",
    "omf/memd-project-id", "omf/memd-chunk-type", "omf/memd-ingestion-mode", "omf/memd-lifecycle",
    "omf/lifecycle-status-vocabulary", "omf/lifecycle-tier-vocabulary", "omf/lifecycle-field-types",
    "omf/export-never-deleted-error", "omf/memd-chunk-id-uuidv7", "omf/export-status-hint", "omf/export-edges-agree",
)
#: What a document without items still shows.
ENVELOPE_RULES = ("omf/omf-version", "omf/exported-at-format", "omf/memories-required")
#: What each item rule is about: credited only where the document holds it (absence is never evidence).
ABOUT = {
    "omf/content-required": "item",
    "omf/content-not-blank": "item with a string content",
    "omf/item-field-types": "item with an optional standard member (category, tags, status, created_at, updated_at, "
                            "expires_at, extensions)",
    "omf/item-date-format": "item with a string created_at, updated_at or expires_at",
    "omf/memd-namespace": "item judged as memd's export",
    "omf/memd-v": "extensions.memd.v",
    "omf/memd-chunk-id": "extensions.memd.chunk_id",
    "omf/memd-project-id": "extensions.memd.project_id",
    "omf/memd-chunk-type": "extensions.memd.chunk_type",
    "omf/memd-ingestion-mode": "extensions.memd.ingestion_mode",
    "omf/memd-lifecycle": "extensions.memd.lifecycle",
    "omf/lifecycle-status-vocabulary": "lifecycle status",
    "omf/lifecycle-tier-vocabulary": "lifecycle tier",
    "omf/lifecycle-field-types": "lifecycle supersedes, superseded_by or *_ms field",
    "omf/export-never-deleted-error": "lifecycle status judged as memd's export",
    "omf/memd-chunk-id-uuidv7": "string chunk_id judged as memd's export",
    "omf/export-status-hint": "item whose lifecycle status is superseded or expired",
    "omf/export-edges-agree": "supersession edge with both its items in the document",
}
ITEM_TYPED = tuple(f for f in model.STANDARD_ITEM_FIELDS if f != "content")
LIFECYCLE_TYPED = tuple(f for f in model.LIFECYCLE_FIELDS if f not in ("status", "tier"))
UUID7 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)
SHOWN = 8


def judge(ctx: Any, doc: Any, *, sent: str, received: Any, where: str) -> int:
    """Report every problem of an exported document, one finding per requirement; the number of
    items it held. A plain consumer's export is judged as a wire document only: what memd's own
    export must carry (extensions.memd, its hints and ids) binds the memd profile."""
    found: dict[str, list[str]] = {}
    memd = is_memd(ctx)
    for p in model.problems(doc, produced_by_memd=memd):
        found.setdefault(p.requirement, []).append(str(p))
    for i, it in enumerate(doc.get("memories", []) if isinstance(doc, dict) and memd else []):
        lc = model.lifecycle_of(it)
        status = lc.get("status")
        if status in ("deleted", "error"):
            found.setdefault("omf/export-never-deleted-error", []).append(
                f"/memories/{i}: lifecycle status {status!r} exported")
        if status in ("superseded", "expired") and isinstance(it, dict) and it.get("status") != status:
            found.setdefault("omf/export-status-hint", []).append(
                f"/memories/{i}: lifecycle status {status!r} but top-level status {it.get('status')!r}")
        cid = (model.memd_extension(it) or {}).get("chunk_id")
        if isinstance(cid, str) and not UUID7.fullmatch(cid):
            found.setdefault("omf/memd-chunk-id-uuidv7", []).append(f"/memories/{i}: chunk_id {cid!r}")
    for rid, lines in found.items():
        more = f" … and {len(lines) - SHOWN} more" if len(lines) > SHOWN else ""
        ctx.violation(rid, f"The exported document breaks {rid}: {'; '.join(lines[:SHOWN])}{more}. "
                           f"Sent: {sent}. The spec: {cite(rid)}", sent=sent, received=received, where=where)
    if isinstance(doc, dict):
        ctx.observed(*held(doc, memd))
    memories = doc.get("memories") if isinstance(doc, dict) else None
    return len(memories) if isinstance(memories, list) else 0


def held(doc: dict[str, Any], memd: bool) -> set[str]:
    """The rules `doc` exercised: the envelope's always; an item rule where some item holds what it
    is about (memd's own export rules on every item, when judged as memd's export)."""
    items = doc.get("memories") if isinstance(doc.get("memories"), list) else []
    dicts = [it for it in items if isinstance(it, dict)]
    exts = [model.memd_extension(it) or {} for it in dicts]
    lcs = [e["lifecycle"] for e in exts if isinstance(e.get("lifecycle"), dict)]
    seen = set(ENVELOPE_RULES)
    if items:
        seen.add("omf/content-required")
    if any(isinstance(it.get("content"), str) for it in dicts):
        seen.add("omf/content-not-blank")
    if len(dicts) < len(items) or any(f in it for it in dicts for f in ITEM_TYPED):
        seen.add("omf/item-field-types")
    if any(isinstance(it.get(f), str) for it in dicts for f in model.DATE_FIELDS):
        seen.add("omf/item-date-format")
    members = {"v": "omf/memd-v", "chunk_id": "omf/memd-chunk-id", "project_id": "omf/memd-project-id",
               "chunk_type": "omf/memd-chunk-type", "ingestion_mode": "omf/memd-ingestion-mode",
               "lifecycle": "omf/memd-lifecycle"}
    seen |= {rid for member, rid in members.items() if any(member in e for e in exts)}
    if any("status" in lc for lc in lcs):
        seen.add("omf/lifecycle-status-vocabulary")
    if any("tier" in lc for lc in lcs):
        seen.add("omf/lifecycle-tier-vocabulary")
    if any(f in lc for lc in lcs for f in LIFECYCLE_TYPED):
        seen.add("omf/lifecycle-field-types")
    if memd and dicts:
        # memd's export carries these on every item: an item without them is a finding
        seen |= {"omf/memd-namespace", "omf/memd-v", "omf/memd-chunk-id", "omf/memd-project-id", "omf/memd-lifecycle"}
        if any(isinstance(lc.get("status"), str) for lc in lcs):
            seen.add("omf/export-never-deleted-error")
        if any(isinstance(e.get("chunk_id"), str) for e in exts):
            seen.add("omf/memd-chunk-id-uuidv7")
        if any(lc.get("status") in ("superseded", "expired") for lc in lcs):
            seen.add("omf/export-status-hint")
        ids = {e.get("chunk_id") for e in exts if isinstance(e.get("chunk_id"), str)}
        if any(lc.get(f) in ids for lc in lcs for f in ("supersedes", "superseded_by")):
            seen.add("omf/export-edges-agree")
    return seen


def _unjudged(ctx: Any, what: str) -> None:
    """Say what `what` held nothing of, for each rule named but not judged."""
    missing = ctx.unobserved()
    if not missing:
        return
    cat = catalogues.load("omf")
    foreign = [r for r in missing if not is_memd(ctx) and not cat.get(r).in_profile("consumer")]
    absent = [r for r in missing if r not in foreign]
    if absent:
        ctx.note(f"{what} holds no " + "; no ".join(f"{ABOUT.get(r, r)} ({r})" for r in absent))
    if foreign:
        ctx.note(f"judged as a plain OMF consumer's export, not memd's: {', '.join(foreign)} bind memd's own export")


def _nothing_judged(what: str) -> str:
    rules = ", ".join(r for r in SHAPE_RULES if r not in ENVELOPE_RULES)
    return (f"{what} holds no memories: its envelope is well-formed, but the item rules ({rules}) had no item to "
            "judge")


#: A tenant of every lifecycle state memd can hold, so the export has each kind of item to show.
def _varied(tenant: str) -> list[dict[str, Any]]:
    past = model.now_ms() - 86_400_000
    older = model.uuid7()
    return [
        model.item(own(tenant, "mcf shape: final"), project="p1", tags=["a", "b"], category="p1", chunk_type="code",
                   ingestion_mode="conversation"),
        model.item(own(tenant, "mcf shape: superseded"), lifecycle={"status": "superseded"}),
        model.item(own(tenant, "mcf shape: expired"), lifecycle={"status": "expired", "expires_at_ms": past}),
        model.item(own(tenant, "mcf shape: history"), lifecycle={"tier": "history", "review_after_ms": past}),
        model.item(own(tenant, "mcf shape: deleted"), lifecycle={"status": "deleted"}),
        model.item(own(tenant, "mcf shape: error"), lifecycle={"status": "error"}),
        model.item(own(tenant, "mcf shape: nanomem"), memd=False, tags=["n"]),
        # an edge with both its items in the export (omf/export-edges-agree)
        model.item(own(tenant, "mcf shape: edge older"), chunk_id=older, lifecycle={"status": "superseded"}),
        model.item(own(tenant, "mcf shape: edge newer"), lifecycle={"supersedes": older}),
    ]


@check("omf/export/shape", spec="omf", requirements=SHAPE_RULES, bindings=LIVE,
       title="A live export is a well-formed OMF 1.0 document with memd's namespace on every item")
def export_shape(ctx) -> None:
    ctx.credit_only_observed()  # a rule about a member no exported item holds is not judged
    tenant = fresh_tenant("shape")
    seed(ctx, tenant, _varied(tenant))
    run = ctx.client.export(tenant, **(ALL_FLAGS if is_memd(ctx) else {}))
    if not run.ok:
        raise NotApplicable(f"precondition failed: the export did not succeed ({run.describe()})")
    doc = run.parsed_document()
    if not isinstance(doc, dict):
        ctx.violation("omf/memories-required", f"The export is not a JSON object. Came back: {run.describe()}. "
                      f"The spec: {cite('omf/memories-required')}", sent=run.sent, received=run.document)
        ctx.note("the export is not a JSON object: nothing else in it could be judged")
        return
    if not judge(ctx, doc, sent=run.sent, received=run.document, where="export") and not ctx.findings:
        raise NotApplicable("precondition failed: " + _nothing_judged(
            f"the export of a tenant seeded with {len(_varied(tenant))} items ({run.describe()})")
            + "; the export's contents are judged by omf/export/exclusions")
    _unjudged(ctx, f"the export of a tenant seeded with {len(_varied(tenant))} items of each kind")


@check("omf/file/shape", spec="omf", requirements=SHAPE_RULES, bindings=FILE,
       title="A vendor's exported file is a well-formed OMF 1.0 document with memd's namespace on every item")
def file_shape(ctx) -> None:
    import json

    ctx.credit_only_observed()  # a rule about a member the file's items do not hold is not exercised by the file
    docs = ctx.client.documents()
    if not docs:
        raise NotApplicable("no document was given")
    items = 0
    for path, text in docs:
        try:
            doc = json.loads(text)
        except ValueError as exc:
            ctx.violation("omf/memories-required", f"{path} is not JSON ({exc}), so it has no memories array. "
                          f"The spec: {cite('omf/memories-required')}", received=text[:2000], where=path)
            continue
        items += judge(ctx, doc, sent=f"the file {path}", received=None, where=path)
    shown = f"the file{'s' if len(docs) > 1 else ''} {', '.join(p for p, _ in docs)}"
    if not items and not ctx.findings:
        # "An empty array is a valid 'nothing to export' envelope": the envelope rules are judged
        # and pass; the item rules are not exercised by such a file
        ctx.note(_nothing_judged(shown) + " (an empty array is a valid 'nothing to export' envelope)")
        return
    _unjudged(ctx, shown)
