"""The memoturn reference engine and its bindings: the page's running example, the ingest statuses
(created, duplicate, revived), supersession keyed by (type, topic_key), provenance, atomic and
capped batches, task expiry on an injected clock, sessions, recall's channels and filters, forget,
the error envelope over REST, the variants' decision points, and the memory_* tools over MCP."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.testclient import TestClient

from memconform.reference_impl.memoturn.engine import MemoturnError, MemoturnService
from memconform.reference_impl.memoturn.http import app
from memconform.reference_impl.memoturn.policy import MemoturnPolicy
from memconform.reference_impl.memoturn.variants import MEMOTURN_VARIANTS, apply
from memconform.suite.memoturn import model

NS, PROFILE = "acme", "alice"
T0 = 1_781_136_000_000
VEGETARIAN = {"type": "fact", "topic_key": "user.diet", "summary": "vegetarian since 2024",
              "content": {"diet": "vegetarian"}, "keywords": "food preference"}
VEGAN = {"type": "fact", "topic_key": "user.diet", "summary": "vegan since 2026", "content": {"diet": "vegan"},
         "keywords": "food preference"}


class Clock:
    def __init__(self, now: int = T0):
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def service(clock):
    s = MemoturnService(now_ms=clock)
    yield s
    s.close()


@pytest.fixture
def client(service):
    with TestClient(app(service)) as c:
        yield c


def ingest(service, *memories, profile=PROFILE):
    return service.ingest(NS, profile, {"memories": list(memories)})


def statuses(answer):
    return [(r["status"], r["superseded"]) for r in answer["results"]]


def refused(call, code="invalid_request"):
    with pytest.raises(MemoturnError) as info:
        call()
    assert info.value.code == code, info.value.message
    assert info.value.status == model.ERROR_CODES[code]
    return info.value


def recall_ids(service, profile=PROFILE, **params):
    return [m["id"] for m in service.recall(NS, profile, params)["memories"]]


def event(summary, **extra):
    return {"type": "event", "summary": summary, "content": {"what": summary}, **extra}


# -- the page's running example, over REST ---------------------------------------------------------

def test_running_example_over_rest(client, clock):
    old, new = model.id_of(VEGETARIAN), model.id_of(VEGAN)
    r1 = client.post(f"/v1/memory/{NS}/{PROFILE}/memories", json={"memories": [VEGETARIAN]})
    assert r1.status_code == 201
    assert r1.json() == {"results": [{"id": old, "status": "created", "superseded": []}], "txid": 1}
    clock.now += 5
    r2 = client.post(f"/v1/memory/{NS}/{PROFILE}/memories", json={"memories": [VEGAN]})
    assert r2.json() == {"results": [{"id": new, "status": "created", "superseded": [old]}], "txid": 2}
    assert r2.headers["Memoturn-Txid"] == "2"

    got_old = client.get(f"/v1/memory/{NS}/{PROFILE}/memories/{old}").json()
    assert got_old["superseded_by"] == new and got_old["superseded_at"] == T0 + 5
    assert got_old["content"] == {"diet": "vegetarian"} and got_old["supersedes"] == []
    got_new = client.get(f"/v1/memory/{NS}/{PROFILE}/memories/{new}").json()
    assert got_new["supersedes"] == [old] and got_new["superseded_by"] is None
    assert set(got_new) == {"id", "type", "topic_key", "summary", "content", "keywords", "session_id", "source",
                            "created_at", "superseded_by", "superseded_at", "expires_at", "supersedes"}
    assert got_new["expires_at"] is None and got_new["created_at"] == T0 + 5

    hits = client.post(f"/v1/memory/{NS}/{PROFILE}/recall", json={"query": "food", "topic_key": "user.diet"}).json()
    assert [m["id"] for m in hits["memories"]] == [new]
    assert hits["memories"][0]["channels"] == ["topic", "keyword"]
    assert hits["memories"][0]["score"] == pytest.approx(3 / 61)  # recall.md's example: 0.04918
    assert hits["txid"] == 2
    both = client.post(f"/v1/memory/{NS}/{PROFILE}/recall",
                       json={"topic_key": "user.diet", "include_superseded": True}).json()
    assert [m["id"] for m in both["memories"]] == [new, old]
    assert both["memories"][1]["superseded_by"] == new


def test_ids_are_the_models(service):
    batch = [VEGETARIAN, event("deployed v2", content={"version": "v2"}),
             {"type": "task", "summary": "follow up on refund #88", "content": {}}]
    answer = ingest(service, *batch)
    assert [r["id"] for r in answer["results"]] == [model.memory_id(m["type"], m.get("topic_key"), m["content"])
                                                    for m in batch]
    assert answer["results"][1]["id"] == "mem_afee44f1da2e68829ec282b8df20e52a"
    assert answer["results"][2]["id"] == "mem_693d25b4c0b65deb35e7349addebf65a"
    assert all(model.ID_PATTERN.match(r["id"]) for r in answer["results"])


def test_key_order_and_provenance_do_not_change_the_id(service):
    a = ingest(service, {"type": "fact", "summary": "one", "content": {"a": 1, "b": 2}, "source": "x"})
    b = ingest(service, {"type": "fact", "summary": "another summary", "content": {"b": 2, "a": 1},
                         "keywords": "kw", "source": "y", "session_id": "s", "embedding": [1.0, 0.0]})
    assert a["results"][0]["id"] == b["results"][0]["id"]
    assert b["results"][0]["status"] == "duplicate"


# -- statuses --------------------------------------------------------------------------------------

def test_duplicate_writes_nothing(service, clock):
    ingest(service, VEGETARIAN)
    before = service.get(NS, PROFILE, model.id_of(VEGETARIAN))
    clock.now += 1000
    answer = ingest(service, {**VEGETARIAN, "summary": "changed", "keywords": "other"})
    assert statuses(answer) == [("duplicate", [])]
    assert service.get(NS, PROFILE, model.id_of(VEGETARIAN)) == before


def test_revived_moves_the_pointer(service, clock):
    old, new = model.id_of(VEGETARIAN), model.id_of(VEGAN)
    ingest(service, VEGETARIAN)
    clock.now += 1
    ingest(service, VEGAN)
    clock.now += 1
    answer = ingest(service, VEGETARIAN)
    assert statuses(answer) == [("revived", [new])]
    got_old, got_new = service.get(NS, PROFILE, old), service.get(NS, PROFILE, new)
    assert got_old["superseded_by"] is None and got_old["superseded_at"] is None
    assert got_new["superseded_by"] == old and got_new["superseded_at"] == T0 + 2
    assert got_old["supersedes"] == [new] and got_new["supersedes"] == []
    assert recall_ids(service, topic_key="user.diet") == [old]


def test_in_batch_duplicate(service):
    answer = ingest(service, VEGETARIAN, VEGETARIAN)
    assert statuses(answer) == [("created", []), ("duplicate", [])]


def test_in_batch_supersession(service):
    answer = ingest(service, VEGETARIAN, VEGAN)
    assert statuses(answer) == [("created", []), ("created", [model.id_of(VEGETARIAN)])]
    assert answer["txid"] == 1


def test_events_accumulate_identical_event_is_duplicate(service):
    ingest(service, event("ordered the vegan tasting menu"))
    second = ingest(service, event("ordered dessert"))
    assert statuses(second) == [("created", [])]
    again = ingest(service, event("ordered dessert"))
    assert statuses(again) == [("duplicate", [])]
    assert len(recall_ids(service, query="ordered")) == 2


def test_tasks_never_supersede(service):
    ingest(service, {"type": "task", "summary": "task one", "content": 1})
    answer = ingest(service, {"type": "task", "summary": "task two", "content": 2})
    assert statuses(answer) == [("created", [])]
    assert len(recall_ids(service, query="task")) == 2


def test_supersession_keyed_by_type(service):
    ingest(service, VEGETARIAN)
    instruction = {"type": "instruction", "topic_key": "user.diet", "summary": "suggest vegetarian dishes",
                   "content": {"diet": "vegetarian"}}
    answer = ingest(service, instruction)
    assert statuses(answer) == [("created", [])]
    assert model.id_of(instruction) != model.id_of(VEGETARIAN)
    second = ingest(service, {**instruction, "content": {"diet": "vegan"}})
    assert statuses(second) == [("created", [model.id_of(instruction)])]
    assert service.get(NS, PROFILE, model.id_of(VEGETARIAN))["superseded_by"] is None


def test_fact_without_topic_supersedes_nothing(service):
    ingest(service, {"type": "fact", "summary": "a", "content": 1})
    answer = ingest(service, {"type": "fact", "summary": "b", "content": 2})
    assert statuses(answer) == [("created", [])]


def test_source_first_writer_sticks(service, clock):
    old, new = model.id_of(VEGETARIAN), model.id_of(VEGAN)
    ingest(service, {**VEGETARIAN, "source": "claude-code"})
    assert statuses(ingest(service, {**VEGETARIAN, "source": "cursor"})) == [("duplicate", [])]
    assert service.get(NS, PROFILE, old)["source"] == "claude-code"
    ingest(service, {**VEGAN, "source": "cursor"})  # cross-source supersession: profile-wide
    assert service.get(NS, PROFILE, old)["superseded_by"] == new
    assert statuses(ingest(service, {**VEGETARIAN, "source": "support-bot"})) == [("revived", [new])]
    assert service.get(NS, PROFILE, old)["source"] == "claude-code"
    assert recall_ids(service, query="food", source="cursor") == []
    assert recall_ids(service, query="food", source="claude-code") == [old]
    assert recall_ids(service, query="food", source="cursor", include_superseded=True) == [new]


# -- batches ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [
    {"type": "opinion", "summary": "x", "content": 1},
    {"type": "event", "topic_key": "k", "summary": "x", "content": 1},
    {"type": "task", "topic_key": "k", "summary": "x", "content": 1},
    {"type": "fact", "summary": "   ", "content": 1},
    {"type": "fact", "content": 1},
    {"type": "fact", "summary": "x", "content": 1, "ttl": 60},
    {"type": "task", "summary": "x", "content": 1, "ttl": 0},
    {"type": "task", "summary": "x", "content": 1, "ttl": 1.5},
    {"type": "task", "summary": "x", "content": 1, "ttl": True},
    {"type": "fact", "summary": "x", "content": 1, "embedding": ["a"]},
    {"type": "fact", "summary": "x", "content": 1, "embedding": [True]},
    {"type": "fact", "summary": "x", "content": 1, "keywords": ["a"]},
    {"type": "fact", "summary": "x", "content": 1, "session_id": 3},
    {"type": "fact", "summary": "x", "content": 1, "source": {}},
    {"type": "fact", "summary": "x", "content": float("nan")},
    {"type": "fact", "summary": "x" * (8 * 1024 + 1), "content": 1},
    {"type": "fact", "summary": "x", "content": 1, "embedding": [0.5] * 4097},
    "not an object",
])
def test_atomic_batch_refusal_stores_nothing(service, bad):
    good = event("a good event")
    e = refused(lambda: ingest(service, good, bad))
    assert "memories[1]" in e.message
    assert service.txid(NS, PROFILE) == 0
    refused(lambda: service.get(NS, PROFILE, model.id_of(good)), "not_found")


@pytest.mark.parametrize("body", [None, [], {}, {"memories": {}}, {"memories": []}, {"memories": "x"}])
def test_malformed_batches(service, body):
    refused(lambda: service.ingest(NS, PROFILE, body))


def test_missing_content_is_null(service):
    answer = ingest(service, {"type": "event", "summary": "no payload"})
    got = service.get(NS, PROFILE, answer["results"][0]["id"])
    assert got["content"] is None and answer["results"][0]["id"] == model.memory_id("event", None, None)


def test_batch_cap(service):
    ok = [event(f"event {i}") for i in range(model.BATCH_CAP)]
    answer = ingest(service, *ok)
    assert len(answer["results"]) == 1000 and {r["status"] for r in answer["results"]} == {"created"}
    over = [event(f"other {i}") for i in range(model.BATCH_CAP + 1)]
    refused(lambda: ingest(service, *over, profile="bob"))
    assert service.txid(NS, "bob") == 0


def test_txid_counts_batches_per_profile(service):
    assert ingest(service, event("a"))["txid"] == 1
    assert ingest(service, event("b"), event("c"))["txid"] == 2
    assert ingest(service, event("c"))["txid"] == 3  # an all-duplicate batch is still one batch
    assert ingest(service, event("a"), profile="bob")["txid"] == 1


@pytest.mark.parametrize("ns, profile", [("Acme", "alice"), ("acme", "a--b"), ("-acme", "alice"), ("acme", ""),
                                         ("acme", "al ice"), (3, "alice")])
def test_bad_segments(service, ns, profile):
    refused(lambda: service.ingest(ns, profile, {"memories": [event("x")]}))
    refused(lambda: service.recall(ns, profile, {"query": "x"}))


# -- tasks and sessions ----------------------------------------------------------------------------

def test_task_default_ttl(service):
    answer = ingest(service, {"type": "task", "summary": "follow up", "content": {}})
    got = service.get(NS, PROFILE, answer["results"][0]["id"])
    assert got["expires_at"] - got["created_at"] == 86_400_000
    fact = ingest(service, VEGAN)["results"][0]["id"]
    assert service.get(NS, PROFILE, fact)["expires_at"] is None


def test_expired_task_hidden(service, clock):
    task = {"type": "task", "summary": "short lived chore", "content": {"n": 1}, "ttl": 1, "session_id": "s1"}
    mid = ingest(service, task)["results"][0]["id"]
    assert service.get(NS, PROFILE, mid)["expires_at"] == T0 + 1000
    assert recall_ids(service, query="chore") == [mid]
    clock.now += 1000
    assert recall_ids(service, query="chore") == []
    assert recall_ids(service, query="chore", include_superseded=True) == []
    refused(lambda: service.get(NS, PROFILE, mid), "not_found")
    assert service.sessions(NS, PROFILE)["sessions"] == []


def test_expired_task_reingest_created(service, clock):
    task = {"type": "task", "summary": "short lived chore", "content": {"n": 1}, "ttl": 1}
    mid = ingest(service, task)["results"][0]["id"]
    clock.now += 5000
    assert statuses(ingest(service, {**task, "ttl": 60})) == [("created", [])]
    got = service.get(NS, PROFILE, mid)
    assert got["created_at"] == T0 + 5000 and got["expires_at"] == T0 + 65_000


def test_expired_task_reingest_revived_variant(clock):
    service = MemoturnService(variants=["memoturn-expired-task-revived"], now_ms=clock)
    task = {"type": "task", "summary": "short lived chore", "content": {"n": 1}, "ttl": 1}
    mid = ingest(service, task)["results"][0]["id"]
    clock.now += 5000
    assert statuses(ingest(service, task)) == [("revived", [])]
    got = service.get(NS, PROFILE, mid)
    assert got["created_at"] == T0 and got["expires_at"] == T0 + 6000


def test_task_skips_vector_channel(service):
    ingest(service, {"type": "task", "summary": "a task", "content": 1, "embedding": [1.0, 0.0]},
           {"type": "event", "summary": "an event", "content": 2, "embedding": [0.0, 1.0]})
    hits = service.recall(NS, PROFILE, {"embedding": [1.0, 0.0]})["memories"]
    assert [h["type"] for h in hits] == ["event"] and hits[0]["channels"] == ["vector"]


def test_session_end(client, service, clock):
    ingest(service, {"type": "task", "summary": "task in s1", "content": 1, "session_id": "s1"},
           event("event in s1", session_id="s1"), event("event in s2", session_id="s2"))
    clock.now += 10
    ingest(service, event("later in s2", session_id="s2"))
    listed = client.get(f"/v1/memory/{NS}/{PROFILE}/sessions").json()
    assert listed == {"sessions": [{"session_id": "s2", "memories": 2, "last_at": T0 + 10},
                                   {"session_id": "s1", "memories": 2, "last_at": T0}], "txid": 2}
    ended = client.delete(f"/v1/memory/{NS}/{PROFILE}/sessions/s1").json()
    assert ended == {"session_id": "s1", "deleted": 1, "txid": 3}
    assert recall_ids(service, query="s1") == [model.id_of(event("event in s1", session_id="s1"))]
    assert recall_ids(service, query="in", session_id="s2") == [model.id_of(event("later in s2")),
                                                                   model.id_of(event("event in s2"))]
    again = client.delete(f"/v1/memory/{NS}/{PROFILE}/sessions/s1").json()
    assert again == {"session_id": "s1", "deleted": 0, "txid": 3}


# -- recall ----------------------------------------------------------------------------------------

def test_recall_unknown_profile_creates_nothing(client, service):
    r = client.post(f"/v1/memory/{NS}/nobody/recall", json={"query": "anything"})
    assert r.status_code == 200 and r.json() == {"memories": [], "txid": 0}
    assert service.txid(NS, "nobody") == 0
    assert not service._known(NS, "nobody")
    assert client.get(f"/v1/memory/{NS}/nobody/sessions").json() == {"sessions": [], "txid": 0}
    assert not service._known(NS, "nobody")
    assert client.get(f"/v1/memory/{NS}").json() == {"namespace": NS, "profiles": []}  # api-rest.md's listing
    client.post(f"/v1/memory/{NS}/somebody/memories", json={"memories": [VEGETARIAN]})
    assert client.get(f"/v1/memory/{NS}").json() == {"namespace": NS, "profiles": ["somebody"]}
    assert client.post(f"/v1/memory/{NS}").status_code == 405


@pytest.mark.parametrize("body", [{}, {"query": ""}, {"query": 3}, {"types": ["fact"]}, {"query": "x", "k": 0},
                                  {"query": "x", "k": "8"}, {"query": "x", "types": ["opinion"]},
                                  {"query": "x", "include_superseded": "yes"}, {"query": "x", "source": 1},
                                  {"embedding": []}, "query"])
def test_recall_refusals(service, body):
    ingest(service, event("x"))
    refused(lambda: service.recall(NS, PROFILE, body))


def test_recall_keyword_channel_and_keywords(service):
    ingest(service, {"type": "fact", "summary": "prefers tabs", "content": 1, "keywords": "indentation editor"},
           event("deployed v2 to prod"))
    assert recall_ids(service, query="indentation?") == [model.memory_id("fact", None, 1)]
    assert recall_ids(service, query="nothing matches this") == []
    hit = service.recall(NS, PROFILE, {"query": "deployed"})["memories"][0]
    assert hit["channels"] == ["keyword"] and hit["summary"] == "deployed v2 to prod"


def test_recall_k_types_and_order(service, clock):
    for i in range(12):
        clock.now += 1
        ingest(service, event(f"note number {i}"))
    ingest(service, {"type": "fact", "summary": "a note fact", "content": 0})
    assert len(recall_ids(service, query="note")) == model.RECALL_DEFAULT_K
    assert len(recall_ids(service, query="note", k=3)) == 3
    assert len(recall_ids(service, query="note", k=5000)) == 13
    assert recall_ids(service, query="note", types=["fact"]) == [model.memory_id("fact", None, 0)]
    hits = service.recall(NS, PROFILE, {"query": "note", "k": 100})["memories"]
    assert all(a["score"] >= b["score"] for a, b in zip(hits, hits[1:]))


def test_vector_channel(service):
    ingest(service, event("near", embedding=[1.0, 0.1]), event("far", embedding=[-1.0, 0.0]),
           event("other dim", embedding=[1.0, 0.0, 0.0]))
    hits = service.recall(NS, PROFILE, {"embedding": [1.0, 0.0]})["memories"]
    assert [h["summary"] for h in hits] == ["near", "far"]
    both = service.recall(NS, PROFILE, {"embedding": [1.0, 0.0], "query": "near"})["memories"]
    assert both[0]["summary"] == "near" and both[0]["channels"] == ["keyword", "vector"]


def test_forget(client, service):
    old, new = model.id_of(VEGETARIAN), model.id_of(VEGAN)
    ingest(service, VEGETARIAN, VEGAN)
    r = client.delete(f"/v1/memory/{NS}/{PROFILE}/memories/{old}")
    assert r.status_code == 200 and r.json() == {"deleted": old, "txid": 2}
    assert client.get(f"/v1/memory/{NS}/{PROFILE}/memories/{old}").status_code == 404
    assert recall_ids(service, query="food", include_superseded=True) == [new]
    assert service.get(NS, PROFILE, new)["supersedes"] == []
    assert service._db.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == 1
    gone = client.delete(f"/v1/memory/{NS}/{PROFILE}/memories/{old}")
    assert gone.status_code == 404 and gone.json()["code"] == "not_found"
    ingest(service, event("with a vector", embedding=[1.0]))
    vid = model.id_of(event("with a vector"))
    service.forget(NS, PROFILE, vid)
    assert service._db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0


# -- REST errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("method, path, body, status, code", [
    ("POST", "memories", b"{not json", 400, "invalid_request"),
    ("POST", "memories", b"", 400, "invalid_request"),
    ("POST", "memories", b'{"memories": [{"type": "fact", "summary": "x", "content": NaN}]}', 400, "invalid_request"),
    ("POST", "memories", b'{"memories": [{"type": "fact", "summary": "x", "content": 1e999}]}', 400,
     "invalid_request"),
    ("POST", "recall", b"[1, 2", 400, "invalid_request"),
    ("POST", "recall", b"\xff\xfe", 400, "invalid_request"),
    ("GET", "memories/mem_00000000000000000000000000000000", None, 404, "not_found"),
    ("GET", "nowhere", None, 404, "not_found"),
    ("PUT", "memories", b"{}", 405, "invalid_request"),
])
def test_rest_error_envelope(client, method, path, body, status, code):
    r = client.request(method, f"/v1/memory/{NS}/{PROFILE}/{path}", content=body)
    assert r.status_code == status
    assert r.json() == {"error": r.json()["error"], "code": code} and isinstance(r.json()["error"], str)


def test_rest_bad_segment_and_big_body(client):
    r = client.post("/v1/memory/ACME/alice/recall", json={"query": "x"})
    assert r.status_code == 400 and r.json()["code"] == "invalid_request"
    r = client.post(f"/v1/memory/{NS}/{PROFILE}/memories", content=b"x",
                    headers={"content-length": str(32 * 1024 * 1024 + 1)})
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"


def test_rest_internal_error_is_an_envelope(client, service):
    def broken(*a, **k):
        raise RuntimeError("boom")
    service.recall = broken
    r = client.post(f"/v1/memory/{NS}/{PROFILE}/recall", json={"query": "x"})
    assert r.status_code == 500 and r.json() == {"error": "internal error", "code": "internal"}


# -- variants --------------------------------------------------------------------------------------

def test_variants_are_named_and_apply():
    assert all(v.name.startswith("memoturn-") and v.spec == "memoturn" and v.since == "2026.06"
               for v in MEMOTURN_VARIANTS)
    for v in MEMOTURN_VARIANTS:
        assert apply(MemoturnPolicy(), [v.name]) != MemoturnPolicy()
    assert apply(MemoturnPolicy(), ["oams-forget-soft"]) == MemoturnPolicy()
    with pytest.raises(ValueError):
        apply(MemoturnPolicy(), ["memoturn-no-such-variant"])


def test_http_variants(clock):
    service = MemoturnService(variants=["memoturn-ingest-200", "memoturn-forget-204", "memoturn-batch-cap-413"],
                              now_ms=clock)
    with TestClient(app(service)) as c:
        r = c.post(f"/v1/memory/{NS}/{PROFILE}/memories", json={"memories": [VEGAN]})
        assert r.status_code == 200
        r = c.delete(f"/v1/memory/{NS}/{PROFILE}/memories/{model.id_of(VEGAN)}")
        assert r.status_code == 204 and r.content == b""
        r = c.post(f"/v1/memory/{NS}/{PROFILE}/memories", json={"memories": [event(str(i)) for i in range(1001)]})
        assert r.status_code == 413 and r.json()["code"] == "payload_too_large"


# -- MCP -------------------------------------------------------------------------------------------

def test_mcp_tools_in_memory(monkeypatch, clock):
    from mcp import Client

    from memconform.reference_impl.memoturn.mcp import build_mcp_server

    monkeypatch.setenv("MEMOTURN_SOURCE", "claude-code")
    service = MemoturnService(now_ms=clock)
    args = {"namespace": NS, "profile": PROFILE}

    async def scenario() -> None:
        async with Client(build_mcp_server(service)) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert names == {"memory_ingest", "memory_recall", "memory_get", "memory_forget", "memory_sessions_list",
                             "memory_session_end", "memory_profiles_list"}
            listed = (await c.call_tool("memory_profiles_list", {"namespace": NS})).structured_content
            assert listed == {"namespace": NS, "profiles": []}  # nothing written yet: nothing created
            r = await c.call_tool("memory_ingest", {**args, "memories": [VEGETARIAN, {**VEGAN, "source": "cursor"},
                                                                         event("e", session_id="s1")]})
            assert not r.is_error and r.structured_content["txid"] == 1
            assert json.loads(r.content[0].text) == r.structured_content
            listed = (await c.call_tool("memory_profiles_list", {"namespace": NS})).structured_content
            assert listed == {"namespace": NS, "profiles": [PROFILE]}  # the first write created it
            old, new = model.id_of(VEGETARIAN), model.id_of(VEGAN)
            got = (await c.call_tool("memory_get", {**args, "id": old})).structured_content
            assert got["found"] is True and got["memory"]["source"] == "claude-code" and got["txid"] == 1
            assert got["memory"]["superseded_by"] == new
            assert (await c.call_tool("memory_get", {**args, "id": new})).structured_content["memory"]["source"] \
                == "cursor"
            missing = await c.call_tool("memory_get", {**args, "id": "mem_00000000000000000000000000000000"})
            assert not missing.is_error
            assert missing.structured_content == {"found": False, "id": "mem_00000000000000000000000000000000",
                                                  "txid": 1}
            hits = (await c.call_tool("memory_recall", {**args, "query": "food", "source": "cursor"}))\
                .structured_content
            assert [m["id"] for m in hits["memories"]] == [new] and hits["txid"] == 1
            listed = (await c.call_tool("memory_sessions_list", {**args, "limit": 5})).structured_content
            assert listed["sessions"][0]["session_id"] == "s1" and "txid" in listed
            ended = (await c.call_tool("memory_session_end", {**args, "session_id": "s1"})).structured_content
            assert ended == {"session_id": "s1", "deleted": 0, "txid": 1}
            forgot = (await c.call_tool("memory_forget", {**args, "id": new})).structured_content
            assert forgot == {"deleted": new, "txid": 2}
            bad = await c.call_tool("memory_recall", args)
            assert bad.is_error and json.loads(bad.content[0].text)["code"] == "invalid_request"
            gone = await c.call_tool("memory_forget", {**args, "id": new})
            assert gone.is_error and gone.structured_content == json.loads(gone.content[0].text)
            assert gone.structured_content["code"] == "not_found"
            wrong = await c.call_tool("memory_ingest", {**args, "memories": "not a list"})
            assert wrong.is_error and json.loads(wrong.content[0].text)["code"] == "invalid_request"

    asyncio.run(scenario())
    service.close()


def test_keyword_channel_without_fts5(service, clock):
    service.fts = False  # the LIKE fallback for a sqlite built without FTS5
    ingest(service, {"type": "fact", "summary": "prefers tabs", "content": 1, "keywords": "indentation editor"})
    clock.now += 1
    ingest(service, event("tabs and indentation everywhere"))
    assert recall_ids(service, query="Indentation tabs") == [model.id_of(event("tabs and indentation everywhere")),
                                                             model.memory_id("fact", None, 1)]
    assert recall_ids(service, query="spaces") == []


def test_a_txid_written_41_0_is_an_integer_and_true_or_a_fraction_is_not():
    """JSON has one number type: a serializer writing 41.0 sends the integer 41 (JSON Schema's
    "integer": a zero fractional part)."""
    from memconform.suite.memoturn import model

    assert model.is_integer(41) and model.is_integer(41.0) and model.is_integer(0.0)
    assert not model.is_integer(41.5) and not model.is_integer(True) and not model.is_integer("41")
    answer = {"results": [{"id": "mem_a", "status": "created", "superseded": []}], "txid": 41.0}
    assert model.ingest_problems(answer, 1) == []
    assert model.ingest_problems({**answer, "txid": 41.5}, 1) == ["`txid` is 41.5, not an integer"]
