"""The UPP drivers against miniature JSON-RPC servers started here: a starlette app under uvicorn
on 127.0.0.1 (HTTP) and a small Python script run as a child (stdio). Right answers come back
clean; wrong ones come back as replies carrying wire problems; a server that hangs, dies or says
nothing usable is a TargetError within the timeout. Nothing waits forever."""

from __future__ import annotations

import json
import shlex
import socket
import sys
import threading
import time
from pathlib import Path
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from memconform.suite.outcomes import TargetError
from memconform.suite.upp import jsonrpc as rpc
from memconform.suite.upp.client import OMIT
from memconform.targets import jsonrpc as drv
from memconform.targets import open_driver
from memconform.targets.base import Subject
from memconform.targets.http import HttpDriver
from memconform.targets.jsonrpc import HttpTransport, JsonRpcDriver, StdioTransport, UppRpcClient

INFO = {"protocol_version": "1.0.0", "ontology": "user/v1", "conformance_level": 2,
        "operations": ["upp/ingest", "upp/retrieve", "upp/info", "upp/contextualize", "upp/get_tasks",
                       "upp/get_events", "upp/delete_events", "upp/get_labels"]}


def reqs(exchange) -> list[str]:
    return sorted(p.requirement for p in exchange.wire_problems)


# -- a JSON-RPC server's answers, shared by the HTTP app and the stdio script ----------------------

SERVE = r'''
import json, sys, time

INFO = {}  # set by whoever runs these answers

def answer(msg, mode="good"):
    """The response object for one request (None for a notification)."""
    if not isinstance(msg, dict) or not isinstance(msg.get("method"), str):
        return {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": None}
    if "id" not in msg:
        return None
    mid, method = msg["id"], msg["method"]
    if method == "upp/info":
        out = {"jsonrpc": "2.0", "result": INFO, "id": mid}
    elif method == "upp/ingest":
        out = {"jsonrpc": "2.0", "result": [], "id": mid}
    elif method == "upp/echo":
        out = {"jsonrpc": "2.0", "result": msg.get("params"), "id": mid}
    else:
        out = {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": mid}
    if mode == "wrong-id":
        out["id"] = str(mid)
    elif mode == "no-jsonrpc":
        del out["jsonrpc"]
    return out

def respond(text, mode="good"):
    """The answer text to one message, None for nothing."""
    try:
        msg = json.loads(text)
    except ValueError:
        return json.dumps({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}, "id": None})
    if isinstance(msg, list):
        if not msg:
            return json.dumps(answer(None))
        out = [a for a in (answer(m, mode) for m in msg) if a is not None]
        return json.dumps(out) if out else None
    out = answer(msg, mode)
    return None if out is None else json.dumps(out)
'''

STDIO_MAIN = r'''
import signal

def out(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()

mode, INFO = sys.argv[1], json.loads(sys.argv[2])
print("booting the miniature server", file=sys.stderr, flush=True)
if mode == "banner":
    out("server ready, reading stdin")
if mode == "exit":
    print("fatal: cannot open the database", file=sys.stderr, flush=True)
    sys.exit(3)
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(0.1)
count = 0
for line in sys.stdin:
    count += 1
    if not line.strip():
        continue
    if mode == "hang" or (mode == "hang-after-first" and count > 1):
        continue
    msg = None
    try:
        msg = json.loads(line)
    except ValueError:
        pass
    method = msg.get("method") if isinstance(msg, dict) else None
    if mode == "crash-on-ingest" and method == "upp/ingest":
        raise RuntimeError("boom: the extractor fell over")
    if mode == "noise":
        for i in range(50):
            print(f"debug {i}: handling {method}", file=sys.stderr)
        sys.stderr.flush()
        out(f"log: handling {method}")
    if mode == "slow-noise":
        out("log: extracting events, this takes a while")
        time.sleep(1.2)
    if mode == "late" and count == 1:
        time.sleep(1.0)
    if mode == "notify-back":
        out(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"p": 1}}))
    if mode == "answers-notifications" and isinstance(msg, dict) and "id" not in msg:
        out(json.dumps({"jsonrpc": "2.0", "result": None, "id": None}))
        continue
    text = respond(line, "wrong-id" if mode == "wrong-id" else "no-jsonrpc" if mode == "no-jsonrpc" else "good")
    if text is None:
        continue
    if mode == "errors-id-0" and '"id": null' in text:
        text = text.replace('"id": null', '"id": 0')
    if mode == "not-json":
        out("OK " + str(method))
    elif mode == "pretty":
        out(json.dumps(json.loads(text), indent=2))
    elif mode == "double":
        out(text + text)
    elif mode == "bad-utf8":
        sys.stdout.buffer.write(text.replace("1.0.0", "1.0.0\udcff").encode("utf-8", "surrogateescape") + b"\n")
        sys.stdout.flush()
    elif mode == "no-newline-exit":
        sys.stdout.write(text)
        sys.stdout.flush()
        sys.exit(0)
    else:
        out(text)
'''


