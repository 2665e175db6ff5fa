"""The reference server's HTTP binding, for real: uvicorn on 127.0.0.1, httpx and the HTTP driver.

Every route under both runtime versions (`UMP-Version`), every kind of bad input (never a 500,
always the spec's code and status, the store unchanged), SSE, and the driver's own contract
(Reply fields, TargetError when no answer comes).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from importlib import resources
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from memconform.reference_impl.ump.serve import start_in_thread
from memconform.suite.outcomes import TargetError
from memconform.suite.ump import captoken, testkeys
from memconform.suite.ump.client import Auth
from memconform.targets.base import Subject
from memconform.targets.http import HttpDriver, HttpUmpClient, _SSEParser

from .conftest import bearer, token_for

VERSIONS = ("1.0", "0.1")
OWNER = testkeys.test_did("owner-a")
PROJECT = "github.com/example/memconform-http"
POSTS = ("recall", "remember", "revise", "forget", "feedback", "rehydrate")
JSON_TYPE = "application/json; charset=utf-8"


# -- helpers -----------------------------------------------------------------------------------

def _defs() -> dict[str, Any]:
    text = (resources.files("memconform.suite.ump") / "schemas" / "operations.schema.json").read_text("utf-8")
    return json.loads(text)["$defs"]


DEFS = _defs()


def conforms(name: str, body: Any) -> None:
    validator = Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": DEFS}, format_checker=FormatChecker())
    errors = [f"{'/'.join(map(str, e.absolute_path)) or '/'}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, f"{name}: {errors} in {json.dumps(body)[:500]}"


_MARKER_RE = re.compile(r"mcfhttp[0-9a-f]{12}")


def marker() -> str:
    return f"mcfhttp{secrets.token_hex(6)}"


def record(text: str | None = None, owner: str = "owner-a", **members: Any) -> dict[str, Any]:
    did = testkeys.test_did(owner)
    rec = {"kind": "semantic", "body": {"text": text or f"{marker()} a memory about the http binding"},
           "scope": {"owner": did, "project": PROJECT, "visibility": "private"},
           "provenance": {"actor": did, "actor_kind": "agent", "method": "memconform-test"}}
    rec.update(members)
    return rec


def client(url: str, version: str | None = "1.0", owner: str | None = "owner-a") -> httpx.Client:
    headers = {}
    if version is not None:
        headers["UMP-Version"] = version
    if owner is not None:
        headers.update(bearer(owner))
    return httpx.Client(base_url=url, headers=headers, timeout=10)


def quoted(rid: str) -> str:
    return "/ump/memory/" + urllib.parse.quote(rid, safe="")


def envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text[:500])
    assert response.headers["content-type"] == JSON_TYPE
    body = response.json()
    conforms("error", body)
    assert body["error"]["code"] == code, body
    assert "Traceback" not in response.text
    return body


def count(service: Any) -> int:
    return service._store.count()


@pytest.fixture(scope="module")
def url(module_server) -> str:
    return module_server.url


@pytest.fixture(scope="module")
def service(module_server) -> Any:
    return module_server.service(module_server.url)


@pytest.fixture(scope="module")
def existing(url) -> dict[str, str]:
    """One record per version, made once, for bad-input cases that need a real id."""
    out = {}
    for version in VERSIONS:
        with client(url, version) as c:
            r = c.post("/ump/remember", json={"record": record()})
            assert r.status_code == 200, r.text
            out[version] = r.json()["id"]
    return out


# -- every route, both versions ---------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_capabilities_per_version(url, version):
    with client(url, version, owner=None) as c:
        r = c.get("/ump/capabilities")
    assert r.status_code == 200 and r.headers["content-type"] == JSON_TYPE
    conforms("capabilities_response", r.json())
    assert r.json()["ump"] == version
    assert r.json()["versions"] == ["1.0", "0.1"]
    assert r.json()["conformance"] == "L3"


def test_capabilities_without_version_header_is_the_newest(url):
    with client(url, None, owner=None) as c:
        assert c.get("/ump/capabilities").json()["ump"] == "1.0"


def test_well_known(url):
    r = httpx.get(f"{url}/.well-known/ump.json")
    assert r.status_code == 200 and r.headers["content-type"] == JSON_TYPE
    conforms("well_known_response", r.json())


def test_openapi_is_served_and_is_the_shipped_file(url):
    r = httpx.get(f"{url}/openapi.json")
    assert r.status_code == 200 and r.headers["content-type"] == JSON_TYPE
    shipped = json.loads((resources.files("memconform.reference_impl.ump") / "openapi.json").read_text("utf-8"))
    assert r.json() == shipped
    assert shipped["openapi"].startswith("3.1")
    routes = {f"{m.upper()} {p}" for p, item in shipped["paths"].items() for m in item}
    assert routes == {"GET /ump/capabilities", "GET /.well-known/ump.json", "POST /ump/recall",
                      "POST /ump/remember", "GET /ump/memory/{id}", "POST /ump/revise", "POST /ump/forget",
                      "POST /ump/feedback", "POST /ump/rehydrate", "GET /ump/subscribe", "GET /openapi.json"}


def test_openapi_components_hold_the_operation_schemas_unchanged():
    shipped = json.loads((resources.files("memconform.reference_impl.ump") / "openapi.json").read_text("utf-8"))
    components = shipped["components"]["schemas"]
    for name, schema in DEFS.items():
        rewritten = json.loads(json.dumps(schema).replace('"#/$defs/', '"#/components/schemas/'))
        assert components[name] == rewritten, name


@pytest.mark.parametrize("version", VERSIONS)
def test_every_operation_round_trip(url, version):
    text = f"{marker()} use bun for this repo"
    with client(url, version) as c:
        # remember: {record}, then the bare record, then the same again (merged)
        r = c.post("/ump/remember", json={"record": record(text)})
        assert r.status_code == 200, r.text
        conforms("remember_response", r.json())
        assert r.json()["result"] == "created"
        rid = r.json()["id"]
        bare = c.post("/ump/remember", json=record())
        assert bare.status_code == 200 and bare.json()["result"] == "created", bare.text
        again = c.post("/ump/remember", json={"record": record(text)})
        assert again.json() == {"id": rid, "result": "merged"}

        # get, with the id percent-encoded
        g = c.get(quoted(rid))
        assert g.status_code == 200 and g.headers["content-type"] == JSON_TYPE
        conforms("get_response", g.json())
        assert g.json()["record"]["id"] == rid and g.json()["record"]["ump"] == version

        # recall finds it
        rc = c.post("/ump/recall", json={"query": text.split()[0], "limit": 5})
        assert rc.status_code == 200, rc.text
        conforms("recall_response", rc.json())
        assert [x["record"]["id"] for x in rc.json()["results"]] == [rid]

        # revise
        rv = c.post("/ump/revise", json={"id": rid, "patch": {"body": {"text": text + ", not pnpm"}}})
        assert rv.status_code == 200, rv.text
        conforms("revise_response", rv.json())
        new = rv.json()["id"]
        assert rv.json()["supersedes"] == [rid] and new != rid
        prior = c.get(quoted(rid)).json()["record"]
        assert prior["superseded_by"] == [new] and prior["time"]["valid_to"]

        # feedback
        fb = c.post("/ump/feedback", json={"id": new, "outcome": "followed"})
        assert fb.status_code == 200, fb.text
        conforms("feedback_response", fb.json())

        # rehydrate
        rh = c.post("/ump/rehydrate", json={"ids": [new]})
        assert rh.status_code == 200, rh.text
        conforms("rehydrate_response", rh.json())
        assert rh.json()["included"] == [new] and "<ump:memory" in rh.json()["text"]

        # forget (tombstone, still served), then hard forget (gone)
        fg = c.post("/ump/forget", json={"id": new, "reason": "user_revoked"})
        assert fg.status_code == 200 and fg.json() == {"result": "tombstoned"}, fg.text
        conforms("forget_response", fg.json())
        assert c.get(quoted(new)).json()["record"]["lifecycle"]["status"] == "tombstoned"
        hard = c.post("/ump/forget", json={"id": new, "reason": "user_revoked", "hard": True})
        assert hard.status_code == 200 and hard.json() == {"result": "erased"}, hard.text
        envelope(c.get(quoted(new)), 404, "not_found")


def test_versions_are_separate_partitions(url, existing):
    with client(url, "0.1") as c:
        envelope(c.get(quoted(existing["1.0"])), 404, "not_found")
        assert c.get(quoted(existing["0.1"])).status_code == 200


def test_unknown_id_is_404(url):
    with client(url) as c:
        envelope(c.get(quoted("urn:ump:" + "a" * 26)), 404, "not_found")


def test_id_with_reserved_characters_round_trips_through_the_path(url):
    # the id is refused or not found, but it reaches the service whole: never a routing 404/405
    with client(url) as c:
        for rid in ("urn:ump:a/b", "urn:ump:a?b#c", "urn:ump:ü", "urn:ump:a%2Fb"):
            r = c.get(quoted(rid))
            assert r.status_code in (400, 404), (rid, r.text)
            assert "no such route" not in r.text


# -- bad input: the spec's code and status, never 500, the store unchanged ------------------------

def _bad_bodies(existing_id: str) -> list[tuple[str, str, bytes, int, str]]:
    cases: list[tuple[str, str, bytes, int, str]] = []
    for op in POSTS:
        for label, body in (("malformed JSON", b'{"query": "x",'), ("empty body", b""),
                            ("array", b"[]"), ("array of objects", b'[{"query": "x"}]'), ("string", b'"x"'),
                            ("number", b"42"), ("null", b"null"), ("NaN", b'{"query": NaN}'),
                            ("not UTF-8", b'{"query": "\xff\xfe"}'), ("deep nesting", b"[" * 100000 + b"]" * 100000),
                            ("trailing garbage", b'{"query": "x"} x')):
            cases.append((op, label, body, 400, "invalid_record"))
    typed = {
        "recall": [{"query": 5}, {"query": "x", "limit": "ten"}, {"query": "x", "scope": "mine"},
                   {"query": "x", "filter": []}, {"query": ["x"]}],
        "remember": [{"record": "x"}, {"record": []}, {"record": {"kind": 5, "body": "text"}},
                     {"record": record(kind="gossip")}, {"record": {"body": {"text": 7}}}],
        "revise": [{"id": 5, "patch": {}}, {"id": existing_id, "patch": []}, {"id": existing_id, "patch": "x"},
                   {"id": [existing_id], "patch": {}}, {"id": existing_id, "patch": {"id": "urn:ump:zzzz"}}],
        "forget": [{"id": [existing_id], "reason": "r"}, {"id": 7, "reason": "r"}],
        "feedback": [{"id": existing_id, "outcome": "loved"}, {"id": existing_id, "outcome": 7},
                     {"id": {"x": 1}, "outcome": "followed"}],
        "rehydrate": [{"ids": "x"}, {"ids": [1, 2]}, {"records": "x"}, {"limit": "x"}],
    }
    for op, bodies in typed.items():
        for body in bodies:
            # The label leaves out the random marker: pytest-xdist needs the same ids on every worker.
            label = json.dumps(body).replace(_MARKER_RE.search(json.dumps(body)).group(0), "MARKER") \
                if _MARKER_RE.search(json.dumps(body)) else json.dumps(body)
            cases.append((op, f"wrong type {label[:60]}", json.dumps(body).encode(), 400, "invalid_record"))
    return cases


BAD_BODIES = [pytest.param(op, body, status, code, id=f"{op}-{label}")
              for op, label, body, status, code in _bad_bodies("__EXISTING__")]


@pytest.mark.parametrize(("op", "body", "status", "code"), BAD_BODIES)
def test_bad_bodies(url, service, existing, op, body, status, code):
    body = body.replace(b"__EXISTING__", existing["1.0"].encode())
    before = count(service)
    with client(url) as c:
        r = c.post(f"/ump/{op}", content=body, headers={"Content-Type": "application/json"})
    envelope(r, status, code)
    assert count(service) == before


@pytest.mark.parametrize("op", POSTS)
def test_oversize_body_is_413(url, service, op):
    before = count(service)
    big = json.dumps({"record": record("x" * (2 << 20)), "query": "x"}).encode()
    with client(url) as c:
        body = envelope(c.post(f"/ump/{op}", content=big, headers={"Content-Type": "application/json"}),
                        413, "invalid_record")
        assert "1 MiB" in body["error"]["message"]
        # the same without Content-Length (chunked): still refused, and the connection still answers
        chunks = (big[i:i + 65536] for i in range(0, len(big), 65536))
        envelope(c.post(f"/ump/{op}", content=chunks, headers={"Content-Type": "application/json"}),
                 413, "invalid_record")
        assert c.get("/ump/capabilities").status_code == 200
    assert count(service) == before


def test_huge_declared_body_is_refused_without_reading_it(url):
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port)) as s:
        s.sendall(b"POST /ump/recall HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 999999999\r\n\r\n{")
        s.settimeout(5)
        data = b""
        while b"invalid_record" not in data:
            try:
                chunk = s.recv(65536)
            except OSError:  # reset after the answer: the server would not read 1 GB
                break
            if not chunk:
                break
            data += chunk
        head = data.decode("latin-1")
    assert head.startswith("HTTP/1.1 413"), head[:200]
    assert '"invalid_record"' in head


def test_a_body_just_under_the_limit_is_read(url, service):
    before = count(service)
    text = marker() + " " + "y" * ((1 << 20) - 2000)
    payload = json.dumps({"record": record(text)}).encode()
    assert len(payload) <= 1 << 20
    with client(url) as c:
        r = c.post("/ump/remember", content=payload, headers={"Content-Type": "application/json"})
    assert r.status_code != 413 and r.status_code < 500, r.text[:300]
    assert count(service) == before + (1 if r.status_code == 200 and r.json()["result"] == "created" else 0)


@pytest.mark.parametrize(("method", "path"), [("GET", "/"), ("GET", "/ump"), ("GET", "/ump/nope"),
                                              ("POST", "/ump/unknown"), ("GET", "/ump/recall/"),
                                              ("GET", "/ump/memory"), ("POST", "/ump/capabilities/x")])
def test_unknown_route_is_404(url, method, path):
    with client(url) as c:
        envelope(c.request(method, path), 404, "not_found")


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("GET", "/ump/recall", "POST"), ("PUT", "/ump/remember", "POST"), ("DELETE", "/ump/memory/urn:ump:aaaa", "GET"),
    ("POST", "/ump/capabilities", "GET"), ("POST", "/ump/subscribe", "GET"), ("PATCH", "/ump/revise", "POST"),
    ("POST", "/.well-known/ump.json", "GET"), ("DELETE", "/openapi.json", "GET"),
])
def test_wrong_method_is_405_with_allow(url, service, method, path, allow):
    before = count(service)
    with client(url) as c:
        r = c.request(method, path, content=b"{}")
    envelope(r, 405, "unsupported")
    assert allow in r.headers["allow"]
    assert count(service) == before


@pytest.mark.parametrize("encoded", ["%ZZ", "%", "urn%3Aump%3", "%E0%A4", "%FF", "urn:ump:%C3%28"])
def test_bad_percent_encoding_is_400(url, encoded):
    c = HttpUmpClient(url, "1.0")
    try:
        reply = c.call_raw("GET", "/ump/memory/" + encoded)
    finally:
        c.close()
    assert reply.status == 400 and reply.error_code == "invalid_record", reply.describe()


AUTH_CASES = {
    "missing": None,
    "garbage bearer": "Bearer garbage",
    "empty bearer": "Bearer",
    "basic scheme": "Basic dXNlcjpwYXNz",
    "no scheme": token_for("owner-a"),
    "expired": "Bearer " + token_for("owner-a", now=time.time() - 3600, ttl=60),
    "not yet valid": "Bearer " + token_for("owner-a", nbf=time.time() + 3600),
    "tampered signature": "Bearer " + token_for("owner-a")[:-4] + "AAAA",
    "unknown token version": "Bearer " + token_for("owner-a", version="ump-cap/9"),
    "issuer not the signer": "Bearer " + captoken.mint(testkeys.test_signing_key("mallory"),
                                                        iss=testkeys.test_did("owner-a"),
                                                        scope={"owner": testkeys.test_did("owner-a")}),
}


def _auth_requests(existing_id: str) -> list[tuple[str, str, Any]]:
    return [("POST", "/ump/recall", {"query": "x"}), ("POST", "/ump/remember", {"record": record()}),
            ("GET", quoted(existing_id), None), ("POST", "/ump/revise", {"id": existing_id, "patch": {}}),
            ("POST", "/ump/forget", {"id": existing_id, "reason": "r"}),
            ("POST", "/ump/feedback", {"id": existing_id, "outcome": "followed"}),
            ("POST", "/ump/rehydrate", {"ids": [existing_id]}), ("GET", "/ump/subscribe", None)]


@pytest.mark.parametrize("case", sorted(AUTH_CASES))
def test_missing_or_bad_authorization_is_401(url, service, existing, case):
    header = AUTH_CASES[case]
    headers = {"UMP-Version": "1.0"} | ({"Authorization": header} if header is not None else {})
    before = count(service)
    with httpx.Client(base_url=url, headers=headers, timeout=10) as c:
        for method, path, body in _auth_requests(existing["1.0"]):
            r = c.request(method, path, json=body)
            envelope(r, 401, "unauthorized")
            assert r.headers.get("www-authenticate", "").lower().startswith("bearer")
        # capabilities needs no token, whatever the header says
        assert c.get("/ump/capabilities").status_code in (200, 401)
    assert count(service) == before
    with client(url) as c:
        assert c.get(quoted(existing["1.0"])).json()["record"]["lifecycle"]["status"] == "active"


@pytest.mark.parametrize("value", ["2.0", "1", "", "1.0, 0.1", "latest", "0.1.0"])
def test_unknown_ump_version_is_400_unsupported(url, service, value):
    before = count(service)
    with httpx.Client(base_url=url, headers={"UMP-Version": value} | bearer(), timeout=10) as c:
        envelope(c.get("/ump/capabilities"), 400, "unsupported")
        envelope(c.post("/ump/remember", json={"record": record()}), 400, "unsupported")
        envelope(c.get("/ump/subscribe"), 400, "unsupported")
    assert count(service) == before


def test_without_required_capability_anonymous_requests_are_served(live_server):
    url = live_server(require_capability=False)
    with client(url, owner=None) as c:
        r = c.post("/ump/recall", json={"query": "anything"})
        assert r.status_code == 200, r.text
        caps = c.get("/ump/capabilities").json()
        assert caps["auth"]["required"] is False


# -- SSE -----------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_subscribe_delivers_created_revised_tombstoned(url, version):
    c = HttpUmpClient(url, version, timeout=10)
    made: dict[str, str] = {}

    def trigger() -> None:
        made["id"] = c.remember(record()).body["id"]
        made["new"] = c.revise({"id": made["id"], "patch": {"body": {"text": marker() + " revised"}}}).body["id"]
        c.forget({"id": made["new"], "reason": "done"})

    try:
        out = c.subscribe(trigger, expect=3)
    finally:
        c.close()
    assert out.status == 200 and out.content_type.startswith("text/event-stream")
    assert out.raw.startswith(": ok\n"), out.raw[:100]
    assert not out.problems, out.problems
    for event in out.events:
        conforms("subscribe_event", event)
    types = [(e["type"], e["id"]) for e in out.events]
    assert ("created", made["id"]) in types
    assert ("revised", made["new"]) in types or ("created", made["new"]) in types, types
    assert ("tombstoned", made["new"]) in types, types
    assert re.search(r"^event: created\ndata: \{", out.raw, re.M)


def test_subscribe_sees_only_what_the_requester_may_see(url):
    a = HttpUmpClient(url, "1.0", timeout=5, event_timeout=1.0)
    try:
        out = a.subscribe(lambda: a.remember(record(owner="owner-b"), auth=Auth.as_owner("owner-b")),
                          auth=Auth.as_owner("owner-a"), expect=1)
    finally:
        a.close()
    assert out.status == 200 and out.events == (), out.events


def test_subscribe_without_token_is_401(url):
    c = HttpUmpClient(url, "1.0", timeout=5)
    try:
        out = c.subscribe(lambda: pytest.fail("the trigger must not run"), auth=Auth.anonymous())
    finally:
        c.close()
    assert out.status == 401 and out.error_code == "unauthorized" and out.events == ()


def test_sse_stream_frames_and_disconnect(url, service):
    """Raw SSE: first a comment, then event/data frames; a client that leaves frees the stream."""
    before = len(service._subscriptions)
    lines: list[str] = []
    with httpx.Client(base_url=url, headers=bearer() | {"UMP-Version": "1.0"}, timeout=10) as c:
        with c.stream("GET", "/ump/subscribe") as s:
            assert s.status_code == 200
            assert s.headers["content-type"].startswith("text/event-stream")
            assert s.headers.get("cache-control") == "no-cache"
            it = s.iter_lines()
            lines.append(next(it))
            assert lines[0].startswith(":")
            rid = c.post("/ump/remember", json={"record": record()}).json()["id"]
            for line in it:
                lines.append(line)
                if line == "" and any(x.startswith("data:") for x in lines):
                    break
    frame = [x for x in lines[1:] if x]
    assert frame[0] == "event: created"
    assert json.loads(frame[1][len("data: "):])["id"] == rid
    # after many clients came and went the server still answers (the timeout only bounds a hang:
    # no verdict here depends on how fast)
    for _ in range(20):
        with httpx.stream("GET", f"{url}/ump/subscribe", headers=bearer(), timeout=5) as s:
            next(s.iter_lines())
    assert httpx.get(f"{url}/ump/capabilities", timeout=10).status_code == 200
    # and every subscription was closed on the server once its client left (one an earlier test
    # left open may close meanwhile: never more than before)
    deadline = time.monotonic() + 5
    while len(service._subscriptions) > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(service._subscriptions) <= before


def test_stop_ends_open_streams_promptly(live_server):
    url = live_server()
    server = live_server.server(url)
    got: list[str] = []

    def hold() -> None:
        try:
            with httpx.stream("GET", f"{url}/ump/subscribe", headers=bearer(), timeout=30) as s:
                for line in s.iter_lines():
                    got.append(line)
        except httpx.HTTPError:
            pass

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.02)
    assert got, "the stream never opened"
    t0 = time.monotonic()
    server.stop()
    assert time.monotonic() - t0 < 5
    t.join(5)
    assert not t.is_alive()


class _BrokenService:
    """A service whose every operation fails unexpectedly."""

    versions = ("1.0", "0.1")

    def handle(self, operation, request, *, version, token):
        raise RuntimeError("secret internal detail")

    def subscribe(self, *, version, token, request=None):
        raise RuntimeError("secret internal detail")

    def well_known(self, base_url=None):
        raise KeyError("secret internal detail")


def test_unexpected_errors_are_500_internal_without_details(caplog):
    from memconform.reference_impl.ump.http_app import build_app

    service = _BrokenService()
    server = start_in_thread(service, app=build_app(service, mcp=False))
    try:
        with client(server.base_url) as c:
            for method, path, body in (("GET", "/ump/capabilities", None), ("POST", "/ump/recall", {"query": "x"}),
                                       ("GET", "/ump/memory/urn:ump:aaaa", None), ("GET", "/ump/subscribe", None),
                                       ("GET", "/.well-known/ump.json", None)):
                r = c.request(method, path, json=body)
                envelope(r, 500, "internal")
                assert "secret" not in r.text and "RuntimeError" not in r.text
    finally:
        server.stop()
    assert "secret internal detail" in caplog.text  # logged on the server


def test_sse_keep_alive_comments():
    from memconform.reference_impl.ump import serve
    from memconform.reference_impl.ump.http_app import build_app

    service = serve.make_service()
    server = start_in_thread(service, app=build_app(service, keepalive=0.2, mcp=False))
    try:
        comments = []
        with httpx.stream("GET", f"{server.base_url}/ump/subscribe", headers=bearer(), timeout=5) as s:
            for line in s.iter_lines():
                if line.startswith(":"):
                    comments.append(line)
                if len(comments) >= 3:
                    break
        assert comments[0] == ": ok" and set(comments[1:]) == {": keep-alive"}
    finally:
        server.stop()
        service.close()


def test_mcp_is_served_at_slash_mcp(url):
    r = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        headers={"Accept": "application/json, text/event-stream"}, timeout=10)
    assert r.status_code == 200, r.text[:300]
    assert "ump" in r.text.lower() or "serverInfo" in r.text


# -- the driver ------------------------------------------------------------------------------

def test_driver_reply_fields(url):
    c = HttpUmpClient(url, "0.1", timeout=5)
    try:
        r = c.remember(record())
        assert (r.operation, r.binding, r.status, r.error_code, r.ok) == ("remember", "http", 200, None, True)
        assert r.sent["record"]["kind"] == "semantic" and r.body["result"] == "created"
        assert r.auth == "token of owner-a" and r.raw is None and r.wire == ()
        g = c.get(r.body["id"])
        assert g.ok and g.body["record"]["ump"] == "0.1" and g.sent == {"id": r.body["id"]}
        missing = c.get("urn:ump:" + "b" * 26)
        assert (missing.status, missing.error_code, missing.ok) == (404, "not_found", False)
        assert missing.error_message
        anon = c.recall({"query": "x"}, auth=Auth.anonymous())
        assert (anon.status, anon.error_code, anon.auth) == (401, "unauthorized", "anonymous")
        forged = c.recall({"query": "x"}, auth=Auth.bearer("umpcap.x.y"))
        assert forged.error_code == "unauthorized" and forged.auth == "the given bearer token"
        bare = c.remember(record(), wrap=False)
        assert bare.ok and "record" not in bare.sent
        caps = c.capabilities()
        assert caps.ok and caps.body["ump"] == "0.1"
        assert c.offered() == frozenset({"capabilities", "recall", "remember", "get", "revise", "forget",
                                         "feedback", "subscribe", "rehydrate"})
        assert c.tools() is None
        raw = c.call_raw("POST", "/ump/recall", b"{nope", {"Content-Type": "application/json"})
        assert (raw.status, raw.error_code) == (400, "invalid_record")
        no_version = c.call_raw("GET", "/ump/capabilities", headers={"UMP-Version": None}, auth=Auth.anonymous())
        assert no_version.body["ump"] == "1.0"
        bad_version = c.call_raw("GET", "/ump/capabilities", headers={"UMP-Version": "7.0"})
        assert (bad_version.status, bad_version.error_code) == (400, "unsupported")
    finally:
        c.close()


def test_driver_owner_tokens_are_cached_and_valid(url):
    c = HttpUmpClient(url, "1.0")
    try:
        first, _ = c._auth_header(Auth.as_owner("owner-b"))
        again, _ = c._auth_header(Auth.as_owner("owner-b"))
        assert first == again
        grant = captoken.verify(first)
        assert grant.issuer == testkeys.test_did("owner-b") and grant.scope == {"owner": grant.issuer}
        with pytest.raises(ValueError, match="test keys"):
            c._auth_header(Auth.as_owner("nobody"))
    finally:
        c.close()


def _stub(routes: list[Route]) -> Any:
    return start_in_thread(None, app=Starlette(routes=routes))


def test_driver_reads_answers_that_lack_the_envelope_and_refuses_garbage():
    async def html(request):
        return PlainTextResponse("<h1>oops</h1>", status_code=500, media_type="text/html")

    async def detail(request):
        return Response(b'{"detail": "Not Found"}', status_code=404, media_type="application/json")

    async def wrong_type(request):
        return Response(b'{"id": "urn:ump:aaaa", "result": "created"}', media_type="text/plain")

    server = _stub([Route("/ump/recall", html, methods=["POST"]), Route("/ump/memory/{id:path}", detail),
                    Route("/ump/remember", wrong_type, methods=["POST"])])
    c = HttpUmpClient(server.base_url, "1.0", timeout=5)
    try:
        # a 5xx page without the error envelope is not the protocol at all: a target error, never
        # a verdict (targets/answers.py, docs/contracts.md)
        with pytest.raises(TargetError, match="HTTP 500.*without the spec's error envelope"):
            c.recall({"query": "x"})
        g = c.get("urn:ump:aaaa")
        assert g.body == {"detail": "Not Found"} and g.error_code == "http_404" and not g.ok
        m = c.remember(record())
        assert m.ok and any("Content-Type" in w for w in m.wire)
    finally:
        c.close()
        server.stop()


def test_driver_parses_bad_sse_robustly():
    frames = (": ok\n\n"
              "event: created\ndata: {\"type\":\"created\",\"id\":\"urn:ump:aaaa\"}\n\n"
              "event: created\ndata: not json\n\n"
              "data: {\"type\":\"revised\",\"id\":\"urn:ump:bbbb\"}\n\n"
              "event: tombstoned\ndata: {\"type\":\"erased\",\"id\":\"urn:ump:cccc\"}\n\n"
              "event: merged\n\n"
              "event: created\ndata: [1, 2]\n\n"
              "bogus line\n\n"
              "event: created\r\ndata: {\"type\":\"created\",\r\ndata: \"id\":\"urn:ump:dddd\"}\r\n\r\n")

    async def stream(request):
        async def gen():
            yield frames.encode()
        return StreamingResponse(gen(), media_type="text/event-stream")

    server = _stub([Route("/ump/subscribe", stream)])
    c = HttpUmpClient(server.base_url, "1.0", timeout=5, event_timeout=2)
    try:
        out = c.subscribe(lambda: None, expect=10)
    finally:
        c.close()
        server.stop()
    ids = [e.get("id") for e in out.events]
    assert ids == ["urn:ump:aaaa", "urn:ump:bbbb", "urn:ump:cccc", "urn:ump:dddd"], out.events
    text = "\n".join(out.problems)
    for expected in ("not JSON", "no `event:` line", "data.type is 'erased'", "without data",
                     "not a JSON object", "unknown SSE field", "closed the stream"):
        assert expected in text, (expected, out.problems)


def test_sse_parser_units():
    p = _SSEParser()
    for line in [": hi", "event: created", "data: {\"type\": \"created\",", "data: \"id\": \"urn:ump:x\"}", "",
                 "id: 3", "retry: 10", ""]:
        p.feed_line(line)
    assert p.events == [{"type": "created", "id": "urn:ump:x"}] and p.problems == [] and p.comments == 1
    # a hello or heartbeat event names no record: no change, so no event (it is still no public-form frame)
    for line in ["event: ready", "data: {}", ""]:
        p.feed_line(line)
    assert len(p.events) == 1 and p.unrelated == 1 and "lacks a string `type` or `id`" in p.problems[0]
    p.problems.clear()
    p.feed_line("event: revised")
    p.finish()
    assert "ended inside a frame" in p.problems[0]


def test_driver_subscribe_against_a_server_without_subscribe():
    async def nothing(request):
        return Response(b'{"error": {"code": "not_found", "message": "no route"}}', 404, media_type="application/json")

    server = _stub([Route("/ump/subscribe", nothing)])
    c = HttpUmpClient(server.base_url, "1.0", timeout=5)
    try:
        out = c.subscribe(lambda: pytest.fail("must not run"))
    finally:
        c.close()
        server.stop()
    assert (out.status, out.error_code, out.events) == (404, "not_found", ())


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_driver_target_error_on_a_closed_port():
    url = f"http://127.0.0.1:{_closed_port()}"
    c = HttpUmpClient(url, "1.0", timeout=2)
    try:
        for call in (lambda: c.capabilities(), lambda: c.get("urn:ump:aaaa"), lambda: c.recall({"query": "x"}),
                     lambda: c.call_raw("GET", "/x"), lambda: c.subscribe(lambda: None)):
            with pytest.raises(TargetError, match=re.escape(url)):
                call()
    finally:
        c.close()
    with pytest.raises(TargetError, match=re.escape(url)):
        HttpDriver(url).subjects()


@pytest.fixture
def hanging_server():
    """A socket that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                accepted.append(conn)
            except (TimeoutError, OSError):
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    t.join(2)
    for conn in accepted:
        conn.close()
    sock.close()


