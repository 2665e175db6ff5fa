"""The trust gate (OMF 1.0 §Trust gate, §Compatibility): lifecycle is honoured only for source.app
"memd" with extensions.memd.v == 1; everything else lands at memd defaults, while content, tags,
project, chunk_type and ingestion_mode still flow in."""

from __future__ import annotations

from typing import Any

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import (
    LIVE, fail, fresh_tenant, is_memd, lc_field, memd_field, own, read_back, seed, send,
)
from memconform.suite.outcomes import NotApplicable
from memconform.suite.registry import check

#: Producers that are not "memd" to an exact comparison (OMF 1.0 §Trust gate: `source.app == "memd"`),
#: though a case-insensitive or whitespace-trimming one would take them for it.
LOOKALIKE_APPS = ("MEMD", "Memd", "memd ")

#: What an untrusted item claims: everything the gate must refuse to honour.
CLAIMS = {"status": "expired", "tier": "history", "expires_at_ms": 1_000, "review_after_ms": 2_000}


def _defaults(ctx: Any, rid: str, it: dict[str, Any] | None, run: Any, why: str, doc: Any) -> None:
    got = {k: lc_field(it, k) for k in model.DEFAULT_LIFECYCLE}
    if it is None or got != model.DEFAULT_LIFECYCLE:
        fail(ctx, rid, f"An item {why} was read back with lifecycle {got if it else '(not exported)'}", run,
             f"the memd defaults {model.DEFAULT_LIFECYCLE}", sent_doc=doc)


@check("omf/trust/untrusted-defaults", spec="omf",
       requirements=("omf/trust-gate", "omf/untrusted-defaults", "omf/source-optional", "omf/memd-v-gated"),
       bindings=LIVE, title="An untrusted item claiming tier=history / status=expired imports with defaults")
def untrusted_defaults(ctx) -> None:
    tenant = fresh_tenant("untrust")
    # The last member: whether the document may be refused instead. v is typed integer, so a v that is
    # no integer is untrusted to one reader and a mistyped member to another (omf-v-typed): refused is
    # fine then, as long as nothing of it is written.
    variants = [
        ("omf/untrusted-defaults", "from a third-party source", dict(trusted=False), {}, False),
        ("omf/source-optional", "from a document without source", dict(source=None), {}, False),
        ("omf/memd-v-gated", "from memd with extensions.memd.v 2", {}, dict(v=2), False),
        ("omf/memd-v-gated", "from memd with extensions.memd.v \"1\" (a string)", {}, dict(v="1"), True),
        # JSON's true is a boolean, no number: not 1, whatever a language's loose == says (found by the
        # blind red team, round 13). 1.0 is not sent: JSON has one number type, and the text does not
        # say whether 1.0 is the integer 1 (a JavaScript reader cannot tell them apart).
        ("omf/memd-v-gated", "from memd with extensions.memd.v true (a boolean)", {}, dict(v=True), True),
        ("omf/trust-gate", "from memd without extensions.memd.v", {}, dict(v=model.OMIT), False),
        # `source.app == "memd"` is an exact comparison: another case or a trailing space is another app.
        *(("omf/trust-gate", f"from source.app {app!r} (not exactly \"memd\") with extensions.memd.v 1",
           dict(source={"app": app}), {}, False) for app in LOOKALIKE_APPS),
    ]
    if not is_memd(ctx):
        # A plain consumer has no lifecycle to show: what binds it is that a document without source imports.
        variants = [v for v in variants if v[0] == "omf/source-optional"]
    sent = []
    for i, (rid, why, doc_kw, item_kw, may_refuse) in enumerate(variants):
        doc = model.document([model.item(own(tenant, f"mcf untrusted {i}"), lifecycle=CLAIMS, **item_kw)], **doc_kw)
        run = send(ctx, tenant, doc)
        if not run.ok and not may_refuse:
            fail(ctx, rid, f"An item {why} was refused", run, "it imports (with the default lifecycle)", sent_doc=doc)
        sent.append((rid, why, doc, run.ok))
    if not is_memd(ctx):
        return
    after, held = read_back(ctx, tenant)
    for i, (rid, why, doc, imported) in enumerate(sent):
        content = own(tenant, f"mcf untrusted {i}")
        if imported:
            _defaults(ctx, rid, held.get(content), after, f"{why} claiming {CLAIMS}", doc)
        elif content in held:
            fail(ctx, rid, f"The import of an item {why} was refused, yet the item is in the export", after,
                 "refused with nothing written, or imported with the default lifecycle", sent_doc=doc)
        else:
            ctx.note(f"the import of an item {why} was refused with nothing written (a reader typing "
                     "extensions.memd.v as an integer may refuse it): whether that v would have been trusted was "
                     "not seen")


