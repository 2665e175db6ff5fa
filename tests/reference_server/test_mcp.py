"""The MCP binding (reference_impl/ump/mcp_app.py) and the MCP driver (targets/mcp.py), together.

Over stdio (a spawned `memconform serve --stdio`, or a small `python -c` server around a fake
service for the failure cases) and over streamable HTTP (uvicorn in a thread), with both MCP
handshakes: every tool, both UMP versions per session, structured content, error codes, tokens
in `_meta`, subscribe, a crashing and a hanging server, and no leaked processes or threads.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.suite.ump.captoken import mint
from memconform.suite.ump.client import Auth
from memconform.suite.ump.testkeys import test_did, test_signing_key
from memconform.targets.base import Subject
from memconform.targets.mcp import McpDriver, reply_from_result

PY = sys.executable
TOOLS = {"ump.capabilities", "ump.recall", "ump.remember", "ump.get", "ump.revise", "ump.forget",
         "ump.feedback", "ump.subscribe", "ump.rehydrate"}
OWNER_A = test_did("owner-a")
OWNER_B = test_did("owner-b")

# A small service honouring the engine API of docs/live-ump.md, for what the real engine cannot
# be made to do on purpose: hang, crash, raise. Used in-process and as a `python -c` server.
FAKE_SERVICE = r'''
import os, queue, sys, time
from memconform.reference_impl.ump.engine import UmpError
from memconform.suite.ump import captoken

class FakeSubscription:
    def __init__(self, service):
        self.service, self.queue = service, queue.Queue()
    def next(self, timeout):
        try:
            return self.queue.get(timeout=timeout)
        except queue.Empty:
            return None
    def close(self):
        self.service.subscriptions.discard(self)

class FakeService:
    versions = ("1.0", "0.1")

    def __init__(self):
        self.records, self.subscriptions, self.count = {}, set(), 0

    def _grant(self, operation, token):
        if token is None:
            raise UmpError("unauthorized", "a capability token is required")
        try:
            grant = captoken.verify(token)
        except captoken.TokenError as exc:
            raise UmpError("unauthorized", exc.message)
        if not grant.allows_verb(captoken.VERB_FOR_OPERATION[operation]):
            raise UmpError("forbidden_scope", "verb not granted")
        return grant

    def handle(self, operation, request, *, version, token):
        if operation == "capabilities":
            return {"server": {"name": "fake", "version": "0"}, "ump": version, "versions": list(self.versions),
                    "conformance": "L3", "kinds": ["semantic", "episodic", "procedural", "working", "identity"],
                    "bindings": ["mcp"], "retrieval_signals": [], "max_recall": 50, "writable": True}
        grant = self._grant(operation, token)
        if not isinstance(request, dict):
            raise UmpError("invalid_record", "the request is not an object")
        if operation == "remember":
            record = request.get("record", request)
            if not isinstance(record, dict) or not isinstance(record.get("body"), dict):
                raise UmpError("invalid_record", "a record needs a body")
            text = record["body"].get("text")
            if text == "HANG":
                time.sleep(60)
            if text == "CRASH":
                sys.stderr.write("fake service: crashing on purpose\n"); sys.stderr.flush()
                os._exit(7)
            if text == "RAISE":
                raise RuntimeError("an unexpected bug")
            if (record.get("scope") or {}).get("owner") != grant.issuer:
                raise UmpError("forbidden_scope", "the record's owner is not the token's issuer")
            self.count += 1
            rid = "urn:ump:fake%d" % self.count
            stored = dict(record, id=rid, ump=version)
            self.records[rid] = stored
            for sub in list(self.subscriptions):
                sub.queue.put({"type": "created", "id": rid, "record": stored})
            return {"id": rid, "result": "created"}
        if operation == "get":
            rid = request.get("id")
            if not isinstance(rid, str):
                raise UmpError("invalid_record", "id must be a string")
            record = self.records.get(rid)
            if record is None or not grant.covers(record):
                raise UmpError("not_found", "no such record")
            return {"record": record}
        raise UmpError("unsupported", "the fake does not do " + operation)

    def subscribe(self, *, version, token, request=None):
        self._grant("subscribe", token)
        sub = FakeSubscription(self)
        self.subscriptions.add(sub)
        return sub

    def close(self):
        pass
'''

_fake_ns: dict[str, Any] = {}
exec(compile(FAKE_SERVICE, "<fake-service>", "exec"), _fake_ns)
FakeService = _fake_ns["FakeService"]


def fake_stdio_target() -> str:
    code = FAKE_SERVICE + "\nfrom memconform.reference_impl.ump.mcp_app import run_stdio\nrun_stdio(FakeService())\n"
    return "mcp+stdio:" + shlex.join([PY, "-c", code])


def reference_stdio_target() -> str:
    """`python -m memconform.reference_impl.ump.serve --stdio` when serve.py runs as a module,
    else the same through its `serve(stdio=True)`."""
    from memconform.reference_impl.ump import serve

    if "__main__" in Path(serve.__file__).read_text(encoding="utf-8"):
        return "mcp+stdio:" + shlex.join([PY, "-m", "memconform.reference_impl.ump.serve", "--stdio"])
    return "mcp+stdio:" + shlex.join([PY, "-c", "from memconform.reference_impl.ump.serve import serve; "
                                                "serve(stdio=True)"])


def make_reference_service() -> Any:
    from memconform.reference_impl.ump.service import UmpService

    return UmpService(require_capability=True)


def record(text: str, owner: str = OWNER_A, **extra: Any) -> dict[str, Any]:
    rec = {"kind": "semantic", "body": {"text": text}, "scope": {"owner": owner, "visibility": "private"},
           "provenance": {"actor": owner, "actor_kind": "user", "method": "user_correction"}}
    rec.update(extra)
    return rec


def children() -> set[int]:
    """Live (non-zombie) child processes of this process."""
    found = set()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(entry))
    return found


def driver_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "memconform-mcp" and t.is_alive()]


def wait_gone(pids: set[int], seconds: float = 10.0) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = pids & children()
        if not left:
            return set()
        time.sleep(0.05)
    return pids & children()


def subject(driver: McpDriver, version: str) -> Subject:
    return Subject(driver.label, "ump", version, "mcp")


# -- servers ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def http_reference():
    """The reference service's MCP app alone, served by uvicorn on 127.0.0.1:0."""
    from memconform.reference_impl.ump.mcp_app import streamable_http_app
    from memconform.reference_impl.ump.serve import start_in_thread

    service = make_reference_service()
    server = start_in_thread(service, app=streamable_http_app(service))
    yield f"mcp+{server.base_url}/mcp"
    server.stop()
    service.close()


