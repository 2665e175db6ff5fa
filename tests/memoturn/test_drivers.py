"""Reaching memoturn: the REST discovery a plain http:// target makes (and its side-effect freedom),
the MCP binding over streamable HTTP and over a stdio child (the target strings memoturn+mcp+http://…
and memoturn+mcp+stdio:…), and a server whose tools are not memoturn's."""

from __future__ import annotations

import sys

import pytest

from memconform.reference_impl.memoturn.engine import MemoturnService
from memconform.reference_impl.memoturn.http import app
from memconform.reference_impl.memoturn.mcp import build_mcp_server
from memconform.reference_impl.ump.serve import start_in_thread
from memconform.suite.outcomes import Outcome, TargetError
from memconform.suite.runner import run_check
from memconform.targets.memoturn import PROBE, discover_http, discover_rest, open_mcp_target

from .helpers import VERSION, memoturn_checks

SOME = ("memoturn/ingest-statuses", "memoturn/fact-supersession", "memoturn/recall-topic-channel", "memoturn/mcp-tools",
        "memoturn/mcp-txid")


def _run(target, binding: str) -> dict:
    subject = next(s for s in target.subjects() if s.binding == binding)
    return {c.id: run_check(c, VERSION, binding, lambda: target.client(subject), None)
            for c in memoturn_checks() if c.id in SOME and binding in c.bindings}


def test_rest_discovery_finds_memoturn_and_creates_nothing():
    service = MemoturnService()
    server = start_in_thread(None, app=app(service))
    try:
        base = server.base_url.rstrip("/")
        assert discover_rest(base) is None
        part = discover_http(base, label="t", timeout=5)
        assert part is not None and [s.binding for s in part.subjects()] == ["http"]
        assert not service._known(*PROBE), "the discovery probe created the profile it recalled"
    finally:
        server.stop()
        service.close()


def test_rest_discovery_passes_over_a_server_without_memoturn():
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    server = start_in_thread(None, app=Starlette(routes=[Route("/{path:path}", lambda r: PlainTextResponse(
        "It works!", status_code=404), methods=["GET", "POST"])]))
    try:
        base = server.base_url.rstrip("/")
        why = discover_rest(base)
        assert why and "did not answer as memoturn" in why
        assert discover_http(base, label="t", timeout=5) == why  # the reason, for a --spec=memoturn run
    finally:
        server.stop()


def test_mcp_over_streamable_http():
    service = MemoturnService()
    server = start_in_thread(None, app=build_mcp_server(service).streamable_http_app())
    target = open_mcp_target("memoturn+mcp+http://" + server.base_url.split("://", 1)[1].rstrip("/") + "/mcp",
                             label="t", timeout=20)
    try:
        results = _run(target, "mcp")
        assert len(results) == len(SOME)
        assert all(r.outcome is Outcome.PASSED for r in results.values()), {k: r.reason for k, r in results.items()}
        assert target.describe()["kind"] == "memoturn+mcp+http"
    finally:
        target.close()
        server.stop()
        service.close()


def test_mcp_over_a_stdio_child():
    target = open_mcp_target(f"memoturn+mcp+stdio:{sys.executable} -m memconform.reference_impl.memoturn.mcp",
                             label="t", timeout=30)
    try:
        results = _run(target, "mcp")
        assert results and all(r.outcome is Outcome.PASSED for r in results.values()), \
            {k: r.reason for k, r in results.items()}
    finally:
        target.close()


def test_a_server_of_other_tools_is_an_error_with_its_tools():
    with pytest.raises(TargetError, match="not a memoturn MCP server: its tools are .*ump.remember"):
        open_mcp_target(f"memoturn+mcp+stdio:{sys.executable} -m memconform.suite.cli serve --stdio",
                        label="t", timeout=30)


def _guarded(inner, token: str):
    """The memoturn app behind a bearer token, as a real node's is (errors.md: 401 unauthorized)."""
    from starlette.responses import JSONResponse

    async def app(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != f"Bearer {token}".encode():
            await JSONResponse({"error": "missing or invalid token", "code": "unauthorized"}, 401)(scope, receive, send)
            return
        await inner(scope, receive, send)
    return app


def test_a_node_that_wants_a_token_is_an_error_until_it_gets_one(monkeypatch):
    monkeypatch.delenv("MEMOTURN_TOKEN", raising=False)
    monkeypatch.setenv("MEMCONFORM_MEMOTURN_NAMESPACE", "acme")
    service = MemoturnService()
    server = start_in_thread(None, app=_guarded(app(service), "s3cret"))
    try:
        base = server.base_url.rstrip("/")
        part = discover_http(base, label="t", timeout=5)
        assert part is not None, "a 401 in memoturn's envelope is memoturn, not another server"
        with pytest.raises(TargetError, match="401 unauthorized.*MEMOTURN_TOKEN"):
            part.client(part.subjects()[0])
        monkeypatch.setenv("MEMOTURN_TOKEN", "s3cret")
        part = discover_http(base, label="t", timeout=5)
        results = _run(part, "http")
        assert results and all(r.outcome is Outcome.PASSED for r in results.values()), \
            {k: r.reason for k, r in results.items()}
        written = {ns for ns, _ in service._db.execute("SELECT ns, profile FROM profiles").fetchall()}
        assert written == {"acme"}, "the checks write in the namespace MEMCONFORM_MEMOTURN_NAMESPACE names"
    finally:
        server.stop()
        service.close()


def test_a_success_that_is_not_json_is_a_target_error_and_never_a_memory_not_there():
    # found by a blind red team: a GET answering 200 with an HTML page read as an empty record
    # ("got HTTP 200 {}"), failed task-never-supersedes and left the level "not conformant"
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse, Response
    from starlette.routing import Route

    from memconform.targets.answers import NotTheProtocol
    from memconform.targets.memoturn import MemoturnRestClient

    page = HTMLResponse("<html>502 bad gateway</html>")
    garbage = Starlette(routes=[
        Route("/v1/memory/{ns}/{profile}/memories/{id}", lambda r: page if r.method == "GET" else Response(status_code=204),
              methods=["GET", "DELETE"]),
        Route("/v1/memory/{ns}/{profile}/recall", lambda r: HTMLResponse("<html>ok</html>"), methods=["POST"]),
    ])
    server = start_in_thread(None, app=garbage)
    client = MemoturnRestClient(server.base_url, 5.0)
    try:
        with pytest.raises(NotTheProtocol, match=r"GET /v1/memory/.*answered HTTP 200 .*not JSON: b'<html>502"):
            client.get("p", "mem_x")
        assert client.forget("p", "mem_x").ok  # a DELETE may answer 204 without a body
        # a provoked answer (a bad-input probe) is judged, whatever it is
        assert client.send_raw("recall", "p", b"not json").ok
    finally:
        client.close()
        server.stop()