@check("omf/trust/v-per-item", spec="omf", requirements=("omf/memd-v-gated", "omf/lifecycle-honoured"),
       bindings=LIVE, title="The gate reads each item's own extensions.memd.v: items of v 1 and v 2 in one document")
def v_per_item(ctx) -> None:
    """extensions.memd.v is a member of each item: one document mixing v 1 and v 2 items, in both orders,
    honours the lifecycle of the v 1 items and gives the v 2 items the defaults (a blind red team's
    memd read v from the first item and applied it to the whole document, round 24)."""
    if not is_memd(ctx):
        raise NotApplicable("a plain OMF consumer keeps no lifecycle: the gate's v is memd's")
    tenant = fresh_tenant("vmix")
    honoured = {"status": "draft", "tier": "working"}
    order = [("trusted first", [("one", honoured, 1), ("two", CLAIMS, 2)]),
             ("untrusted first", [("three", CLAIMS, 2), ("four", honoured, 1)])]
    sent = []
    for why, items in order:
        doc = model.document([model.item(own(tenant, f"mcf vmix {n}"), lifecycle=lc, v=v) for n, lc, v in items])
        run = send(ctx, tenant, doc)
        if not run.ok:
            fail(ctx, "omf/memd-v-gated", f"A document of items of v 1 and v 2 ({why}) was refused", run,
                 "it imports: each item's v decides whether its lifecycle is honoured", sent_doc=doc)
            continue
        sent.append((why, items, doc))
    after, held = read_back(ctx, tenant)
    for why, items, doc in sent:
        for n, lc, v in items:
            content = own(tenant, f"mcf vmix {n}")
            if v == 1:
                got = {k: lc_field(held.get(content), k) for k in honoured}
                if got != honoured:
                    fail(ctx, "omf/lifecycle-honoured", f"The v 1 item {content!r} of a document mixing v 1 and v 2 "
                         f"items ({why}) was read back with lifecycle {got}", after,
                         f"its own lifecycle {honoured}: its extensions.memd.v is 1", sent_doc=doc)
            else:
                _defaults(ctx, "omf/memd-v-gated", held.get(content), after,
                          f"of extensions.memd.v 2 in a document whose other item is v 1 ({why}), claiming {CLAIMS}",
                          doc)


@check("omf/trust/lifecycle-honoured", spec="omf", requirements=("omf/trust-gate", "omf/lifecycle-honoured"),
       bindings=LIVE, title="A trusted import keeps status, tier, expiry, review and lifecycle_updated_at_ms")
def lifecycle_honoured(ctx) -> None:
    tenant = fresh_tenant("trusted")
    future = model.now_ms() + 30 * 86_400_000
    wanted = {
        own(tenant, "mcf trusted draft"): dict(status="draft", tier="working", expires_at_ms=future,
                                               review_after_ms=future, lifecycle_updated_at_ms=1_700_000_000_000),
        own(tenant, "mcf trusted history"): dict(status="expired", tier="history", expires_at_ms=1_000,
                                                 review_after_ms=None, lifecycle_updated_at_ms=1_700_000_000_001),
    }
    run = seed(ctx, tenant, [model.item(c, lifecycle=lc) for c, lc in wanted.items()])
    after, held = read_back(ctx, tenant)
    for content, lc in wanted.items():
        got = {k: lc_field(held.get(content), k) for k in lc}
        if got != lc:
            rid = "omf/lifecycle-honoured" if content in held else "omf/trust-gate"
            fail(ctx, rid, f"The trusted item {content!r} was read back with lifecycle {got}", after,
                 f"the lifecycle it was imported with: {lc}", sent_doc=model.document([model.item(content, lifecycle=lc)]))
    del run


