"""The reference server's HTTP binding (§4.2): a starlette app over `UmpService`.

Routes (docs/live-ump.md): GET /ump/capabilities, GET /.well-known/ump.json, POST /ump/recall,
POST /ump/remember, GET /ump/memory/{percent-encoded id}, POST /ump/revise, POST /ump/forget,
POST /ump/feedback, POST /ump/rehydrate, GET /ump/subscribe (SSE), GET /openapi.json, the
MCP streamable-HTTP binding at /mcp when `mcp_app` is importable, and, when a UPP service is given,
UPP's JSON-RPC binding at POST /upp (docs/live-upp.md): one JSON-RPC message per POST, the response
in the body (200 application/json), 204 with no body when JSON-RPC sends nothing (notifications),
405 with a JSON-RPC -32600 body for any other method, and 413 with a -32600 body for a body over
1 MiB; never a 500.

Every answer is JSON (`application/json; charset=utf-8`) except the SSE stream. Errors are the
§3 envelope `{"error": {"code", "message"}}`: not_found 404, unauthorized 401, forbidden_scope
403, rate_limited 429, every other §3.7 code 400; malformed JSON 400 invalid_record; a body over
1 MiB 413 invalid_record; an unknown route 404 not_found; a wrong method 405 unsupported (with
Allow); anything unexpected 500 internal, logged, never with a traceback in the body.

The service is synchronous (one lock around sqlite): every call runs in the threadpool, and the
SSE stream polls `Subscription.next` in a worker thread with a short timeout, so neither blocks
the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import re
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memconform.reference_impl.faults import wrapped
from memconform.reference_impl.ump.engine import UmpError
from memconform.suite.jsonvalue import a_json_type

log = logging.getLogger("memconform.reference_impl.ump.http")

MAX_BODY = 1 << 20  # 1 MiB
#: How much of an oversize body is read and discarded before answering 413, so that a client
#: still sending gets the answer instead of a reset connection. Beyond it the connection closes.
_DRAIN_LIMIT = 16 << 20
JSON_TYPE = "application/json; charset=utf-8"
SSE_TYPE = "text/event-stream; charset=utf-8"
VERSION_HEADER = "UMP-Version"

#: HTTP status per §3.7 code (docs/live-ump.md); every other code is 400.
STATUS_FOR_CODE = {"not_found": 404, "unauthorized": 401, "forbidden_scope": 403, "rate_limited": 429,
                   "internal": 500}

#: Query parameters of GET /ump/subscribe that narrow the scope of the stream.
_SUBSCRIBE_SCOPE = ("owner", "user", "project", "agent", "visibility")

_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


class HttpError(Exception):
    """An error answered by the binding itself (before the service is asked)."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def status_for(code: str) -> int:
    return STATUS_FOR_CODE.get(code, 400)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return Response(text.encode("utf-8"), status_code=status, headers=headers, media_type=JSON_TYPE)


def error_response(code: str, message: str, status: int | None = None,
                   headers: dict[str, str] | None = None) -> Response:
    status = status or status_for(code)
    headers = dict(headers or {})
    if status == 401:
        headers.setdefault("WWW-Authenticate", 'Bearer realm="ump"')
    return json_response({"error": {"code": code, "message": message}}, status, headers)


@lru_cache(maxsize=1)
def openapi_document() -> bytes:
    """The OpenAPI 3.1 description shipped next to this module."""
    return resources.files(__package__).joinpath("openapi.json").read_bytes()


# -- request parsing -----------------------------------------------------------------------

def _version(service: Any, request: Request) -> str:
    value = request.headers.get(VERSION_HEADER)
    spoken = tuple(service.versions)
    if value is None:
        return spoken[0]
    value = value.strip()
    if value not in spoken:
        raise HttpError(400, "unsupported",
                        f"{VERSION_HEADER} {value!r} is not a version this server speaks "
                        f"(it speaks {', '.join(spoken)})")
    return value


