"""`file:` with an OMF export document: judged alone, for what a document shows."""

from __future__ import annotations

import json

from memconform.reference_impl.omf import OmfEngine, OmfStore

from .helpers import failed_requirements, run_suite


def _reference_export() -> dict:
    engine = OmfEngine(OmfStore(":memory:"))
    engine.import_document("t", {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "source": {"app": "memd"},
                                 "memories": [{"content": "fact A", "tags": ["x"]},
                                              {"content": "fact B", "category": "topic:release"}]})
    return engine.export_document("t")


def test_a_reference_export_passes_as_a_file(pytester):
    (pytester.path / "good.omf.json").write_text(json.dumps(_reference_export()), encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:good.omf.json", "--memconform-only")
    rows = [(r["spec"], r["binding"]) for r in report["levels"]]
    assert rows == [("omf", "file")], rows
    assert report["totals"].get("failed", 0) == 0, failed_requirements(report)
    assert report["totals"].get("passed", 0) >= 1 and result.ret == 0


def test_a_broken_export_fails_for_what_it_breaks(pytester):
    document = _reference_export()
    document["omf"] = "2.0"
    document["memories"][0]["content"] = "  "
    (pytester.path / "bad.omf.json").write_text(json.dumps(document), encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:bad.omf.json", "--memconform-only")
    assert {"omf/omf-version", "omf/content-not-blank"} <= failed_requirements(report)
    assert result.ret == 1


def test_a_file_without_what_a_rule_is_about_leaves_it_not_judged(tmp_path):
    """Absence is never evidence: an export of plain rows (no superseded or expired chunk) passes
    omf/file/shape on what it shows, and leaves the status hint and the edges' agreement not judged; a document whose
    items carry no optional member and no extensions.memd, judged as a plain consumer's, leaves the
    item-field-types rule and memd's own not judged. The report reads them as not exercised by the file."""
    from memconform.reports.model import requirement_outcomes
    from memconform.suite.omf.checks.shape import SHAPE_RULES
    from memconform.suite.outcomes import Outcome
    from memconform.suite.registry import _REGISTRY
    from memconform.suite.runner import run_check
    from memconform.targets.file import OmfDocuments

    check = _REGISTRY["omf/file/shape"]
    path = tmp_path / "plain.omf.json"
    path.write_text(json.dumps(_reference_export()), encoding="utf-8")
    result = run_check(check, "1.0", "file", lambda: OmfDocuments([path]), None)
    assert result.outcome is Outcome.PASSED, result.reason
    assert result.extra["not_judged"] == ["omf/export-status-hint", "omf/export-edges-agree"]
    assert "holds no item whose lifecycle status is superseded or expired" in result.reason
    reported = {"node_id": "n", "requirements": list(SHAPE_RULES), "outcome": "passed", "findings": [],
                "not_judged": result.extra["not_judged"]}
    assert "omf/export-status-hint" not in requirement_outcomes([reported])

    class Consumer(OmfDocuments):
        profile = "consumer"

    path.write_text(json.dumps({"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z",
                                "memories": [{"content": "fact A"}]}), encoding="utf-8")
    result = run_check(check, "1.0", "file", lambda: Consumer([path]), None)
    assert result.outcome is Outcome.PASSED, result.reason
    judged = set(SHAPE_RULES) - set(result.extra["not_judged"])
    assert judged == {"omf/omf-version", "omf/exported-at-format", "omf/memories-required", "omf/content-required",
                      "omf/content-not-blank"}, sorted(judged)
