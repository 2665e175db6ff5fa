"""Reaching an OAMS 0.1 implementation (suite/oams/client.py; docs/oams.md).

* `OamsRestClient(base_url, timeout)` — REST under /v1/oams (§3), over `HttpSession`; path
  segments percent-encoded one by one (a namespace's `:` goes as %3A, a `/` as %2F).
* `OamsRpcClient(transport)` — JSON-RPC 2.0 methods `oams.store|recall|list|forget|batch_store`
  over `targets.jsonrpc.HttpTransport` (one POST per message to the URL the target names: the spec
  names none, so none is ever guessed) or `StdioTransport` (one message per line).
* `OamsFileClient(path)` — a JSONL store, a Markdown serialization or an export bundle folder.
* `discover_rest(session_or_base_url)` — whether an http:// server serves OAMS REST, without side
  effects (one GET of a namespace nobody writes): None when it does, else why not.
* `discover_http(base_url, *, label, timeout)` and `reference_part(*, label, fault, variants,
  timeout)` — the hooks of suite/specs.py (`http_discovery`, `reference`).
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import sys
import tempfile
import threading
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memconform.suite.oams import model
from memconform.suite.oams.client import CONSOLIDATE, DEFAULT_OWNERS, OMIT, OPERATIONS, OamsReply
from memconform.suite.outcomes import TargetError
from memconform.suite.specs import ReferencePart
from memconform.targets.base import Subject
from memconform.targets.http_session import HttpSession, json_body as _parse, path_segment as _seg

VERSION = model.VERSION
PREFIX = "/v1/oams"
#: The namespace the discovery probe lists (never written).
PROBE_NAMESPACE = "memconform-discovery:probe"
RPC_METHODS = {op: method for op, (_rest, method) in OPERATIONS.items()} | {"consolidate": CONSOLIDATE[1]}




def _error_shape(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        return value["error"]
    return None


# -- REST ----------------------------------------------------------------------------------------

class OamsRestClient:
    binding = "http"

    def __init__(self, base_url: str, timeout: float = 10.0, *, owners: tuple[str, str] = DEFAULT_OWNERS,
                 session: HttpSession | None = None):
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.owners = owners
        self._own_session = session is None
        self._http = session or HttpSession(timeout=self.timeout)

    def _send(self, op: str, method: str, path: str, body: Any = OMIT, *, params: dict[str, Any] | None = None,
              raw: bytes | None = None) -> OamsReply:
        url = self.base_url + path
        content = raw if raw is not None else (None if body is OMIT else json.dumps(body, ensure_ascii=False).encode())
        headers = {"Content-Type": "application/json"} if content is not None else {}
        query = {k: v for k, v in (params or {}).items() if v is not None}
        request = self._http.request(method, url, content=content, headers=headers, params=query or None)
        shown_path = path + (("?" + urllib.parse.urlencode(query)) if query else "")
        response = self._http.send(request, f"{method} {shown_path}")
        text = response.content.decode("utf-8", "replace") if response.content else None
        is_json, value = _parse(text)
        error = _error_shape(value)
        status = response.status_code
        ok = 200 <= status < 300 and error is None
        not_served = status in (404, 405, 501) and (error is None or error.get("code") == -32601)
        sent: Any = (None if body is OMIT else body) if raw is None else raw.decode("utf-8", "replace")
        nxt = response.links.get("next", {}).get("url") if "link" in response.headers else None
        return OamsReply(op, self.binding, f"{method} {shown_path}", sent, status, text,
                         value if is_json else None, has_result=ok, result=value if ok else None,
                         error=error, not_served=not_served, link_next=nxt)

    def store(self, memory: Any, namespace: str | None = None, key: str | None = None) -> OamsReply:
        ns = namespace if namespace is not None else (memory.get("namespace") if isinstance(memory, dict) else None)
        k = key if key is not None else (memory.get("key") if isinstance(memory, dict) else None)
        return self._send("store", "PUT", f"{PREFIX}/memories/{_seg(ns)}/{_seg(k)}", memory)

    def recall(self, params: dict[str, Any]) -> OamsReply:
        return self._send("recall", "POST", f"{PREFIX}/recall", params)

    def list(self, namespace: str, *, cursor: Any = None, limit: Any = None, since: Any = None,
             tags: Any = None) -> OamsReply:
        q = {"cursor": cursor, "limit": limit, "since": since,
             "tags": ",".join(tags) if isinstance(tags, list) else tags}
        return self._send("list", "GET", f"{PREFIX}/memories/{_seg(namespace)}", params=q)

    def forget(self, namespace: str, key: str) -> OamsReply:
        return self._send("forget", "DELETE", f"{PREFIX}/memories/{_seg(namespace)}/{_seg(key)}")

    def batch_store(self, memories: Any) -> OamsReply:
        return self._send("batch_store", "POST", f"{PREFIX}/memories/batch", {"memories": memories})

    def consolidate(self, namespace: str, strategy: str | None = None) -> OamsReply:
        body = {"namespace": namespace} | ({"strategy": strategy} if strategy else {})
        return self._send("consolidate", "POST", f"{PREFIX}/consolidate", body)

    def send_raw(self, op: str, payload: Any, *, namespace: str | None = None, key: str | None = None) -> OamsReply:
        routes = {"store": ("PUT", f"{PREFIX}/memories/{_seg(namespace)}/{_seg(key)}"),
                  "recall": ("POST", f"{PREFIX}/recall"), "batch_store": ("POST", f"{PREFIX}/memories/batch"),
                  "list": ("GET", f"{PREFIX}/memories/{_seg(namespace)}"),
                  "forget": ("DELETE", f"{PREFIX}/memories/{_seg(namespace)}/{_seg(key)}")}
        method, path = routes[op]
        if isinstance(payload, (bytes, str)):
            raw = payload.encode("utf-8") if isinstance(payload, str) else payload
            return self._send(op, method, path, raw=raw)
        return self._send(op, method, path, payload)

    def close(self) -> None:
        if self._own_session:
            self._http.close()


# -- JSON-RPC --------------------------------------------------------------------------------------

class OamsRpcClient:
    """OAMS over a JSON-RPC transport (targets/jsonrpc.py's HttpTransport or StdioTransport).
    `binding` is "jsonrpc" over HTTP, "stdio" over a child process."""

    def __init__(self, transport: Any, *, owners: tuple[str, str] = DEFAULT_OWNERS, own_transport: bool = True):
        self.transport = transport
        self.binding = "stdio" if getattr(transport, "binding", "http") == "stdio" else "jsonrpc"
        self.owners = owners
        self._own = own_transport
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._deaths: Any = None  # a OneRestart, made when a child first ends (stdio only)
        #: (what was sent, the driver's framing problem) for each stdio answer not on one line of its own
        self.framing: list[tuple[str, str]] = []

    def _exchange(self, data: bytes, sent: Any) -> Any:
        """One exchange; over stdio a server that ends on a message that is not JSON, sent on purpose,
        is a verdict on that message (no answer), not a target gone: the child is started again under
        the UPP driver's rule (targets/jsonrpc.py, OneRestart: up to MAX_MALFORMED such deaths)."""
        from memconform.suite.upp.client import RpcExchange
        from memconform.suite.upp.jsonrpc import NOT_JSON, PARSE_ERROR, STDIO_LINE_FRAMING, WireProblem, parse_sent

        try:
            exchange = self.transport.exchange(data, sent)
            self.framing += [(exchange.sent_text, p.message) for p in exchange.wire_problems
                             if p.requirement == STDIO_LINE_FRAMING]
            return exchange
        except TargetError:
            old = self.transport
            if self.binding != "stdio" or parse_sent(data) is not NOT_JSON or not old.ended():
                raise
            from memconform.targets.jsonrpc import OneRestart, StdioTransport

            self._deaths = self._deaths or OneRestart(old.name)
            self._deaths.died("it ended on a line that is not JSON, sent on purpose", None, malformed=True)
            if not self._deaths.deaths[-1]["restarted"]:
                raise
            self.transport = StdioTransport(old.argv, timeout=old.timeout, name=old.name, env=old.env,
                                            notify_wait=old.notify_wait, forgive_late=old.forgive_late)
            old.close()
            return RpcExchange(data.decode("utf-8", "replace"), None, None, wire_problems=(WireProblem(
                PARSE_ERROR, "the server process ended on this message, which is not JSON (it was started again)"),))

    def _call(self, op: str, method: str, params: Any, raw: bytes | None = None, id_: Any = None) -> OamsReply:
        if id_ is None:
            with self._lock:
                id_ = next(self._ids)
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        data = raw if raw is not None else json.dumps(message, ensure_ascii=False).encode("utf-8")
        exchange = self._exchange(data, message if raw is None else data.decode("utf-8", "replace"))
        value = exchange.received
        response = value
        if isinstance(value, list):  # an answer to one request should not be a batch; take ours
            response = next((r for r in value if isinstance(r, dict) and r.get("id") == id_), None)
        has_result = isinstance(response, dict) and "result" in response and "error" not in response
        error = response.get("error") if isinstance(response, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        return OamsReply(op, self.binding, method, params if raw is None else data.decode("utf-8", "replace"),
                         exchange.http_status if self.binding == "jsonrpc" else None, exchange.received_text,
                         value, has_result=has_result, result=response.get("result") if has_result else None,
                         error=error, not_served=code == -32601)

    def store(self, memory: Any, namespace: str | None = None, key: str | None = None) -> OamsReply:
        return self._call("store", "oams.store", {"memory": memory})

    def recall(self, params: dict[str, Any]) -> OamsReply:
        return self._call("recall", "oams.recall", params)

    def list(self, namespace: str, *, cursor: Any = None, limit: Any = None, since: Any = None,
             tags: Any = None) -> OamsReply:
        params = {"namespace": namespace} | {k: v for k, v in (("cursor", cursor), ("limit", limit), ("since", since),
                                                                ("tags", tags)) if v is not None}
        return self._call("list", "oams.list", params)

    def forget(self, namespace: str, key: str) -> OamsReply:
        return self._call("forget", "oams.forget", {"namespace": namespace, "key": key})

    def batch_store(self, memories: Any) -> OamsReply:
        return self._call("batch_store", "oams.batch_store", {"memories": memories})

    def consolidate(self, namespace: str, strategy: str | None = None) -> OamsReply:
        return self._call("consolidate", "oams.consolidate",
                          {"namespace": namespace} | ({"strategy": strategy} if strategy else {}))

    def exchange_text(self, text: str) -> Any:
        """One message written as given (not JSON, on purpose): the transport's RpcExchange."""
        from memconform.suite.upp.jsonrpc import parse_sent

        data = text.encode("utf-8")
        return self._exchange(data, parse_sent(data))

    def notify(self, method: str, params: Any) -> Any:
        """A notification (no id): the transport's RpcExchange, whose received_text is any answer."""
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        return self._exchange(json.dumps(message).encode("utf-8"), message)

    def call_with_id(self, op: str, params: Any, request_id: Any) -> OamsReply:
        """One operation sent with the request id given (the envelope's id rule); the whole response
        is the reply's `received`."""
        return self._call(op, RPC_METHODS[op], params, id_=request_id)

    def send_raw(self, op: str, payload: Any, *, namespace: str | None = None, key: str | None = None) -> OamsReply:
        method = RPC_METHODS[op]
        if isinstance(payload, (bytes, str)):
            text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
            return self._call(op, method, None, raw=(
                '{"jsonrpc": "2.0", "id": 0, "method": ' + json.dumps(method) + ', "params": ' + text + "}").encode())
        return self._call(op, method, payload)

    def close(self) -> None:
        if self._own:
            self.transport.close()


def rpc_over_http(url: str, timeout: float = 10.0, **kw: Any) -> OamsRpcClient:
    from memconform.targets.jsonrpc import HttpTransport

    return OamsRpcClient(HttpTransport(url, timeout=timeout), **kw)


def rpc_over_stdio(argv: list[str], timeout: float = 10.0, **kw: Any) -> OamsRpcClient:
    from memconform.targets.jsonrpc import StdioTransport

    return OamsRpcClient(StdioTransport(argv, timeout=timeout, forgive_late=True), **kw)


# -- files -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FileView:
    kind: str
    path: Path
    values: tuple[Any, ...]
    problems: tuple[model.Problem, ...]
    bundle: model.Bundle | None = None
    markdown: str | None = None

    @property
    def memories(self) -> list[dict[str, Any]]:
        return model.memories_of(list(self.values))


class OamsFileClient:
    binding = "file"

    def __init__(self, path: str | Path, version: str = VERSION):
        self.path = Path(path)
        self.version = version
        self.kind = self._kind()

    def _kind(self) -> str:
        p = self.path
        if p.is_dir():
            return "bundle"
        if p.suffix.lower() in (".md", ".markdown"):
            return "markdown"
        return "jsonl"

    def _folder(self) -> Path:
        p = self.path
        if (p / "manifest.json").exists() or (p / "memories.jsonl").exists():
            return p
        inner = sorted(q for q in p.iterdir() if q.is_dir() and model.BUNDLE_NAME.fullmatch(q.name))
        return inner[-1] if inner else p

    def read(self) -> FileView:
        try:
            if self.kind == "bundle":
                b = model.read_bundle(self._folder(), self.version)
                return FileView("bundle", b.path, b.values, b.problems, bundle=b)
            data = self.path.read_bytes()
        except OSError as exc:
            raise TargetError(f"file:{self.path}: cannot read it ({exc})") from None
        if self.kind == "markdown":
            text = data.decode("utf-8", "replace")
            memories, problems = model.parse_markdown(text, str(self.path))
            return FileView("markdown", self.path, tuple(memories), tuple(problems), markdown=text)
        values, framing = model.parse_jsonl(data, str(self.path))
        return FileView("jsonl", self.path, tuple(values),
                        tuple(framing) + tuple(model.store_problems(values, str(self.path))))

    def close(self) -> None:
        pass


# -- discovery (suite/specs.py `http_discovery`) ---------------------------------------------------------

def discover_rest(session_or_base_url: HttpSession | str, base_url: str | None = None,
                  timeout: float = 5.0) -> str | None:
    """None when the server at `base_url` serves OAMS REST (a LIST of a namespace nobody writes
    answers a page, or §3's error shape with a reserved code); otherwise why not. Side-effect free:
    one GET."""
    if isinstance(session_or_base_url, str):
        base, session, own = session_or_base_url, HttpSession(timeout=timeout), True
    else:
        base, session, own = base_url or session_or_base_url.base_url, session_or_base_url, False
    url = f"{base.rstrip('/')}{PREFIX}/memories/{_seg(PROBE_NAMESPACE)}"
    try:
        response = session.send(session.request("GET", url, params={"limit": "1"}), f"GET {url}?limit=1")
    except TargetError as exc:
        return str(exc)
    finally:
        if own:
            session.close()
    ok, value = _parse(response.content.decode("utf-8", "replace"))
    what = f"GET {PREFIX}/memories/{_seg(PROBE_NAMESPACE)}?limit=1 answered HTTP {response.status_code}"
    if not ok:
        return f"{what} without JSON: no OAMS REST binding here"
    error = _error_shape(value)
    if error is not None:
        if error.get("code") in model.RESERVED_CODES:
            return None
        return f"{what} with error {json.dumps(error)[:200]}: not an OAMS answer"
    if 200 <= response.status_code < 300:
        reply = OamsReply("list", "http", "GET", None, response.status_code, None, value, True, value)
        items, how = reply.memories()
        if items is not None:
            return None
        return f"{what}: {how}"
    return f"{what}: not an OAMS page nor §3's error shape"


class OamsHttpPart:
    """OAMS found on a plain http:// target (a `SpecPart`)."""

    def __init__(self, base_url: str, label: str, timeout: float):
        self.base_url, self.label, self.timeout = base_url.rstrip("/"), label, timeout

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "oams", VERSION, "http")]

    def client(self, subject: Subject) -> Any:
        return OamsRestClient(self.base_url, self.timeout)

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"rest": f"{self.base_url}{PREFIX}"}

    def close(self) -> None:
        pass