def _token(request: Request, operation: str) -> str | None:
    """The bearer token, or None without an Authorization header. A header that is not
    `Bearer <token>` is refused (401) for every operation that takes a token; `capabilities`
    needs none and ignores it."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() == "bearer" and rest.strip():
        return rest.strip()
    if operation == "capabilities":
        return None
    raise HttpError(401, "unauthorized", "the Authorization header must be `Bearer <capability token>` "
                                         f"(got scheme {scheme[:20]!r}{' without a token' if scheme.lower() == 'bearer' else ''})")


#: The JSON-RPC-over-HTTP convention's status for a lone error answer (variant upp-http-status-by-code).
_STATUS_BY_CODE = {-32700: 500, -32600: 400, -32601: 404, -32602: 500, -32603: 500}


def _upp_status(upp: Any, text: str) -> int:
    if getattr(getattr(upp, "policy", None), "http_error_status", "200") != "by-code":
        return 200
    try:
        answer = json.loads(text)
    except ValueError:
        return 200
    error = answer.get("error") if isinstance(answer, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if not isinstance(code, int):
        return 200
    return _STATUS_BY_CODE.get(code, 500 if -32099 <= code <= -32000 else 200)


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    too_big = HttpError(413, "invalid_record",
                        f"the request body exceeds the limit of {MAX_BODY} bytes (1 MiB)")
    if declared is not None and declared.strip().isdigit() and int(declared) > _DRAIN_LIMIT:
        raise too_big
    data = bytearray()
    over = False
    async for chunk in request.stream():
        if over:
            continue  # drain: read and discard what the client still sends
        data += chunk
        if len(data) > MAX_BODY:
            over = True
            data.clear()
    if over:
        raise too_big
    return bytes(data)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


async def _read_json(request: Request) -> Any:
    raw = await _read_body(request)
    if not raw.strip():
        raise HttpError(400, "invalid_record", "the request body is empty; a JSON object is required")
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        reason = str(exc) if not isinstance(exc, RecursionError) else "nested too deeply"
        raise HttpError(400, "invalid_record", f"the request body is not valid JSON: {reason}") from None




def _memory_id(request: Request) -> str:
    """The id of GET /ump/memory/{id}, percent-decoded strictly from the raw path (a malformed
    escape or a non-UTF-8 id is a 400, not a lookup of a mangled string)."""
    raw = request.scope.get("raw_path")
    prefix = "/ump/memory/"
    if isinstance(raw, (bytes, bytearray)):
        text = bytes(raw).decode("latin-1").split("?", 1)[0]
        root = request.scope.get("root_path", "")
        if root and text.startswith(root):
            text = text[len(root):]
    else:
        text = request.url.path
    if not text.startswith(prefix):  # cannot happen through the router; be safe
        return request.path_params.get("id", "")
    encoded = text[len(prefix):]
    if _BAD_PERCENT.search(encoded):
        raise HttpError(400, "invalid_record", f"the id in the path is not valid percent-encoding: {encoded!r}")
    try:
        return urllib.parse.unquote_to_bytes(encoded).decode("utf-8")
    except UnicodeDecodeError:
        raise HttpError(400, "invalid_record", f"the id in the path is not percent-encoded UTF-8: {encoded!r}") from None


# -- the app -----------------------------------------------------------------------------------

class _SSEResponse(StreamingResponse):
    """A StreamingResponse that runs `on_close` however the stream ends (done, client gone,
    server stopping)."""

    def __init__(self, content: AsyncIterator[str], on_close: Callable[[], None], **kw: Any):
        super().__init__(content, **kw)
        self._on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._on_close()


def _sse_frame(event: Any, named: bool = True) -> str:
    etype = event.get("type") if isinstance(event, dict) else None
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    if not named:
        # policy.subscribe_event_names == "data": unnamed frames of another shape, {change, record}
        # (or {change, id} when no record goes with it)
        other = {"change": etype, **({"record": event["record"]} if isinstance(event, dict) and "record" in event
                                     else {"id": event.get("id") if isinstance(event, dict) else None})}
        return f"data: {json.dumps(other, ensure_ascii=False, separators=(',', ':'))}\n\n"
    name = etype if isinstance(etype, str) and etype and "\n" not in etype and "\r" not in etype else "message"
    return f"event: {name}\ndata: {data}\n\n"


class _LazyMcp:
    """The /mcp route, built off the start-up path: importing the MCP SDK takes over a second,
    and the server answers HTTP (and UPP, OMF) at once while it loads in a thread. A request to
    /mcp before then waits for it. The MCP app's lifespan (its session manager, a task group)
    runs in one task of its own from the server's start to its stop, as anyio needs it entered
    and left in the same task."""

    def __init__(self, service: Any):
        self.service = service
        self.app: ASGIApp | None = None
        self.unavailable: str | None = None
        self._built = threading.Event()
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        threading.Thread(target=self._build, name="ump-mcp-loader", daemon=True).start()

    def _build(self) -> None:
        try:
            self.app, self.unavailable = _load_mcp(self.service)
        finally:
            self._built.set()

    def start(self) -> None:
        self._ready, self._stop = asyncio.Event(), asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        assert self._ready is not None and self._stop is not None
        try:
            await anyio.to_thread.run_sync(self._built.wait)
            router = getattr(self.app, "router", None)
            if router is not None and getattr(router, "lifespan_context", None) is not None:
                async with router.lifespan_context(self.app):
                    self._ready.set()
                    await self._stop.wait()
        except Exception as exc:  # noqa: BLE001 - the binding fails, HTTP stays up
            log.exception("the MCP binding failed to start")
            self.app, self.unavailable = None, f"the MCP binding failed to start: {type(exc).__name__}: {exc}"
        finally:
            self._ready.set()

    async def stop(self) -> None:
        if self._task is None or self._stop is None:
            return
        self._stop.set()
        with contextlib.suppress(Exception):
            await self._task

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self._ready is not None:
            await self._ready.wait()
        else:  # served without its lifespan: the app, at least, once built
            await anyio.to_thread.run_sync(self._built.wait)
        if self.app is None:
            response = error_response("not_found", f"no MCP endpoint here: {self.unavailable}")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def wait_loaded(self, timeout: float | None = None) -> bool:
        return self._built.wait(timeout)


def _load_mcp(service: Any) -> tuple[ASGIApp | None, str | None]:
    """The MCP streamable-HTTP app, or (None, why not)."""
    name = f"{__package__}.mcp_app"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None, "the MCP binding (reference_impl/ump/mcp_app.py) is not installed"
        log.exception("cannot import the MCP binding")
        return None, f"the MCP binding failed to load: {exc}"
    except Exception as exc:  # a broken binding must not take HTTP down with it
        log.exception("cannot import the MCP binding")
        return None, f"the MCP binding failed to load: {type(exc).__name__}: {exc}"
    factory = getattr(module, "streamable_http_app", None)
    if factory is None:
        return None, "reference_impl/ump/mcp_app.py has no streamable_http_app(service)"
    try:
        return factory(service), None
    except Exception as exc:
        log.exception("cannot build the MCP streamable-HTTP app")
        return None, f"the MCP binding failed to start: {type(exc).__name__}: {exc}"


def _upp_route(upp: Any) -> Route:
    """POST /upp: UPP's JSON-RPC over HTTP, answered by `upp.handle_text` (which never raises)."""
    from memconform.reference_impl.upp import rpc

    def answer(message: dict[str, Any], status: int, headers: dict[str, str] | None = None) -> Response:
        return Response(rpc.encode(rpc.dumps(message), upp.fault), status_code=status, headers=headers,
                        media_type=JSON_TYPE)

    async def endpoint(request: Request) -> Response:
        if request.method != "POST":
            return answer(rpc.error_response(None, rpc.INVALID_REQUEST, f"Invalid Request: {request.method} is not "
                                              "allowed on /upp; POST one JSON-RPC message"), 405, {"Allow": "POST"})
        try:
            raw = await _read_body(request)
        except HttpError:
            return answer(rpc.error_response(None, rpc.INVALID_REQUEST, f"Invalid Request: the message exceeds "
                                              f"the limit of {MAX_BODY} bytes"), 413)
        if getattr(getattr(upp, "policy", None), "http_chunked_bodies", "read") == "ignored" \
                and "content-length" not in request.headers:
            raw = b""  # fault upp-chunked-body-ignored: only a Content-Length body is read
        try:
            text = await run_in_threadpool(upp.handle_text, raw)
        except Exception:  # handle_text never raises; if it ever does, still no 500 and no traceback
            log.exception("UPP handle_text raised")
            return answer(rpc.error_response(None, rpc.INTERNAL_ERROR, "Internal error"), 200)
        if text is None:
            return Response(status_code=204)
        return Response(rpc.encode(text, upp.fault), status_code=_upp_status(upp, text), media_type=JSON_TYPE)

    class _Asgi:
        # An ASGI app, not a function: starlette then routes every method here (a function
        # endpoint would default to GET), so the non-POST ones get the JSON-RPC 405 above.
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            response = await endpoint(Request(scope, receive))
            await response(scope, receive, send)

    return Route("/upp", _Asgi())


