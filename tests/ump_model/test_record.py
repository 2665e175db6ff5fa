import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from memconform.suite.ump.integrity import verify
from memconform.suite.ump.record import OPEN_VERSIONS, VERSIONS, Violation, detect_version, normalize, schema, validate

from ._data import example, minimal
from .strategies import json_values, valid_records

PUBLISHED = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:ump:schema:record:0.1",
}
ALL_REQS = {
    "ump/record-required-fields", "ump/record-version", "ump/reject-unknown-major", "ump/record-id-format",
    "ump/record-kind", "ump/record-visibility", "ump/record-time", "ump/record-field-types",
}


def test_versions():
    assert VERSIONS == ("0.1", "1.0")


@pytest.mark.parametrize("version", VERSIONS)
def test_schema_is_a_valid_2020_12_schema(version):
    s = schema(version)
    Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["properties"]["ump"] == {"const": version}
    assert s["additionalProperties"] is False


def test_schema_returns_a_copy():
    schema("1.0")["properties"]["ump"] = "broken"
    assert schema("1.0")["properties"]["ump"] == {"const": "1.0"}


def test_unknown_schema_version():
    with pytest.raises(ValueError):
        schema("2.0")
    with pytest.raises(ValueError):
        validate(minimal(), "0.9")


def test_schemas_differ_from_the_published_one_only_as_documented():
    try:
        with open("/work/shared/specs/ump/ump-record.schema.json") as f:
            published = json.load(f)
    except OSError:
        pytest.skip("published schema not available")
    ignore = {"$id", "title", "description"}
    for version in VERSIONS:
        ours = schema(version)
        assert {k: v for k, v in ours.items() if k not in ignore | {"properties"}} == \
            {k: v for k, v in published.items() if k not in ignore | {"properties"}}
        # DIFFERENCES.md #3a: the id pattern takes either base32 alphabet and case (issue 13)
        theirs = dict(published["properties"], ump={"const": version},
                      id=dict(published["properties"]["id"], pattern="^urn:ump:[A-Za-z0-9]+=*$"))
        assert ours["properties"] == theirs


def test_example_is_valid_1_0():
    assert validate(example()) == ()
    assert validate(example(), "1.0") == ()


def test_example_is_not_0_1():
    [v] = validate(example(), "0.1")
    assert (v.pointer, v.requirement, v.code) == ("/ump", "ump/record-version", "invalid_record")
    assert "'1.0'" in v.message and "'0.1'" in v.message


def test_normalize_0_1_to_1_0():
    old = minimal(ump="0.1", lifecycle={"confidence": 0.5})
    snapshot = copy.deepcopy(old)
    new = normalize(old, "1.0")
    assert old == snapshot
    assert new["ump"] == "1.0"
    assert {k: v for k, v in new.items() if k != "ump"} == {k: v for k, v in old.items() if k != "ump"}
    assert validate(old) == () and validate(new) == ()


def test_normalize_keeps_integrity_which_then_fails():
    signed = example()
    signed["ump"] = "0.1"
    new = normalize(signed, "1.0")
    assert new["integrity"] == signed["integrity"]
    assert verify(example()).ok


def test_normalize_refuses():
    with pytest.raises(ValueError):
        normalize(minimal(), "3.0")
    with pytest.raises(ValueError):
        normalize(minimal(ump="2.0"), "1.0")
    with pytest.raises(ValueError):
        normalize([], "1.0")
    assert normalize({"id": "x"}, "1.0")["ump"] == "1.0"


@pytest.mark.parametrize("value, expected", [(minimal(), "1.0"), (minimal(ump="0.1"), "0.1"), (minimal(ump="2.0"), None),
                                             (minimal(ump=1.0), None), ({}, None), ([], None), ("1.0", None)])
def test_detect_version(value, expected):
    assert detect_version(value) == expected


def _delete(path):
    def mutate(r):
        target = r
        for step in path[:-1]:
            target = target[step]
        del target[path[-1]]
    return mutate


def _set(path, value):
    def mutate(r):
        target = r
        for step in path[:-1]:
            target = target.setdefault(step, {}) if isinstance(step, str) else target[step]
        target[path[-1]] = value
    return mutate


