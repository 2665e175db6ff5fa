import copy

import pytest
from hypothesis import given, settings

from memconform.suite.ump.consent import (
    RedactPathError, apply_redact, export_view, is_exportable, redacted_paths_present,
)
from memconform.suite.ump.integrity import sign, verify
from memconform.suite.ump.record import validate
from memconform.suite.ump.testkeys import test_did, test_signing_key

from ._data import minimal
from .strategies import valid_records


def secret_record(*paths, signed=True):
    record = minimal()
    record["scope"]["owner"] = test_did("owner-a")
    record["scope"]["project"] = "github.com/example/p"
    record["body"]["structured"] = {"token": "s3cr3t", "keep": 1, "list": [{"token": "a"}, {"token": "b"}]}
    record["relations"] = [{"type": "about", "target": "entity:x"}, {"type": "contradicts", "target": "urn:ump:aa"}]
    record["consent"] = {"exportable": True, "redact": list(paths)}
    return sign(record, test_signing_key("owner-a")) if signed else record


@pytest.mark.parametrize("consent, expected", [
    (None, True), ({}, True), ({"exportable": True}, True), ({"exportable": False}, False),
    ({"exportable": None}, True), ({"exportable": "false"}, True), ({"exportable": 0}, True),
])
def test_is_exportable(consent, expected):
    record = minimal() if consent is None else minimal(consent=consent)
    assert is_exportable(record) is expected


@pytest.mark.parametrize("path", [
    "body.structured.token", "$.body.structured.token", "$['body']['structured']['token']",
    '$["body"]["structured"]["token"]', "$.body['structured'].token",
])
def test_path_forms(path):
    record = secret_record(path)
    before = copy.deepcopy(record)
    out = apply_redact(record)
    assert record == before  # the input is not touched
    assert "token" not in out["body"]["structured"]
    assert out["body"]["structured"]["keep"] == 1
    assert out["body"]["structured"]["list"] == before["body"]["structured"]["list"]
    assert "integrity" not in out
    assert {k: v for k, v in out.items() if k not in ("body", "integrity")} == \
        {k: v for k, v in before.items() if k not in ("body", "integrity")}
    assert validate(out) == ()
    assert redacted_paths_present(record) == [path]
    assert redacted_paths_present(out) == []


def test_body_text_becomes_empty_and_the_record_stays_valid():
    out = apply_redact(secret_record("body.text"))
    assert out["body"]["text"] == ""
    assert validate(out) == ()
    assert redacted_paths_present(out) == []


def test_whole_body():
    out = apply_redact(secret_record("body"))
    assert out["body"] == {"text": ""}
    assert validate(out) == ()
    assert redacted_paths_present(out) == []


def test_array_index_and_wildcard():
    out = apply_redact(secret_record("relations[0].target"))
    assert out["relations"] == [{"type": "about"}, {"type": "contradicts", "target": "urn:ump:aa"}]
    out = apply_redact(secret_record("relations[*].target"))
    assert out["relations"] == [{"type": "about"}, {"type": "contradicts"}]
    out = apply_redact(secret_record("body.structured.list[*].token"))
    assert out["body"]["structured"]["list"] == [{}, {}]
    out = apply_redact(secret_record("relations[-1]"))
    assert out["relations"] == [{"type": "about", "target": "entity:x"}]
    out = apply_redact(secret_record("body.*"))
    assert out["body"] == {"text": ""}


def test_indices_refer_to_the_original_record():
    record = minimal(supersedes=["urn:ump:a", "urn:ump:b", "urn:ump:c"],
                     consent={"redact": ["supersedes[0]", "supersedes[1]"]})
    assert apply_redact(record)["supersedes"] == ["urn:ump:c"]


def test_overlapping_paths():
    out = apply_redact(secret_record("body.structured", "body.structured.token"))
    assert "structured" not in out["body"]


def test_nothing_to_strip_keeps_integrity():
    record = secret_record("body.structured.missing", "scope.user")
    out = apply_redact(record)
    assert out == record and out is not record
    assert verify(out).ok
    assert redacted_paths_present(record) == []


def test_no_redact_list():
    record = sign(minimal(scope={"owner": test_did("owner-a"), "visibility": "shared"}), test_signing_key("owner-a"))
    assert apply_redact(record) == record
    assert redacted_paths_present(record) == []


def test_resigning_after_redaction():
    out = apply_redact(secret_record("scope.project"))
    assert "project" not in out["scope"] and "integrity" not in out
    assert verify(sign(out, test_signing_key("owner-a"))).ok


def test_redacted_paths_present_judges_an_export():
    record = secret_record("body.structured.token", "scope.project")
    leaky_export = copy.deepcopy(record)
    del leaky_export["scope"]["project"]
    assert redacted_paths_present(leaky_export) == ["body.structured.token"]
    # An export that also dropped consent is judged against the original's paths.
    stripped = apply_redact(record)
    del stripped["consent"]
    assert redacted_paths_present(stripped, record["consent"]["redact"]) == []
    assert redacted_paths_present(leaky_export, ["scope.project"]) == []


@pytest.mark.parametrize("paths", [["a b"], ["$"], ["["], [5], ["body..."], "body.text", {"x": 1}])
def test_bad_paths(paths):
    record = minimal(consent={"redact": paths})
    with pytest.raises(RedactPathError) as info:
        apply_redact(record)
    assert isinstance(info.value, ValueError)
    with pytest.raises(RedactPathError):
        redacted_paths_present(record)


def test_export_view():
    keep = secret_record("body.structured.token")
    hidden = minimal(id="urn:ump:hidden", consent={"exportable": False})
    plain = minimal(id="urn:ump:plain")
    view = export_view([keep, hidden, plain])
    assert [r["id"] for r in view] == [keep["id"], "urn:ump:plain"]
    assert "token" not in view[0]["body"]["structured"]
    assert view[1] == plain


@settings(max_examples=100, deadline=None)
@given(valid_records())
def test_redaction_of_any_valid_record(record):
    out = apply_redact(record)
    paths = record.get("consent", {}).get("redact", [])
    assert redacted_paths_present(out, paths) == []
    assert (out == record) is (redacted_paths_present(record) == [])
    if out != record:
        assert "integrity" not in out
    assert out["body"]["text"] in ("", record["body"]["text"])
    # Stripping may remove members the schema requires inside optional blocks (relations[*].target):
    # that is what the record asked for. The REQUIRED members stay.
    assert {v.requirement for v in validate(out)} <= {"ump/record-field-types"}
