"""The OAMS reference engine and its bindings: each operation, errors in §3's shape with the reserved
codes on REST and JSON-RPC, atomic batches, bounds, stdio, export/import."""

from __future__ import annotations

import io
import json

import pytest
from starlette.testclient import TestClient

from memconform.reference_impl.oams import engine as eng
from memconform.reference_impl.oams.bundle import export_bundle, import_bundle
from memconform.reference_impl.oams.engine import OamsError, OamsService
from memconform.reference_impl.oams.http import app
from memconform.reference_impl.oams.rpc import handle_rpc, run_stdio
from memconform.suite.oams import model

NS = "user-a:personal"


@pytest.fixture
def service():
    s = OamsService()
    yield s
    s.close()


def mem(key, value="v", ns=NS, **extra):
    return {"key": key, "namespace": ns, "value": value, **extra}


def code_of(call):
    with pytest.raises(OamsError) as info:
        call()
    return info.value.code


def test_store_assigns_and_keeps_timestamps(service):
    m = service.store(mem("a", tags=["Research"]))
    assert m["created_at"] == m["updated_at"] and model.parse_time(m["created_at"])
    assert m["tags"] == ["research"]
    given = service.store(mem("b", created_at="2026-01-01T00:00:00Z", updated_at="2026-01-02T00:00:00Z"))
    assert (given["created_at"], given["updated_at"]) == ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")


def test_upsert_and_idempotence(service):
    first = service.store(mem("a", "one"))
    assert service.store(mem("a", "one")) == first
    second = service.store(mem("a", "two"))
    assert second["created_at"] == first["created_at"] and second["value"] == "two"
    assert model.parse_time(second["updated_at"]) >= model.parse_time(first["updated_at"])
    assert [m["key"] for m in service.list(NS)["memories"]] == ["a"]


def test_recall_default_k_filters_and_score(service):
    service.batch_store([mem(f"k{i}", f"quokka {i}", tags=["even" if i % 2 == 0 else "odd"],
                             created_at=f"2026-03-{i + 1:02d}T00:00:00Z", updated_at=f"2026-03-{i + 1:02d}T00:00:00Z")
                         for i in range(10)])
    found = service.recall({"namespace": NS, "query": "quokka"})
    assert len(found) == 8 and all(isinstance(m["metadata"]["score"], float) for m in found)
    assert len(service.recall({"namespace": NS, "query": "quokka", "k": 3})) == 3
    assert {m["key"] for m in service.recall({"namespace": NS, "query": "quokka", "tags": ["even"], "k": 20})} == \
        {f"k{i}" for i in range(0, 10, 2)}
    window = service.recall({"namespace": NS, "query": "quokka", "since": "2026-03-03T00:00:00Z",
                             "until": "2026-03-05T00:00:00Z"})
    assert {m["key"] for m in window} == {"k2", "k3"}
    assert service.recall({"namespace": NS, "query": "absent"}) == []


def test_recall_scope_and_cross_owner(service):
    service.store(mem("a", "kiwi"))
    service.store(mem("b", "kiwi", ns="user-a:work"))
    service.store(mem("c", "kiwi", ns="user-b:personal"))
    assert [m["key"] for m in service.recall({"namespace": NS, "query": "kiwi"})] == ["a"]
    both = service.recall({"namespaces": [NS, "user-a:work"], "query": "kiwi"})
    assert {m["key"] for m in both} == {"a", "b"}
    assert code_of(lambda: service.recall({"namespaces": [NS, "user-b:personal"], "query": "kiwi"})) == -32005


@pytest.mark.parametrize("params", [{"namespace": NS}, {"namespace": NS, "query": 5}, {"namespace": NS, "query": " "},
                                    {"query": "x"}, {"namespace": NS, "query": "x", "k": 0},
                                    {"namespace": NS, "query": "x", "k": True}, {"namespace": NS, "query": "x", "since": "x"},
                                    {"namespaces": [], "query": "x"}, {"namespace": "u:a/b", "query": "x"}])
def test_recall_refusals(service, params):
    assert code_of(lambda: service.recall(params)) == -32003