@pytest.fixture(scope="module")
def http_fake():
    from memconform.reference_impl.ump.mcp_app import streamable_http_app
    from memconform.reference_impl.ump.serve import start_in_thread

    service = FakeService()
    server = start_in_thread(service, app=streamable_http_app(service))
    yield f"mcp+{server.base_url}/mcp"
    server.stop()


@pytest.fixture(scope="module", params=["stdio", "http"])
def reference_target(request):
    if request.param == "stdio":
        return reference_stdio_target()
    return request.getfixturevalue("http_reference")


@pytest.fixture(scope="module", params=["2025-11-25", "latest"])
def driver(request, reference_target):
    d = McpDriver(reference_target, timeout=20, protocol=request.param)
    yield d
    d.close()


# -- the server: tools, schemas, results -------------------------------------------------------

def test_tools_listed_with_input_and_output_schemas(driver):
    tools = {t["name"]: t for t in driver.tool_listing()}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool["inputSchema"]["type"] == "object", name
        assert "capability" in tool["inputSchema"]["properties"], name
        assert tool["outputSchema"]["type"] == "object", name
    assert set(tools["ump.get"]["inputSchema"]["properties"]) == {"id", "capability"}
    assert "record" in tools["ump.remember"]["inputSchema"]["properties"]
    client = driver.client(subject(driver, "1.0"))
    assert client.offered() == {n[len("ump."):] for n in TOOLS}
    assert client.tools() == driver.tool_listing()
    with pytest.raises(NotApplicable):
        client.call_raw("GET", "/ump/capabilities")
    assert client.resources() == []  # no ump:// resources (§4.1 MAY)
    assert client.read_resource("ump://nowhere/urn:ump:x") is None


def test_handshake_protocol(driver):
    client = driver.client(subject(driver, "1.0"))
    expected = "2025-11-25" if driver.protocol == "2025-11-25" else "2026-07-28"
    assert client.session.protocol_version == expected
    assert driver.describe()["protocol"] == expected


def test_subjects_are_the_advertised_versions(driver):
    assert [s.version for s in driver.subjects()] == ["0.1", "1.0"]
    assert all(s.binding == "mcp" and s.spec == "ump" for s in driver.subjects())
    assert driver.advertised_level(subject(driver, "1.0")) == "L3"
    assert driver.advertised_level(subject(driver, "0.1")) == "L3"
    # the report reads the claim per spec (reports/model.py): keyed by version it read null
    assert driver.describe()["advertised"] == {"ump": "L3"}