# -- stdio fixtures ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def script(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("upp-stdio") / "miniature_upp.py"
    path.write_text(SERVE + STDIO_MAIN, encoding="utf-8")
    return str(path)


@pytest.fixture
def stdio(script) -> Iterator[Callable[..., UppRpcClient]]:
    """`stdio(mode, timeout=2.0)` → a client over a fresh child; all stopped at teardown."""
    opened: list[UppRpcClient] = []

    def start(mode: str = "good", timeout: float = 2.0) -> UppRpcClient:
        client = UppRpcClient(StdioTransport([sys.executable, script, mode, json.dumps(INFO)], timeout=timeout))
        opened.append(client)
        return client

    yield start
    for client in opened:
        client.close()


def command(script: str, mode: str) -> list[str]:
    return [sys.executable, script, mode, json.dumps(INFO)]


# -- HTTP fixtures ----------------------------------------------------------------------------------

class Uvicorn:
    """A starlette app under uvicorn in a thread, on a free port of 127.0.0.1."""

    def __init__(self, app: Any):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1, ws="none")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the miniature server did not start"
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)
        self.sock.close()


STOPPING = threading.Event()


def rpc_route(path: str = "/rpc", mode: str = "good") -> Route:
    namespace: dict[str, Any] = {}
    exec(compile(SERVE, "miniature", "exec"), namespace)
    namespace["INFO"] = INFO

    async def endpoint(request: Request) -> Response:
        body = (await request.body()).decode("utf-8", "replace")
        if mode == "hang":
            while not STOPPING.is_set():  # held until the test ends (the client gave up long before)
                import asyncio

                await asyncio.sleep(0.05)
        if mode == "crash":
            raise RuntimeError("boom")
        text = namespace["respond"](body, mode if mode in ("wrong-id", "no-jsonrpc") else "good")
        if mode == "not-json":
            return PlainTextResponse("<h1>It works</h1>", media_type="text/html")
        if mode == "answers-notifications" and text is None:
            return JSONResponse({"jsonrpc": "2.0", "result": "ok", "id": None})
        if text is None:
            return Response(status_code=204)
        return Response(text, media_type="text/plain" if mode == "text-plain" else "application/json")

    return Route(path, endpoint, methods=["POST"])


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    """`serve(*routes)` → the base URL of a starlette app with those routes; stopped at teardown."""
    running: list[Uvicorn] = []
    STOPPING.clear()

    def start(*routes: Route) -> str:
        server = Uvicorn(Starlette(routes=list(routes)))
        running.append(server)
        return server.url

    yield start
    STOPPING.set()
    for server in running:
        server.stop()


@pytest.fixture
def http(serve) -> Callable[..., UppRpcClient]:
    opened: list[UppRpcClient] = []

    def start(mode: str = "good", timeout: float = 2.0) -> UppRpcClient:
        client = UppRpcClient(HttpTransport(serve(rpc_route("/rpc", mode)) + "/rpc", timeout=timeout))
        opened.append(client)
        return client

    yield start
    for client in opened:
        client.close()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# == both bindings: right answers =======================================================================

@pytest.fixture(params=["http", "stdio"])
def good(request, http, stdio) -> UppRpcClient:
    return http() if request.param == "http" else stdio()


def test_right_answers_come_back_clean(good):
    info = good.info()
    assert info.ok and info.result == INFO and info.exchange.wire_problems == ()
    assert info.exchange.sent == {"jsonrpc": "2.0", "method": "upp/info", "params": {}, "id": 1}
    ingest = good.ingest("user_alice", "My name is Alice.")
    assert ingest.ok and ingest.result == [] and ingest.exchange.sent["id"] == 2
    assert ingest.exchange.sent["params"] == {"entity_key": "user_alice", "text": "My name is Alice."}
    assert ingest.describe() == "upp/ingest -> result [0 items]"
    assert good.shares_files() is True