def test_driver_target_error_on_a_server_that_never_answers(hanging_server):
    c = HttpUmpClient(hanging_server, "1.0", timeout=0.5)
    try:
        for call in (lambda: c.remember(record()), lambda: c.get("urn:ump:aaaa"),
                     lambda: c.subscribe(lambda: pytest.fail("must not run"))):
            t0 = time.monotonic()
            with pytest.raises(TargetError, match="no (answer|response headers) within 0.5 s"):
                call()
            assert time.monotonic() - t0 < 3
    finally:
        c.close()
    t0 = time.monotonic()
    with pytest.raises(TargetError, match="no answer within"):
        HttpDriver(hanging_server, timeout=0.5).subjects()
    assert time.monotonic() - t0 < 3


def test_driver_subjects_and_levels(url):
    d = HttpDriver(url, timeout=5)
    try:
        subjects = d.subjects()
        assert subjects == [Subject(url, "ump", "0.1", "http"), Subject(url, "ump", "1.0", "http")]
        assert [d.advertised_level(s) for s in subjects] == ["L3", "L3"]
        assert d.client(subjects[0]).version == "0.1" and d.client(subjects[0]) is d.client(subjects[0])
        described = d.describe()
        assert described["kind"] == "http" and described["advertised"] == {"ump": "L3"}  # per spec, as the report reads it
        assert described["discovered_from"] == "/ump/capabilities"
    finally:
        d.close()
    forced = HttpDriver(url, forced_versions=("1.0",))
    assert [s.version for s in forced.subjects()] == ["1.0"]