@pytest.mark.parametrize("version", ["0.1", "1.0"])
def test_every_tool_works_with_structured_content(driver, version):
    c = driver.client(subject(driver, version))
    caps = c.capabilities()
    assert caps.ok and caps.wire == (), caps
    assert caps.body["ump"] == version
    assert set(caps.body["versions"]) == {"1.0", "0.1"}

    made = c.remember(record(f"the build uses pnpm ({version} {driver.protocol})"))
    assert made.ok and made.wire == (), made.describe()
    assert made.body["result"] == "created"
    rid = made.body["id"]

    got = c.get(rid)
    assert got.ok and got.wire == (), got.describe()
    assert got.body["record"]["id"] == rid
    assert got.body["record"]["ump"] == version  # the session's version, not the default

    found = c.recall({"query": "pnpm", "scope": {"owner": OWNER_A}})
    assert found.ok and found.wire == (), found.describe()
    assert rid in [r["record"]["id"] for r in found.body["results"]]

    revised = c.revise({"id": rid, "patch": {"body": {"text": "the build uses bun"}}})
    assert revised.ok and revised.wire == (), revised.describe()
    assert revised.body["supersedes"] == [rid]
    new = revised.body["id"]

    fed = c.feedback({"id": new, "outcome": "followed"})
    assert fed.ok and fed.body == {"ok": True}, fed.describe()

    framed = c.rehydrate({"ids": [new]})
    assert framed.ok and framed.wire == (), framed.describe()
    assert new in framed.body["included"] and "ump:memory" in framed.body["text"]

    gone = c.forget({"id": new, "reason": "user_revoked"})
    assert gone.ok and gone.body == {"result": "tombstoned"}, gone.describe()


def test_raw_results_carry_structured_content_and_json_text(driver):
    """The wire shapes themselves: success = structuredContent + the same JSON as text; error =
    isError + structuredContent.error.code + text "<code>: …"."""
    c = driver.client(subject(driver, "1.0"))
    meta_ok = c._prepare({}, Auth.as_owner("owner-a"))[1]
    result = c.session.call_tool("ump.capabilities", {}, {k: v for k, v in meta_ok.items() if k != "ump/capability"})
    assert not result.is_error
    assert isinstance(result.structured_content, dict)
    assert json.loads(result.content[0].text) == result.structured_content

    result = c.session.call_tool("ump.get", {"id": "urn:ump:aaaaaaaaaaaaaaaaaaaaaaaaaa"}, meta_ok)
    assert result.is_error
    assert result.structured_content["error"]["code"] == "not_found"
    assert result.content[0].text.startswith("not_found: ")


def test_error_results_carry_the_code(driver):
    c = driver.client(subject(driver, "1.0"))
    missing = c.get("urn:ump:aaaaaaaaaaaaaaaaaaaaaaaaaa")
    assert missing.error_code == "not_found" and missing.wire == (), missing
    assert missing.body == {"error": {"code": "not_found", "message": missing.error_message}}
    assert not missing.ok


@pytest.mark.parametrize("call", [
    pytest.param(lambda c: c.get(5), id="get-id-not-a-string"),
    pytest.param(lambda c: c._call("get", {}, Auth.as_owner()), id="get-without-id"),
    pytest.param(lambda c: c.recall({"query": 5}), id="recall-query-not-a-string"),
    pytest.param(lambda c: c.remember("not a record"), id="remember-record-not-an-object"),
    pytest.param(lambda c: c.remember("not an object", wrap=False), id="arguments-a-string"),
    pytest.param(lambda c: c.remember([record("x")], wrap=False), id="arguments-an-array"),
    pytest.param(lambda c: c.remember({"kind": "semantic"}), id="remember-record-without-body"),
    pytest.param(lambda c: c.revise({"id": []}), id="revise-without-patch"),
    pytest.param(lambda c: c.feedback({"id": "urn:ump:x", "outcome": 3}), id="feedback-outcome-not-a-string"),
])
def test_bad_input_is_invalid_record(driver, call):
    c = driver.client(subject(driver, "1.0"))
    reply = call(c)
    assert reply.error_code == "invalid_record", reply
    assert c.capabilities().ok  # the server is still there


def test_a_capability_argument_that_is_not_a_string_is_unauthorized(driver):
    c = driver.client(subject(driver, "1.0"))
    reply = c._call("get", {"id": "urn:ump:aaaaaaaaaaaaaaaaaaaaaaaaaa", "capability": 5}, None)
    assert reply.error_code == "unauthorized", reply


def test_subscribe_with_max_events_of_the_wrong_type(driver):
    c = driver.client(subject(driver, "1.0"))
    out = c.subscribe(lambda: None, request={"max_events": "three"})
    assert out.error_code == "invalid_record", out