def test_ids_are_counted_integers_unless_a_call_gives_one(good):
    assert [good.call("upp/echo").exchange.sent["id"] for _ in range(3)] == [1, 2, 3]
    for given in ("abc", None, 7.5):
        reply = good.call("upp/echo", {"x": 1}, id=given)
        assert reply.exchange.sent["id"] == given and reply.ok and reply.exchange.wire_problems == (), reply
    assert "params" not in good.call("upp/echo").exchange.sent


def test_omitted_parameters_are_left_out_and_extras_sent_as_given(good):
    sent = good.delete_events("u", event_ids=OMIT, hard=True).exchange.sent
    assert sent["params"] == {"entity_key": "u", "hard": True}
    assert good.ingest(OMIT, 42).exchange.sent["params"] == {"text": 42}


def test_an_error_answer_is_a_reply(good):
    reply = good.call("upp/nope", {})
    assert not reply.ok and reply.error_code == -32601 and reply.error_message == "Method not found"
    assert reply.exchange.wire_problems == () and "error -32601" in reply.describe()


def test_a_notification_gets_nothing_and_does_not_wait_long(good):
    t0 = time.monotonic()
    exchange = good.notify("upp/ingest", {"entity_key": "u", "text": "x"})
    assert exchange.received_text is None and exchange.wire_problems == ()
    assert "id" not in exchange.sent and time.monotonic() - t0 < 1.5
    if good.binding == "http":
        assert exchange.http_status == 204


def test_raw_messages_and_batches(good):
    parse = good.send_raw("{oops")
    assert parse.received["error"]["code"] == -32700 and parse.received["id"] is None
    assert parse.wire_problems == () and parse.sent == "{oops"
    empty = good.send_raw(b"[]")
    assert empty.received["error"]["code"] == -32600
    batch = [{"jsonrpc": "2.0", "method": "upp/echo", "params": [1], "id": 1},
             {"jsonrpc": "2.0", "method": "upp/echo", "params": [2]},
             {"jsonrpc": "2.0", "method": "upp/info", "id": "two"}]
    answer = good.send_raw(json.dumps(batch))
    assert [r["id"] for r in answer.received] == [1, "two"] and answer.wire_problems == ()
    assert rpc.expect_batch(batch, answer.received) == []
    notes = good.send_raw(json.dumps(batch[1:2] * 2))
    assert notes.received_text is None and notes.wire_problems == ()


def test_a_pretty_printed_raw_message_still_goes_as_one_message(good):
    exchange = good.send_raw(json.dumps({"jsonrpc": "2.0", "method": "upp/info", "id": 9}, indent=2))
    assert exchange.received["result"] == INFO and exchange.wire_problems == ()


# == both bindings: wrong answers come back as replies with wire problems ===============================

@pytest.fixture(params=["http", "stdio"])
def binding(request) -> str:
    return request.param


@pytest.fixture
def server(binding, http, stdio) -> Callable[..., UppRpcClient]:
    return http if binding == "http" else stdio


def test_a_wrong_id_is_an_id_echo_problem_not_a_hang(server):
    reply = server("wrong-id").info()
    assert reply.ok and reply.result == INFO
    assert reqs(reply.exchange) == [rpc.ID_ECHO]
    message = reply.exchange.wire_problems[0].message
    assert '"id": 1' in message and '"id": "1"' in message


def test_a_missing_jsonrpc_member(server):
    reply = server("no-jsonrpc").info()
    assert reply.ok and reqs(reply.exchange) == [rpc.VERSION]


def test_an_answer_that_is_not_json(server):
    t0 = time.monotonic()
    reply = server("not-json", timeout=1.0).info()  # over stdio: taken as the answer at the deadline
    assert not reply.ok and reply.exchange.received is None
    assert reply.exchange.received_text in ("OK upp/info", "<h1>It works</h1>")
    assert rpc.UTF8_JSON in reqs(reply.exchange) and "not a JSON-RPC response" in reply.describe()
    assert time.monotonic() - t0 < 3


def test_an_answer_to_a_notification_is_reported(server):
    exchange = server("answers-notifications").notify("upp/info", {})
    assert exchange.received == {"jsonrpc": "2.0", "result": exchange.received["result"], "id": None}
    assert rpc.NOTIFICATION_NO_REPLY in reqs(exchange)


