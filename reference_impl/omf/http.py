"""OMF over HTTP (docs/omf.md): POST /omf/export, /omf/import, /omf/preview on the reference server.

export takes a JSON object {tenant_id, project_id?, include_history?, include_superseded?,
include_expired?} and answers the OMF document; import and preview take the document as the body
and their options in the query string. A document (or request) that fails validation: 400
{"error": {"code": "validation", "message"}}; a body over `MAX_BODY`: 413; never a 500 with a
traceback. The engine is synchronous (one lock around sqlite): every call runs in the threadpool.
"""

from __future__ import annotations

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
#: OMF documents are whole memory stores: a larger limit than the 1 MiB of UMP requests.
MAX_BODY = 64 << 20


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False),
                    status_code=status, media_type=JSON_TYPE, headers=headers)


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.strip().isdigit() and int(declared) > MAX_BODY:
        raise _Refused(413, "too_large", f"the request body exceeds the limit of {MAX_BODY} bytes")
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise _Refused(413, "too_large", f"the request body exceeds the limit of {MAX_BODY} bytes")
    return bytes(data)


def _json(raw: bytes) -> Any:
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
    def guarded(fn: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                return await fn(request)
            except _Refused as exc:
                return _error(exc.status, exc.code, exc.message)
            except ValidationError as exc:
                return _error(400, "validation", str(exc))
            except Exception:
                log.exception("unexpected error in %s %s", request.method, request.url.path)
                return _error(500, "internal", "internal server error (logged on the server)")
        run.__name__ = fn.__name__
        return run

    @guarded
    async def export(request: Request) -> Response:
        body = _json(await _body(request))
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
            document = _json(await _body(request))
            run = engine.preview if preview else engine.import_document
            result = await run_in_threadpool(lambda: run(options["tenant"], document,
                                                         include_archived=options["include_archived"],
                                                         fuzzy_threshold=options["fuzzy_threshold"]))
            return Response(json.dumps(result, ensure_ascii=False), media_type=JSON_TYPE)
        handler.__name__ = "preview" if preview else "import_"
        return guarded(handler)

    return [Route("/omf/export", export, methods=["POST"]),
            Route("/omf/import", importer(False), methods=["POST"]),
            Route("/omf/preview", importer(True), methods=["POST"])]
