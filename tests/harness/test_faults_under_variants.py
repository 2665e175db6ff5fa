"""A fault under a legitimate variant of its spec: still caught, on its own requirements.

An audit ran every fault with the variants of its spec, through the checks that name the fault's
requirements only (as test_faults.py runs a fault). Where a combination changed the verdict it was one of:
a reading that leaves the check blind to the bug (the check then had to learn to see it), a fault of the
reference whose wrap did not combine with the variant (the combined server had no bug, or crashed), a bug
charged to another requirement, or a reading under which the bug is allowed or cannot be seen at all (the
check must then say so, never pass in silence).

FAULT_UNDER_VARIANT: the combinations that must fail exactly these MUST requirements. INHERENT: those where
the reading takes the bug away or out of view; each stays without a failure beyond the fault's own breaks,
and a check naming every break left unfailed says why it did not judge it (a skip's reason, a note in its
reason, or not_judged)."""

from __future__ import annotations

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.targets.reference import _LIVE_BY_SPEC

from .helpers import failed_requirements, observing_checks, run_suite

#: (fault, variant) -> the MUST requirements the combination fails (those the audit found changed, fixed).
FAULT_UNDER_VARIANT: dict[tuple[str, str], set[str]] = {
    # no created_at shown: superseded_at is judged against the server's clock read from a task's expires_at
    ("memoturn-superseded-at-own-creation", "memoturn-no-created-at"): {"memoturn/supersession-same-transaction"},
    # the reference's bundle packed the fault's strings into embeddings.bin and crashed
    ("oams-file-embedding-strings", "oams-export-embeddings-bin"): {"oams/embedding-floats"},
    ("oams-file-embedding-strings", "oams-export-embeddings-bin-keyed"): {"oams/embedding-floats"},
    # the fault's fallback hung on a refusal an idempotent FORGET never makes
    ("oams-forget-falls-back-to-owner", "oams-forget-unknown-ok"): {"oams/forget-gone"},
    # the fault's wrap crashed (500) on the {"items": …} page, charged to list-endpoint
    ("oams-list-ascending", "oams-list-items-envelope"): {"oams/list-sorted", "oams/list-paging"},
    # pages of two whatever the limit honour 3 and 2 by themselves: a walk with limit 1 sees an ignored limit
    ("oams-list-ignores-limit", "oams-list-short-pages"): {"oams/list-paging"},
    # the fault's wrap changed the {"memories": …} object instead of the memories in it
    ("oams-recall-drops-source-id", "oams-recall-object-envelope"): {"oams/export-keeps-source-id"},
    # rows written after the walk: the fault kept nothing of a refused import
    ("omf-partial-write-on-invalid", "omf-dedup-stored-rows-only"): {
        "omf/content-not-blank", "omf/content-required", "omf/malformed-document-refused"},
    # the two UPP faults hung on the -32001 a server answering [] for an unknown user never raises
    ("upp-deleted-user-internal-error", "upp-unknown-user-empty"): {"upp/delete-all"},
    ("upp-unknown-user-invalid-params", "upp-unknown-user-empty"): {
        "upp/retrieve-unknown-user", "upp/get-events-unknown-user", "upp/export-unknown-user"},
    # what was never stored is ingest's failure, not retrieve's (retrieve-finds-stored was blamed)
    ("upp-ingest-not-persisted", "upp-unknown-user-empty"): {"upp/ingest-persists", "upp/events-retained"},
    # a server hiding sensitive tiers from retrieve: the probes include a public event (and a long query)
    ("upp-retrieve-all-users", "upp-retrieve-hides-sensitive"): {"upp/entity-isolation"},
    ("upp-retrieve-drops-long-queries", "upp-retrieve-hides-sensitive"): {"upp/retrieve-finds-stored"},
    ("upp-retrieve-drops-long-queries", "upp-stricter-sensitivity"): {"upp/retrieve-finds-stored"},
    # duplicates skipped within one user's import: the crowd is spread over other users
    ("upp-retrieve-top-then-user", "upp-import-skips-duplicates"): {"upp/retrieve-finds-stored"},
    # imports keeping the package's status decide nothing: the events are also ingested
    ("upp-supersedes-as-staged", "upp-import-keeps-status"): {"upp/supersession-new-valid", "upp/high-confidence-valid"},
    # every subscription kept for the session, its notices naming none: the leaks are told apart by what
    # each open subscription asked for and as whom (round 29)
    ("subscribe-every-change", "mcp-subscribe-for-session"): {"ump/subscribe-stream", "ump/cap-token-scope"},
    # a forgotten record whose valid time ended too is left out of a recall at now by that alone: the
    # multi-kind recall is also made at an instant it was valid
    ("forget-visible-multi-kind-recall", "forget-ends-valid-time"): {"ump/forget-excluded-from-recall"},
    # a patch member replacing the prior's whole (a scope of the owner or project alone) was refused as
    # invalid, and the escape unseen: the patch carries the whole scope
    ("revise-owner-escape", "revise-patch-replaces"): {"ump/cap-token-issuer-owner"},
    ("revise-scope-escape", "revise-patch-replaces"): {"ump/cap-token-scope"},
    # the fault's wrap rewrote only isError results: an envelope carried as output kept its code (the
    # interop class mcp-errors-iserror is the reading's own, not required)
    ("mcp-errors-codeless", "mcp-errors-as-output"): {"ump/mcp-errors", "ump/mcp-errors-iserror"},
    ("mcp-errors-codeless", "mcp-errors-as-output-prefixed"): {"ump/mcp-errors", "ump/mcp-errors-iserror"},
    # the signed invalid vectors shared one id: the first one taken answered each later one "rejected"
    # (a conflict), read as the refusal asked for; each now has a content, so an id, of its own
    ("remember-accepts-bad-signature", "remember-rejects-as-result"): {
        "ump/remember-reject-bad-signature", "ump/integrity-content-hash", "ump/integrity-signature",
        "ump/integrity-signer-owner", "ump/integrity-verify-on-read"},
}

