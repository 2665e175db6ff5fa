"""What a file can claim (issue 12, item 2): a valid export reaches "L0 (emitted file)", never an
incomplete L0; `file:PATH?as=dump` reads a plain record dump, to which the export rules do not apply."""

from __future__ import annotations

from memconform.suite.ump import consent, files
from memconform.suite.ump.corpus import export_corpus
from memconform.targets.target_string import FileTarget, TargetStringError, parse_target

import pytest

from harness.helpers import run_suite  # tests/ is on sys.path (rootdir-relative packages)


def _records():
    return consent.export_view([r for r in export_corpus("1.0") if r["ump"] == "1.0"])


def test_as_dump_is_part_of_the_target_string():
    assert parse_target("file:x.ump.json") == FileTarget(__import__("pathlib").Path("x.ump.json"), "export")
    dump = parse_target("file:x.ump.json?as=dump")
    assert dump.file_as == "dump" and dump.label == "file:x.ump.json?as=dump"
    with pytest.raises(TargetStringError, match="as='dumps'.*export.*dump"):
        parse_target("file:x.ump.json?as=dumps")


def test_a_valid_export_reaches_its_claim_and_says_what_it_could_not_show(pytester):
    (pytester.path / "export.ump.json").write_text(files.dump_json(_records()), encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:export.ump.json")
    assert result.ret == 0
    (row,) = report["levels"]
    assert row["level"] is None and row["status"] == "claim"
    claim = row["claim"]
    assert claim["reached"] and claim["title"] == "L0 (emitted file)" and not claim["failed"]
    assert set(claim["left_out"]["reader"]) >= {"ump/kinds-accept-all", "ump/reject-invalid-record"}
    # not exercised is said, never counted as passed
    assert all(rid not in {r["id"] for r in report["requirements"]} for rid in claim["not_exercised"])
    assert "claim reached" in row["summary"] and "incomplete" not in row["summary"]


def test_an_unexportable_record_warns_on_an_export_but_not_on_a_dump(pytester):
    # ump/export-exportable is a SHOULD at L2 (issue 13 audit: the text gives the flag no meaning
    # and §7's L0 row lists only redact): a warning on an export, never a failed claim
    records = _records()
    records[0] = {**records[0], "consent": {**(records[0].get("consent") or {}), "exportable": False}}
    records[0].pop("integrity", None)  # the changed record's old signature would fail on its own
    (pytester.path / "dump.ump.json").write_text(files.dump_json(records), encoding="utf-8")

    result, report = run_suite(pytester, "--target=file:dump.ump.json")
    assert result.ret == 0
    (row,) = report["levels"]
    assert row["status"] == "claim" and row["claim"]["reached"] and row["should_warnings"] == 1
    assert {r["check"]: r["outcome"] for r in report["results"]}["ump/l0/export-exportable"] == "warning"

    result, report = run_suite(pytester, "--target=file:dump.ump.json?as=dump")
    assert result.ret == 0
    (row,) = report["levels"]
    assert row["status"] == "claim" and row["claim"]["title"] == "L0 (record dump)"
    assert set(row["claim"]["left_out"]["export"]) == {"ump/export-redact"}  # (the MUSTs a dump leaves out)
    skipped = {r["check"]: r["reason"] for r in report["results"] if r["outcome"] == "skipped"}
    assert "export rules do not apply" in skipped["ump/l0/export-exportable"]
