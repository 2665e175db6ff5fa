"""memoturn typed memories in `convert`: the document forms, content-addressed ids on every new memory,
types ↔ UMP kinds, supersession ↔ UMP revise chains, task expiry ↔ UMP retention, source ↔ provenance,
what each direction loses (said exactly as the table says), and round trips through every format."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone

import pytest

from memconform.suite.convert import (ConvertOptions, InvalidInput, convert, default_corpora, format_round_trip,
                                      mapping, validate)
from memconform.suite.convert.common import ump_id_for
from memconform.suite.convert.mapping import Fate
from memconform.suite.memoturn import model as mt
from memconform.suite.ump import integrity
from memconform.suite.ump.testkeys import test_did, test_signing_key

NOW = datetime(2031, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
OPTS = ConvertOptions(now=NOW)
OTHERS = ("ump", "omf", "upp", "oams")


@pytest.fixture()
def corpora():
    return default_corpora()


def _memories(doc):
    return doc["memories"]


def test_every_direction_with_memoturn_is_built():
    assert {(a, b) for a in mapping.FORMATS for b in mapping.FORMATS if a != b and "memoturn" in (a, b)} <= set(
        mapping.table())


def test_the_corpus_is_what_get_shows(corpora):
    doc = corpora["memoturn"]
    assert validate.problems("memoturn", doc) == []
    assert {m["type"] for m in _memories(doc)} == set(mt.TYPES)
    for m in _memories(doc):
        assert m["id"] == mt.memory_id(m["type"], m["topic_key"], m["content"])


@pytest.mark.parametrize("source", OTHERS)
def test_new_memories_have_the_engines_content_addressed_ids(corpora, source):
    one = convert(corpora[source], source=source, target="memoturn", options=OPTS).document
    again = convert(copy.deepcopy(corpora[source]), source=source, target="memoturn",
                    options=ConvertOptions(now=datetime(2040, 1, 1, tzinfo=timezone.utc))).document
    assert validate.problems("memoturn", one) == []
    for m in _memories(one):
        assert mt.ID_PATTERN.fullmatch(m["id"])
        assert m["id"] == mt.memory_id(m["type"], m["topic_key"], m["content"])
        assert m["topic_key"] is None   # no other format names a supersession key
        assert list(m["content"]) == ["x-extensions"] and list(m["content"]["x-extensions"]) == [source]
    # the same records are the same memories, whenever converted: a re-ingest is a duplicate
    assert [m["id"] for m in _memories(one)] == [m["id"] for m in _memories(again)]
    assert len({m["id"] for m in _memories(one)}) == len(_memories(one))


def test_types_and_ump_kinds(corpora):
    records = convert(corpora["memoturn"], source="memoturn", target="ump", options=OPTS).document
    assert [(m["type"], r["kind"]) for m, r in zip(_memories(corpora["memoturn"]), records)] == [
        ("fact", "semantic"), ("fact", "semantic"), ("event", "episodic"), ("task", "working"),
        ("instruction", "procedural"), ("event", "episodic"), ("fact", "semantic")]
    kinds = {r["kind"]: r for r in corpora["ump"] if r.get("consent", {}).get("exportable") is not False}
    memories = _memories(convert(list(kinds.values()), source="ump", target="memoturn", options=OPTS).document)
    assert {k: m["type"] for k, m in zip(kinds, memories)} == {
        "semantic": "fact", "episodic": "event", "procedural": "instruction", "working": "task", "identity": "fact"}


def test_memoturn_to_ump_maps_summary_content_session_and_source(corpora):
    memories = _memories(corpora["memoturn"])
    records = convert(corpora["memoturn"], source="memoturn", target="ump", options=OPTS).document
    for m, r in zip(memories, records):
        assert r["body"]["text"] == m["summary"]
        assert r["body"]["structured"]["content"] == m["content"]
        assert r["id"] == ump_id_for("memoturn", m["id"])
        assert r["provenance"]["source"] == {"provider": "memoturn", "ref": m["id"]}
        assert r["scope"].get("agent") == m["source"] and r["scope"].get("session") == m["session_id"]
        assert r["time"]["created"].startswith("2026-04-18T")
    task = records[3]
    assert task["consent"] == {"retention": "PT86400S"}   # the task's lifetime from created_at
    assert task["time"]["created"] == "2026-04-18T08:16:20.123Z"


def test_supersession_becomes_a_ump_revise_chain_and_back(corpora):
    old, new = _memories(corpora["memoturn"])[:2]
    records = convert(corpora["memoturn"], source="memoturn", target="ump", options=OPTS).document
    r_old, r_new = records[:2]
    assert r_old["superseded_by"] == [r_new["id"]] and r_new["supersedes"] == [r_old["id"]]
    assert r_old["time"]["valid_to"] == "2026-04-18T08:14:20Z"   # superseded_at
    assert validate.ump_problems(records) == []
    # a UMP revise chain the other way: each end names the memory the other record became
    fresh = [copy.deepcopy(r) for r in records[:2]]
    for r in fresh:
        del r["body"]["structured"]["x-extensions"]
    memories = _memories(convert(fresh, source="ump", target="memoturn", options=OPTS).document)
    m_old, m_new = memories
    assert m_old["superseded_by"] == m_new["id"] and m_new["supersedes"] == [m_old["id"]]
    assert m_old["superseded_at"] == old["superseded_at"] and m_new["superseded_by"] is None
    assert new["id"] != m_new["id"]   # its content now carries the UMP record: another memory


def test_ump_working_records_expire_by_their_retention(corpora):
    base = next(r for r in corpora["ump"] if r["kind"] == "working")
    with_retention, without = copy.deepcopy(base), copy.deepcopy(base)
    with_retention["consent"] = {"retention": "P7DT1H30.5S", "exportable": True}
    without.pop("consent", None)
    tasks = _memories(convert([with_retention, without], source="ump", target="memoturn", options=OPTS).document)
    created = tasks[0]["created_at"]
    assert tasks[0]["type"] == tasks[1]["type"] == "task"
    assert tasks[0]["expires_at"] - created == ((7 * 24 + 1) * 3600 + 30) * 1000 + 500
    assert tasks[1]["expires_at"] - tasks[1]["created_at"] == mt.TASK_TTL_DEFAULT * 1000
    facts = _memories(convert([r for r in corpora["ump"] if r["kind"] == "semantic"], source="ump",
                              target="memoturn", options=OPTS).document)
    assert all(m["expires_at"] is None for m in facts)


def test_ump_agent_and_session_are_source_and_session_id(corpora):
    record = next(r for r in corpora["ump"] if r["scope"].get("agent"))
    memory = _memories(convert([record], source="ump", target="memoturn", options=OPTS).document)[0]
    assert memory["source"] == record["scope"]["agent"]
    assert memory["session_id"] == record["scope"].get("session")


def test_a_blank_ump_text_is_kept_while_the_summary_says_so(corpora):
    record = copy.deepcopy(corpora["ump"][0])
    record["body"]["text"] = " \n"
    there = convert([record], source="ump", target="memoturn", options=OPTS)
    assert _memories(there.document)[0]["summary"] == "(no text)" and not [x for x in there.lost if x.record]
    back = convert(there.document, source="memoturn", target="ump", options=OPTS).document
    assert back[0]["body"]["text"] == " \n"


def test_signing_the_ump_records_a_memoturn_document_becomes(corpora):
    key = test_signing_key("owner-a")
    records = convert(corpora["memoturn"], source="memoturn", target="ump",
                      options=ConvertOptions(now=NOW, sign_key=key)).document
    assert all(r["scope"]["owner"] == test_did("owner-a") and integrity.verify(r).ok for r in records)


def test_oams_source_id_tags_and_namespace(corpora):
    memories = convert(corpora["memoturn"], source="memoturn", target="oams", options=OPTS).document
    first = memories[0]
    assert first["key"] == _memories(corpora["memoturn"])[0]["id"] and first["namespace"] == "memoturn:default"
    assert first["source_id"] == "claude-code" and first["tags"] == ["food", "preference"]
    assert first["created_at"] == first["updated_at"] == "2026-04-18T08:13:20Z"
    back = _memories(convert(corpora["oams"], source="oams", target="memoturn", options=OPTS).document)
    assert back[0]["source"] == corpora["oams"][0]["source_id"] and back[0]["keywords"] == "preferences ui"
    assert back[1]["source"] is None and all(m["type"] == "fact" for m in back)


def test_omf_and_upp_hints(corpora):
    items = convert(corpora["memoturn"], source="memoturn", target="omf", options=OPTS).document["memories"]
    assert items[0]["status"] == "superseded" and items[0]["extensions"]["memd"]["chunk_id"].startswith("mem_")
    assert items[3]["expires_at"] == "2026-04-19T08:16:20.123Z"
    package = convert(corpora["memoturn"], source="memoturn", target="upp", options=OPTS).document
    events = package["events"]
    assert package["entity_key"] == "memoturn"
    assert events[0]["status"] == "superseded" and events[0]["superseded_by"] == events[1]["id"]
    assert events[0]["source_type"] == "agent_observed" and events[2]["source_type"] == "inferred"
    # memd's lifecycle and UPP's superseded_by become memoturn supersession
    for source in ("omf", "upp"):
        memories = _memories(convert(corpora[source], source=source, target="memoturn", options=OPTS).document)
        linked = [m for m in memories if m["superseded_by"]]
        assert linked, source
        by_id = {m["id"]: m for m in memories}
        for m in linked:
            assert m["id"] in by_id[m["superseded_by"]]["supersedes"]


# -- losses ---------------------------------------------------------------------------------------

def test_what_the_memoturn_pairs_lose():
    lost = {(a, b): {r.field for r in mapping.rows(a, b) if r.fate is Fate.LOST}
            for a, b in mapping.table() if "memoturn" in (a, b)}
    for other in OTHERS:
        assert lost[("memoturn", other)] == {"document:/*"}   # a recall answer's txid; every field rides
    ump_oams = {r.field for r in mapping.rows("ump", "oams") if r.fate is Fate.LOST}
    assert lost[("ump", "memoturn")] == ump_oams == {"/integrity", "@unexportable", "@redacted"}
    assert lost[("oams", "memoturn")] == set()
    assert lost[("omf", "memoturn")] == {"document:/source", "document:/exported_at"}
    assert lost[("upp", "memoturn")] == {"document:/exported_at"}


@pytest.mark.parametrize("target", OTHERS)
def test_a_recall_answers_txid_is_reported_lost(corpora, target):
    result = convert(corpora["memoturn"], source="memoturn", target=target, options=OPTS)
    assert [(x.record, x.field, x.row) for x in result.lost] == [
        ("", "document:/txid", f"mapping/memoturn-{target}/document.*")]
    assert "txid" in result.lost[0].reason


def test_ump_to_memoturn_reports_what_ump_to_oams_reports(corpora):
    to_mt = convert(corpora["ump"], source="ump", target="memoturn", options=OPTS).lost
    to_oams = convert(corpora["ump"], source="ump", target="oams", options=OPTS).lost
    assert [(x.record, x.field, x.row.replace("-memoturn/", "-oams/")) for x in to_mt] == [
        (x.record, x.field, x.row) for x in to_oams]
    text = json.dumps(convert(corpora["ump"], source="ump", target="memoturn", options=OPTS).document)
    signed = next(r for r in corpora["ump"] if "integrity" in r)
    assert signed["integrity"]["signature"] not in text and "sk-live-0000" not in text


def test_every_memoturn_cycle_keeps_everything(corpora):
    for other in OTHERS:
        rt = format_round_trip(corpora["memoturn"], ["memoturn", other, "memoturn"], OPTS)
        assert rt.kept_everything and rt.extra["kept_though_lost"] == [], [x.describe() for x in rt.losses]
        back = convert(convert(corpora["memoturn"], source="memoturn", target=other, options=OPTS).document,
                       source=other, target="memoturn", options=OPTS).document
        assert back == {"memories": _memories(corpora["memoturn"])}   # ids, nulls and member order too
    for other in ("omf", "upp", "oams"):
        rt = format_round_trip(corpora[other], [other, "memoturn", other], OPTS)
        assert rt.kept_everything, [x.describe() for x in rt.losses]


def test_an_edited_summary_comes_home(corpora):
    there = convert(corpora["memoturn"], source="memoturn", target="ump", options=OPTS).document
    there[2]["body"]["text"] = "deployed v3 to prod"
    back = _memories(convert(there, source="ump", target="memoturn", options=OPTS).document)
    # the carried memory keeps its id: an edit outside (type, topic_key, content) is not another memory
    assert back[2]["summary"] == "deployed v3 to prod" and back[2]["id"] == _memories(corpora["memoturn"])[2]["id"]


# -- documents ------------------------------------------------------------------------------------

def test_a_list_and_one_memory_are_documents(corpora):
    memories = _memories(corpora["memoturn"])
    assert len(convert(memories, source="memoturn", target="oams", options=OPTS).document) == len(memories)
    assert len(convert(memories[2], source="memoturn", target="oams", options=OPTS).document) == 1
    assert convert([], source="memoturn", target="ump", options=OPTS).document == []
    assert convert([], source="ump", target="memoturn", options=OPTS).document == {"memories": []}


@pytest.mark.parametrize("change,needle", [
    ({"id": "mem_XYZ"}, "memoturn/id-construction"),
    ({"type": "note"}, "memoturn/type-enum"),
    ({"topic_key": "user.x"}, "memoturn/topic-key-only-fact-instruction"),   # on an event
    ({"summary": "  "}, "memoturn/summary-required"),
    ({"expires_at": 1}, "tasks only"),
    ({"created_at": "2026-04-18T00:00:00Z"}, "/memories/0/created_at"),
    ({"supersedes": "mem_x"}, "memoturn/supersedes-listed"),
])
def test_invalid_memories_are_refused_naming_the_problem(corpora, change, needle):
    memory = {**_memories(corpora["memoturn"])[2], **change}
    with pytest.raises(InvalidInput) as caught:
        convert({"memories": [memory]}, source="memoturn", target="ump", options=OPTS)
    assert needle in str(caught.value) and "not a valid MEMOTURN document" in str(caught.value)


def test_content_is_required_and_the_envelope_must_hold_memories():
    with pytest.raises(InvalidInput, match="no content"):
        convert([{"id": "mem_" + "0" * 32, "type": "fact", "summary": "s"}], source="memoturn", target="ump")
    with pytest.raises(InvalidInput, match='a memoturn document is {"memories"'):
        convert({"memories": "none"}, source="memoturn", target="ump")