def discover_http(base_url: str, *, label: str, timeout: float = 10.0) -> OamsHttpPart | str:
    """The OAMS part here, or why its probe found none."""
    why = discover_rest(base_url, timeout=min(timeout, 5.0))
    return OamsHttpPart(base_url, label, timeout) if why is None else why


# -- the reference (suite/specs.py `reference`) ----------------------------------------------------------

@dataclass
class OamsReferencePart(ReferencePart):
    """OAMS's piece of the reference target and of `memconform serve`: its REST routes and its
    JSON-RPC route (POST /v1/oams/rpc) mounted on the all-spec server (`routes`, `attach`), or
    served in a thread of its own when nothing attached it; stdio as a child process; file as a
    bundle exported into a temporary folder."""

    label: str
    fault: Any = None
    variants: tuple[str, ...] = ()
    timeout: float = 10.0
    _service: Any = None
    _base: str | None = None
    _server: Any = None
    _stdio: Any = None
    _tmp: str | None = None
    _bundle: Path | None = None
    _clients: list[Any] = field(default_factory=list)

    BINDINGS = ("http", "jsonrpc", "stdio", "file")

    @property
    def service(self) -> Any:
        if self._service is None:
            from memconform.reference_impl.oams.engine import OamsService

            self._service = OamsService(fault=self.fault, variants=self.variants)
        return self._service

    def routes(self) -> list[Any]:
        from memconform.reference_impl.oams.http import routes, rpc_route

        return [rpc_route(self.service)] + routes(self.service)

    def announce(self, base_url: str) -> str:
        return f"OAMS 0.1 REST at {base_url}/v1/oams, JSON-RPC at POST {base_url}/v1/oams/rpc"

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "oams", VERSION, b) for b in self.BINDINGS]

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def client(self, subject: Subject) -> Any:
        if subject.binding == "http":
            return OamsRestClient(self.base_url(), self.timeout)
        if subject.binding == "jsonrpc":
            return rpc_over_http(self.base_url() + "/v1/oams/rpc", self.timeout)
        if subject.binding == "stdio":
            if self._stdio is None or not self._stdio.transport.alive:
                argv = [sys.executable, "-m", "memconform.reference_impl.oams.rpc"]
                if self.fault:
                    argv += ["--fault", self.fault if isinstance(self.fault, str) else self.fault.name]
                for v in self.variants:
                    argv += ["--variant", v]
                self._stdio = rpc_over_stdio(argv, self.timeout)
            return _Shared(self._stdio)
        if subject.binding == "file":
            if self._bundle is None:
                from memconform.reference_impl.oams.bundle import export_bundle

                from memconform.reference_impl.oams.engine import OamsService

                # a store of its own: what the live checks placed (no source_id, by design) is
                # not the reference's export, and the file verdict must not depend on their order
                self._tmp = tempfile.mkdtemp(prefix="memconform-oams-")
                exporting = OamsService(fault=self.fault, variants=self.variants)
                try:
                    seed_export(exporting)
                    self._bundle = export_bundle(exporting, self._tmp)
                finally:
                    exporting.close()
            return OamsFileClient(self._bundle)
        raise TargetError(f"the OAMS reference has no binding {subject.binding!r}")

    def describe(self) -> dict[str, Any]:
        return {"rest": f"{self._base}{PREFIX}" if self._base else None, "fault": self.fault,
                "variants": list(self.variants)}

    def close(self) -> None:
        if self._stdio is not None:
            self._stdio.close()
        self.stop_server()
        if self._service is not None:
            self._service.close()
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)


