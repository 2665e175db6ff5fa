"""OMF over the reference server's HTTP binding, for real: `build_app(service, omf=...)` under uvicorn
in a thread, and `memconform serve --omf-db` as a child process. 200 answers, 400 validation errors,
413 over the limit, 405 for other methods, never a 500."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from memconform.reference_impl.omf import http as omf_http
from memconform.reference_impl.ump.serve import RunningServer
from memconform.reference_impl.ump.service import UmpService


def document(*contents: str, app: str = "memd", **lifecycle: Any) -> dict[str, Any]:
    memd: dict[str, Any] = {"v": 1}
    if lifecycle:
        memd["lifecycle"] = lifecycle
    return {"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "source": {"app": app},
            "memories": [{"content": c, "extensions": {"memd": memd}} for c in contents]}


@pytest.fixture(scope="module")
def server(omf_server: RunningServer) -> RunningServer:
    return omf_server  # conftest.py: the reference server with OMF


def post(server: RunningServer, route: str, body: Any, **params: str) -> httpx.Response:
    content = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return httpx.post(f"{server.base_url}/omf/{route}", params=params, content=content, timeout=30)


def test_import_preview_export(server: RunningServer) -> None:
    d = document("one", "two", "two")
    preview = post(server, "preview", d, tenant_id="h1")
    assert preview.status_code == 200 and preview.headers["content-type"].startswith("application/json")
    assert preview.json() == {"total": 3, "to_import": 2, "duplicates": 1, "filtered": 0, "unscoped": 2,
                              "by_project": {}}
    assert post(server, "import", d, tenant_id="h1").json() == {"imported": 2, "duplicates": 1, "skipped": 0}
    exported = post(server, "export", {"tenant_id": "h1"})
    assert exported.status_code == 200
    assert [i["content"] for i in exported.json()["memories"]] == ["one", "two"]


def test_flags(server: RunningServer) -> None:
    post(server, "import", document("kept"), tenant_id="h2")
    post(server, "import", document("hist", tier="history"), tenant_id="h2")
    arch = {**document("arch"), "memories": [{"content": "arch", "status": "archived"}]}
    assert post(server, "import", arch, tenant_id="h2", include_archived="false").json()["skipped"] == 1
    assert post(server, "import", document("kept!"), tenant_id="h2", fuzzy_threshold="0.5").json()["duplicates"] == 1
    plain = post(server, "export", {"tenant_id": "h2"}).json()["memories"]
    full = post(server, "export", {"tenant_id": "h2", "include_history": True}).json()["memories"]
    assert [i["content"] for i in plain] == ["kept"] and [i["content"] for i in full] == ["kept", "hist"]


@pytest.mark.parametrize("route,body,params", [
    ("import", "{nope", {"tenant_id": "h3"}),
    ("import", document("x", tier="attic"), {"tenant_id": "h3"}),
    ("preview", document("x", tier="attic"), {"tenant_id": "h3"}),
    ("import", {**document("x"), "omf": "2.0"}, {"tenant_id": "h3"}),
    ("import", document("x"), {}),
    ("import", document("x"), {"tenant_id": "h3", "include_archived": "maybe"}),
    ("import", document("x"), {"tenant_id": "h3", "fuzzy_threshold": "abc"}),
    ("export", {"tenant_id": "h3", "include_history": "yes"}, {}),
    ("export", ["h3"], {}),
    ("export", {}, {}),
])
def test_validation_errors_are_400_and_write_nothing(server: RunningServer, route: str, body: Any,
                                                     params: dict[str, str]) -> None:
    r = post(server, route, body, **params)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "validation" and r.json()["error"]["message"]
    assert post(server, "export", {"tenant_id": "h3"}).json()["memories"] == []


def test_oversize_body_is_413(server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(omf_http, "MAX_BODY", 1000)
    r = post(server, "import", document("x" * 2000), tenant_id="h4")
    assert r.status_code == 413 and r.json()["error"]["message"]


def test_other_methods_are_405(server: RunningServer) -> None:
    assert httpx.get(f"{server.base_url}/omf/export", timeout=10).status_code == 405


def test_memconform_serve_serves_omf_with_its_fault(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "serve", "--port", "0",
                             "--no-require-capability", "--upp-export-dir", str(tmp_path / "exports"),
                             "--omf-db", str(tmp_path / "omf.db"), "--fault", "omf-exported-at-millis"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = None
        deadline = time.monotonic() + 30
        assert proc.stderr is not None
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline().decode("utf-8", "replace")
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
            url = m.group(1) if m else url
            if not line and proc.poll() is not None:
                break
        assert url, "memconform serve did not announce its URL"
        r = httpx.post(f"{url}/omf/import", params={"tenant_id": "s"}, content=json.dumps(document("a")), timeout=10)
        assert r.json()["imported"] == 1
        exported = httpx.post(f"{url}/omf/export", content=json.dumps({"tenant_id": "s"}), timeout=10).json()
        assert "." in exported["exported_at"]  # the OMF fault reached the OMF engine
        assert (tmp_path / "omf.db").exists()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def test_no_omf_routes_without_an_engine() -> None:
    from starlette.testclient import TestClient

    from memconform.reference_impl.ump.http_app import build_app

    ump = UmpService(require_capability=False)
    try:
        with TestClient(build_app(ump, mcp=False)) as client:
            assert client.post("/omf/export", json={"tenant_id": "t"}).status_code == 404
    finally:
        ump.close()
