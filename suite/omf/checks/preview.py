"""Preview semantics (OMF 1.0 §Preview semantics): the same path as import, writing nothing, with
counts that equal what the real import then does."""

from __future__ import annotations

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import (
    ALL_FLAGS, LIVE, counts, export_doc, fail, fresh_tenant, own, seed, send,
)
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check

FIELDS = ("total", "to_import", "duplicates", "filtered", "unscoped")


def _doc(tenant: str):
    """Two items in p1, one in a project named "_", one unscoped, one the tenant already holds, one
    archived, and the first item again: whether that repeat is a duplicate of the copy just written or
    imported (omf-dedup-stored-rows-only), the preview counts it as the import does, or, writing nothing,
    as a new item (omf-preview-stored-rows-only); any other difference is the preview's."""
    return model.document([
        model.item(own(tenant, "mcf preview: p1 a"), project="p1"),
        model.item(own(tenant, "mcf preview: p1 b"), project="p1"),
        model.item(own(tenant, "mcf preview: underscore"), project="_"),
        model.item(own(tenant, "mcf preview: unscoped"), memd=False),
        model.item(own(tenant, "mcf preview: stored")),
        model.item(own(tenant, "mcf preview: archived"), status="archived"),
        model.item(own(tenant, "mcf preview: p1 a"), project="p1"),
    ])


@check("omf/preview/no-write", spec="omf", requirements=("omf/preview-no-write",), bindings=LIVE,
       title="A preview writes nothing")
def no_write(ctx) -> None:
    tenant = fresh_tenant("prevnw")
    seed(ctx, tenant, [model.item(own(tenant, "mcf preview: stored"))])
    shown, before = export_doc(ctx, tenant, **ALL_FLAGS)
    if own(tenant, "mcf preview: stored") not in [it.get("content") for it in before]:
        # An export that does not show a real import would not show a preview's write either.
        raise NotApplicable(f"precondition failed: the export after a seeding import does not list the seeded item "
                            f"({shown.describe()}), so a write by the preview could not be seen; imports are judged "
                            "by omf/import/buckets")
    doc = _doc(tenant)
    run = send(ctx, tenant, doc, dry_run=True)
    after, items = export_doc(ctx, tenant, **ALL_FLAGS)
    if [it.get("content") for it in items] != [it.get("content") for it in before]:
        fail(ctx, "omf/preview-no-write", f"After a preview the tenant holds {[it.get('content') for it in items]} "
             f"(before: {[it.get('content') for it in before]}); the preview was {run.describe()}", after,
             "the tenant unchanged", sent_doc=doc)


@check("omf/preview/matches-import", spec="omf",
       requirements=("omf/preview-fields", "omf/preview-matches-import", "omf/preview-unscoped-counter"),
       bindings=LIVE, title="Preview counts equal what the real import then does")