class _Shared:
    """A client sharing a transport it does not close."""

    def __init__(self, inner: Any):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def close(self) -> None:
        pass


def reference_part(*, label: str, fault: Any = None, variants: Any = (), timeout: float = 10.0) -> OamsReferencePart:
    return OamsReferencePart(label=label, fault=fault, variants=tuple(variants or ()), timeout=timeout)


def seed_export(service: Any) -> None:
    """What the reference's file subject exports: two namespaces of one owner, memories with and
    without provenance, tags, metadata and an embedding, and one consolidation pass."""
    from memconform.reference_impl.oams.engine import OamsError

    ns_a, ns_b = "mc-export:personal", "mc-export:project-x"
    memories = [
        {"key": "m1", "namespace": ns_a, "value": "The first memory.", "tags": ["research"],
         "source_id": "https://example.com/article", "created_at": "2026-04-27T12:00:00Z",
         "updated_at": "2026-04-27T12:00:00Z", "metadata": {"confidence": 0.9, "language": "en"}},
        {"key": "m2", "namespace": ns_a, "value": "**Markdown** value, ünïcödé", "source_id": "sha256:" + "ab" * 32,
         "created_at": "2026-04-27T12:05:00Z", "updated_at": "2026-04-28T08:00:00Z",
         "embedding_model": "text-embedding-3-small", "embedding": [0.0123, -0.0456, 0.5]},
        {"key": "m3", "namespace": ns_b, "value": "A project note.", "source_id": "transcript:call-7:42",
         "created_at": "2026-04-26T09:00:00Z", "updated_at": "2026-04-26T09:00:00Z"},
    ]
    # a reference with a fault of its own operations still exports what it holds: one STORE each where
    # the batch is refused, and nothing of what it refuses
    try:
        service.batch_store(memories)
    except OamsError:
        for m in memories:
            try:
                service.store(m)
            except OamsError:
                pass
    try:
        service.consolidate(ns_a)
    except OamsError:
        pass


