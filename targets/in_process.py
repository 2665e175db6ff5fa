"""The built-in reference server reached in process: an httpx transport that hands each request to
the served ASGI app on the server's own event loop, instead of through a TCP socket, uvicorn's
HTTP parser and httpcore's.

Why: against `--target=reference` the judge and the server share one interpreter, so every byte
through the loopback socket is parsed twice in Python (h11 on the judge's side, httptools and
uvicorn's protocol on the server's) under one GIL. That costs about as much as the request's own
work (benchmarks/bench_suite_run.py). What a check observes is unchanged: the same app, routes,
status codes, headers and bytes; bounded reads and timeouts behave as over TCP (httpx's
`ReadTimeout`, a broken stream as `RemoteProtocolError`).

What still goes over TCP: the event streams of UMP subscribe (their driver reads the socket
itself), the OpenAPI fuzz (schemathesis's own client), MCP over streamable HTTP, and every target
that is not the in-process reference. `memconform serve` and an `http://` target are judged over
TCP as before.

`route(origin, app, loop)` registers an app for `http://host:port`; `mounts()` is what
`http_session.HttpSession` gives its client, so each of the drivers' clients for that origin
goes in process; `unroute(origin)` when the server stops."""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import httpx

_lock = threading.Lock()
_routes: dict[str, httpx.BaseTransport] = {}

#: how long a request may wait for the app when the client set no read timeout
_DEFAULT_WAIT = 60.0
_END = object()


def route(origin: str, app: Any, loop: asyncio.AbstractEventLoop) -> None:
    with _lock:
        _routes[origin] = AsgiLoopTransport(app, loop)


def unroute(origin: str) -> None:
    with _lock:
        _routes.pop(origin, None)


def mounts() -> dict[str, httpx.BaseTransport]:
    with _lock:
        return dict(_routes)


class _Body(httpx.SyncByteStream):
    """The app's response body as it is sent, chunk by chunk (an endless event stream too)."""

    def __init__(self, chunks: queue.Queue, wait: float, disconnect: Any, what: str):
        self._chunks = chunks
        self._wait = wait
        self._disconnect = disconnect
        self._what = what

    def __iter__(self) -> Iterator[bytes]:
        while True:
            try:
                item = self._chunks.get(timeout=self._wait)
            except queue.Empty:
                raise httpx.ReadTimeout(f"{self._what}: no more of the answer within {self._wait:g} s") from None
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise httpx.RemoteProtocolError(f"{self._what}: the server failed mid-answer "
                                                f"({type(item).__name__}: {item})") from None
            yield item

    def close(self) -> None:
        self._disconnect()


class AsgiLoopTransport(httpx.BaseTransport):
    """One request at a time per call, each run as a task on `loop` (the thread serving the app)."""

    def __init__(self, app: Any, loop: asyncio.AbstractEventLoop):
        self.app = app
        self.loop = loop

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        timeouts = request.extensions.get("timeout") or {}
        wait = timeouts.get("read") or _DEFAULT_WAIT
        what = f"{request.method} {request.url}"
        head = request.method == "HEAD"
        start: concurrent.futures.Future = concurrent.futures.Future()
        chunks: queue.Queue = queue.Queue()
        disconnected = asyncio.Event()  # set on the loop when the client leaves

        def internal_error() -> None:  # what uvicorn answers when the app fails or ends before answering
            start.set_result((500, [(b"content-type", b"text/plain; charset=utf-8")]))
            chunks.put(b"Internal Server Error")

        async def run() -> None:
            sent_body = False

            async def receive() -> dict[str, Any]:
                nonlocal sent_body
                if not sent_body:
                    sent_body = True
                    return {"type": "http.request", "body": body, "more_body": False}
                await disconnected.wait()
                return {"type": "http.disconnect"}

            async def send(message: dict[str, Any]) -> None:
                if disconnected.is_set():
                    raise OSError("the client closed the answer")
                kind = message["type"]
                if kind == "http.response.start":
                    start.set_result((message["status"], message.get("headers", [])))
                elif kind == "http.response.body":
                    if message.get("body") and not head:  # uvicorn sends no body to HEAD either
                        chunks.put(bytes(message["body"]))
                    if not message.get("more_body", False):
                        chunks.put(_END)

            try:
                await self.app(_scope(request), receive, send)
            except BaseException as exc:  # noqa: BLE001 - what uvicorn does: a 500, or a broken stream
                if not start.done():
                    internal_error()
                    chunks.put(_END)
                else:
                    chunks.put(exc)
                if not isinstance(exc, Exception):
                    raise
                return
            if not start.done():
                internal_error()
            chunks.put(_END)

        asyncio.run_coroutine_threadsafe(run(), self.loop)

        def disconnect() -> None:
            if not self.loop.is_closed():
                self.loop.call_soon_threadsafe(disconnected.set)

        try:
            status, headers = start.result(timeout=wait)
        except concurrent.futures.TimeoutError:
            disconnect()  # as uvicorn does when a client leaves: the app is told, not cancelled
            raise httpx.ReadTimeout(f"{what}: no answer within {wait:g} s", request=request) from None
        return httpx.Response(status, headers=[(bytes(k), bytes(v)) for k, v in headers],
                              stream=_Body(chunks, wait, disconnect, what), request=request,
                              extensions={"http_version": b"HTTP/1.1"})


def _scope(request: httpx.Request) -> dict[str, Any]:
    url = request.url
    raw_path = url.raw_path.split(b"?", 1)[0]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": url.scheme,
        "path": unquote(raw_path.decode("ascii", "replace")),
        "raw_path": raw_path,
        "query_string": url.query,
        "root_path": "",
        "headers": [(k.lower(), v) for k, v in request.headers.raw],
        "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
        "client": ("127.0.0.1", 0),
        "extensions": {},
        "state": {},
    }