# -- versions and tokens -------------------------------------------------------------------------

def test_version_pick_holds_per_session(driver):
    old, new = driver.client(subject(driver, "0.1")), driver.client(subject(driver, "1.0"))
    assert old.session is not new.session
    # a capabilities call without client.ump keeps each session where it was
    assert old.capabilities().body["ump"] == "0.1"
    assert new.capabilities().body["ump"] == "1.0"
    # asking the 0.1 session for 1.0 answers 1.0 and the client moves its session back
    assert old.capabilities({"client": {"ump": "1.0"}}).body["ump"] == "1.0"
    assert old.capabilities().body["ump"] == "0.1"


def test_token_in_meta_honoured_and_bad_tokens_refused(driver):
    c = driver.client(subject(driver, "1.0"))
    rid = c.remember(record("a private note of owner-a")).body["id"]
    assert c.get(rid).ok
    assert "_meta ump/capability" in c.get(rid).auth

    anonymous = c.get(rid, auth=Auth.anonymous())
    assert anonymous.error_code == "unauthorized", anonymous

    garbage = c.get(rid, auth=Auth.bearer("umpcap.not-a-token"))
    assert garbage.error_code == "unauthorized", garbage

    expired = mint(test_signing_key("owner-a"), scope={"owner": OWNER_A}, now=time.time() - 7200, ttl=60)
    assert c.get(rid, auth=Auth.bearer(expired)).error_code == "unauthorized"

    read_only = mint(test_signing_key("owner-a"), verbs=("read",), scope={"owner": OWNER_A})
    assert c.remember(record("no write verb"), auth=Auth.bearer(read_only)).error_code == "forbidden_scope"

    # another owner's token does not open owner-a's private record
    other = c.get(rid, auth=Auth.as_owner("owner-b"))
    assert other.error_code in ("not_found", "forbidden_scope"), other


def test_token_as_tool_argument_is_honoured(http_reference):
    d = McpDriver(http_reference, timeout=20, token_via="argument")
    try:
        c = d.client(subject(d, "1.0"))
        made = c.remember(record("token in the capability argument"))
        assert made.ok, made
        assert "argument capability" in made.auth
        assert c.get(made.body["id"]).ok
        assert c.get(made.body["id"], auth=Auth.bearer("umpcap.x.y")).error_code == "unauthorized"
    finally:
        d.close()


# -- subscribe ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["0.1", "1.0"])
def test_subscribe_delivers_events(driver, version):
    c = driver.client(subject(driver, version))
    ids: list[str] = []

    def trigger() -> None:
        for i in range(2):
            ids.append(c.remember(record(f"subscribed change {i} {version} {driver.protocol}")).body["id"])

    out = c.subscribe(trigger, expect=2, request={"scope": {"owner": OWNER_A}})
    assert out.error_code is None and out.problems == (), out
    assert [e["id"] for e in out.events] == ids
    assert all(e["type"] == "created" for e in out.events)
    assert json.loads(out.raw.splitlines()[0]) == {"type": "subscribed"}


def test_subscribe_without_a_token_is_refused(driver):
    c = driver.client(subject(driver, "1.0"))
    out = c.subscribe(lambda: None, auth=Auth.anonymous())
    assert out.error_code == "unauthorized", out
    assert out.events == ()


# -- the HTTP app inside the HTTP binding ---------------------------------------------------------

def test_mcp_mounted_in_the_http_binding():
    from memconform.reference_impl.ump.http_app import build_app
    from memconform.reference_impl.ump.serve import start_in_thread

    service = make_reference_service()
    server = start_in_thread(service, app=build_app(service))
    d = McpDriver(f"mcp+{server.base_url}/mcp", timeout=20)
    try:
        c = d.client(subject(d, "0.1"))
        assert c.capabilities().body["ump"] == "0.1"
        made = c.remember(record("over MCP inside the HTTP app"))
        assert made.ok, made
        out = c.subscribe(lambda: c.remember(record("an event over MCP inside the HTTP app")), expect=1)
        assert len(out.events) == 1, out
    finally:
        d.close()
        server.stop()
        service.close()