# -- JSON-RPC and file targets (for the target-string / descriptor wiring) --------------------------------

def probe_rpc(client: OamsRpcClient) -> str | None:
    """None when a JSON-RPC peer answers `oams.list` of a namespace nobody writes with a page or
    §3's -32001; otherwise why not. Side-effect free."""
    reply = client.list(PROBE_NAMESPACE, limit=1)
    if reply.ok and reply.memories()[0] is not None:
        return None
    if reply.error_code in model.RESERVED_CODES:
        return None
    return f"oams.list of {PROBE_NAMESPACE!r} did not answer as OAMS: {reply.describe()}"


class OamsRpcPart:
    """OAMS over JSON-RPC at a place the target names (`binding` "jsonrpc": a URL; "stdio": an
    argv); a `SpecPart`. One transport is shared by the subject's clients and closed with the part."""

    def __init__(self, binding: str, where: str | list[str], *, label: str, timeout: float = 10.0):
        if binding not in ("jsonrpc", "stdio"):
            raise ValueError(f"OAMS JSON-RPC binding {binding!r}: jsonrpc or stdio")
        self.binding, self.where, self.label, self.timeout = binding, where, label, timeout
        self._client: OamsRpcClient | None = None

    def _shared(self) -> OamsRpcClient:
        if self._client is None or not getattr(self._client.transport, "alive", True):
            self._client = (rpc_over_http(str(self.where), self.timeout) if self.binding == "jsonrpc"
                            else rpc_over_stdio(list(self.where), self.timeout))
        return self._client

    def probe(self) -> str | None:
        return probe_rpc(self._shared())

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "oams", VERSION, self.binding)]

    def client(self, subject: Subject) -> Any:
        return _Shared(self._shared())

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {self.binding: self.where if isinstance(self.where, str) else " ".join(self.where)}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def sniff_file(path: str | Path) -> bool:
    """Whether `path` looks like an OAMS file: a bundle folder (manifest.json with oams_version, or
    a folder holding an oams-export-* folder), a JSONL store whose first object has key, namespace
    and value, or a Markdown file starting with a `## key:` section."""
    p = Path(path)
    try:
        if p.is_dir():
            manifest = p / "manifest.json"
            if manifest.is_file():
                data = json.loads(manifest.read_text("utf-8"))
                return isinstance(data, dict) and "oams_version" in data
            return any(q.is_dir() and model.BUNDLE_NAME.fullmatch(q.name) for q in p.iterdir())
        if p.suffix.lower() in (".md", ".markdown"):
            with p.open("r", encoding="utf-8", errors="replace") as f:
                head = f.read(4096)
            # §7's field lines mark it too: a file whose headers lost their `key:` is broken OAMS,
            # judged (oams/markdown-shape), not another protocol (a blind red team, round 18)
            return head.lstrip().startswith("## key:") or bool(re.search(r"(?m)^\*\*namespace:\*\* ", head))
        with p.open("rb") as f:
            first = f.readline(1 << 20)
        value = json.loads(first)
        return isinstance(value, dict) and all(k in value for k in ("key", "namespace", "value"))
    except (OSError, ValueError):
        return False


