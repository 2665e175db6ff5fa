"""The robustness checks (suite/ump/checks/robustness.py) pass against the clean reference server
and fail against miniature servers broken on purpose (small starlette apps, in the manner of
Bowtie's miniatures): each misbehaviour shows as the requirement it breaks, and nothing else."""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .helpers import served_reference
from memconform.reference_impl.ump import serve
from memconform.suite.outcomes import CheckResult, Outcome
from memconform.suite.registry import all_checks
from memconform.suite.runner import run_check
from memconform.suite.ump.checks import robustness
from memconform.targets.http import HttpUmpClient

CHECKS = {c.id: c for c in all_checks("ump")}
FUZZ, BAD_INPUT, BAD_ARGUMENTS = (CHECKS[i] for i in ("ump/l1/openapi-fuzz", "ump/l1/bad-input",
                                                      "ump/l1/bad-arguments"))
KINDS = ("semantic", "episodic", "procedural", "working", "identity")


@pytest.fixture(autouse=True)
def _small_effort(monkeypatch):
    monkeypatch.setenv(robustness.ENV_EXAMPLES, "8")
    monkeypatch.setenv(robustness.ENV_SECONDS, "40")


# -- running checks ------------------------------------------------------------------------------

def run(check: Any, client: Any, version: str = "1.0", case_id: str | None = None) -> CheckResult:
    case = None
    if check.cases is not None:
        case = next(c for c in check.cases(None) if c.id == case_id)
    return run_check(check, version, client.binding, lambda: client, case)


def run_cases(check: Any, client: Any, version: str = "1.0") -> dict[str, CheckResult]:
    return {c.id: run_check(check, version, client.binding, lambda: client, c) for c in check.cases(None)}


def broken(result: CheckResult) -> set[str]:
    return {f.requirement for f in result.findings}


def explain(results: dict[str, CheckResult] | CheckResult) -> str:
    items = results.items() if isinstance(results, dict) else [("", results)]
    return "\n".join(f"{k}: {r.outcome} {r.reason or ''} " + " | ".join(f"{f.requirement}: {f.message[:300]}"
                                                                         for f in r.findings) for k, r in items)


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    server = serve.start_in_thread(None, app=app)
    try:
        yield server.base_url
    finally:
        server.stop(5)


@pytest.fixture(scope="module")
def reference() -> Iterator[str]:
    with served_reference() as base_url:
        yield base_url


# -- a miniature UMP server over HTTP, with switches that break it ---------------------------------

