"""UPP over stdio, for real: a child `python -m memconform.suite.cli serve --upp-stdio`, one JSON-RPC
message per line in, one line per response out, the log on stderr, exit at end of input; and the
loop itself in-process (`stdio.run`) for what a child cannot show cheaply (over-long lines, a
closed stdout).
"""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memconform.reference_impl.upp import stdio
from memconform.reference_impl.upp.service import UppService


class Child:
    """The server process; `lines` collects stdout lines as they come."""

    def __init__(self, tmp_path: Path, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memconform.suite.cli", "serve", "--upp-stdio",
             "--upp-export-dir", str(tmp_path / "exports"), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")  # end of output

    def send(self, data: bytes | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.encode("utf-8") if isinstance(data, str) else data)
        self.proc.stdin.flush()

    def ask(self, message: Any) -> Any:
        self.send((message if isinstance(message, str) else json.dumps(message)) + "\n")
        return json.loads(self.line())

    def line(self, timeout: float = 15.0) -> bytes:
        return self.lines.get(timeout=timeout)

    def nothing_within(self, seconds: float) -> bool:
        try:
            self.lines.get(timeout=seconds)
        except queue.Empty:
            return True
        return False

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(15)
        return code, self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()


@pytest.fixture
def child(tmp_path: Path) -> Iterator[Child]:
    c = Child(tmp_path)
    try:
        yield c
    finally:
        c.kill()


def request(method: str, params: Any = None, id_: Any = 1) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "method": method, "id": id_}
    if params is not None:
        message["params"] = params
    return message


def test_one_line_in_one_line_out_and_exit_at_end_of_input(child: Child, tmp_path: Path) -> None:
    info = child.ask(request("upp/info", {}, 1))
    assert info == {"jsonrpc": "2.0", "result": info["result"], "id": 1}
    assert info["result"]["conformance_level"] == 3
    got = child.ask(request("upp/ingest", {"entity_key": "s", "text": "My name is Zoë.\nI love tea"}, "two"))
    assert got["id"] == "two" and [e["value"] for e in got["result"]] == ["User's name is Zoë", "User loves tea"]
    exported = child.ask(request("upp/export_events", {"entity_key": "s"}, 3))["result"]
    assert Path(exported["file"]).parent == (tmp_path / "exports").resolve()
    code, stderr = child.close()
    assert code == 0
    assert child.line() == b""  # nothing more on stdout
    assert b"reference UPP server over stdio" in stderr


def test_every_response_is_exactly_one_utf8_json_line(child: Child) -> None:
    child.send(json.dumps(request("upp/ingest", {"entity_key": "a\nb", "text": "My name is Zoë\u2028"}, 1)) + "\n")
    raw = child.line()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert json.loads(raw.decode("utf-8"))["result"][0]["entity_key"] == "a\nb"


@pytest.mark.parametrize("garbage", [b"hello", b"{", b"\xff\xfe\xfd", b"{\"jsonrpc\": \"2.0\"", b"NaN"])
def test_garbage_lines_are_answered_with_a_parse_error(child: Child, garbage: bytes) -> None:
    for ending in (b"\n", b"\r\n"):
        child.send(garbage + ending)
        answer = json.loads(child.line())
        assert answer == {"jsonrpc": "2.0", "error": answer["error"], "id": None}
        assert answer["error"]["code"] == -32700 and isinstance(answer["error"]["message"], str)
    assert child.ask(request("upp/info", {}, 9))["id"] == 9  # the stream goes on


def test_garbage_then_a_request_keeps_the_framing(child: Child) -> None:
    child.send(b"not json\n" + json.dumps(request("upp/info", {}, 4)).encode() + b"\n")
    first, second = json.loads(child.line()), json.loads(child.line())
    assert first["error"]["code"] == -32700 and first["id"] is None
    assert second["id"] == 4 and "result" in second


def test_notifications_and_blank_lines_get_no_line(child: Child) -> None:
    child.send(json.dumps({"jsonrpc": "2.0", "method": "upp/ingest",
                           "params": {"entity_key": "n", "text": "I speak Ewe"}}) + "\n\n   \n")
    child.send(json.dumps([{"jsonrpc": "2.0", "method": "upp/info"}]) + "\n")
    assert child.nothing_within(0.5)
    assert len(child.ask(request("upp/get_events", {"entity_key": "n"}))["result"]) == 1


def test_a_batch_is_one_line_holding_an_array(child: Child) -> None:
    got = child.ask([request("upp/info", {}, 1), {"jsonrpc": "2.0", "method": "upp/info"}, request("upp/x", {}, 2)])
    assert [r["id"] for r in got] == [1, 2] and got[1]["error"]["code"] == -32601
    assert child.ask([])["error"]["code"] == -32600


def test_end_of_input_waits_for_background_tasks(child: Child, tmp_path: Path) -> None:
    child.ask(request("upp/contextualize", {"entity_key": "t", "text": "I speak Ewe"}))
    code, _ = child.close()
    assert code == 0


def test_a_upp_fault_reaches_the_stdio_server(tmp_path: Path) -> None:
    c = Child(tmp_path, "--fault", "upp-stdio-split-lines")
    try:
        c.send(json.dumps(request("upp/info", {}, 1)) + "\n")
        first, second = c.line(), c.line()
        assert first == b"{\n"  # the response spans two lines
        assert json.loads(first + second)["id"] == 1
    finally:
        c.kill()


def test_a_ump_fault_does_not_reach_the_stdio_server(tmp_path: Path) -> None:
    c = Child(tmp_path, "--fault", "capabilities-wrong-version")
    try:
        assert c.ask(request("upp/info", {}, 1))["result"]["protocol_version"] == "1.0.0"
        code, stderr = c.close()
        assert code == 0 and b"; fault " not in stderr
    finally:
        c.kill()


def test_the_child_starts_quickly(tmp_path: Path) -> None:
    start = time.monotonic()
    c = Child(tmp_path)
    try:
        c.ask(request("upp/info", {}, 1))
        assert time.monotonic() - start < 10  # no HTTP stack, no schema library at start
    finally:
        c.kill()


# -- the loop in-process ----------------------------------------------------------------------------

def test_an_over_long_line_gets_one_invalid_request_and_is_skipped(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setattr(stdio, "MAX_LINE", 64)
    data = (json.dumps(request("upp/ingest", {"entity_key": "x", "text": "I love " + "y" * 200})) + "\n"
            + json.dumps(request("upp/info", {}, 2)) + "\n").encode()
    out = io.BytesIO()
    stdio.run(UppService(export_dir=tmp_path), io.BytesIO(data), out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["error"]["code"] == -32600 and json.loads(lines[1])["id"] == 2


def test_a_last_line_without_newline_is_still_a_message(tmp_path: Path) -> None:
    out = io.BytesIO()
    stdio.run(UppService(export_dir=tmp_path), io.BytesIO(json.dumps(request("upp/info", {}, 3)).encode()), out)
    assert json.loads(out.getvalue())["id"] == 3 and out.getvalue().endswith(b"\n")


def test_a_closed_stdout_ends_the_loop_quietly(tmp_path: Path) -> None:
    class Closed(io.BytesIO):
        def write(self, data: Any) -> int:
            raise BrokenPipeError

    service = UppService(export_dir=tmp_path)
    stdio.run(service, io.BytesIO(json.dumps(request("upp/info", {}, 1)).encode() + b"\n"), Closed())
    assert service._closed
