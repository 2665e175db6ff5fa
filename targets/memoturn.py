"""Reaching a memoturn node (suite/memoturn/client.py; docs/memoturn.md).

* `MemoturnRestClient(base_url, timeout)` — the per-profile REST routes under /v1/memory, over
  `HttpSession`; path segments percent-encoded one by one.
* `MemoturnMcpClient(session)` — the memory_* tools over one MCP session of a `McpDriver`
  (stdio child, streamable HTTP, or an MCPServer in this process over the SDK's memory streams).
  A tool's answer is read from structuredContent, else from JSON text content.
* `discover_http(base_url, *, label, timeout)`, `reference_part(...)`, `open_mcp_target(text, ...)`:
  the hooks of suite/specs.py (`http_discovery`, `reference`, `targets`).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from typing import Any

from memconform.suite.memoturn import model
from memconform.suite.memoturn.client import ENV_TOKEN, OMIT, OPERATIONS, MemoturnReply, namespace as default_namespace
from memconform.suite.outcomes import TargetError
from memconform.suite.specs import ReferencePart
from memconform.targets.answers import http_answer
from memconform.targets.base import Subject
from memconform.targets.http_session import HttpSession, json_body as _parse, path_segment as _seg

VERSION = model.VERSION
PREFIX = "/v1/memory"
#: The profile the discovery probe recalls from: never written (recall creates nothing: recall.md).
PROBE = ("memconform-discovery", "probe")
TOOLS = {op: tool for op, (_rest, tool) in OPERATIONS.items()}




def _envelope(value: Any) -> dict[str, Any] | None:
    """errors.md's envelope, {"error": message, "code": code}, or anything with an `error` member."""
    if isinstance(value, dict) and "error" in value:
        return value
    return None


# -- REST ----------------------------------------------------------------------------------------

class MemoturnRestClient:
    binding = "http"

    def __init__(self, base_url: str, timeout: float = 10.0, *, namespace: str | None = None,
                 session: HttpSession | None = None, token: str | None = None):
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.namespace = namespace or default_namespace()
        # a node that needs a credential gets the one its own tools use (api-rest.md: a bearer token)
        self._token = token if token is not None else os.environ.get(ENV_TOKEN) or None
        self._own_session = session is None
        self._http = session or HttpSession(timeout=self.timeout)

    def _path(self, profile: str, *rest: str) -> str:
        return "/".join((PREFIX, _seg(self.namespace), _seg(profile), *(_seg(r) for r in rest)))

    def _send(self, op: str, method: str, path: str, body: Any = OMIT, *, raw: bytes | None = None,
              provoked: bool = False) -> MemoturnReply:
        content = raw if raw is not None else (None if body is OMIT else json.dumps(body, ensure_ascii=False).encode())
        headers = {"Content-Type": "application/json"} if content is not None else {}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        request = self._http.request(method, self.base_url + path, content=content, headers=headers)
        response = self._http.send(request, f"{method} {path}")
        text = response.content.decode("utf-8", "replace") if response.content else None
        is_json, value = _parse(text)
        status = response.status_code
        if not provoked:
            # targets/answers.py: a success that is not JSON (a proxy's page, a cut-off body) is not
            # memoturn at all, an error naming it, never a memory "not there"; only a DELETE may
            # answer without a body (204)
            http_answer(f"{method} {path}", status, response.headers.get("content-type"), response.content,
                        body_ok=is_json or (method == "DELETE" and not response.content),
                        envelope=status >= 300)  # a failure is judged whatever its body; a success must be JSON
        ok = 200 <= status < 300
        error = None if ok else (_envelope(value) or {"error": (text or "")[:300], "code": None})
        # a route that is not there: 404/405 without the envelope's code (a memoturn 404 says not_found)
        not_served = status in (404, 405, 501) and not (isinstance(value, dict) and isinstance(value.get("code"), str))
        sent: Any = (None if body is OMIT else body) if raw is None else raw.decode("utf-8", "replace")
        return MemoturnReply(op, self.binding, f"{method} {path}", sent, status, text, value if is_json else None,
                             ok=ok, body=value if ok and is_json else ({} if ok else None), error=error,
                             not_served=not_served)

    def ingest(self, profile: str, memories: Any) -> MemoturnReply:
        return self._send("ingest", "POST", self._path(profile, "memories"), {"memories": memories})

    def get(self, profile: str, id: str) -> MemoturnReply:
        return self._send("get", "GET", self._path(profile, "memories", id))

    def forget(self, profile: str, id: str) -> MemoturnReply:
        return self._send("forget", "DELETE", self._path(profile, "memories", id))

    def recall(self, profile: str, params: dict[str, Any]) -> MemoturnReply:
        return self._send("recall", "POST", self._path(profile, "recall"), params)

    def sessions(self, profile: str) -> MemoturnReply:
        return self._send("sessions", "GET", self._path(profile, "sessions"))

    def end_session(self, profile: str, session_id: str) -> MemoturnReply:
        return self._send("end_session", "DELETE", self._path(profile, "sessions", session_id))

    def profiles(self) -> MemoturnReply:
        return self._send("profiles", "GET", "/".join((PREFIX, _seg(self.namespace))))

    def send_raw(self, op: str, profile: str, payload: Any) -> MemoturnReply:
        routes = {"ingest": self._path(profile, "memories"), "recall": self._path(profile, "recall")}
        if isinstance(payload, (bytes, str)):
            raw = payload.encode("utf-8") if isinstance(payload, str) else payload
            return self._send(op, "POST", routes[op], raw=raw, provoked=True)
        return self._send(op, "POST", routes[op], payload, provoked=True)

    def in_namespace(self, namespace: str) -> MemoturnRestClient:
        """The same node under another namespace, on this client's connection (closing it closes nothing)."""
        return MemoturnRestClient(self.base_url, self.timeout, namespace=namespace, session=self._http,
                                  token=self._token)

    def close(self) -> None:
        if self._own_session:
            self._http.close()


