"""OAMS's REST binding (§3) as starlette routes under /v1/oams, and the JSON-RPC endpoint as one
route (the spec names none; the reference serves it at POST /v1/oams/rpc).

  PUT    /v1/oams/memories/{namespace}/{key}   STORE (body: the memory)      → 200 the stored memory
  POST   /v1/oams/recall                       RECALL                        → 200 [memories]
  GET    /v1/oams/memories/{namespace}?cursor=&limit=&since=&tags=  LIST      → 200 {memories, next_cursor}
  DELETE /v1/oams/memories/{namespace}/{key}   FORGET                        → 204, no body
  POST   /v1/oams/memories/batch               BATCH_STORE {memories}        → 200 [memories]
  POST   /v1/oams/consolidate                  (added) {namespace, strategy?} → 200 [memories made]

Path segments are percent-decoded one by one from the raw path, so a namespace's `:` may come raw
or as %3A, and a `/` inside a segment (%2F) stays inside it. Every error is §3's shape
`{"error": {"code", "message", "data"}}` with a 4xx status (reserved codes: -32001/-32002 → 404,
-32003 → 400, -32004 → 413, -32005 → 403); an unknown path -32601 with 404, a wrong method 405,
a body that is not JSON -32700 with 400; nothing unexpected reaches the wire as a 500 page."""

from __future__ import annotations

import json
import logging
import urllib.parse
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memconform.reference_impl.oams.engine import OamsError, OamsService, invalid
from memconform.reference_impl.oams.rpc import handle_rpc

log = logging.getLogger("memconform.reference_impl.oams.http")

PREFIX = "/v1/oams"
RPC_PATH = "/v1/oams/rpc"
MAX_BODY = 8 * 1024 * 1024
STATUS = {-32001: 404, -32002: 404, -32003: 400, -32004: 413, -32005: 403, -32601: 404, -32700: 400,
          -32600: 400, -32602: 400, -32603: 500}


