"""OMF over HTTP (docs/omf.md, "HTTP"): `POST /omf/export` with a JSON body of the flags,
`POST /omf/import?…` and `POST /omf/preview?…` with the document as the body.

Every answer in the protocol, whatever its status, comes back as an `OmfRun`; `TargetError` when
no answer came (connection refused, timeout, a broken connection) or one over 16 MiB
(`http_session.MAX_BODY`, docs/live-ump.md "Broken targets"), and `NotTheProtocol` for an answer
that is not OMF at all (`targets/answers.py`): a 2xx whose body is not JSON (an HTML page where a
document or a result is due), a 5xx without OMF's `{"error": …}`.
"""

from __future__ import annotations

import json
from typing import Any

from memconform.suite.omf.client import OmfRun
from memconform.targets.answers import http_answer
from memconform.targets.descriptor import render_value
from memconform.targets.http_session import HttpSession

_SHOWN = 200  # characters of a sent body kept in OmfRun.sent


def _summary(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return f"{len(data)} bytes {text[:_SHOWN]!r}" + ("…" if len(text) > _SHOWN else "")


class OmfHttpTarget:
    """`OmfTarget` at `base_url` (the routes live under `{base_url}/omf/`)."""

    binding = "http"

    def __init__(self, base_url: str, *, timeout: float = 10.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self._http = HttpSession(timeout=self.timeout)

    def _post(self, operation: Any, path: str, data: bytes, params: dict[str, str]) -> OmfRun:
        url = f"{self.base_url}{path}"
        request = self._http.request("POST", url, content=data, params=params,
                                     headers={"Content-Type": "application/json"})
        sent = f"POST {request.url} body {_summary(data)}"
        response = self._http.send(request, f"OMF {operation}: {sent}")
        body = response.content.decode("utf-8", "replace")
        try:
            result, parsed = (json.loads(body) if body.strip() else None), True
        except ValueError:
            result, parsed = None, False
        http_answer(f"OMF {operation}: {sent}", response.status_code, response.headers.get("content-type"),
                    response.content, body_ok=parsed and result is not None,
                    envelope=isinstance(result, dict) and "error" in result)
        ok = 200 <= response.status_code < 300
        return OmfRun(operation=operation, sent=sent, ok=ok, http_status=response.status_code, result=result,
                      document=body if operation == "export" and ok else None, stdout=body,
                      error=None if ok else (body.strip() or f"HTTP {response.status_code}, empty body"))

    def export(self, tenant: str, *, project: str | None = None, include_history: bool | None = None,
               include_superseded: bool | None = None, include_expired: bool | None = None) -> OmfRun:
        body: dict[str, Any] = {"tenant_id": tenant}
        for key, value in (("project_id", project), ("include_history", include_history),
                           ("include_superseded", include_superseded), ("include_expired", include_expired)):
            if value is not None:  # left out: the implementation's default
                body[key] = value
        return self._post("export", "/omf/export", json.dumps(body).encode("utf-8"), {})

    def import_document(self, tenant: str, document: str | bytes, *, include_archived: bool | None = None,
                        fuzzy_threshold: float | None = None, dry_run: bool = False) -> OmfRun:
        data = document.encode("utf-8") if isinstance(document, str) else bytes(document)
        params = {"tenant_id": tenant}
        if include_archived is not None:
            params["include_archived"] = render_value(include_archived)
        if fuzzy_threshold is not None:
            params["fuzzy_threshold"] = render_value(fuzzy_threshold)
        if dry_run:
            return self._post("preview", "/omf/preview", data, params)
        return self._post("import", "/omf/import", data, params)

    def close(self) -> None:
        self._http.close()
