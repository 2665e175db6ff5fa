"""memoturn's REST binding (api-rest.md, the agent-memory routes) as starlette routes:

  POST   /v1/memory/{ns}/{profile}/memories        ingest {memories}   → 201 {results, txid}
  GET    /v1/memory/{ns}/{profile}/memories/{id}   get                 → 200 the record
  DELETE /v1/memory/{ns}/{profile}/memories/{id}   forget              → 200 {deleted, txid}
  POST   /v1/memory/{ns}/{profile}/recall          recall              → 200 {memories, txid}
  GET    /v1/memory/{ns}/{profile}/sessions        list sessions       → 200 {sessions, txid}
  DELETE /v1/memory/{ns}/{profile}/sessions/{sid}  end session         → 200 {session_id, deleted, txid}

Path segments are percent-decoded one by one from the raw path, so an id or a session id holding
`/` (as %2F) stays one segment. Every error is errors.md's envelope {"error", "code"} with the
code's status: an unknown path is 404 not_found, a wrong method 405 (with Allow), a body that is
not JSON 400 invalid_request, a body over 32 MiB 413 payload_too_large; nothing unexpected
reaches the wire as a traceback (500 internal, logged). A response that knows its profile's
txid also carries it as the `Memoturn-Txid` header (api-rest.md)."""

from __future__ import annotations

import json
import logging
import urllib.parse
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memconform.reference_impl.memoturn.engine import MemoturnError, MemoturnService, invalid, refusal

log = logging.getLogger("memconform.reference_impl.memoturn.http")

PREFIX = "/v1/memory"
#: errors.md / api-rest.md: "Bodies over 32 MiB return 413".
MAX_BODY = 32 * 1024 * 1024


class RestBinding:
    """The REST adapter of one service; its small seams (`answer`, `error`, `ingest_answer`,
    `forget_answer`) are what a fault of the binding wraps (keys `http.<method>`)."""

    def __init__(self, service: MemoturnService):
        self.service = service
        from memconform.reference_impl.memoturn.policy import configure

        configure(self, getattr(service, "_fault_obj", None) or service.fault, (), part="http")

    def answer(self, value: Any, status: int = 200) -> Response:
        headers = {"Memoturn-Txid": str(value["txid"])} if isinstance(value, dict) and "txid" in value else None
        return JSONResponse(value, status_code=status, headers=headers)

    def error(self, exc: MemoturnError, headers: dict[str, str] | None = None) -> Response:
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    def ingest_answer(self, value: dict[str, Any]) -> Response:
        return self.answer(value, self.service.policy.ingest_status)

    def forget_answer(self, value: dict[str, Any]) -> Response:
        if self.service.policy.forget_status == 204:
            return Response(status_code=204, headers={"Memoturn-Txid": str(value["txid"])})
        return self.answer(value, self.service.policy.forget_status)

    async def dispatch(self, request: Request) -> Response:
        try:
            return await self._dispatch(request)
        except _MethodNotAllowed as exc:
            return self.error(exc, {"Allow": ", ".join(exc.allowed)})
        except MemoturnError as exc:
            return self.error(exc)
        except Exception:
            log.exception("memoturn REST: unexpected failure")
            return self.error(refusal("internal", "internal error"))

    async def _body(self, request: Request) -> Any:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            raise refusal("payload_too_large", f"the body is over {MAX_BODY} bytes")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_BODY:
                raise refusal("payload_too_large", f"the body is over {MAX_BODY} bytes")
        try:
            return json.loads(bytes(data).decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
        except (ValueError, UnicodeDecodeError, RecursionError):
            raise invalid("the body is not JSON") from None

    async def _dispatch(self, request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
        path = raw.decode("latin-1").split("?", 1)[0]
        if not path.startswith(PREFIX + "/"):
            raise refusal("not_found", f"no memoturn route at {path[:200]}")
        try:
            parts = [urllib.parse.unquote(p, errors="strict") for p in path[len(PREFIX) + 1:].split("/")]
        except UnicodeDecodeError:
            raise invalid("a path segment is not percent-encoded UTF-8") from None
        method = request.method
        svc = self.service
        if len(parts) == 1 and parts[0]:  # api-rest.md: GET /v1/memory/{ns} lists the namespace's profiles
            self._allow(method, "GET")
            return self.answer(svc.profiles(parts[0]))
        if len(parts) < 3 or not all(parts):
            raise refusal("not_found", f"no memoturn route at {method} {path[:200]}")
        ns, profile, rest = parts[0], parts[1], parts[2:]
        if rest == ["memories"]:
            self._allow(method, "POST")
            return self.ingest_answer(svc.ingest(ns, profile, await self._body(request)))
        if rest == ["recall"]:
            self._allow(method, "POST")
            return self.answer(svc.recall(ns, profile, await self._body(request)))
        if rest == ["sessions"]:
            self._allow(method, "GET")
            return self.answer(svc.sessions(ns, profile))
        if len(rest) == 2 and rest[0] == "memories":
            self._allow(method, "GET", "DELETE")
            if method == "DELETE":
                return self.forget_answer(svc.forget(ns, profile, rest[1]))
            record = svc.get(ns, profile, rest[1])
            response = self.answer(record)
            response.headers["Memoturn-Txid"] = str(svc.txid(ns, profile))
            return response
        if len(rest) == 2 and rest[0] == "sessions":
            self._allow(method, "DELETE")
            return self.answer(svc.end_session(ns, profile, rest[1]))
        raise refusal("not_found", f"no memoturn route at {method} {path[:200]}")

    @staticmethod
    def _allow(method: str, *allowed: str) -> None:
        if method not in allowed:
            raise _MethodNotAllowed(allowed)


class _MethodNotAllowed(MemoturnError):
    # errors.md has no code for a wrong method; the request is malformed, so invalid_request, under
    # HTTP's own 405.
    def __init__(self, allowed: tuple[str, ...]):
        super().__init__(405, "invalid_request", f"method not allowed here (allowed: {', '.join(allowed)})")
        self.allowed = allowed


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is beyond a double")
    return value


def binding(service: MemoturnService) -> RestBinding:
    b = getattr(service, "_rest_binding", None)
    if b is None:
        b = service._rest_binding = RestBinding(service)  # type: ignore[attr-defined]
    return b


def routes(service: MemoturnService) -> list[Route]:
    """The REST routes: everything under /v1/memory/, dispatched by one handler so that every
    answer (a wrong method, an unknown path included) is the envelope."""
    rest = binding(service)
    return [Route(PREFIX + "/{rest:path}", rest.dispatch, methods=["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD"])]


def app(service: MemoturnService) -> Any:
    """A small Starlette app serving memoturn alone: tests, `start_in_thread(app=…)`."""
    from starlette.applications import Starlette

    return Starlette(routes=routes(service))
