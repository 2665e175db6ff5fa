"""Issue 14 item 4: the OMF routes read a body only up to a configurable limit (16 MiB by default,
`memconform serve --omf-max-body BYTES`). A declared length over it is refused before a byte of the
body is read, a chunked body as soon as its count passes it; either way 413 with OMF's error body and
nothing written. (The memory a document costs is a figure for docs/omf.md, never asserted here.)"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memconform.reference_impl.omf import http as omf_http
from memconform.reference_impl.ump.serve import RunningServer

LIMIT = 2048


def document(*contents: str) -> bytes:
    return json.dumps({"omf": "1.0", "exported_at": "2026-04-18T00:00:00Z", "source": {"app": "memd"},
                       "memories": [{"content": c} for c in contents]}).encode()


def sized(size: int) -> bytes:
    """A valid document of exactly `size` bytes (one item padded)."""
    base = document("")
    return document("x" * (size - len(base)))


@pytest.fixture(scope="module")
def server(omf_server: RunningServer) -> RunningServer:
    return omf_server  # conftest.py: the reference server with OMF


def _address(base_url: str) -> tuple[str, int]:
    host, port = base_url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def raw_post(base_url: str, path: str, parts: list[bytes], *, length: int | None) -> tuple[int, dict[str, str], bytes]:
    """POST over a bare socket: `length` is the Content-Length to declare (None: chunked, and the
    terminating chunk is never sent, so only an answer given mid-body can arrive)."""
    host, port = _address(base_url)
    head = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json"]
    head.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        try:
            for part in parts:
                sock.sendall(part if length is not None else b"%x\r\n%s\r\n" % (len(part), part))
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered and closed before the body was all sent: what a refusal may do
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, f"connection closed without an answer: {data!r}"
            data += chunk
        header_text, _, rest = data.partition(b"\r\n\r\n")
        lines = header_text.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        want = int(headers.get("content-length", "0"))
        while len(rest) < want:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    return status, headers, rest


def too_large(status: int, body: bytes, limit: int) -> None:
    assert status == 413, (status, body[:300])
    error = json.loads(body)["error"]
    assert error["code"] == "too_large" and str(limit) in error["message"], error


def exported(base_url: str, tenant: str) -> list[str]:
    r = httpx.post(f"{base_url}/omf/export", content=json.dumps({"tenant_id": tenant}), timeout=30)
    assert r.status_code == 200, r.text
    return [m["content"] for m in r.json()["memories"]]


def test_the_default_limit_is_16_mib_and_a_larger_declared_body_is_refused_unread(server: RunningServer) -> None:
    assert omf_http.DEFAULT_MAX_BODY == omf_http.MAX_BODY == 16 << 20
    # Only the headers are sent: an answer can come only from the declared length.
    for route in ("import", "preview", "export"):
        status, headers, body = raw_post(server.base_url, f"/omf/{route}?tenant_id=d", [],
                                         length=(16 << 20) + 1)
        too_large(status, body, 16 << 20)
        assert headers.get("connection") == "close"
    assert exported(server.base_url, "d") == []


def test_a_chunked_body_is_refused_as_soon_as_it_passes_the_limit(server: RunningServer,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(omf_http, "MAX_BODY", LIMIT)
    over = sized(LIMIT + 1)
    # The body never ends (no terminating chunk): a server that waited to read it whole never answers.
    status, _, body = raw_post(server.base_url, "/omf/import?tenant_id=c", [over[:1000], over[1000:]], length=None)
    too_large(status, body, LIMIT)
    assert exported(server.base_url, "c") == []
    # A body at the limit, chunked, is read and imported.
    at = sized(LIMIT)
    r = httpx.post(f"{server.base_url}/omf/import", params={"tenant_id": "c"},
                   content=iter([at[:1000], at[1000:]]), timeout=30)
    assert r.status_code == 200 and r.json()["imported"] == 1, r.text


def test_set_max_body_refuses_what_is_not_a_positive_byte_count() -> None:
    for bad in (0, -1, True, "1", 1.5, None):
        with pytest.raises(ValueError):
            omf_http.set_max_body(bad)  # type: ignore[arg-type]
    assert omf_http.MAX_BODY == omf_http.DEFAULT_MAX_BODY


# -- memconform serve --omf-max-body ----------------------------------------------------------------

def _serve(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "memconform.suite.cli", "serve", "--port", "0",
                             "--no-require-capability", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=os.environ | {"PYTHONUNBUFFERED": "1"})
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        if match:
            return proc, match.group(1)
    _stop(proc)
    raise AssertionError(f"memconform serve printed no URL: {''.join(seen)}")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(15)


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("omf-limit")
    proc, url = _serve("--omf-max-body", str(LIMIT), "--omf-db", str(folder / "omf.db"),
                       "--upp-export-dir", str(folder / "exports"))
    try:
        yield url
    finally:
        _stop(proc)


@pytest.mark.parametrize("route", ["import", "preview"])
def test_serve_omf_max_body_refuses_a_document_over_it_and_writes_nothing(limited: str, route: str) -> None:
    tenant = f"over-{route}"
    over = sized(LIMIT + 1)
    r = httpx.post(f"{limited}/omf/{route}", params={"tenant_id": tenant}, content=over, timeout=30)
    assert r.status_code == 413, r.text
    assert r.headers["content-type"].startswith("application/json")
    body: Any = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["code"] == "too_large" and str(LIMIT) in body["error"]["message"]
    status, _, raw = raw_post(limited, f"/omf/{route}?tenant_id={tenant}", [over[:100]], length=len(over))
    too_large(status, raw, LIMIT)
    assert exported(limited, tenant) == []


def test_serve_omf_max_body_accepts_a_document_at_or_under_it(limited: str) -> None:
    at = sized(LIMIT)
    preview = httpx.post(f"{limited}/omf/preview", params={"tenant_id": "under"}, content=at, timeout=30)
    assert preview.status_code == 200 and preview.json()["to_import"] == 1, preview.text
    done = httpx.post(f"{limited}/omf/import", params={"tenant_id": "under"}, content=sized(LIMIT - 1), timeout=30)
    assert done.status_code == 200 and done.json()["imported"] == 1, done.text
    assert len(exported(limited, "under")) == 1
    export_over = httpx.post(f"{limited}/omf/export", content=b" " * LIMIT + b'{"tenant_id": "under"}', timeout=30)
    assert export_over.status_code == 413 and export_over.json()["error"]["code"] == "too_large"


def test_serve_omf_max_body_must_be_a_positive_number() -> None:
    for bad in ("0", "-5", "lots"):
        out = subprocess.run([sys.executable, "-m", "memconform.suite.cli", "serve", "--omf-max-body", bad],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert out.returncode == 2 and "--omf-max-body" in out.stderr, (bad, out.stderr)