def matches_import(ctx) -> None:
    ctx.credit_only_observed()  # a preview without its counts gives nothing to compare the import with
    tenant = fresh_tenant("prevm")
    seed(ctx, tenant, [model.item(own(tenant, "mcf preview: stored"))])
    doc = _doc(tenant)
    prev = send(ctx, tenant, doc, dry_run=True, include_archived=False)
    r = prev.result if prev.ok and isinstance(prev.result, dict) else None
    ints = r is not None and all(isinstance(r.get(k), int) and not isinstance(r.get(k), bool) and r[k] >= 0
                                 for k in FIELDS)
    by = r.get("by_project") if r else None
    if not ints or not isinstance(by, dict) or not all(isinstance(v, int) for v in by.values()):
        fail(ctx, "omf/preview-fields", "The preview did not answer total, to_import, duplicates, filtered, "
             "unscoped as integers and by_project as an object of counts", prev,
             "{total, to_import, duplicates, filtered, unscoped, by_project}", sent_doc=doc)
        ctx.note("the preview answered no counts: its by_project/unscoped split and its match with the import "
                 "were not judged")
        return
    ctx.observed("omf/preview-fields", "omf/preview-unscoped-counter", "omf/preview-matches-import")
    total = len(doc["memories"])
    if r["total"] != total or r["to_import"] != r["unscoped"] + sum(by.values()):
        fail(ctx, "omf/preview-fields", f"total {r['total']} for {total} items, to_import {r['to_import']} against "
             f"unscoped {r['unscoped']} + by_project {by}", prev,
             f"total {total} and to_import = unscoped + Σ by_project", sent_doc=doc)
    # p1: 2, or 3 where the repeat of its first item is imported (dedup against stored rows only)
    if by not in ({"p1": 2, "_": 1}, {"p1": 3, "_": 1}) or r["unscoped"] != 1:
        fail(ctx, "omf/preview-unscoped-counter", f"by_project {by}, unscoped {r['unscoped']}", prev,
             'by_project {"p1": 2, "_": 1} (or {"p1": 3, "_": 1}, the repeat of the first item imported) and '
             "unscoped 1 (the already stored item is a duplicate, the archived one filtered)", sent_doc=doc)
    real = send(ctx, tenant, doc, include_archived=False)
    got = counts(real)
    want = {"imported": r["to_import"], "duplicates": r["duplicates"], "skipped": r["filtered"]}
    # "walks the same … path … but never writes": a preview that writes nothing may see only the stored
    # rows, and count the document's repeat of its first item to_import where the import, having written
    # the first copy, counts it a duplicate (variant omf-preview-stored-rows-only: two blind red teams'
    # reading, rounds 13 and 31)
    unwritten = dict(want, imported=want["imported"] - 1, duplicates=want["duplicates"] + 1)
    if got == unwritten and by.get("p1") == 3:
        ctx.note("the preview counted the document's repeat of its first item to_import and the import a duplicate: "
                 "a preview that writes nothing looks duplicates up among the stored rows only (a reading of "
                 "\"never writes\"); every other count matched")
    elif got != want:
        fail(ctx, "omf/preview-matches-import", f"The preview (include_archived=false) said {want} (as to_import/"
             f"duplicates/filtered) but the import that followed, same tenant and flags, answered {got}; the document "
             "repeats its first item as its last", real, "the same counts", sent_doc=doc)
    elif by.get("p1") == 3:
        ctx.note("the import landed the document's repeat of its first item a second time (dedup against the rows "
                 "stored before the import only): a preview that looks duplicates up in the store alone counts "
                 "the same, so whether this preview would follow an import deduplicating within the document was "
                 "not seen")


@check("omf/preview/fuzzy", spec="omf", requirements=("omf/preview-matches-import",), bindings=LIVE,
       title="A preview with fuzzy_threshold counts a near-copy as the import with it then does")
def fuzzy(ctx) -> None:
    """A stored row, then a near-copy of it previewed and imported with fuzzy_threshold 0.5: the preview walks
    the same dedup path, the fuzzy lookup included (a blind red team, round 31: a preview that dropped the
    threshold counted the near-copy to_import). Whether the near-copy is a duplicate is omf/dedup-fuzzy's."""
    ctx.credit_only_observed()
    tenant = fresh_tenant("prevfz")
    base = own(tenant, "mcf preview fuzzy: the quarterly release of the storage engine ships on the first friday")
    seed(ctx, tenant, [model.item(base)])
    doc = model.document([model.item(base + " again")])
    prev = send(ctx, tenant, doc, dry_run=True, fuzzy_threshold=0.5)
    r = prev.result if prev.ok and isinstance(prev.result, dict) else {}
    if not all(isinstance(r.get(k), int) and not isinstance(r.get(k), bool) for k in ("to_import", "duplicates")):
        ctx.note(f"the preview with fuzzy_threshold 0.5 answered no counts ({prev.describe()}): judged by "
                 "omf/preview/matches-import")
        return
    real = send(ctx, tenant, doc, fuzzy_threshold=0.5)
    got = counts(real)
    # the near-copy is one item, neither archived nor filtered: it lands or dedupes, in the preview as in the
    # import (an importer that counts nothing shows no path to compare)
    if got is None or got["imported"] + got["duplicates"] != 1 or r["to_import"] + r["duplicates"] != 1:
        ctx.note(f"the preview ({r}) or the import ({real.describe()}) with fuzzy_threshold 0.5 did not count the one "
                 "item as landed or deduplicated: the two were not compared (judged by omf/import/fuzzy and "
                 "omf/preview/matches-import)")
        return
    ctx.observed("omf/preview-matches-import")
    want = {"imported": r["to_import"], "duplicates": r["duplicates"], "skipped": r.get("filtered")}
    if got != want:
        fail(ctx, "omf/preview-matches-import", f"The preview with fuzzy_threshold 0.5 of a near-copy of a stored row "
             f"said {want} (as to_import/duplicates/filtered) but the import that followed, same tenant and flags, "
             f"answered {got}", real, "the same counts: the preview walks the import's dedup path, fuzzy lookup "
             "included", sent_doc=doc)
