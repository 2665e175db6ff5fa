"""The reference UPP engine (`UppService`) against docs/live-upp.md: every operation, every reading of
the loose parts, the errors, supersession, staged events, delete, background tasks, export/import
with path confinement, the extractor's documented subset, the JSON-RPC message handling, and
that every UPP fault changes what a client can observe.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.reference_impl.upp import exports, stdio
from memconform.reference_impl.upp.extractor import ExtractedEvent, RuleExtractor
from memconform.reference_impl.upp.faults import UPP_FAULTS
from memconform.reference_impl.upp.rpc import RpcEndpoint, RpcError, encode
from memconform.reference_impl.upp.service import UppService, level_of
from memconform.reference_impl.upp.store import Store
from memconform.suite.upp import model, ontology
from memconform.suite.upp.client import LEVEL_OPERATIONS, OPERATIONS

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)


class Clock:
    """A settable clock: tasks' retention and timestamps without sleeping."""

    def __init__(self, now: datetime = T0):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def exports_dir(tmp_path: Path) -> Path:
    d = tmp_path / "exports"
    d.mkdir()
    return d


@pytest.fixture
def svc(exports_dir: Path) -> Any:
    service = UppService(export_dir=exports_dir)
    yield service
    service.close()


def ok(service: UppService, method: str, params: Any = None) -> Any:
    """`params` None: the request has no params member."""
    return service.call(method, params) if params is not None else service.call(method)


def err(service: UppService, method: str, params: Any = None) -> RpcError:
    with pytest.raises(RpcError) as info:
        ok(service, method, params)
    return info.value


def events(service: UppService, key: str) -> list[dict[str, Any]]:
    return ok(service, "upp/get_events", {"entity_key": key})


def by_value(items: list[dict[str, Any]], value: str) -> dict[str, Any]:
    found = [e for e in items if e["value"] == value]
    assert len(found) == 1, (value, items)
    return found[0]


def event(value: str, labels: list[str], confidence: float = 0.9, created_at: str = "2025-01-01T00:00:00Z",
          **extra: Any) -> dict[str, Any]:
    return {"id": f"evt_pkg_{re.sub(r'[^A-Za-z0-9]', '_', str(value))[:24]}_{str(created_at)[:10]}",
            "entity_key": "origin", "value": value,
            "labels": labels, "confidence": confidence, "source_type": "user_stated", "status": "valid",
            "created_at": created_at, "superseded_by": None, **extra}


def package(events_: list[Any], ontology_id: str = "user/v1", **extra: Any) -> dict[str, Any]:
    return {"entity_key": "origin", "ontology": ontology_id, "events": events_,
            "exported_at": "2026-01-01T00:00:00Z", **extra}


def write(folder: Path, name: str, content: Any) -> Path:
    path = folder / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def place(service: UppService, folder: Path, key: str, events_: list[Any]) -> dict[str, Any]:
    path = write(folder, f"pkg-{len(list(folder.iterdir()))}.json", package(events_))
    return ok(service, "upp/import_events", {"entity_key": key, "file": str(path)})


def snapshot(service: UppService) -> list[tuple]:
    """Everything the store holds (for "a refused request changes nothing")."""
    db: sqlite3.Connection = service._store._db
    return (sorted(db.execute("SELECT * FROM users").fetchall())
            + sorted(db.execute("SELECT * FROM events").fetchall()))


def wait_task(service: UppService, task_id: str, timeout: float = 5.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        [status] = ok(service, "upp/get_tasks", {"task_ids": [task_id]})
        if status["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return status
        time.sleep(0.01)


# -- info and get_labels --------------------------------------------------------------------------

def test_info_answers_the_spec_version_ontology_all_operations_and_level_3(svc: UppService) -> None:
    info = ok(svc, "upp/info", {})
    assert not model.info_result_problems(info)
    assert info["protocol_version"] == "1.0.0"
    assert info["ontology"] == "user/v1"
    assert sorted(info["operations"]) == sorted(OPERATIONS)
    assert info["conformance_level"] == 3


@pytest.mark.parametrize("method", ["upp/info", "upp/get_labels"])
def test_operations_without_params_take_absent_empty_or_extra_params(svc: UppService, method: str) -> None:
    assert svc.call(method) == svc.call(method, {}) == svc.call(method, {"mcf_unknown_extension": 1})
    e = err(svc, method, [])
    assert e.code == -32602 and e.data == {"invalid_params": ["params"]}


def test_get_labels_is_the_user_v1_file_and_cannot_be_changed_by_a_caller(svc: UppService) -> None:
    labels = ok(svc, "upp/get_labels")
    assert labels == ontology.raw_user_v1()["labels"]
    assert len(labels) == 57 and all(not model.label_definition_problems(d) for d in labels)
    labels[0]["cardinality"] = "changed"
    labels.clear()
    assert ok(svc, "upp/get_labels") == ontology.raw_user_v1()["labels"]


def test_level_of_is_the_highest_complete_level() -> None:
    assert level_of(OPERATIONS) == 3
    assert level_of([*LEVEL_OPERATIONS[1], *LEVEL_OPERATIONS[2]]) == 2
    assert level_of([*LEVEL_OPERATIONS[1], *LEVEL_OPERATIONS[3]]) == 1
    assert level_of(["upp/info"]) == 1


# -- ingest ---------------------------------------------------------------------------------------

def test_ingest_returns_stored_events_of_the_request_user_with_ontology_labels(svc: UppService) -> None:
    got = ok(svc, "upp/ingest", {"entity_key": "alice",
                                 "text": "My name is Alice and I live in Buenos Aires. I love hiking and photography."})
    assert not model.stored_events_problems(got, entity_key="alice")
    assert [(e["labels"], e["value"]) for e in got] == [
        (["who_name"], "User's name is Alice"), (["where_home"], "User lives in Buenos Aires"),
        (["what_interests_hobbies"], "User loves hiking and photography")]
    assert all(e["status"] == "valid" and e["superseded_by"] is None and e["source_type"] == "user_stated"
               and e["confidence"] == 0.9 and e["id"].startswith("evt_") for e in got)
    assert len({e["id"] for e in got}) == 3
    assert events(svc, "alice") == got  # persisted, as returned


def test_ingest_of_nothing_extractable_answers_empty_and_creates_the_user(svc: UppService) -> None:
    assert ok(svc, "upp/ingest", {"entity_key": "quiet", "text": "The weather is nice."}) == []
    assert ok(svc, "upp/ingest", {"entity_key": "quiet2", "text": ""}) == []
    assert events(svc, "quiet") == []
    assert ok(svc, "upp/retrieve", {"entity_key": "quiet", "query": "x"}) == []


def test_ingest_reports_the_state_after_the_whole_text(svc: UppService) -> None:
    got = ok(svc, "upp/ingest", {"entity_key": "u", "text": "My name is Ann. My name is Anna."})
    first, second = got
    assert first["status"] == "superseded" and first["superseded_by"] == second["id"]
    assert second["status"] == "valid"


def test_created_at_is_rfc3339_utc_from_the_clock_to_the_microsecond(exports_dir: Path) -> None:
    clock = Clock(datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=timezone.utc))
    service = UppService(export_dir=exports_dir, clock=clock)
    try:
        [e] = ok(service, "upp/ingest", {"entity_key": "u", "text": "I speak Welsh"})
        assert e["created_at"] == "2026-05-06T07:08:09.123456Z"
        assert model.is_rfc3339(e["created_at"])
    finally:
        service.close()


def test_a_failing_extractor_is_extraction_failed_and_stores_nothing(exports_dir: Path) -> None:
    class Broken:
        def extract(self, text: str) -> list[ExtractedEvent]:
            raise RuntimeError("model unavailable /secret/path")

    service = UppService(export_dir=exports_dir, extractor=Broken())
    try:
        before = snapshot(service)
        e = err(service, "upp/ingest", {"entity_key": "u", "text": "My name is X"})
        assert e.code == -32004 and "secret" not in e.message and "secret" not in json.dumps(e.data)
        assert snapshot(service) == before
    finally:
        service.close()


def test_a_plugged_in_extractor_is_held_to_the_ontology_and_event_rules(exports_dir: Path) -> None:
    class Sloppy:
        def extract(self, text: str) -> Any:
            return [ExtractedEvent("ok", ("who_name", "made_up"), 0.9),       # made_up dropped
                    ExtractedEvent("no labels left", ("made_up",), 0.9),     # dropped
                    ExtractedEvent("too sure", ("who_role",), 1.5),           # dropped
                    ExtractedEvent("nan", ("who_role",), float("nan")),       # dropped
                    ExtractedEvent("odd source", ("who_role",), 0.9, "gossip"),  # dropped
                    ExtractedEvent("", ("who_role",), 0.9),                   # dropped
                    "not an event"]

    service = UppService(export_dir=exports_dir, extractor=Sloppy())
    try:
        got = ok(service, "upp/ingest", {"entity_key": "u", "text": "anything"})
        assert [(e["value"], e["labels"]) for e in got] == [("ok", ["who_name"])]
    finally:
        service.close()


# -- params: -32602, and nothing changes --------------------------------------------------------------

BAD_PARAMS = [
    ("upp/ingest", {"text": "My name is Bo"}, {"missing_params": ["entity_key"]}),
    ("upp/ingest", {"entity_key": "u"}, {"missing_params": ["text"]}),
    ("upp/ingest", {"entity_key": "", "text": "My name is Bo"}, {"invalid_params": ["entity_key"]}),
    ("upp/ingest", {"entity_key": 7, "text": "My name is Bo"}, {"invalid_params": ["entity_key"]}),
    ("upp/ingest", {"entity_key": "u", "text": ["My name is Bo"]}, {"invalid_params": ["text"]}),
    ("upp/ingest", {"entity_key": "\ud800", "text": "My name is Bo"}, {"invalid_params": ["entity_key"]}),
    ("upp/ingest", ["u", "My name is Bo"], {"invalid_params": ["params"]}),
    ("upp/ingest", {}, {"missing_params": ["entity_key", "text"]}),
    ("upp/retrieve", {"entity_key": "u", "query": None}, {"invalid_params": ["query"]}),
    ("upp/retrieve", {"entity_key": "u", "query": "x", "max_results": 0}, {"invalid_params": ["max_results"]}),
    ("upp/retrieve", {"entity_key": "u", "query": "x", "max_results": True}, {"invalid_params": ["max_results"]}),
    ("upp/contextualize", {"entity_key": "u"}, {"missing_params": ["text"]}),
    ("upp/get_tasks", {}, {"missing_params": ["task_ids"]}),
    ("upp/get_tasks", {"task_ids": "task_1"}, {"invalid_params": ["task_ids"]}),
    ("upp/get_tasks", {"task_ids": [1]}, {"invalid_params": ["task_ids"]}),
    ("upp/get_events", {"entity_key": None}, {"invalid_params": ["entity_key"]}),
    ("upp/delete_events", {"entity_key": "u", "event_ids": "evt_1"}, {"invalid_params": ["event_ids"]}),
    ("upp/delete_events", {"entity_key": "u", "event_ids": None}, {"invalid_params": ["event_ids"]}),
    ("upp/delete_events", {"event_ids": []}, {"missing_params": ["entity_key"]}),
    ("upp/export_events", {"entity_key": ["u"]}, {"invalid_params": ["entity_key"]}),
    ("upp/import_events", {"entity_key": "u"}, {"missing_params": ["file"]}),
    ("upp/import_events", {"entity_key": "u", "file": 3}, {"invalid_params": ["file"]}),
    ("upp/import_events", {"entity_key": "u", "file": ""}, {"invalid_params": ["file"]}),
]


@pytest.mark.parametrize(("method", "params", "data"), BAD_PARAMS, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(BAD_PARAMS)])
def test_bad_params_are_invalid_params_and_change_nothing(svc: UppService, method: str, params: Any,
                                                          data: dict[str, Any]) -> None:
    ok(svc, "upp/ingest", {"entity_key": "u", "text": "My name is Ann"})
    before = snapshot(svc)
    e = err(svc, method, params)
    assert e.code == -32602 and e.message.startswith("Invalid params")
    assert e.data == data
    assert snapshot(svc) == before