@check("omf/trust/untrusted-fields-flow", spec="omf",
       requirements=("omf/untrusted-fields-flow", "omf/tags-verbatim", "omf/category-fallback-project"),
       bindings=LIVE, title="From an untrusted producer, content, tags, project, type and mode still flow in")
def untrusted_fields_flow(ctx) -> None:
    ctx.credit_only_observed()  # items missing from the export show neither their tags nor their project
    tenant = fresh_tenant("flow")
    # Mixed case, out of sorted order, one string twice: verbatim is the array as given (its strings,
    # their order, the repeat), which a store keeping a set (sorted, de-duplicated) loses.
    tags = ["z-Tag 2", "a-tag", "Z-tag", "a-tag"]
    scoped, category = own(tenant, "mcf flow: scoped"), own(tenant, "mcf flow: category")
    items = [model.item(scoped, project="proj-flow", tags=tags,
                        chunk_type="code", ingestion_mode="conversation", lifecycle=CLAIMS),
             model.item(category, category="cat-flow", tags=[], lifecycle=CLAIMS)]
    doc = model.document(items, trusted=False)
    seed(ctx, tenant, items, trusted=False)
    after, held = read_back(ctx, tenant)
    a, b = held.get(scoped), held.get(category)
    if (a is None or b is None) and not is_memd(ctx):
        raise NotApplicable(f"the export after the import lists {list(held)}, not both items, so their tags cannot "
                            "be read back; whether a plain consumer ingests documents is judged by omf/import/nanomem")
    if a is None or b is None:
        fail(ctx, "omf/untrusted-fields-flow", f"Items of an untrusted document are missing from the export "
             f"(it holds {list(held)})", after, "both items, with their content", sent_doc=doc)
        ctx.note("an item of the untrusted document is missing from the export: its tags and project were not read")
        return
    ctx.observed("omf/tags-verbatim")
    got_tags = a.get("tags")
    if got_tags != tags:
        fail(ctx, "omf/tags-verbatim", f"The untrusted item {scoped!r} was imported with tags {tags}; the export "
             f"shows {got_tags!r}", after,
             f"exactly {tags}: the same strings, unaltered, in the order sent, the repeat kept", sent_doc=doc)
    if not is_memd(ctx):
        ctx.note("judged as a plain OMF consumer: project, type and mode are memd's extension")
        return  # a plain consumer promises the tags; project, type and mode are memd's extension
    ctx.observed("omf/untrusted-fields-flow", "omf/category-fallback-project")
    got = {k: memd_field(a, k) for k in ("project_id", "chunk_type", "ingestion_mode")}
    want = {"project_id": "proj-flow", "chunk_type": "code", "ingestion_mode": "conversation"}
    if got != want:
        fail(ctx, "omf/untrusted-fields-flow", f"An untrusted item's project, type and mode came back as {got}",
             after, f"{want}: they flow in whatever the trust", sent_doc=doc)
    if memd_field(b, "project_id") != "cat-flow":
        fail(ctx, "omf/category-fallback-project", f"An untrusted item with category 'cat-flow' and no "
             f"project_id landed in project {memd_field(b, 'project_id')!r}", after, "project 'cat-flow'", sent_doc=doc)


@check("omf/trust/unknown-type-mode", spec="omf", requirements=("omf/chunk-type-import", "omf/ingestion-mode-import"),
       bindings=LIVE, title="Unknown chunk_type becomes doc, unknown ingestion_mode becomes document")