def test_a_server_whose_capabilities_tool_wants_a_token_is_discovered_and_read_with_owner_as_token():
    """§4.2's tokens exempt no operation: the driver asks ump.capabilities again with owner-a's token
    (and pins each session's version so), instead of finding no versions and no level."""
    from memconform.reference_impl.ump.service import UmpService
    from memconform.reference_impl.ump.mcp_app import build_mcp_server

    service = UmpService(variants=("capabilities-need-token",))
    d = McpDriver("mcp+memory:capabilities-need-token", timeout=20, server=build_mcp_server(service))
    try:
        assert sorted(s.version for s in d.subjects()) == ["0.1", "1.0"]
        assert d.capabilities_need_token
        c = d.client(subject(d, "1.0"))
        assert d.advertised_level(subject(d, "1.0")) == "L3"
        caps = c.capabilities()
        assert caps.ok and caps.body["ump"] == "1.0" and "owner-a" in caps.auth, caps
        assert c.capabilities(auth=Auth.anonymous()).error_code == "unauthorized"  # a check may still ask so
        assert c.as_version("0.1").capabilities().body["ump"] == "0.1"
    finally:
        d.close()
        service.close()


# -- binding behaviour the real engine cannot be made to show -------------------------------------

def test_unexpected_exception_is_internal_and_the_server_survives(http_fake):
    d = McpDriver(http_fake, timeout=10)
    try:
        c = d.client(subject(d, "1.0"))
        reply = c.remember(record("RAISE"))
        assert reply.error_code == "internal", reply
        assert "an unexpected bug" not in (reply.error_message or "")
        assert c.remember(record("fine")).ok
    finally:
        d.close()


@pytest.fixture
def fake_with_fault():
    """`fake_with_fault(name) -> target`: the fake service with `fault` set, over streamable HTTP."""
    from memconform.reference_impl.ump.mcp_app import streamable_http_app
    from memconform.reference_impl.ump.serve import start_in_thread

    servers = []

    def start(fault: str) -> str:
        service = FakeService()
        service.fault = fault
        server = start_in_thread(service, app=streamable_http_app(service))
        servers.append(server)
        return f"mcp+{server.base_url}/mcp"

    yield start
    for server in servers:
        server.stop()


def test_fault_errors_not_iserror(fake_with_fault):
    d = McpDriver(fake_with_fault("mcp-errors-not-iserror"), timeout=10)
    try:
        c = d.client(subject(d, "1.0"))
        missing = c.get("urn:ump:nothing")
        assert missing.error_code == "not_found" and not missing.ok  # still readable for other checks
        assert "an error envelope without isError" in missing.wire
        assert c.remember(record("fine")).ok
    finally:
        d.close()


def test_fault_schemas_without_members(fake_with_fault):
    d = McpDriver(fake_with_fault("mcp-schemas-without-members"), timeout=10)
    try:
        tools = {t["name"]: t for t in d.tool_listing()}
        assert set(tools["ump.get"]["inputSchema"]["properties"]) == {"capability"}
        c = d.client(subject(d, "1.0"))
        assert c.remember(record("calls still work")).ok
    finally:
        d.close()


def test_text_only_errors_are_read_with_a_remark():
    import mcp_types as types

    public_style = types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps({"error": {"message": "not_found: no such id"}}))],
        is_error=True)
    reply = reply_from_result("get", {"id": "x"}, public_style, None)
    assert reply.error_code == "not_found" and reply.error_message == "no such id"
    assert "error code only in text, not in structured content" in reply.wire

    plain = types.CallToolResult(content=[types.TextContent(type="text", text="unauthorized: no token")],
                                 is_error=True)
    assert reply_from_result("get", {}, plain, None).error_code == "unauthorized"

    text_only = types.CallToolResult(content=[types.TextContent(type="text", text='{"id": "a", "result": "created"}')])
    ok = reply_from_result("remember", {}, text_only, None)
    assert ok.ok and ok.body == {"id": "a", "result": "created"}
    assert any("no structuredContent" in w for w in ok.wire)

    codeless = types.CallToolResult(content=[types.TextContent(type="text", text="Something broke")], is_error=True)
    broken = reply_from_result("get", {}, codeless, None)
    assert not broken.ok and broken.error_code is None and "isError without a code" in broken.wire


def test_a_crashing_command_is_a_target_error_with_its_stderr():
    code = "import sys; sys.stderr.write('the server cannot start: no database\\n'); sys.exit(3)"
    before = children()
    d = McpDriver("mcp+stdio:" + shlex.join([PY, "-c", code]), timeout=5)
    try:
        with pytest.raises(TargetError, match="no database"):
            d.subjects()
    finally:
        d.close()
    assert not wait_gone(children() - before)


def test_a_missing_command_is_a_target_error():
    d = McpDriver("mcp+stdio:/nonexistent/memconform-no-such-server --stdio", timeout=5)
    try:
        with pytest.raises(TargetError):
            d.subjects()
    finally:
        d.close()