def test_unknown_extra_params_are_ignored(svc: UppService) -> None:
    got = ok(svc, "upp/ingest", {"entity_key": "u", "text": "I speak Basque", "mcf_unknown_extension": {"x": 1}})
    assert len(got) == 1
    assert ok(svc, "upp/get_events", {"entity_key": "u", "status_filter": "nonsense"}) == got


# -- unknown users ----------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["upp/retrieve", "upp/get_events", "upp/export_events"])
def test_reads_of_an_unknown_user_answer_user_not_found(svc: UppService, method: str) -> None:
    e = err(svc, method, {"entity_key": "ghost", "query": "name"})
    assert e.code == -32001 and e.data == {"entity_key": "ghost"}


def test_delete_of_an_unknown_user_deletes_nothing(svc: UppService) -> None:
    assert ok(svc, "upp/delete_events", {"entity_key": "ghost"}) == {"deleted_count": 0}
    assert ok(svc, "upp/delete_events", {"entity_key": "ghost", "event_ids": ["evt_x"]}) == {"deleted_count": 0}


@pytest.mark.parametrize("method", ["upp/ingest", "upp/contextualize"])
def test_writes_create_the_user(svc: UppService, method: str) -> None:
    ok(svc, method, {"entity_key": "new", "text": "nothing to see"})
    assert events(svc, "new") == []


def test_a_user_whose_events_are_all_deleted_is_unknown_again(svc: UppService) -> None:
    [e] = ok(svc, "upp/ingest", {"entity_key": "u", "text": "I speak Basque"})
    assert ok(svc, "upp/delete_events", {"entity_key": "u", "event_ids": [e["id"]]}) == {"deleted_count": 1}
    assert err(svc, "upp/get_events", {"entity_key": "u"}).code == -32001


# -- supersession, plural, staged -----------------------------------------------------------------------

def test_a_singular_label_supersedes_the_previous_valid_event(svc: UppService) -> None:
    [paris] = ok(svc, "upp/ingest", {"entity_key": "u", "text": "I live in Paris."})
    [berlin] = ok(svc, "upp/ingest", {"entity_key": "u", "text": "I moved to Berlin."})
    listed = events(svc, "u")
    assert by_value(listed, paris["value"]) == paris | {"status": "superseded", "superseded_by": berlin["id"]}
    assert by_value(listed, berlin["value"])["status"] == "valid"


def test_plural_labels_accumulate(svc: UppService) -> None:
    ok(svc, "upp/ingest", {"entity_key": "u", "text": "I love hiking. I enjoy chess. I speak French. I speak Urdu."})
    assert {e["status"] for e in events(svc, "u")} == {"valid"}
    assert len(events(svc, "u")) == 4


def test_supersession_is_per_user(svc: UppService) -> None:
    ok(svc, "upp/ingest", {"entity_key": "a", "text": "My name is Ann"})
    ok(svc, "upp/ingest", {"entity_key": "b", "text": "My name is Bob"})
    assert [e["status"] for e in events(svc, "a")] == ["valid"]


def test_low_confidence_is_staged_does_not_supersede_and_is_reinforced(svc: UppService, exports_dir: Path) -> None:
    place(svc, exports_dir, "u", [event("User lives in Oslo", ["where_home"], 0.95, "2025-01-01T00:00:00Z")])
    place(svc, exports_dir, "u", [event("User lives in Rome", ["where_home"], 0.3, "2025-01-02T00:00:00Z")])
    listed = events(svc, "u")
    assert [(e["value"], e["status"]) for e in listed] == [("User lives in Oslo", "valid"),
                                                           ("User lives in Rome", "staged")]
    rome = listed[1]
    # A matching event (same labels, same value up to case and spacing) reinforces the staged one.
    result = place(svc, exports_dir, "u", [event("user lives  in ROME", ["where_home"], 0.4, "2025-01-03T00:00:00Z")])
    assert result == {"imported_count": 1, "skipped_count": 0}
    listed = events(svc, "u")
    assert len(listed) == 2
    assert by_value(listed, "User lives in Rome") == rome | {"status": "valid"}
    assert by_value(listed, "User lives in Oslo")["superseded_by"] == rome["id"]


def test_the_store_refuses_to_change_an_event_or_move_status_backwards() -> None:
    store = Store()
    row = store.insert(id="evt_1", entity_key="u", value="v", labels=["who_name"], confidence=0.9,
                       source_type="user_stated", valid_from=None, valid_until=None, status="valid",
                       created_at="2026-01-01T00:00:00Z")
    for sql in ("UPDATE events SET value = 'x'", "UPDATE events SET labels = '[]'", "UPDATE events SET created_at = 'x'",
                "UPDATE events SET status = 'staged'"):
        with pytest.raises(sqlite3.IntegrityError):
            store._db.execute(sql)
    store.supersede(row.seq, "evt_2")
    with pytest.raises(sqlite3.IntegrityError):
        store._db.execute("UPDATE events SET status = 'valid'")
    assert store.by_seq(row.seq).status == "superseded"
    store.close()


# -- retrieve ---------------------------------------------------------------------------------------

def test_retrieve_ranks_by_word_overlap_then_recency_valid_events_only(svc: UppService) -> None:
    ok(svc, "upp/ingest", {"entity_key": "u", "text": "My name is Zoe. I love sailing. I live in Lima. I live in Quito."})
    got = ok(svc, "upp/retrieve", {"entity_key": "u", "query": "What are her hobbies?"})
    assert not model.events_problems(got)
    assert [e["value"] for e in got] == ["User loves sailing", "User lives in Quito", "User's name is Zoe"]
    got = ok(svc, "upp/retrieve", {"entity_key": "u", "query": "Where does Zoe live?"})
    assert got[0]["value"] == "User lives in Quito"  # "where" (label) + "live"; Lima is superseded
    assert "User lives in Lima" not in [e["value"] for e in got]
    assert ok(svc, "upp/retrieve", {"entity_key": "u", "query": "User lives in Quito"})[0]["value"] == "User lives in Quito"


def test_retrieve_honours_max_results_and_never_returns_another_users_events(svc: UppService) -> None:
    ok(svc, "upp/ingest", {"entity_key": "u", "text": "I love a. I love b. I love c."})
    ok(svc, "upp/ingest", {"entity_key": "other", "text": "I love a."})
    assert len(ok(svc, "upp/retrieve", {"entity_key": "u", "query": "love", "max_results": 2})) == 2
    assert {e["entity_key"] for e in ok(svc, "upp/retrieve", {"entity_key": "u", "query": "a"})} == {"u"}


