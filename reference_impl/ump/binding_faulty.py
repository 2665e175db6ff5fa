"""The wrong HTTP and MCP bindings (reference_impl/ump/binding_faults.py), written apart from the
right ones (http_app.py, mcp_app.py), which hold no branch on a fault's name.

A binding piece is wrapped by key: "http.routes", "http.sse_frame", "http.app" (values the HTTP
app is built from, `faults.wrapped`) and "mcp.tools", "mcp.error", "mcp.input_schema",
"mcp._operation" (methods of mcp_app's `_Binding`, `faults.install_wraps` with part="mcp"). Each wrap takes the service or binding and the right piece, and returns the
wrong one. Nothing here imports starlette or mcp: the fault table is read by runs that never serve.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memconform.reference_impl.wraps import Wrap


# -- HTTP (§4.2) -----------------------------------------------------------------------------------

def without_route(path: str) -> Wrap:
    """http-no-<operation>-route: the route is not served (404)."""
    return lambda service, routes: [route for route in routes if route.path != path]


def every_event_named_change(service: Any, original: Callable[..., str]) -> Callable[..., str]:
    """sse-events-misnamed: every SSE frame is named `change` (data.type still says what changed)."""
    def wrong(event: Any, named: bool = True) -> str:
        frame = original(event, named)
        if not frame.startswith("event: "):
            return frame
        return "event: change\n" + frame.split("\n", 1)[1]
    return wrong


Change = Callable[[int, bytes, list[tuple[bytes, bytes]]], tuple[bytes, list[tuple[bytes, bytes]]]]


def error_answers(change: Change) -> Wrap:
    """The HTTP app whose finished error answers (4xx/5xx, never the MCP endpoint or the SSE
    stream) are rewritten by `change(status, body, headers) -> (body, headers)`."""
    def wrap(service: Any, app: Any) -> Any:
        app.add_middleware(_ErrorAnswers, change=change)
        return app
    return wrap


def without_message(status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[bytes, list]:
    """errors-without-message: the envelope leaves out `message`."""
    try:
        data = json.loads(body)
        data["error"].pop("message", None)
        return json.dumps(data).encode(), headers
    except (ValueError, KeyError, TypeError, AttributeError):
        return body, headers


def not_found_as_text(status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[bytes, list]:
    """http-not-found-as-text: not_found is a text/plain line, not the JSON envelope."""
    if status != 404:
        return body, headers
    kept = [(k, v) for k, v in headers if k.lower() != b"content-type"]
    return b"not found\n", [*kept, (b"content-type", b"text/plain; charset=utf-8")]


class _ErrorAnswers:
    """ASGI middleware for `error_answers` (buffers error answers; never streams)."""

    def __init__(self, app: Any, change: Change):
        self.app = app
        self.change = change

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/mcp") or scope["path"] == "/ump/subscribe":
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: Any) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            status, body, headers = start["status"], b"".join(chunks), list(start.get("headers", []))
            if status >= 400:
                body, headers = self.change(status, body, headers)
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)


# -- MCP (§4.1) ------------------------------------------------------------------------------------

def without_tool(name: str) -> Wrap:
    """mcp-no-<operation>-tool: the tool is left out of the listing."""
    return lambda binding, original: lambda: [tool for tool in original() if tool.name != name]


def tool_renamed(name: str, wrong_name: str) -> Wrap:
    def wrap(binding: Any, original: Callable[[], list[Any]]) -> Callable[[], list[Any]]:
        def wrong() -> list[Any]:
            tools = original()
            for tool in tools:
                if tool.name == name:
                    tool.name = wrong_name
            return tools
        return wrong
    return wrap


def resource_unredacted(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """resource-unredacted: a resource read is authorized as get is, then serves the record as stored
    (the redaction of get's answer is skipped)."""
    def wrong(version: str, rid: str, token: Any) -> Any:
        original(version, rid, token)
        stored = binding.service._store.get(version, rid)
        return stored.record if stored is not None else original(version, rid, token)
    return wrong


def resource_skips_visibility(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """resource-skips-visibility: a resource read asks only whether the record exists."""
    def wrong(version: str, rid: str, token: Any) -> Any:
        stored = binding.service._store.get(version, rid)
        return stored.record if stored is not None else original(version, rid, token)
    return wrong


def error_not_iserror(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """mcp-errors-not-iserror: failures are ordinary results (isError false) carrying the envelope."""
    return lambda code, message: original(code, message).model_copy(update={"is_error": False})


def forbidden_scope_codeless(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """mcp-forbidden-scope-codeless: a forbidden_scope failure is a tool error whose only content is the
    text "Error: access denied" (no structuredContent, no §3.7 code); every other error keeps its code."""
    def wrong(code: str, message: str) -> Any:
        if code != "forbidden_scope":
            return original(code, message)
        from mcp import types

        return types.CallToolResult(content=[types.TextContent(type="text", text="Error: access denied")],
                                    is_error=True)
    return wrong


def _results_rewritten(operations: tuple[str, ...], change: Callable[..., Any]) -> Wrap:
    """A wrap of `_Binding._operation` whose tools for `operations` answer
    `change(binding, arguments, ctx, result)` instead of their result."""
    def wrap(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong_operation(operation: str) -> Callable[..., Any]:
            handler = original(operation)
            if operation not in operations:
                return handler

            async def wrong(arguments: dict[str, Any], ctx: Any) -> Any:
                return change(binding, arguments, ctx, await handler(arguments, ctx))

            wrong.__name__ = handler.__name__
            return wrong
        return wrong_operation
    return wrap


def _garbled_text(binding: Any, arguments: dict[str, Any], ctx: Any, result: Any) -> Any:
    from mcp import types

    if result.is_error or result.structured_content is None:
        return result
    garbled = [types.TextContent(type="text", text=block.text.encode("utf-8").decode("latin-1"))
               if getattr(block, "type", None) == "text" else block for block in result.content]
    return result.model_copy(update={"content": garbled})


#: mcp-text-mojibake: the text block of get and recall is the JSON's UTF-8 bytes read as Latin-1
#: (structuredContent stays right): a client reading only text stores corrupted memories.
text_mojibake = _results_rewritten(("get", "recall"), _garbled_text)


def schema_without_members(binding: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """mcp-schemas-without-members: the inputSchema names only the `capability` argument."""
    def wrong(operation: str) -> dict[str, Any]:
        capability = original(operation)["properties"]["capability"]
        return {"type": "object", "properties": {"capability": capability}}
    return wrong


def _not_found_codeless(binding: Any, arguments: dict[str, Any], ctx: Any, result: Any) -> Any:
    from mcp import types

    error = (result.structured_content or {}).get("error")
    code = error.get("code") or str(error.get("message", "")).split(":", 1)[0] if isinstance(error, dict) else None
    if code != "not_found" or binding.service._store.get(binding.version(ctx), arguments.get("id")) is not None:
        return result
    if result.is_error:
        return types.CallToolResult(content=[types.TextContent(type="text", text="no such memory")], is_error=True)
    # the envelope as ordinary output (variants mcp-errors-as-output, -prefixed): its code lost the same way
    codeless = {"error": {"message": "no such memory"}}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(codeless))],
                                structured_content=codeless, is_error=False)


#: mcp-errors-codeless: get of an id never stored fails with the text "no such memory" (no §3.7
#: code to read); every other error keeps its code.
get_not_found_codeless = _results_rewritten(("get",), _not_found_codeless)