def test_driver_discovers_through_well_known_when_capabilities_is_missing():
    async def well_known(request):
        return Response(b'{"ump": "1.0", "conformance": "L1", "bindings": ["http"]}', media_type="application/json")

    server = _stub([Route("/.well-known/ump.json", well_known)])
    try:
        d = HttpDriver(server.base_url, timeout=5)
        assert [s.version for s in d.subjects()] == ["1.0"]
        assert d.advertised_level(d.subjects()[0]) == "L1"
        assert d.describe()["discovered_from"] == "/.well-known/ump.json"
    finally:
        server.stop()


def test_driver_refuses_something_that_is_not_a_ump_server():
    async def hello(request):
        return PlainTextResponse("hello")

    server = _stub([Route("/", hello)])
    try:
        with pytest.raises(TargetError, match="not a UMP server"):
            HttpDriver(server.base_url, timeout=5).subjects()
    finally:
        server.stop()


def test_a_server_that_asks_a_token_at_discovery_is_told_as_such_not_as_no_ump():
    async def locked(request):
        return JSONResponse({"error": {"code": "unauthorized", "message": "token required"}}, status_code=401)

    server = _stub([Route("/ump/capabilities", locked), Route("/.well-known/ump.json", locked)])
    try:
        with pytest.raises(TargetError, match="asks for credentials at discovery") as caught:
            HttpDriver(server.base_url, timeout=5).subjects()
        assert "not a UMP server" not in str(caught.value) and "HTTP 401" in str(caught.value)
    finally:
        server.stop()