def test_a_server_that_hangs_is_a_target_error_within_the_timeout(server):
    client = server("hang", timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(TargetError, match=r"no answer within 0\.5 s") as caught:
        client.info()
    assert time.monotonic() - t0 < 3
    assert "upp/info" in str(caught.value)  # says what was sent


# == HTTP only ============================================================================================

def test_http_keeps_status_and_content_type(http):
    reply = http("text-plain").info()
    assert reply.ok and reply.exchange.http_status == 200 and reply.exchange.content_type.startswith("text/plain")
    assert reqs(reply.exchange) == [rpc.HTTP_CONTENT_TYPE]
    clean = http().info().exchange
    assert clean.http_status == 200 and clean.content_type == "application/json"


def test_http_a_server_error_page_then_the_next_call(serve):
    url = serve(rpc_route("/crash", "crash"), rpc_route("/rpc"))
    client = UppRpcClient(HttpTransport(url + "/crash", timeout=2))
    try:
        reply = client.info()
        assert reply.exchange.http_status == 500 and not reply.ok and rpc.UTF8_JSON in reqs(reply.exchange)
        client.transport.url = url + "/rpc"  # a fresh connection after a 5xx: the next call goes through
        assert client.info().ok
    finally:
        client.close()


def test_http_a_wrong_path_is_no_response_with_its_status(serve):
    client = UppRpcClient(HttpTransport(serve(rpc_route("/rpc")) + "/elsewhere", timeout=2))
    try:
        reply = client.info()
        assert reply.exchange.http_status == 404 and not reply.ok and reply.exchange.received_text == "Not Found"
        assert rpc.UTF8_JSON in reqs(reply.exchange)
    finally:
        client.close()


def test_http_a_closed_port_is_a_target_error():
    url = f"http://127.0.0.1:{closed_port()}/upp"
    client = UppRpcClient(HttpTransport(url, timeout=1))
    try:
        with pytest.raises(TargetError, match="cannot connect"):
            client.info()
    finally:
        client.close()


@pytest.mark.parametrize("url, shares", [("http://127.0.0.1:1/upp", True), ("http://localhost:1/", True),
                                         ("http://[::1]:1/", True), ("http://10.0.0.7:1/", False),
                                         ("http://upp.example.com/rpc", False)])
def test_http_shares_files_only_on_a_loopback_address(url, shares):
    transport = HttpTransport(url)
    try:
        assert transport.shares_files() is shares
    finally:
        transport.close()


# == stdio only ============================================================================================

def test_stdio_a_process_that_exits_says_its_code_and_stderr(stdio):
    client = stdio("exit")
    t0 = time.monotonic()
    with pytest.raises(TargetError, match="exited with code 3") as caught:
        client.info()
    assert "fatal: cannot open the database" in str(caught.value) and time.monotonic() - t0 < 3
    with pytest.raises(TargetError, match="exited with code 3"):
        client.info()  # and so does every later call, at once


def test_stdio_a_crash_mid_run_then_the_driver_starts_a_fresh_process(script):
    driver = JsonRpcDriver("stdio", command(script, "crash-on-ingest"), timeout=3)
    try:
        [subject] = driver.subjects()
        client = driver.client(subject)
        assert client.info().ok
        with pytest.raises(TargetError, match="exited with code 1") as caught:
            client.ingest("u", "x")
        assert "boom: the extractor fell over" in str(caught.value)
        again = driver.client(subject)
        assert again is not client and again.info().ok and driver.describe()["restarts"] == 1
    finally:
        driver.close()


def test_stdio_stderr_noise_and_log_lines_on_stdout(stdio):
    client = stdio("noise")
    reply = client.info()
    assert reply.ok and reply.result == INFO
    # round 16: a log line on stdout is no message the server sent, but a break of the framing
    assert reqs(reply.exchange) == [rpc.STDIO_LINE_FRAMING]
    assert "log: handling upp/info" in reply.exchange.wire_problems[0].message
    # stderr is read by its own thread: the answer on stdout may come before it caught up
    deadline = time.monotonic() + 10
    while "debug 49" not in client.transport.stderr_tail() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "debug 49" in client.transport.stderr_tail()


def test_stdio_a_log_line_before_a_slow_answer_does_not_stand_for_the_answer(stdio):
    reply = stdio("slow-noise", timeout=5).info()
    assert reply.ok and reply.result == INFO and reqs(reply.exchange) == [rpc.STDIO_LINE_FRAMING]
    assert "log: extracting events" in reply.exchange.wire_problems[0].message


def test_stdio_a_banner_before_the_first_request_is_a_stray_line(stdio):
    client = stdio("banner")
    time.sleep(0.3)  # the banner is out before the request
    reply = client.info()
    assert reply.ok and reqs(reply.exchange) == [rpc.STDIO_LINE_FRAMING]
    assert "server ready" in str(reply.exchange.wire_problems[0])
    assert client.info().exchange.wire_problems == ()  # said once, reported once


def test_stdio_a_pretty_printed_answer_is_read_and_its_framing_reported(stdio):
    reply = stdio("pretty").info()
    assert reply.ok and reply.result == INFO and reqs(reply.exchange) == [rpc.STDIO_LINE_FRAMING]


def test_stdio_a_pretty_printed_fence_answer_is_no_reply_to_the_notification(stdio):
    """After a notification the driver sends a fence request; its answer spread over lines is the
    fence's (a framing fault, reported as one), not an answer to the notification (round 18: a
    server pretty-printing every error was charged with answering notifications)."""
    exchange = stdio("pretty").notify("upp/info", {})
    assert exchange.received_text is None, exchange.received_text
    assert reqs(exchange) == [rpc.STDIO_LINE_FRAMING]


def test_stdio_two_answers_on_one_line(stdio):
    client = stdio("double")
    first = client.info()
    assert first.ok and reqs(first.exchange) == [rpc.STDIO_LINE_FRAMING]
    second = client.call("upp/echo", {"n": 2})
    assert second.ok and second.result == {"n": 2}
    # the duplicate answer to request 1 is a stray line; this answer came doubled too
    assert reqs(second.exchange) == sorted([rpc.ID_ECHO, rpc.STDIO_LINE_FRAMING])
    [stray] = [p for p in second.exchange.wire_problems if p.requirement == rpc.ID_ECHO]
    assert 'with "id": 1 ' in stray.message and "before this request was sent" in stray.message


def test_stdio_a_late_answer_is_a_stray_for_the_next_request(stdio):
    client = stdio("late", timeout=0.5)  # it answers its first request after 1 s
    with pytest.raises(TargetError, match="no answer within"):
        client.info()
    client.transport.timeout = 5.0  # room for the late answer to come before this one
    reply = client.call("upp/echo", {"n": 2}, id=2)
    assert reply.ok and reply.result == {"n": 2}
    assert reqs(reply.exchange) == [rpc.ID_ECHO]
    assert "earlier request" in reply.exchange.wire_problems[0].message


def test_stdio_an_error_under_an_id_answered_before_answers_what_had_no_id(stdio):
    """The public UPP TypeScript server answers whatever has no readable id (a parse error, [], a
    batch it cannot take) with "id": 0. Once the suite's own request 0 was answered, that error is
    the answer to the message in flight, judged for its id, not a stray waited out for the timeout
    (three such waits declared that server's binding dead and left 48 checks unjudged)."""
    client = stdio("errors-id-0", timeout=1.0)
    assert client.call("upp/echo", {"n": 0}, id=0).ok
    for raw in ("{oops", b"[]"):
        exchange = client.send_raw(raw)
        assert exchange.received["id"] == 0 and exchange.received["error"]["code"] in (-32700, -32600)
        assert not any("earlier request" in p.message for p in exchange.wire_problems)
    # a request with an id of its own still does not take another request's id as its answer
    client.transport.timeout = 0.5
    late = client.call("upp/echo", {"n": 1}, id=1)
    assert late.ok and late.result == {"n": 1}


def test_stdio_requests_of_the_server_are_passed_over(stdio):
    reply = stdio("notify-back").info()
    assert reply.ok and reply.exchange.wire_problems == ()


def test_stdio_bytes_that_are_not_utf8(stdio):
    reply = stdio("bad-utf8").info()
    assert reply.ok and reply.result["protocol_version"] == "1.0.0\ufffd"
    assert reqs(reply.exchange) == [rpc.UTF8_JSON]


def test_stdio_a_last_answer_without_newline(stdio):
    reply = stdio("no-newline-exit").info()
    assert reply.ok and reqs(reply.exchange) == [rpc.STDIO_LINE_FRAMING]


def test_stdio_a_server_that_answers_the_first_request_then_hangs(stdio):
    client = stdio("hang-after-first", timeout=0.5)
    assert client.info().ok
    with pytest.raises(TargetError, match="no answer within 0.5 s") as caught:
        client.ingest("u", "x")
    assert "booting the miniature server" in str(caught.value)  # the stderr tail


def test_stdio_a_command_that_cannot_start():
    with pytest.raises(TargetError, match="cannot start"):
        JsonRpcDriver("stdio", ["/nonexistent/upp-server"]).subjects()


def test_stdio_close_stops_a_child_that_ignores_eof_and_sigterm(script, monkeypatch):
    monkeypatch.setattr(drv, "STOP_GRACE", 0.5)
    transport = StdioTransport(command(script, "stubborn"), timeout=1)
    time.sleep(0.3)  # let it install its SIGTERM handler
    t0 = time.monotonic()
    transport.close()
    assert transport._proc.poll() is not None and time.monotonic() - t0 < 4
    with pytest.raises(TargetError, match="closed"):
        UppRpcClient(transport).info()


# == drivers and target strings ===========================================================================

def test_open_driver_for_jsonrpc_http(serve):
    text = "jsonrpc+" + serve(rpc_route("/rpc")) + "/rpc"
    driver = open_driver(text, timeout=2)
    try:
        assert isinstance(driver, JsonRpcDriver)
        [subject] = driver.subjects()
        assert subject == Subject(text, "upp", "1.0.0", "http")
        assert driver.advertised_level(subject) == "L2"
        assert driver.client(subject).info().ok
        described = driver.describe()
        assert described["kind"] == "jsonrpc+http" and described["advertised"] == {"upp": "L2"}
        assert described["server"]["ontology"] == "user/v1"
    finally:
        driver.close()


def test_open_driver_for_jsonrpc_stdio(script):
    text = "jsonrpc+stdio:" + shlex.join(command(script, "good"))
    driver = open_driver(text, timeout=3)
    try:
        [subject] = driver.subjects()
        assert subject == Subject(text, "upp", "1.0.0", "stdio")
        assert driver.advertised_level(subject) == "L2"
        client = driver.client(subject)
        assert client is driver.client(subject) and client.shares_files()
        assert driver.describe()["command"] == command(script, "good")
    finally:
        driver.close()
    assert not client.transport.alive


@pytest.mark.parametrize("result, level", [({"conformance_level": 3}, "L3"), ({"conformance_level": 1}, "L1"),
                                           ({"conformance_level": "2"}, "L2"), ({"conformance_level": 4}, None),
                                           ({"conformance_level": True}, None), ({}, None), ([], None)])
def test_level_from_info(result, level):
    assert drv.level_from_info(result) == level


# == discovery on http:// ===================================================================================

def ump_route(path: str = "/ump/capabilities") -> Route:
    async def caps(request: Request) -> Response:
        return JSONResponse({"ump": "1.0", "versions": ["1.0"], "conformance": "L1"})

    return Route(path, caps)


def test_discovery_ump_only(serve):
    url = serve(ump_route())
    driver = HttpDriver(url, timeout=2)
    try:
        assert driver.subjects() == [Subject(url, "ump", "1.0", "http")]
        assert "upp" not in driver.describe()
    finally:
        driver.close()


@pytest.mark.parametrize("path", ["/upp", "/"])
def test_discovery_upp_only(serve, path):
    url = serve(rpc_route(path))
    driver = HttpDriver(url, timeout=2)
    try:
        subjects = driver.subjects()
        assert subjects == [Subject(url, "upp", "1.0.0", "http")]
        assert driver.advertised_level(subjects[0]) == "L2"
        client = driver.client(subjects[0])
        assert isinstance(client, UppRpcClient) and client.transport.url == url + path
        assert client.ingest("u", "x").ok
        described = driver.describe()
        assert described["upp"]["url"] == url + path and described["advertised"] == {"upp": "L2"}
    finally:
        driver.close()


def test_discovery_both(serve):
    url = serve(ump_route(), rpc_route("/upp"))
    driver = HttpDriver(url, timeout=2)
    try:
        subjects = driver.subjects()
        assert subjects == [Subject(url, "ump", "1.0", "http"), Subject(url, "upp", "1.0.0", "http")]
        assert driver.advertised_level(subjects[0]) == "L1" and driver.advertised_level(subjects[1]) == "L2"
        assert driver.client(subjects[0]).version == "1.0" and driver.client(subjects[1]).info().ok
    finally:
        driver.close()


def test_discovery_neither_names_both_probes(serve):
    async def hello(request: Request) -> Response:
        return PlainTextResponse("hello")

    async def not_upp(request: Request) -> Response:
        return JSONResponse({"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found"}, "id": 1})

    url = serve(Route("/", hello), Route("/upp", not_upp, methods=["POST"]))
    with pytest.raises(TargetError) as caught:
        HttpDriver(url, timeout=2).subjects()
    text = str(caught.value)
    assert "not a UMP server" in text and "GET /ump/capabilities" in text
    assert "POST /upp with upp/info answered HTTP 200 with JSON-RPC error -32601" in text
    assert "POST / with upp/info answered HTTP 405" in text


