"""suite/memoturn/interop.py: a round trip between two reference nodes (one over REST, one over MCP)
keeps everything; each lossy node (a fault of reference_impl/memoturn/faults.py) loses exactly the
fields its fault touches, charged to the promise and at the stage where it happened."""

from __future__ import annotations

import json

import pytest

from memconform.suite.memoturn import model
from memconform.suite.memoturn.client import MemoturnReply
from memconform.suite.memoturn.interop import CHAIN, PLAN, _chain_order, _Side, round_trip
from memconform.suite.outcomes import NotApplicable

from .helpers import reference

VERSION = "2026.06"
NAMES = [name for name, _ in PLAN]
MEMORIES = dict(PLAN)


def _trip(fault_a=None, fault_b=None, binding_a="http", binding_b="mcp", variants_b=()):
    with reference(binding_a, fault=fault_a) as a, reference(binding_b, fault=fault_b, variants=variants_b) as b:
        return round_trip(a(), b(), version=VERSION, source_label="A", destination_label="B")


def _lost(rt):
    return {(x.record, x.field, x.requirement) for x in rt.losses}


def _described(rt) -> str:
    return "\n".join([*(x.describe() for x in rt.losses), *(f"note: {n}" for n in rt.notes)])


def _has_null_in_array(value) -> bool:
    if isinstance(value, list):
        return None in value or any(_has_null_in_array(v) for v in value)
    if isinstance(value, dict):
        return any(_has_null_in_array(v) for v in value.values())
    return False


def _out_of_order(value) -> bool:
    return json.dumps(value, ensure_ascii=False) != json.dumps(value, ensure_ascii=False, sort_keys=True)


# -- the plan the round trip rests on -------------------------------------------------------------

def test_the_plan_holds_a_chain_sessions_unicode_and_a_task_with_its_own_ttl():
    assert CHAIN.superseded_by == {"diet-1": "diet-2", "diet-2": "diet-3", "style-1": "style-2", "deploy": None,
                                   "menu": None, "style-2": None, "pet": None, "diet-3": None, "refund": None}
    assert {n for n, m in PLAN if m.get("session_id")} == {"deploy", "menu", "refund"}
    assert all(m.get("source") for _, m in PLAN)  # an MCP node may default a missing one (a MAY)
    assert MEMORIES["refund"]["ttl"] == 3600 != model.TASK_TTL_DEFAULT
    assert any(not s.isascii() for _, m in PLAN for s in (m["summary"], json.dumps(m["content"], ensure_ascii=False)))
    # the contents the faults below need: nulls in arrays, members out of code-point order, no floats
    assert {n for n, m in PLAN if _has_null_in_array(m["content"])} == {"deploy", "diet-2", "refund"}
    assert {n for n, m in PLAN if _out_of_order(m["content"])} == {"style-1", "deploy", "style-2"}
    assert not any(model.has_float(m["content"]) for _, m in PLAN)
    assert len({model.id_of(m) for _, m in PLAN}) == len(PLAN)


# -- clean ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("binding_a, binding_b", [("http", "mcp"), ("mcp", "http")])
def test_reference_to_reference_keeps_everything(binding_a, binding_b):
    rt = _trip(binding_a=binding_a, binding_b=binding_b)
    assert rt.losses == () and rt.notes == (), _described(rt)
    assert rt.compared == rt.placed == len(PLAN) and rt.kept_everything
    assert (rt.spec, rt.version, rt.source, rt.destination) == ("memoturn", VERSION, "A", "B")
    # both follow the engine's construction: A's ids are the plan's
    assert rt.extra["records"] == {n: model.id_of(m) for n, m in PLAN}


def test_a_forget_that_answers_204_keeps_everything_and_the_round_trip_leaves_nothing_behind():
    with reference("http") as a, reference("http", variants=("memoturn-forget-204",)) as b:
        source, destination = a(), b()
        rt = round_trip(source, destination, version=VERSION, source_label="A", destination_label="B")
        assert rt.losses == () and rt.compared == rt.placed, _described(rt)
        for client, profile in ((source, rt.extra["profiles"]["source"]),
                                (destination, rt.extra["profiles"]["destination"])):
            for mid in rt.extra["records"].values():
                assert client.get(profile, mid).missing, (profile, mid)


# -- a lossy destination: charged at "import into B" ------------------------------------------------

FACTS_SUPERSEDE = "memoturn/fact-supersedes"
DESTINATION = {
    "memoturn-content-drops-nulls": {(n, "/content", "memoturn/content-returned")
                                     for n, m in PLAN if _has_null_in_array(m["content"])},
    "memoturn-get-no-session": {(n, "/session_id", "memoturn/record-fields") for n, m in PLAN if m.get("session_id")},
    # the same memory told in other words gets another id on B: not content-addressed at all (a MUST)
    "memoturn-id-hashes-summary": {(n, "/id", "memoturn/id-content-addressed") for n in NAMES},
    # content-addressed, by a construction of its own: only the SHOULD
    "memoturn-id-member-order": {(n, "/id", "memoturn/id-construction")
                                 for n, m in PLAN if _out_of_order(m["content"])},
    "memoturn-facts-never-supersede": {("diet-1", "/superseded_by", FACTS_SUPERSEDE),
                                       ("diet-2", "/superseded_by", FACTS_SUPERSEDE),
                                       ("diet-2", "/supersedes", FACTS_SUPERSEDE),
                                       ("diet-3", "/supersedes", FACTS_SUPERSEDE)},
    "memoturn-instructions-never-supersede": {("style-1", "/superseded_by", "memoturn/instruction-supersedes"),
                                              ("style-2", "/supersedes", "memoturn/instruction-supersedes")},
    # the chain happened (the old rows point at the new): only the listing is lost
    "memoturn-supersedes-empty": {(n, "/supersedes", "memoturn/supersedes-listed") for n in ("diet-2", "diet-3",
                                                                                             "style-2")},
    "memoturn-events-supersede": {("deploy", "/superseded_by", "memoturn/event-never-supersedes"),
                                  ("menu", "/supersedes", "memoturn/event-never-supersedes")},
    "memoturn-ttl-minutes": {("refund", "/expires_at", "memoturn/task-ttl-explicit")},
    "memoturn-expiry-on-everything": {(n, "/expires_at", "memoturn/expires-at-tasks-only")
                                      for n, m in PLAN if m["type"] != "task"},
}