CASES = [
    # missing REQUIRED members
    ("no-ump", _delete(["ump"]), "/ump", "ump/record-required-fields"),
    ("no-id", _delete(["id"]), "/id", "ump/record-required-fields"),
    ("no-kind", _delete(["kind"]), "/kind", "ump/record-required-fields"),
    ("no-body", _delete(["body"]), "/body", "ump/record-required-fields"),
    ("no-body-text", _delete(["body", "text"]), "/body/text", "ump/record-required-fields"),
    ("no-scope", _delete(["scope"]), "/scope", "ump/record-required-fields"),
    ("no-owner", _delete(["scope", "owner"]), "/scope/owner", "ump/record-required-fields"),
    ("no-visibility", _delete(["scope", "visibility"]), "/scope/visibility", "ump/record-required-fields"),
    ("no-time", _delete(["time"]), "/time", "ump/record-required-fields"),
    ("no-created", _delete(["time", "created"]), "/time/created", "ump/record-required-fields"),
    # version
    ("ump-0.2", _set(["ump"], "0.2"), "/ump", "ump/record-version"),
    ("ump-1.1", _set(["ump"], "1.1"), "/ump", "ump/record-version"),
    ("ump-number", _set(["ump"], 1.0), "/ump", "ump/record-version"),
    ("ump-null", _set(["ump"], None), "/ump", "ump/record-version"),
    ("ump-words", _set(["ump"], "latest"), "/ump", "ump/record-version"),
    ("ump-2.0", _set(["ump"], "2.0"), "/ump", "ump/reject-unknown-major"),
    ("ump-10.3", _set(["ump"], "10.3"), "/ump", "ump/reject-unknown-major"),
    ("ump-2", _set(["ump"], "2"), "/ump", "ump/reject-unknown-major"),
    # id
    ("id-slash", _set(["id"], "urn:ump:ab/cd"), "/id", "ump/record-id-format"),
    ("id-padding-only", _set(["id"], "urn:ump:=="), "/id", "ump/record-id-format"),
    ("id-uuid", _set(["id"], "urn:ump:9f2c-11"), "/id", "ump/record-id-format"),
    ("id-empty", _set(["id"], "urn:ump:"), "/id", "ump/record-id-format"),
    ("id-newline", _set(["id"], "urn:ump:abc\n"), "/id", "ump/record-id-format"),
    ("id-number", _set(["id"], 42), "/id", "ump/record-id-format"),
    # kind, visibility
    ("kind-fact", _set(["kind"], "fact"), "/kind", "ump/record-kind"),
    ("kind-upper", _set(["kind"], "Semantic"), "/kind", "ump/record-kind"),
    ("visibility-team", _set(["scope", "visibility"], "team"), "/scope/visibility", "ump/record-visibility"),
    ("visibility-null", _set(["scope", "visibility"], None), "/scope/visibility", "ump/record-visibility"),
    # time
    ("created-date", _set(["time", "created"], "2026-06-04"), "/time/created", "ump/record-time"),
    ("created-no-offset", _set(["time", "created"], "2026-06-04T10:00:00"), "/time/created", "ump/record-time"),
    ("created-newline", _set(["time", "created"], "2026-06-04T10:00:00Z\n"), "/time/created", "ump/record-time"),
    ("created-words", _set(["time", "created"], "yesterday"), "/time/created", "ump/record-time"),
    ("created-number", _set(["time", "created"], 1780000000), "/time/created", "ump/record-time"),
    ("observed-bad-month", _set(["time", "observed"], "2026-13-01T00:00:00Z"), "/time/observed", "ump/record-time"),
    ("valid-from-feb-30", _set(["time", "valid_from"], "2026-02-30T00:00:00Z"), "/time/valid_from", "ump/record-time"),
    ("valid-to-bad", _set(["time", "valid_to"], "soon"), "/time/valid_to", "ump/record-time"),
    # types and everything else
    ("unknown-top", _set(["foo"], 1), "/foo", "ump/record-field-types"),
    ("unknown-scope", _set(["scope", "team"], "x"), "/scope/team", "ump/record-field-types"),
    ("unknown-time", _set(["time", "expires"], "2026-06-04T10:00:00Z"), "/time/expires", "ump/record-field-types"),
    ("scope-string", _set(["scope"], "private"), "/scope", "ump/record-field-types"),
    ("time-list", _set(["time"], []), "/time", "ump/record-field-types"),
    ("body-text-number", _set(["body", "text"], 5), "/body/text", "ump/record-field-types"),
    ("structured-string", _set(["body", "structured"], "x"), "/body/structured", "ump/record-field-types"),
    ("owner-number", _set(["scope", "owner"], 5), "/scope/owner", "ump/record-field-types"),
    ("confidence-high", _set(["lifecycle", "confidence"], 1.5), "/lifecycle/confidence", "ump/record-field-types"),
    ("confidence-negative", _set(["lifecycle", "confidence"], -0.1), "/lifecycle/confidence", "ump/record-field-types"),
    ("confidence-string", _set(["lifecycle", "confidence"], "high"), "/lifecycle/confidence", "ump/record-field-types"),
    ("confidence-bool", _set(["lifecycle", "confidence"], True), "/lifecycle/confidence", "ump/record-field-types"),
    ("confidence-nan", _set(["lifecycle", "confidence"], float("nan")), "/lifecycle/confidence", "ump/record-field-types"),
    ("salience-2", _set(["lifecycle", "salience"], 2), "/lifecycle/salience", "ump/record-field-types"),
    ("status-deleted", _set(["lifecycle", "status"], "deleted"), "/lifecycle/status", "ump/record-field-types"),
    ("actor-kind-robot", _set(["provenance"], {"actor": "a", "actor_kind": "robot", "method": "m"}),
     "/provenance/actor_kind", "ump/record-field-types"),
    ("provenance-no-method", _set(["provenance"], {"actor": "a", "actor_kind": "user"}),
     "/provenance/method", "ump/record-field-types"),
    ("relation-no-target", _set(["relations"], [{"type": "about"}]), "/relations/0/target", "ump/record-field-types"),
    ("relation-extra", _set(["relations"], [{"type": "a", "target": "b", "weight": 1}]), "/relations/0/weight",
     "ump/record-field-types"),
    ("relations-object", _set(["relations"], {"type": "a"}), "/relations", "ump/record-field-types"),
    ("supersedes-string", _set(["supersedes"], "urn:ump:a"), "/supersedes", "ump/record-field-types"),
    ("superseded-by-number", _set(["superseded_by"], [1]), "/superseded_by/0", "ump/record-field-types"),
    ("exportable-yes", _set(["consent", "exportable"], "yes"), "/consent/exportable", "ump/record-field-types"),
    ("redact-string", _set(["consent", "redact"], "body.text"), "/consent/redact", "ump/record-field-types"),
    ("evidence-weight-string", _set(["provenance"], {"actor": "a", "actor_kind": "user", "method": "m",
                                                       "evidence": [{"ref": "r", "weight": "1"}]}),
     "/provenance/evidence/0/weight", "ump/record-field-types"),
    ("integrity-no-signer", _set(["integrity"], {"content_hash": "blake3:x", "signature": "ed25519:x"}),
     "/integrity/signer", "ump/record-field-types"),
    ("integrity-bad-prefix", _set(["integrity"], {"content_hash": "sha256:x", "signature": "ed25519:x", "signer": "did:x"}),
     "/integrity/content_hash", "ump/record-field-types"),
    ("key-with-slash", _set(["scope", "a/b~c"], 1), "/scope/a~1b~0c", "ump/record-field-types"),
]


