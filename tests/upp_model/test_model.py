"""The UPP data model (suite/upp/model.py, schemas/*.schema.json): the spec's own examples are
valid, and each way a value can be wrong is found and filed under the requirement it breaks."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from memconform.suite import catalogue
from memconform.suite.upp import model

SCHEMAS = Path(model.__file__).parent / "schemas"

# From upp/02-data-models.md and upp/03-operations.md, verbatim.
STORED = {
    "id": "evt_a1b2c3d4-e5f6-7890-abcd-ef1234567890", "entity_key": "user_alice",
    "value": "User's name is Alice Chen", "labels": ["who_name"], "confidence": 0.95,
    "source_type": "user_stated", "status": "valid", "created_at": "2026-01-15T10:30:00Z", "superseded_by": None,
}
SUPERSEDED = {
    "id": "evt_00112233-4455-6677-8899-aabbccddeeff", "entity_key": "user_alice",
    "value": "User lives in Buenos Aires", "labels": ["where_current_location"], "confidence": 0.90,
    "source_type": "user_stated", "status": "superseded", "created_at": "2025-06-01T08:00:00Z",
    "superseded_by": "evt_ffeeddcc-bbaa-9988-7766-554433221100",
}
EVENT = {"value": "User enjoys hiking and rock climbing", "labels": ["what_interests_hobbies"],
         "confidence": 0.85, "source_type": "user_stated"}
LABEL = {"name": "who_name", "display_name": "Name", "description": "The user's full name or preferred name",
         "category": "WHO", "sensitivity": "tier_personal", "cardinality": "singular", "durability": "permanent",
         "examples": ["Alice Chen", "Bob Smith", "María García"]}
PACKAGE = {"entity_key": "user_alice", "ontology": "user/v1", "events": [STORED],
           "exported_at": "2026-03-01T12:00:00Z"}
TASK_DONE = {"task_id": "task_a1b2", "status": "completed", "result": [STORED], "error": None,
             "created_at": "2026-03-08T10:30:00Z", "completed_at": "2026-03-08T10:30:02Z"}
TASK_RUNNING = {"task_id": "task_f7e8", "status": "running", "result": None, "error": None,
                "created_at": "2026-03-08T10:30:05Z", "completed_at": None}
INFO = {"protocol_version": "1.0.0", "ontology": "user/v1", "conformance_level": 3,
        "operations": ["upp/ingest", "upp/retrieve", "upp/contextualize", "upp/get_events", "upp/delete_events",
                       "upp/info", "upp/get_labels", "upp/get_tasks", "upp/export_events", "upp/import_events"]}


def rules(found: list[model.Problem]) -> set[str]:
    return {p.requirement for p in found}


def changed(base: dict, **members) -> dict:
    out = copy.deepcopy(base)
    for k, v in members.items():
        if v is KeyError:
            out.pop(k)
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("name", model.SCHEMA_NAMES)
def test_every_schema_is_valid_2020_12_and_names_its_id(name):
    doc = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"] == f"urn:memconform:upp:schema:{name}"


@pytest.mark.parametrize("name, value", [
    ("stored-event", STORED), ("stored-event", SUPERSEDED), ("event", EVENT), ("label-definition", LABEL),
    ("export-package", PACKAGE), ("task-status", TASK_DONE), ("task-status", TASK_RUNNING), ("info-result", INFO),
    ("export-result", {"file": "/data/exports/user_alice_2026-03-01T12:00:00Z.json", "event_count": 42,
                       "exported_at": "2026-03-01T12:00:00Z"}),
    ("import-result", {"imported_count": 42, "skipped_count": 0}), ("delete-result", {"deleted_count": 15}),
    ("contextualize-result", {"events": [STORED], "task_id": "task_a1b2"}),
])
def test_the_specs_examples_are_valid(name, value):
    assert model.problems(name, value) == []


def test_additional_members_are_allowed():
    assert model.stored_event_problems(changed(STORED, vendor_rank=3, namespace="x")) == []
    assert model.event_problems(changed(STORED)) == []  # a StoredEvent is an Event with more members


@pytest.mark.parametrize("members, rule", [
    ({"id": KeyError}, "upp/stored-event-required-fields"),
    ({"created_at": KeyError}, "upp/stored-event-required-fields"),
    ({"status": "active"}, "upp/stored-event-status"),
    ({"source_type": "guessed"}, "upp/event-source-type"),
    ({"confidence": 1.01}, "upp/event-confidence-range"),
    ({"confidence": -0.1}, "upp/event-confidence-range"),
    ({"confidence": "0.9"}, "upp/stored-event-field-types"),
    ({"confidence": True}, "upp/stored-event-field-types"),
    ({"created_at": "Thu, 15 Jan 2026 10:30:00 GMT"}, "upp/stored-event-created-at"),  # not ISO-8601
    ({"created_at": "2026-01-15 10:30:00Z"}, "upp/stored-event-created-at"),
    ({"created_at": "2026-01-15T10:30:00Z\n"}, "upp/stored-event-created-at"),
    ({"created_at": 1768473000}, "upp/stored-event-created-at"),
    ({"labels": "who_name"}, "upp/stored-event-field-types"),
    ({"labels": [1]}, "upp/stored-event-field-types"),
    ({"id": ""}, "upp/stored-event-field-types"),
    ({"valid_from": "yesterday"}, "upp/stored-event-field-types"),
    ({"superseded_by": 7}, "upp/stored-event-field-types"),
    ({"superseded_by": "evt_other"}, "upp/superseded-by-consistent"),  # on a valid event
])
def test_stored_event_problems_name_their_requirement(members, rule):
    found = model.stored_event_problems(changed(STORED, **members))
    assert rule in rules(found), found


def test_a_superseded_event_naming_itself_is_found():
    found = model.stored_event_problems(changed(SUPERSEDED, superseded_by=SUPERSEDED["id"]))
    assert rules(found) == {"upp/superseded-by-consistent"}


def test_entity_key_is_judged_against_the_request():
    assert rules(model.stored_event_problems(STORED, entity_key="user_bob")) == {"upp/stored-event-entity-key"}
    assert model.stored_event_problems(STORED, entity_key="user_alice") == []


def test_duplicate_ids_in_one_answer_are_found_with_their_pointer():
    found = model.stored_events_problems([STORED, SUPERSEDED, dict(STORED)])
    assert rules(found) == {"upp/stored-event-id-unique"}
    assert found[0].startswith("/2/id")


def test_not_an_array_is_a_problem():
    assert rules(model.stored_events_problems({"events": []})) == {"upp/stored-event-field-types"}
    assert rules(model.events_problems("none")) == {"upp/event-field-types"}


@pytest.mark.parametrize("members, rule", [
    ({"value": KeyError}, "upp/event-required-fields"),
    ({"source_type": KeyError}, "upp/event-required-fields"),
    ({"confidence": 2}, "upp/event-confidence-range"),
    ({"source_type": "user"}, "upp/event-source-type"),
    ({"value": 3}, "upp/event-field-types"),
])
def test_event_problems_name_their_requirement(members, rule):
    found = model.events_problems([EVENT, changed(EVENT, **members)])
    assert rule in rules(found)
    assert all(p.startswith("/1/") for p in found)


@pytest.mark.parametrize("members, rule", [
    ({"examples": KeyError}, "upp/label-definition-required-fields"),
    ({"cardinality": "many"}, "upp/label-definition-field-types"),
    ({"sensitivity": "tier_secret"}, "upp/label-definition-field-types"),
    ({"durability": "forever"}, "upp/label-definition-field-types"),
    ({"anti_examples": "x"}, "upp/label-definition-field-types"),
])
def test_label_definition_problems(members, rule):
    assert rule in rules(model.label_definition_problems(changed(LABEL, **members)))


def test_export_package_routes_event_problems_to_the_event_rules():
    bad = changed(PACKAGE, events=[changed(STORED, status="gone"), changed(STORED, entity_key="user_bob")])
    found = model.export_package_problems(bad)
    assert {"upp/stored-event-status", "upp/stored-event-entity-key", "upp/stored-event-id-unique"} <= rules(found)
    assert rules(model.export_package_problems(changed(PACKAGE, ontology=KeyError))) == {"upp/export-package-fields"}


@pytest.mark.parametrize("value, rule", [
    (changed(TASK_DONE, result=None), "upp/get-tasks-result-by-status"),
    (changed(TASK_DONE, completed_at=None), "upp/get-tasks-result-by-status"),
    (changed(TASK_RUNNING, result=[STORED]), "upp/get-tasks-result-by-status"),
    (changed(TASK_RUNNING, status="queued"), "upp/get-tasks-returns-statuses"),
    (changed(TASK_RUNNING, task_id=KeyError), "upp/get-tasks-returns-statuses"),
    ({"task_id": "t", "status": "failed", "created_at": "2026-03-08T10:30:05Z", "completed_at": "2026-03-08T10:31:00Z",
      "error": None}, "upp/get-tasks-result-by-status"),
    (changed(TASK_DONE, result=[changed(STORED, status="done")]), "upp/stored-event-status"),
])
def test_task_status_problems(value, rule):
    assert rule in rules(model.task_status_problems(value))


@pytest.mark.parametrize("members, rule", [
    ({"conformance_level": 4}, "upp/info-conformance-level"),
    ({"conformance_level": "3"}, "upp/info-conformance-level"),
    ({"ontology": "user"}, "upp/info-ontology"),
    ({"ontology": "user/1"}, "upp/info-ontology"),
    ({"operations": "upp/ingest"}, "upp/info-result-fields"),
    ({"protocol_version": KeyError}, "upp/info-result-fields"),
])
def test_info_result_problems(members, rule):
    assert rule in rules(model.info_result_problems(changed(INFO, **members)))


@pytest.mark.parametrize("name, value, rule", [
    ("export-result", {"file": "/x.json", "event_count": -1, "exported_at": "2026-03-01T12:00:00Z"},
     "upp/export-result-shape"),
    ("export-result", {"file": "/x.json", "event_count": 1, "exported_at": "March 1"}, "upp/export-result-shape"),
    ("import-result", {"imported_count": 1}, "upp/import-result-shape"),
    ("delete-result", {"deleted_count": 1.5}, "upp/delete-result-shape"),
    ("contextualize-result", {"events": [], "task_id": ""}, "upp/contextualize-result-shape"),
    ("contextualize-result", {"events": [changed(STORED, confidence=9)], "task_id": "t"}, "upp/event-confidence-range"),
])
def test_result_problems(name, value, rule):
    assert rule in rules(model.problems(name, value))


def test_every_rule_a_problem_can_name_is_in_the_catalogue():
    cat = catalogue.load("upp")
    named = set(model._SHAPE_RULE.values()) | {
        "upp/event-required-fields", "upp/event-field-types", "upp/event-confidence-range", "upp/event-source-type",
        "upp/stored-event-required-fields", "upp/stored-event-field-types", "upp/stored-event-status",
        "upp/stored-event-created-at", "upp/stored-event-entity-key", "upp/stored-event-id-unique",
        "upp/superseded-by-consistent", "upp/get-tasks-result-by-status", "upp/label-definition-required-fields",
        "upp/info-conformance-level", "upp/info-ontology"}
    assert named <= set(cat.by_id)


@pytest.mark.parametrize("value, ok", [
    ("2026-01-15T10:30:00Z", True), ("2026-01-15T10:30:00.123+02:00", True), ("2026-01-15T10:30:00", False),
    ("2026-02-30T10:30:00Z", False), ("2026-01-15", False), (None, False), (20260115, False),
])
def test_is_rfc3339(value, ok):
    assert model.is_rfc3339(value) is ok


@pytest.mark.parametrize("value, ok", [
    ("2026-01-15T10:30:00Z", True), ("2026-01-15T10:30:00.123+02:00", True),
    # issue 13: ISO-8601 allows a local time without an offset (Python's isoformat() of a naive time)
    ("2026-01-15T10:30:00", True), ("2026-01-15T10:30:00.123456", True),
    ("2026-02-30T10:30:00Z", False), ("2026-01-15", False), ("Thu, 15 Jan 2026 10:30:00 GMT", False),
    ("15/01/2026 10:30", False), (None, False), (20260115, False),
])
def test_created_at_is_any_iso_8601_date_time(value, ok):
    stored = {"id": "e", "entity_key": "u", "value": "v", "labels": ["who_name"], "confidence": 0.9,
              "source_type": "user_stated", "status": "valid", "created_at": value}
    found = [p for p in model.stored_event_problems(stored) if p.requirement == "upp/stored-event-created-at"]
    assert (not found) is ok, found


@pytest.mark.parametrize("value, ok", [
    ("2026-03-08T10:30:00Z", True), ("2026-03-08T10:30:00.392723z", True), ("2026-03-08T10:30:00+00:00", True),
    ("2026-03-08T10:30:00-00:00", True), ("2026-03-08T10:30:00+0000", True), ("2026-03-08T10:30:00+00", True),
    # no designator: ISO-8601 reads it as local time, so it does not say UTC (red team round 11; fault
    # upp-task-times-naive). Every other UPP timestamp may be one (variant upp-times-without-offset).
    ("2026-03-08T10:30:00.392723", False), ("2026-03-08T10:30", False),
    # 03 §3: "ISO-8601 UTC" — a non-zero offset is another zone (a server writing its local time)
    ("2026-11-27T04:04:58.392723+02:00", False), ("2026-03-08T05:30:00-05:00", False),
    ("2026-03-08T10:00:00+00:30", False), ("Sun, 08 Mar 2026 10:30:00 GMT", False),
])
def test_task_times_are_utc(value, ok):
    for member in ("created_at", "completed_at"):
        found = model.task_status_problems(changed(TASK_DONE, **{member: value}))
        assert (not found) is ok, found
        assert all(p.requirement == "upp/get-tasks-returns-statuses" for p in found), found


def test_a_task_time_without_designator_is_told_as_local_time():
    [found] = model.task_status_problems(changed(TASK_DONE, created_at="2026-03-08T10:30:00.392723"))
    assert "no UTC designator" in str(found) and "local time" in str(found), found


def test_only_the_task_times_must_be_utc():
    # 02 §2 and §4 say ISO-8601 of created_at and exported_at, not UTC: any offset stays accepted
    local = "2026-03-08T12:30:00+02:00"
    assert not model.task_status_problems(changed(TASK_DONE, result=[changed(STORED, created_at=local)]))
    assert not model.stored_event_problems(changed(STORED, created_at=local))
    assert not model.export_package_problems(changed(PACKAGE, exported_at=local))


@pytest.mark.parametrize("value, ok", [
    ("2026-01-15", True), ("2026-01-15T10:30:00", True), ("2026-01-15T10:30:00Z", True),
    ("2026-13-01", False), ("next week", False), ("", False),
])
def test_validity_window_is_an_iso_8601_date_or_date_time(value, ok):
    event = {"value": "v", "labels": ["where_home"], "confidence": 0.9, "source_type": "user_stated",
             "valid_from": value}
    assert (not model.event_problems(event)) is ok


def test_vocabularies_match_the_schemas():
    stored = model.schema("stored-event")["properties"]
    assert tuple(stored["source_type"]["enum"]) == model.SOURCE_TYPES
    assert tuple(stored["status"]["enum"]) == model.EVENT_STATUSES
    assert tuple(model.schema("task-status")["properties"]["status"]["enum"]) == model.TASK_STATUSES


def test_unknown_labels():
    assert model.unknown_labels({"labels": ["who_name", "nope", 3]}, {"who_name"}) == ["nope", "3"]
    assert model.unknown_labels("not an event", {"who_name"}) == []