def test_a_hanging_command_is_a_target_error_after_the_timeout():
    before = children()
    d = McpDriver("mcp+stdio:" + shlex.join([PY, "-c", "import time; time.sleep(120)"]), timeout=1.5,
                  startup_timeout=1.5)
    try:
        with pytest.raises(TargetError, match="no answer to the MCP handshake"):
            d.subjects()
    finally:
        d.close()
    assert not wait_gone(children() - before)


def test_a_server_hanging_mid_call_and_crashing_mid_session():
    before = children()
    d = McpDriver(fake_stdio_target(), timeout=2, startup_timeout=30)
    thread = None
    try:
        c = d.client(subject(d, "1.0"))
        thread = d._loop.thread
        assert c.remember(record("before")).ok
        with pytest.raises(TargetError, match="no answer to tools/call ump.remember"):
            c.remember(record("HANG"))
        with pytest.raises(TargetError, match="crashing on purpose"):
            c.remember(record("CRASH"))
        c.get("urn:ump:fake1")  # restarted once: answered by a fresh process, no TargetError
        assert d.describe()["restarts"] == 1 and d.describe()["deaths"][0]["exit_code"] == 7
    finally:
        d.close()
    assert not wait_gone(children() - before)
    assert thread is not None and not thread.is_alive()


def test_an_unreachable_http_target_is_a_target_error():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    d = McpDriver(f"mcp+http://127.0.0.1:{port}/mcp", timeout=3)
    try:
        with pytest.raises(TargetError):
            d.subjects()
    finally:
        d.close()


def test_close_leaves_no_processes_and_no_threads():
    before = children()
    d = McpDriver(reference_stdio_target(), timeout=20)
    for s in d.subjects():
        d.client(s).capabilities()
    spawned = children() - before
    assert len(spawned) == 2  # one process (one MCP session) per UMP version
    thread = d._loop.thread
    assert thread in driver_threads()
    d.close()
    d.close()  # idempotent
    assert not wait_gone(spawned)
    assert not thread.is_alive()
    with pytest.raises(TargetError):
        d.subjects()


def test_forced_versions_and_bad_target_strings():
    d = McpDriver(fake_stdio_target(), forced_versions=("0.1",), timeout=10)
    try:
        assert [s.version for s in d.subjects()] == ["0.1"]
        assert d.client(subject(d, "0.1")).capabilities().body["ump"] == "0.1"
    finally:
        d.close()
    with pytest.raises(TargetError):
        McpDriver("mcp+stdio:   ")
    with pytest.raises(ValueError):
        McpDriver("mcp+http://127.0.0.1:1/mcp", protocol="1999-01-01")


def test_subscription_notifications_are_read_by_content_not_by_logger_name():
    """§3.8 says only "MCP notifications": an event object naming a record counts under any logger;
    the server's own logging (a string, an object naming no record) is not an event."""
    import asyncio
    from types import SimpleNamespace

    from memconform.targets.mcp import _Session, _Subscription

    sub = _Subscription()
    session = SimpleNamespace(listeners=[sub])
    for logger, data in [("ump/subscribe", {"type": "subscribed"}),
                         ("acme.changes", {"type": "created", "id": "urn:ump:aaaa"}),
                         ("acme.debug", "handling ump.remember urn:ump:aaaa"),
                         ("acme.debug", {"note": "handling a call"}),
                         (None, {"type": "created", "id": "urn:ump:bbbb"})]:
        asyncio.run(_Session._on_log(session, SimpleNamespace(logger=logger, data=data)))
    assert sub.subscribed and [e["id"] for e in sub.events] == ["urn:ump:aaaa", "urn:ump:bbbb"]


def test_a_protocol_error_carrying_the_envelope_is_read_as_the_failure_and_a_codeless_one_is_not():
    """MCP 2025-06-18 makes invalid arguments a protocol error: the §3 code it carries is read."""
    from mcp.shared.exceptions import MCPError

    envelope = {"error": {"code": "invalid_record", "message": "id must be a string"}}
    for error in (MCPError(-32602, "Invalid params", envelope), MCPError(-32602, "invalid_record: id must be a string")):
        reply = reply_from_result("get", {"id": 5}, error, None)
        assert reply.error_code == "invalid_record" and reply.body["error"]["code"] == "invalid_record"
        assert "protocol error (-32602) carrying the §3 envelope" in reply.wire[0]
    codeless = reply_from_result("get", {"id": 5}, MCPError(-32602, "Invalid params"), None)
    assert codeless.error_code is None and "JSON-RPC error (-32602)" in codeless.wire[0]


