"""targets/in_process.py: the reference's app reached without a socket answers what a socket would,
and fails the ways a socket fails (a timeout, a 500, a stream broken mid-answer), so the drivers'
handling of a broken target is the same either way."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest

from memconform.suite.outcomes import TargetError
from memconform.targets import in_process
from memconform.targets.http_session import HttpSession

# Nothing listens on the discard port: an answer from it came in process.
ORIGIN = "http://127.0.0.1:9"


async def _app(scope, receive, send):
    path = scope["path"]
    if path == "/boom":
        raise RuntimeError("the app failed before answering")
    if path == "/silent":
        return
    if path == "/hang":
        message = await receive()  # the request body
        message = await receive()  # waits until the client is gone
        _seen_disconnect.append(message["type"])
        return
    await send({"type": "http.response.start", "status": 201 if path.startswith("/echo") else 200,
                "headers": [(b"content-type", b"application/json"), (b"x-seen", b"yes")]})
    if path == "/stream":
        for part in (b"one,", b"two,", b"three"):
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return
    if path == "/midway":
        await send({"type": "http.response.body", "body": b"half", "more_body": True})
        raise RuntimeError("the app failed mid-answer")
    message = await receive()
    body = {"method": scope["method"], "path": scope["path"], "raw_path": scope["raw_path"].decode(),
            "query": scope["query_string"].decode(), "body": message["body"].decode(),
            "auth": dict(scope["headers"]).get(b"authorization", b"").decode()}
    await send({"type": "http.response.body", "body": json.dumps(body).encode(), "more_body": False})


_seen_disconnect: list[str] = []


@pytest.fixture
def routed():
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    in_process.route(ORIGIN, _app, loop)
    try:
        yield
    finally:
        in_process.unroute(ORIGIN)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def _answer(path: str, method: str = "GET", timeout: float = 5.0, **kwargs) -> httpx.Response:
    session = HttpSession(timeout=timeout, base_url=ORIGIN)
    try:
        return session.send(session.request(method, path, **kwargs))
    finally:
        session.close()


def test_a_request_reaches_the_app_as_sent(routed):
    response = _answer("/echo/a%2Fb", "POST", params={"q": "x y"}, content=b'{"k": 1}',
                       headers={"Authorization": "Bearer t"})
    assert response.status_code == 201
    assert response.headers["x-seen"] == "yes"
    assert response.json() == {"method": "POST", "path": "/echo/a/b", "raw_path": "/echo/a%2Fb",
                               "query": "q=x+y", "body": '{"k": 1}', "auth": "Bearer t"}


def test_head_gets_the_headers_without_the_body_as_from_uvicorn(routed):
    response = _answer("/echo", "HEAD")
    assert (response.status_code, response.headers["x-seen"], response.content) == (201, "yes", b"")


def test_a_streamed_answer_arrives_whole(routed):
    assert _answer("/stream").content == b"one,two,three"


def test_an_app_failing_before_it_answers_is_a_500_as_uvicorn_gives(routed):
    for path in ("/boom", "/silent"):
        response = _answer(path)
        assert (path, response.status_code, response.text) == (path, 500, "Internal Server Error")


def test_an_answer_broken_midway_is_a_broken_connection(routed):
    with pytest.raises(TargetError, match="closed the connection without a complete answer"):
        _answer("/midway")


def test_no_answer_is_a_timeout_and_the_app_hears_the_client_leave(routed):
    _seen_disconnect.clear()
    with pytest.raises(TargetError, match=r"no answer within 0.3 s \(ReadTimeout\)"):
        _answer("/hang", timeout=0.3)
    for _ in range(50):
        if _seen_disconnect:
            break
        threading.Event().wait(0.05)
    assert _seen_disconnect == ["http.disconnect"]


def test_an_origin_no_longer_routed_goes_to_the_socket(routed):
    in_process.unroute(ORIGIN)
    with pytest.raises(TargetError, match="cannot connect"):
        _answer("/echo", timeout=2)


def test_the_reference_target_routes_its_server_while_open_only():
    from memconform.targets import open_driver

    driver = open_driver("reference")
    try:
        subject = next(s for s in driver.subjects() if s.spec == "ump" and s.binding == "http")
        reply = driver.client(subject).capabilities()
        base = driver._server.base_url
        assert base in in_process.mounts()
        assert reply.status == 200
        # the same answer over the socket: the served app is one
        direct = httpx.get(base + "/ump/capabilities", headers={"UMP-Version": subject.version}, timeout=5)
        assert direct.status_code == 200 and direct.json()["versions"] == reply.body["versions"]
    finally:
        driver.close()
    assert base not in in_process.mounts()