# -- contextualize and tasks ------------------------------------------------------------------------

def test_contextualize_returns_existing_events_and_ingests_in_the_background(svc: UppService) -> None:
    [old] = ok(svc, "upp/ingest", {"entity_key": "u", "text": "I live in Paris"})
    result = ok(svc, "upp/contextualize", {"entity_key": "u", "text": "I moved to Berlin"})
    assert not model.contextualize_result_problems(result)
    assert result["events"] == [old]  # the text's own event is not among them
    status = wait_task(svc, result["task_id"])
    assert not model.task_status_problems(status)
    assert status["status"] == "completed" and status["error"] is None and status["completed_at"]
    [new] = status["result"]
    assert new["value"] == "User lives in Berlin" and new["status"] == "valid"
    assert by_value(events(svc, "u"), "User lives in Paris")["superseded_by"] == new["id"]


def test_get_tasks_omits_unknown_ids_and_keeps_the_order_asked(svc: UppService) -> None:
    a = ok(svc, "upp/contextualize", {"entity_key": "u", "text": "I speak Erzya"})["task_id"]
    b = ok(svc, "upp/contextualize", {"entity_key": "u", "text": "I speak Moksha"})["task_id"]
    wait_task(svc, a), wait_task(svc, b)
    assert [s["task_id"] for s in ok(svc, "upp/get_tasks", {"task_ids": [b, "task_nope", a]})] == [b, a]
    assert ok(svc, "upp/get_tasks", {"task_ids": []}) == []


def test_a_task_reports_pending_or_running_before_it_finishes(exports_dir: Path) -> None:
    release = threading.Event()

    class Slow:
        def extract(self, text: str) -> list[ExtractedEvent]:
            release.wait(5)
            return RuleExtractor().extract(text)

    service = UppService(export_dir=exports_dir, extractor=Slow())
    try:
        task = ok(service, "upp/contextualize", {"entity_key": "u", "text": "I speak Ainu"})["task_id"]
        [status] = ok(service, "upp/get_tasks", {"task_ids": [task]})
        assert status["status"] in ("pending", "running")
        assert status["result"] is None and status["completed_at"] is None and status["error"] is None
        release.set()
        assert wait_task(service, task)["status"] == "completed"
    finally:
        release.set()
        service.close()


def test_a_slow_extraction_does_not_hold_up_other_requests(exports_dir: Path) -> None:
    release = threading.Event()

    class Slow:
        def extract(self, text: str) -> list[ExtractedEvent]:
            release.wait(10)
            return RuleExtractor().extract(text)

    service = UppService(export_dir=exports_dir, extractor=Slow())
    try:
        worker = threading.Thread(target=ok, args=(service, "upp/ingest", {"entity_key": "u", "text": "I speak Ewe"}))
        worker.start()
        start = time.monotonic()
        assert ok(service, "upp/info")["conformance_level"] == 3
        assert err(service, "upp/get_events", {"entity_key": "u"}).code == -32001  # nothing stored yet
        assert time.monotonic() - start < 5
        release.set()
        worker.join(10)
        assert len(events(service, "u")) == 1
    finally:
        release.set()
        service.close()


def test_a_failed_task_carries_an_error_and_no_result(exports_dir: Path) -> None:
    class Broken:
        def extract(self, text: str) -> list[ExtractedEvent]:
            raise ValueError("boom")

    service = UppService(export_dir=exports_dir, extractor=Broken())
    try:
        task = ok(service, "upp/contextualize", {"entity_key": "u", "text": "x"})["task_id"]
        status = wait_task(service, task)
        assert status["status"] == "failed" and status["result"] is None
        assert status["error"] == "Failed to extract events from text" and status["completed_at"]
        assert not model.task_status_problems(status)
    finally:
        service.close()


def test_finished_tasks_are_kept_one_hour(exports_dir: Path) -> None:
    clock = Clock()
    service = UppService(export_dir=exports_dir, clock=clock)
    try:
        task = ok(service, "upp/contextualize", {"entity_key": "u", "text": "I speak Sami"})["task_id"]
        wait_task(service, task)
        clock.now += timedelta(minutes=59)
        assert len(ok(service, "upp/get_tasks", {"task_ids": [task]})) == 1
        clock.now += timedelta(minutes=2)
        assert ok(service, "upp/get_tasks", {"task_ids": [task]}) == []
    finally:
        service.close()


def test_a_task_result_leaves_out_events_deleted_since(svc: UppService) -> None:
    task = ok(svc, "upp/contextualize", {"entity_key": "u", "text": "I speak Ladino. I speak Romani."})["task_id"]
    first, second = wait_task(svc, task)["result"]
    ok(svc, "upp/delete_events", {"entity_key": "u", "event_ids": [first["id"]]})
    assert wait_task(svc, task)["result"] == [second]


# -- get_events and delete_events -------------------------------------------------------------------

def test_get_events_lists_every_status_in_storage_order(svc: UppService, exports_dir: Path) -> None:
    place(svc, exports_dir, "u", [event("User lives in A", ["where_home"], 0.9, "2025-01-01T00:00:00Z"),
                                  event("User lives in B", ["where_home"], 0.9, "2025-01-02T00:00:00Z"),
                                  event("User lives in C", ["where_home"], 0.2, "2025-01-03T00:00:00Z")])
    listed = events(svc, "u")
    assert [(e["value"], e["status"]) for e in listed] == [
        ("User lives in A", "superseded"), ("User lives in B", "valid"), ("User lives in C", "staged")]
    assert not model.stored_events_problems(listed, entity_key="u")


def test_delete_by_ids_deletes_exactly_those_of_the_user(svc: UppService) -> None:
    mine = ok(svc, "upp/ingest", {"entity_key": "u", "text": "I love a. I love b. I love c."})
    [theirs] = ok(svc, "upp/ingest", {"entity_key": "v", "text": "I love d."})
    got = ok(svc, "upp/delete_events", {"entity_key": "u",
                                        "event_ids": [mine[0]["id"], mine[0]["id"], theirs["id"], "evt_unknown"]})
    assert got == {"deleted_count": 1}
    assert events(svc, "u") == mine[1:]
    assert events(svc, "v") == [theirs]


@pytest.mark.parametrize("params", [{}, {"event_ids": []}])
def test_delete_without_ids_deletes_all_the_users_events(svc: UppService, params: dict[str, Any]) -> None:
    ok(svc, "upp/ingest", {"entity_key": "u", "text": "I love a. My name is X. My name is Y."})
    [other] = ok(svc, "upp/ingest", {"entity_key": "v", "text": "I love d."})
    assert ok(svc, "upp/delete_events", {"entity_key": "u", **params}) == {"deleted_count": 3}
    assert err(svc, "upp/get_events", {"entity_key": "u"}).code == -32001
    assert events(svc, "v") == [other]


def test_deleted_events_are_gone_from_retrieve_export_and_storage(svc: UppService) -> None:
    a, b = ok(svc, "upp/ingest", {"entity_key": "u", "text": "I love sailing. I love rowing."})
    ok(svc, "upp/delete_events", {"entity_key": "u", "event_ids": [a["id"]]})
    assert a["id"] not in [e["id"] for e in ok(svc, "upp/retrieve", {"entity_key": "u", "query": "sailing"})]
    exported = json.loads(Path(ok(svc, "upp/export_events", {"entity_key": "u"})["file"]).read_text("utf-8"))
    assert [e["id"] for e in exported["events"]] == [b["id"]]
    assert svc._store._db.execute("SELECT count(*) FROM events WHERE value = ?", (a["value"],)).fetchone() == (0,)


def test_deleting_a_successor_clears_the_pointer_and_revives_nothing(svc: UppService) -> None:
    old, new = ok(svc, "upp/ingest", {"entity_key": "u", "text": "My name is A. My name is B."})
    ok(svc, "upp/delete_events", {"entity_key": "u", "event_ids": [new["id"]]})
    assert events(svc, "u") == [old | {"status": "superseded", "superseded_by": None}]


# -- export ---------------------------------------------------------------------------------------

def test_export_writes_an_export_package_of_every_event(svc: UppService, exports_dir: Path) -> None:
    ok(svc, "upp/ingest", {"entity_key": "u", "text": "My name is A. My name is B. I love c."})
    result = ok(svc, "upp/export_events", {"entity_key": "u"})
    assert not model.export_result_problems(result)
    path = Path(result["file"])
    assert path.is_absolute() and path.parent == exports_dir.resolve() and path.suffix == ".json"
    content = json.loads(path.read_text("utf-8"))
    assert not model.export_package_problems(content)
    assert content["entity_key"] == "u" and content["ontology"] == "user/v1"
    assert content["events"] == events(svc, "u") and result["event_count"] == 3
    assert content["exported_at"] == result["exported_at"]
    assert "events" not in result  # the path, not the events
    assert not list(exports_dir.glob(".*.part"))


HOSTILE_KEYS = ["../../../../tmp/evil", "/etc/passwd", "a/b\\c", "..", ".", "\x00nul", "con", "x" * 500,
                "name with spaces and ünïcode", "~root", "$(touch pwned)", "-rf"]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_an_entity_key_never_chooses_where_an_export_goes(svc: UppService, exports_dir: Path, key: str) -> None:
    ok(svc, "upp/ingest", {"entity_key": key, "text": "I speak Tok Pisin"})
    path = Path(ok(svc, "upp/export_events", {"entity_key": key})["file"])
    assert path.parent == exports_dir.resolve()
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}-\d{8}T\d{6}Z-[0-9a-f]{8}\.json", path.name)
    assert json.loads(path.read_text("utf-8"))["entity_key"] == key