def test_list_order_paging_filters(service):
    service.batch_store([mem(f"k{d}", created_at=f"2026-03-0{d}T00:00:00Z", updated_at=f"2026-03-0{d}T00:00:00Z",
                             tags=["t"] if d % 2 else []) for d in (3, 1, 5, 2, 4)])
    keys, cursor = [], None
    while True:
        page = service.list(NS, cursor=cursor, limit=2)
        assert len(page["memories"]) <= 2
        keys += [m["key"] for m in page["memories"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert keys == ["k5", "k4", "k3", "k2", "k1"]
    assert [m["key"] for m in service.list(NS, since="2026-03-04T00:00:00Z")["memories"]] == ["k5", "k4"]
    assert [m["key"] for m in service.list(NS, tags=["t"])["memories"]] == ["k5", "k3", "k1"]
    assert code_of(lambda: service.list(NS, cursor="garbage!")) == -32003
    assert code_of(lambda: service.list(NS, limit="0")) == -32003
    assert service.list("user-a:never")["memories"] == []


def test_variant_list_short_pages_caps_every_page_and_its_cursor_reaches_the_rest():
    s = OamsService(variants=("oams-list-short-pages",))
    s.batch_store([mem(f"k{d}", updated_at=f"2026-03-0{d}T00:00:00Z") for d in (3, 1, 5, 2, 4)])
    first = s.list(NS)
    assert [m["key"] for m in first["memories"]] == ["k5", "k4"] and first["next_cursor"]
    rest = s.list(NS, cursor=first["next_cursor"], limit=10)
    assert [m["key"] for m in rest["memories"]] == ["k3", "k2"] and rest["next_cursor"]
    s.close()


def test_forget_hard_soft_unknown():
    for variants in ((), ("oams-forget-soft",)):
        s = OamsService(variants=variants)
        s.store(mem("a", "axolotl"))
        s.forget(NS, "a")
        assert s.list(NS)["memories"] == [] and s.recall({"namespace": NS, "query": "axolotl"}) == []
        assert code_of(lambda: s.forget(NS, "a")) == -32002
        s.store(mem("a", "axolotl again"))
        assert [m["value"] for m in s.list(NS)["memories"]] == ["axolotl again"]
        s.close()
    s = OamsService(variants=("oams-forget-unknown-ok",))
    assert s.forget(NS, "never") is None
    s.close()


def test_batch_is_atomic(service):
    with pytest.raises(OamsError) as info:
        service.batch_store([mem("a"), mem("b", 42), mem("c")])
    assert info.value.code == -32003 and info.value.data["index"] == 1
    assert service.list(NS)["memories"] == []
    assert len(service.batch_store([mem("a"), mem("c")])) == 2
    assert code_of(lambda: service.batch_store("x")) == -32003


@pytest.mark.parametrize("memory, code", [
    ({"key": "a", "namespace": NS}, -32003),
    (mem("a", 1), -32003),
    (mem("a", "nul\x00byte"), -32003),
    (mem("a", embedding=[0.1]), -32003),
    (mem("a", created_at="2026-01-01T00:00:00+01:00"), -32003),
    (mem("a", created_at="2026-01-02T00:00:00Z", updated_at="2026-01-01T00:00:00Z"), -32003),
    (mem("a", ns="user-a:x/y"), -32003),
    (mem("a", ns="user-a:x:y"), -32003),
    (mem("a", "x" * (eng.MAX_VALUE + 1)), -32004),
    (mem("k" * (eng.MAX_KEY + 1)), -32004),
    ("not an object", -32003),
])
def test_store_refusals(service, memory, code):
    assert code_of(lambda: service.store(memory)) == code


def test_batch_bound(service):
    assert code_of(lambda: service.batch_store([mem(f"k{i}") for i in range(eng.MAX_BATCH + 1)])) == -32004


def test_consolidation(service):
    service.batch_store([mem("a", "one", source_id="https://x/1", metadata={"confidence": 0.9}),
                         mem("b", "two", source_id=None)])
    (made,) = service.consolidate(NS)
    assert made["parent_id"] == "a" and made["source_id"] == "https://x/1"
    assert model.consolidation_problems(made, {(NS, "a"): {"source_id": "https://x/1"}, (NS, "b"): {}}) == []
    assert service.consolidate("user-a:empty") == []
    assert code_of(lambda: service.consolidate(NS, "daydream")) == -32003


# -- REST ------------------------------------------------------------------------------------------

@pytest.fixture
def rest(service):
    with TestClient(app(service), raise_server_exceptions=False) as client:
        yield client


def test_rest_operations(rest):
    r = rest.put("/v1/oams/memories/user-a%3Apersonal/k%2F1", json=mem("k/1", "hello"))
    assert r.status_code == 200 and r.json()["key"] == "k/1"
    r = rest.put("/v1/oams/memories/user-a:personal/k2", json={"value": "from the path"})
    assert r.status_code == 200 and r.json()["namespace"] == NS
    assert rest.post("/v1/oams/recall", json={"namespace": NS, "query": "hello"}).json()[0]["key"] == "k/1"
    page = rest.get("/v1/oams/memories/user-a%3Apersonal", params={"limit": "1"}).json()
    assert len(page["memories"]) == 1 and page["next_cursor"]
    r = rest.post("/v1/oams/memories/batch", json={"memories": [mem("k3")]})
    assert r.status_code == 200 and [m["key"] for m in r.json()] == ["k3"]
    r = rest.delete("/v1/oams/memories/user-a%3Apersonal/k%2F1")
    assert r.status_code == 204 and r.content == b""


@pytest.mark.parametrize("method, path, body, status, code", [
    ("PUT", "/v1/oams/memories/user-a%3Apersonal/k", b"{bad", 400, -32700),
    ("PUT", "/v1/oams/memories/user-a%3Apersonal/k", json.dumps(mem("other")).encode(), 400, -32003),
    ("PUT", "/v1/oams/memories/user-a%3Ax%2Fy/k", json.dumps({"value": "v"}).encode(), 400, -32003),
    ("DELETE", "/v1/oams/memories/user-a%3Apersonal/none", None, 404, -32002),
    ("POST", "/v1/oams/recall", json.dumps({"namespaces": ["a:x", "b:y"], "query": "q"}).encode(), 403, -32005),
    ("POST", "/v1/oams/recall", b"[]", 400, -32003),
    ("GET", "/v1/oams/nothing-here", None, 404, -32601),
    ("PATCH", "/v1/oams/memories/user-a%3Apersonal/k", b"{}", 405, -32601),
    ("POST", "/v1/oams/memories/batch", json.dumps({"memories": [mem("a"), mem("b", 1)]}).encode(), 400, -32003),
])
def test_rest_errors_have_the_shape(rest, method, path, body, status, code):
    r = rest.request(method, path, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status
    error = r.json()["error"]
    assert error["code"] == code and isinstance(error["message"], str)


def test_rest_body_bound(rest):
    r = rest.put("/v1/oams/memories/user-a%3Apersonal/k", content=b" " * (9 * 1024 * 1024),
                 headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["code"] == -32004


# -- JSON-RPC and stdio -----------------------------------------------------------------------------------

def rpc(service, message):
    answer = handle_rpc(service, json.dumps(message).encode() if not isinstance(message, bytes) else message)
    return None if answer is None else json.loads(answer)


def test_rpc_operations_and_errors(service):
    r = rpc(service, {"jsonrpc": "2.0", "id": 1, "method": "oams.store", "params": {"memory": mem("a", "hi")}})
    assert r["id"] == 1 and r["result"]["key"] == "a"
    r = rpc(service, {"jsonrpc": "2.0", "id": "x", "method": "oams.forget", "params": {"namespace": NS, "key": "a"}})
    assert r == {"jsonrpc": "2.0", "result": None, "id": "x"}
    r = rpc(service, {"jsonrpc": "2.0", "id": 2, "method": "oams.forget", "params": {"namespace": NS, "key": "a"}})
    assert r["error"]["code"] == -32002 and r["error"]["data"] == {"namespace": NS, "key": "a"}
    assert rpc(service, b"{nope")["error"]["code"] == -32700
    assert rpc(service, [])["error"]["code"] == -32600
    assert rpc(service, {"jsonrpc": "2.0", "id": 3, "method": "oams.nope"})["error"]["code"] == -32601
    assert rpc(service, {"jsonrpc": "2.0", "id": 4, "method": "oams.list", "params": [NS]})["error"]["code"] == -32602
    assert rpc(service, {"jsonrpc": "2.0", "id": 5, "method": "oams.store", "params": {}})["error"]["code"] == -32003
    assert rpc(service, {"jsonrpc": "2.0", "method": "oams.store", "params": {"memory": mem("n")}}) is None
    batch = rpc(service, [{"jsonrpc": "2.0", "id": 6, "method": "oams.list", "params": {"namespace": NS}},
                          {"jsonrpc": "2.0", "method": "oams.list", "params": {"namespace": NS}}, 7])
    assert [a.get("id") for a in batch] == [6, None] and batch[1]["error"]["code"] == -32600
    assert [m["key"] for m in batch[0]["result"]["memories"]] == ["n"]
    too_many = [{"jsonrpc": "2.0", "id": i, "method": "oams.list", "params": {"namespace": NS}} for i in range(101)]
    assert rpc(service, too_many)["error"]["code"] == -32600


def test_stdio(service):
    lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "oams.store", "params": {"memory": mem("a")}}), "",
             json.dumps({"jsonrpc": "2.0", "method": "oams.list", "params": {"namespace": NS}}), "{bad"]
    out = io.BytesIO()
    run_stdio(service, io.BytesIO(("\n".join(lines) + "\n").encode()), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0]["result"]["key"] == "a" and answers[1]["error"]["code"] == -32700 and len(answers) == 2


# -- export / import ------------------------------------------------------------------------------------------

def test_export_import_round_trip(service, tmp_path):
    service.batch_store([mem("a", "one", source_id="x-unknown:opaque", created_at="2026-01-01T00:00:00Z",
                             updated_at="2026-01-01T00:00:00Z"),
                         mem("b", "two", ns="user-a:work", embedding_model="m", embedding=[0.5, 0.25])])
    folder = export_bundle(service, tmp_path)
    assert model.read_bundle(folder).problems == ()
    other = OamsService()
    assert import_bundle(other, folder) == {"imported": 2, "oams_version": "0.1"}
    assert other.all_memories() == service.all_memories()
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["oams_version"] = "0.2"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert import_bundle(OamsService(), folder)["imported"] == 2
    manifest["oams_version"] = "1.0"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(OamsError):
        import_bundle(OamsService(), folder)
    assert import_bundle(OamsService(), folder / "memories.jsonl")["imported"] == 2
    other.close()


@pytest.mark.parametrize("method, path, body", [
    ("PUT", "/v1/oams/memories/a%3Ab/k", b'{"value": "\\ud800"}'),
    ("PUT", "/v1/oams/memories/a%3Ab/%ff", b'{"value": "x"}'),
    ("PUT", "/v1/oams/memories/a%3Ab/k", b'{"value": "x", "metadata": {"n": 1e400}}'),
    ("PUT", "/v1/oams/memories/a%3Ab/k", b"[" * 100000),
    ("PUT", "/v1/oams/memories/a%3Ab/k", b'{"value": "x", "metadata": {"n": NaN}}'),
    ("POST", "/v1/oams/recall", b'{"namespace": "a:b", "query": "x", "k": 1e300}'),
    ("POST", "/v1/oams/recall", b'{"namespace": "a:b", "query": "x", "tags": [1]}'),
    ("GET", "/v1/oams/memories/a%3Ab?limit=99999999999999999999999", None),
    ("GET", "/v1/oams/memories/a%3Ab?limit=-1", None),
    ("GET", "/v1/oams/memories/a%3Ab?since=%ff", None),
    ("GET", "/v1/oams/memories/a%3Ab?cursor=%ff%fe", None),
    ("POST", "/v1/oams/memories/batch", b'{"memories": [{"key": "k", "namespace": "a:b", "value": "v", "tags": ["\\ud800"]}]}'),
    ("POST", "/v1/oams/memories/batch", b'{"memories": null}'),
    ("POST", "/v1/oams/consolidate", b'{"namespace": 5}'),
    ("DELETE", "/v1/oams/memories/a%3Ab/", None),
])
def test_hostile_rest_input_never_500_and_never_poisons(rest, method, path, body):
    r = rest.request(method, path, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code < 500, r.text
    if r.status_code >= 400:
        assert isinstance(r.json()["error"]["code"], int)
    assert rest.get("/v1/oams/memories/a%3Ab").status_code == 200
