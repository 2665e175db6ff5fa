"""What every OMF check shares: fresh tenants, seeding with a trusted import, reading state back with
an export, citing the catalogue, and failure messages that say what was sent, what came back and
what the spec asks (docs/omf.md, "Readings").

State is observed black-box: a check seeds rows with a trusted import (source.app "memd", v 1, an
explicit lifecycle) and reads them back with an export with every include flag true, on a tenant of
its own. A seed or read-back that fails is a precondition: the check skips with the reason (the
operation itself is judged by its own check).
"""

from __future__ import annotations

import json
from typing import Any

from memconform.suite import catalogue as catalogues
from memconform.suite.omf import model
from memconform.suite.omf.client import OmfRun
from memconform.suite.outcomes import NotApplicable

LIVE = ("cli", "http")
FILE = ("file",)
ALL_FLAGS = dict(include_history=True, include_superseded=True, include_expired=True)


def profile(ctx: Any) -> str:
    """The OMF profile the target is judged as (catalogue `profiles`): "memd", bound by everything, or
    "consumer", a plain OMF producer/consumer free to ignore extensions.memd. A check reading an
    import back uses only what the profile promises."""
    return getattr(ctx.client, "profile", None) or "memd"


def is_memd(ctx: Any) -> bool:
    return profile(ctx) == "memd"


def fresh_tenant(tag: str) -> str:
    return model.fresh_tenant(tag)


def own(tenant: str, text: str) -> str:
    """`text` made the tenant's own: a memory text no other tenant (of this run or an earlier one
    against the same store) is sent, so that dedup against another tenant's rows cannot decide what
    a check sees — that is omf/dedup-scope-tenant's finding (omf/import/dedup-tenant), never a
    vanished item charged to whichever check reused a text."""
    return f"{text} #{tenant.rsplit('-', 1)[-1]}"


def cite(rid: str) -> str:
    r = catalogues.load("omf").get(rid)
    return f"{r.id} (§{r.section}, {r.keyword.value}): {r.summary}"


def summarize(doc: Any, limit: int = 600) -> str:
    """A document for a message: its source and each item's content, project and lifecycle claims."""
    if not isinstance(doc, dict):
        return f"a non-document {json.dumps(doc)[:200] if not isinstance(doc, (str, bytes)) else repr(doc[:200])}"
    parts = []
    for it in doc.get("memories", []) if isinstance(doc.get("memories"), list) else []:
        memd = model.memd_extension(it) or {}
        lc = memd.get("lifecycle")
        claims = {k: lc.get(k) for k in ("status", "tier") if k in lc} if isinstance(lc, dict) else lc
        parts.append(f"{json.dumps(it.get('content') if isinstance(it, dict) else it)[:60]}"
                     + (f" project {memd['project_id']!r}" if "project_id" in memd else "")
                     + (f" lifecycle {json.dumps(claims)}" if lc is not None else ""))
    text = (f"OMF document (omf {json.dumps(doc.get('omf'))}, source {json.dumps(doc.get('source'))}, "
            f"{len(parts)} item(s): {'; '.join(parts)})")
    return text if len(text) <= limit else text[:limit] + "…"


def fail(ctx: Any, rid: str, what: str, run: OmfRun | None, expected: str, *, sent_doc: Any = None) -> None:
    """Record a violation of `rid`: what was wrong, what was sent, what came back, what the spec asks."""
    parts = [what.rstrip(".") + "."]
    if sent_doc is not None:
        parts.append(f"Sent: {summarize(sent_doc)}.")
    if run is not None:
        parts.append(f"Came back: {run.describe()}.")
    parts.append(f"Expected: {expected.rstrip('.')}.")
    parts.append(f"The spec: {cite(rid)}")
    ctx.violation(rid, " ".join(parts), sent=(run.sent if run else None) if sent_doc is None else sent_doc,
                  received=_received(run), where=run.operation if run else None)


def _received(run: OmfRun | None) -> Any:
    if run is None:
        return None
    if run.result is not None:
        return run.result
    return run.document if run.document is not None else (run.error or run.stdout or None)


# -- operations ----------------------------------------------------------------------------------------

def send(ctx: Any, tenant: str, doc: Any, **flags: Any) -> OmfRun:
    body = doc if isinstance(doc, (str, bytes)) else model.dumps(doc)
    return ctx.client.import_document(tenant, body, **flags)


def counts_as(ctx: Any, run: OmfRun, want: dict[str, int]) -> bool:
    """The import answered `want`; a consumer need not answer memd's counts at all, only succeed
    (and each of these it does answer must be right)."""
    if not is_memd(ctx):
        shown = run.result if isinstance(run.result, dict) else {}
        return run.ok and all(shown[k] == v for k, v in want.items() if k in shown)
    return counts(run) == want


def counts(run: OmfRun) -> dict[str, int] | None:
    """An import's {imported, duplicates, skipped}, or None when it did not answer them as integers."""
    r = run.result
    if not run.ok or not isinstance(r, dict):
        return None
    got = {k: r.get(k) for k in ("imported", "duplicates", "skipped")}
    return got if all(isinstance(v, int) and not isinstance(v, bool) for v in got.values()) else None