def test_two_exports_never_share_a_file(svc: UppService) -> None:
    ok(svc, "upp/ingest", {"entity_key": "u", "text": "I speak Manx"})
    files = {ok(svc, "upp/export_events", {"entity_key": "u"})["file"] for _ in range(5)}
    assert len(files) == 5


def test_an_unwritable_export_folder_is_an_internal_error_without_details(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    service = UppService(export_dir=blocker / "sub")
    try:
        ok(service, "upp/ingest", {"entity_key": "u", "text": "I speak Manx"})
        e = err(service, "upp/export_events", {"entity_key": "u"})
        assert e.code == -32603 and str(tmp_path) not in e.message
    finally:
        service.close()


# -- import ---------------------------------------------------------------------------------------

def test_import_assigns_new_ids_and_created_at_and_stores_for_the_request_user(svc: UppService,
                                                                              exports_dir: Path) -> None:
    pkg = [event("User lives in Oslo", ["where_home"], 0.9, "2020-01-01T00:00:00Z")]
    assert place(svc, exports_dir, "dest", pkg) == {"imported_count": 1, "skipped_count": 0}
    [stored] = events(svc, "dest")
    assert stored["id"] != pkg[0]["id"] and stored["created_at"] != pkg[0]["created_at"]
    assert stored["entity_key"] == "dest" and stored["value"] == "User lives in Oslo"
    assert err(svc, "upp/get_events", {"entity_key": "origin"}).code == -32001


def test_import_stores_oldest_first_with_supersession(svc: UppService, exports_dir: Path) -> None:
    pkg = [event("User lives in C", ["where_home"], 0.9, "2025-03-01T00:00:00Z"),
           event("User lives in A", ["where_home"], 0.9, "2025-01-01T00:00:00+00:00"),
           event("User lives in B1", ["where_home"], 0.9, "2025-02-01T00:00:00Z"),
           event("User lives in B2", ["where_home"], 0.9, "2025-02-01T01:00:00+01:00"),  # same instant: package order
           event("User loves x", ["what_interests_hobbies"], 0.9, "2024-01-01T00:00:00Z"),
           event("User loves y", ["what_interests_hobbies"], 0.9, "not a date")]
    place(svc, exports_dir, "u", pkg)
    listed = events(svc, "u")
    assert [e["value"] for e in listed] == ["User loves y", "User loves x", "User lives in A", "User lives in B1",
                                            "User lives in B2", "User lives in C"]
    valid = [e["value"] for e in listed if e["status"] == "valid"]
    assert valid == ["User loves y", "User loves x", "User lives in C"]
    assert listed[4]["superseded_by"] == listed[5]["id"]


def test_import_supersedes_the_users_existing_events(svc: UppService, exports_dir: Path) -> None:
    [old] = ok(svc, "upp/ingest", {"entity_key": "u", "text": "My name is Ann"})
    place(svc, exports_dir, "u", [event("User's name is Anne", ["who_name"])])
    assert by_value(events(svc, "u"), old["value"])["status"] == "superseded"


BAD_EVENTS = [
    "not an object", None, [],
    {"labels": ["who_name"], "confidence": 0.9, "source_type": "user_stated"},
    event("", ["who_name"]), event("   ", ["who_name"]), event("v", []), event("v", "who_name"),
    event("v", ["who_name", "not_a_label"]), event("v", [3]), event("v", ["who_name"], 1.01),
    event("v", ["who_name"], -0.1), event("v", ["who_name"], True), event("v", ["who_name"], "0.9"),
    event("v", ["who_name"], source_type="rumour"), event("v", ["who_name"], valid_from="yesterday"),
    event("v", ["who_name"], valid_until=5), event("v", ["who_name"], valid_from="2025-02-30T00:00:00Z"),
    event("\ud800", ["who_name"]),
]


def test_import_skips_what_is_not_an_event_of_this_ontology(svc: UppService, exports_dir: Path) -> None:
    good = [event("User speaks Tamil", ["who_languages"], 1, valid_from="2025-01-01T00:00:00Z", valid_until=None),
            event("User speaks Hindi", ["who_languages", "who_languages"], 0)]
    result = place(svc, exports_dir, "u", [*BAD_EVENTS, *good])
    assert result == {"imported_count": 2, "skipped_count": len(BAD_EVENTS)}
    listed = events(svc, "u")
    assert [(e["value"], e["labels"], e["status"]) for e in listed] == [
        ("User speaks Tamil", ["who_languages"], "valid"), ("User speaks Hindi", ["who_languages"], "staged")]
    assert listed[0]["valid_from"] == "2025-01-01T00:00:00Z" and "valid_until" not in listed[0]


def test_a_package_of_another_ontology_is_ontology_not_found_and_stores_nothing(svc: UppService,
                                                                                 exports_dir: Path) -> None:
    path = write(exports_dir, "other.json", package([event("User speaks Tamil", ["who_languages"])], "user/v2"))
    before = snapshot(svc)
    e = err(svc, "upp/import_events", {"entity_key": "u", "file": str(path)})
    assert e.code == -32002 and e.data == {"ontology": "user/v2"}
    assert snapshot(svc) == before


NOT_PACKAGES = ["", "not json", "[1, 2]", '{"ontology": "user/v1", "events": []}', "NaN",
                json.dumps(package([], exported_at=None)), json.dumps(package("events")),
                json.dumps(package([], entity_key=5)), "[" * 100000 + "]" * 100000]


@pytest.mark.parametrize("content", NOT_PACKAGES, ids=range(len(NOT_PACKAGES)))
def test_a_file_that_is_not_an_export_package_is_invalid_params_and_stores_nothing(
        svc: UppService, exports_dir: Path, content: str) -> None:
    path = write(exports_dir, "bad.json", content)
    before = snapshot(svc)
    e = err(svc, "upp/import_events", {"entity_key": "u", "file": str(path)})
    assert e.code == -32602 and e.data["invalid_params"] == ["file"]
    assert snapshot(svc) == before


def test_a_non_utf8_file_is_invalid_params(svc: UppService, exports_dir: Path) -> None:
    path = exports_dir / "latin.json"
    path.write_bytes(json.dumps(package([event("User's name is José", ["who_name"])]), ensure_ascii=False).encode("latin-1"))
    assert err(svc, "upp/import_events", {"entity_key": "u", "file": str(path)}).code == -32602


def test_an_oversize_file_is_refused_before_it_is_parsed(svc: UppService, exports_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exports, "MAX_PACKAGE_BYTES", 100)
    path = write(exports_dir, "big.json", package([event("User's name is " + "x" * 200, ["who_name"])]))
    e = err(svc, "upp/import_events", {"entity_key": "u", "file": str(path)})
    assert e.code == -32602 and "larger" in e.message


def test_import_reads_only_inside_the_export_and_import_folders(svc: UppService, exports_dir: Path,
                                                                tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    pkg = package([event("User speaks Tamil", ["who_languages"])])
    target = write(outside, "pkg.json", pkg)
    link = exports_dir / "link.json"
    link.symlink_to(target)
    (exports_dir / "dir.json").mkdir()
    refused = [str(target), str(link), str(exports_dir / ".." / "outside" / "pkg.json"), "../outside/pkg.json",
               str(exports_dir / "missing.json"), str(exports_dir / "dir.json"), "/etc/passwd", "/dev/zero",
               str(exports_dir), "pkg\x00.json", str(exports_dir / "link-loop.json")]
    (exports_dir / "link-loop.json").symlink_to(exports_dir / "link-loop.json")
    before = snapshot(svc)
    for file in refused:
        e = err(svc, "upp/import_events", {"entity_key": "u", "file": file})
        assert e.code == -32602, file
        assert "root:" not in e.message
    assert snapshot(svc) == before
    # A relative path is taken inside the export folder.
    write(exports_dir, "rel.json", pkg)
    assert ok(svc, "upp/import_events", {"entity_key": "u", "file": "rel.json"})["imported_count"] == 1


def test_configured_import_folders_are_readable(exports_dir: Path, tmp_path: Path) -> None:
    extra = tmp_path / "incoming"
    extra.mkdir()
    path = write(extra, "pkg.json", package([event("User speaks Tamil", ["who_languages"])]))
    service = UppService(export_dir=exports_dir, import_dirs=[extra])
    try:
        assert ok(service, "upp/import_events", {"entity_key": "u", "file": str(path)})["imported_count"] == 1
    finally:
        service.close()


def test_an_export_imports_into_another_user_as_it_was(svc: UppService) -> None:
    ok(svc, "upp/ingest", {"entity_key": "a", "text": "My name is A. My name is B. I love c. I speak d."})
    file = ok(svc, "upp/export_events", {"entity_key": "a"})["file"]
    assert ok(svc, "upp/import_events", {"entity_key": "b", "file": file}) == {"imported_count": 4, "skipped_count": 0}
    shape = [(e["value"], e["labels"], e["status"], e["superseded_by"] is not None) for e in events(svc, "a")]
    assert [(e["value"], e["labels"], e["status"], e["superseded_by"] is not None)
            for e in events(svc, "b")] == shape
    assert not {e["id"] for e in events(svc, "a")} & {e["id"] for e in events(svc, "b")}
    assert not {e["created_at"] for e in events(svc, "a")} & {e["created_at"] for e in events(svc, "b")}


# -- the extractor's documented subset ------------------------------------------------------------------

EXTRACTED = [
    ("My name is Alice Chen.", "who_name", "User's name is Alice Chen"),
    ("my name's Bo", "who_name", "User's name is Bo"),
    ("Hi, call me Ishmael!", "who_name", "User's name is Ishmael"),
    ("I go by Mike", "who_name", "User's name is Mike"),
    ("I'm called María-José O'Neil", "who_name", "User's name is María-José O'Neil"),
    ("I live in San Francisco", "where_home", "User lives in San Francisco"),
    ("I am living in Berlin", "where_home", "User lives in Berlin"),
    ("I just moved to Buenos Aires", "where_home", "User lives in Buenos Aires"),
    ("I recently moved to Lyon", "where_home", "User lives in Lyon"),
    ("I'm based in Nairobi", "where_home", "User lives in Nairobi"),
    ("My home is in Tokyo", "where_home", "User lives in Tokyo"),
    ("home is Lagos", "where_home", "User lives in Lagos"),
    ("I'm currently in Lima", "where_current_location", "User is currently in Lima"),
    ("I\u2019m in Rome right now", "where_current_location", "User is currently in Rome"),
    ("I'm visiting Madrid", "where_current_location", "User is currently in Madrid"),
    ("I am now visiting Oslo", "where_current_location", "User is currently in Oslo"),
    ("I work as a nurse", "who_role", "User works as a nurse"),
    ("I'm an engineer by profession", "who_role", "User works as an engineer"),
    ("My job title is Staff Engineer", "who_role", "User works as Staff Engineer"),
    ("my occupation is baker", "who_role", "User works as baker"),
    ("I work at Google", "who_role", "User works at Google"),
    ("I work for Acme Corp", "who_role", "User works at Acme Corp"),
    ("I love hiking and photography", "what_interests_hobbies", "User loves hiking and photography"),
    ("I really like to cook", "what_interests_hobbies", "User likes to cook"),
    ("I enjoy chess", "what_interests_hobbies", "User enjoys chess"),
    ("My hobbies are chess and go", "what_interests_hobbies", "User's hobbies: chess and go"),
    ("my hobby is knitting", "what_interests_hobbies", "User's hobbies: knitting"),
    ("I'm really into jazz", "what_interests_hobbies", "User is into jazz"),
    ("I am interested in astronomy", "what_interests_hobbies", "User is interested in astronomy"),
    ("I'm passionate about birds", "what_interests_hobbies", "User is passionate about birds"),
    ("I speak English and Spanish", "who_languages", "User speaks English and Spanish"),
    ("I'm fluent in Portuguese", "who_languages", "User is fluent in Portuguese"),
    ("My native language is Greek", "who_languages", "User's native language is Greek"),
    ("my mother tongue is Tamil", "who_languages", "User's native language is Tamil"),
    ("I'm 32 years old", "who_age", "User is 32 years old"),
    ("I am 7", "who_age", "User is 7 years old"),
    ("I was born on March 15, 1990", "who_age", "User was born on March 15, 1990"),
    ("I was born in 1988", "who_age", "User was born in 1988"),
]


@pytest.mark.parametrize(("text", "label", "value"), EXTRACTED)
def test_each_documented_pattern_gives_its_event(text: str, label: str, value: str) -> None:
    assert RuleExtractor().extract(text) == [ExtractedEvent(value, (label,), 0.9)]
    assert label in ontology.user_v1().label_names


def test_clauses_split_at_and_but_so_before_i_or_my_and_at_commas() -> None:
    got = RuleExtractor().extract("Hello, my name is Ann and I live in Lima, but I work at Acme so I speak "
                                  "Quechua; I love tea, cake and I enjoy rain\nI'm 40")
    assert [e.labels[0] for e in got] == ["who_name", "where_home", "who_role", "who_languages",
                                          "what_interests_hobbies", "what_interests_hobbies", "who_age"]
    assert got[4].value == "User loves tea, cake"


@pytest.mark.parametrize("text", ["The sky is blue", "My name is 1234", "I was born in Germany", "I am tired",
                                  "I live in 12345", "My name is " + "x " * 10, "I love " + "y" * 200,
                                  "I'm 1234 years old", "I speak"])
def test_anything_else_gives_nothing(text: str) -> None:
    assert RuleExtractor().extract(text) == []


HOSTILE = [" " * 300_000, ", " * 150_000, "and " * 100_000, "I " * 150_000, "i, " * 100_000, " ," * 150_000,
           "my name is " + "a" * 300_000 + "!", "my name is " + "a " * 150_000 + "!", "I'm in " * 40_000 + "x",
           "I'm a " * 50_000 + "by profession!", "\t" * 300_000 + "x", "." * 300_000, "Hi, " * 75_000]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_the_extractor_is_linear_on_hostile_input(text: str) -> None:
    start = time.perf_counter()
    RuleExtractor().extract(text)
    assert time.perf_counter() - start < 2.0


def test_the_extractor_docstring_names_only_labels_of_user_v1() -> None:
    from memconform.reference_impl.upp import extractor

    named = set(re.findall(r"\| (\w+_\w+) \|", extractor.__doc__ or ""))
    assert named and named <= ontology.user_v1().label_names


# -- JSON-RPC 2.0 message handling ----------------------------------------------------------------

def rpc(service: UppService, message: Any) -> Any:
    text = service.handle_text(message if isinstance(message, (str, bytes)) else json.dumps(message))
    return None if text is None else json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", "{", "nope", '{"jsonrpc": "2.0", "method": "upp/info", "id": 1',
                                  "NaN", '{"a": Infinity}', b"\xff\xfe", b'{"x": "\xc3"}', "\ufeff{}",
                                  "[" * 50_000 + "]" * 50_000])
def test_what_is_not_json_is_a_parse_error_with_id_null(svc: UppService, text: Any) -> None:
    got = rpc(svc, text)
    assert got["jsonrpc"] == "2.0" and got["id"] is None and got["error"]["code"] == -32700
    assert set(got) == {"jsonrpc", "error", "id"}


@pytest.mark.parametrize(("message", "id_"), [
    (1, None), ('"text"', None), ("null", None), ({}, None), ("true", None),
    ({"jsonrpc": "2.0", "id": 4}, 4),
    ({"jsonrpc": "1.0", "method": "upp/info", "id": "a"}, "a"),
    ({"method": "upp/info", "id": 5}, 5),
    ({"jsonrpc": "2.0", "method": 5, "id": 6}, 6),
    ({"jsonrpc": "2.0", "method": "upp/info", "id": {"a": 1}}, None),
    ({"jsonrpc": "2.0", "method": "upp/info", "id": True}, None),
    ({"jsonrpc": "2.0", "method": "upp/info"}, None),  # a notification? no: params fine, but see below
])
def test_what_is_not_a_request_object_is_invalid_request(svc: UppService, message: Any, id_: Any) -> None:
    if message == {"jsonrpc": "2.0", "method": "upp/info"}:
        assert rpc(svc, message) is None  # a valid notification gets nothing
        return
    got = rpc(svc, message)
    assert got == {"jsonrpc": "2.0", "error": got["error"], "id": id_}
    assert got["error"]["code"] == -32600 and isinstance(got["error"]["message"], str)


@pytest.mark.parametrize("params", ["x", None, 3, True, []])
def test_params_that_are_not_an_object_are_invalid_params_not_invalid_request(svc: UppService, params: Any) -> None:
    # suite/upp/catalogue.toml, upp/jsonrpc-invalid-request: a non-object params is -32602 here.
    for method in ("upp/info", "upp/ingest"):
        got = rpc(svc, {"jsonrpc": "2.0", "method": method, "params": params, "id": 7})
        assert got["id"] == 7 and got["error"]["code"] == -32602
        assert got["error"]["data"] == {"invalid_params": ["params"]}


@pytest.mark.parametrize("id_", [1, 0, -3, 2**70, 1.5, "abc", "", None, "\U0001F600 ü"])
def test_the_id_is_echoed_with_its_type(svc: UppService, id_: Any) -> None:
    got = rpc(svc, {"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": id_})
    assert got["id"] == id_ and type(got["id"]) is type(id_)
    assert got["result"]["protocol_version"] == "1.0.0" and "error" not in got


def test_a_lone_surrogate_id_is_echoed_as_utf8_json(svc: UppService) -> None:
    text = svc.handle_text('{"jsonrpc": "2.0", "method": "upp/info", "id": "\\ud800"}')
    text.encode("utf-8")
    assert json.loads(text)["id"] == "\ud800"


def test_an_unknown_method_is_method_not_found(svc: UppService) -> None:
    for method in ("upp/unknown", "upp/events", "rpc.discover", "UPP/INFO", "upp/info "):
        got = rpc(svc, {"jsonrpc": "2.0", "method": method, "id": 1})
        assert got["error"]["code"] == -32601, method


def test_notifications_run_but_get_no_response_even_when_they_fail(svc: UppService) -> None:
    assert rpc(svc, {"jsonrpc": "2.0", "method": "upp/ingest", "params": {"entity_key": "n", "text": "I speak Ewe"}}) is None
    assert len(events(svc, "n")) == 1
    assert rpc(svc, {"jsonrpc": "2.0", "method": "upp/nope"}) is None
    assert rpc(svc, {"jsonrpc": "2.0", "method": "upp/ingest", "params": {}}) is None


def test_batches_answer_one_response_per_request_with_an_id(svc: UppService) -> None:
    got = rpc(svc, [{"jsonrpc": "2.0", "method": "upp/info", "id": 1},
                    {"jsonrpc": "2.0", "method": "upp/info"},
                    {"jsonrpc": "2.0", "method": "upp/nope", "id": "two"},
                    42,
                    [],
                    {"jsonrpc": "2.0", "method": "upp/get_events", "params": {}, "id": 3}])
    assert [(r["id"], r.get("error", {}).get("code")) for r in got] == [(1, None), ("two", -32601), (None, -32600),
                                                                       (None, -32600), (3, -32602)]
    assert rpc(svc, []) == {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request: an empty batch"},
                            "id": None}
    assert rpc(svc, [{"jsonrpc": "2.0", "method": "upp/info"}] * 3) is None


def test_an_unexpected_exception_is_internal_error_without_a_traceback() -> None:
    def dispatch(method: str, params: Any) -> Any:
        raise KeyError("/home/secret/traceback.py line 3")

    endpoint = RpcEndpoint(dispatch)
    got = json.loads(endpoint.handle_text('{"jsonrpc": "2.0", "method": "upp/info", "id": 9}'))
    assert got == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}, "id": 9}

    # A result that cannot be JSON fails after the operation ran: still -32603, id null.
    got = json.loads(RpcEndpoint(lambda m, p: object()).handle_text('{"jsonrpc": "2.0", "method": "m", "id": 1}'))
    assert got == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}, "id": None}


