"""Envelope and item validation on import (OMF 1.0 §Envelope, §Item): what must be refused as a whole,
and what must be accepted. Each bad document goes to a tenant of its own, which an export then shows empty."""

from __future__ import annotations

from typing import Any

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import (
    LIVE, counts_as, export_doc, fail, fresh_tenant, own, read_back, refused, send,
)
from memconform.suite.registry import check

GOOD = "mcf validation: a valid item beside the bad one"


@check("omf/validation/omf-version", spec="omf", requirements=("omf/omf-version-gated",), bindings=LIVE,
       title="A document whose omf is not exactly \"1.0\" is refused and nothing is written")
def omf_version(ctx) -> None:
    for version in ("1.1", "2.0", 1.0, None):
        tenant = fresh_tenant("omfver")
        doc = model.document([model.item(own(tenant, GOOD))], omf=version)
        if version is None:
            del doc["omf"]
        refused(ctx, "omf/omf-version-gated", tenant, doc, send(ctx, tenant, doc),
                f"has omf {'missing' if version is None else repr(version)}")


@check("omf/validation/bad-input", spec="omf",
       requirements=("omf/memories-required", "omf/content-required", "omf/malformed-document-refused"),
       bindings=LIVE, title="Malformed JSON, a missing memories array and mistyped members are refused whole")
def bad_input(ctx) -> None:
    for n in range(len(_bad_inputs(GOOD))):
        tenant = fresh_tenant("badin")
        rid, doc, why = _bad_inputs(own(tenant, GOOD))[n]
        refused(ctx, rid, tenant, doc, send(ctx, tenant, doc), why)


def _bad_inputs(good_text: str) -> list[tuple[str, Any, str]]:
    """(requirement, document, what is wrong with it): each beside a valid item where it has items."""
    good = model.item(good_text)
    no_memories = model.document([])
    del no_memories["memories"]
    no_content = model.item("x")
    del no_content["content"]
    return [
        ("omf/memories-required", no_memories, "has no memories key"),
        ("omf/memories-required", model.document([], memories={"0": good}), "has memories as an object"),
        ("omf/content-required", model.document([good, no_content]), "has an item without content"),
        ("omf/content-required", model.document([good, model.item(5)]), "has an item whose content is a number"),
        ("omf/malformed-document-refused", '{"omf": "1.0", "memories": [', "is not JSON (cut short)"),
        ("omf/malformed-document-refused", "", "is empty"),
        ("omf/malformed-document-refused", model.document([good, model.item("t", tags="one")]),
         "has tags as a string"),
        ("omf/malformed-document-refused", model.document([good, model.item("t", tags=["a", 7])]),
         "has a tag that is a number"),
        ("omf/malformed-document-refused", model.document([good, "just text"]), "has an item that is a string"),
        # and the other JSON values an item cannot be (a blind red team, round 31: a number answered 500)
        ("omf/malformed-document-refused", model.document([good, 1]), "has an item that is a number"),
        ("omf/malformed-document-refused", model.document([good, None]), "has an item that is null"),
        ("omf/malformed-document-refused", model.dumps(model.document([good, model.item("caf\u00e9")])).replace(
            "caf\u00e9", "caf\udce9").encode("utf-8", "surrogateescape"), "is not UTF-8 (a Latin-1 byte 0xE9)"),
    ]


@check("omf/validation/content-not-blank", spec="omf", requirements=("omf/content-not-blank",), bindings=LIVE,
       title="An item with empty or whitespace-only content fails validation; nothing is written")
def content_not_blank(ctx) -> None:
    # white space beyond ASCII too (U+00A0, U+3000, U+2003: Unicode's White_Space, what memd's trim
    # reads; found by the blind red team: a blank test that knew ASCII only)
    for blank in ("", "   ", "\t\n", "\u00a0\u3000\u2003"):
        tenant = fresh_tenant("blank")
        doc = model.document([model.item(own(tenant, GOOD)), model.item(blank)])
        refused(ctx, "omf/content-not-blank", tenant, doc, send(ctx, tenant, doc),
                f"has an item with content {blank!r}")


@check("omf/validation/empty-memories", spec="omf", requirements=("omf/memories-empty-valid",), bindings=LIVE,
       title="An empty memories array imports with zero counts; an empty tenant exports memories: []")
def empty_memories(ctx) -> None:
    tenant = fresh_tenant("empty")
    doc = model.document([])
    run = send(ctx, tenant, doc)
    if not counts_as(ctx, run, {"imported": 0, "duplicates": 0, "skipped": 0}):
        fail(ctx, "omf/memories-empty-valid", "An empty memories array did not import as nothing", run,
             '{"imported": 0, "duplicates": 0, "skipped": 0}', sent_doc=doc)
    exp = ctx.client.export(fresh_tenant("empty"))
    parsed = exp.parsed_document()
    if not exp.ok or not isinstance(parsed, dict) or parsed.get("memories") != []:
        fail(ctx, "omf/memories-empty-valid", "The export of a tenant that holds nothing is not an envelope "
             "with an empty memories array", exp, 'a valid envelope with "memories": []')


@check("omf/validation/exported-at-not-interpreted", spec="omf", requirements=("omf/exported-at-not-interpreted",),
       bindings=LIVE, title="exported_at is not interpreted on import: an old one imports like a new one")
def exported_at_not_interpreted(ctx) -> None:
    for stamp in ("2001-01-01T00:00:00Z", "2099-12-31T23:59:59Z"):
        tenant = fresh_tenant("expat")
        content = own(tenant, f"mcf exported_at {stamp}")
        doc = model.document([model.item(content)], exported_at=stamp)
        run = send(ctx, tenant, doc)
        if not counts_as(ctx, run, {"imported": 1, "duplicates": 0, "skipped": 0}):
            fail(ctx, "omf/exported-at-not-interpreted", f"A document with exported_at {stamp} did not import "
                 "its one item", run, '{"imported": 1, "duplicates": 0, "skipped": 0}', sent_doc=doc)
            continue
        after, held = read_back(ctx, tenant)
        if list(held) != [content]:
            fail(ctx, "omf/exported-at-not-interpreted", f"After importing with exported_at {stamp} the tenant "
                 f"holds {list(held)}", after, "the one item", sent_doc=doc)
