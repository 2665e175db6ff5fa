"""Issue 14, "keep what held": the malformed-body corpus against every route of the reference server
(UMP's HTTP binding, UPP's POST /upp, OMF's POST /omf/*), bounded and deterministic.

A fixed list of malformed bodies (broken JSON, wrong top-level types, huge and non-finite numbers, deep
nesting, invalid UTF-8, lone surrogates) goes to every POST route; per route, hand-picked wrong types in
the members each operation reads, then hypothesis (derandomized, no example database) puts arbitrary JSON
values there. Every answer must be the protocol's: never a 5xx (nor JSON-RPC's -32603 Internal error),
every refusal in the spec's error shape, and after a refused write every store byte-for-byte as it was
(the stores are sqlite files read through a separate connection).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from memconform.reference_impl.omf import make_engine
from memconform.reference_impl.ump.serve import start_in_thread
from memconform.reference_impl.ump.service import UmpService
from memconform.reference_impl.upp.service import UppService
from memconform.suite.ump import testkeys

from .conftest import bearer

OWNER = testkeys.test_did("owner-a")
UMP_POSTS = ("recall", "remember", "revise", "forget", "feedback", "rehydrate")
OMF_POSTS = ("import", "preview", "export")
JSON_RPC_INTERNAL = -32603
EXISTING = "__EXISTING__"  # replaced by the id of a record the module made
#: Per route; with the fixed lists about 700 requests in all. MEMCONFORM_HOSTILE_EXAMPLES=500 for a deeper
#: (still deterministic) look on a quiet machine.
HYPOTHESIS_EXAMPLES = int(os.environ.get("MEMCONFORM_HOSTILE_EXAMPLES", "12"))


def _error_schema() -> Draft202012Validator:
    defs = json.loads((resources.files("memconform.suite.ump") / "schemas" / "operations.schema.json")
                      .read_text("utf-8"))["$defs"]
    return Draft202012Validator({"$ref": "#/$defs/error", "$defs": defs})


UMP_ERROR = _error_schema()


# -- the servers and their stores ------------------------------------------------------------------

@dataclass
class Servers:
    url: str
    dbs: dict[str, Path]
    existing: str

    def snapshot(self) -> dict[str, str]:
        """A digest of every table of every store, read through a connection of its own."""
        out = {}
        for name, path in self.dbs.items():
            digest = hashlib.sha256()
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                   "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
                for table in tables:
                    digest.update(table.encode())
                    for row in db.execute(f'SELECT * FROM "{table}"'):
                        digest.update(repr(row).encode())
            out[name] = digest.hexdigest()
        return out


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    folder = tmp_path_factory.mktemp("hostile-bodies")
    dbs = {"ump": folder / "ump.sqlite", "upp": folder / "upp.sqlite", "omf": folder / "omf.sqlite"}
    ump = UmpService(db=str(dbs["ump"]), require_capability=True)
    upp = UppService(db=str(dbs["upp"]), export_dir=folder / "exports")
    omf = make_engine(str(dbs["omf"]))
    running = start_in_thread(ump, upp=upp, omf=omf)
    try:
        with httpx.Client(base_url=running.base_url, headers=_ump_headers(), timeout=30) as c:
            made = c.post("/ump/remember", json={"record": {
                "kind": "semantic", "body": {"text": "hostile bodies: the record every refused write leaves alone"},
                "scope": {"owner": OWNER, "visibility": "private"},
                "provenance": {"actor": OWNER, "actor_kind": "agent", "method": "memconform-test"}}})
            assert made.status_code == 200, made.text
            ingest = c.post("/upp", json={"jsonrpc": "2.0", "id": 1, "method": "upp/ingest",
                                          "params": {"entity_key": "user-1",
                                                     "text": "I live in Lisbon and speak Portuguese."}})
            assert ingest.status_code == 200 and "result" in ingest.json(), ingest.text
            imported = c.post("/omf/import", params={"tenant_id": "t"}, content=json.dumps(
                {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "memories": [{"content": "kept"}]}))
            assert imported.status_code == 200, imported.text
        yield Servers(running.base_url, dbs, made.json()["id"])
    finally:
        running.stop()
        omf.close()
        upp.close()
        ump.close()


def _ump_headers() -> dict[str, str]:
    return {"UMP-Version": "1.0", **bearer("owner-a")}


# -- judging one answer ------------------------------------------------------------------------------

def _ump_problem(r: httpx.Response) -> str | None:
    if r.status_code >= 500:
        return f"{r.status_code} {r.text[:200]}"
    if r.status_code < 400:
        return None
    if not r.headers.get("content-type", "").startswith("application/json"):
        return f"{r.status_code} not JSON: {r.headers.get('content-type')}"
    try:
        body = r.json()
    except ValueError:
        return f"{r.status_code} not JSON: {r.text[:200]}"
    errors = [e.message for e in UMP_ERROR.iter_errors(body)]
    if errors or "Traceback" in r.text:
        return f"{r.status_code} not the §3 envelope: {errors} {r.text[:200]}"
    return None


def _omf_problem(r: httpx.Response) -> str | None:
    if r.status_code >= 500:
        return f"{r.status_code} {r.text[:200]}"
    if r.status_code < 400:
        return None
    try:
        body = r.json()
    except ValueError:
        return f"{r.status_code} not JSON: {r.text[:200]}"
    error = body.get("error") if isinstance(body, dict) else None
    if not (isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)):
        return f"{r.status_code} not OMF's error body: {r.text[:200]}"
    return None


def _rpc_problem(r: httpx.Response) -> str | None:
    if r.status_code >= 500:
        return f"{r.status_code} {r.text[:200]}"
    if r.status_code == 204:
        return None if not r.content else f"204 with a body: {r.text[:200]}"
    try:
        body = r.json()
    except ValueError:
        return f"{r.status_code} not JSON: {r.text[:200]}"
    replies = body if isinstance(body, list) else [body]
    for reply in replies:
        if not (isinstance(reply, dict) and reply.get("jsonrpc") == "2.0"
                and ("result" in reply) != ("error" in reply)):
            return f"{r.status_code} not a JSON-RPC response: {r.text[:200]}"
        error = reply.get("error")
        if error is not None:
            if not (isinstance(error, dict) and type(error.get("code")) is int
                    and isinstance(error.get("message"), str)):
                return f"not a JSON-RPC error object: {reply}"
            if error["code"] == JSON_RPC_INTERNAL:
                return f"-32603 Internal error: {reply}"
    return None


def _refused(route: str, r: httpx.Response) -> bool:
    if route == "/upp":
        if r.status_code != 200:
            return r.status_code != 204
        body = r.json()
        return all("error" in reply for reply in (body if isinstance(body, list) else [body]))
    return r.status_code >= 400


JUDGE: dict[str, Callable[[httpx.Response], str | None]] = {
    **{f"/ump/{op}": _ump_problem for op in UMP_POSTS}, "/upp": _rpc_problem,
    **{f"/omf/{op}": _omf_problem for op in OMF_POSTS}}
POST_ROUTES = tuple(JUDGE)


def _post(c: httpx.Client, route: str, body: bytes) -> httpx.Response:
    params = {"tenant_id": "t"} if route.startswith("/omf/") and route != "/omf/export" else None
    return c.post(route, content=body, params=params, headers={"Content-Type": "application/json"})


def attack(servers: Servers, c: httpx.Client, route: str, body: bytes, label: str) -> str | None:
    """One body to one route; what went wrong, or None when the attack held."""
    body = body.replace(EXISTING.encode(), servers.existing.encode())
    before = servers.snapshot()
    try:
        r = _post(c, route, body)
    except httpx.HTTPError as exc:
        return f"{route} {label}: no answer ({exc!r})"
    problem = JUDGE[route](r)
    if problem is None and _refused(route, r) and servers.snapshot() != before:
        # an earlier request's background task (UPP contextualize) may land meanwhile: the same
        # refused body again must then leave the store as it is
        before = servers.snapshot()
        again = _post(c, route, body)
        if _refused(route, again) and servers.snapshot() != before:
            problem = f"refused ({r.status_code} {r.text[:120]}) but a store changed"
    return f"{route} {label}: {problem}" if problem else None


# -- the fixed corpus: malformed whatever the route -----------------------------------------------------

def _nest(depth: int, inner: bytes = b"1") -> bytes:
    return b'{"a":' * depth + inner + b"}" * depth


MALFORMED: dict[str, bytes] = {
    "empty": b"", "whitespace": b" \r\n\t ", "truncated object": b'{"query": "x",', "lone brace": b"{",
    "trailing comma": b'{"a": 1,}', "single quotes": b"{'a': 1}", "unquoted key": b"{a: 1}",
    "comment": b'{"a": 1 /* c */}', "two documents": b'{"a": 1} {"b": 2}', "trailing garbage": b'{"a": 1} x',
    "NaN": b'{"a": NaN}', "Infinity": b'{"a": Infinity}', "-Infinity": b'{"a": -Infinity}',
    "null": b"null", "true": b"true", "number": b"42", "string": b'"x"', "empty array": b"[]",
    "array of numbers": b"[1, 2, 3]", "array of objects": b'[{"a": 1}, {"b": 2}]', "empty object": b"{}",
    "1e400": b'{"a": 1e400}', "-1e400": b'{"a": -1e400}', "1e-400": b'{"a": 1e-400}',
    "5000-digit integer": b'{"a": ' + b"9" * 5000 + b"}", "top-level 1e400": b"1e400",
    "invalid UTF-8 in a string": b'{"a": "\xff\xfe"}', "invalid UTF-8 before": b'\xff{"a": 1}',
    "overlong UTF-8": b'{"a": "\xc0\xaf"}', "UTF-8 encoded surrogate": b'{"a": "\xed\xa0\x80"}',
    "truncated UTF-8": b'{"a": "\xe2\x82"}', "UTF-16 with BOM": '{"a": 1}'.encode("utf-16"),
    "UTF-8 BOM": b'\xef\xbb\xbf{"a": 1}', "raw NUL in a string": b'{"a": "\x00"}',
    "raw newline in a string": b'{"a": "x\ny"}', "bad escape": b'{"a": "\\x41"}',
    "short unicode escape": b'{"a": "\\u12"}',
    "lone surrogate escape": b'{"a": "\\ud800"}', "escaped NUL": b'{"a": "\\u0000"}',
    "duplicate keys": b'{"a": 1, "a": 2}', "100000 open brackets": b"[" * 100_000,
    "deep arrays 100000": b"[" * 100_000 + b"]" * 100_000, "deep objects 50000": _nest(50_000),
    "deep objects 900": _nest(900), "deep arrays 2000": b"[" * 2000 + b"]" * 2000,
    "50000 keys": json.dumps({f"k{i}": i for i in range(50_000)}).encode(),
    "long key": json.dumps({"k" * 500_000: 1}).encode(), "long string": json.dumps({"a": "x" * 900_000}).encode(),
    "binary": bytes(range(256)),
}


@pytest.mark.parametrize("route", POST_ROUTES)
def test_malformed_bodies_are_refused_in_the_protocols_error_shape(servers: Servers, route: str) -> None:
    with httpx.Client(base_url=servers.url, headers=_ump_headers(), timeout=30) as c:
        failures = [p for label, body in MALFORMED.items() if (p := attack(servers, c, route, body, label))]
    assert not failures, "\n".join(failures)


# -- wrong types where each operation looks ------------------------------------------------------------

def _record(**members: Any) -> dict[str, Any]:
    rec = {"kind": "semantic", "body": {"text": "a hostile record"}, "scope": {"owner": OWNER, "visibility": "private"},
           "provenance": {"actor": OWNER, "actor_kind": "agent", "method": "memconform-test"}}
    rec.update(members)
    return rec


def _deep(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


HUGE = 10 ** 400  # written by json.dumps as 401 digits, read back as a Python int
def _rpc(method: Any, params: Any = None, id_: Any = 1, **members: Any) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": id_, "method": method, **members}
    if params is not None:
        message["params"] = params
    return message


def _omf(*memories: Any, app: str | None = None, **members: Any) -> dict[str, Any]:
    document = {"omf": "1.0", "exported_at": "x", "memories": list(memories), **members}
    if app is not None:
        document["source"] = {"app": app}
    return document


def _memd(content: str, **lifecycle: Any) -> dict[str, Any]:
    return {"content": content, "extensions": {"memd": {"v": 1, "lifecycle": lifecycle}}}


TYPED: dict[str, list[Any]] = {
    "/ump/recall": [
        {"query": 5}, {"query": None}, {"query": ["x"]}, {"query": {"$ne": ""}}, {"query": "x", "limit": -1},
        {"query": "x", "limit": HUGE}, {"query": "x", "limit": -HUGE}, {"query": "x", "limit": "5"},
        {"query": "x", "limit": 1.5}, {"query": "x", "limit": True}, {"query": "x", "limit": 10 ** 18},
        {"query": "x", "scope": "mine"}, {"query": "x", "scope": {"owner": 5}},
        {"query": "x", "scope": {"owner": {"$ne": None}}}, {"query": "x", "filter": []},
        {"query": "x", "scope": _deep(500)}, {"query": "\ud800"}, {"query": "x" * 200_000}],
    "/ump/remember": [
        {"record": "x"}, {"record": []}, {"record": None}, {"record": _record(kind=5)},
        {"record": _record(kind="gossip")}, {"record": _record(body={"text": 7})},
        {"record": _record(body="text")}, {"record": _record(scope={"owner": 5})},
        {"record": _record(scope={"owner": "did:example:someone-else", "visibility": "private"})},
        {"record": _record(confidence=HUGE)}, {"record": _record(confidence=-1)},
        {"record": _record(confidence="high")}, {"record": _record(body={"text": "\ud800"})},
        {"record": _record(body={"text": "a\u0000b"})}, {"record": _record(extra=_deep(500))},
        {"record": _record(body={"text": "deep", "data": _deep(500)})},
        {"record": _record(id="urn:ump:forged")}, {"record": _record(time={"created": HUGE})},
        {"record": _record(time={"created": "not a time"})}, {"record": _record(provenance="me")}],
    "/ump/revise": [
        {"id": 5, "patch": {}}, {"id": None, "patch": {}}, {"id": [EXISTING], "patch": {}},
        {"id": EXISTING, "patch": []}, {"id": EXISTING, "patch": "x"}, {"id": EXISTING},
        {"id": EXISTING, "patch": {"id": "urn:ump:zzzz"}}, {"id": EXISTING, "patch": {"kind": 5}},
        {"id": EXISTING, "patch": {"body": {"text": 7}}},
        {"id": EXISTING, "patch": {"body": {"text": "\ud800"}}},
        {"id": EXISTING, "patch": {"scope": {"owner": "did:example:thief"}}},
        {"id": EXISTING, "patch": {"confidence": HUGE}}, {"id": EXISTING, "patch": _deep(500)},
        {"id": "\ud800", "patch": {}}, {"id": "x" * 100_000, "patch": {}}],
    "/ump/forget": [
        {"id": 7, "reason": "r"}, {"id": [EXISTING], "reason": "r"}, {"id": None},
        {"id": EXISTING, "reason": 5}, {"id": EXISTING, "reason": "r", "hard": "yes"},
        {"id": EXISTING, "reason": "r", "hard": HUGE}, {"id": EXISTING, "reason": _deep(500)},
        {"id": "\ud800", "reason": "r"}],
    "/ump/feedback": [
        {"id": EXISTING, "outcome": "loved"}, {"id": EXISTING, "outcome": 7}, {"id": EXISTING},
        {"id": {"x": 1}, "outcome": "followed"}, {"id": EXISTING, "outcome": "followed", "weight": HUGE},
        {"id": EXISTING, "outcome": "followed", "session": _deep(500)}, {"id": EXISTING, "outcome": "\ud800"}],
    "/ump/rehydrate": [
        {"ids": "x"}, {"ids": [1, 2]}, {"ids": [None]}, {"ids": [EXISTING] * 10_000},
        {"records": "x"}, {"limit": "x"}, {"limit": HUGE}, {"limit": -1}, {"budget": HUGE},
        {"ids": [EXISTING], "budget": -HUGE}, {"query": _deep(500)}, {"ids": ["\ud800"]}],
    "/upp": [
        _rpc("upp/ingest", {"entity_key": 5, "text": "x"}), _rpc("upp/ingest", {"entity_key": "u", "text": 5}),
        _rpc("upp/ingest", ["u", "x"]), {**_rpc("upp/ingest"), "params": None},
        _rpc("upp/ingest", {"entity_key": "", "text": "x"}),
        _rpc("upp/ingest", {"entity_key": "u", "text": "I am \ud800"}),
        _rpc("upp/ingest", {"entity_key": _deep(500), "text": "x"}),
        _rpc("upp/contextualize", {"entity_key": "u", "text": HUGE}),
        _rpc("upp/delete_events", {"entity_key": "user-1", "ids": "all"}),
        _rpc("upp/delete_events", {"entity_key": ["user-1"]}),
        _rpc("upp/import_events", {"entity_key": "u", "file": 5}),
        _rpc("upp/import_events", {"entity_key": "u", "file": "../../etc/passwd"}),
        _rpc("upp/import_events", {"entity_key": "u", "file": "/etc/passwd"}),
        _rpc("upp/retrieve", {"entity_key": "user-1", "query": "x", "limit": HUGE}),
        _rpc("upp/retrieve", {"entity_key": "user-1", "query": "x", "limit": -1}),
        _rpc(5), _rpc(None), _rpc("upp/nope"), {"jsonrpc": "1.0", "id": 1, "method": "upp/info"},
        {"jsonrpc": 2.0, "id": 1, "method": "upp/info"}, {"id": 1, "method": "upp/info"},
        _rpc("upp/info", id_={"a": 1}), _rpc("upp/info", id_=[1]), _rpc("upp/info", id_=True),
        _rpc("upp/info", id_=1.5), _rpc("upp/info", id_=HUGE),
        [1, 2, 3], [[]], [_rpc("upp/ingest", {"entity_key": 5})] * 50],
    "/omf/import": [
        _omf(memories="all"), {**_omf(), "omf": "2.0"}, {**_omf(), "omf": 1.0}, {"omf": "1.0", "memories": []},
        _omf(5), _omf({"content": "ok"}, {"content": 5}), _omf({"content": "ok 2"}, {"content": "   "}),
        _omf({"content": "ok 3", "tags": [1]}), _omf({"content": "\ud800"}), _omf(source="memd"),
        _omf(_memd("ok 4", tier="attic"), app="memd"), _omf(_memd("ok 5", expires_at=HUGE), app="memd"),
        _omf({"content": "ok 6", "extensions": _deep(500)}), _omf(exported_at=HUGE)],
    "/omf/export": [
        {"tenant_id": 5}, {"tenant_id": None}, {"tenant_id": ""}, {"tenant_id": "t", "project_id": 5},
        {"tenant_id": "t", "include_history": "yes"}, {"tenant_id": "t", "include_expired": HUGE},
        {"tenant_id": _deep(500)}, {"tenant_id": "\ud800"}],
}
TYPED["/omf/preview"] = TYPED["/omf/import"]


@pytest.mark.parametrize("route", POST_ROUTES)
def test_wrong_types_are_refused_in_the_protocols_error_shape(servers: Servers, route: str) -> None:
    with httpx.Client(base_url=servers.url, headers=_ump_headers(), timeout=30) as c:
        failures = [p for i, body in enumerate(TYPED[route])
                    if (p := attack(servers, c, route, json.dumps(body).encode(), f"#{i} {json.dumps(body)[:80]}"))]
    assert not failures, "\n".join(failures)


# -- arbitrary JSON where each operation looks (hypothesis, derandomized) -------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)

RECORD_MEMBERS = ("ump", "id", "kind", "body", "scope", "time", "lifecycle", "supersedes", "superseded_by",
                  "relations", "provenance", "consent", "integrity")


def _one_member(members: tuple[str, ...], base: Callable[[], dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """`base()` with one of `members` set to an arbitrary JSON value."""
    return st.builds(lambda name, value: {**base(), name: value}, st.sampled_from(members), JSON_VALUES)


def _rpc_params(draw: Any) -> dict[str, Any]:
    method = draw(st.sampled_from(("upp/ingest", "upp/contextualize", "upp/retrieve", "upp/delete_events",
                                   "upp/import_events", "upp/export_events", "upp/get_events", "upp/get_tasks")))
    name = draw(st.sampled_from(("entity_key", "text", "query", "ids", "file", "limit", "task_id")))
    params = {"entity_key": "user-1", "text": "I moved to Porto.", name: draw(JSON_VALUES)}
    return _rpc(method, params)


#: Per route, bodies with one member the operation reads (or a member of the record or document inside
#: it) set to an arbitrary JSON value.
STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "/ump/recall": _one_member(("query", "scope", "filter", "limit", "ranking_hints"), lambda: {"query": "x"}),
    "/ump/remember": st.one_of(
        st.builds(lambda name, value: {"record": {**_record(), name: value}}, st.sampled_from(RECORD_MEMBERS),
                  JSON_VALUES),
        JSON_VALUES.map(lambda v: {"record": v})),
    "/ump/revise": st.one_of(
        _one_member(("id", "patch", "actor"), lambda: {"id": EXISTING, "patch": {}}),
        st.builds(lambda name, value: {"id": EXISTING, "patch": {name: value}}, st.sampled_from(RECORD_MEMBERS),
                  JSON_VALUES)),
    "/ump/forget": _one_member(("id", "reason", "hard", "actor"), lambda: {"id": EXISTING, "reason": "r"}),
    "/ump/feedback": _one_member(("id", "outcome", "session", "actor"),
                                 lambda: {"id": EXISTING, "outcome": "followed"}),
    "/ump/rehydrate": _one_member(("ids", "records", "query", "scope", "limit"), lambda: {"ids": [EXISTING]}),
    "/upp": st.composite(lambda draw: _rpc_params(draw))(),
    "/omf/import": st.one_of(
        _one_member(("omf", "exported_at", "source", "memories"), _omf),
        st.builds(lambda name, value: _omf({"content": "hypothesis item", name: value}),
                  st.sampled_from(("content", "tags", "category", "status", "created_at", "updated_at",
                                   "expires_at", "extensions")), JSON_VALUES),
        st.builds(lambda name, value: _omf(_memd("hypothesis memd item", **{name: value}), app="memd"),
                  st.sampled_from(("status", "tier", "expires_at", "review_after", "supersedes",
                                   "superseded_by", "updated_at")), JSON_VALUES)),
    "/omf/export": _one_member(("tenant_id", "project_id", "include_history", "include_superseded",
                                "include_expired"), lambda: {"tenant_id": "t"}),
}
STRATEGIES["/omf/preview"] = STRATEGIES["/omf/import"]


@pytest.mark.parametrize("route", POST_ROUTES)
def test_arbitrary_json_in_the_members_each_route_reads(servers: Servers, route: str) -> None:
    failures: list[str] = []
    with httpx.Client(base_url=servers.url, headers=_ump_headers(), timeout=30) as c:
        @seed(14)
        @settings(derandomize=True, database=None, max_examples=HYPOTHESIS_EXAMPLES, deadline=None,
                  suppress_health_check=list(HealthCheck))
        @given(STRATEGIES[route])
        def run(value: Any) -> None:
            body = json.dumps(value).encode()
            problem = attack(servers, c, route, body, body.decode()[:100])
            if problem:
                failures.append(problem)

        run()
    assert not failures, "\n".join(failures)


# -- the GET routes: malformed paths, queries and bodies ---------------------------------------------------

BAD_IDS = ["%", "%zz", "%ff%fe", "%ed%a0%80", "%c0%af", "%00", "a%2F..%2F..%2Fetc%2Fpasswd", "x" * 4000,
           urllib.parse.quote("urn:ump:\U0001F600" * 200, safe=""), "%25%25", "urn:ump:" + "0" * 26]


def test_get_routes_answer_malformed_input_in_the_error_shape(servers: Servers) -> None:
    failures = []
    before = servers.snapshot()
    with httpx.Client(base_url=servers.url, headers=_ump_headers(), timeout=30) as c:
        for rid in BAD_IDS:
            r = c.get(f"/ump/memory/{rid}")
            if (p := _ump_problem(r)) or r.status_code not in (400, 404):
                failures.append(f"GET /ump/memory/{rid[:40]}: {p or r.status_code}")
        for path in ("/ump/capabilities", "/.well-known/ump.json", "/openapi.json", f"/ump/memory/{servers.existing}"):
            for label, body in (("binary", bytes(range(256))), ("deep", b"[" * 100_000)):
                r = c.request("GET", path, content=body)
                if p := _ump_problem(r):
                    failures.append(f"GET {path} with a {label} body: {p}")
        for query in ("owner=%ff", "owner=" + "x" * 4000, "visibility=%00", "project=%ed%a0%80"):
            with c.stream("GET", f"/ump/subscribe?{query}") as r:
                if r.status_code >= 400:
                    r.read()
                if r.status_code >= 500 or (r.status_code >= 400 and _ump_problem(r)):
                    failures.append(f"GET /ump/subscribe?{query[:40]}: {r.status_code}")
    assert servers.snapshot() == before
    assert not failures, "\n".join(failures)


# -- OMF's query string ---------------------------------------------------------------------------------

BAD_QUERIES = [{}, {"tenant_id": ""}, {"tenant_id": "\x00"}, {"tenant_id": "t", "include_archived": "maybe"},
               {"tenant_id": "t", "include_archived": ""}, {"tenant_id": "t", "fuzzy_threshold": "nan"},
               {"tenant_id": "t", "fuzzy_threshold": "inf"}, {"tenant_id": "t", "fuzzy_threshold": "1e400"},
               {"tenant_id": "t", "fuzzy_threshold": "-0.5"}, {"tenant_id": "t", "fuzzy_threshold": "1" * 5000},
               {"tenant_id": "t", "fuzzy_threshold": "0x1p-2"}, {"tenant_id": "\ud800"}]


@pytest.mark.parametrize("route", ["/omf/import", "/omf/preview"])
def test_omf_query_parameters_never_crash_and_refusals_write_nothing(servers: Servers, route: str) -> None:
    document = json.dumps({"omf": "1.0", "exported_at": "x", "memories": [{"content": "from a bad query"}]})
    failures = []
    with httpx.Client(base_url=servers.url, timeout=30) as c:
        for params in BAD_QUERIES:
            before = servers.snapshot()
            query = urllib.parse.urlencode(params, errors="surrogatepass")
            r = c.post(f"{route}?{query}", content=document)
            problem = _omf_problem(r)  # an odd tenant ("\x00") may be served: only a crash is wrong
            if problem is None and r.status_code >= 400 and servers.snapshot() != before:
                problem = "refused but the store changed"
            if problem:
                failures.append(f"{route}?{query[:60]}: {problem}")
    assert not failures, "\n".join(failures)


# -- JSON-RPC ids that no float can hold (issue 14 item 5; more in test_hostile_upp.py) ------------------

@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0", "id": 1e400, "method": "upp/info"}',
                                  b'{"jsonrpc": "2.0", "id": -1e400, "method": "upp/info"}',
                                  b'[{"jsonrpc": "2.0", "id": 1e400, "method": "upp/info"}]'],
                         ids=["1e400", "-1e400", "in a batch"])
def test_json_rpc_ids_out_of_float_range_are_invalid_requests(servers: Servers, body: bytes) -> None:
    with httpx.Client(base_url=servers.url, timeout=30) as c:
        problem = attack(servers, c, "/upp", body, body.decode())
    assert problem is None, problem
