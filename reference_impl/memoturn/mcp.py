"""memoturn's MCP binding (mcp.md, "Typed agent memory" and "Sessions"): an `MCPServer` whose
memory_* tools call `MemoturnService`.

  memory_ingest        {namespace, profile, memories}                         → {results, txid}
  memory_recall        {namespace, profile, query?, embedding?, topic_key?, types?, session_id?,
                        source?, k?, include_superseded?}                     → {memories, txid}
  memory_get           {namespace, profile, id}        → {found: true, memory, txid} | {found: false, id, txid}
  memory_forget        {namespace, profile, id}                               → {deleted, txid}
  memory_profiles_list {namespace}                                           → {namespace, profiles}
  memory_sessions_list {namespace, profile, limit?}                           → {sessions, txid}
  memory_session_end   {namespace, profile, session_id}                       → {session_id, deleted, txid}

* Every result is a JSON object carrying the operation's txid ("Every tool result carries the
  txid of the operation"), as structuredContent and as the same JSON in one text block.
* memory_get reports an unknown id as a result, not an error ("reports not-found rather than
  erroring"); the other refusals are `isError: true` results whose text (and structuredContent) is
  errors.md's envelope {"error", "code"}.
* Arguments reach the engine unvalidated by the SDK (loose schemas), so a wrong type is refused
  with the same invalid_request envelope as over REST.
* Each memory ingested without a source gets the MEMOTURN_SOURCE environment variable's value
  (read at each call), the per-agent provenance default of mcp.md.

The binding's seams (`McpBinding.error`, `.result`, `.default_source`) are what a fault wraps
(keys `mcp.<method>`). `python -m memconform.reference_impl.memoturn.mcp [--fault NAME]
[--variant NAME ...] [--db PATH]` serves it over stdio."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from memconform.reference_impl.memoturn.engine import MemoturnError, MemoturnService, refusal

log = logging.getLogger("memconform.reference_impl.memoturn.mcp")

#: mcp.md: "MEMOTURN_SOURCE | Default provenance for ingested memories".
SOURCE_ENV = "MEMOTURN_SOURCE"

ToolResult = Annotated[types.CallToolResult, dict[str, Any]]
# Loose (Any) so the engine, not pydantic, refuses a wrong type: the same envelope as over REST.
Ns = Annotated[Any, Field(description="the namespace (a string): [a-z0-9][a-z0-9_-]*, no '--'")]
Profile = Annotated[Any, Field(description="the profile within the namespace (a string): [a-z0-9][a-z0-9_-]*, "
                                           "no '--'")]
MemoryId = Annotated[Any, Field(description="a memory id (mem_…)")]
SessionId = Annotated[Any, Field(description="a session id, as memories were ingested with it")]


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class McpBinding:
    def __init__(self, service: MemoturnService):
        self.service = service
        from memconform.reference_impl.memoturn.policy import configure

        configure(self, getattr(service, "_fault_obj", None) or service.fault, (), part="mcp")

    def result(self, value: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=_text(value))],
                                    structured_content=value)

    def error(self, exc: MemoturnError) -> types.CallToolResult:
        envelope = exc.body()
        return types.CallToolResult(content=[types.TextContent(type="text", text=_text(envelope))],
                                    structured_content=envelope, is_error=True)

    def default_source(self) -> str | None:
        return os.environ.get(SOURCE_ENV) or self.service.policy.mcp_default_source

    def with_source(self, memories: Any) -> Any:
        """The memories with the agent's default source where a memory sets none; anything that is
        not a list of objects is passed on as it came, for the engine to refuse."""
        source = self.default_source()
        if source is None or not isinstance(memories, list):
            return memories
        return [{**m, "source": source} if isinstance(m, dict) and m.get("source") is None else m for m in memories]

    async def call(self, name: str, work: Callable[[], dict[str, Any]]) -> types.CallToolResult:
        try:
            return self.result(await anyio.to_thread.run_sync(work))
        except MemoturnError as exc:
            return self.error(exc)
        except Exception:  # a bug: reported as `internal`, never a crash of the server
            log.exception("%s failed unexpectedly", name)
            return self.error(refusal("internal", "internal error"))

    def tools(self, table: dict[Any, str]) -> dict[Any, str]:
        """The tools served (a fault of the binding may leave one out)."""
        return table

    def get(self, ns: Any, profile: Any, mid: Any) -> dict[str, Any]:
        svc = self.service
        try:
            memory = svc.get(ns, profile, mid)
        except MemoturnError as exc:
            if exc.code != "not_found":
                raise
            return {"found": False, "id": mid, "txid": svc.txid(ns, profile)}
        return {"found": True, "memory": memory, "txid": svc.txid(ns, profile)}


def _drop_none(**params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


def build_mcp_server(service: MemoturnService, *, name: str = "memconform-memoturn-reference") -> MCPServer:
    """An MCPServer with the six memory_* tools over `service`."""
    b = McpBinding(service)
    svc = service

    async def memory_ingest(namespace: Ns, profile: Profile,
                            memories: Annotated[Any, Field(description="typed memories: {type, topic_key?, summary, "
                                                           "content, keywords?, embedding?, session_id?, source?, "
                                                           "ttl?}")]) -> ToolResult:
        return await b.call("memory_ingest",
                            lambda: svc.ingest(namespace, profile, {"memories": b.with_source(memories)}))

    async def memory_recall(namespace: Ns, profile: Profile, query: Any = None, embedding: Any = None,
                            topic_key: Any = None, types: Any = None, session_id: Any = None, source: Any = None,
                            k: Any = None, include_superseded: Any = None) -> ToolResult:
        body = _drop_none(query=query, embedding=embedding, topic_key=topic_key, types=types, session_id=session_id,
                          source=source, k=k, include_superseded=include_superseded)
        return await b.call("memory_recall", lambda: svc.recall(namespace, profile, body))

    async def memory_get(namespace: Ns, profile: Profile, id: MemoryId) -> ToolResult:  # noqa: A002 - mcp.md's name
        return await b.call("memory_get", lambda: b.get(namespace, profile, id))

    async def memory_forget(namespace: Ns, profile: Profile, id: MemoryId) -> ToolResult:  # noqa: A002
        return await b.call("memory_forget", lambda: svc.forget(namespace, profile, id))

    async def memory_profiles_list(namespace: Ns) -> ToolResult:
        return await b.call("memory_profiles_list", lambda: svc.profiles(namespace))

    async def memory_sessions_list(namespace: Ns, profile: Profile, limit: Any = None) -> ToolResult:
        return await b.call("memory_sessions_list", lambda: svc.sessions(namespace, profile, limit))

    async def memory_session_end(namespace: Ns, profile: Profile, session_id: SessionId) -> ToolResult:
        return await b.call("memory_session_end", lambda: svc.end_session(namespace, profile, session_id))

    descriptions = {
        memory_ingest: "Store typed memories (an atomic, idempotent batch); fact/instruction supersede older entries "
                       f"sharing topic_key; each memory's source defaults from {SOURCE_ENV}.",
        memory_recall: "Hybrid recall: keyword + topic + vector channels, rank-fused; an empty result means nothing "
                       "relevant; source filters to one agent's memories.",
        memory_get: "Fetch one memory by id with its supersession state; reports not-found rather than erroring.",
        memory_forget: "Permanently delete one memory (hard delete).",
        memory_profiles_list: "List the profiles under a namespace; each is one isolated store.",
        memory_sessions_list: "List the profile's sessions, most recent first.",
        memory_session_end: "End a session: its task memories are deleted, durable memories survive.",
    }
    try:
        from importlib.metadata import version as _dist_version

        version = _dist_version("memconform")
    except Exception:  # pragma: no cover - an uninstalled checkout
        version = "0"
    server = MCPServer(name, version=version, log_level="WARNING",
                       instructions="memoturn typed agent memory: the memory_* tools.")
    for fn, description in b.tools(descriptions).items():
        server.add_tool(fn, name=fn.__name__, description=description, structured_output=True)
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m memconform.reference_impl.memoturn.mcp",
                                     description="The memoturn reference implementation over MCP stdio.")
    parser.add_argument("--fault", default=None, help="a memoturn fault to run with")
    parser.add_argument("--variant", action="append", default=[], help="a memoturn variant (repeatable)")
    parser.add_argument("--db", default=":memory:", help="the sqlite file (default: in memory)")
    args = parser.parse_args(argv)
    root = logging.getLogger()
    if not root.handlers:  # stdout carries nothing but protocol
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
    service = MemoturnService(args.db, fault=args.fault, variants=args.variant)
    try:
        anyio.run(build_mcp_server(service).run_stdio_async)
    finally:
        service.close()


if __name__ == "__main__":
    main()