def test_discovery_on_a_closed_port_is_one_target_error():
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(TargetError, match="cannot connect"):
        HttpDriver(url, timeout=1).subjects()


def test_discovery_on_a_server_that_never_answers_ends_within_the_timeout():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # connections queue in the backlog; nothing ever answers them
    try:
        t0 = time.monotonic()
        with pytest.raises(TargetError, match="no answer within 0.5 s"):
            HttpDriver(f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=0.5).subjects()
        assert time.monotonic() - t0 < 3
    finally:
        sock.close()


def test_discovery_keeps_forced_ump_versions_and_still_finds_upp(serve):
    url = serve(rpc_route("/upp"))
    driver = HttpDriver(url, forced_versions=("1.0",), timeout=2)
    try:
        assert driver.subjects() == [Subject(url, "ump", "1.0", "http"), Subject(url, "upp", "1.0.0", "http")]
    finally:
        driver.close()


# == the reference target's UPP subjects ===================================================================

def fake_faults(monkeypatch) -> None:
    from memconform.reference_impl.faults import Fault, of_spec

    for fault in (Fault("upp-fake-both", "upp", "a UPP server fault", ("upp/x",), since="1.0.0"),
                  Fault("upp-fake-stdio", "upp", "a UPP stdio fault", ("upp/x",), since="1.0.0",
                        bindings=("stdio",)),
                  Fault("ump-fake-server", "ump", "a UMP server fault", ("ump/x",)),
                  Fault("ump-fake-file", "ump", "a UMP file fault", ("ump/x",), bindings=("file",))):
        monkeypatch.setitem(of_spec(fault.spec), fault.name, fault)


