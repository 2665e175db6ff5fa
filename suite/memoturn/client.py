"""What the memoturn checks need from an implementation, however it is reached (docs/memoturn.md).

`MemoturnClient` is a live memoturn node over REST (`http`: the per-profile routes under
/v1/memory/{ns}/{profile}) or MCP (`mcp`: the memory_* tools). Every call returns a
`MemoturnReply`, a frozen value holding what was sent and what came back; a driver never raises for
an answer it does not like, only `TargetError` when nothing usable came back.

The checks write into profiles nobody wrote before (`fresh_profile`) under the client's namespace:
a profile is one isolated store, so no check sees another's memories.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Any, Protocol

from memconform.suite.quoting import exchange, shown  # noqa: F401 (shown re-exported: the checks quote with it)

#: The operations, with their REST route and MCP tool.
OPERATIONS = {
    "ingest": ("POST /v1/memory/{ns}/{profile}/memories", "memory_ingest"),
    "get": ("GET /v1/memory/{ns}/{profile}/memories/{id}", "memory_get"),
    "forget": ("DELETE /v1/memory/{ns}/{profile}/memories/{id}", "memory_forget"),
    "recall": ("POST /v1/memory/{ns}/{profile}/recall", "memory_recall"),
    "sessions": ("GET /v1/memory/{ns}/{profile}/sessions", "memory_sessions_list"),
    "end_session": ("DELETE /v1/memory/{ns}/{profile}/sessions/{sid}", "memory_session_end"),
    "profiles": ("GET /v1/memory/{ns}", "memory_profiles_list"),
}
#: The namespace the checks write under unless a target names its own (MEMCONFORM_MEMOTURN_NAMESPACE:
#: a node whose token covers one namespace is judged in that namespace).
DEFAULT_NAMESPACE = "memconform"
ENV_NAMESPACE = "MEMCONFORM_MEMOTURN_NAMESPACE"
#: The bearer token sent to a REST node, under the name memoturn's own tools read it from.
ENV_TOKEN = "MEMOTURN_TOKEN"


def namespace() -> str:
    return os.environ.get(ENV_NAMESPACE) or DEFAULT_NAMESPACE

OMIT: Any = type("Omit", (), {"__repr__": lambda self: "OMIT"})()


@dataclass(frozen=True)
class MemoturnReply:
    """One operation as it happened. `request` names it on the wire ("POST /v1/memory/…" or
    "memory_ingest"); `sent` the body or tool arguments; `status` the HTTP status (None over MCP);
    `received_text` the raw answer; `received` it parsed; `body` the success value (REST: a 2xx
    body; MCP: the tool's structured result); `error` the error envelope ({"error", "code"}) or,
    over MCP, the tool error's text."""

    op: str
    binding: str
    request: str
    sent: Any
    status: int | None
    received_text: str | None
    received: Any = None
    ok: bool = False
    body: Any = None
    error: Any = None
    #: the route or tool is not there at all (REST 404/405 without the envelope; MCP: unknown tool)
    not_served: bool = False

    @property
    def code(self) -> str | None:
        c = self.error.get("code") if isinstance(self.error, dict) else None
        return c if isinstance(c, str) else None

    @property
    def txid(self) -> Any:
        return self.body.get("txid") if isinstance(self.body, dict) else None

    def results(self) -> list[Any] | None:
        r = self.body.get("results") if isinstance(self.body, dict) else None
        return r if isinstance(r, list) else None

    def result(self, i: int = 0) -> dict[str, Any]:
        r = self.results() or []
        return r[i] if i < len(r) and isinstance(r[i], dict) else {}

    def memories(self) -> list[Any] | None:
        m = self.body.get("memories") if isinstance(self.body, dict) else None
        return m if isinstance(m, list) else None

    def memory(self) -> dict[str, Any] | None:
        """The record a GET answered (REST: the body; MCP: its `memory` member, or the body when it
        is the record itself); None when the answer is a not-found."""
        b = self.body
        if not isinstance(b, dict):
            return None
        if isinstance(b.get("memory"), dict):
            return b["memory"]
        if "id" in b and "type" in b:
            return b
        return None

    @property
    def missing(self) -> bool:
        """A GET that says the memory is not there: REST 404 (`not_found`), MCP a not-found result."""
        if self.binding == "http":
            return self.status == 404 and not self.not_served
        if self.ok:
            return self.memory() is None
        return self.code == "not_found" or "not found" in str(self.error).lower()

    def describe(self) -> str:
        """What was sent and what came back, for a failure message."""
        return exchange(self.request, self.sent, self.status, ok=self.ok, value=self.body, error=self.error,
                        received_text=self.received_text, omitted=OMIT, value_label="")



class MemoturnClient(Protocol):
    """A live memoturn node over one binding ("http" or "mcp")."""

    binding: str
    #: the namespace the checks write under (a target with its own tokens names it)
    namespace: str

    def ingest(self, profile: str, memories: Any) -> MemoturnReply:
        """POST {"memories": memories} (MCP: memory_ingest)."""

    def get(self, profile: str, id: str) -> MemoturnReply: ...

    def forget(self, profile: str, id: str) -> MemoturnReply: ...

    def recall(self, profile: str, params: dict[str, Any]) -> MemoturnReply: ...

    def sessions(self, profile: str) -> MemoturnReply: ...

    def end_session(self, profile: str, session_id: str) -> MemoturnReply: ...

    def in_namespace(self, namespace: str) -> MemoturnClient:
        """The same node under another namespace (a node whose token covers one namespace refuses it)."""

    def profiles(self) -> MemoturnReply:
        """The namespace's profiles (api-rest.md GET /v1/memory/{ns}, mcp.md memory_profiles_list): a
        namespace token's route, so a node may answer it 401/403 or not serve it."""
        ...

    def send_raw(self, op: str, profile: str, payload: Any) -> MemoturnReply:
        """Send `payload` as the operation's body (REST) or arguments (MCP) exactly as given
        (bytes/str go out as text: malformed JSON on purpose, REST only)."""

    def close(self) -> None: ...


def fresh_profile(tag: str = "p") -> str:
    """A profile nobody wrote before: `<tag>-<random>` (a valid segment: [a-z0-9][a-z0-9_-]*)."""
    return f"{tag.lower()}-{secrets.token_hex(5)}"
