"""`--target=http://HOST:PORT`: a UMP server over the HTTP binding (§4.2), driven with httpx.

`HttpUmpClient` implements `suite.ump.client.UmpClient`; `HttpDriver` the driver protocol of
`targets/base.py`. Neither ever raises for an answer it does not like: every answer becomes a
`Reply` (status, parsed body, the §3.7 code from `{"error": {"code"}}`). Only when no usable
answer comes do they raise `TargetError` (docs/live-ump.md, "Broken targets"): connection refused
or closed, timeout, a stream that breaks off, an answer over 16 MiB; or an answer that is not the
protocol at all (`targets/answers.py`: a success status whose body is not JSON, or for subscribe
not an event stream, a 5xx without the error envelope): garbage, not a verdict.

Reading of answers:
* `body`: the parsed JSON (any JSON value); `raw`: the text when it is not JSON (an error status).
* `error_code`/`error_message`: from the `{"error": {"code", "message"}}` envelope, whatever the
  status. A non-2xx answer without that envelope gets `error_code = "http_<status>"` (not a §3.7
  code, so a check comparing codes fails and `Reply.ok` is False), with the reason in `wire`.
* `wire`: binding-level remarks: a Content-Type that is not `application/json`, an error status
  without the envelope, an envelope on a 2xx answer, a code outside the envelope's type.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from memconform.suite.omf.vocabulary import VERSION as OMF_VERSION
from memconform.suite.outcomes import SentRequest, TargetError
from memconform.suite.ump import owners as ump_owners, record as ump_record, testkeys
from memconform.suite.ump.client import DEFAULT_AUTH, Auth, Reply, SubscribeOutcome
from memconform.targets.answers import http_answer
from memconform.targets.base import Subject
from memconform.suite.ump.token_probe import refused_tokens
from memconform.targets.http_session import MAX_BODY, Client, HttpSession, size_text, tls_context

VERSION_HEADER = "UMP-Version"
OPERATIONS = frozenset({"capabilities", "recall", "remember", "get", "revise", "forget", "feedback",
                        "subscribe", "rehydrate"})
#: How long a minted owner token is reused (it lives 15 minutes).
TOKEN_REUSE = 60.0
_RAW_LIMIT = 256 * 1024  # how much of a stream is kept for messages
_SUBSCRIBE_SCOPE = ("owner", "user", "project", "agent", "visibility")


def _is_json_type(content_type: str | None) -> bool:
    if not content_type:
        return False
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or (mime.startswith("application/") and mime.endswith("+json"))


def _envelope(body: Any) -> tuple[str | None, str | None, bool]:
    """(code, message, present) of a `{"error": {...}}` envelope."""
    if not isinstance(body, dict) or "error" not in body:
        return None, None, False
    err = body["error"]
    if not isinstance(err, dict):
        return None, None, True
    code, message = err.get("code"), err.get("message")
    return (code if isinstance(code, str) else None), (message if isinstance(message, str) else None), True


_NEWLINE = re.compile(r"\r\n|\r|\n")


class _TooLarge(Exception):
    """An event stream that carried more than it may (docs/live-ump.md, "Broken targets")."""


def _capped_lines(chunks: Iterator[str], limit: int) -> Iterator[str]:
    """The lines of a text stream (CRLF, LF or CR end one, as SSE has it), raising `_TooLarge`
    once more than `limit` characters came: a line without end never grows past that."""
    pending: list[str] = []
    seen, held_cr = 0, False
    for text in chunks:
        seen += len(text)
        if seen > limit:
            raise _TooLarge(seen)
        if held_cr:  # a CR that ended the last chunk may be the first half of a CRLF
            text, held_cr = "\r" + text, False
        if text.endswith("\r"):
            text, held_cr = text[:-1], True
        parts = _NEWLINE.split(text)
        if len(parts) > 1:
            yield "".join(pending) + parts[0]
            yield from parts[1:-1]
            pending = []
        pending.append(parts[-1])
    if held_cr:
        yield "".join(pending)
        pending = []
    if "".join(pending):
        yield "".join(pending)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in str(version).split("."))


class TokenCache:
    """Capability tokens minted for the owners, each reused for TOKEN_REUSE seconds (shared by the
    HTTP and MCP drivers' own discovery calls and the HTTP client's requests)."""

    def __init__(self, owners: Any = None) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[float, str]] = {}
        self.owners = owners if owners is not None else ump_owners.from_environment()

    def for_owner(self, name: str) -> str:
        now = time.monotonic()
        with self._lock:
            cached = self._tokens.get(name)
            if cached is not None and now - cached[0] < TOKEN_REUSE:
                return cached[1]
            try:
                token = self.owners.token(name)
            except KeyError:
                raise ValueError(f"Auth.as_owner({name!r}): not one of the owners (the test keys "
                                 f"{', '.join(testkeys.TEST_KEY_NAMES)}, or the target's own)") from None
            except ump_owners.CannotSign as exc:
                raise TargetError(f"cannot act as {name}: {exc}") from None
            self._tokens[name] = (now, token)
            return token


class _SSEParser:
    """Incremental text/event-stream parsing (WHATWG 'server-sent events' rules): comment lines,
    `field: value` lines, a blank line dispatches. Each dispatched frame must carry `event:` and a
    JSON object `data:` with `type` and `id`; anything else is a problem, never an exception. A
    frame that names no record (a server's hello or heartbeat event) is no change: not an event."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.comments = 0
        self.lines = 0
        #: frames naming no record (no urn:ump: id anywhere): not changes, so not in `events`
        self.unrelated = 0
        self._event: str | None = None
        self._data: list[str] = []
        self._fields = False
        self._frame = 0

    def feed_line(self, line: str) -> None:
        self.lines += 1
        if line == "":
            self._dispatch()
            return
        if line.startswith(":"):
            self.comments += 1
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        self._fields = True
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name in ("id", "retry"):
            pass
        else:
            self.problems.append(f"line {self.lines}: unknown SSE field {line[:120]!r}")

    def finish(self) -> None:
        if self._fields:
            self.problems.append("the stream ended inside a frame (no blank line after it)")
            self._dispatch()

    def _dispatch(self) -> None:
        if not self._fields:
            return
        self._frame += 1
        where = f"frame {self._frame}"
        event, lines = self._event, self._data
        self._event, self._data, self._fields = None, [], False
        data = "\n".join(lines)
        if event is None and not lines:
            return  # only id:/retry:/unknown fields: nothing to dispatch
        if event is None:
            self.problems.append(f"{where}: no `event:` line (data {data[:120]!r})")
        if not lines or data == "":
            self.problems.append(f"{where}: event {event!r} without data")
            return
        try:
            payload = json.loads(data)
        except ValueError as exc:
            self.problems.append(f"{where}: data is not JSON ({exc}): {data[:200]!r}")
            return
        if not isinstance(payload, dict):
            self.problems.append(f"{where}: data is not a JSON object: {data[:200]!r}")
            return
        if not isinstance(payload.get("type"), str) or not isinstance(payload.get("id"), str):
            self.problems.append(f"{where}: data lacks a string `type` or `id`: {data[:200]!r}")
        elif event is not None and event != payload["type"]:
            self.problems.append(f"{where}: `event: {event}` but data.type is {payload['type']!r}")
        if "urn:ump:" not in data:  # a hello, heartbeat or status event: no record changed
            self.unrelated += 1
            return
        self.events.append(payload)


class HttpUmpClient:
    """The UMP operations over HTTP at `base_url`, judged as `version` (sent as `UMP-Version` on
    every request). One httpx.Client per instance; `timeout` bounds every request (and how long
    subscribe waits for events, unless `event_timeout` says otherwise)."""

    binding = "http"

    def __init__(self, base_url: str, version: str = "1.0", *, timeout: float = 10.0,
                 event_timeout: float | None = None, send_version: bool = True, owners: Any = None,
                 capabilities_auth: Auth | None = None):
        self.base_url = base_url.rstrip("/")
        self.version = version
        self.timeout = timeout
        self.event_timeout = timeout if event_timeout is None else event_timeout
        self.send_version = send_version
        self._tokens = TokenCache(owners)
        self.owners = self._tokens.owners  # who owner-a and owner-b are here (suite/ump/owners.py)
        #: how capabilities and /.well-known/ump.json are asked: anonymously, unless discovery found
        #: that this server answers them only with a token (§4.2: "Auth via capability tokens")
        self.capabilities_auth = capabilities_auth or Auth.anonymous()
        self._http = HttpSession(timeout=timeout, base_url=self.base_url)
        self._offered: frozenset[str] | None = None
        self._siblings: dict[str, HttpUmpClient] = {}

    def activate(self) -> None:
        """Before each check: the checks' owner-a and owner-b are this target's."""
        ump_owners.activate(self.owners)
        from memconform.suite.ump.checks._live import activate_version

        activate_version(self.version)

    # -- plumbing -------------------------------------------------------------------------

    def _auth_header(self, auth: Auth) -> tuple[str | None, str]:
        if auth.kind == "owner":
            name = auth.owner or "owner-a"
            return self._tokens.for_owner(name), f"token of {name}"
        if auth.kind == "bearer":
            return auth.token, "the given bearer token"
        return None, "anonymous"

    def _headers(self, auth: Auth, extra: dict[str, str | None] | None = None) -> tuple[dict[str, str], str]:
        headers: dict[str, str | None] = {}
        if self.send_version:
            headers[VERSION_HEADER] = self.version
        token, how = self._auth_header(auth)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        for name, value in (extra or {}).items():  # the caller's headers win; None drops one
            for existing in [k for k in headers if k.lower() == name.lower()]:
                del headers[existing]
            headers[name] = value
        return {k: v for k, v in headers.items() if v is not None}, how

    def _send(self, method: str, path: str, *, content: bytes | None = None,
              headers: dict[str, str] | None = None) -> httpx.Response:
        return self._http.send(self._http.request(method, path, content=content, headers=headers))

    def _reply(self, operation: str, sent: Any, response: httpx.Response, how: str, *,
               provoked: bool = False) -> Reply:
        status = response.status_code
        content_type = response.headers.get("content-type")
        wire: list[str] = []
        body: Any = None
        raw: str | None = None
        data = response.content
        try:
            body = json.loads(data) if data.strip() else None
            parsed = True
        except ValueError:
            body, parsed = None, False
        code, message, present = _envelope(body)
        if not provoked:  # a probe that sent what the protocol forbids judges whatever came back
            http_answer(f"{response.request.method} {response.request.url}", status, content_type, data,
                        body_ok=parsed, envelope=present)
        if body is None:
            raw = data.decode("utf-8", "replace")
        elif not _is_json_type(content_type):
            wire.append(f"a JSON answer with Content-Type {content_type!r}, not application/json")
        if present and code is None:
            wire.append("an {error} envelope without a string `code`")
        if 200 <= status < 300:
            if present:
                wire.append(f"HTTP {status} with an error envelope")
        elif code is None:
            wire.append(f"HTTP {status} without an {{\"error\": {{\"code\", \"message\"}}}} envelope")
            code = f"http_{status}"
        if isinstance(sent, dict):  # findings then say what was sent, where and as whom
            sent = SentRequest(sent, f"{response.request.method} {response.request.url.raw_path.decode('ascii', 'replace')}",
                               how)
        return Reply(operation=operation, binding="http", sent=sent, status=status, body=body,
                     error_code=code, error_message=message, raw=raw, wire=tuple(wire), auth=how)

    def _json_call(self, operation: str, method: str, path: str, sent: Any, auth: Auth) -> Reply:
        headers, how = self._headers(auth)
        content = None
        if method != "GET":
            content = json.dumps(sent, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        return self._reply(operation, sent, self._send(method, path, content=content, headers=headers), how)

    # -- the operations ---------------------------------------------------------------------

    def capabilities(self, request: dict[str, Any] | None = None, *, auth: Auth | None = None) -> Reply:
        """GET /ump/capabilities, as `capabilities_auth` (anonymous unless discovery needed a token)
        unless `auth` says otherwise. `request` is recorded as sent (the HTTP binding carries the
        client's version in `UMP-Version`)."""
        return self._json_call("capabilities", "GET", "/ump/capabilities",
                               request if request is not None else {}, auth or self.capabilities_auth)

    def well_known(self, *, auth: Auth | None = None) -> Reply:
        return self._json_call("well_known", "GET", "/.well-known/ump.json", None, auth or self.capabilities_auth)

    def recall(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply:
        return self._json_call("recall", "POST", "/ump/recall", request, auth)

    def remember(self, record: Any, *, auth: Auth = DEFAULT_AUTH, wrap: bool = True) -> Reply:
        return self._json_call("remember", "POST", "/ump/remember", {"record": record} if wrap else record, auth)

    def get(self, id: str, *, auth: Auth = DEFAULT_AUTH) -> Reply:
        path = "/ump/memory/" + urllib.parse.quote(str(id), safe="")
        headers, how = self._headers(auth)
        return self._reply("get", {"id": id}, self._send("GET", path, headers=headers), how)

    def revise(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply:
        return self._json_call("revise", "POST", "/ump/revise", request, auth)

    def forget(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply:
        return self._json_call("forget", "POST", "/ump/forget", request, auth)

    def feedback(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply:
        return self._json_call("feedback", "POST", "/ump/feedback", request, auth)

    def rehydrate(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply:
        return self._json_call("rehydrate", "POST", "/ump/rehydrate", request, auth)

    def call_raw(self, method: str, path: str, body: bytes | None = None,
                 headers: dict[str, str] | None = None, *, auth: Auth = DEFAULT_AUTH) -> Reply:
        """Any request, for bad-input checks. `path` is sent as given (it may hold a query and
        deliberately bad escapes). Headers given here replace the driver's (`UMP-Version`,
        `Authorization`); a header whose value is None is not sent."""
        hdrs, how = self._headers(auth, headers)
        sent = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else body
        request = self._http.request(method, path, content=body, headers=hdrs)
        # keep the path byte for byte (httpx would re-escape a bad `%`); only non-ASCII and
        # spaces/controls are escaped, as no request line can carry them
        raw_path = urllib.parse.quote(path, safe="".join(chr(c) for c in range(33, 127)))
        request.url = request.url.copy_with(raw_path=raw_path.encode("ascii"))
        response = self._http.send(request)
        return self._reply(f"{method} {path}", sent, response, how, provoked=True)

    def offered(self) -> frozenset[str]:
        """Every operation, less `subscribe`/`rehydrate` when capabilities says `false` for them
        (the HTTP binding has no listing to read)."""
        if self._offered is None:
            offered = set(OPERATIONS)
            caps = self.capabilities()
            if caps.ok and isinstance(caps.body, dict):
                for op in ("subscribe", "rehydrate"):
                    if caps.body.get(op) is False:
                        offered.discard(op)
            self._offered = frozenset(offered)
        return self._offered

    def tools(self) -> None:
        return None

    # -- subscribe ----------------------------------------------------------------------------

    def subscribe(self, trigger: Callable[[], Any], *, auth: Auth = DEFAULT_AUTH,
                  request: dict[str, Any] | None = None, expect: int = 1) -> SubscribeOutcome:
        """GET /ump/subscribe as SSE; once the first line (the `: ok` comment) arrived, run
        `trigger()` here while a reader thread collects events; stop after `expect` events or
        `event_timeout` seconds after the trigger returned. Scope members of `request["scope"]`
        go as query parameters."""
        sent = request if request is not None else {}
        scope = sent.get("scope") if isinstance(sent, dict) else None
        params = {k: str(v) for k, v in (scope or {}).items() if k in _SUBSCRIBE_SCOPE} if isinstance(scope, dict) else {}
        headers, _how = self._headers(auth, {"Accept": "text/event-stream"})
        url = f"{self.base_url}/ump/subscribe"
        parser = _SSEParser()
        state: dict[str, Any] = {"status": None, "content_type": None, "streaming": False, "raw": [],
                                 "raw_len": 0, "error": None, "body": None, "ended": False}
        lock = threading.Lock()
        headers_in, first_line, enough, stop = (threading.Event() for _ in range(4))
        if expect <= 0:  # only the answer itself is wanted
            enough.set()
        holder: dict[str, Any] = {}
        http = Client(timeout=httpx.Timeout(self.timeout), follow_redirects=False, verify=tls_context())

        def read() -> None:
            try:
                with http.stream("GET", url, params=params, headers=headers) as response:
                    holder["response"] = response
                    stream = response.extensions.get("network_stream")
                    holder["socket"] = stream.get_extra_info("socket") if stream is not None else None
                    state["status"] = response.status_code
                    state["content_type"] = response.headers.get("content-type")
                    mime = (state["content_type"] or "").split(";")[0].strip().lower()
                    state["streaming"] = response.status_code == 200 and mime == "text/event-stream"
                    headers_in.set()
                    if not state["streaming"]:
                        data = b""
                        for chunk in response.iter_bytes():
                            data += chunk
                            if len(data) > _RAW_LIMIT:
                                break
                        state["body"] = data
                        return
                    for line in _capped_lines(response.iter_text(), MAX_BODY):
                        with lock:
                            if state["raw_len"] < _RAW_LIMIT:
                                state["raw"].append(line + "\n")
                                state["raw_len"] += len(line) + 1
                            parser.feed_line(line)
                            if len(parser.events) >= expect:
                                enough.set()
                        first_line.set()
                        if stop.is_set():
                            return
                    state["ended"] = True
            except Exception as exc:  # noqa: BLE001 — reported below unless we stopped it
                if not stop.is_set():
                    state["error"] = exc
            finally:
                with lock:
                    if state["ended"]:
                        parser.finish()
                headers_in.set()
                first_line.set()
                enough.set()
                if stop.is_set():
                    http.close()

        reader = threading.Thread(target=read, name="ump-sse-reader", daemon=True)
        reader.start()
        try:
            if not headers_in.wait(self.timeout):
                raise TargetError(f"GET {url}: no response headers within {self.timeout:g} s")
            if isinstance(state["error"], _TooLarge):
                raise TargetError(f"GET {url}: the event stream carried more than {size_text(MAX_BODY)}; "
                                  f"memconform reads at most {size_text(MAX_BODY)} of an answer")
            if state["status"] is None:
                exc = state["error"]
                if isinstance(exc, httpx.TimeoutException):
                    raise TargetError(f"GET {url}: no answer within {self.timeout:g} s") from None
                raise TargetError(f"GET {url}: cannot connect ({type(exc).__name__}: {exc})") from None
            if state["streaming"]:
                # established = the first line (the `: ok` comment) arrived; a server that sends
                # nothing before its first event gets a grace period, then the trigger runs anyway
                if not first_line.wait(min(self.timeout, 2.0)):
                    with lock:
                        parser.problems.append("no comment line (`: ok`) after the headers: the "
                                               "stream did not say it was established")
                if reader.is_alive() and state["error"] is None:
                    trigger()
                    enough.wait(self.event_timeout)
            else:
                reader.join(self.timeout)  # reading an error answer
        finally:
            stop.set()
            sock = holder.get("socket")
            if sock is not None and reader.is_alive():
                try:  # wake the reader out of its blocking read; it closes the client itself
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            reader.join(1.0)
            if not reader.is_alive():
                http.close()

        if isinstance(state["error"], _TooLarge):  # found while the trigger ran
            raise TargetError(f"GET {url}: the event stream carried more than {size_text(MAX_BODY)}; "
                              f"memconform reads at most {size_text(MAX_BODY)} of an answer")
        with lock:
            raw = "".join(state["raw"])
            events = tuple(parser.events)
            problems = list(parser.problems)
        if not state["streaming"]:  # an error answer (or a 200 that is not an event stream)
            data = state["body"] or b""
            try:
                body = json.loads(data) if data.strip() else None
            except ValueError:
                body = None
            code, message, present = _envelope(body)
            http_answer(f"GET {url}", state["status"], state["content_type"], data, body_ok=False,
                        envelope=present, expected="an event stream (text/event-stream)")
            if code is None:
                code = f"http_{state['status']}"
            return SubscribeOutcome(sent=sent, status=state["status"], content_type=state["content_type"],
                                    raw=data.decode("utf-8", "replace"), error_code=code,
                                    error_message=message, problems=tuple(problems))
        if state["error"] is not None:
            problems.append(f"the stream broke off: {type(state['error']).__name__}: {state['error']}")
        elif state["ended"] and len(events) < expect:
            problems.append("the server closed the stream before the expected events arrived")
        return SubscribeOutcome(sent=sent, status=state["status"], content_type=state["content_type"],
                                events=events, raw=raw, problems=tuple(problems))

    def as_version(self, version: str) -> HttpUmpClient:
        """A client of the same server whose requests name `version` in UMP-Version."""
        if version == self.version:
            return self
        if version not in self._siblings:
            self._siblings[version] = HttpUmpClient(self.base_url, version, timeout=self.timeout,
                                                    event_timeout=self.event_timeout,
                                                    send_version=self.send_version, owners=self.owners)
        return self._siblings[version]

    def close(self) -> None:
        for sibling in self._siblings.values():
            sibling.close()
        self._http.close()


class NotUmpServer(TargetError):
    """The server answered discovery, but with no UMP capabilities document."""


#: The tenant the OMF discovery export asks for: read-only, and meant to be empty
OMF_PROBE_TENANT = "memconform-discovery"


class HttpDriver:
    """A server at `http://host:port`: UMP, UPP, OMF, or several (docs/live-upp.md, "Subjects").

    UMP: one subject per runtime version it speaks (from capabilities' `versions`, else its
    `ump`; `forced_versions` override), over binding "http". UPP: the subject ("upp", "1.0.0",
    "http") when `POST /upp` (then `POST /`) answers upp/info with a JSON-RPC `result`; its client
    is `targets.jsonrpc.UppRpcClient` at that URL. OMF: ("omf", "1.0", "http") when `POST /omf/export`
    answers with an OMF document (`discover_omf`). A server offering neither UMP nor UPP is a
    TargetError naming both probes."""

    #: who the UMP checks act as (suite/ump/owners.py); None: the environment's, else the test keys
    owners: Any = None

    def __init__(self, base_url: str, forced_versions: tuple[str, ...] = (), timeout: float = 10.0):
        self.base_url = base_url.rstrip("/")
        self.label = base_url
        self.timeout = timeout
        self._forced = tuple(forced_versions)
        self._discovered: dict[str, Any] | None = None
        self._omf: bool | None = None
        self._omf_probe = "not asked"
        self._absent: dict[str, str] = {}  # spec -> why its own discovery did not find it
        self._levels: dict[str, str | None] = {}
        self._clients: dict[str, HttpUmpClient] = {}
        self._needs_token = False  # discovery answered only with owner-a's capability token
        self._tokens: TokenCache | None = None
        self._upp: Any = None  # a targets.jsonrpc.JsonRpcDriver once UPP is found
        self._upp_probes: list[str] | None = None  # what each UPP probe saw
        self._http: HttpSession | None = None  # discovery's connections (bounded like every other)
        self._parts: dict[str, Any] | None = None  # specs found through their own discovery (suite/specs.py)
        self._token_refusals: dict[str, str | None] = {}  # version -> why the suite cannot act as the owners

    def _get(self, path: str, version: str | None = None, *, as_owner: bool = False) -> httpx.Response:
        url = f"{self.base_url}{path}"
        headers = {VERSION_HEADER: version} if version else {}
        if as_owner or self._needs_token:
            if self._tokens is None:
                self._tokens = TokenCache(self.owners)
            headers["Authorization"] = f"Bearer {self._tokens.for_owner('owner-a')}"
        if self._http is None:
            self._http = HttpSession(timeout=self.timeout, follow_redirects=True)
        try:
            return self._http.send(self._http.request("GET", url, headers=headers))
        except TargetError as exc:
            if "cannot connect" in str(exc):  # said first: nothing else about the target is known
                raise TargetError(f"cannot connect to {self.base_url} ({exc})") from None
            raise

    @staticmethod
    def _doc(response: httpx.Response) -> dict[str, Any] | None:
        if response.status_code != 200:
            return None
        try:
            body = response.json()
        except ValueError:
            return None
        return body if isinstance(body, dict) and isinstance(body.get("ump"), str) else None

    def discover(self) -> dict[str, Any]:
        """The capabilities document (or, failing that, /.well-known/ump.json)."""
        if self._discovered is None:
            first = self._get("/ump/capabilities")
            doc = self._doc(first)
            if doc is None:
                second = self._get("/.well-known/ump.json")
                doc = self._doc(second)
                if doc is None and {first.status_code, second.status_code} & {401, 403}:
                    doc = self._discover_with_token(first, second)
                elif doc is not None and first.status_code in (401, 403):
                    doc = self._capabilities_with_token() or doc
                if doc is None:
                    raise NotUmpServer(
                        f"{self.base_url} is not a UMP server: GET /ump/capabilities answered HTTP "
                        f"{first.status_code} and GET /.well-known/ump.json HTTP {second.status_code}, "
                        "neither a JSON object with `ump`")
                if "_source" not in doc:
                    doc = dict(doc, _source="/.well-known/ump.json")
            else:
                doc = dict(doc, _source="/ump/capabilities")
            self._discovered = doc
        return self._discovered

    def _capabilities_with_token(self) -> dict[str, Any] | None:
        """The well-known document is open and capabilities alone refused a request without a token:
        ask capabilities again as owner-a, and when that answers, every later capabilities call
        carries the token too (a blind red team's reading, round 28: the checks had asked without
        one and failed every L1 capabilities MUST on the 401). None when owner-a's token does not
        help: the checks then meet and judge the refusal."""
        try:
            doc = self._doc(self._get("/ump/capabilities", as_owner=True))
        except ValueError:  # no owner-a to act as
            return None
        if doc is None:
            return None
        self._needs_token = True
        return dict(doc, _source="/ump/capabilities")

    def _discover_with_token(self, first: httpx.Response, second: httpx.Response) -> dict[str, Any]:
        """Both discovery routes refused a request without a token: §4.2 puts the routes behind
        "Auth via capability tokens" and no sentence exempts capabilities, so ask again as owner-a.
        The public implementation serves both open; that it does not is judged by
        ump/capabilities-open (class ump-reference-interop), never as "not UMP"."""
        refused = (f"GET /ump/capabilities answered HTTP {first.status_code} and GET /.well-known/ump.json HTTP "
                   f"{second.status_code} to a request without a token")
        try:
            third = self._get("/ump/capabilities", as_owner=True)
        except ValueError as exc:  # no owner-a to act as (the target's own owners name none)
            raise NotUmpServer(f"{self.base_url} asks for credentials at discovery ({refused}), and memconform "
                               f"could not ask again as owner-a: {exc}") from None
        doc = self._doc(third)
        if doc is None:
            raise NotUmpServer(f"{self.base_url} asks for credentials at discovery ({refused}), and with owner-a's "
                               f"capability token GET /ump/capabilities answered HTTP {third.status_code}, no JSON "
                               "object with `ump`")
        self._needs_token = True
        return dict(doc, _source="/ump/capabilities")

    def versions(self) -> tuple[str, ...]:
        if self._forced:
            return self._forced
        doc = self.discover()
        spoken = doc.get("versions")
        declared = [v for v in spoken if isinstance(v, str)] if isinstance(spoken, list) else []
        if not declared:
            declared = [doc["ump"]]
        known = tuple(v for v in ump_record.VERSIONS if v in declared)
        return known or (ump_record.VERSIONS[-1],)

    def discover_upp(self) -> Any:
        """The JsonRpcDriver of the UPP server here, or None: upp/info is POSTed to /upp, then to
        /; a JSON-RPC response carrying `result` means UPP is there. Raises TargetError when a
        probe gets no answer at all."""
        if self._upp_probes is None:
            from memconform.targets.jsonrpc import JsonRpcDriver, probe_upp

            self._upp_probes = []
            for path in ("/upp", "/"):
                url = self.base_url + path
                try:
                    found, seen = probe_upp(url, self.timeout)
                except TargetError as exc:
                    self._upp_probes.append(f"POST {path} with upp/info: {exc}")
                    raise
                self._upp_probes.append(f"POST {path} with upp/info {seen}")
                if found:
                    self._upp = JsonRpcDriver("http", url, label=self.label, timeout=self.timeout)
                    break
        return self._upp

    def subjects(self) -> list[Subject]:
        from memconform.targets.jsonrpc import UPP_VERSION

        not_ump: NotUmpServer | None = None
        try:
            ump = [Subject(self.label, "ump", v, "http") for v in self.versions()]
        except NotUmpServer as exc:  # it answers, but not as UMP: maybe UPP
            ump, not_ump = [], exc
        plugged = self.discover_plugged()
        unanswered = False
        try:
            upp = self.discover_upp()
        except TargetError:
            upp, unanswered = None, True  # with another spec here, a UPP probe without an answer only means no UPP
        omf = [Subject(self.label, "omf", OMF_VERSION, "http")] if self.discover_omf() else []
        if not ump and upp is None and not plugged and not omf:
            what = (f"{not_ump}; nor a UPP server: {'; '.join(self._upp_probes or [])}; nor OMF: {self._omf_probe}; "
                    f"nor {', '.join(self._absent) or 'any other spec'} ({'; '.join(self._absent.values())})")
            raise (TargetError if unanswered else NotUmpServer)(what)
        return ump + omf + ([Subject(self.label, "upp", UPP_VERSION, "http")] if upp is not None else []) + plugged

    def absent(self, spec: str) -> str | None:
        """Why discovery found no `spec` here (what its probe saw), or None when it did not ask."""
        if spec == "ump":
            return "GET /ump/capabilities and /.well-known/ump.json answered no UMP document" if self._discovered is None else None
        if spec == "upp":
            return "; ".join(self._upp_probes) if self._upp is None and self._upp_probes else None
        if spec == "omf":
            return self._omf_probe if self._omf is False else None
        return self._absent.get(spec)

    def discover_plugged(self) -> list[Subject]:
        """The subjects of the specs that declare their own HTTP discovery (suite/specs.py): each
        probe answers without side effects, and a spec not found adds nothing."""
        if self._parts is None:
            from memconform.suite.specs import plugged

            self._parts = {}
            for spec, discover in plugged("http_discovery"):
                try:
                    part = discover(self.base_url, label=self.label, timeout=self.timeout)
                except TargetError as exc:
                    part = str(exc)
                if isinstance(part, str):  # the probe's account of why the spec is not here
                    self._absent[spec.name] = part
                elif part is not None:
                    self._parts[spec.name] = part
        return [s for part in self._parts.values() for s in part.subjects()]

    def discover_omf(self) -> bool:
        """Whether OMF's HTTP routes are here (docs/omf.md, "HTTP"): an export for a tenant nobody
        uses (read-only) that answers 2xx with an OMF document. No answer, or any other answer,
        means no OMF: the UMP and UPP subjects are judged regardless."""
        if self._omf is None:
            from memconform.targets.omf_http import OmfHttpTarget

            probe = OmfHttpTarget(self.base_url, timeout=self.timeout)
            try:
                run = probe.export(OMF_PROBE_TENANT)
                document = run.parsed_document() if run.ok else None
                self._omf = isinstance(document, dict) and document.get("omf") == OMF_VERSION
                self._omf_probe = f"an export of the unused tenant {OMF_PROBE_TENANT!r}: {run.describe()}"
            except TargetError as exc:
                self._omf = False
                self._omf_probe = f"an export of the unused tenant {OMF_PROBE_TENANT!r}: {exc}"
            finally:
                probe.close()
        return self._omf

    def _upp_driver(self) -> Any:
        if self._upp is None:
            self.discover_upp()
        if self._upp is None:
            raise TargetError(f"{self.base_url} offers no UPP: {'; '.join(self._upp_probes or [])}")
        return self._upp

    def advertised_level(self, subject: Subject) -> str | None:
        if self._parts and subject.spec in self._parts:
            return self._parts[subject.spec].advertised_level(subject)
        if subject.spec == "omf":
            return None  # OMF has no levels (docs/omf.md)
        if subject.spec == "upp":
            return self._upp_driver().advertised_level(subject)
        if subject.version not in self._levels:
            level = None
            try:
                doc = self._doc(self._get("/ump/capabilities", subject.version))
            except TargetError:
                doc = None
            doc = doc or self.discover()
            if isinstance(doc.get("conformance"), str):
                level = doc["conformance"]
            self._levels[subject.version] = level
        return self._levels[subject.version]

    def client(self, subject: Subject) -> Any:
        if self._parts and subject.spec in self._parts:
            return self._parts[subject.spec].client(subject)
        if subject.spec == "upp":
            return self._upp_driver().client(subject)
        if subject.spec == "omf":
            if "omf" not in self._clients:
                from memconform.targets.omf_http import OmfHttpTarget

                self._clients["omf"] = OmfHttpTarget(self.base_url, timeout=self.timeout)
            return self._clients["omf"]
        if subject.version not in self._clients:
            if self._discovered is None:  # subjects given, not discovered (forced versions, the reference)
                try:
                    self.discover()
                except TargetError:
                    pass  # the checks meet the same answers and say what they were
            client = HttpUmpClient(
                self.base_url, subject.version, timeout=self.timeout, owners=self.owners,
                capabilities_auth=Auth.as_owner("owner-a") if self._needs_token else None)
            self._clients[subject.version] = client
            try:
                self._token_refusals[subject.version] = refused_tokens(client, client.owners, self.base_url)
            except TargetError:  # the probe met a transport failure: the checks meet it too, and say so
                self._token_refusals[subject.version] = None
        refusal = self._token_refusals.get(subject.version)
        if refusal:
            raise TargetError(refusal)
        return self._clients[subject.version]

    def describe(self) -> dict[str, Any]:
        # the report reads a target's claim per spec (reports/model.py); the newest UMP version's
        # claim stands for UMP, as its level line is the one a vendor states
        ump_levels = [self._levels[v] for v in sorted(self._levels, key=_version_key, reverse=True)
                      if isinstance(self._levels[v], str)]
        out: dict[str, Any] = {"label": self.label, "kind": "http", "url": self.base_url,
                               "advertised": {"ump": ump_levels[0]} if ump_levels else {}}
        if self._discovered is not None:
            out["discovered_from"] = self._discovered.get("_source")
            if self._needs_token:
                out["discovery"] = "answered only with a capability token (owner-a's)"
            server = self._discovered.get("server")
            if isinstance(server, dict):
                out["server"] = server
        if self._upp is not None:
            upp = self._upp.describe()
            out["upp"] = {k: upp[k] for k in ("url", "server", "info_error") if k in upp}
            out["advertised"].update(upp["advertised"])
        for name, part in (self._parts or {}).items():
            described = part.describe()
            if described:
                out[name] = described
        return out

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
        self._clients.clear()
        if self._http is not None:
            self._http.close()
        if self._upp is not None:
            self._upp.close()
        for part in (self._parts or {}).values():
            part.close()
        self._parts = None