@pytest.mark.parametrize("fault, shows_on", [
    ("upp-fake-both", {("upp", "http"), ("upp", "stdio")}),
    ("upp-fake-stdio", {("upp", "stdio")}),
    ("ump-fake-server", {("ump", "http"), ("ump", "mcp")}),
    ("ump-fake-file", {("ump", "file")}),
])
def test_reference_faults_route_by_their_spec(monkeypatch, fault, shows_on):
    from memconform.targets.reference import _fault_shows_on

    fake_faults(monkeypatch)
    every = {(spec, b) for spec in ("ump", "upp") for b in ("file", "http", "mcp", "stdio")}
    assert {(spec, b) for spec, b in every if _fault_shows_on(fault, b, spec) == fault} == shows_on
    assert all(_fault_shows_on(fault, b, spec) is None for spec, b in every - shows_on)
    assert _fault_shows_on(None, "http", "upp") is None


def test_reference_offers_upp_over_http_and_stdio_after_its_ump_subjects():
    from memconform.targets.reference import ReferenceDriver
    from memconform.targets.target_string import ReferenceTarget

    subjects = ReferenceDriver(ReferenceTarget()).subjects()
    assert subjects[-2:] == [Subject("reference", "upp", "1.0.0", "http"),
                             Subject("reference", "upp", "1.0.0", "stdio")]
    assert [s for s in subjects if s.spec == "ump"] == [Subject("reference", "ump", v, b)
                                                        for b in ("file", "http", "mcp") for v in ("0.1", "1.0")]