def test_a_note_for_the_user_beside_the_json_text_does_not_hide_the_result():
    """MCP content "can contain multiple content items": without structuredContent, the JSON block
    is read even when a note block follows it (or comes first)."""
    from mcp import types

    answer = {"id": "urn:ump:aaaa", "result": "created"}
    json_block = types.TextContent(type="text", text=json.dumps(answer))
    note = types.TextContent(type="text", text="note: served by acme")
    for blocks in ([json_block, note], [note, json_block]):
        reply = reply_from_result("remember", {"record": {}}, types.CallToolResult(content=blocks), None)
        assert reply.ok and reply.body == answer, reply.wire


def after_call_driver() -> McpDriver:
    """The reference over stdio with variant mcp-subscribe-after-call, on 2025-11-25, where a server
    may notify outside a request."""
    target = "mcp+stdio:" + shlex.join([PY, "-m", "memconform.reference_impl.ump.serve", "--stdio",
                                        "--variant", "mcp-subscribe-after-call"])
    return McpDriver(target, timeout=20, protocol="2025-11-25")


def test_a_subscription_answered_at_once_is_read_from_the_notifications_that_follow_it():
    # A blind red team's reading (round 14; variant mcp-subscribe-after-call): §3.8 names MCP
    # notifications as the carrier, and its server answered {subscription, delivery, logger} at once,
    # then notified each change. The driver returned at the answer, never ran the trigger, and
    # ump/subscribe-stream went unjudged. Over stdio (2025-11-25, where a server may notify outside a
    # request) the events are now read from the notifications after the call.
    d = after_call_driver()
    try:
        c = d.client(subject(d, "1.0"))
        ids: list[str] = []

        def trigger() -> None:
            for i in range(2):
                ids.append(c.remember(record(f"notified after the call {i}")).body["id"])

        out = c.subscribe(trigger, expect=2, request={"scope": {"owner": OWNER_A}})
        assert c.session.protocol_version == "2025-11-25"
        assert out.error_code is None and out.problems == (), out
        assert [e["id"] for e in out.events] == ids
        assert "subscribed" not in (out.raw or "")  # no acknowledgement: the handle was the answer
    finally:
        d.close()


def test_a_resource_notice_naming_a_record_is_an_event_about_it():
    """§3.8 "MCP notifications" and §4.1's record resources: a blind red team's UMP 0.1 server (round
    29) told each change as `notifications/resources/updated` for `ump://{project}/{id}`, which the
    driver did not read, and its honest server lost L3."""
    import asyncio
    from types import SimpleNamespace

    from mcp import types

    from memconform.suite.ump.client import RESOURCE_NOTICE
    from memconform.targets.mcp import _Session, _Subscription, resource_notice

    assert resource_notice("ump://github.com%2Fexample%2Fp/urn%3Aump%3Aabcd") == {
        "type": RESOURCE_NOTICE, "id": "urn:ump:abcd", "uri": "ump://github.com%2Fexample%2Fp/urn%3Aump%3Aabcd"}
    assert resource_notice("ump://_/urn:ump:ABCD==")["id"] == "urn:ump:ABCD=="
    assert resource_notice("file:///tmp/notes.txt") is None and resource_notice(None) is None
    sub = _Subscription()
    session = SimpleNamespace(listeners=[sub], garbage=[], _pending=[])
    for uri in ("ump://_/urn:ump:aaaa", "ump://_/readme", "ump://_/urn:ump:bbbb"):
        note = types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri))
        asyncio.run(_Session._on_message(session, note))
    assert [e["id"] for e in sub.events] == ["urn:ump:aaaa", "urn:ump:bbbb"]


def test_a_subscription_told_as_resource_notices_is_read_and_its_forget_read_back():
    target = "mcp+stdio:" + shlex.join([PY, "-m", "memconform.reference_impl.ump.serve", "--stdio",
                                        "--variant", "mcp-subscribe-resource-updated"])
    d = McpDriver(target, timeout=20, protocol="2025-11-25")
    try:
        c = d.client(subject(d, "1.0"))
        made: list[str] = []

        def trigger() -> None:
            made.append(c.remember(record("told by a resource notice")).body["id"])
            c.forget({"id": made[0], "reason": "memconform-test", "actor": OWNER_A})

        out = c.subscribe(trigger, expect=2, request={"scope": {"owner": OWNER_A}})
        assert out.error_code is None, out
        assert [(e["type"], e["id"]) for e in out.events] == [("notifications/resources/updated", made[0])] * 2
        assert all(e["uri"].startswith("ump://") for e in out.events)
    finally:
        d.close()