class OamsFilePart:
    """A `file:` target holding OAMS (`sniff_file`); a `SpecPart`."""

    def __init__(self, path: str | Path, *, label: str):
        self.path, self.label = Path(path), label

    def subjects(self) -> list[Subject]:
        return [Subject(self.label, "oams", VERSION, "file")]

    def client(self, subject: Subject) -> Any:
        return OamsFileClient(self.path, subject.version)

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"file": str(self.path)}

    def close(self) -> None:
        pass


def discover_file(path: str | Path, *, label: str) -> OamsFilePart | None:
    """suite/specs.py `file_discovery`: the part for a `file:` target holding OAMS, or None."""
    return OamsFilePart(path, label=label) if sniff_file(path) else None


class OamsRpcTarget:
    """`oams+jsonrpc+http://HOST:PORT/PATH` or `oams+jsonrpc+stdio:COMMAND ARGS`: OAMS over JSON-RPC
    where the target says (the spec names no endpoint, so the suite never guesses one). The
    server must answer the side-effect-free probe (`oams.list` of a namespace nobody writes) as
    OAMS: anything else is one target error, not a verdict."""

    def __init__(self, text: str, *, label: str, timeout: float = 10.0):
        import shlex

        self.label, self.text = label, text
        rest = text[len("oams+jsonrpc+"):]
        if rest.startswith("stdio:"):
            try:
                argv = shlex.split(rest[len("stdio:"):])
            except ValueError as exc:
                raise TargetError(f"cannot split the command of {text!r}: {exc}") from None
            if not argv:
                raise TargetError(f"{text!r} names no command (oams+jsonrpc+stdio:COMMAND ARGS)")
            self.part = OamsRpcPart("stdio", argv, label=label, timeout=timeout)
        else:
            self.part = OamsRpcPart("jsonrpc", rest, label=label, timeout=timeout)
        self._probed: str | None | bool = False

    def subjects(self) -> list[Subject]:
        if self._probed is False:
            self._probed = self.part.probe()
        if self._probed is not None:
            self.part.close()
            raise TargetError(f"{self.text}: {self._probed}")
        return self.part.subjects()

    def advertised_level(self, subject: Subject) -> str | None:
        return None

    def client(self, subject: Subject) -> Any:
        return self.part.client(subject)

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "kind": f"oams+jsonrpc+{self.part.binding}", "advertised": {},
                **self.part.describe()}

    def close(self) -> None:
        self.part.close()