def test_capabilities_behind_a_token_beside_an_open_well_known_document_is_asked_with_the_token():
    """Round 28: the well-known document answered without a token, so discovery found the server, and the
    checks then asked capabilities without one and failed every L1 capabilities MUST on its 401. §4.2 lists
    capabilities among the routes its tokens cover (variant capabilities-need-token-well-known-open)."""
    from memconform.reference_impl.ump.http_app import build_app
    from memconform.reference_impl.ump.service import UmpService

    service = UmpService(variants=("capabilities-need-token-well-known-open",))
    server = start_in_thread(service, app=build_app(service, mcp=False))
    try:
        with client(server.base_url, owner=None) as c:
            assert c.get("/ump/capabilities").status_code == 401 and c.get("/.well-known/ump.json").status_code == 200
        driver = HttpDriver(server.base_url, timeout=5)
        subject = next(s for s in driver.subjects() if s.spec == "ump" and s.version == "1.0")
        reply = driver.client(subject).capabilities()
        assert reply.ok and reply.body["ump"] == "1.0", reply.describe()
        assert driver.describe()["discovery"] == "answered only with a capability token (owner-a's)"
        driver.close()
    finally:
        server.stop()


def test_a_server_refusing_the_suites_tokens_is_a_target_error_not_a_verdict():
    """Round 20: a server verifying another signing input answered every owner's request unauthorized and
    lost L0 on every record rule. §5.2 gives tokens no encoding: the client is an error saying so."""
    async def caps(request):
        return JSONResponse({"ump": "0.1", "versions": ["0.1"], "conformance": "L3", "kinds": []})

    async def refuse(request):
        return JSONResponse({"error": {"code": "unauthorized", "message": "token signature does not verify"}},
                            status_code=401)

    server = _stub([Route("/ump/capabilities", caps), Route("/ump/recall", refuse, methods=["POST"])])
    try:
        driver = HttpDriver(server.base_url, timeout=5)
        subject = next(s for s in driver.subjects() if s.spec == "ump")
        for _ in range(2):  # every check that asks meets the same error, without asking the server again
            with pytest.raises(TargetError, match="refused the capability token memconform minted for owner-a") as e:
                driver.client(subject)
            assert "token_command" in str(e.value) and "§5.2" in str(e.value)
    finally:
        server.stop()