def test_reference_upp_stdio_is_a_child_given_its_fault(monkeypatch, script):
    from memconform.targets import reference
    from memconform.targets.target_string import ReferenceTarget

    fake_faults(monkeypatch)
    asked: list[str | None] = []
    folders: list[Path] = []
    monkeypatch.setattr(reference, "upp_stdio_command", lambda fault, variants=(), export_dir=None:
                        asked.append(fault) or folders.append(export_dir) or command(script, "good"))
    assert reference.upp_stdio_command.__name__ == "<lambda>"
    driver = reference.ReferenceDriver(ReferenceTarget(fault="upp-fake-stdio"), timeout=3)
    try:
        subject = Subject(driver.label, "upp", "1.0.0", "stdio")
        client = driver.client(subject)
        assert client.binding == "stdio" and client.info().ok and driver.advertised_level(subject) == "L2"
        assert asked == ["upp-fake-stdio"] and driver._server is None  # no HTTP server for stdio
        # the child writes its exports into a folder of the run's, not the shared default one
        assert folders[0].is_dir() and folders[0].name.startswith("memconform-ref-upp-")
    finally:
        driver.close()
    assert not client.transport.alive
    assert not folders[0].exists()


def test_reference_upp_stdio_command_runs_the_cli():
    from memconform.targets.reference import upp_stdio_command

    assert upp_stdio_command(None) == [sys.executable, "-m", "memconform.suite.cli", "serve", "--upp-stdio"]
    assert upp_stdio_command("upp-x")[-2:] == ["--fault", "upp-x"]
    assert upp_stdio_command(None, (), Path("/x/y"))[-2:] == ["--upp-export-dir", str(Path("/x/y"))]


