"""OMF's two profiles (issue 13): a plain OMF producer/consumer — nanomem's role, "free to ignore
extensions.memd" — is judged only on what it promises. Against such a consumer every check of a
consumer-bound requirement passes when the consumer is right (no memd counts printed, no
extensions.memd exported, imports routed by category and read back by content and tags), and still
fails when it breaks one of them; judged as memd, the same consumer fails."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memconform.suite import catalogue
from memconform.suite.omf.client import OmfRun
from memconform.suite.outcomes import Outcome
from memconform.suite.registry import all_checks
from memconform.suite.runner import run_check

from .test_omf_checks import FakeOmf

CAT = catalogue.load("omf")
CHECKS = {c.id: c for c in all_checks("omf")}
#: Checks that judge at least one requirement a consumer is bound by.
CONSUMER_CHECKS = sorted(c.id for c in CHECKS.values() if "cli" in c.bindings
                         and any(CAT.get(r).in_profile("consumer") for r in c.requirements))


def test_the_catalogue_declares_both_roles():
    assert CAT.profiles == ("memd", "consumer") and CAT.default_profile == "memd"
    consumer = {r.id for r in CAT.requirements if r.in_profile("consumer") and r.testable}
    # The wire format and the standard fields; nothing of extensions.memd, the trust gate or memd's flags.
    assert consumer == {
        "omf/nanomem-compatible", "omf/omf-version", "omf/omf-version-gated", "omf/exported-at-format",
        "omf/exported-at-not-interpreted", "omf/source-optional", "omf/memories-required",
        "omf/memories-empty-valid", "omf/malformed-document-refused", "omf/content-required",
        "omf/content-not-blank", "omf/item-field-types", "omf/item-date-format", "omf/tags-verbatim",
        "omf/large-document-answered"}
    assert not any(r.in_profile("consumer") for r in CAT.requirements
                   if r.id.startswith(("omf/memd-", "omf/lifecycle-", "omf/fail-closed-", "omf/preview-",
                                       "omf/dedup-", "omf/export-", "omf/trust-")))


class FakeConsumer(FakeOmf):
    """A right plain consumer: reads the standard fields only (project = category, the nanomem
    convention), answers an import with no counts, exports standard fields only."""

    profile = "consumer"

    def import_document(self, tenant, document, *, include_archived=None, fuzzy_threshold=None, dry_run=False):
        try:
            doc = json.loads(document)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("memories"), list):
            for it in doc["memories"]:
                if isinstance(it, dict):
                    it.pop("extensions", None)  # free to ignore extensions.memd (and every other app's)
            document = json.dumps(doc)
        run = super().import_document(tenant, document, dry_run=dry_run)
        if "lowercase-tags" in self.broken:
            for row in self.rows.get(tenant, []):
                row["tags"] = [t.lower() for t in row["tags"]]
        return OmfRun(run.operation, run.sent, ok=run.ok, exit_code=run.exit_code, error=run.error)

    def export(self, tenant, **flags: Any):
        run = super().export(tenant)
        doc = json.loads(run.document)
        del doc["source"]
        doc["memories"] = [{"content": it["content"], "tags": it["tags"],
                            **({"category": it["extensions"]["memd"]["project_id"]}
                               if it["extensions"]["memd"]["project_id"] else {})} for it in doc["memories"]]
        return OmfRun("export", run.sent, ok=True, exit_code=0, document=json.dumps(doc))


class AsMemd(FakeConsumer):
    profile = "memd"


def run(check_id: str, cls: type = FakeConsumer, broken: set[str] = frozenset()):
    return run_check(CHECKS[check_id], "1.0", "cli", lambda: cls(broken), None)


@pytest.mark.parametrize("check_id", CONSUMER_CHECKS)
def test_a_right_consumer_passes_every_check_it_is_bound_by(check_id):
    result = run(check_id)
    if check_id == "omf/stateful/import-export":  # it reads memd's counts and lifecycle: a consumer is declined
        assert result.outcome is Outcome.SKIPPED and "consumer" in (result.reason or ""), result.reason
        return
    consumer_findings = [f.message for f in result.findings if CAT.get(f.requirement).in_profile("consumer")]
    assert not consumer_findings, consumer_findings
    assert result.outcome in (Outcome.PASSED, Outcome.FAILED), (result.outcome, result.reason)
    if result.outcome is Outcome.FAILED:  # only on requirements of memd's alone, which the lead filters
        assert all(not CAT.get(f.requirement).in_profile("consumer") for f in result.findings)


@pytest.mark.parametrize("check_id", ["omf/import/nanomem", "omf/validation/empty-memories", "omf/export/shape",
                                      "omf/trust/untrusted-defaults", "omf/validation/exported-at-not-interpreted"])
def test_the_same_consumer_judged_as_memd_fails(check_id):
    result = run(check_id, AsMemd)
    assert result.outcome is Outcome.FAILED, (result.reason, [f.message for f in result.findings])


def test_a_consumer_that_alters_tags_fails_tags_verbatim():
    result = run("omf/trust/untrusted-fields-flow", broken={"lowercase-tags"})
    assert result.outcome is Outcome.FAILED
    assert {f.requirement for f in result.findings} == {"omf/tags-verbatim"}


def test_a_consumer_that_accepts_blank_content_fails():
    result = run("omf/validation/content-not-blank", broken={"blank-ok"})
    assert {f.requirement for f in result.findings} == {"omf/content-not-blank"}


class PartialCounts(FakeConsumer):
    """Prints only how many it imported: memd's other counts are not a consumer's to give."""

    def import_document(self, tenant, document, **kw):
        before = len(self.rows.get(tenant, []))
        run = super().import_document(tenant, document, **kw)
        if not run.ok:
            return run
        return OmfRun(run.operation, run.sent, ok=True, exit_code=0,
                      result={"imported": len(self.rows.get(tenant, [])) - before})


def test_a_consumer_printing_some_counts_is_judged_on_those_it_prints():
    assert run("omf/import/nanomem", PartialCounts).outcome is Outcome.PASSED
    assert run("omf/validation/empty-memories", PartialCounts).outcome is Outcome.PASSED



def test_a_plain_omf_producer_reaches_the_consumer_level_and_not_memds(pytester):
    """End to end: nanomem's role served over HTTP (tests/harness/miniatures/empty_target.py omf-plain keeps
    what it imports and exports it without extensions.memd) is conformant as a consumer, not as memd."""
    from .helpers import run_suite
    from .test_nothing_passes_on_nothing import EmptyTarget

    target = EmptyTarget("omf-plain")
    try:
        _, consumer = run_suite(pytester, f"--target={target.url}", "--spec=omf", "--profile=consumer", "--timeout=10")
        _, memd = run_suite(pytester, f"--target={target.url}", "--spec=omf", "--timeout=10")
    finally:
        target.stop()
    assert [(r["level"], r["status"]) for r in consumer["levels"]] == [("L1", "conformant")], \
        [r["summary"] for r in consumer["levels"]]
    passed = {r["check"] for r in consumer["results"] if r["outcome"] == "passed"}
    assert {"omf/import/nanomem", "omf/trust/untrusted-fields-flow", "omf/export/shape"} <= passed
    assert [r["level"] for r in memd["levels"]] != ["L1"], [r["summary"] for r in memd["levels"]]
