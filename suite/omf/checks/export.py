"""Export semantics (OMF 1.0 §Export semantics): creation order, the project filter, and the
exclusions — deleted/error never, history/superseded/expired per flag with the spec's defaults, and
lazy expiry by a past expires_at_ms, with and without a project_id."""

from __future__ import annotations

import time
from typing import Any

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import LIVE, contents, export_doc, exported_items, fail, fresh_tenant, own, seed
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check

DAY = 86_400_000
#: An expiry past year 9999 (33658-11-03), yet an integer within I-JSON's 2^53: honoured, and exported as
#: sent, whatever date an exporter derives from it (round 24's memd crashed writing that date).
FAR_MS = 10 ** 15


#: The project of the second set of rows: the exclusions hold for an export with a project_id too
#: (found by the blind red team, round 13: include_history=false ignored when project_id is given).
PROJECT = "p-excl"


def _rows(tenant: str, project: str | None = None) -> dict[str, tuple[dict[str, Any], str | None]]:
    """content → (lifecycle, the requirement that governs its presence; None: always eligible)."""
    now = model.now_ms()
    where = f"mcf rows in {project}" if project else "mcf rows"
    return {own(tenant, f"{where}: {name}"): value for name, value in {
        "final": ({}, None),
        "future expiry": ({"expires_at_ms": now + 30 * DAY}, None),
        "far expiry": ({"expires_at_ms": FAR_MS}, None),
        "deleted": ({"status": "deleted"}, "omf/export-never-deleted-error"),
        "error": ({"status": "error"}, "omf/export-never-deleted-error"),
        "history": ({"tier": "history"}, "omf/export-include-history"),
        "superseded": ({"status": "superseded"}, "omf/export-include-superseded"),
        "expired": ({"status": "expired"}, "omf/export-include-expired"),
        "lapsed": ({"expires_at_ms": now - DAY}, "omf/export-lazy-expiry"),
    }.items()}


def _expected(rule: str | None, flags: dict[str, bool | None]) -> bool:
    # The spec's defaults: include_history=false, include_superseded=true, include_expired=true.
    history = bool(flags.get("include_history"))
    superseded = flags.get("include_superseded") is not False
    expired = flags.get("include_expired") is not False
    return {None: True, "omf/export-never-deleted-error": False, "omf/export-include-history": history,
            "omf/export-include-superseded": superseded, "omf/export-include-expired": expired,
            "omf/export-lazy-expiry": expired}[rule]


VARIANTS = ({}, {"include_history": True}, {"include_superseded": False}, {"include_expired": False},
            {"include_history": True, "include_superseded": True, "include_expired": True},
            {"include_history": False, "include_superseded": False, "include_expired": False})


@check("omf/export/exclusions", spec="omf",
       requirements=("omf/export-every-eligible", "omf/export-never-deleted-error", "omf/export-include-history",
                     "omf/export-include-superseded", "omf/export-include-expired", "omf/export-lazy-expiry"),
       bindings=LIVE, title="Export leaves out deleted/error always and history/superseded/expired per flag, with or "
       "without a project_id")