def test_reference_upp_http_is_the_in_thread_servers_upp(monkeypatch, serve):
    """The in-thread server is started with the UMP service and `upp=UppService(fault=...)`; the
    UPP subject's client speaks to its /upp. (Both replaced here by stand-ins.)"""
    import types

    from memconform.reference_impl import serve as serve_module
    from memconform.targets.reference import ReferenceDriver
    from memconform.targets.target_string import ReferenceTarget

    fake_faults(monkeypatch)
    seen: dict[str, Any] = {}

    class StandInUppService:
        def __init__(self, *, fault: str | None = None, variants: tuple[str, ...] = (), export_dir: Path):
            seen["upp_fault"], seen["export_dir"] = fault, export_dir

        def close(self) -> None:
            seen["upp_closed"] = True

    module = types.ModuleType("memconform.reference_impl.upp.service")
    module.UppService = StandInUppService
    monkeypatch.setitem(sys.modules, "memconform.reference_impl.upp.service", module)
    url = serve(rpc_route("/upp"))

    def start_in_thread(service: Any, host: str = "127.0.0.1", port: int = 0, *, upp: Any = None, **kw: Any):
        seen["ump_fault"], seen["upp"] = service.fault, upp
        service.close()
        return types.SimpleNamespace(base_url=url, stop=lambda: seen.setdefault("stopped", True))

    monkeypatch.setattr(serve_module, "start_in_thread", start_in_thread)
    driver = ReferenceDriver(ReferenceTarget(fault="upp-fake-both"), timeout=3)
    try:
        subject = Subject(driver.label, "upp", "1.0.0", "http")
        client = driver.client(subject)
        assert client.transport.url == url + "/upp" and client.info().ok
        assert driver.advertised_level(subject) == "L2"
        assert seen["upp_fault"] == "upp-fake-both" and seen["ump_fault"] is None
        assert isinstance(seen["upp"], StandInUppService) and seen["export_dir"].is_dir()
    finally:
        driver.close()
    assert seen["stopped"] and seen["upp_closed"] and not seen["export_dir"].exists()


def test_reference_ump_still_works_when_the_upp_engine_cannot_be_made(monkeypatch):
    from memconform.targets.reference import ReferenceDriver
    from memconform.targets.target_string import ReferenceTarget

    def no_upp(self):
        self._upp_missing = "ImportError: stand-in"
        return None

    monkeypatch.setattr(ReferenceDriver, "_new_upp_service", no_upp)
    driver = ReferenceDriver(ReferenceTarget(), timeout=5)
    try:
        ump = driver.client(Subject("reference", "ump", "1.0", "http"))
        assert ump.capabilities().ok
        with pytest.raises(TargetError, match="offers no UPP over HTTP: ImportError: stand-in"):
            driver.client(Subject("reference", "upp", "1.0.0", "http"))
    finally:
        driver.close()


@pytest.mark.parametrize("binding", ["http", "stdio"])
def test_the_real_reference_answers_upp_info(binding):
    pytest.importorskip("memconform.reference_impl.upp.service")
    from memconform.targets.reference import ReferenceDriver
    from memconform.targets.target_string import ReferenceTarget

    driver = ReferenceDriver(ReferenceTarget(), timeout=15)
    try:
        subject = Subject("reference", "upp", "1.0.0", binding)
        reply = driver.client(subject).info()
        assert reply.ok and reply.result["protocol_version"] == "1.0.0", reply.describe()
        assert reply.exchange.wire_problems == ()
        assert driver.advertised_level(subject) in ("L1", "L2", "L3")
    finally:
        driver.close()
