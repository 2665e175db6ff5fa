"""The reference server's MCP binding (§4.1): an `MCPServer` whose `ump.*` tools call `UmpService`.

Tools: `ump.capabilities`, `ump.recall`, `ump.remember`, `ump.get`, `ump.revise`, `ump.forget`,
`ump.feedback`, `ump.subscribe`, `ump.rehydrate` (docs/live-ump.md).

* Arguments are the §3 request object itself (`ump.get {id}`, `ump.remember {record}` or a bare
  record, …). They reach the service unvalidated: the input schemas advertise the request shapes
  (suite/ump/schemas/operations.schema.json) but wrong types or missing members are the
  service's to refuse (`invalid_record`), never the SDK's.
* A success is the §3 response object as `structuredContent` (each tool advertises an
  `outputSchema`) plus the same JSON as text content, for clients that read text (as the public
  implementation does).
* An error is `isError: true` with `structuredContent {"error": {"code", "message"}}` and text
  `"<code>: <message>"`, so both our reading and the public implementation's hold.
* The capability token comes from the request's `_meta["ump/capability"]`, else the tool argument
  `capability`; with neither the service decides (token None).
* Version: `ump.capabilities {"client": {"ump": V}}` fixes the session's version when the server
  speaks V; every later call on that MCP session uses it; default the newest. The 2026-07-28
  protocol has no sessions (every request stands alone), so a request may also name its version
  in `_meta["ump/version"]` (memconform's extension, the MCP twin of the HTTP `UMP-Version`
  header); an unknown value is refused with `unsupported`.
* `ump.subscribe {scope?, max_events?, timeout_ms?}` sends `notifications/message` (logger
  `ump/subscribe`, level info): first `{"type": "subscribed"}`, then one per change, and returns
  `{"events": [...]}` once `max_events` arrived or `timeout_ms` passed. (On 2026-07-28
  connections MCP delivers log notifications only to requests that opt in with the
  `io.modelcontextprotocol/logLevel` `_meta` key; the result carries the events either way.)

The binding's own faults (reference_impl/ump/binding_faults.py) wrap its pieces: the methods of
`_Binding` (keys `mcp.tools`, `mcp.error`, `mcp.input_schema`, `mcp._operation`).

Serving: `run_stdio(service)` (blocking; stdout carries nothing but protocol, logs go to stderr),
`streamable_http_app(service)` (a self-contained starlette app answering at `/mcp`; its
lifespan runs the streamable-HTTP session manager: see `lifespan`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import urllib.parse
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ConfigDict
from starlette.applications import Starlette

from memconform.reference_impl.faults import install_wraps
from memconform.reference_impl.ump.engine import UmpError

log = logging.getLogger("memconform.reference_impl.ump.mcp")

#: The resource template of stored records (§4.1 `ump://{project}/{id}`).
RESOURCE_TEMPLATE = "ump://{project}/{id}"
#: MCP's "resource not found" error code.
RESOURCE_NOT_FOUND = -32002
#: `_meta` key of a `tools/call` request that carries the capability token.
CAPABILITY_META = "ump/capability"
#: Tool argument that carries the token for clients that cannot set `_meta`.
CAPABILITY_ARG = "capability"
#: `_meta` key naming the UMP version of one request (extension; see the module doc).
VERSION_META = "ump/version"
#: Logger name of the subscribe notifications.
SUBSCRIBE_LOGGER = "ump/subscribe"
#: Where the per-session version is kept in the MCP connection's state.
_SESSION_VERSION = "memconform.ump.version"

#: operation → (tool name, request $def, response $def, description)
OPERATIONS: dict[str, tuple[str, str, str, str]] = {
    "capabilities": ("ump.capabilities", "capabilities_request", "capabilities_response",
                     "UMP §3.1: what this server speaks. {\"client\": {\"ump\": V}} fixes this session's "
                     "UMP version when the server speaks V."),
    "recall": ("ump.recall", "recall_request", "recall_response",
               "UMP §3.2: ranked records for a query, with per-result signals."),
    "remember": ("ump.remember", "remember_request", "remember_response",
                 "UMP §3.3: write a (partial) memory record: {\"record\": {...}} or the bare record."),
    "get": ("ump.get", "get_request", "get_response", "UMP §3.4: one record by id."),
    "revise": ("ump.revise", "revise_request", "revise_response",
               "UMP §3.5: non-destructive update; the successor supersedes the prior."),
    "forget": ("ump.forget", "forget_request", "forget_response",
               "UMP §3.6: tombstone a record (hard: true erases it, owner only)."),
    "feedback": ("ump.feedback", "feedback_request", "feedback_response",
                 "UMP §3.8: report an injected memory's outcome."),
    "subscribe": ("ump.subscribe", "subscribe_request", "subscribe_response",
                  "UMP §3.8: changes as notifications/message (logger ump/subscribe): first "
                  "{\"type\": \"subscribed\"}, then one per change; returns {\"events\": [...]} once "
                  "max_events arrived or timeout_ms passed."),
    "rehydrate": ("ump.rehydrate", "rehydrate_request", "rehydrate_response",
                  "UMP §5.3 (extension): records framed as untrusted data for a prompt."),
}

DEFAULT_MAX_EVENTS = 100
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000
#: variant mcp-subscribe-for-session: a subscription's ceiling (a session of the suite ends long before)
SESSION_SUBSCRIPTION_MS = 3_600_000
_POLL = 0.2  # seconds a worker thread waits on Subscription.next before looking again


# -- schemas ------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _definitions() -> dict[str, Any]:
    text = (resources.files("memconform.suite.ump") / "schemas" / "operations.schema.json").read_text("utf-8")
    return json.loads(text)["$defs"]


def _refs(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/"):]
            if name not in found:
                found.add(name)
                _refs(_definitions()[name], found)
        for value in node.values():
            _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


def _schema(name: str) -> dict[str, Any]:
    """One $def as a standalone schema (object root, the $defs it refers to alongside)."""
    schema = json.loads(json.dumps(_definitions()[name]))
    needed: set[str] = set()
    _refs(schema, needed)
    if needed:
        schema["$defs"] = {n: _definitions()[n] for n in sorted(needed)}
    schema.setdefault("type", "object")
    return schema


def input_schema(operation: str) -> dict[str, Any]:
    return _with_capability(_schema(OPERATIONS[operation][1]))


def _with_capability(schema: dict[str, Any]) -> dict[str, Any]:
    schema.setdefault("properties", {})[CAPABILITY_ARG] = {
        "type": "string",
        "description": "a UMP capability token (umpcap.…), for clients that cannot set "
                       f"_meta[\"{CAPABILITY_META}\"]",
    }
    return schema


def output_schema(operation: str) -> dict[str, Any]:
    return _schema(OPERATIONS[operation][2])


# -- results ------------------------------------------------------------------------------------

def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def ok_result(response: Any) -> types.CallToolResult:
    structured = response if isinstance(response, dict) else {"result": response}
    return types.CallToolResult(content=[types.TextContent(type="text", text=_text(response))],
                                structured_content=structured)


#: The §3.7 codes that refuse a tool's arguments, and JSON-RPC's code for invalid params: what a
#: server following MCP 2025-06-18 ("invalid arguments" are protocol errors) answers them with.
ARGUMENT_CODES = frozenset({"invalid_record", "bad_request"})
INVALID_PARAMS = -32602


def error_result(code: str, message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{code}: {message}")],
                                structured_content={"error": {"code": code, "message": message}},
                                is_error=True)


class _RawArguments(ArgModelBase):
    """Takes the tool arguments as they came: the service validates them, not pydantic."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.__pydantic_extra__ or {})}