def test_a_server_taking_the_suites_tokens_is_not_held_up_by_the_token_probe():
    async def caps(request):
        return JSONResponse({"ump": "0.1", "versions": ["0.1"], "conformance": "L1", "kinds": []})

    async def recall(request):  # an answer the probe does not judge: anything but unauthorized lets it by
        return JSONResponse({"error": {"code": "invalid_record", "message": "no"}}, status_code=400)

    server = _stub([Route("/ump/capabilities", caps), Route("/ump/recall", recall, methods=["POST"])])
    try:
        driver = HttpDriver(server.base_url, timeout=5)
        assert driver.client(next(s for s in driver.subjects() if s.spec == "ump")) is not None
    finally:
        server.stop()


def test_a_server_that_answers_discovery_only_with_a_token_is_discovered_and_read_with_owner_as_token():
    seen: list[str | None] = []

    async def locked(request):
        header = request.headers.get("authorization")
        seen.append(header)
        if not (header or "").startswith("Bearer umpcap."):
            return JSONResponse({"error": {"code": "unauthorized", "message": "token required"}}, status_code=401)
        return JSONResponse({"ump": "1.0", "versions": ["1.0"], "conformance": "L1", "kinds": []})

    server = _stub([Route("/ump/capabilities", locked), Route("/.well-known/ump.json", locked)])
    try:
        driver = HttpDriver(server.base_url, timeout=5)
        assert [(s.spec, s.version) for s in driver.subjects() if s.spec == "ump"] == [("ump", "1.0")]
        assert seen[:2] == [None, None] and seen[2].startswith("Bearer umpcap.")  # asked anonymously first
        client = driver.client(next(s for s in driver.subjects() if s.spec == "ump"))
        caps = client.capabilities()
        assert caps.ok and caps.auth == "token of owner-a"
        assert client.capabilities(auth=Auth.anonymous()).status == 401  # a check may still ask without one
        assert driver.describe()["discovery"].startswith("answered only with a capability token")
    finally:
        server.stop()