def test_responses_are_one_line_of_utf8(svc: UppService) -> None:
    text = svc.handle_text(json.dumps({"jsonrpc": "2.0", "method": "upp/ingest", "id": 1,
                                       "params": {"entity_key": "u\nv", "text": "My name is Zoë\u2028X"}}))
    assert "\n" not in text and "\r" not in text
    assert json.loads(encode(text).decode("utf-8"))["result"][0]["entity_key"] == "u\nv"


def test_the_service_is_thread_safe(svc: UppService) -> None:
    def work(n: int) -> None:
        for i in range(20):
            ok(svc, "upp/ingest", {"entity_key": f"t{n}", "text": f"My name is N{i}. I love x{i}."})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in range(4):
        listed = events(svc, f"t{n}")
        assert len(listed) == 40
        assert sum(1 for e in listed if e["labels"] == ["who_name"] and e["status"] == "valid") == 1


def test_close_is_idempotent_and_later_calls_are_internal_errors(exports_dir: Path) -> None:
    service = UppService(export_dir=exports_dir)
    service.close()
    service.close()
    assert err(service, "upp/info").code == -32603
    assert json.loads(service.handle_text('{"jsonrpc":"2.0","method":"upp/info","id":1}'))["error"]["code"] == -32603


def test_an_unknown_fault_is_refused_and_a_ump_fault_is_ignored(exports_dir: Path) -> None:
    with pytest.raises(ValueError):
        UppService(fault="no-such-fault")
    ump_fault = next(f.name for f in FAULTS.values() if f.spec == "ump")
    service = UppService(export_dir=exports_dir, fault=ump_fault)
    try:
        assert service.fault is None
    finally:
        service.close()