# -- MCP -------------------------------------------------------------------------------------------


class MemoturnMcpClient:
    """The memory_* tools over one MCP session (targets/mcp.py's `_Session`), shared by the checks
    of a subject and closed with its part."""

    binding = "mcp"

    def __init__(self, session: Any, *, namespace: str | None = None):
        self.session = session
        self.namespace = namespace or default_namespace()

    def _call(self, op: str, arguments: Any) -> MemoturnReply:
        from mcp.shared.exceptions import MCPError

        from memconform.targets.mcp import _json_content, _texts

        tool = TOOLS[op]
        result = self.session.call_tool(tool, arguments, None)
        if isinstance(result, MCPError):
            text = f"JSON-RPC error {result.code}: {result.message}"
            return MemoturnReply(op, self.binding, f"tools/call {tool}", arguments, None, text, None,
                                 error={"error": result.message, "code": None}, not_served=result.code == -32601)
        text = _texts(result)
        structured = result.structured_content
        parsed_ok, parsed = _json_content(result, text)
        value = structured if isinstance(structured, dict) else (parsed if parsed_ok else None)
        if result.is_error:
            error = value if isinstance(value, dict) and "error" in value else {"error": text, "code": None}
            unknown = isinstance(text, str) and "unknown tool" in text.lower()
            return MemoturnReply(op, self.binding, f"tools/call {tool}", arguments, None, text, value,
                                 error=error, not_served=unknown)
        return MemoturnReply(op, self.binding, f"tools/call {tool}", arguments, None, text, value,
                             ok=value is not None, body=value,
                             error=None if value is not None else {"error": "no JSON result", "code": None})

    def _args(self, profile: str, **more: Any) -> dict[str, Any]:
        return {"namespace": self.namespace, "profile": profile, **more}

    def ingest(self, profile: str, memories: Any) -> MemoturnReply:
        return self._call("ingest", self._args(profile, memories=memories))

    def get(self, profile: str, id: str) -> MemoturnReply:
        return self._call("get", self._args(profile, id=id))

    def forget(self, profile: str, id: str) -> MemoturnReply:
        return self._call("forget", self._args(profile, id=id))

    def recall(self, profile: str, params: dict[str, Any]) -> MemoturnReply:
        return self._call("recall", self._args(profile, **params))

    def sessions(self, profile: str) -> MemoturnReply:
        return self._call("sessions", self._args(profile))

    def end_session(self, profile: str, session_id: str) -> MemoturnReply:
        return self._call("end_session", self._args(profile, session_id=session_id))

    def profiles(self) -> MemoturnReply:
        return self._call("profiles", {"namespace": self.namespace})

    def send_raw(self, op: str, profile: str, payload: Any) -> MemoturnReply:
        if isinstance(payload, (bytes, str)):
            raise TargetError("raw text cannot be sent as MCP tool arguments")
        return self._call(op, self._args(profile, **payload) if isinstance(payload, dict) else payload)

    def tool_parameters(self, op: str) -> set[str] | None:
        """The argument names the server's tool for `op` lists in its inputSchema; None when the tool
        is not listed or its schema names no properties (nothing can be told from it)."""
        try:
            tools = self.session.list_tools()
        except Exception:  # noqa: BLE001 — a listing that fails tells nothing; the call itself is judged
            return None
        tool = next((t for t in tools if t.get("name") == TOOLS[op]), None)
        props = ((tool or {}).get("inputSchema") or {}).get("properties")
        return set(props) if isinstance(props, dict) else None

    def in_namespace(self, namespace: str) -> MemoturnMcpClient:
        """The same server under another namespace, on this session."""
        return MemoturnMcpClient(self.session, namespace=namespace)

    def close(self) -> None:
        pass  # the session belongs to the part