# -- per-request context ------------------------------------------------------------------------

def _meta(ctx: Context) -> Mapping[str, Any]:
    try:
        meta = ctx.request_context.meta
    except ValueError:
        return {}
    return meta if isinstance(meta, Mapping) else {}


def _session_state(ctx: Context) -> dict[str, Any]:
    """State that lives as long as the MCP session (stdio process, Mcp-Session-Id); a fresh dict
    where the connection has none (2026-07-28 requests, stateless HTTP)."""
    try:
        connection = getattr(ctx.request_context.session, "_connection", None)
    except ValueError:
        return {}
    state = getattr(connection, "state", None)
    return state if isinstance(state, dict) else {}


def _token(ctx: Context, arguments: dict[str, Any]) -> str | None:
    """The capability token, `_meta` first, then the `capability` argument (always removed from
    the arguments). Raises UmpError(unauthorized) for one that is not a string."""
    from_arg = arguments.pop(CAPABILITY_ARG, None)
    token = _meta(ctx).get(CAPABILITY_META)
    if token is None:
        token = from_arg
    if token is not None and not isinstance(token, str):
        raise UmpError("unauthorized", "the capability token must be a string (umpcap.…)")
    return token


class _Binding:
    def __init__(self, service: Any):
        self.service = service
        self.versions: tuple[str, ...] = tuple(service.versions)
        self.fault = getattr(service, "fault", None)
        install_wraps(self, "ump", self.fault if isinstance(self.fault, str) else None, part="mcp")

    def error(self, code: str, message: str) -> types.CallToolResult:
        form = getattr(getattr(self.service, "policy", None), "mcp_error_form", "iserror")
        if form == "protocol" and code in ARGUMENT_CODES:
            from mcp.shared.exceptions import MCPError

            raise MCPError(INVALID_PARAMS, f"{code}: {message}", data={"error": {"code": code, "message": message}})
        if form == "output-prefixed":  # the public implementation's message form, as ordinary output
            envelope = {"error": {"message": f"{code}: {message}"}}
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(envelope))],
                                        structured_content=envelope, is_error=False)
        if form == "output":
            envelope = {"error": {"code": code, "message": message}}  # §3's envelope as the tool's output
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(envelope))],
                                        structured_content=envelope, is_error=False)
        return error_result(code, message)

    def version(self, ctx: Context) -> str:
        named = _meta(ctx).get(VERSION_META)
        if named is not None:
            if named not in self.versions:
                raise UmpError("unsupported", f"UMP version {named!r} is not spoken here "
                                              f"(spoken: {', '.join(self.versions)})")
            return named
        version = _session_state(ctx).get(_SESSION_VERSION)
        return version if version in self.versions else self.versions[0]

    def tool(self, operation: str) -> Tool:
        name, _, _, description = OPERATIONS[operation]
        handler = self._subscribe if operation == "subscribe" else self._operation(operation)
        return Tool(fn=handler, name=name, description=description, parameters=self.input_schema(operation),
                    fn_metadata=FuncMetadata(arg_model=_RawArguments, output_schema=output_schema(operation)),
                    is_async=True, context_kwarg="ctx")

    def tools(self) -> list[Tool]:
        policy = getattr(self.service, "policy", None)
        listed = getattr(policy, "mcp_capabilities_tool", True)
        return [self.tool(operation) for operation in OPERATIONS if operation != "capabilities" or listed]

    def input_schema(self, operation: str) -> dict[str, Any]:
        return input_schema(operation)

    def _operation(self, operation: str) -> Callable[..., Any]:
        async def handler(arguments: dict[str, Any], ctx: Context) -> types.CallToolResult:
            try:
                arguments = dict(arguments)
                token = _token(ctx, arguments)
                version = self.version(ctx)
                if operation == "capabilities":
                    version = self._pick(ctx, arguments, version)
                response = await anyio.to_thread.run_sync(
                    lambda: self.service.handle(operation, arguments, version=version, token=token))
            except UmpError as exc:
                return self.error(exc.code, exc.message)
            except Exception as exc:  # a bug: reported, never a crash of the server
                log.exception("ump.%s failed unexpectedly", operation)
                return self.error("internal", f"unexpected {type(exc).__name__}")
            return ok_result(response)

        handler.__name__ = f"ump_{operation}"
        return handler

    def _pick(self, ctx: Context, request: dict[str, Any], version: str) -> str:
        """`capabilities {"client": {"ump": V}}`: V becomes the session's version (and this
        exchange's, whatever `_meta` says) when spoken."""
        client = request.get("client")
        wanted = client.get("ump") if isinstance(client, dict) else None
        if isinstance(wanted, str) and wanted in self.versions:
            _session_state(ctx)[_SESSION_VERSION] = wanted
            return wanted
        return version

    def resource_record(self, version: str, rid: str, token: str | None) -> dict[str, Any]:
        """The record `rid` as get serves it to this token's holder (redacted across the boundary,
        withheld when not visible), or UmpError."""
        response = self.service.handle("get", {"id": rid}, version=version, token=token)
        return response["record"]

    def add_resources(self, server: MCPServer) -> None:
        """Stored records as read-only `ump://{project}/{id}` resources (§4.1, MAY): a template, the
        project percent-encoded (`_` for none), read with the token in `_meta` like a tool call."""
        binding = self

        @server.resource(RESOURCE_TEMPLATE, name="ump-record", mime_type="application/json",
                         description="a stored UMP record, read as get serves it to the token in _meta")
        async def ump_record(project: str, id: str, ctx: Context) -> str:
            from mcp.shared.exceptions import MCPError

            token = _meta(ctx).get(CAPABILITY_META)
            rid = urllib.parse.unquote(id)
            try:
                version = binding.version(ctx)
                rec = await anyio.to_thread.run_sync(
                    lambda: binding.resource_record(version, rid, token if isinstance(token, str) else None))
            except UmpError as exc:
                raise MCPError(RESOURCE_NOT_FOUND, f"{exc.code}: {exc.message}",
                               data={"error": {"code": exc.code, "message": exc.message}}) from None
            scope = rec.get("scope") if isinstance(rec.get("scope"), dict) else {}
            if urllib.parse.unquote(project) != (scope.get("project") or "_"):
                raise MCPError(RESOURCE_NOT_FOUND, f"not_found: no record {rid} in project {urllib.parse.unquote(project)!r}",
                               data={"error": {"code": "not_found", "message": f"no record {rid} in that project"}})
            return json.dumps(rec, ensure_ascii=False)

    async def _subscribe(self, arguments: dict[str, Any], ctx: Context) -> types.CallToolResult:
        try:
            arguments = dict(arguments)
            token = _token(ctx, arguments)
            version = self.version(ctx)
            max_events = arguments.pop("max_events", DEFAULT_MAX_EVENTS)
            timeout_ms = arguments.pop("timeout_ms", DEFAULT_TIMEOUT_MS)
            if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events < 1:
                raise UmpError("invalid_record", "max_events must be an integer ≥ 1")
            if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float)) or timeout_ms < 0:
                raise UmpError("invalid_record", "timeout_ms must be a number ≥ 0")
            subscription = await anyio.to_thread.run_sync(
                lambda: self.service.subscribe(version=version, token=token, request=arguments))
        except UmpError as exc:
            return self.error(exc.code, exc.message)
        except Exception as exc:
            log.exception("ump.subscribe failed unexpectedly")
            return self.error("internal", f"unexpected {type(exc).__name__}")
        events: list[Any] = []
        policy = getattr(self.service, "policy", None)
        logger = getattr(policy, "mcp_subscribe_logger", SUBSCRIBE_LOGGER)
        delivery = getattr(policy, "mcp_subscribe_delivery", "in-call")
        if delivery in ("after-call", "resource-updated", "resource-updated-session") and _may_notify_later(ctx):
            return _deliver_after_call(ctx, subscription, logger, max_events, timeout_ms,
                                       notice=delivery.startswith("resource-updated"),
                                       session_long=delivery == "resource-updated-session")
        try:
            if logger == SUBSCRIBE_LOGGER:  # the acknowledgement is part of memconform's convention only
                await _notify(ctx, {"type": "subscribed"}, logger)
            deadline = anyio.current_time() + min(float(timeout_ms), MAX_TIMEOUT_MS) / 1000.0
            while len(events) < max_events:
                remaining = deadline - anyio.current_time()
                if remaining <= 0:
                    break
                event = await anyio.to_thread.run_sync(subscription.next, min(_POLL, remaining),
                                                       abandon_on_cancel=True)
                if event is None:
                    continue
                events.append(event)
                await _notify(ctx, event, logger)
        except UmpError as exc:
            return self.error(exc.code, exc.message)
        except Exception as exc:
            log.exception("ump.subscribe failed unexpectedly")
            return self.error("internal", f"unexpected {type(exc).__name__}")
        finally:
            with contextlib.suppress(Exception):
                subscription.close()
        return ok_result({"events": events})