# -- every fault changes what a client observes -----------------------------------------------------------

def test_the_faults_are_upp_faults_collected_with_the_others() -> None:
    names = [f.name for f in UPP_FAULTS]
    assert len(names) == len(set(names)) >= 20
    for f in UPP_FAULTS:
        assert f.name.startswith("upp-") and f.spec == "upp" and f.since == "1.0.0" and f.breaks
        assert FAULTS[f.name] is f
        assert f.bindings in (None, ("stdio",), ("http",))
        assert all(b.startswith("upp/") for b in f.breaks)


def test_every_fault_breaks_only_requirements_of_the_catalogue() -> None:
    import tomllib

    catalogue = tomllib.loads((Path(ontology.__file__).parent / "catalogue.toml").read_text("utf-8"))
    known = {r["id"]: r for r in catalogue["requirement"]}
    for f in UPP_FAULTS:
        for b in f.breaks:
            assert b in known, (f.name, b)
            assert known[b].get("testable", True), (f.name, b)


@dataclass
class Scenario:
    """A fixed sequence of requests touching every operation and every wire rule; what came back,
    with the random parts (ids, task ids, file names) replaced by their order of appearance."""

    service: UppService
    folder: Path
    log: list[Any]

    def send(self, message: Any) -> None:
        text = message if isinstance(message, str) else json.dumps(message)
        try:
            self.log.append(self.service.handle_text(text))
        except SystemExit as exc:  # a fault that would end the stdio process on a line it cannot parse
            self.log.append(f"exited {exc.code}")

    def call(self, method: str, params: Any = None, id_: Any = 1) -> Any:
        message = {"jsonrpc": "2.0", "method": method, "id": id_}
        if params is not None:
            message["params"] = params
        text = self.service.handle_text(json.dumps(message))
        self.log.append(text)
        reply = json.loads(text) if text else None
        return reply.get("result") if isinstance(reply, dict) else None

    def file(self, name: str, content: Any) -> str:
        return str(write(self.folder, name, content))