def exclusions(ctx) -> None:
    tenant = fresh_tenant("excl")
    unscoped, scoped = _rows(tenant), _rows(tenant, PROJECT)
    seed(ctx, tenant, [model.item(c, lifecycle=lc) for c, (lc, _) in unscoped.items()]
         + [model.item(c, lifecycle=lc, project=PROJECT) for c, (lc, _) in scoped.items()])
    # The whole tenant, then the project alone: the flags decide the same rows either way. Which rows
    # an export for a project lists beside its own is omf/export/project-filter's to judge.
    exports = [(None, {**unscoped, **scoped}), (PROJECT, scoped)]
    if "project" in (getattr(ctx.client, "lacks", ()) or ()):
        exports.pop()
        ctx.note("the export takes no project_id (the descriptor's lacks): the exclusions were judged on the whole "
                 "tenant's export only")
    for project, rows in exports:
        for flags in VARIANTS:
            shown = ", ".join([f"project_id={project!r}"] * bool(project) + [f"{k}={v}" for k, v in flags.items()]
                              + ["no include flags (the defaults)"] * (not flags))
            run = ctx.client.export(tenant, **({"project": project} if project else {}), **flags)
            if not run.ok:
                # the rows were taken: an export failing on them emits none (round 24's memd exited 1 on
                # the far expiry, writing its informational date)
                eligible = sum(_expected(rule, flags) for _, rule in rows.values())
                fail(ctx, "omf/export-every-eligible", f"The tenant was seeded by one trusted import with "
                     f"{len(unscoped)} rows unscoped and the same {len(scoped)} lifecycles in project {PROJECT!r} "
                     f"(one expiring at {FAR_MS} ms, in the year 33658). The export with {shown} failed", run,
                     f"a document listing the {eligible} eligible rows")
                continue
            listed = contents(exported_items(run))
            for content, (lc, rule) in rows.items():
                want = _expected(rule, flags)
                n = listed.count(content)
                if n != (1 if want else 0):
                    where = f"project {PROJECT!r}" if content in scoped else "no project"
                    fail(ctx, rule or "omf/export-every-eligible",
                         f"The tenant was seeded by one trusted import with {len(unscoped)} rows unscoped and the same "
                         f"{len(scoped)} lifecycles in project {PROJECT!r}. With {shown}, the row {content!r} "
                         f"({where}, lifecycle {lc or 'defaults'}) is listed {n} time(s)", run,
                         "listed once" if want else "not listed")


#: the pause between spaced writes: past a store's creation-time resolution (a second, SQLite's
#: CURRENT_TIMESTAMP) so the rows cannot share a timestamp_created
SPACED_S = 1.1


#: The rows of omf/export/order, in the order written: neither sorted by content nor by the
#: lifecycle_updated_at_ms each carries (STAMPS).
ORDER = ("mcf order: zulu (first)", "mcf order: alpha (second)", "mcf order: mike (third)", "mcf order: bravo (fourth)")
#: Each row's trusted lifecycle_updated_at_ms, older for each row written later: timestamp_created is
#: when the chunk was written, and no stamp the document carries orders the export (found by the
#: blind red team, round 13: an export ordered by lifecycle_updated_at_ms).
STAMPS = tuple(1_700_000_000_000 + (len(ORDER) - n) * 3_600_000 for n in range(len(ORDER)))


@check("omf/export/order", spec="omf", requirements=("omf/export-order",), bindings=LIVE,
       title="An export lists chunks in ascending creation order")
def order(ctx) -> None:
    """§Export fixes the order by timestamp_created, not its resolution: rows written within one tick
    tie, and ties may come in any order. Rows written back to back that come out in write order pass
    at once; otherwise the rows are written again, SPACED_S apart, and only that order is judged."""
    fast, written, listed = _written_and_exported(ctx, "order", pause=0.0)
    if listed == written:
        return
    _every_row_listed(listed, written)
    ctx.note(f"rows written back to back were exported as {listed}: they may share a timestamp_created, so the "
             f"order is judged on rows written {SPACED_S} s apart")
    run, written, listed = _written_and_exported(ctx, "order-spaced", pause=SPACED_S)
    _every_row_listed(listed, written)
    if listed != written:
        fail(ctx, "omf/export-order", f"Rows written one trusted import at a time, {SPACED_S} s apart, in the order "
             f"{written}, with lifecycle_updated_at_ms {list(STAMPS)} (each older than the row written before it), "
             f"are exported as {listed}", run, f"{written}: ascending timestamp_created, the order the rows were "
             "written (not the order of lifecycle_updated_at_ms or of content)")


def _every_row_listed(listed: list[str], written: list[str]) -> None:
    """The order of rows is seen only in an export that lists each of them once: one that leaves rows
    out (or lists one twice) is omf/export/exclusions' finding (omf/export-every-eligible) and says
    nothing about the order."""
    if sorted(listed) != sorted(written):
        raise NotApplicable(f"the export of the {len(written)} rows written lists {listed}, not each of them "
                            "once, so their order cannot be seen; which rows an export lists is judged by "
                            "omf/export-every-eligible")


def _written_and_exported(ctx: Any, tag: str, *, pause: float) -> tuple[Any, list[str], list[str]]:
    """The export run, the contents written (in order) and those of them the export lists (in its order)."""
    tenant = fresh_tenant(tag)
    written = [own(tenant, label) for label in ORDER]
    for n, (content, stamp) in enumerate(zip(written, STAMPS)):  # one import each: creation order is the order written
        if n and pause:
            time.sleep(pause)
        seed(ctx, tenant, [model.item(content, lifecycle={"lifecycle_updated_at_ms": stamp})])
    run, items = export_doc(ctx, tenant)
    return run, written, [c for c in contents(items) if c in written]