class McpPart:
    """memoturn over MCP (a `SpecPart`): one driver and one session, opened on first use; a target
    whose tools are not memoturn's is an error with the tools it has."""

    def __init__(self, label: str, *, text: str | None = None, server: Any = None, timeout: float = 10.0):
        from memconform.targets.mcp import McpDriver

        self.label = label
        self.driver = McpDriver(text or "memoturn-reference-mcp", timeout=timeout, server=server)
        self._session: Any = None
        self._client: MemoturnMcpClient | None = None
        self._lock = threading.Lock()
        self._tools: list[str] | None = None

    def session(self) -> Any:
        with self._lock:
            if self._session is None or self._session.died:
                self._session = self.driver._open_session("memoturn")
                if self._tools is None:
                    self._tools = sorted(str(t.get("name")) for t in self._session.list_tools())
                    if not {"memory_ingest", "memory_recall"} <= set(self._tools):
                        raise TargetError(f"{self.driver.name} is not a memoturn MCP server: its tools are "
                                          f"{self._tools or 'none'}, not memory_ingest and memory_recall")
            return self._session

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "memoturn", VERSION, "mcp")]

    def client(self, subject: Subject) -> MemoturnMcpClient:
        # one client per session, so what a check leaves for a later one (lifecycle's shared TTL
        # placement) is found by the client it is keyed on
        session = self.session()
        if self._client is None or self._client.session is not session:
            self._client = MemoturnMcpClient(session)
        return self._client

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"mcp": self.driver.name, "tools": self._tools}

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None
        self.driver.close()


# -- discovery over plain http:// ---------------------------------------------------------------------

def _probe(base_url: str, timeout: float) -> tuple[str | None, MemoturnReply | None]:
    client = MemoturnRestClient(base_url, timeout, namespace=PROBE[0])
    try:
        reply = client.recall(PROBE[1], {"query": "memconform discovery probe", "k": 1})
    except TargetError as exc:
        return str(exc), None
    finally:
        client.close()
    if reply.ok and reply.memories() is not None:
        return None, reply
    if not reply.ok and reply.status not in (404, 405) and isinstance(reply.received, dict) \
            and reply.received.get("code") in model.ERROR_CODES:
        return None, reply  # memoturn's envelope (e.g. unauthorized): it is there
    return f"POST {PREFIX}/{PROBE[0]}/{PROBE[1]}/recall did not answer as memoturn: {reply.describe()}", reply


def discover_rest(base_url: str, timeout: float = 5.0) -> str | None:
    """None when `base_url` serves memoturn's REST routes, else why not. One recall of a profile
    nobody writes: recall.md answers {"memories": [], "txid": 0} and creates nothing."""
    return _probe(base_url, timeout)[0]


class RestPart:
    def __init__(self, base_url: str, label: str, timeout: float, *, refused: str | None = None):
        self.base_url, self.label, self.timeout = base_url.rstrip("/"), label, timeout
        #: why the node cannot be judged as given (it wants a credential): every check is then a
        #: target error with this reason, never a verdict
        self.refused = refused
        self._client: MemoturnRestClient | None = None

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "memoturn", VERSION, "http")]

    def client(self, subject: Subject) -> MemoturnRestClient:
        if self.refused:
            raise TargetError(self.refused)
        # one client (and connection pool) for the node's checks, closed with the part
        if self._client is None:
            self._client = MemoturnRestClient(self.base_url, self.timeout)
        return self._client

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"rest": self.base_url + PREFIX}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def discover_http(base_url: str, *, label: str, timeout: float = 10.0) -> RestPart | str:
    """The memoturn part here, or why its probe found none."""
    why, reply = _probe(base_url, min(timeout, 5.0))
    if why is not None:
        return why
    refused = None
    if reply is not None and reply.status == 401:
        refused = (f"memoturn at {base_url.rstrip('/')}{PREFIX} answered 401 unauthorized to a recall "
                   f"({reply.describe()}): give its bearer token in {ENV_TOKEN} (and the namespace it covers in "
                   f"MEMCONFORM_MEMOTURN_NAMESPACE)")
    return RestPart(base_url, label, timeout, refused=refused)


# -- the reference (suite/specs.py `reference`) ----------------------------------------------------------