def run_scenario(fault: str | None, tmp_path: Path) -> list[str]:
    exports_dir = tmp_path / f"exports-{fault}"
    incoming = tmp_path / f"incoming-{fault}"
    exports_dir.mkdir()
    incoming.mkdir()
    clock = Clock()
    service = UppService(export_dir=exports_dir, import_dirs=[incoming], fault=fault, clock=clock)
    s = Scenario(service, incoming, [])
    # the wire
    for text in ("{oops", "[]", "[1]", '{"jsonrpc":"2.0","method":"upp/nope","id":3}',
                 '{"jsonrpc":"2.0","method":"upp/info"}', '{"jsonrpc":"2.0","method":"upp/info","id":7}',
                 '{"jsonrpc":"2.0","method":"upp/ingest","params":{},"id":"s"}',
                 '[{"jsonrpc":"2.0","method":"upp/info","id":8},{"jsonrpc":"2.0","method":"upp/info"}]',
                 '{"jsonrpc":"2.0","method":"upp/info","id":null}',
                 # a batch whose first member fails: the second is still answered
                 '[{"jsonrpc":"2.0","method":"upp/nope","id":9},{"jsonrpc":"2.0","method":"upp/info","id":10}]'):
        s.send(text)
    s.call("upp/info", None)
    s.call("upp/info", {})
    s.call("upp/get_labels", None)
    s.call("upp/ingest", {"entity_key": "u", "text": "I speak Erzya", "mcf_unknown_extension": 1})
    for op in OPERATIONS:
        s.call(op, {})
    # ingest, supersession, plural, retrieve
    s.call("upp/ingest", {"entity_key": "a", "text": "My name is Ann. I live in Paris. I love chess."})
    s.call("upp/ingest", {"entity_key": "a", "text": "I live in Berlin. I love go. My name is José."})
    s.call("upp/ingest", {"entity_key": "b", "text": "My name is Bob. I speak Welsh."})
    s.call("upp/get_events", {"entity_key": "a"})
    s.call("upp/retrieve", {"entity_key": "a", "query": "name"})
    s.call("upp/retrieve", {"entity_key": "a", "query": "what does she love to play"})
    s.call("upp/retrieve", {"entity_key": "a", "query": "zzz"})
    s.call("upp/retrieve", {"entity_key": "ghost", "query": "x"})
    s.call("upp/get_events", {"entity_key": "ghost"})
    # an entity_key is an opaque string: "Kay" and "kay" are two users
    s.call("upp/ingest", {"entity_key": "Kay", "text": "My name is Kay."})
    s.call("upp/get_events", {"entity_key": "kay"})
    s.call("upp/get_events", {"entity_key": "Kay "})  # white space too (round 23)
    # an id is whole: "evt_" names no event (round 23's server matched ids by prefix)
    s.call("upp/delete_events", {"entity_key": "Kay", "event_ids": ["evt_"]})
    s.call("upp/get_events", {"entity_key": "Kay"})
    # import: staged, bad labels, supersession order, another ontology, not a package
    pkg = package([event("User lives in Oslo", ["where_home"], 0.82, "2025-01-02T00:00:00Z",
                         valid_from="2024-06-01T00:00:00Z"),
                   event("User lives in Rome", ["where_home"], 0.9, "2025-01-01T00:00:00Z"),
                   event("User speaks Tamil", ["who_languages", "made_up"]),
                   event("User speaks Hindi", ["who_languages"]),
                   event("User speaks Basque", ["who_languages"], 0.05),
                   event("User speaks Sami", ["who_languages"], 0.0)])
    s.call("upp/import_events", {"entity_key": "c", "file": s.file("p1.json", pkg)})
    s.call("upp/get_events", {"entity_key": "c"})
    imported = s.call("upp/export_events", {"entity_key": "c"})  # the file, as another server would read it
    file_c = imported.get("file") if isinstance(imported, dict) else None
    s.log.append(Path(file_c).read_text("utf-8") if file_c and Path(file_c).exists() else "no file")
    s.call("upp/import_events", {"entity_key": "c", "file": s.file("p2.json", package(pkg["events"], "user/v9"))})
    s.call("upp/import_events", {"entity_key": "c", "file": s.file("p3.json", "{}")})
    s.call("upp/import_events", {"entity_key": "c", "file": s.file("p0.json", package([]))})  # no events: 0 and 0
    s.call("upp/get_events", {"entity_key": "c"})
    # a staged name supersedes nothing; a staged language is reinforced by the same fact ingested
    s.call("upp/import_events", {"entity_key": "a", "file": s.file("p4.json", package(
        [event("User's name is Annie", ["who_name"], 0.05)]))})
    s.call("upp/get_events", {"entity_key": "a"})
    # a valid name after the staged one: the staged one stays staged (never superseded)
    s.call("upp/ingest", {"entity_key": "a", "text": "My name is Anna."})
    s.call("upp/get_events", {"entity_key": "a"})
    s.call("upp/import_events", {"entity_key": "r", "file": s.file("p5.json", package(
        [event("User speaks Basque", ["who_languages"], 0.05)]))})
    s.call("upp/ingest", {"entity_key": "r", "text": "I speak Basque"})
    s.call("upp/get_events", {"entity_key": "r"})
    # a user's event stays listed after 101 events of another user
    s.call("upp/ingest", {"entity_key": "w", "text": "My name is Wu."})
    s.call("upp/import_events", {"entity_key": "many", "file": s.file("p6.json", package(
        [event(f"User loves pattern {i}", ["what_interests_hobbies"]) for i in range(101)]))})
    s.call("upp/get_events", {"entity_key": "w"})
    # issue 14: an id no double holds, a batch over the limit, a 2 MiB message, paths leading out of the import folders
    s.send('{"jsonrpc":"2.0","method":"upp/info","id":1e400}')
    s.send([{"jsonrpc": "2.0", "method": "upp/info", "id": i} for i in range(101)])
    s.send({"jsonrpc": "2.0", "method": "upp/info", "params": {"pad": "x" * (2 << 20)}, "id": "large"})
    outside = tmp_path / f"outside-{fault}"
    outside.mkdir()
    write(outside, "p.json", package([event("User lives in Lima", ["where_home"])]))
    (incoming / "link.json").symlink_to(outside / "p.json")
    for file in (str(incoming / ".." / outside.name / "p.json"), str(incoming / "link.json")):
        s.call("upp/import_events", {"entity_key": "e", "file": file})
        reply = json.loads(s.log[-1])
        s.log[-1] = reply["error"]["code"] if "error" in reply else "imported"  # the path names the fault
    # delete
    listed_b = s.call("upp/get_events", {"entity_key": "b"}) or []
    listed_c = s.call("upp/get_events", {"entity_key": "c"}) or []
    ids_b = [e["id"] for e in listed_b if isinstance(e, dict)] if isinstance(listed_b, list) else []
    ids_c = [e["id"] for e in listed_c if isinstance(e, dict)] if isinstance(listed_c, list) else []
    # c's first event named twice: one event deleted, counted once
    s.call("upp/delete_events", {"entity_key": "c", "event_ids": ids_b[:1] + ids_c[:1] + ids_c[:1] + ["evt_nope"]})
    s.call("upp/get_events", {"entity_key": "b"})
    s.call("upp/get_events", {"entity_key": "c"})
    s.call("upp/retrieve", {"entity_key": "c", "query": "lives speaks"})
    # a staged event (Basque, confidence 0.05) deleted by its id
    staged_c = [e["id"] for e in listed_c if isinstance(e, dict) and e.get("status") == "staged"
                and e["id"] not in ids_c[:1]] if isinstance(listed_c, list) else []
    s.call("upp/delete_events", {"entity_key": "c", "event_ids": staged_c[:1] or ["evt_no_staged_event"]})
    s.call("upp/get_events", {"entity_key": "c"})
    s.call("upp/ingest", {"entity_key": "b-2", "text": "My name is Bo."})  # a key beginning with b's
    s.call("upp/get_events", {"entity_key": "b"})  # b's own events only, not b-2's
    s.call("upp/delete_events", {"entity_key": "b"})
    s.call("upp/get_events", {"entity_key": "b"})
    s.call("upp/get_events", {"entity_key": "b-2"})
    # export
    result = s.call("upp/export_events", {"entity_key": "a"})
    file = result.get("file") if isinstance(result, dict) else None
    s.log.append(Path(file).read_text("utf-8") if file and Path(file).exists() else "no file")
    s.call("upp/import_events", {"entity_key": "d", "file": file or "x"})
    s.call("upp/get_events", {"entity_key": "d"})
    # a user keyed as no file may be named
    s.call("upp/ingest", {"entity_key": "f.maría@example.com", "text": "My name is Fay."})
    result = s.call("upp/export_events", {"entity_key": "f.maría@example.com"})
    file = result.get("file") if isinstance(result, dict) else None
    s.log.append(json.loads(Path(file).read_text("utf-8"))["entity_key"] if file and Path(file).exists() else "no file")
    # contextualize and tasks
    ctx = s.call("upp/contextualize", {"entity_key": "a", "text": "I moved to Lima. I enjoy rain."})
    task = ctx.get("task_id") if isinstance(ctx, dict) else None
    deadline = time.monotonic() + 0.5
    statuses: Any = None
    while task and time.monotonic() < deadline:
        statuses = s.call("upp/get_tasks", {"task_ids": [task]})
        s.log.pop()
        if isinstance(statuses, list) and statuses and statuses[0]["status"] in ("completed", "failed"):
            break
        time.sleep(0.01)
    s.call("upp/get_tasks", {"task_ids": [task or "t", "task_unknown", task or "t"]})
    s.call("upp/get_tasks", {"task_ids": [task or "t"]})
    s.call("upp/get_events", {"entity_key": "a"})
    # round 23: a task whose ingest stores nothing is still a task; deleted events leave a task's result
    quiet = s.call("upp/contextualize", {"entity_key": "q", "text": "Hello there, how are you today?"})
    quiet_task = quiet.get("task_id") if isinstance(quiet, dict) else None
    deadline = time.monotonic() + 0.5
    while quiet_task and time.monotonic() < deadline:
        found = s.call("upp/get_tasks", {"task_ids": [quiet_task]})
        s.log.pop()
        if not (isinstance(found, list) and found and found[0].get("status") not in ("completed", "failed")):
            break
        time.sleep(0.01)
    s.call("upp/get_tasks", {"task_ids": [quiet_task or "t"]})
    s.call("upp/delete_events", {"entity_key": "a"})
    s.call("upp/get_tasks", {"task_ids": [task or "t"]})
    # round 23: every entry of a package counted once, none stored beside an error
    s.call("upp/import_events", {"entity_key": "acct", "file": s.file("p7.json", package(
        [event("User's name is Ada", ["who_name"]), 42, event("User loves go", ["what_interests_hobbies"],
                                                              source_type="mcf_guess")]))})
    s.call("upp/get_events", {"entity_key": "acct"})
    # round 23: the superseded event stays superseded when its successor is deleted
    s.call("upp/ingest", {"entity_key": "rv", "text": "My name is Ida."})
    later = s.call("upp/ingest", {"entity_key": "rv", "text": "My name is Ivy."}) or []
    s.call("upp/delete_events", {"entity_key": "rv", "event_ids": [e["id"] for e in later if isinstance(e, dict)]})
    s.call("upp/get_events", {"entity_key": "rv"})
    # round 23: an unpaired surrogate refused in UTF-8 JSON
    s.send('{"jsonrpc":"2.0","method":"upp/ingest","params":{"entity_key":"s","text":"I am \\ud800"},"id":1}')
    try:
        s.log[-1] = service.encode(s.log[-1]) if isinstance(s.log[-1], str) else s.log[-1]
    except UnicodeEncodeError:  # the fault's answer: no UTF-8 holds it (a binding would fail on it)
        s.log[-1] = "no UTF-8 answer"
    # round 27: a notification is carried out, only its response left out
    s.send('{"jsonrpc":"2.0","method":"upp/ingest","params":{"entity_key":"nt","text":"My name is Noa."}}')
    s.call("upp/get_events", {"entity_key": "nt"})
    # round 27: a reinforced event keeps its created_at (the clock moved on in between)
    s.call("upp/import_events", {"entity_key": "rc", "file": s.file("p8.json", package(
        [event("User speaks Ainu", ["who_languages"], 0.05)]))})
    clock.now = clock.now + timedelta(seconds=1)
    s.call("upp/ingest", {"entity_key": "rc", "text": "I speak Ainu"})
    s.call("upp/get_events", {"entity_key": "rc"})
    # round 27: keys of 80 characters sharing their first 79 are two users
    s.call("upp/ingest", {"entity_key": "k" * 79 + "A", "text": "My name is Lu."})
    s.call("upp/get_events", {"entity_key": "k" * 79 + "B"})
    # round 27: a retrieve asked before a delete does not answer the deleted event after it
    made = s.call("upp/ingest", {"entity_key": "rd", "text": "I love kites. I love tea."})
    made = made if isinstance(made, list) else []
    s.call("upp/retrieve", {"entity_key": "rd", "query": "kites"})
    s.call("upp/delete_events", {"entity_key": "rd", "event_ids": [e["id"] for e in made[:1] if isinstance(e, dict)]})
    s.call("upp/retrieve", {"entity_key": "rd", "query": "kites"})
    # round 27: delete-all deletes the superseded event too
    s.call("upp/ingest", {"entity_key": "da", "text": "My name is Dee."})
    s.call("upp/ingest", {"entity_key": "da", "text": "My name is Dot."})
    s.call("upp/delete_events", {"entity_key": "da"})
    s.call("upp/get_events", {"entity_key": "da"})
    # round 27: a label in another case is no label of user/v1
    s.call("upp/import_events", {"entity_key": "lc", "file": s.file("p9.json", package(
        [event("User speaks Cree", ["WHO_LANGUAGES"])]))})
    # round 27: a user keyed "team/a" is exported like any other
    s.call("upp/ingest", {"entity_key": "team/a", "text": "My name is Tam."})
    result = s.call("upp/export_events", {"entity_key": "team/a"})
    file = result.get("file") if isinstance(result, dict) else None
    s.log.append(json.loads(Path(file).read_text("utf-8"))["entity_key"] if file and Path(file).exists() else "no file")
    # round 27: the labels after all those retrieves are the ontology's, as at the start
    s.call("upp/get_labels", {})
    # the bindings' own framing and encoding (stdio.run closes the service)
    import io

    out = io.BytesIO()
    try:
        stdio.run(service, io.BytesIO(b'{"jsonrpc":"2.0","method":"upp/ingest","params":{"entity_key":"z",'
                                      b'"text":"My name is Ren\xc3\xa9e"},"id":1}\n'
                                      b'{"jsonrpc":"2.0","method":"upp/get_labels","params":{},"id":2}\n'
                                      b'{"jsonrpc":"2.0","method":"upp/export_events","params":{"entity_key":"z"},'
                                      b'"id":3}\n{oops\n'), out)
    except SystemExit as exc:  # a fault that ends the process on a line it cannot parse
        out.write(f"exited {exc.code}".encode())
    s.log.append(re.sub(rb"-\d{8}T\d{6}Z-[0-9a-f]{8}\.json", b".json", out.getvalue()).decode("latin-1"))
    return normalize(s.log, tmp_path)