#: The cases above that are only a member §2 does not define (a violation where the record is closed).
_UNKNOWN_MEMBER = {"unknown-top", "unknown-scope", "unknown-time", "relation-extra", "key-with-slash"}


@pytest.mark.parametrize("name, mutate, pointer, requirement", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("version", VERSIONS)
def test_bad_case_maps_to_requirement(name, mutate, pointer, requirement, version):
    record = minimal(ump=version)
    mutate(record)
    violations = validate(record, version if "ump" not in name else None)
    if name in _UNKNOWN_MEMBER and version in OPEN_VERSIONS:
        # the 0.1 text never closes the record: an unknown member is no violation there (round 17)
        assert violations == (), violations
        return
    if name == "no-visibility" and version == "0.1":
        # 0.1 leaves scope.visibility unmarked (UNMARKED_MEMBERS): no violation there
        assert violations == (), violations
        return
    assert (pointer, requirement) in {(v.pointer, v.requirement) for v in violations}, violations
    for v in violations:
        assert isinstance(v, Violation) and v.code == "invalid_record" and v.requirement in ALL_REQS
        assert v.pointer in v.message or v.pointer == "" or "record" in v.message
    if requirement == "ump/reject-unknown-major":
        assert len(violations) == 1


def test_one_violation_per_problem():
    record = minimal()
    record["scope"]["visibility"] = "team"
    assert validate(record) == (Violation(
        "/scope/visibility", "ump/record-visibility",
        '/scope/visibility is string "team"; required one of: "private", "shared", "public"'),)


def test_message_says_what_is_there_and_what_is_required():
    record = minimal()
    record["lifecycle"] = {"confidence": 1.5}
    [v] = validate(record)
    assert "1.5" in v.message and "<= 1" in v.message
    record = minimal(extra=1)
    [v] = validate(record)
    assert "unknown member" in v.message and "provenance" in v.message


@pytest.mark.parametrize(
    "valid_from, valid_to, ok",
    [
        ("2026-06-04T00:00:00Z", "2026-06-03T23:59:59Z", False),
        ("2026-06-04T00:00:00Z", "2026-06-04T00:00:00Z", True),
        ("2026-06-04T00:00:00Z", None, True),
        ("2026-06-04T09:00:00Z", "2026-06-04T10:00:00+02:00", False),  # 08:00Z
        ("2026-06-04T09:00:00Z", "2026-06-04T10:00:00+00:30", True),   # 09:30Z
        ("2026-06-04T00:00:00.5Z", "2026-06-04T00:00:00.25Z", False),
        ("2026-06-04t00:00:00z", "2026-06-05t00:00:00z", True),
    ],
)
def test_valid_to_not_before_valid_from(valid_from, valid_to, ok):
    record = minimal()
    record["time"].update(valid_from=valid_from, valid_to=valid_to)
    violations = validate(record)
    if ok:
        assert violations == ()
    else:
        [v] = violations
        assert (v.pointer, v.requirement) == ("/time/valid_to", "ump/record-time")
        assert valid_to in v.message and valid_from in v.message


@pytest.mark.parametrize("value", [[], "record", None, 5, 1.5, True, [minimal()]])
def test_non_object_record(value):
    [v] = validate(value)
    assert (v.pointer, v.requirement) == ("", "ump/record-field-types")


def test_missing_ump_still_validates_the_rest():
    record = minimal(kind="fact")
    del record["ump"]
    got = {(v.pointer, v.requirement) for v in validate(record)}
    assert got == {("/ump", "ump/record-required-fields"), ("/kind", "ump/record-kind")}


def test_empty_object():
    got = {(v.pointer, v.requirement) for v in validate({})}
    assert got == {(p, "ump/record-required-fields") for p in ("/ump", "/id", "/kind", "/body", "/scope", "/time")}


def test_deep_nesting_does_not_raise():
    deep = {}
    cur = deep
    for _ in range(3000):
        cur["x"] = {}
        cur = cur["x"]
    record = minimal()
    record["body"]["structured"] = deep
    assert isinstance(validate(record), tuple)


@settings(max_examples=150, deadline=None)
@given(valid_records())
def test_valid_records_validate(record):
    assert validate(record) == ()
    assert validate(record, record["ump"]) == ()
    other = "0.1" if record["ump"] == "1.0" else "1.0"
    assert {v.requirement for v in validate(normalize(record, other))} == set()


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


@settings(max_examples=200, deadline=None)
@given(valid_records(), st.data())
def test_validate_never_raises_on_damaged_records(record, data):
    paths = [p for p in _paths(record) if p]
    path = data.draw(st.sampled_from(paths))
    junk = data.draw(json_values | st.sampled_from([float("nan"), float("inf"), 2**70, {1: 2}, (1, 2), b"x"]))
    target = record
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = junk
    violations = validate(record)
    assert isinstance(violations, tuple)
    for v in violations:
        assert v.requirement in ALL_REQS and (v.pointer == "" or v.pointer.startswith("/"))


@settings(max_examples=100, deadline=None)
@given(json_values | st.dictionaries(st.sampled_from(["ump", "id", "kind", "body", "scope", "time", "x"]), json_values))
def test_validate_never_raises_on_any_json(value):
    violations = validate(value)
    assert isinstance(violations, tuple)
    assert all(v.requirement in ALL_REQS for v in violations)
    if not isinstance(value, dict):
        assert len(violations) == 1