def unknown_type_mode(ctx) -> None:
    """Each unknown value in an item of its own (the other member known), so that an import refusing
    it is charged to the member it refused: "Unknown → defaults to doc" / "→ import default" makes an
    unknown value no reason to refuse the item. The known pair is the control (a precondition)."""
    tenant = fresh_tenant("typemode")
    known = {own(tenant, "mcf type: known"): (True, "decision", "conversation", "decision", "conversation")}
    seed(ctx, tenant, [model.item(own(tenant, "mcf type: known"), chunk_type="decision",
                                  ingestion_mode="conversation")])
    cases = {own(tenant, "mcf type: unknown trusted"): (True, "blob", "conversation", "doc", "conversation"),
             own(tenant, "mcf type: unknown untrusted"): (False, "Code!", "conversation", "doc", "conversation"),
             own(tenant, "mcf mode: unknown trusted"): (True, "decision", "chat", "decision", "document"),
             own(tenant, "mcf mode: unknown untrusted"): (False, "decision", "streaming", "decision", "document")}
    refused = set()
    for content, (trusted, ct, im, _, _) in cases.items():
        doc = model.document([model.item(content, chunk_type=ct, ingestion_mode=im)], trusted)
        run = send(ctx, tenant, doc)
        if not run.ok:
            refused.add(content)
            rid, member = (("omf/chunk-type-import", f"chunk_type {ct!r}") if content.startswith("mcf type")
                           else ("omf/ingestion-mode-import", f"ingestion_mode {im!r}"))
            fail(ctx, rid, f"An import of one item with the unknown {member} was refused", run,
                 "the item imported, the unknown value read as the default", sent_doc=doc)
    after, held = read_back(ctx, tenant)
    for content, (trusted, ct, im, want_ct, want_im) in {**known, **cases}.items():
        if content in refused:
            continue
        it = held.get(content)
        doc = model.document([model.item(content, chunk_type=ct, ingestion_mode=im)], trusted)
        if memd_field(it, "chunk_type") != want_ct:
            fail(ctx, "omf/chunk-type-import", f"chunk_type {ct!r} landed as {memd_field(it, 'chunk_type')!r}",
                 after, f"chunk_type {want_ct!r}", sent_doc=doc)
        if memd_field(it, "ingestion_mode") != want_im:
            fail(ctx, "omf/ingestion-mode-import", f"ingestion_mode {im!r} landed as "
                 f"{memd_field(it, 'ingestion_mode')!r}", after, f"ingestion_mode {want_im!r}", sent_doc=doc)


@check("omf/trust/status-informational", spec="omf", requirements=("omf/status-informational",), bindings=LIVE,
       title="An item's top-level status never by itself sets the lifecycle status")
def status_informational(ctx) -> None:
    tenant = fresh_tenant("status")
    cases = [(own(tenant, "mcf status: untrusted superseded"), False, "superseded", None),
             (own(tenant, "mcf status: untrusted draft"), False, "draft", None),
             (own(tenant, "mcf status: trusted final"), True, "expired", {"status": "final"})]
    for content, trusted, status, lc in cases:
        seed(ctx, tenant, [model.item(content, status=status, lifecycle=lc)], trusted=trusted)
    after, held = read_back(ctx, tenant)
    for content, trusted, status, lc in cases:
        got = lc_field(held.get(content), "status")
        if got != "final":
            fail(ctx, "omf/status-informational", f"An item with top-level status {status!r} "
                 f"({'trusted, lifecycle final' if trusted else 'untrusted'}) landed with lifecycle status {got!r}",
                 after, "lifecycle status final", sent_doc=model.document([model.item(content, status=status,
                                                                                      lifecycle=lc)], trusted))


@check("omf/trust/untrusted-lifecycle-not-parsed", spec="omf", requirements=("omf/untrusted-lifecycle-not-parsed",),
       bindings=LIVE, title="A malformed lifecycle in an untrusted item is ignored, not an error")
def untrusted_lifecycle_not_parsed(ctx) -> None:
    tenant = fresh_tenant("unparsed")
    bad = {own(tenant, "mcf unparsed: string"): "final", own(tenant, "mcf unparsed: tier"): {"tier": "bogus"},
           own(tenant, "mcf unparsed: ms"): {"expires_at_ms": "soon"}}
    for content, lc in bad.items():
        doc = model.document([model.item(content, lifecycle=lc)], trusted=False)
        run = send(ctx, tenant, doc)
        if not run.ok:
            fail(ctx, "omf/untrusted-lifecycle-not-parsed", "An untrusted document with a malformed lifecycle "
                 "was refused", run, "it imports with the default lifecycle (the block is not parsed)", sent_doc=doc)
    after, held = read_back(ctx, tenant)
    for content, lc in bad.items():
        _defaults(ctx, "omf/untrusted-lifecycle-not-parsed", held.get(content), after,
                  f"untrusted with lifecycle {lc!r}", model.document([model.item(content, lifecycle=lc)], False))
