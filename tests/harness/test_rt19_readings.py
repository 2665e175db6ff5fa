"""False verdicts found by the blind red team of round 19 against an independent generator of UMP 1.0
export files and of OMF 1.0 documents, each pinned here against a file written the legitimate way."""

from __future__ import annotations

import json

import pytest

from harness.helpers import (export_with_markdown, failed_requirements, md_roundtrip_result,  # tests/ is on sys.path
                             run_suite)
from memconform.suite.ump import consent, files, markdown
from memconform.suite.ump.corpus import export_corpus


# -- F1: a .ump.md checked out with CRLF line endings ---------------------------------------------------

def _export_crlf(tmp_path, text: str, md_text: str) -> str:
    return export_with_markdown(tmp_path, "1.0", text, lambda rec: markdown.to_markdown(
        dict(rec, body=dict(rec["body"], text=md_text))).replace("\n", "\r\n"))


def test_body_readings_of_a_crlf_file_also_take_its_line_endings_as_lf():
    md = markdown.to_markdown(
        {"ump": "1.0", "id": "urn:ump:mfrggzdfmztwq2lknnwg23tpoa", "kind": "semantic",
         "body": {"text": "Line one.\nLine two."}, "scope": {"owner": "did:key:z6Mkexample", "visibility": "private"},
         "time": {"created": "2026-06-04T10:00:00Z"}})
    crlf = [r["body"]["text"] for r in markdown.body_readings(md.replace("\n", "\r\n"))]
    assert crlf[0] == "Line one.\r\nLine two."  # the file's bytes, as the crlf-line-endings vector reads them
    assert "Line one.\nLine two." in crlf
    # an LF file is read as before: its two framings of the final newline, nothing folded
    assert [r["body"]["text"] for r in markdown.body_readings(md)] == ["Line one.\nLine two.", "Line one.\nLine two.\n"]


@pytest.mark.parametrize("md_text, verdict", [("Line one.\nLine two.\n\n## Three", "passed"),
                                              ("Line one.\nLine 2.\n\n## Three", "failed")])
def test_md_roundtrip_takes_a_crlf_checkout_of_an_lf_record(pytester, tmp_path, md_text, verdict):
    res = md_roundtrip_result(pytester, _export_crlf(tmp_path, "Line one.\nLine two.\n\n## Three", md_text), "1.0")
    assert res["outcome"] == verdict, res


# -- F2: an export of no records --------------------------------------------------------------------

def test_an_empty_export_is_judged_not_an_error(pytester, tmp_path):
    empty = tmp_path / "empty.ump.json"
    empty.write_text("[]\n", encoding="utf-8")
    result, report = run_suite(pytester, f"--target=file:{empty}", "--spec=ump@1.0")
    outcomes = {r["check"]: r["outcome"] for r in report["results"] if "[" not in r["node_id"].rsplit("::", 1)[1]}
    assert report["totals"].get("error", 0) == 0, report["totals"]
    assert outcomes["ump/l0/file-json"] == "passed"  # `[]` is a JSON array of records
    # nothing about records passes on a file that holds none
    assert [c for c, o in outcomes.items() if o == "passed"] == ["ump/l0/file-json"]
    assert result.ret == 0


def test_a_folder_without_ump_files_is_still_a_target_error(pytester, tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here", encoding="utf-8")
    result, report = run_suite(pytester, f"--target=file:{tmp_path}", "--spec=ump@1.0")
    assert report["totals"].get("error", 0) > 0 and not report["totals"].get("passed")
    assert "holds no UMP files" in next(r["reason"] for r in report["results"] if r["outcome"] == "error")


# -- F3: an OMF document of no memories ---------------------------------------------------------------

def _omf_empty(memories_version: str = "1.0") -> str:
    return json.dumps({"omf": memories_version, "exported_at": "2026-11-28T07:00:00Z", "source": {"app": "memd"},
                       "memories": []})


def test_an_empty_omf_document_passes_its_envelope_rules_and_leaves_the_item_rules_unexercised(pytester):
    (pytester.path / "empty.omf.json").write_text(_omf_empty(), encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:empty.omf.json", "--memconform-only")
    (res,) = [r for r in report["results"] if r["check"] == "omf/file/shape"]
    assert res["outcome"] == "passed", res
    # "An empty array is a valid 'nothing to export' envelope": the envelope is judged, no item rule
    assert set(res["requirements"]) - set(res["not_judged"]) == {
        "omf/omf-version", "omf/exported-at-format", "omf/memories-required"}
    assert result.ret == 0
    (pytester.path / "bad.omf.json").write_text(_omf_empty("2.0"), encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:bad.omf.json", "--memconform-only")
    assert failed_requirements(report) == {"omf/omf-version"} and result.ret == 1


# -- missed: two different records under one id in one file --------------------------------------------

@pytest.mark.parametrize("twin, verdict", [("different", "failed"), ("same", "passed")])
def test_two_records_under_one_id_in_one_file(pytester, tmp_path, twin, verdict):
    records = [{k: v for k, v in r.items() if k != "integrity"}
               for r in consent.export_view([r for r in export_corpus("1.0") if r["ump"] == "1.0"])][:2]
    second = dict(records[0]) if twin == "same" else dict(records[1], id=records[0]["id"])
    path = tmp_path / "export.ump.json"
    path.write_text(files.dump_json([records[0], second]), encoding="utf-8")
    result, report = run_suite(pytester, f"--target=file:{path}", "--spec=ump@1.0", "--check=ump/l0/export-id-unique")
    (res,) = [r for r in report["results"] if r["check"] == "ump/l0/export-id-unique"]
    assert res["outcome"] == verdict, res


# -- report quality: one pretty-printed NDJSON file ----------------------------------------------------

def test_a_file_of_many_bad_lines_is_a_few_findings_and_a_count(pytester, tmp_path):
    records = [{k: v for k, v in r.items() if k != "integrity"}
               for r in consent.export_view([r for r in export_corpus("1.0") if r["ump"] == "1.0"])][:5]
    path = tmp_path / "pretty.ndjson"
    path.write_text("\n".join(json.dumps(r, indent=2) for r in records) + "\n", encoding="utf-8")
    result, report = run_suite(pytester, f"--target=file:{path}", "--spec=ump@1.0", "--check=ump/l0/file-json")
    (res,) = [r for r in report["results"] if r["check"] == "ump/l0/file-json"]
    assert res["outcome"] == "failed" and len(res["findings"]) == 4, [f["message"] for f in res["findings"]]
    assert res["findings"][-1]["message"].startswith("… and ")
