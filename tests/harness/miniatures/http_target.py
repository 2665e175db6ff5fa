"""A deliberately broken UMP server over HTTP (one misbehaviour per run), for the harness's own tests.

    python http_target.py MODE [--after N] [--count-discovery] [--only PATH ...] [--upp-omf]

The reference UMP server runs inside this process on a port of its own; in front of it, a plain
socket server on a free port of 127.0.0.1 passes requests through or misbehaves. Its URL is the
first line on stdout. Discovery (`GET /ump/capabilities`, `GET /.well-known/ump.json`, the UPP
probes `POST /upp` and `POST /`, OAMS's `GET /v1/oams/memories/…` probe) is always passed through, so the suite gets as far as running
checks; of the other requests the first N (`--after`, default 0) are passed through too, and then
every one gets MODE (with `--count-discovery`, discovery requests count among the N and misbehave
after them like any other: a server reached at `jsonrpc+http://…/upp` that answers its probe,
then breaks; with `--only PATH` (repeatable), only requests to those paths misbehave):

  hang      reads the request and never answers (the connection stays open)
  close     reads the request and closes the connection without a byte
  not-json  answers 200, Content-Type application/json, with an HTML page
  huge      answers 200 with a 50 MB JSON-looking body, streamed without a length (until it closes)
  huge-declared   the same with `Content-Length: 52428800` said first
  huge-events     answers 200 text/event-stream: `: ok`, then one 50 MB line (an event stream)
  trickle   answers 200 with `Content-Length: 1000` and then one byte every 0.2 s (each read is
            quick; the whole never ends in time)
  die       the whole process exits (code 3): every later connection is refused
  error-page      answers 500 with an HTML error page (no error envelope)
  error-envelope  answers 500 with an error envelope (`{"error": {"code", "message"}}`, which is also a
                  JSON-RPC error response): an answer in the protocol
  json-not-stream answers 200 application/json `{"subscribed": true}` (where an event stream is due)
  text-404        answers 404 text/plain `Not Found` (a refusal without the envelope: judged)
  good      passes everything through (a control)

The upstream serves UMP only, unless `--upp-omf`: then UPP (`POST /upp`) and OMF (`POST /omf/…`)
too (it starts slower).

The process also ends when its stdin closes, so a test that dies cannot leave it behind.
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import os
import select
import socket
import socketserver
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "te",
              "trailer", "upgrade"}
#: What the HTTP driver asks to learn what is there (UMP capabilities, UPP's upp/info probes):
#: always answered by the reference, so that the checks get to run.
DISCOVERY = {("GET", "/ump/capabilities"), ("GET", "/.well-known/ump.json"), ("POST", "/upp"), ("POST", "/"),
             # OAMS's REST probe (targets/oams.py discover_rest): a LIST of a namespace nobody writes
             ("GET", "/v1/oams/memories/memconform-discovery%3Aprobe"),
             ("GET", "/v1/oams/memories/memconform-discovery:probe"),
             # memoturn's REST probe (targets/memoturn.py discover_rest): a recall of a profile nobody writes
             ("POST", "/v1/memory/memconform-discovery/probe/recall")}
HUGE = 50 * 1024 * 1024
CHUNK = 64 * 1024
NOT_JSON = b"<!doctype html><html><body><h1>It works!</h1><p>This is not the UMP server.</p></body></html>\n"
ERROR_PAGE = b"<html><head><title>500 Internal Server Error</title></head><body><h1>Oops</h1></body></html>\n"
ENVELOPE = b'{"jsonrpc": "2.0", "error": {"code": "internal", "message": "the store is down"}, "id": null}'

state = {"served": 0, "lock": threading.Lock()}


def start_upstream(upp_omf: bool = False) -> str:
    """The reference UMP server (no MCP: it starts faster) on a port of its own."""
    from memconform.reference_impl.ump.http_app import build_app
    from memconform.reference_impl.ump.serve import make_service, start_in_thread

    service = make_service()
    engines = {}
    if upp_omf:
        from memconform.reference_impl.omf import make_engine
        from memconform.reference_impl.upp.stdio import make_upp_service

        engines = {"upp": make_upp_service(), "omf": make_engine()}
    return start_in_thread(service, app=build_app(service, mcp=False, **engines)).base_url


class Front(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: nothing is kept alive
    mode = "good"
    after = 0
    count_discovery = False
    only: tuple[str, ...] = ()
    upstream = ""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass  # quiet: stderr stays for what matters

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _misbehaves(self) -> bool:
        path = urllib.parse.urlsplit(self.path).path
        if ((self.command, path) in DISCOVERY and not self.count_discovery) or self.mode == "good":
            return False
        if self.only and path not in self.only:
            return False
        with state["lock"]:
            state["served"] += 1
            return state["served"] > self.after

    def _any(self) -> None:
        body = self._body()
        if not self._misbehaves():
            self._pass_through(body)
            return
        getattr(self, "_" + self.mode.replace("-", "_"))()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

    # -- the misbehaviours --

    def _hang(self) -> None:
        # until the client gives up (its socket closes) or the process is stopped
        sock = self.connection
        while True:
            readable, _, _ = select.select([sock], [], [], 0.5)
            if readable:
                try:
                    if not sock.recv(1, socket.MSG_PEEK):
                        return
                except OSError:
                    return

    def _close(self) -> None:
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _not_json(self) -> None:
        self._head(200, len(NOT_JSON))
        self.wfile.write(NOT_JSON)

    def _error_page(self) -> None:
        self._head(500, len(ERROR_PAGE), "text/html")
        self.wfile.write(ERROR_PAGE)

    def _error_envelope(self) -> None:
        self._head(500, len(ENVELOPE))
        self.wfile.write(ENVELOPE)

    def _text_404(self) -> None:
        self._head(404, 9, "text/plain")
        self.wfile.write(b"Not Found")

    def _json_not_stream(self) -> None:
        body = b'{"subscribed": true}'
        self._head(200, len(body))
        self.wfile.write(body)

    def _huge_declared(self) -> None:
        self._huge(declared=True)

    def _huge(self, declared: bool = False) -> None:
        self._head(200, HUGE if declared else None)
        try:
            self.wfile.write(b'{"results": ["')
            sent = 14
            filler = b"x" * CHUNK
            while sent < HUGE:
                piece = filler[:HUGE - sent]
                self.wfile.write(piece)
                sent += len(piece)
        except OSError:
            pass  # the client stopped reading: as it should

    def _huge_events(self) -> None:
        self.send_response_only(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            self.wfile.write(b": ok\n\ndata: ")
            filler = b"x" * CHUNK
            for _ in range(HUGE // CHUNK):
                self.wfile.write(filler)
        except OSError:
            pass

    def _trickle(self) -> None:
        self._head(200, 1000)
        try:
            for _ in range(1000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    def _die(self) -> None:
        print(f"http miniature: dying after {self.after} requests", file=sys.stderr, flush=True)
        os._exit(3)

    def _head(self, status: int, length: int | None, content_type: str = "application/json") -> None:
        self.send_response_only(status)
        self.send_header("Content-Type", content_type)
        if length is not None:  # else the body ends where the connection closes (HTTP/1.0)
            self.send_header("Content-Length", str(length))
        self.end_headers()

    # -- passing through --

    def _pass_through(self, body: bytes) -> None:
        up = urllib.parse.urlsplit(self.upstream)
        conn = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        try:
            conn.request(self.command, self.path, body=body or None, headers=headers)
            answer = conn.getresponse()
            self.send_response_only(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            while chunk := answer.read1(CHUNK):  # streamed: an event stream passes through live
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:
            pass
        finally:
            conn.close()


def watch_stdin() -> None:
    """End the process when stdin closes: the test that started it is gone."""
    sys.stdin.buffer.read()
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("hang", "close", "not-json", "huge", "huge-declared", "huge-events",
                                         "trickle", "die", "error-page", "error-envelope", "json-not-stream",
                                         "text-404", "good"))
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--count-discovery", action="store_true")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--upp-omf", action="store_true")
    args = parser.parse_args()
    Handler.mode, Handler.after, Handler.upstream = args.mode, args.after, start_upstream(args.upp_omf)
    Handler.count_discovery, Handler.only = args.count_discovery, tuple(args.only)
    front = Front(("127.0.0.1", 0), Handler)
    threading.Thread(target=watch_stdin, daemon=True).start()
    print(f"http://127.0.0.1:{front.server_address[1]}", flush=True)
    front.serve_forever()


if __name__ == "__main__":
    main()