def build_app(service: Any, *, upp: Any = None, omf: Any = None, mcp: bool = True, keepalive: float = 15.0,
              poll: float = 0.25, routes: Sequence[Any] = ()) -> Starlette:
    """The HTTP binding over `service`, plus POST /upp over the UPP service `upp` when given,
    POST /omf/export|import|preview over the OMF engine `omf` when given (docs/omf.md), and the
    `routes` of the specs that plug in their own (suite/specs.py, `reference`).
    `keepalive`: seconds between SSE keep-alive comments;
    `poll`: how long one `Subscription.next` call may wait (bounds how fast a stream notices
    that its client left or the server stops).

    `app.state.closing` (a threading.Event) ends every open SSE stream when set; `serve` sets it
    before stopping uvicorn."""
    plugged = list(routes)
    policy = getattr(service, "policy", None)
    closing = threading.Event()
    sse_limiter = anyio.CapacityLimiter(256)  # subscriptions never starve the operation threadpool

    def endpoint(fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def run(request: Request) -> Response:
            try:
                return await fn(request)
            except HttpError as exc:
                return error_response(exc.code, exc.message, exc.status, exc.headers)
            except UmpError as exc:
                if policy is not None and policy.http_error_status == "200":
                    return error_response(exc.code, exc.message, 200)
                invalid = exc.code == "invalid_record" and policy is not None
                return error_response(exc.code, exc.message, policy.http_invalid_status if invalid else None)
            except Exception:
                log.exception("unexpected error in %s %s", request.method, request.url.path)
                return error_response("internal", "internal server error (logged on the server)", 500)
        run.__name__ = fn.__name__
        return run

    async def call(operation: str, request: Request, payload: Any) -> Response:
        version = _version(service, request)
        token = _token(request, operation)
        result = await run_in_threadpool(lambda: service.handle(operation, payload, version=version, token=token))
        created = operation == "revise" or (operation == "remember" and isinstance(result, dict)
                                            and result.get("result") == "created")
        return json_response(result, policy.http_created_status if created and policy is not None else 200)

    def posted(operation: str) -> Callable[[Request], Any]:
        async def handler(request: Request) -> Response:
            _version(service, request)  # an unknown version is refused before the body is read
            payload = await _read_json(request)
            if not isinstance(payload, dict):  # §3: requests are JSON objects
                raise HttpError(400, "invalid_record", f"the request body must be a JSON object, not "
                                                       f"{a_json_type(payload)}")
            return await call(operation, request, payload)
        handler.__name__ = operation
        return endpoint(handler)

    @endpoint
    async def capabilities(request: Request) -> Response:
        return await call("capabilities", request, {})

    @endpoint
    async def well_known(request: Request) -> Response:
        # behind a token only under the variant capabilities-need-token, as capabilities is
        service.admit_discovery(_token(request, "capabilities"))
        base = str(request.base_url).rstrip("/")
        return json_response(await run_in_threadpool(service.well_known, base))

    @endpoint
    async def get_memory(request: Request) -> Response:
        _version(service, request)
        return await call("get", request, {"id": _memory_id(request)})

    @endpoint
    async def openapi(request: Request) -> Response:
        return Response(openapi_document(), media_type=JSON_TYPE)

    @endpoint
    async def subscribe(request: Request) -> Response:
        version = _version(service, request)
        token = _token(request, "subscribe")
        scope = {k: v for k, v in request.query_params.items() if k in _SUBSCRIBE_SCOPE}
        sub_request = {"scope": scope} if scope else None
        sub = await run_in_threadpool(lambda: service.subscribe(version=version, token=token, request=sub_request))
        named = getattr(policy, "subscribe_event_names", "event") != "data"
        sse_frame = wrapped(service, "ump", "http.sse_frame", _sse_frame)
        closed = threading.Lock()
        done = []

        def close() -> None:
            with closed:
                if done:
                    return
                done.append(True)
            try:
                sub.close()
            except Exception:
                log.exception("closing a subscription failed")

        hello = getattr(policy, "sse_hello", "comment")

        async def stream() -> AsyncIterator[str]:
            yield 'event: ready\ndata: {"status": "ready"}\n\n' if hello == "event" else ": ok\n\n"
            if request.method == "HEAD":
                return
            last = time.monotonic()
            while not closing.is_set() and not done:
                try:
                    event = await anyio.to_thread.run_sync(sub.next, poll, limiter=sse_limiter)
                    frame = sse_frame(event, named) if event is not None else None
                except Exception:  # the headers are out: end the stream, never a half-written frame
                    log.exception("subscription failed; ending the stream")
                    return
                now = time.monotonic()
                if frame is None:
                    if now - last >= keepalive:
                        yield ": keep-alive\n\n"
                        last = now
                    continue
                yield frame
                last = now

        return _SSEResponse(stream(), close, media_type=SSE_TYPE,
                            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def http_exception(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return error_response("not_found", f"no such route: {request.method} {request.url.path}")
        if exc.status_code == 405:
            allow = (exc.headers or {}).get("Allow", "")
            return error_response("unsupported", f"{request.method} is not allowed on {request.url.path}"
                                  f"{' (allowed: ' + allow + ')' if allow else ''}", 405,
                                  {"Allow": allow} if allow else None)
        code = "invalid_record" if exc.status_code < 500 else "internal"
        return error_response(code, str(exc.detail), exc.status_code)

    async def unexpected(request: Request, exc: Exception) -> Response:
        log.error("unhandled error in %s %s", request.method, request.url.path, exc_info=exc)
        return error_response("internal", "internal server error (logged on the server)", 500)

    routes = [
        Route("/ump/capabilities", capabilities, methods=["GET"]),
        Route("/.well-known/ump.json", well_known, methods=["GET"]),
        Route("/ump/recall", posted("recall"), methods=["POST"]),
        Route("/ump/remember", posted("remember"), methods=["POST"]),
        Route("/ump/memory/{id:path}", get_memory, methods=["GET"]),
        Route("/ump/revise", posted("revise"), methods=["POST"]),
        Route("/ump/forget", posted("forget"), methods=["POST"]),
        Route("/ump/feedback", posted("feedback"), methods=["POST"]),
        Route("/ump/rehydrate", posted("rehydrate"), methods=["POST"]),
        Route("/ump/subscribe", subscribe, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    if upp is not None:
        routes.append(_upp_route(upp))
    if omf is not None:
        from memconform.reference_impl.omf.http import omf_routes

        routes.extend(omf_routes(omf))

    routes = wrapped(service, "ump", "http.routes", routes)
    routes.extend(plugged)

    lazy_mcp = _LazyMcp(service) if mcp else None
    if lazy_mcp is not None:
        # The MCP app routes its own /mcp path: hand it the request unchanged (a Mount would
        # strip the prefix and redirect /mcp to /mcp/).
        routes.append(Route("/mcp", lazy_mcp))
    else:
        @endpoint
        async def no_mcp(request: Request) -> Response:
            return error_response("not_found", "no MCP endpoint here: disabled")
        routes.append(Route("/mcp", no_mcp, methods=["GET", "POST", "DELETE"]))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        closing.clear()
        try:
            if lazy_mcp is not None:
                lazy_mcp.start()
            yield
        finally:
            closing.set()
            if lazy_mcp is not None:
                await lazy_mcp.stop()

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: http_exception, Exception: unexpected})
    app.router.redirect_slashes = False
    app.state.closing = closing
    app.state.service = service
    app.state.upp = upp
    app.state.omf = omf
    app.state.mcp = lazy_mcp
    return wrapped(service, "ump", "http.app", app)
