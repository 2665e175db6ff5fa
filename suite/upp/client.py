"""What the UPP checks need from an implementation, independent of how it is reached.

UPP is JSON-RPC 2.0 over any transport (upp/05-transport.md); memconform reaches it over HTTP
(`POST` of one message per request) and over stdio (one message per line). Both drivers implement
`UppClient`; every check is written against it. The contract is docs/live-upp.md.

Drivers never raise for an answer they do not like: a reply that is not JSON, not JSON-RPC, or an
error, comes back as an `RpcReply` carrying what was seen, and its JSON-RPC wire problems are kept
apart (`exchange.wire_problems`) so a wire violation is reported by the wire checks, not as a UPP
one. Drivers raise `TargetError` only when nothing usable came back: no answer within the timeout,
the process died, the connection was refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from memconform.suite.upp.jsonrpc import WireProblem

#: The ten operations of UPP 1.0.0 (upp/03-operations.md), in the conformance matrix's order.
OPERATIONS = ("upp/ingest", "upp/retrieve", "upp/info", "upp/contextualize", "upp/get_tasks",
              "upp/get_events", "upp/delete_events", "upp/get_labels", "upp/export_events",
              "upp/import_events")

#: The operations each conformance level adds (upp/08-conformance.md §2).
LEVEL_OPERATIONS = {
    1: ("upp/ingest", "upp/retrieve", "upp/info"),
    2: ("upp/contextualize", "upp/get_tasks", "upp/get_events", "upp/delete_events", "upp/get_labels"),
    3: ("upp/export_events", "upp/import_events"),
}

#: Sentinel for "leave this member out of the request" (a request without `params`, say).
OMIT: Any = type("Omit", (), {"__repr__": lambda self: "OMIT"})()


@dataclass(frozen=True)
class RpcExchange:
    """One message on the wire and what came back for it.

    `sent_text` is exactly what was written (a deliberately malformed message is sent as text);
    `received_text` the raw answer (an HTTP body or one stdio line), None when nothing came back
    (a notification, or an HTTP 204). `received` is that answer parsed as JSON, or None when it is
    not JSON. `wire_problems` are the JSON-RPC 2.0 violations the driver saw in this exchange
    (judged by `memconform.suite.upp.jsonrpc`), each a `WireProblem(requirement, message)` whose
    `str()` is the sentence `requirement: message`.
    """

    sent_text: str
    received_text: str | None
    received: Any = None
    http_status: int | None = None
    content_type: str | None = None
    wire_problems: tuple[WireProblem, ...] = ()

    @property
    def sent(self) -> Any:
        try:
            return json.loads(self.sent_text)
        except ValueError:
            return self.sent_text


@dataclass(frozen=True)
class RpcReply:
    """One JSON-RPC call as it happened: the method and params sent, and the response object.

    Exactly one of `result` / `error` is meaningful: `ok` says the response carried `result` and
    no `error`. `error` is the error object as received (a dict when well formed)."""

    method: str
    params: Any
    exchange: RpcExchange
    response: Any = None  # the JSON-RPC response object matched to this request (dict), or None
    has_result: bool = False
    result: Any = None
    error: Any = None
    #: the name the request went out under when the target maps `method` to a name of its own (a
    #: descriptor's [upp.methods], docs/descriptors.md); None when it went out as `method`
    called_as: str | None = None

    @property
    def named(self) -> str:
        """`upp/get_events`, or `upp/get_events (called as upp/events)` through an alias."""
        return self.method if self.called_as is None else f"{self.method} (called as {self.called_as})"

    @property
    def ok(self) -> bool:
        return self.has_result and self.error is None

    @property
    def error_code(self) -> int | None:
        if isinstance(self.error, dict) and isinstance(self.error.get("code"), int) \
                and not isinstance(self.error.get("code"), bool):
            return self.error["code"]
        return None

    @property
    def error_message(self) -> str | None:
        if isinstance(self.error, dict) and isinstance(self.error.get("message"), str):
            return self.error["message"]
        return None

    def describe(self) -> str:
        """A short account for failure messages: `upp/ingest -> result [3 items]`."""
        if self.ok:
            r = self.result
            shape = (f"[{len(r)} item{'s' if len(r) != 1 else ''}]" if isinstance(r, list)
                     else "{" + ", ".join(sorted(r)) + "}" if isinstance(r, dict) else json.dumps(r)[:80])
            return f"{self.named} -> result {shape}"
        if self.error is not None:
            return f"{self.named} -> error {self.error_code} {self.error_message!r}"
        if self.exchange.received_text is None:
            status = self.exchange.http_status
            return f"{self.named} -> no response" + (f" (HTTP {status})" if status not in (None, 200, 204) else "")
        return f"{self.named} -> not a JSON-RPC response: {self.exchange.received_text[:200]!r}"


Binding = Literal["http", "stdio"]


class UppClient(Protocol):
    """A UPP server reached over one binding. Every method sends one JSON-RPC request with a fresh
    id (unless `id` is given) and returns the reply; none of them raises for a bad answer."""

    binding: Binding

    def call(self, method: str, params: Any = OMIT, *, id: Any = OMIT) -> RpcReply:
        """A request with `method` and `params` (OMIT leaves the member out). `id` OMIT means a
        fresh id from the driver's counter (alternating numbers and strings is the driver's
        business); any other value, including None, is sent as given. `method` goes out exactly
        as given, never through an alias (the naming checks judge the spec's names)."""

    def call_op(self, op: str, params: Any = OMIT) -> RpcReply:
        """The operation `op` (a spec name) with `params`, under the target's own name for it when
        the target maps one (`methods`); the reply names both (`called_as`)."""

    #: the target's names for spec operations it serves under another name: spec name -> its name
    methods: dict[str, str]

    def notify(self, method: str, params: Any = OMIT) -> RpcExchange:
        """A notification (no `id`): per JSON-RPC 2.0 the server answers nothing. Waits a short,
        bounded time for a stray answer and reports what came, if anything."""

    def send_raw(self, text: str | bytes) -> RpcExchange:
        """Send bytes as one message (malformed JSON, a batch, a wrong `jsonrpc`), as given."""

    # The operations, each `call_op(op, params)` with the spec's parameter names. `extra`
    # members are added to params as given (extension parameters, wrong types on purpose).
    def info(self) -> RpcReply: ...
    def ingest(self, entity_key: Any, text: Any, **extra: Any) -> RpcReply: ...
    def retrieve(self, entity_key: Any, query: Any, **extra: Any) -> RpcReply: ...
    def contextualize(self, entity_key: Any, text: Any, **extra: Any) -> RpcReply: ...
    def get_events(self, entity_key: Any, **extra: Any) -> RpcReply: ...
    def delete_events(self, entity_key: Any, event_ids: Any = OMIT, **extra: Any) -> RpcReply: ...
    def get_labels(self) -> RpcReply: ...
    def get_tasks(self, task_ids: Any) -> RpcReply: ...
    def export_events(self, entity_key: Any, **extra: Any) -> RpcReply: ...
    def import_events(self, entity_key: Any, file: Any, **extra: Any) -> RpcReply: ...

    def shares_files(self) -> bool:
        """True when the server runs on this machine (stdio, or HTTP on a loopback address), so a
        file the suite writes can be named to import_events and a file export_events names can be
        read by the suite."""

    def close(self) -> None: ...


@dataclass
class ImportFolder:
    """Where the suite writes ExportPackage files for import_events: next to the server's own
    exports when it has made one (a folder the server can read), else the system temporary folder.
    Files it writes are removed by `cleanup`."""

    path: Path
    written: list[Path] = field(default_factory=list)

    def write(self, name: str, package: Any) -> Path:
        target = self.path / name
        target.write_text(json.dumps(package, ensure_ascii=False, indent=1), encoding="utf-8")
        self.written.append(target)
        return target

    def cleanup(self) -> None:
        for p in self.written:
            p.unlink(missing_ok=True)
        self.written.clear()