def _may_notify_later(ctx: Context) -> bool:
    """Whether this connection lets a server notify outside a request: the handshake-era protocols
    do; 2026-07-28 makes log delivery a per-request opt-in (a server may not send afterwards)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return ctx.request_context.session.protocol_version not in MODERN_PROTOCOL_VERSIONS


def _deliver_after_call(ctx: Context, subscription: Any, logger: str, max_events: int,
                        timeout_ms: float, *, notice: bool = False, session_long: bool = False) -> types.CallToolResult:
    """Variant mcp-subscribe-after-call: answer a subscription handle at once and push each change
    as a `notifications/message` after the call, bounded as the in-call delivery is (max_events,
    timeout_ms), from a thread that ends with the subscription. With `notice` (variant
    mcp-subscribe-resource-updated), each change is a `notifications/resources/updated` naming the
    record's resource instead; with `session_long` too (variant mcp-subscribe-for-session), the
    subscription takes no bound from the call and lasts as long as the session does."""
    import asyncio
    import secrets
    import threading

    session, loop = ctx.request_context.session, asyncio.get_running_loop()
    if session_long:
        max_events = sys.maxsize
    lasts_ms = SESSION_SUBSCRIPTION_MS if session_long else min(float(timeout_ms), MAX_TIMEOUT_MS)
    deadline = loop.time() + lasts_ms / 1000.0
    sid = f"sub_{secrets.token_hex(6)}"

    def pump() -> None:
        sent = 0
        try:
            while sent < max_events and loop.time() < deadline and not loop.is_closed():
                event = subscription.next(_POLL)
                if event is None:
                    continue
                if notice:
                    note = _resource_updated(event)
                else:
                    # each event names its subscription: a client holding several tells them apart
                    data = {**event, "subscription": sid} if isinstance(event, dict) else event
                    note = types.LoggingMessageNotification(
                        params=types.LoggingMessageNotificationParams(level="info", data=data, logger=logger))
                asyncio.run_coroutine_threadsafe(session.send_notification(note), loop).result(timeout=5)
                sent += 1
        except Exception:  # the session ended: nobody to tell
            pass
        finally:
            with contextlib.suppress(Exception):
                subscription.close()

    threading.Thread(target=pump, name="ump-subscribe-after-call", daemon=True).start()
    if notice:
        return ok_result({"subscription": sid, "delivery": "notifications/resources/updated",
                          "uri": RESOURCE_TEMPLATE})
    return ok_result({"subscription": sid, "delivery": "notifications/message", "logger": logger})


def _resource_updated(event: Any) -> types.ResourceUpdatedNotification:
    """The change `event` ({type, id, record}) as MCP's notice that the record's resource changed."""
    record = event.get("record") if isinstance(event, dict) and isinstance(event.get("record"), dict) else {}
    scope = record.get("scope") if isinstance(record.get("scope"), dict) else {}
    project = urllib.parse.quote(str(scope.get("project") or "_"), safe="")
    rid = event.get("id") if isinstance(event, dict) else None
    return types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(
        uri=RESOURCE_TEMPLATE.format(project=project, id=rid)))


async def _notify(ctx: Context, data: Any, logger: str = SUBSCRIBE_LOGGER) -> None:
    """One `notifications/message` (logger ump/subscribe) on this request's stream, where MCP
    lets it go (2026-07-28: only to a request that opted in to log messages)."""
    session = ctx.request_context.session
    if "info" not in allowed_log_levels(session.protocol_version, _meta(ctx)):
        return
    note = types.LoggingMessageNotification(
        params=types.LoggingMessageNotificationParams(level="info", data=data, logger=logger))
    await session.send_notification(note, related_request_id=ctx.request_context.request_id)


# -- the server ---------------------------------------------------------------------------------

def _arguments_not_an_object(binding: _Binding) -> Callable[..., Any]:
    """Middleware: a `tools/call` of an `ump.*` tool whose `arguments` is not an object (MCP
    allows only objects) is answered like every other bad request, `invalid_record`, instead of
    the SDK's JSON-RPC `invalid params`."""

    async def middleware(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        params = ctx.params
        if ctx.method == "tools/call" and ctx.request_id is not None and isinstance(params, Mapping):
            name = params.get("name")
            arguments = params.get("arguments")
            if isinstance(name, str) and name in _TOOL_NAMES and arguments is not None \
                    and not isinstance(arguments, dict):
                kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number",
                        float: "a number"}.get(type(arguments), type(arguments).__name__)
                return binding.error("invalid_record", f"{name}: the arguments must be a JSON object "
                                                       f"(the §3 request), found {kind}")
        return await call_next(ctx)

    return middleware