def test_events_of_an_earlier_subscription_still_notifying_are_left_out_or_said_to_be_unattributable():
    from memconform.suite.ump.client import DEFAULT_AUTH, OpenSubscription, SubscribeOutcome
    from memconform.targets.mcp import McpUmpClient

    mine = {"type": "created", "id": "urn:ump:a", "subscription": "sub_2"}
    theirs = {"type": "created", "id": "urn:ump:b", "subscription": "sub_1"}
    unnamed = {"type": "created", "id": "urn:ump:c"}
    first, anonymous = OpenSubscription("sub_1", {}, DEFAULT_AUTH), OpenSubscription(None, {"scope": {}}, DEFAULT_AUTH)
    out = SubscribeOutcome(sent={}, events=(mine, theirs))
    assert McpUmpClient._attributed(out, [], "sub_2") is out  # the first subscription: all its own
    named = McpUmpClient._attributed(out, [first], "sub_2")
    assert named.events == (mine,) and named.shared is None and named.open_before == ()
    # an in-call subscription (no handle of its own) after a handle: what names the handle is not its
    assert McpUmpClient._attributed(out, [first], None).events == (mine,)
    shared = McpUmpClient._attributed(SubscribeOutcome(sent={}, events=(unnamed, mine)), [anonymous], "sub_2")
    assert shared.events == (unnamed, mine)
    assert shared.shared and "1 earlier subscription" in shared.shared and "1 event(s) here name no subscription" in shared.shared
    # the check is told which subscriptions those were, to ask which could rightly be told of a record
    assert shared.open_before == (anonymous,)


def test_a_second_subscription_answered_at_once_gets_only_its_own_named_events():
    d = after_call_driver()
    try:
        c = d.client(subject(d, "1.0"))
        first = c.subscribe(lambda: c.remember(record("first subscription's change")), expect=1,
                            request={"scope": {"owner": OWNER_A}, "max_events": 5, "timeout_ms": 8000})
        assert len(first.events) == 1 and first.shared is None, first
        made: list[str] = []
        second = c.subscribe(lambda: made.append(c.remember(record("second subscription's change")).body["id"]),
                             expect=1, request={"scope": {"owner": OWNER_A}})
        # the first subscription (max_events 5) still notifies this change too, naming itself
        assert second.shared is None and [e["id"] for e in second.events] == made, second
        assert {e["subscription"] for e in second.events} != {first.events[0]["subscription"]}
    finally:
        d.close()


def test_a_servers_own_error_minus_32000_is_an_answer_not_a_closed_connection():
    """JSON-RPC leaves -32000..-32099 to servers; the SDK also raises -32000 "Connection closed" when
    the connection ends. A blind red team's server (round 29) answered its §3 errors as -32000 with
    the envelope in `data`, and every call was read as the server hanging up: 146 errors."""
    from mcp.shared.exceptions import MCPError

    from memconform.targets.mcp import _is_connection_closed

    assert _is_connection_closed(MCPError(code=-32000, message="Connection closed"))
    assert not _is_connection_closed(MCPError(code=-32000, message="not_found: no record urn:ump:aaaa",
                                              data={"error": {"code": "not_found", "message": "no record"}}))
    reply = reply_from_result("get", {"id": "urn:ump:aaaa"}, MCPError(
        code=-32000, message="not_found: no record", data={"error": {"code": "not_found", "message": "no record"}}), None)
    assert reply.error_code == "not_found"


def test_a_server_without_the_capabilities_tool_is_judged_in_the_one_version_it_names():
    """UMP 0.1 §3.1: capabilities may be read "from MCP tool/Resource listing". A blind red team's 0.1
    server without ump.capabilities (round 29) was judged as 1.0 and failed every 1.0 rule."""
    from types import SimpleNamespace

    from memconform.targets.mcp import _named_version

    zero_one = SimpleNamespace(instructions="UMP 0.1 (MCP profile).", server_info=SimpleNamespace(name="acme"))
    tools = [{"name": "ump.recall", "description": "UMP 0.1 §3.2: search"}, {"name": "ump.get"}]
    assert _named_version(zero_one, tools) == "0.1"
    assert _named_version(SimpleNamespace(instructions=None, server_info=None),
                          [{"name": "ump.get", "description": "UMP/1.0 get"}]) == "1.0"
    # none named, several named, or one the suite does not know: the newest is judged, as before
    silent = SimpleNamespace(instructions="memory server", server_info=None)
    assert _named_version(silent, [{"name": "ump.get", "description": "UMP §3.4: get"}]) is None
    assert _named_version(SimpleNamespace(instructions="UMP 0.1 and UMP 1.0", server_info=None), []) is None
    assert _named_version(SimpleNamespace(instructions="UMP 2.0", server_info=None), []) is None