@dataclass
class MemoturnReferencePart(ReferencePart):
    """memoturn's piece of the reference target and of `memconform serve`: its REST routes mounted
    on the all-spec server (or served in a thread of their own when nothing attached them), and its
    MCP server reached in process over the SDK's memory streams."""

    label: str
    fault: Any = None
    variants: tuple[str, ...] = ()
    timeout: float = 10.0
    _service: Any = None
    _base: str | None = None
    _server: Any = None
    _mcp: McpPart | None = None
    _rest: MemoturnRestClient | None = None

    BINDINGS = ("http", "mcp")

    @property
    def service(self) -> Any:
        if self._service is None:
            from memconform.reference_impl.memoturn.engine import MemoturnService

            self._service = MemoturnService(fault=self.fault, variants=self.variants)
        return self._service

    def routes(self) -> list[Any]:
        from memconform.reference_impl.memoturn.http import routes

        return routes(self.service)

    def announce(self, base_url: str) -> str:
        return (f"memoturn typed memories REST at {base_url}{PREFIX}/{{ns}}/{{profile}}, MCP over stdio: "
                f"memconform memoturn mcp")

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "memoturn", VERSION, b) for b in self.BINDINGS]

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def client(self, subject: Subject) -> Any:
        if subject.binding == "http":
            base = self.base_url()
            if self._rest is None or self._rest.base_url != base.rstrip("/"):
                self._rest = MemoturnRestClient(base, self.timeout)
            return self._rest
        if subject.binding == "mcp":
            if self._mcp is None:
                from memconform.reference_impl.memoturn.mcp import build_mcp_server

                self._mcp = McpPart(self.label, server=build_mcp_server(self.service), timeout=self.timeout)
            return self._mcp.client(subject)
        raise TargetError(f"the memoturn reference has no binding {subject.binding!r}")

    def describe(self) -> dict[str, Any]:
        return {"rest": f"{self._base}{PREFIX}" if self._base else None, "fault": self.fault,
                "variants": list(self.variants)}

    def close(self) -> None:
        if self._rest is not None:
            self._rest.close()
            self._rest = None
        if self._mcp is not None:
            self._mcp.close()
        self.stop_server()
        if self._service is not None:
            self._service.close()


def reference_part(*, label: str, fault: Any = None, variants: Any = (), timeout: float = 10.0) -> MemoturnReferencePart:
    return MemoturnReferencePart(label=label, fault=fault, variants=tuple(variants or ()), timeout=timeout)


# -- memoturn+mcp+… target strings -------------------------------------------------------------------

class MemoturnMcpTarget(McpPart):
    """`memoturn+mcp+stdio:COMMAND ARGS` or `memoturn+mcp+http://HOST:PORT/PATH`: the memory_*
    tools of a server the target names (a plain `mcp+` target is UMP's)."""

    def __init__(self, text: str, *, label: str, timeout: float = 10.0):
        inner = text.strip()[len("memoturn+"):]
        super().__init__(label, text=inner, timeout=timeout)
        self.kind = "memoturn+" + inner.split(":", 1)[0]

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind, "advertised": {}, **super().describe()}


def open_mcp_target(text: str, *, label: str, timeout: float = 10.0) -> MemoturnMcpTarget:
    target = MemoturnMcpTarget(text, label=label, timeout=timeout)
    try:
        target.session()
    except BaseException:
        target.close()
        raise
    return target


# -- descriptors (suite/specs.py `descriptor`) --------------------------------------------------------

#: `[memoturn.<binding>]` -> the keys reaching it (exactly one given): REST from a base; MCP from a
#: command (stdio) or a URL (streamable HTTP), the subject being "mcp" either way.
DESCRIPTOR_BINDINGS = {"http": ("base_url",), "mcp": ("command", "url")}


class DescribedRestPart(RestPart):
    """memoturn REST at a descriptor's base URL, probed once the server is up."""

    def probe(self) -> str | None:
        return discover_rest(self.base_url, min(self.timeout, 5.0))


class DescribedMcpPart(McpPart):
    """memoturn over MCP where a descriptor says; probing opens the session and reads its tools."""

    def probe(self) -> str | None:
        try:
            self.session()
        except TargetError as exc:
            return str(exc)
        return None


def descriptor_section(table: dict[str, Any], *, names: Any, reader: Any) -> Any:
    """`[memoturn]` of a descriptor: `[memoturn.http] base_url`, `[memoturn.mcp] command` or `url`."""
    from memconform.targets.descriptor import PluggedSection, read_bindings

    return PluggedSection("memoturn", tuple(DESCRIPTOR_BINDINGS),
                          read_bindings(reader, "memoturn", table, names, DESCRIPTOR_BINDINGS), descriptor_part)


def descriptor_part(binding: str, *, url: str | None, argv: list[str] | None, label: str,
                    timeout: float = 10.0) -> Any:
    if binding == "http":
        return DescribedRestPart(str(url), label, timeout)
    import shlex

    text = f"mcp+stdio:{shlex.join(argv)}" if argv is not None else f"mcp+{url}"
    return DescribedMcpPart(label, text=text, timeout=timeout)
