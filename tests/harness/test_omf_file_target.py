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