@pytest.mark.parametrize("fault", sorted(DESTINATION))
def test_a_lossy_destination_is_charged_at_its_import(fault):
    rt = _trip(fault_b=fault)
    assert _lost(rt) == DESTINATION[fault], _described(rt)
    assert {x.stage for x in rt.losses} == {"import into B"}
    assert rt.compared == rt.placed


def test_the_values_of_a_loss_are_what_was_placed_and_what_came_back():
    rt = _trip(fault_b="memoturn-ttl-minutes")
    (loss,) = rt.losses
    assert (loss.expected, loss.got) == ("created_at + 3600 s", "created_at + 216000 s")
    rt = _trip(fault_b="memoturn-facts-never-supersede")
    chain = {(x.record, x.field): (x.expected, x.got) for x in rt.losses}
    assert chain[("diet-1", "/superseded_by")] == ("diet-2", None)  # plan names, not either node's ids
    assert chain[("diet-3", "/supersedes")] == (["diet-2"], [])


# -- a lossy source: charged at "export from A", and B is not charged again ------------------------

SOURCE = {
    "memoturn-content-drops-nulls": {"memoturn/content-returned"},
    "memoturn-id-hashes-summary": {"memoturn/id-content-addressed"},
    "memoturn-id-member-order": {"memoturn/id-construction"},
    "memoturn-supersedes-empty": {"memoturn/supersedes-listed"},
    "memoturn-ttl-minutes": {"memoturn/task-ttl-explicit"},
    "memoturn-get-no-session": {"memoturn/record-fields"},
}


@pytest.mark.parametrize("fault", sorted(SOURCE))
def test_a_lossy_source_is_charged_to_the_source(fault):
    rt = _trip(fault_a=fault)
    assert rt.losses, _described(rt)
    assert {x.stage for x in rt.losses} == {"export from A"}, _described(rt)
    assert {x.requirement for x in rt.losses} == SOURCE[fault]
    assert rt.compared == rt.placed


def test_what_a_source_lost_moves_bs_ids_without_charging_b():
    rt = _trip(fault_a="memoturn-content-drops-nulls")
    assert _lost(rt) == DESTINATION["memoturn-content-drops-nulls"]
    # B hashed the content A showed, as it should: noted, not charged
    assert sum("B's id is expected from what it was sent" in n for n in rt.notes) == 3


def test_a_source_that_deletes_superseded_rows_loses_them_whole_and_b_is_not_judged_on_its_chain():
    rt = _trip(fault_a="memoturn-supersede-deletes")
    superseded = {n for n, by in CHAIN.superseded_by.items() if by}
    assert _lost(rt) == {(n, "", "memoturn/history-kept") for n in superseded}, _described(rt)
    assert {x.stage for x in rt.losses} == {"export from A"}
    assert rt.compared == rt.placed - len(superseded)
    assert any(n.startswith("the chain on B is not compared") for n in rt.notes)


# -- the journey's pieces ------------------------------------------------------------------------------

def test_b_gets_each_row_before_the_row_that_superseded_it_on_a():
    a = _Side(client=None, label="A", profile="p", stage="export from A")  # type: ignore[arg-type]
    a.ids = {"new": "mem_new", "other": "mem_other", "mid": "mem_mid", "old": "mem_old"}
    a.view = {"new": {"supersedes": ["mem_mid"]}, "other": {}, "mid": {"superseded_by": "mem_new"},
              "old": {"superseded_by": "mem_mid"}}
    assert _chain_order(a, ["new", "other", "mid", "old"]) == ["other", "old", "mid", "new"]
    a.view = {"new": {"superseded_by": "mem_old"}, "other": {}, "mid": {}, "old": {"superseded_by": "mem_new"}}
    # a cycle: the rows outside it first, the rows in it in A's order
    assert _chain_order(a, ["new", "other", "mid", "old"]) == ["other", "mid", "new", "old"]


class _Refusing:
    binding, namespace = "http", "memconform"

    def __init__(self):
        self.calls = []

    def ingest(self, profile, memories):
        self.calls.append(("ingest", len(memories)))
        envelope = {"error": "read only", "code": "forbidden"}
        return MemoturnReply("ingest", "http", "POST /v1/memory/…", {"memories": memories}, 403,
                             json.dumps(envelope), envelope, error=envelope)

    def forget(self, profile, id):
        self.calls.append(("forget", id))
        raise AssertionError("nothing was placed")


def test_a_source_that_takes_no_memory_makes_no_round_trip():
    source = _Refusing()
    with pytest.raises(NotApplicable, match="does not take the memories a round trip places"):
        round_trip(source, _Refusing(), version=VERSION, source_label="A", destination_label="B")
    assert source.calls == [("ingest", len(PLAN))] + [("ingest", 1)] * len(PLAN)


def test_memoturn_is_paired_over_http_then_mcp():
    from memconform.suite.interop import pairing

    assert pairing.ROUND_TRIPS["memoturn"] == "memconform.suite.memoturn.interop"
    assert pairing.BINDING_PREFERENCE["memoturn"] == ("http", "mcp")