@check("omf/export/project-filter", spec="omf", requirements=("omf/export-project-filter",), bindings=LIVE,
       title="An export with project_id lists only that project's rows")
def project_filter(ctx) -> None:
    tenant = fresh_tenant("projfilter")
    in_p1 = own(tenant, "mcf filter: in p1")
    # p10 begins with p1: a prefix match (round 24's memd) takes it for p1
    seed(ctx, tenant, [model.item(in_p1, project="p1"), model.item(own(tenant, "mcf filter: in p2"), project="p2"),
                       model.item(own(tenant, "mcf filter: in p10"), project="p10"),
                       model.item(own(tenant, "mcf filter: unscoped"), memd=False)])
    run, items = export_doc(ctx, tenant, project="p1")
    if contents(items) != [in_p1]:
        fail(ctx, "omf/export-project-filter", f"An export for project p1 lists {contents(items)}", run,
             f"only [{in_p1!r}]")


#: Rows in one import for the export of many: past the page sizes an exporter may read its store in (100,
#: 500, 1,000, 1,024), where a paging slip loses a row (a blind red team, round 31: the last of each page of 1,000)
MANY = 1_025


@check("omf/export/after-writes", spec="omf", requirements=("omf/export-every-eligible",), bindings=LIVE,
       title="An export lists what the imports before it wrote: all of 1,025 rows, and a project's rows after a "
             "second import into it")
def after_writes(ctx) -> None:
    """Three ways a row is lost on its way out: a project export cached before a later import (round 31:
    answered from the cache), rows past a page boundary, and a row whose text the export cannot encode (a
    lone surrogate that the import took: refusing it is as right, and judged nothing here)."""
    tenant = fresh_tenant("afterw")
    first, second = own(tenant, "mcf after: first"), own(tenant, "mcf after: second")
    seed(ctx, tenant, [model.item(first, project="pc")])
    _, before = export_doc(ctx, tenant, project="pc")  # an exporter that caches keeps this answer
    seed(ctx, tenant, [model.item(second, project="pc")])
    run, items = export_doc(ctx, tenant, project="pc")
    if set(contents(items)) != {first, second}:
        fail(ctx, "omf/export-every-eligible", f"After a second import into project pc, an export for pc lists "
             f"{contents(items)}; the export for pc between the two imports listed {contents(before)}", run,
             f"both rows: [{first!r}, {second!r}]")
    tenant = fresh_tenant("many")
    texts = [own(tenant, f"mcf many {n}") for n in range(MANY)]
    seed(ctx, tenant, [model.item(t) for t in texts])
    run, items = export_doc(ctx, tenant)
    missing = sorted(set(texts) - set(contents(items)), key=texts.index)
    if missing:
        fail(ctx, "omf/export-every-eligible", f"After one import of {MANY} distinct rows, the export lists "
             f"{len(items)} items and leaves out {len(missing)}, the first {missing[:3]} (row "
             f"{texts.index(missing[0]) + 1} of {MANY})", run, f"all {MANY} rows")
    tenant = fresh_tenant("surrogate")
    odd = own(tenant, "mcf lone surrogate")
    body = model.dumps(model.document([model.item(odd + " \ud800 end")]))
    took = ctx.client.import_document(tenant, body.replace("\ud800", "\\ud800"))
    if not took.ok:
        return
    run = ctx.client.export(tenant)
    doc = run.parsed_document()
    listed = [it for it in (doc.get("memories") or []) if isinstance(it, dict)] if isinstance(doc, dict) else []
    if not run.ok or not any(str(it.get("content", "")).startswith(odd) for it in listed):
        fail(ctx, "omf/export-every-eligible", "An import of an item whose content holds a lone surrogate "
             "(\\ud800, legal JSON escape syntax) was accepted, and the export of that tenant then "
             f"{'failed' if not run.ok else 'did not list it'}", run,
             "the export to list every row the import wrote (or the import to refuse what it cannot keep)")