# -- memconform serve ------------------------------------------------------------------------

def _serve(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})
    deadline = time.monotonic() + 30
    seen = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        match = re.search(r"listening on (http://\S+)", line)
        if match:
            return proc, match.group(1)
    proc.kill()
    raise AssertionError(f"memconform serve printed no URL: {''.join(seen)}")


def _end(proc: subprocess.Popen) -> str:
    proc.terminate()
    try:
        out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


@pytest.mark.parametrize("required", [True, False])
def test_memconform_serve(required, tmp_path):
    db = tmp_path / "store.sqlite"
    args = ["--db", str(db)] + ([] if required else ["--no-require-capability"])
    proc, url = _serve(*args)
    try:
        assert url.startswith("http://127.0.0.1:")
        caps = httpx.get(f"{url}/ump/capabilities", timeout=5).json()
        assert caps["auth"]["required"] is required
        anon = httpx.post(f"{url}/ump/recall", json={"query": "x"}, timeout=5)
        assert anon.status_code == (401 if required else 200)
        r = httpx.post(f"{url}/ump/remember", json={"record": record()}, headers=bearer(), timeout=5)
        assert r.status_code == 200, r.text
    finally:
        stdout = _end(proc)
    assert stdout == ""  # everything goes to stderr
    assert db.exists()


def test_memconform_serve_rejects_an_unknown_fault():
    out = subprocess.run([sys.executable, "-m", "memconform.suite.cli", "serve", "--fault", "no-such-fault"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "unknown fault" in out.stderr