def seed(ctx: Any, tenant: str, items: list[dict[str, Any]], *, trusted: bool = True, **flags: Any) -> OmfRun:
    """Import `items` as a precondition: skip the check when that import does not succeed."""
    doc = model.document(items, trusted)
    run = send(ctx, tenant, doc, **flags)
    if not run.ok:
        raise NotApplicable(f"precondition failed: seeding import of {summarize(doc, 200)} did not succeed "
                            f"({run.describe()}); imports are judged by their own checks")
    return run


def export_doc(ctx: Any, tenant: str, **flags: Any) -> tuple[OmfRun, list[dict[str, Any]]]:
    """Export as a precondition: the run and its items (skip when it gives no usable document)."""
    run = ctx.client.export(tenant, **flags)
    return run, exported_items(run)


def exported_items(run: OmfRun) -> list[dict[str, Any]]:
    """The items of an export run as a precondition (skip when it gives no usable document)."""
    doc = run.parsed_document()
    if not run.ok or not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        raise NotApplicable(f"precondition failed: export did not give a document with a memories array "
                            f"({run.describe()}); the export is judged by its own checks")
    return [it for it in doc["memories"] if isinstance(it, dict)]


def read_back(ctx: Any, tenant: str) -> tuple[OmfRun, dict[str, dict[str, Any]]]:
    """Everything the tenant holds (memd: every include flag true; a consumer has no such flags), by content."""
    run, items = export_doc(ctx, tenant, **(ALL_FLAGS if is_memd(ctx) else {}))
    return run, {it["content"]: it for it in items if isinstance(it.get("content"), str)}


def contents(items: Any) -> list[str]:
    return [it.get("content") for it in (items.values() if isinstance(items, dict) else items)]


class _Absent:
    """What `memd_field` / `lc_field` give for a member the export does not show. It equals
    nothing, itself included, and is no string: a check comparing two members the export left out
    (an id with an edge, a kept id with a fresh one) must not find them equal, and a type test must
    not take it for a value."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "(absent)"

    __str__ = __repr__


ABSENT: Any = _Absent()


#: The members the text types "string or null" / "integer or null". "Missing fields and explicit nulls are
#: equivalent to 'unset'" (the lifecycle block), so a check judging what an import did reads such a member
#: left out of the export as null: an item imported with no expiry may come back without `expires_at_ms`.
#: Whether a memd exporter must write them ("Emitted: yes") is omf/memd-lifecycle's and
#: omf/memd-project-id's alone (omf/export/shape). An item or block the export does not show stays ABSENT.
NULLABLE_MEMD = frozenset({"project_id"})
NULLABLE_LIFECYCLE = frozenset({"supersedes", "superseded_by", "expires_at_ms", "review_after_ms"})


def memd_field(it: dict[str, Any] | None, field: str) -> Any:
    memd = model.memd_extension(it)
    if memd is None:
        return ABSENT
    return memd.get(field, None if field in NULLABLE_MEMD else ABSENT)


def lc_field(it: dict[str, Any] | None, field: str) -> Any:
    memd = model.memd_extension(it)
    lc = memd.get("lifecycle") if memd is not None else None
    if not isinstance(lc, dict):
        return ABSENT
    return lc.get(field, None if field in NULLABLE_LIFECYCLE else ABSENT)


def crashed(run: OmfRun) -> str | None:
    """How a refusal shows the implementation failed rather than judged the input: an HTTP 5xx, or a
    Python traceback on the command line's stderr (None: no sign of a crash)."""
    if run.http_status is not None and run.http_status >= 500:
        return f"HTTP {run.http_status}"
    if "Traceback (most recent call last)" in (run.stderr or "") + (run.error or ""):
        return "a traceback"
    return None


def refused(ctx: Any, rid: str, tenant: str, doc: Any, run: OmfRun, why: str, *,
            may_keep: tuple[str, ...] = ()) -> None:
    """A document that must fail validation: refused, and nothing from it written — but the items
    `may_keep` names (those before the bad one, where the text leaves the import's atomicity open)."""
    nothing = ("nothing written" if not may_keep else
               f"nothing written but, at most, the item(s) before the bad one ({', '.join(map(repr, may_keep))})")
    if run.ok:
        fail(ctx, rid, f"A document that {why} was accepted", run,
             f"the import refused (validation error: non-zero exit / HTTP 4xx) and {nothing}", sent_doc=doc)
        return
    crash = crashed(run)
    if crash:
        # a crash is no validation error: the caller cannot tell its document is at fault (and may retry
        # it as is); found by a blind red team (round 31): a non-object item answered 500
        fail(ctx, rid, f"A document that {why} was answered with {crash}, not refused as invalid", run,
             f"a validation error (HTTP 4xx with the error body, a non-zero exit printing the error object) and "
             f"{nothing}", sent_doc=doc)
    after, held = read_back(ctx, tenant)
    if [c for c in contents(held) if c not in may_keep]:
        fail(ctx, rid, f"The import of a document that {why} was refused, but an export afterwards lists "
             f"{contents(held)}", after, f"{nothing} from a refused document", sent_doc=doc)