class RestBinding:
    """The REST adapter of one service; its small seams (`answer`, `error`, `forget_answer`) are
    what a fault of the binding wraps (keys `rest.<method>`)."""

    def __init__(self, service: OamsService):
        self.service = service
        from memconform.reference_impl.oams.policy import configure

        configure(self, getattr(service, "_fault_obj", None) or service.fault, (), part="rest")

    def answer(self, value: Any, status: int = 200) -> Response:
        return JSONResponse(value, status_code=status)

    def error(self, exc: OamsError) -> Response:
        return JSONResponse(exc.body(), status_code=STATUS.get(exc.code, 400))

    @staticmethod
    def linked_page(request: Request, page: dict[str, Any]) -> Response:
        """A LIST page as a bare array, the next page's URL in an RFC 8288 Link header."""
        memories = next(v for v in page.values() if isinstance(v, list))
        cursor = next((v for k, v in page.items() if not isinstance(v, list)), None)
        headers = {}
        if cursor:
            query = [(k, v) for k, v in request.query_params.multi_items() if k != "cursor"] + [("cursor", cursor)]
            raw = (request.scope.get("raw_path") or request.scope["path"].encode("utf-8")).decode("latin-1")
            headers["Link"] = f'<{raw.split("?", 1)[0]}?{urllib.parse.urlencode(query)}>; rel="next"'
        return JSONResponse(memories, headers=headers)

    def forget_answer(self) -> Response:
        return Response(status_code=204)

    async def dispatch(self, request: Request) -> Response:
        try:
            return await self._dispatch(request)
        except OamsError as exc:
            return self.error(exc)
        except Exception:
            log.exception("OAMS REST: unexpected failure")
            return self.error(OamsError(-32603, "internal error"))

    async def _body(self, request: Request) -> Any:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            raise OamsError(-32004, f"quota exceeded: body over {MAX_BODY} bytes")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_BODY:
                raise OamsError(-32004, f"quota exceeded: body over {MAX_BODY} bytes")
        try:
            return json.loads(bytes(data).decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise OamsError(-32700, "parse error: the body is not JSON") from None

    async def _dispatch(self, request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
        path = raw.decode("latin-1").split("?", 1)[0]
        if not path.startswith(PREFIX + "/"):
            raise OamsError(-32601, f"no OAMS endpoint at {path[:200]}")
        try:
            parts = [urllib.parse.unquote(p, errors="strict") for p in path[len(PREFIX) + 1:].split("/")]
        except UnicodeDecodeError:
            raise invalid("a path segment is not percent-encoded UTF-8") from None
        method = request.method
        svc = self.service
        if parts == ["recall"]:
            self._allow(method, "POST")
            body = await self._body(request)
            return self.answer(svc.recall(body))
        if parts == ["consolidate"]:
            self._allow(method, "POST")
            body = await self._body(request)
            if not isinstance(body, dict):
                raise invalid("the body must be an object {namespace, strategy?}")
            return self.answer(svc.consolidate(body.get("namespace"), body.get("strategy")))
        if parts == ["memories", "batch"] and method == "POST":
            body = await self._body(request)
            if not isinstance(body, dict):
                raise invalid("the body must be an object {memories: [...]}")
            return self.answer(svc.batch_store(body.get("memories")))
        if len(parts) == 2 and parts[0] == "memories" and parts[1]:
            self._allow(method, "GET")
            q = request.query_params
            tags = q.getlist("tags")
            tags_value: Any = None if not tags else [t for v in tags for t in v.split(",") if t]
            page = svc.list(parts[1], q.get("cursor"), q.get("limit"), q.get("since"), tags_value)
            if svc.policy.rest_list_paging == "link":
                return self.linked_page(request, page)
            return self.answer(page)
        if len(parts) == 3 and parts[0] == "memories" and parts[1] and parts[2]:
            self._allow(method, "PUT", "DELETE")
            if method == "DELETE":
                svc.forget(parts[1], parts[2])
                return self.forget_answer()
            body = await self._body(request)
            return self.answer(svc.store(body, parts[1], parts[2]))
        raise OamsError(-32601, f"no OAMS endpoint at {method} {path[:200]}")

    @staticmethod
    def _allow(method: str, *allowed: str) -> None:
        if method not in allowed:
            raise _MethodNotAllowed(allowed)


class _MethodNotAllowed(OamsError):
    def __init__(self, allowed: tuple[str, ...]):
        super().__init__(-32601, f"method not allowed here (allowed: {', '.join(allowed)})", {"allowed": list(allowed)})


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is beyond a double")
    return value


def binding(service: OamsService) -> RestBinding:
    b = getattr(service, "_rest_binding", None)
    if b is None:
        b = service._rest_binding = RestBinding(service)  # type: ignore[attr-defined]
    return b


def routes(service: OamsService) -> list[Route]:
    """The REST routes (everything under /v1/oams/ but the JSON-RPC path)."""
    rest = binding(service)

    async def not_allowed(request: Request) -> Response:
        response = await rest.dispatch(request)
        if response.status_code == 404 and b'"allowed"' in bytes(response.body):
            response.status_code = 405
        return response

    return [Route(PREFIX + "/{rest:path}", not_allowed, methods=["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD"])]


def rpc_route(service: OamsService, path: str = RPC_PATH) -> Route:
    """JSON-RPC 2.0 over HTTP: one message per POST; 204 when nothing is answered (notifications)."""
    async def rpc(request: Request) -> Response:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            answer = json.dumps({"jsonrpc": "2.0", "error": {"code": -32600, "message": "message too large"},
                                 "id": None}).encode()
            return Response(answer, media_type="application/json")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_BODY:
                answer = json.dumps({"jsonrpc": "2.0", "error": {"code": -32600, "message": "message too large"},
                                     "id": None}).encode()
                return Response(answer, media_type="application/json")
        answer = handle_rpc(service, bytes(data))
        if answer is None:
            return Response(status_code=204)
        return Response(answer, media_type="application/json")

    return Route(path, rpc, methods=["POST"])


def app(service: OamsService, *, rpc_path: str | None = RPC_PATH) -> Any:
    """A small Starlette app serving OAMS alone (REST + JSON-RPC): tests, `start_in_thread(app=…)`."""
    from starlette.applications import Starlette

    rs = ([rpc_route(service, rpc_path)] if rpc_path else []) + routes(service)
    return Starlette(routes=rs)