_TOOL_NAMES = frozenset(name for name, _, _, _ in OPERATIONS.values())

def build_mcp_server(service: Any, *, name: str = "memconform-reference") -> MCPServer:
    """An MCPServer with the nine `ump.*` tools over `service` (a `UmpService`)."""
    binding = _Binding(service)
    tools = binding.tools()
    try:
        from importlib.metadata import version as _dist_version

        version = _dist_version("memconform")
    except Exception:  # pragma: no cover - an uninstalled checkout
        version = "0"
    server = MCPServer(name, version=version, tools=tools, log_level="WARNING",
                       middleware=[_arguments_not_an_object(binding)],
                       instructions="UMP (Universal Memory Protocol) over MCP: the ump.* tools.")
    binding.add_resources(server)
    return server


def _local_security() -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def streamable_http_app(service: Any, *, path: str = "/mcp", json_response: bool = False,
                        transport_security: TransportSecuritySettings | None = None) -> Starlette:
    """A starlette app answering MCP streamable HTTP at `path` (stateful: one MCP session per
    `Mcp-Session-Id`, so the version pick holds per session; SSE responses, so subscribe
    notifications arrive while the call runs).

    It needs its lifespan to run (that starts the SDK's session manager): served on its own
    (uvicorn) that happens by itself; routed from another app (`Route("/mcp", app)` — not a
    `Mount`, which would strip the prefix), enter `lifespan(app)` — the same as
    `app.router.lifespan_context(app)` — in the outer app's lifespan. One app runs once.
    Only local Host/Origin headers are accepted unless `transport_security` says otherwise."""
    server = build_mcp_server(service)
    app = server.streamable_http_app(streamable_http_path=path, json_response=json_response,
                                     transport_security=transport_security or _local_security())
    app.state.mcp_server = server
    app.router.redirect_slashes = False
    return app


def lifespan(app: Starlette) -> contextlib.AbstractAsyncContextManager[Any]:
    """The lifespan of an app from `streamable_http_app`, for an outer app to enter."""
    return app.router.lifespan_context(app)


def run_stdio(service: Any) -> None:
    """Serve MCP over this process's stdin/stdout until stdin closes. Nothing but protocol goes
    to stdout (the SDK points fd 1 at stderr while serving); logs go to stderr."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
    server = build_mcp_server(service)
    anyio.run(server.run_stdio_async)


async def _run_stdio_async(service: Any) -> None:  # for callers that own an event loop
    await build_mcp_server(service).run_stdio_async()


__all__ = ["build_mcp_server", "streamable_http_app", "lifespan", "run_stdio", "ok_result", "error_result",
           "CAPABILITY_META", "CAPABILITY_ARG", "VERSION_META", "SUBSCRIBE_LOGGER", "OPERATIONS"]