OPENAPI = {
    "openapi": "3.1.0",
    "info": {"title": "miniature", "version": "0"},
    "paths": {
        "/ump/recall": {"post": {
            "operationId": "recall",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["query"],
                "properties": {"query": {"type": "string", "maxLength": 40},
                               "limit": {"type": "integer", "minimum": 1, "maximum": 50}}}}}},
            "responses": {
                "200": {"description": "results", "content": {"application/json": {"schema": {
                    "type": "object", "required": ["results"],
                    "properties": {"results": {"type": "array"}}}}}},
                "400": {"description": "error", "content": {"application/json": {"schema": {
                    "$ref": "#/components/schemas/error"}}}}}}},
        "/ump/subscribe": {"get": {
            "operationId": "subscribe",
            "responses": {"200": {"description": "events", "content": {"text/event-stream": {}}}}}},
    },
    "components": {"schemas": {"error": {
        "type": "object", "required": ["error"],
        "properties": {"error": {"type": "object", "required": ["code", "message"],
                                 "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}}}},
}


def _unicode(value: Any) -> bool:
    """Whether a JSON value's text is Unicode (no lone surrogate): a record that is not cannot be hashed."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def miniature(*, crash: bool = False, envelope: bool = True, code: str | None = None, keeps_refused: bool = False,
              forgets_on_error: bool = False, not_found_status: int = 404, results_member: str = "results",
              openapi: Any = OPENAPI, hang: bool = False) -> Starlette:
    """A UMP server of a few lines: remember, recall, get, capabilities, /openapi.json.

    crash: reads JSON and numbers without a guard (a 500 with the traceback, debug on);
    envelope=False: errors are {"detail": …}; code: every refusal carries this code;
    keeps_refused: a refused remember is stored all the same; forgets_on_error: every refusal
    empties the store (a crash and restart, seen from outside); not_found_status: the status of
    not_found; results_member: what recall calls its results; openapi: the document served
    (None: 404); hang: recall never answers."""
    store: dict[str, dict[str, Any]] = {}

    def error(status: int, what: str, message: str) -> Response:
        if forgets_on_error:
            store.clear()
        if not envelope:
            return JSONResponse({"detail": message}, status)
        status = not_found_status if what == "not_found" else status
        return JSONResponse({"error": {"code": code or what, "message": message}}, status)

    def read(raw: bytes) -> Any:
        if crash:
            return json.loads(raw)
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return error(400, "invalid_record", "the body is not JSON")

    async def capabilities(request: Request) -> Response:
        return JSONResponse({"server": {"name": "miniature", "version": "0"}, "ump": "1.0", "conformance": "L1",
                             "kinds": list(KINDS), "bindings": ["http"]})

    async def remember(request: Request) -> Response:
        data = read(await request.body())
        if isinstance(data, Response):
            return data
        rec = data.get("record", data) if isinstance(data, dict) else data
        if crash:
            text = rec["body"]["text"]
        ok = (isinstance(rec, dict) and rec.get("kind") in KINDS and isinstance(rec.get("body"), dict)
              and isinstance(rec["body"].get("text"), str) and isinstance(rec.get("id", ""), str)
              and _unicode(rec))
        rid = f"urn:ump:{secrets.token_hex(13)}"
        if not ok or len(json.dumps(rec)) > 1 << 20:
            if keeps_refused and isinstance(rec, dict):
                store[rid] = dict(rec, id=rid)
            return error(400, "invalid_record", "not a record")
        store[rid] = dict(rec, id=rid)
        return JSONResponse({"id": rid, "result": "created"})

    async def recall(request: Request) -> Response:
        if hang:
            await anyio.sleep(30)
        data = read(await request.body())
        if isinstance(data, Response):
            return data
        if not isinstance(data, dict):
            return error(400, "invalid_record", "recall takes an object")
        query = data.get("query")
        limit = int(data.get("limit", 10)) if crash else data.get("limit", 10)
        if not isinstance(query, str) or not isinstance(limit, int):
            return error(400, "invalid_record", "bad query or limit")
        words = query.split()
        found = [r for r in store.values() if any(w in str(r.get("body", {}).get("text", "")) for w in words)]
        return JSONResponse({results_member: [{"record": r, "signals": {"similarity": 1.0}, "score": 1.0}
                                              for r in found[:limit]]})

    async def get(request: Request) -> Response:
        rec = store.get(request.path_params["id"])
        return JSONResponse({"record": rec}) if rec else error(404, "not_found", "no such record")

    async def document(request: Request) -> Response:
        return JSONResponse(openapi) if openapi is not None else error(404, "not_found", "no document")

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return error(exc.status_code, "not_found" if exc.status_code == 404 else "unsupported", exc.detail)

    routes = [Route("/ump/capabilities", capabilities), Route("/ump/remember", remember, methods=["POST"]),
              Route("/ump/recall", recall, methods=["POST"]), Route("/ump/memory/{id:path}", get),
              Route("/openapi.json", document)]
    return Starlette(debug=crash, routes=routes, exception_handlers={HTTPException: http_error})


def client(url: str, timeout: float = 10.0) -> HttpUmpClient:
    return HttpUmpClient(url, "1.0", timeout=timeout)


# =================================================================================================
# the clean reference passes
# =================================================================================================

@pytest.mark.parametrize("version", ["1.0", "0.1"])
def test_reference_passes_bad_input(reference, version):
    results = run_cases(BAD_INPUT, HttpUmpClient(reference, version), version)
    assert all(r.outcome is Outcome.PASSED for r in results.values()), explain(results)


def test_reference_passes_openapi_fuzz(reference):
    for version in ("1.0", "0.1"):
        result = run(FUZZ, HttpUmpClient(reference, version), version)
        assert result.outcome is Outcome.PASSED, explain(result)


def test_reference_passes_bad_arguments(reference):
    from memconform.targets.base import Subject
    from memconform.targets.mcp import McpDriver

    with McpDriver(f"mcp+{reference}/mcp") as driver:
        mcp = driver.client(Subject(driver.label, "ump", "1.0", "mcp"))
        results = run_cases(BAD_ARGUMENTS, mcp)
    assert all(r.outcome is Outcome.PASSED for r in results.values()), explain(results)


# =================================================================================================
# broken miniatures fail, each for its own reason
# =================================================================================================

def test_a_well_behaved_miniature_passes():
    """The baseline for the miniatures below: the same server without a switch passes (an L1
    server without tokens: the forget probe is skipped, the garbage token is ignored)."""
    with serving(miniature()) as url:
        results = run_cases(BAD_INPUT, client(url))
    failing = {k: r for k, r in results.items() if r.outcome not in (Outcome.PASSED, Outcome.SKIPPED)}
    assert not failing, explain(failing)
    assert results["forget-id-object"].outcome is Outcome.SKIPPED


def test_500_with_a_traceback_fails_error_codes():
    with serving(miniature(crash=True)) as url:
        c = client(url)
        malformed = run(BAD_INPUT, c, case_id="malformed-json-remember")
        limit = run(BAD_INPUT, c, case_id="limit-string")
    for result in (malformed, limit):
        assert result.outcome is Outcome.FAILED, explain(result)
        assert broken(result) == {"ump/error-codes"}, explain(result)
        assert "Traceback" in result.findings[0].message or "stack trace" in result.findings[0].message
        assert result.findings[0].sent and result.findings[0].received


def test_errors_without_the_envelope_fail_error_envelope():
    with serving(miniature(envelope=False)) as url:
        c = client(url)
        malformed = run(BAD_INPUT, c, case_id="malformed-json-recall")
        route = run(BAD_INPUT, c, case_id="unknown-route")
    assert malformed.outcome is Outcome.FAILED and broken(malformed) == {"ump/error-envelope"}, explain(malformed)
    # a plain 404 for an unknown route is only a SHOULD matter (catalogue: ump/unsupported-operation)
    assert route.outcome is Outcome.WARNING and broken(route) == {"ump/unsupported-operation"}, explain(route)


def test_a_code_outside_3_7_fails_error_codes():
    with serving(miniature(code="bad_request")) as url:
        result = run(BAD_INPUT, client(url), case_id="string-body")
    assert result.outcome is Outcome.FAILED and broken(result) == {"ump/error-codes"}, explain(result)


def test_storing_a_refused_record_fails_remember_invalid_record():
    with serving(miniature(keeps_refused=True)) as url:
        c = client(url)
        results = {case: run(BAD_INPUT, c, case_id=case) for case in ("kind-number", "id-object", "array-body")}
    for case in ("kind-number", "id-object"):
        assert broken(results[case]) == {"ump/remember-invalid-record"}, explain(results)
        assert "holding its marker" in results[case].findings[0].message
    assert results["array-body"].outcome is Outcome.PASSED, explain(results)  # a list is not kept


def test_losing_the_store_on_bad_input_fails_remember_persists():
    with serving(miniature(forgets_on_error=True)) as url:
        result = run(BAD_INPUT, client(url), case_id="malformed-json-recall")
    assert result.outcome is Outcome.FAILED and broken(result) == {"ump/remember-persists"}, explain(result)


def test_a_code_under_the_wrong_status_warns_http_error_status():
    with serving(miniature(not_found_status=400)) as url:
        result = run(BAD_INPUT, client(url), case_id="unknown-route")
    assert result.outcome is Outcome.WARNING and broken(result) == {"ump/http-error-status"}, explain(result)


def anything(status: int, body: bytes, media_type: str) -> Starlette:
    """A server answering every request on every path and method with the same response."""

    async def answer(request: Request) -> Response:
        await request.body()
        return Response(body, status, media_type=media_type)

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
    return Starlette(routes=[Route("/{path:path}", answer, methods=methods)])


@pytest.mark.parametrize(("status", "body", "media_type", "outcomes"), [
    (200, b'{"ok": true}', "application/json", {Outcome.PASSED, Outcome.FAILED, Outcome.WARNING}),
    (200, b"[]", "application/json", {Outcome.FAILED}),
    # a crash on a well-formed control request is not the protocol (a target error, targets/answers.py);
    # a crash on the malformed probe itself is the failure the check exists for
    (500, b"Traceback (most recent call last):\n  File \"app.py\", line 1", "text/plain",
     {Outcome.FAILED, Outcome.ERROR}),
], ids=["accepts-everything", "arrays-everywhere", "crashes-everywhere"])
def test_bad_input_judges_any_answer_without_crashing(status, body, media_type, outcomes):
    """Every probe against a server that answers everything alike: a verdict, never a crash of
    the check (a finding against a requirement the case does not name would be one)."""
    with serving(anything(status, body, media_type)) as url:
        results = run_cases(BAD_INPUT, client(url))
    assert {r.outcome for r in results.values()} <= outcomes | {Outcome.SKIPPED}, explain(results)
    if status == 500:
        assert all(broken(r) == {"ump/error-codes"} for r in results.values()
                   if r.outcome is Outcome.FAILED), explain(results)
        assert all("without the spec's error envelope" in (r.reason or "") for r in results.values()
                   if r.outcome is Outcome.ERROR), explain(results)


def test_probe_requirements_name_what_the_probes_judge():
    for probe in robustness.HTTP_PROBES:
        if probe.stores or probe.invalid_record:
            assert "ump/remember-invalid-record" in probe.requirements, probe.id
        assert set(probe.requirements) <= set(BAD_INPUT.requirements), probe.id
    for probe in robustness.MCP_PROBES:
        if probe.stores or probe.invalid_record:
            assert "ump/remember-invalid-record" in probe.requirements, probe.id
        assert set(probe.requirements) <= set(BAD_ARGUMENTS.requirements), probe.id


# -- the OpenAPI fuzz --------------------------------------------------------------------------------

def test_fuzz_passes_a_miniature_that_keeps_its_document():
    with serving(miniature()) as url:
        result = run(FUZZ, client(url))
    assert result.outcome is Outcome.PASSED, explain(result)


def test_fuzz_does_not_charge_successes_that_depart_from_the_vendors_document(monkeypatch):
    # A success off the target's own document is logged only (robustness.SUCCESS_SCHEMA_REQUIREMENT
    # is None): the operation checks judge §3 shapes against the spec's schemas instead.
    assert robustness.SUCCESS_SCHEMA_REQUIREMENT is None
    with serving(miniature(results_member="items")) as url:
        result = run(FUZZ, client(url))
    assert result.outcome is Outcome.PASSED, explain(result)
    # With the requirement set, the same server is caught, and the finding says where and what.
    monkeypatch.setattr(robustness, "SUCCESS_SCHEMA_REQUIREMENT", "ump/messages-json-objects")
    with serving(miniature(results_member="items")) as url:
        result = run(FUZZ, client(url))
    assert result.outcome is Outcome.FAILED and broken(result) == {"ump/messages-json-objects"}, explain(result)
    finding = result.findings[0]
    assert finding.where == "POST /ump/recall" and "response schema" in finding.message
    assert "POST /ump/recall" in (finding.sent or "") and "HTTP 200" in (finding.received or "")


def test_fuzz_finds_500s_and_errors_without_the_envelope():
    with serving(miniature(crash=True)) as url:
        crashing = run(FUZZ, client(url))
    with serving(miniature(envelope=False)) as url:
        bare = run(FUZZ, client(url))
    assert "ump/error-codes" in broken(crashing), explain(crashing)
    assert any("5xx" in f.message for f in crashing.findings), explain(crashing)
    assert broken(bare) == {"ump/error-envelope"}, explain(bare)
    # one finding per operation and kind, with a count
    assert len(bare.findings) <= 2 and " of " in bare.findings[0].message


@pytest.mark.parametrize(("document", "reason"), [(None, "serves no OpenAPI document"),
                                                  ({"swagger": "2.0", "paths": {}}, "Swagger 2.0")])
def test_fuzz_is_skipped_without_an_openapi_3_document(document, reason):
    with serving(miniature(openapi=document)) as url:
        result = run(FUZZ, client(url))
    assert result.outcome is Outcome.SKIPPED and reason in (result.reason or ""), explain(result)


def test_fuzz_is_off_with_zero_examples(monkeypatch):
    monkeypatch.setenv(robustness.ENV_EXAMPLES, "0")
    with serving(miniature()) as url:
        result = run(FUZZ, client(url))
    assert result.outcome is Outcome.SKIPPED and "switched off" in (result.reason or "")


def test_a_hanging_target_ends_the_fuzz_as_a_target_error():
    with serving(miniature(hang=True)) as url:
        result = run(FUZZ, client(url, timeout=1.5))
    assert result.outcome is Outcome.ERROR and "stopped answering" in (result.reason or ""), explain(result)


def test_the_fuzz_writes_nothing_into_the_working_directory(tmp_path, monkeypatch):
    """Hypothesis keeps caches under `<cwd>/.hypothesis` by default; the check points it away
    (and back afterwards), and writes no example database."""
    from hypothesis import configuration

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    before = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(tmp_path / ".hypothesis")
    try:
        with serving(miniature()) as url:
            result = run(FUZZ, client(url))
        assert getattr(configuration, "__hypothesis_home_directory") == tmp_path / ".hypothesis"
    finally:
        configuration.set_hypothesis_home_dir(before)
    assert result.outcome is Outcome.PASSED, explain(result)
    assert list(tmp_path.iterdir()) == []


# -- MCP ----------------------------------------------------------------------------------------------

def mcp_miniature(*, code_in_text: bool) -> Starlette:
    """ump.* tools with typed arguments, as an SDK makes them by default: a wrong argument type is
    refused by the SDK's own validation ("Error executing tool …", no §3.7 code) unless
    `code_in_text`, where the tools take anything and refuse with "invalid_record: …"."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

    server = MCPServer("miniature", log_level="WARNING")
    store: dict[str, dict[str, Any]] = {}

    @server.tool(name="ump.capabilities")
    def capabilities() -> dict[str, Any]:
        return {"ump": "1.0", "conformance": "L1", "kinds": list(KINDS), "bindings": ["mcp"]}

    def refusal(code: str, message: str) -> Any:
        import mcp_types as types

        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{code}: {message}")],
                                    is_error=True)

    if code_in_text:
        @server.tool(name="ump.remember")
        def remember(record: Any = None):  # noqa: ANN202 — a result or a refusal
            if not (isinstance(record, dict) and record.get("kind") in KINDS):
                return refusal("invalid_record", "not a record")
            rid = f"urn:ump:{secrets.token_hex(13)}"
            store[rid] = dict(record, id=rid)
            return {"id": rid, "result": "created"}
    else:
        @server.tool(name="ump.remember")
        def remember(record: dict[str, Any]) -> dict[str, Any]:
            rid = f"urn:ump:{secrets.token_hex(13)}"
            store[rid] = dict(record, id=rid)
            return {"id": rid, "result": "created"}

    @server.tool(name="ump.get")
    def get(id: Any = None):  # noqa: ANN202
        if not isinstance(id, str) or id not in store:
            return refusal("not_found" if isinstance(id, str) else "invalid_record", "no such record")
        return {"record": store[id]}

    @server.tool(name="ump.recall")
    def recall(query: str = "", limit: int = 10) -> dict[str, Any]:
        found = [r for r in store.values() if query and query.split()[0] in str(r.get("body"))]
        return {"results": [{"record": r, "signals": {}, "score": 1.0} for r in found[:limit]]}

    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return server.streamable_http_app(streamable_http_path="/mcp", transport_security=security)


def test_bad_arguments_without_a_readable_code_fail_mcp_errors():
    from memconform.targets.base import Subject
    from memconform.targets.mcp import McpDriver

    for code_in_text in (False, True):
        with serving(mcp_miniature(code_in_text=code_in_text)) as url, McpDriver(f"mcp+{url}/mcp") as driver:
            mcp = driver.client(Subject(driver.label, "ump", "1.0", "mcp"))
            results = {case: run(BAD_ARGUMENTS, mcp, case_id=case)
                       for case in ("remember-record-number", "get-id-object", "remember-kind-number")}
        if code_in_text:  # "invalid_record: …" as the text of an isError result: readable
            assert all(not broken(r) for r in results.values()), explain(results)
        else:  # the SDK's "Error executing tool …: 1 validation error …": no §3.7 code in it
            assert broken(results["remember-record-number"]) == {"ump/mcp-errors"}, explain(results)
            # a record of kind 5 is a dict to the SDK: stored, and so accepted
            assert broken(results["remember-kind-number"]) == {"ump/remember-invalid-record"}, explain(results)


def test_a_nonstandard_code_over_mcp_fails_error_codes():
    from memconform.targets.base import Subject
    from memconform.targets.mcp import McpDriver

    service = serve.make_service(fault="recall-nonstandard-code")
    server = serve.start_in_thread(service)
    try:
        with McpDriver(f"mcp+{server.base_url}/mcp") as driver:
            mcp = driver.client(Subject(driver.label, "ump", "1.0", "mcp"))
            result = run(BAD_ARGUMENTS, mcp, case_id="recall-query-number")
    finally:
        server.stop()
        service.close()
    assert result.outcome is Outcome.FAILED and broken(result) == {"ump/error-codes"}, explain(result)