def normalize(log: list[Any], tmp_path: Path) -> list[str]:
    seen: dict[str, str] = {}

    def token(m: re.Match[str]) -> str:
        return seen.setdefault(m.group(0), f"<{m.group(1)}{len(seen)}>")

    out = []
    for item in log:
        text = "" if item is None else str(item)
        text = text.replace(str(tmp_path), "<tmp>")
        text = re.sub(r"exports-[\w-]+", "exports", text)
        text = re.sub(r"incoming-[\w-]+", "incoming", text)
        text = re.sub(r"(evt_|task_)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", token, text)
        text = re.sub(r"-\d{8}T\d{6}Z-[0-9a-f]{8}\.json", ".json", text)
        out.append(text)
    return out


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return run_scenario(None, tmp_path_factory.mktemp("clean"))


def test_the_scenario_is_deterministic_without_a_fault(clean_run: list[str], tmp_path: Path) -> None:
    assert run_scenario(None, tmp_path) == clean_run


#: faults of the HTTP app in front of the engine, which no engine call shows: proven in test_upp_http.py
HTTP_APP_FAULTS = ("upp-chunked-body-ignored",)


# the faults only a sequence of operations shows are proven by tests/harness/test_stateful_faults_upp_omf.py
@pytest.mark.parametrize("fault", [f.name for f in UPP_FAULTS if not f.stateful and f.name not in HTTP_APP_FAULTS])
def test_every_fault_changes_observable_behaviour(fault: str, clean_run: list[str], tmp_path: Path) -> None:
    faulty = run_scenario(fault, tmp_path)
    differences = [i for i, (a, b) in enumerate(zip(clean_run, faulty)) if a != b]
    assert differences or len(faulty) != len(clean_run), f"{fault} changed nothing a client sees"


# A few faults by what exactly they change (the scenario above only proves that they change something).

def test_fault_plural_supersedes_and_singular_accumulates(exports_dir: Path) -> None:
    for fault, plural, singular in (("upp-plural-supersedes", {"superseded", "valid"}, {"superseded", "valid"}),
                                    ("upp-singular-accumulates", {"valid"}, {"valid"})):
        service = UppService(export_dir=exports_dir, fault=fault)
        try:
            ok(service, "upp/ingest", {"entity_key": "u", "text": "I love a. I love b. My name is A. My name is B."})
            listed = events(service, "u")
            assert {e["status"] for e in listed[:2]} == plural and {e["status"] for e in listed[2:]} == singular
        finally:
            service.close()


def test_fault_delete_soft_hides_from_get_events_only(exports_dir: Path) -> None:
    service = UppService(export_dir=exports_dir, fault="upp-delete-soft")
    try:
        [e] = ok(service, "upp/ingest", {"entity_key": "u", "text": "I love sailing"})
        assert ok(service, "upp/delete_events", {"entity_key": "u"}) == {"deleted_count": 1}
        assert events(service, "u") == []
        assert ok(service, "upp/retrieve", {"entity_key": "u", "query": "sailing"}) == [e]
        assert ok(service, "upp/export_events", {"entity_key": "u"})["event_count"] == 1
    finally:
        service.close()


def test_fault_delete_count_counts_requested_counts_a_twice_named_event_twice(exports_dir: Path) -> None:
    for fault, twice in ((None, 1), ("upp-delete-count-counts-requested", 2)):
        service = UppService(export_dir=exports_dir, fault=fault)
        try:
            a, b = ok(service, "upp/ingest", {"entity_key": "u", "text": "I love sailing. I love chess."})
            assert ok(service, "upp/delete_events", {"entity_key": "u", "event_ids": [a["id"], a["id"]]}) == {
                "deleted_count": twice}
            # an id already deleted, and an unknown one, still count 0 to both
            assert ok(service, "upp/delete_events", {"entity_key": "u", "event_ids": [b["id"], a["id"], "evt_x"]}) == {
                "deleted_count": 1}
        finally:
            service.close()


def test_fault_task_times_local_writes_a_non_zero_offset(exports_dir: Path) -> None:
    from memconform.suite.upp import isotime

    for fault, utc in ((None, True), ("upp-task-times-local", False), ("upp-task-times-naive", False)):
        service = UppService(export_dir=exports_dir, fault=fault, clock=Clock())
        try:
            task = ok(service, "upp/contextualize", {"entity_key": "u", "text": "I love rain"})["task_id"]
            status = wait_task(service, task)
            assert status["status"] == "completed"
            times = (status["created_at"], status["completed_at"])
            assert all(isotime.is_utc_date_time(t) for t in times) is utc, times
            # the same instant either way; the events keep the service's own times
            when = datetime.fromisoformat(status["created_at"].replace("Z", "+00:00"))
            assert (when if when.tzinfo else when.replace(tzinfo=timezone.utc)) == T0
            assert [e["created_at"] for e in status["result"]] == ["2026-03-01T12:00:00.000000Z"]
        finally:
            service.close()


def test_fault_delete_other_user_deletes_another_users_event(exports_dir: Path) -> None:
    service = UppService(export_dir=exports_dir, fault="upp-delete-other-user")
    try:
        [e] = ok(service, "upp/ingest", {"entity_key": "victim", "text": "I love sailing"})
        assert ok(service, "upp/delete_events", {"entity_key": "me", "event_ids": [e["id"]]}) == {"deleted_count": 1}
        assert err(service, "upp/get_events", {"entity_key": "victim"}).code == -32001
    finally:
        service.close()


def test_fault_near_miss_names_serves_and_lists_the_near_misses(exports_dir: Path) -> None:
    service = UppService(export_dir=exports_dir, fault="upp-near-miss-method-names")
    try:
        info = ok(service, "upp/info")
        assert "upp/events" in info["operations"] and "upp/get_events" not in info["operations"]
        assert info["conformance_level"] == 1
        assert err(service, "upp/get_events", {"entity_key": "u"}).code == -32601
        assert err(service, "upp/events", {"entity_key": "u"}).code == -32001
    finally:
        service.close()


def test_fault_task_never_completes_still_stores(exports_dir: Path) -> None:
    service = UppService(export_dir=exports_dir, fault="upp-task-never-completes")
    try:
        task = ok(service, "upp/contextualize", {"entity_key": "u", "text": "I speak Ewe"})["task_id"]
        deadline = time.monotonic() + 5
        while not events(service, "u") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(events(service, "u")) == 1
        time.sleep(0.05)
        assert ok(service, "upp/get_tasks", {"task_ids": [task]})[0]["status"] == "running"
    finally:
        service.close()


def test_fault_bad_input_changes_state_keeps_a_refused_import(exports_dir: Path) -> None:
    service = UppService(export_dir=exports_dir, fault="upp-bad-input-changes-state")
    try:
        path = write(exports_dir, "p.json", package([event("User speaks Tamil", ["who_languages"])], "user/v2"))
        assert err(service, "upp/import_events", {"entity_key": "u", "file": str(path)}).code == -32002
        assert len(events(service, "u")) == 1
    finally:
        service.close()


def test_fault_responses_latin1_changes_the_bytes_sent() -> None:
    assert encode('"é"', "upp-responses-latin1") == b'"\xe9"'
    assert encode('"é"') == b'"\xc3\xa9"'
