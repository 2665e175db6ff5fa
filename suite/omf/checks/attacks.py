"""Attacks (issue 14) on an OMF implementation: what a hostile (or merely large) document does.

* omf/large-document-answered (SHOULD, security): a preview of a document of 10,000 one-word items
  (about 0.45 MB) is answered — its counts, or a refusal with the implementation's error (HTTP 413 or
  4xx, a non-zero exit with the error object) — never a crash (HTTP 5xx, a traceback, an exit
  without the error object). A preview writes nothing, so the probe leaves no trace in the store.
"""

from __future__ import annotations

from memconform.suite.omf import model
from memconform.suite.omf.checks._common import LIVE, fail, fresh_tenant, send
from memconform.suite.registry import check

#: Items of the large document: many small ones, the shape that costs a parser most per byte.
LARGE_ITEMS = 10_000


@check("omf/attacks/large-document", spec="omf", requirements=("omf/large-document-answered",), bindings=LIVE,
       title="A preview of a document of 10,000 items is answered (counts or a refusal), never a crash (SHOULD)")
def large_document(ctx) -> None:
    tenant = fresh_tenant("large")
    doc = model.document([model.item(f"mcf large {n}") for n in range(LARGE_ITEMS)])
    run = send(ctx, tenant, doc, dry_run=True)
    expected = ("the preview's counts, or a refusal in the implementation's error form (HTTP 413 or another 4xx with "
                "the error body; a non-zero exit printing the error object): a large document must not take the "
                "implementation down")
    what = f"A preview of a document of {LARGE_ITEMS} items ({len(model.dumps(doc))} bytes)"
    if run.http_status is not None and run.http_status >= 500:
        fail(ctx, "omf/large-document-answered", f"{what} got HTTP {run.http_status}", run, expected)
    elif "Traceback (most recent call last)" in (run.stderr or "") + (run.error or ""):
        fail(ctx, "omf/large-document-answered", f"{what} ended in a traceback", run, expected)
    elif not run.ok and run.http_status is None and not isinstance(run.result, dict):
        fail(ctx, "omf/large-document-answered", f"{what} exited {run.exit_code} without the error object", run,
             expected)
