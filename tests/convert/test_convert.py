"""convert(): every output validates by the suite's models, losses are reported with record ids,
the options do what they say, and records going home come back as they left."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest

from memconform.suite.convert import (ConversionResult, ConvertOptions, InvalidInput, convert, default_corpora,
                                      mapping, validate)
from memconform.suite.convert.common import CONVERTER_APP
from memconform.suite.oams import model as oams_model
from memconform.suite.omf import model as omf_model
from memconform.suite.ump import integrity
from memconform.suite.ump.testkeys import test_did, test_signing_key
from memconform.suite.upp import model as upp_model

FORMATS = mapping.FORMATS
#: Every direction the converters take, and each format into itself.
DIRECTIONS = [*mapping.table(), *((f, f) for f in FORMATS)]
NOW = datetime(2031, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
OPTS = ConvertOptions(now=NOW)


@pytest.fixture(scope="module")
def corpora():
    return default_corpora()


def test_the_default_corpora_are_valid(corpora):
    for fmt in FORMATS:
        assert validate.problems(fmt, corpora[fmt]) == [], fmt


def _count(fmt, doc):
    return len(doc if fmt in ("ump", "oams") else doc["memories" if fmt in ("omf", "memoturn") else "events"])


@pytest.mark.parametrize("source,target", DIRECTIONS)
def test_every_output_validates(corpora, source, target):
    result = convert(corpora[source], source=source, target=target, options=OPTS)
    assert isinstance(result, ConversionResult)
    doc = result.document
    if target == "ump":
        assert validate.ump_problems(doc) == []
    elif target == "omf":
        assert omf_model.problems(doc, produced_by_memd=False) == []
    elif target == "upp":
        assert upp_model.export_package_problems(doc) == []
    elif target == "memoturn":
        assert validate.memoturn_problems(doc) == []
    else:
        assert oams_model.store_problems(doc) == []
    assert result.records_in == _count(source, corpora[source])


@pytest.mark.parametrize("source,target", DIRECTIONS)
def test_conversions_are_deterministic_and_leave_the_input_alone(corpora, source, target):
    before = copy.deepcopy(corpora[source])
    one = convert(corpora[source], source=source, target=target, options=OPTS)
    two = convert(corpora[source], source=source, target=target, options=OPTS)
    assert one.document == two.document
    assert corpora[source] == before


def test_ump_to_omf_reports_every_loss_with_the_record_id(corpora):
    result = convert(corpora["ump"], source="ump", target="omf", options=OPTS)
    by_row = {}
    for lost in result.lost:
        by_row.setdefault(lost.row, []).append(lost)
    unexportable = [r["id"] for r in corpora["ump"] if r.get("consent", {}).get("exportable") is False]
    signed = [r["id"] for r in corpora["ump"] if "integrity" in r]
    assert [x.record for x in by_row["mapping/ump-omf/record.unexportable"]] == unexportable
    assert [x.record for x in by_row["mapping/ump-omf/integrity"]] == signed
    assert len(by_row["mapping/ump-omf/record.redacted"]) == 3
    assert {x.field for x in by_row["mapping/ump-omf/record.redacted"]} >= {"body.structured.token"}
    assert result.records_out == result.records_in - len(unexportable)


def test_the_converter_is_the_producer_of_an_omf_document(corpora):
    for source in ("ump", "upp"):
        doc = convert(corpora[source], source=source, target="omf", options=OPTS).document
        assert doc["source"] == {"app": CONVERTER_APP}
        assert doc["exported_at"] == "2031-02-03T04:05:06Z"
        assert all(not omf_model.is_trusted(doc, item) for item in doc["memories"])
    # … even of a memd document that went through UMP and came back
    there = convert(corpora["omf"], source="omf", target="ump", options=OPTS).document
    back = convert(there, source="ump", target="omf", options=OPTS).document
    assert back["source"] == {"app": CONVERTER_APP}
    assert back["memories"] == corpora["omf"]["memories"]


def test_a_record_going_home_brings_edits_of_its_mapped_fields(corpora):
    there = convert(corpora["ump"], source="ump", target="omf", options=OPTS).document
    there["memories"][0]["content"] = "edited in OMF"
    there["memories"][0]["extensions"]["memd"]["project_id"] = "another/project"
    back = convert(there, source="omf", target="ump", options=OPTS).document
    assert back[0]["body"]["text"] == "edited in OMF"
    assert back[0]["scope"]["project"] == "another/project"
    assert back[0]["id"] == corpora["ump"][0]["id"]
    assert "x-extensions" not in back[0]["body"].get("structured", {})


def test_a_carried_signature_is_never_restored(corpora):
    there = convert(corpora["ump"], source="ump", target="omf", options=OPTS).document
    signed = next(r for r in corpora["ump"] if "integrity" in r)
    there["memories"][0]["extensions"]["ump"]["fields"]["integrity"] = signed["integrity"]
    back = convert(there, source="omf", target="ump", options=OPTS).document
    assert "integrity" not in back[0]


def test_a_carrier_that_does_not_restore_is_converted_as_new_with_a_warning(corpora):
    there = convert(corpora["ump"], source="ump", target="omf", options=OPTS).document
    there["memories"][0]["extensions"]["ump"] = {"fields": {"junk": 1}}
    result = convert(there, source="omf", target="ump", options=OPTS)
    assert any("does not restore" in w and "/junk" in w for w in result.warnings)
    assert result.document[0]["provenance"]["actor_kind"] == "import"
    assert validate.ump_problems(result.document) == []


def test_signing_back_into_ump():
    key = test_signing_key("owner-a")
    corpus = default_corpora()
    options = ConvertOptions(now=NOW, sign_key=key)
    for via in ("omf", "upp"):
        there = convert(corpus["ump"], source="ump", target=via, options=OPTS).document
        back = convert(there, source=via, target="ump", options=options)
        assert back.document and all(integrity.verify(r).ok for r in back.document)
    # new records get the key's owner and are signed; another owner's records stay unsigned
    fresh = convert(corpus["omf"], source="omf", target="ump", options=options).document
    assert all(r["scope"]["owner"] == test_did("owner-a") and integrity.verify(r).ok for r in fresh)
    other = convert(corpus["omf"], source="omf", target="ump",
                    options=ConvertOptions(now=NOW, sign_key=key, owner=test_did("owner-b")))
    assert all("integrity" not in r for r in other.document)
    assert any("left unsigned" in w for w in other.warnings)


def test_without_a_key_records_come_back_unsigned(corpora):
    there = convert(corpora["ump"], source="ump", target="upp", options=OPTS).document
    back = convert(there, source="upp", target="ump", options=OPTS).document
    assert all("integrity" not in r for r in back)


def test_options(corpora):
    upp = convert(corpora["omf"], source="omf", target="upp",
                  options=ConvertOptions(now=NOW, tenant="acme")).document
    assert upp["entity_key"] == "acme" and {e["entity_key"] for e in upp["events"]} == {"acme"}
    upp = convert(corpora["ump"], source="ump", target="upp", options=ConvertOptions(now=NOW, entity_key="u1")).document
    assert upp["entity_key"] == "u1"
    omf = convert(corpora["upp"], source="upp", target="omf", options=ConvertOptions(now=NOW, project="p9")).document
    assert {i["extensions"]["memd"]["project_id"] for i in omf["memories"]} == {"p9"}
    ump = convert(corpora["upp"], source="upp", target="ump", options=ConvertOptions(now=NOW, owner="did:web:x")).document
    assert {r["scope"]["owner"] for r in ump} == {"did:web:x"} and {r["scope"]["user"] for r in ump} == {"user_alice"}
    ignored = convert(corpora["upp"], source="upp", target="ump", options=ConvertOptions(now=NOW, project="p9"))
    assert any("project applies only when converting to OMF" in w for w in ignored.warnings)


def test_identity_is_a_copy(corpora):
    for fmt in FORMATS:
        result = convert(corpora[fmt], source=fmt, target=fmt, options=OPTS)
        assert result.document == corpora[fmt] and result.document is not corpora[fmt] and not result.lost


def test_one_ump_record_object_is_a_document(corpora):
    result = convert(corpora["ump"][0], source="ump", target="upp", options=OPTS)
    assert len(result.document["events"]) == 1


def test_supersession_edges_land_on_the_records_the_chunks_became(corpora):
    records = convert(corpora["omf"], source="omf", target="ump", options=OPTS).document
    old, new = records[1], records[2]
    assert old["superseded_by"] == [new["id"]] and new["supersedes"] == [old["id"]]
    events = convert(corpora["omf"], source="omf", target="upp", options=OPTS).document["events"]
    assert events[1]["status"] == "superseded" and events[1]["superseded_by"] == events[2]["id"]
    records = convert(corpora["upp"], source="upp", target="ump", options=OPTS).document
    assert records[0]["superseded_by"] == [records[1]["id"]]


def test_hints_for_the_targets_own_consumers(corpora):
    events = convert(corpora["ump"], source="ump", target="upp", options=OPTS).document["events"]
    candidate = next(e for e in events if e["value"].startswith("Imported from another vendor"))
    assert candidate["status"] == "staged"
    omf = convert(corpora["upp"], source="upp", target="omf", options=OPTS).document
    assert omf["memories"][0]["status"] == "superseded"
    assert omf["memories"][0]["tags"] == ["who_name"]
    upp = convert(corpora["omf"], source="omf", target="upp", options=OPTS).document
    prefs = next(e for e in upp["events"] if e["value"].startswith("Prefers dark mode"))
    assert prefs["labels"] == ["what_preferences"]
    injected = upp["events"][-1]
    assert injected["labels"] == ["who_name"] and injected["status"] == "staged"


@pytest.mark.parametrize("source,bad,needle", [
    ("ump", [{"ump": "1.0", "id": "nope"}], "/0/id"),
    ("ump", {"not": "a record"}, "/0"),
    ("ump", "text", "array of records"),
    ("omf", {"omf": "2.0", "exported_at": "2026-01-01T00:00:00Z", "memories": []}, "omf/omf-version"),
    ("omf", {"omf": "1.0", "exported_at": "2026-01-01T00:00:00Z", "memories": [{"content": "  "}]},
     "omf/content-not-blank"),
    ("upp", {"entity_key": "u", "ontology": "user/v1", "events": [{"id": "e"}], "exported_at": "2026-01-01T00:00:00Z"},
     "/events/0"),
    ("upp", [], "upp/export-package-fields"),
])
def test_invalid_input_is_refused_naming_the_problem(source, bad, needle):
    with pytest.raises(InvalidInput) as caught:
        convert(bad, source=source, target="omf" if source != "omf" else "ump", options=OPTS)
    assert needle in str(caught.value)
    assert caught.value.problems


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown format"):
        convert([], source="ump", target="xml")


def test_a_direction_not_built_is_said():
    unbuilt = [(a, b) for a in FORMATS for b in FORMATS if a != b and (a, b) not in mapping.table()]
    for a, b in unbuilt:
        with pytest.raises(ValueError, match=f"no conversion from {a} to {b}"):
            convert([], source=a, target=b)



# -- OAMS ----------------------------------------------------------------------------------------------

def test_ump_to_oams_maps_the_native_fields(corpora):
    result = convert(corpora["ump"], source="ump", target="oams", options=OPTS)
    memories = result.document
    leaving = [r for r in corpora["ump"] if r.get("consent", {}).get("exportable") is not False]
    assert len(memories) == len(leaving) == result.records_out
    for rec, memory in zip(leaving, memories):
        assert memory["key"] == rec["id"]
        assert memory["value"] == rec["body"]["text"]
        assert memory["created_at"] == rec["time"]["created"] == memory["updated_at"]
        assert memory["metadata"].get("confidence") == rec.get("lifecycle", {}).get("confidence")
        # §4: <owner-hash>:<scope>, the DID hashed, the project's slashes gone
        owner, scope = oams_model.split_namespace(memory["namespace"])
        assert owner.startswith("ump-") and rec["scope"]["owner"] not in memory["namespace"]
        assert scope == "github.com-example-memconform"
        assert oams_model.convention_problems(memory["namespace"]) == []
        assert memory["metadata"]["x-extensions"]["ump"]["fields"]["scope"] == rec["scope"]
    # one owner, one owner-hash: the memories of one owner stay in one owner's namespaces (§4)
    assert len({oams_model.owner_of(m["namespace"]) for m in memories}) == 1
    assert memories[0]["source_id"] == leaving[0]["provenance"]["source"]["ref"]


def test_ump_to_oams_reports_every_loss_with_the_record_id(corpora):
    result = convert(corpora["ump"], source="ump", target="oams", options=OPTS)
    rows = {}
    for lost in result.lost:
        rows.setdefault(lost.row, []).append(lost)
    assert set(rows) == {"mapping/ump-oams/integrity", "mapping/ump-oams/record.unexportable",
                         "mapping/ump-oams/record.redacted"}
    signed = [r["id"] for r in corpora["ump"] if "integrity" in r]
    assert [x.record for x in rows["mapping/ump-oams/integrity"]] == signed
    assert all(x.reason for xs in rows.values() for x in xs)
    text = str(result.document)
    assert "sk-live-0000" not in text and "integrity" not in text.replace("x-extensions", "")


def test_a_non_utc_creation_time_is_an_instant_in_utc_and_comes_home(corpora):
    rec = copy.deepcopy(corpora["ump"][0])
    rec["time"]["created"] = "2026-06-01T12:00:00+02:00"
    memory = convert([rec], source="ump", target="oams", options=OPTS).document[0]
    assert memory["created_at"] == "2026-06-01T10:00:00Z"
    assert memory["metadata"]["x-extensions"]["ump"]["fields"]["time"]["created"] == "2026-06-01T12:00:00+02:00"
    back = convert([memory], source="oams", target="ump", options=OPTS).document[0]
    assert back["time"]["created"] == "2026-06-01T12:00:00+02:00"


def test_repeated_ump_ids_get_free_keys(corpora):
    rec = corpora["ump"][0]
    memories = convert([rec, rec], source="ump", target="oams", options=OPTS).document
    assert [m["key"] for m in memories] == [rec["id"], rec["id"] + "~2"]
    assert memories[1]["metadata"]["x-extensions"]["ump"]["fields"]["id"] == rec["id"]
    back = convert(memories, source="oams", target="ump", options=OPTS).document
    assert [r["id"] for r in back] == [rec["id"], rec["id"]]


def test_oams_to_ump_maps_the_native_fields_and_hints_the_scope(corpora):
    result = convert(corpora["oams"], source="oams", target="ump", options=OPTS)
    assert result.lost == ()
    for memory, rec in zip(corpora["oams"], result.document):
        assert rec["body"]["text"] == memory["value"]
        assert rec["time"]["created"] == memory["created_at"]
        assert rec.get("lifecycle", {}).get("confidence") == memory.get("metadata", {}).get("confidence")
        owner, scope = oams_model.split_namespace(memory["namespace"])
        assert rec["scope"]["owner"] == owner and rec["scope"].get("project") == scope
        assert rec["provenance"]["source"] == {"provider": "oams", "ref": memory["key"]}
        carried = rec["body"]["structured"]["x-extensions"]["oams"]["fields"]
        assert carried["namespace"] == memory["namespace"] and carried["updated_at"] == memory["updated_at"]
        if isinstance(memory.get("source_id"), str):
            assert rec["provenance"]["evidence"] == [{"ref": memory["source_id"]}]
            assert carried["source_id"] == memory["source_id"]   # §5: preserved as-is
    # a key that is a UMP id is the id; another key derives one, per (namespace, key)
    ids = [r["id"] for r in result.document]
    assert corpora["oams"][4]["key"] in ids and len(set(ids)) == len(ids)
    owned = convert(corpora["oams"], source="oams", target="ump", options=ConvertOptions(now=NOW, owner="did:web:x"))
    assert {r["scope"]["owner"] for r in owned.document} == {"did:web:x"}


def test_oams_to_ump_signs_with_a_key():
    key = test_signing_key("owner-a")
    records = convert(default_corpora()["oams"], source="oams", target="ump",
                      options=ConvertOptions(now=NOW, sign_key=key)).document
    assert all(r["scope"]["owner"] == test_did("owner-a") and integrity.verify(r).ok for r in records)


def test_an_oams_memory_going_home_brings_edits_of_its_mapped_fields(corpora):
    there = convert(corpora["oams"], source="oams", target="ump", options=OPTS).document
    there[0]["body"]["text"] = "edited in UMP"
    there[0]["lifecycle"]["confidence"] = 0.25
    back = convert(there, source="ump", target="oams", options=OPTS).document
    assert back[0]["value"] == "edited in UMP" and back[0]["metadata"]["confidence"] == 0.25
    assert back[1:] == corpora["oams"][1:]
    assert "x-extensions" not in back[0]["metadata"]


@pytest.mark.parametrize("bad,needle", [
    ({"key": "k", "namespace": "n"}, "oams/timestamps-utc"),
    ([{"key": "k", "namespace": "a:b/c", "value": "v", "created_at": "2026-01-01T00:00:00Z",
       "updated_at": "2026-01-01T00:00:00Z"}], "oams/scope-no-slash-colon"),
    ([{"key": "k", "namespace": "n", "value": "v", "created_at": "2026-01-01T00:00:00+02:00",
       "updated_at": "2026-01-01T00:00:00Z"}], "/0"),
    ([{"key": "k", "namespace": "n", "value": "v", "created_at": "2026-01-02T00:00:00Z",
       "updated_at": "2026-01-01T00:00:00Z"}], "oams/updated-not-before-created"),
    ([{"key": "k", "namespace": "n", "value": "v", "created_at": "2026-01-01T00:00:00Z",
       "updated_at": "2026-01-01T00:00:00Z", "embedding": [0.1]}], "oams/embedding-model-required"),
    ([{"key": "k", "namespace": "n", "value": "v", "created_at": "2026-01-01T00:00:00Z",
       "updated_at": "2026-01-01T00:00:00Z"}] * 2, "oams/ns-key-unique"),
    ({"memories": []}, "oams/key-required"),
    ("text", "an OAMS document is an array"),
])
def test_invalid_oams_is_refused_naming_the_problem(bad, needle):
    with pytest.raises(InvalidInput) as caught:
        convert(bad, source="oams", target="ump", options=OPTS)
    assert needle in str(caught.value) and "not a valid OAMS document" in str(caught.value)


def test_one_oams_memory_object_is_a_document(corpora):
    result = convert(corpora["oams"][0], source="oams", target="ump", options=OPTS)
    assert len(result.document) == 1


def test_omf_to_oams_maps_the_native_fields(corpora):
    result = convert(corpora["omf"], source="omf", target="oams", options=ConvertOptions(now=NOW, tenant="acme"))
    for item, memory in zip(corpora["omf"]["memories"], result.document):
        assert memory["value"] == item["content"]
        assert memory.get("tags") == item.get("tags")
        chunk = item.get("extensions", {}).get("memd", {}).get("chunk_id")
        if chunk:
            assert memory["key"] == chunk
        else:
            assert memory["key"].startswith("omf-")
        project = item.get("extensions", {}).get("memd", {}).get("project_id")
        assert memory["namespace"] == "acme:" + (project if project else "default")
        assert oams_model.parse_time(memory["created_at"]) <= oams_model.parse_time(memory["updated_at"])
    first, dated = result.document[0], result.document[3]
    assert first["created_at"] == "2026-04-18T09:00:00Z" and first["updated_at"] == first["created_at"]
    assert first["metadata"]["x-extensions"]["omf"]["fields"]["updated_at"] == "2026-04-19"   # not RFC 3339: carried
    assert dated["created_at"] == "2026-03-02T00:00:00Z"
    assert first["metadata"]["x-extensions"]["omf"]["document"] == {"generator": {"name": "memd", "version": "0.7.3"}}
    assert {x.row for x in result.lost} == {"mapping/omf-oams/document.source", "mapping/omf-oams/document.exported_at"}


def test_oams_to_omf_maps_the_native_fields_and_blank_values_are_lost(corpora):
    memories = copy.deepcopy(corpora["oams"])
    memories[1]["value"] = " \n"
    result = convert(memories, source="oams", target="omf", options=ConvertOptions(now=NOW, project="p9"))
    items = result.document["memories"]
    assert len(items) == 5 and result.document["source"] == {"app": CONVERTER_APP}
    assert [(x.record, x.field, x.row) for x in result.lost] == [
        ("user-x123ab:project-mithril/01HXPREFS", "/value", "mapping/oams-omf/record.blank-text")]
    for memory, item in zip(memories[:1] + memories[2:], items):
        assert item["content"] == memory["value"] and item["extensions"]["memd"]["chunk_id"] == memory["key"]
        assert (item["created_at"], item["updated_at"]) == (memory["created_at"], memory["updated_at"])
        assert item.get("tags") == memory.get("tags")
        scope = oams_model.split_namespace(memory["namespace"])[1]
        assert item["extensions"]["memd"]["project_id"] == (scope or "p9")
        assert item["extensions"]["oams"]["fields"]["namespace"] == memory["namespace"]


def test_upp_to_oams_maps_the_native_fields(corpora):
    result = convert(corpora["upp"], source="upp", target="oams", options=OPTS)
    assert [x.row for x in result.lost] == ["mapping/upp-oams/document.exported_at"]
    for event, memory in zip(corpora["upp"]["events"], result.document):
        assert (memory["key"], memory["value"], memory["tags"]) == (event["id"], event["value"], event["labels"])
        assert memory["metadata"]["confidence"] == event["confidence"]
        assert memory["created_at"] == event["created_at"] == memory["updated_at"]
        assert memory["namespace"] == "user_alice:user-v1"
        carried = memory["metadata"]["x-extensions"]["upp"]
        assert "entity_key" not in carried["fields"] and carried["document"]["entity_key"] == "user_alice"
        assert carried["fields"]["source_type"] == event["source_type"]


def test_oams_to_upp_maps_the_native_fields(corpora):
    result = convert(corpora["oams"], source="oams", target="upp", options=ConvertOptions(now=NOW, entity_key="u1"))
    package = result.document
    assert package["entity_key"] == "u1" and package["ontology"] == "user/v1" and result.lost == ()
    ids = [e["id"] for e in package["events"]]
    # 01HXPREFS is a key in two namespaces: one package, one id each
    assert ids[:2] == ["01HXPREFS", "01HXPREFS~2"] and len(set(ids)) == len(ids)
    for memory, event in zip(corpora["oams"], package["events"]):
        assert event["value"] == memory["value"] and event["created_at"] == memory["created_at"]
        assert event["confidence"] == memory.get("metadata", {}).get("confidence", 1.0)
        assert event["extensions"]["oams"]["fields"]["namespace"] == memory["namespace"]
    assert package["events"][0]["labels"] == []   # "preferences" is not a user/v1 label: the tags travel
    unnamed = convert(corpora["oams"], source="oams", target="upp", options=OPTS)
    assert unnamed.document["entity_key"] == "user-x123ab" and any("3 owners" in w for w in unnamed.warnings)
