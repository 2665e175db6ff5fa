"""Supersession edges round-trip (OMF 1.0 §Supersession edges): replayed onto fresh ids when both
sides are in the document, dropped when the other side is not."""

from __future__ import annotations

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import (
    LIVE, cite, fail, fresh_tenant, is_memd, lc_field, memd_field, own, read_back, seed,
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


@check("omf/supersession/chain", spec="omf", requirements=("omf/supersedes-replayed", "omf/superseded-by-derived"),
       bindings=LIVE, title="A chain of three (A <- B <- C) keeps both of B's edges")
def chain(ctx) -> None:
    """The middle of a chain is the older side of one edge and the newer side of another: replaying
    C's edge must not clear B's own supersedes (round 24's memd rewrote the older row's edge pair
    from scratch and lost B -> A)."""
    ctx.credit_only_observed()  # a chain the export does not show is no evidence of its edges
    tenant = fresh_tenant("chain")
    texts = [own(tenant, f"mcf chain: version {n}") for n in (1, 2, 3)]
    ids = [model.uuid7() for _ in texts]
    items = [model.item(texts[0], chunk_id=ids[0], lifecycle={"status": "superseded"}),
             model.item(texts[1], chunk_id=ids[1], lifecycle={"status": "superseded", "supersedes": ids[0]}),
             model.item(texts[2], chunk_id=ids[2], lifecycle={"supersedes": ids[1]})]
    doc = model.document(items)
    seed(ctx, tenant, items)
    after, held = read_back(ctx, tenant)
    rows = [held.get(t) for t in texts]
    now = [memd_field(r, "chunk_id") for r in rows]
    if not all(isinstance(n, str) for n in now):
        raise NotApplicable(f"the export does not show the chain's three chunk_ids ({after.describe()}): its edges "
                            f"cannot be followed; the spec: {cite('omf/supersedes-replayed')}")
    ctx.observed("omf/supersedes-replayed", "omf/superseded-by-derived")
    got = {"B supersedes": lc_field(rows[1], "supersedes"), "C supersedes": lc_field(rows[2], "supersedes"),
           "A superseded_by": lc_field(rows[0], "superseded_by"), "B superseded_by": lc_field(rows[1], "superseded_by")}
    want = {"B supersedes": now[0], "C supersedes": now[1], "A superseded_by": now[1], "B superseded_by": now[2]}
    for edge in got:
        if got[edge] != want[edge]:
            rid = "omf/supersedes-replayed" if edge.endswith(" supersedes") else "omf/superseded-by-derived"
            fail(ctx, rid, f"In the chain A <- B <- C (A, B, C the new ids {now}), {edge} came back {got[edge]!r}",
                 after, f"{want[edge]!r}: each edge replayed onto the fresh ids, B keeping both", sent_doc=doc)


@check("omf/supersession/untrusted", spec="omf", requirements=("omf/untrusted-defaults",), bindings=LIVE,
       title="An untrusted document's supersedes edges are not replayed")
def untrusted(ctx) -> None:
    """supersedes lives in the lifecycle block, the one thing the gate withholds from an untrusted
    producer ("only the extensions.memd.lifecycle block"): its edges land nowhere (round 24's memd read
    them from the raw extension and replayed them)."""
    if not is_memd(ctx):
        raise NotApplicable("a plain OMF consumer keeps no lifecycle: the gate is memd's")
    ctx.credit_only_observed()  # an item missing from the export shows no edge either way
    tenant = fresh_tenant("untrusted-edge")
    older, newer = own(tenant, OLDER), own(tenant, NEWER)
    old_id = model.uuid7()
    items = [model.item(older, chunk_id=old_id), model.item(newer, lifecycle={"supersedes": old_id})]
    doc = model.document(items, trusted=False)
    seed(ctx, tenant, items, trusted=False)
    after, held = read_back(ctx, tenant)
    if older not in held or newer not in held:
        raise NotApplicable(f"the export lists {list(held)}, not both items: the edge cannot be looked for")
    ctx.observed("omf/untrusted-defaults")
    got = {"newer supersedes": lc_field(held[newer], "supersedes"), "older superseded_by": lc_field(held[older],
                                                                                                    "superseded_by")}
    if any(v is not None for v in got.values()):
        fail(ctx, "omf/untrusted-defaults", f"An untrusted document's edge came back as {got}", after,
             "no edge: supersedes is part of the lifecycle block, which an untrusted item's import does not honour "
             "(memd defaults: no supersedes, no superseded_by)", sent_doc=doc)