#: (fault, variant) -> why the reading leaves nothing to catch (the check must say it did not judge).
INHERENT: dict[tuple[str, str], str] = {
    ("memoturn-cap-envelope-nested", "memoturn-batch-cap-413"):
        "errors.md lets a 413 from middleware come without the envelope: a nested one is allowed there",
    ("oams-forget-unknown-wrong-code", "oams-forget-unknown-ok"):
        "FORGET of an unknown pair succeeds under that reading: there is no error code to be wrong",
    ("oams-list-limit-capped", "oams-list-short-pages"):
        "pages of two are never cut at twenty: the bug cannot occur below the server's own page size",
    ("omf-trust-v-truthy", "omf-v-typed"):
        "a reader typing v refuses v true before comparing it: whether true would be trusted never shows",
    ("upp-bad-input-changes-state", "upp-import-foreign-ontology"):
        "a foreign package is imported by the label rule, never refused: there is no refusal to keep state",
    ("upp-batch-notification-replied", "upp-no-batches"):
        "a server taking no batches never answers inside one",
    ("upp-no-retrieve", "upp-no-batches"):
        "the batch of bad requests is refused whole: no member's -32602 (or -32601) shows",
    ("upp-low-confidence-valid", "upp-import-keeps-status"):
        "an import keeping the package's status decides no status; an ingest's confidence is the server's own",
    ("accepts-opaque-owner", "authorize-before-validate"):
        "no token grants an owner that is no key, and the token is asked first: the owner is never read",
    ("capabilities-remembers-client", "mcp-no-capabilities-tool"):
        "no ump.capabilities tool (§4.1 lets a minimal server skip it): no capabilities call to remember anything",
    ("merge-returns-new-id", "never-merges"): "a server that never merges answers no merge, right or wrong",
    ("rehydrate-raw-text", "no-rehydrate-helper"): "no rehydration helper: nothing is rendered to frame",
    ("token-time-offset-dropped", "token-times-numeric"): "NumericDate times carry no UTC offset to drop",
}


def _bindings(fault) -> tuple[str, ...]:
    # as the audit and test_faults.py: the fault's own bindings, else HTTP for UMP, UPP and OMF, else every
    # live binding of the spec
    if fault.bindings:
        return tuple(fault.bindings)
    return ("http",) if fault.spec in ("ump", "upp", "omf") else tuple(_LIVE_BY_SPEC[fault.spec])


#: Where a pair shows only on a binding other than the fault's own (a variant of one binding's reading)
BINDINGS_UNDER: dict[tuple[str, str], tuple[str, ...]] = {
    ("subscribe-every-change", "mcp-subscribe-for-session"): ("mcp",),
}


def _run(pytester, monkeypatch, name: str, variant: str):
    monkeypatch.setenv("MEMCONFORM_FUZZ_EXAMPLES", "0")
    monkeypatch.setenv("MEMCONFORM_STATEFUL_EXAMPLES", "0")
    fault = FAULTS[name]
    args = [f"--target=reference?fault={name}&variant={variant}", f"--spec={fault.spec}", "--timeout=3",
            *(f"--binding={b}" for b in BINDINGS_UNDER.get((name, variant), _bindings(fault))), *(f"--check={c}" for c in observing_checks(fault) or ())]
    result, report = run_suite(pytester, *args)
    assert report, result.outlines[-20:]
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    return fault, report


@pytest.mark.parametrize(("name", "variant"), sorted(FAULT_UNDER_VARIANT))
def test_fault_is_caught_under_the_variant(pytester, monkeypatch, name, variant):
    _, report = _run(pytester, monkeypatch, name, variant)
    assert failed_requirements(report) == FAULT_UNDER_VARIANT[(name, variant)]


@pytest.mark.parametrize(("name", "variant"), sorted(INHERENT))
def test_a_reading_that_takes_the_bug_away_is_said(pytester, monkeypatch, name, variant):
    fault, report = _run(pytester, monkeypatch, name, variant)
    failed = failed_requirements(report)
    assert failed <= set(fault.breaks), failed - set(fault.breaks)
    for requirement in set(fault.breaks) - failed:
        naming = [r for r in report["results"] if requirement in r["requirements"]]
        # a skip's reason, a note, not_judged, or a MAY found not offered (info: "this server does not merge")
        said = [r for r in naming if r.get("not_judged") or (r["outcome"] in ("skipped", "passed") and r.get("reason"))
                or (r["outcome"] == "info" and r["findings"])]
        assert said, (f"{requirement} is not failed under {variant} ({INHERENT[(name, variant)]}), and no check "
                      f"naming it says why: {[(r['check'], r['outcome'], r.get('reason')) for r in naming]}")
