"""Supersession edges round-trip (OMF 1.0 §Supersession edges): replayed onto fresh ids when both
sides are in the document, dropped when the other side is not."""

from __future__ import annotations

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import (
    LIVE, cite, fail, fresh_tenant, lc_field, memd_field, own, read_back, seed,
)
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check

OLDER, NEWER = "mcf edge: the older fact", "mcf edge: the newer fact"


@check("omf/supersession/replayed", spec="omf",
       requirements=("omf/supersedes-replayed", "omf/superseded-by-derived", "omf/fresh-chunk-id"), bindings=LIVE,
       title="A supersedes edge is replayed across the fresh ids; superseded_by is derived from it")
def replayed(ctx) -> None:
    ctx.credit_only_observed()  # an item missing from the export, or without a chunk_id, shows no edge / fresh id
    # Both orders: the older side first (as memd's own export writes them), and the newer side first,
    # whose edge names an item later in the document (found by the blind red team: a one-pass replay
    # lost it). Pass 2 replays every edge once every item is written.
    for newer_first in (False, True):
        _replayed(ctx, newer_first)


def _replayed(ctx, newer_first: bool) -> None:
    order = "the newer side first in the document" if newer_first else "the older side first"
    tenant = fresh_tenant("edge")
    older, newer = own(tenant, OLDER), own(tenant, NEWER)
    old_id, new_id = model.uuid7(), model.uuid7()
    # The older side's superseded_by is left null on purpose: the target must derive it from the
    # newer side's supersedes, not copy it.
    items = [model.item(older, chunk_id=old_id, lifecycle={"status": "superseded"}),
             model.item(newer, chunk_id=new_id, lifecycle={"supersedes": old_id})]
    if newer_first:
        items.reverse()
    doc = model.document(items)
    seed(ctx, tenant, items)
    after, held = read_back(ctx, tenant)
    old, new = held.get(older), held.get(newer)
    if old is None or new is None:
        fail(ctx, "omf/supersedes-replayed", f"The export lists {list(held)}", after, "both sides of the edge",
             sent_doc=doc)
        ctx.note("a side of the edge is missing from the export: superseded_by and the fresh ids were not read")
        return
    old_now, new_now = memd_field(old, "chunk_id"), memd_field(new, "chunk_id")
    supersedes, superseded_by = lc_field(new, "supersedes"), lc_field(old, "superseded_by")
    if not any(isinstance(v, str) for v in (old_now, new_now, supersedes, superseded_by)):
        # Neither ids nor edges shown: nothing of the replay was observed (their presence is
        # omf/memd-chunk-id's and omf/memd-lifecycle's, judged by omf/export/shape).
        raise NotApplicable(f"the export shows neither extensions.memd.chunk_id nor a supersedes / superseded_by "
                            f"edge on either item ({after.describe()}), so the replay of the edge cannot be seen; "
                            f"the spec: {cite('omf/supersedes-replayed')}")
    ctx.observed("omf/supersedes-replayed", "omf/superseded-by-derived")  # each compared below, absent or not
    if isinstance(old_now, str) or isinstance(new_now, str):
        ctx.observed("omf/fresh-chunk-id")
    else:
        ctx.note("the export shows neither item's chunk_id: whether the import minted fresh ones was not seen")
    for content, before, now in ((older, old_id, old_now), (newer, new_id, new_now)):
        if now == before:
            fail(ctx, "omf/fresh-chunk-id", f"{content!r} kept its source chunk_id {before!r}", after,
                 "a freshly minted chunk_id", sent_doc=doc)
    # An edge counts as replayed only onto an id the export shows: two missing values are not equal.
    if not (isinstance(old_now, str) and supersedes == old_now):
        fail(ctx, "omf/supersedes-replayed", f"The newer side's supersedes is {supersedes!r}; the older side's new "
             f"chunk_id is {old_now!r} ({order})", after, "supersedes = the older side's new id (a chunk_id string)",
             sent_doc=doc)
    if not (isinstance(new_now, str) and superseded_by == new_now):
        fail(ctx, "omf/superseded-by-derived", f"The older side's superseded_by is {superseded_by!r}; the newer "
             f"side's new chunk_id is {new_now!r} ({order})", after,
             "superseded_by = the newer side's new id (derived from its supersedes)", sent_doc=doc)


@check("omf/supersession/orphans", spec="omf", requirements=("omf/orphan-edge-dropped",), bindings=LIVE,
       title="Edges whose other side is not in the document are dropped; the status is kept")
def orphans(ctx) -> None:
    tenant = fresh_tenant("orphan")
    older, newer = own(tenant, OLDER), own(tenant, NEWER)
    gone_a, gone_b = model.uuid7(), model.uuid7()
    items = [model.item(older, lifecycle={"status": "superseded", "superseded_by": gone_a}),
             model.item(newer, lifecycle={"supersedes": gone_b})]
    doc = model.document(items)
    seed(ctx, tenant, items)
    after, held = read_back(ctx, tenant)
    got = {"old status": lc_field(held.get(older), "status"), "old superseded_by": lc_field(held.get(older), "superseded_by"),
           "new supersedes": lc_field(held.get(newer), "supersedes")}
    want = {"old status": "superseded", "old superseded_by": None, "new supersedes": None}
    if got != want:
        fail(ctx, "omf/orphan-edge-dropped", f"Edges to ids outside the document came back as {got}", after,
             f"{want}: the edges dropped, the parsed status kept", sent_doc=doc)
