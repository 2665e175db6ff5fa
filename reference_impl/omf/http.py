"""OMF over HTTP (docs/omf.md): POST /omf/export, /omf/import, /omf/preview on the reference server.

export takes a JSON object {tenant_id, project_id?, include_history?, include_superseded?,
include_expired?} and answers the OMF document; import and preview take the document as the body
and their options in the query string. A document (or request) that fails validation: 400
{"error": {"code": "validation", "message"}}; a body over the limit (`MAX_BODY`, 16 MiB unless
`memconform serve --omf-max-body` says otherwise): 413 {"error": {"code": "too_large", "message"}};
never a 500 with a traceback.

The body is read as it arrives and refused as soon as it is known to be too large: a Content-Length over
the limit before a byte of it is read, a chunked body the moment its count passes the limit; the
connection is then closed, since the rest of an oversized body is never read. A parsed document costs
many times its bytes (a dict per item, then a row per item in the engine's transaction: about 25x for a
document of tiny items, 7x for items of a few hundred bytes; docs/omf.md), so the limit is what bounds a
request's memory, and documents are parsed and applied one at a time so that concurrent requests do not
multiply it. The engine is synchronous (one lock around sqlite): parsing and every engine call run in the
threadpool, off the event loop that serves UMP and UPP too.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memconform.reference_impl.omf.engine import OmfEngine, ValidationError

log = logging.getLogger("memconform.reference_impl.omf.http")

JSON_TYPE = "application/json; charset=utf-8"
#: OMF documents are whole memory stores: a larger limit than the 1 MiB of UMP requests, but one whose
#: parsed form (up to ~25x, see above) still fits a small machine.
DEFAULT_MAX_BODY = 16 << 20
#: Read at each request, so `set_max_body` (memconform serve --omf-max-body) and tests can change it.
MAX_BODY = DEFAULT_MAX_BODY


def set_max_body(limit: int) -> None:
    """The body limit of every OMF route in this process, in bytes (at least 1)."""
    global MAX_BODY
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"the OMF body limit must be a positive number of bytes, not {limit!r}")
    MAX_BODY = limit


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False),
                    status_code=status, media_type=JSON_TYPE, headers=headers)


def _too_large(limit: int) -> _Refused:
    return _Refused(413, "too_large", f"the request body exceeds the OMF limit of {limit} bytes "
                                      "(memconform serve --omf-max-body)")


async def _body(request: Request) -> bytearray:
    limit = MAX_BODY  # one value for the whole read, should the setting change meanwhile
    declared = request.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > limit:
        raise _too_large(limit)
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:  # a chunked body, or one longer than it declared
            raise _too_large(limit)
    return data


def _json(raw: bytes | bytearray) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise ValidationError(f"the body is not valid JSON: {reason}") from None


def _flag(value: Any, name: str) -> bool | None:
    """A boolean option: JSON true/false in the export body, "true"/"false" in a query string."""
    if value is None or isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValidationError(f"{name} must be true or false")


def _import_options(request: Request) -> dict[str, Any]:
    q = request.query_params
    tenant = q.get("tenant_id")
    if not tenant:
        raise ValidationError("the query parameter tenant_id is required")
    include_archived = _flag(q.get("include_archived"), "include_archived")
    fuzzy: float | None = None
    if q.get("fuzzy_threshold") not in (None, ""):
        try:
            fuzzy = float(q["fuzzy_threshold"])
        except ValueError:
            raise ValidationError("fuzzy_threshold must be a number between 0 and 1") from None
    return {"tenant": tenant, "include_archived": True if include_archived is None else include_archived,
            "fuzzy_threshold": fuzzy}


def omf_routes(engine: OmfEngine) -> list[Route]:
    # One parsed document at a time: the engine serialises its work anyway, and this keeps a burst of
    # concurrent uploads from holding several parsed documents at once.
    one_document = asyncio.Lock()

    def guarded(fn: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                return await fn(request)
            except _Refused as exc:
                # The rest of the body stays unread: the connection cannot be reused.
                return _error(exc.status, exc.code, exc.message,
                              {"Connection": "close"} if exc.status == 413 else None)
            except ValidationError as exc:
                return _error(400, "validation", str(exc))
            except Exception:
                log.exception("unexpected error in %s %s", request.method, request.url.path)
                return _error(500, "internal", "internal server error (logged on the server)")
        run.__name__ = fn.__name__
        return run

    @guarded
    async def export(request: Request) -> Response:
        body = await run_in_threadpool(_json, await _body(request))
        if not isinstance(body, dict):
            raise ValidationError("the request body must be a JSON object {tenant_id, ...}")
        project = body.get("project_id")
        if project is not None and not isinstance(project, str):
            raise ValidationError("project_id must be a string")
        flags: dict[str, Any] = {"project_id": project}
        for name in ("include_history", "include_superseded", "include_expired"):
            value = _flag(body.get(name), name)
            if value is not None:
                flags[name] = value

        def build() -> str:
            buf = io.StringIO()
            engine.export(buf, body.get("tenant_id"), **flags)
            return buf.getvalue()

        return Response(await run_in_threadpool(build), media_type=JSON_TYPE)

    def importer(preview: bool) -> Any:
        async def handler(request: Request) -> Response:
            options = _import_options(request)
            raw = [await _body(request)]
            run = engine.preview if preview else engine.import_document

            def parse_and_run() -> Any:
                # The raw bytes are dropped once parsed, so they are not held beside the engine's rows.
                document = _json(raw.pop())
                return run(options["tenant"], document, include_archived=options["include_archived"],
                           fuzzy_threshold=options["fuzzy_threshold"])

            async with one_document:
                result = await run_in_threadpool(parse_and_run)
            return Response(json.dumps(result, ensure_ascii=False), media_type=JSON_TYPE)
        handler.__name__ = "preview" if preview else "import_"
        return guarded(handler)

    return [Route("/omf/export", export, methods=["POST"]),
            Route("/omf/import", importer(False), methods=["POST"]),
            Route("/omf/preview", importer(True), methods=["POST"])]