def open_rpc_target(text: str, *, label: str, timeout: float = 10.0) -> OamsRpcTarget:
    """suite/specs.py `targets`: the driver of an `oams+jsonrpc+…` target string."""
    return OamsRpcTarget(text, label=label, timeout=timeout)


# -- descriptors (suite/specs.py `descriptor`) --------------------------------------------------------

#: `[oams.<binding>]` -> the keys reaching it (one each): REST from a base, JSON-RPC at the URL the
#: descriptor names (the spec names none), stdio from a command.
DESCRIPTOR_BINDINGS = {"http": ("base_url",), "jsonrpc": ("url",), "stdio": ("command",)}


class OamsDescribedHttpPart(OamsHttpPart):
    """OAMS REST at a descriptor's base URL: described, not discovered, so it is probed once the
    server is up (an absent binding is one target error, not a column of failures)."""

    def probe(self) -> str | None:
        return discover_rest(self.base_url, timeout=min(self.timeout, 5.0))


def descriptor_section(table: dict[str, Any], *, names: Any, reader: Any) -> Any:
    """`[oams]` of a descriptor: `[oams.http] base_url`, `[oams.jsonrpc] url`, `[oams.stdio] command`."""
    from memconform.targets.descriptor import PluggedSection, read_bindings

    return PluggedSection("oams", tuple(DESCRIPTOR_BINDINGS),
                          read_bindings(reader, "oams", table, names, DESCRIPTOR_BINDINGS), descriptor_part)


def descriptor_part(binding: str, *, url: str | None, argv: list[str] | None, label: str,
                    timeout: float = 10.0) -> Any:
    if binding == "http":
        return OamsDescribedHttpPart(str(url), label, timeout)
    return OamsRpcPart(binding, url if binding == "jsonrpc" else list(argv or ()), label=label, timeout=timeout)
