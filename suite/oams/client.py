"""What the OAMS checks need from an implementation, however it is reached (docs/oams.md).

`OamsClient` is the protocol of a live OAMS server, over REST (`http`) or JSON-RPC (`jsonrpc` over
HTTP, `stdio`): the five operations of §3, the added consolidation hook where a target has one,
raw sends for bad input, and the two owners the checks write under. Every call returns an
`OamsReply`: a frozen value carrying what was sent and what came back; a driver never raises for
an answer it does not like, only `TargetError` when nothing usable came back.

`OamsFile` is what a `file:` target offers: a JSONL store, a Markdown serialization or an export
bundle, read and judged by suite/oams/model.py.
"""

from __future__ import annotations

import urllib.parse

import secrets
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, NoReturn, Protocol

from memconform.suite.quoting import exchange, shown  # noqa: F401 (shown re-exported: the checks quote with it)

#: The five operations of §3, with their REST form and JSON-RPC method.
OPERATIONS = {
    "store": ("PUT /v1/oams/memories/{namespace}/{key}", "oams.store"),
    "recall": ("POST /v1/oams/recall", "oams.recall"),
    "list": ("GET /v1/oams/memories/{namespace}", "oams.list"),
    "forget": ("DELETE /v1/oams/memories/{namespace}/{key}", "oams.forget"),
    "batch_store": ("POST /v1/oams/memories/batch", "oams.batch_store"),
}
#: The consolidation hook is no operation of §3 (which lets implementations add operations): the
#: reference offers it as POST /v1/oams/consolidate and oams.consolidate ({namespace, strategy?}).
CONSOLIDATE = ("POST /v1/oams/consolidate", "oams.consolidate")
#: Members an envelope may hold the array of memories in (the text names none: A6).
LIST_MEMBERS = ("memories", "items", "results", "data")
CURSOR_MEMBERS = ("next_cursor", "cursor", "next")
#: how a member named otherwise may still say "next page" (§3 names no member): nextCursor,
#: next_page_token, continuationToken … (compared lower-case, without _ and -)
CURSOR_WORDS = ("cursor", "token", "next", "continuation")
#: The owner-hashes checks write under unless a target names its own.
DEFAULT_OWNERS = ("mc-owner-a", "mc-owner-b")

OMIT: Any = type("Omit", (), {"__repr__": lambda self: "OMIT"})()


@dataclass(frozen=True)
class OamsReply:
    """One operation as it happened. `request` names it on the wire ("PUT /v1/oams/memories/…" or
    "oams.store"); `sent` is the body or params as sent; `status` the HTTP status (None over stdio);
    `received_text` the raw answer; `received` it parsed (None when not JSON or absent); `result`
    and `error` the answer's success value and error object (REST: the body of a 2xx without an
    `error` member, or the body's `error`; JSON-RPC: the response's `result` / `error`)."""

    op: str
    binding: str
    request: str
    sent: Any
    status: int | None
    received_text: str | None
    received: Any = None
    has_result: bool = False
    result: Any = None
    error: Any = None
    #: the method / route was not there at all (REST 404/405 without §3's error shape, JSON-RPC -32601)
    not_served: bool = False
    #: REST: the target of a `Link: <…>; rel="next"` header (RFC 8288), where a server pages that way
    link_next: str | None = None

    @property
    def ok(self) -> bool:
        return self.has_result and self.error is None

    @property
    def error_code(self) -> int | None:
        code = self.error.get("code") if isinstance(self.error, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None

    @property
    def error_message(self) -> str | None:
        m = self.error.get("message") if isinstance(self.error, dict) else None
        return m if isinstance(m, str) else None

    def memories(self) -> tuple[list[Any] | None, str]:
        """The array of memories an answer holds, and how it was held ("a bare array", "member
        `memories`"); (None, why) when it holds none."""
        r = self.result
        if isinstance(r, list):
            return r, "a bare array"
        if isinstance(r, dict):
            for name in LIST_MEMBERS:
                if isinstance(r.get(name), list):
                    return r[name], f"member `{name}`"
            lists = [k for k, v in r.items() if isinstance(v, list)]
            if len(lists) == 1:
                return r[lists[0]], f"member `{lists[0]}`"
        return None, f"no array of memories in {shown(r)}"

    def cursor(self) -> Any:
        """The next-page cursor of a LIST answer (None: last page or none given). §3 names the
        request's `cursor=` and no answer member: the usual names first, then any other member
        holding a string or null whose name speaks of a cursor, token or next page, then a Link
        rel="next" header; a URL there (or in a member) gives its `cursor` query parameter."""
        r = self.result
        if isinstance(r, dict):
            for name in CURSOR_MEMBERS:
                if name in r:
                    return _cursor_in(r[name])
            for name, value in r.items():
                folded = name.lower().replace("_", "").replace("-", "")
                if (value is None or isinstance(value, str)) and any(w in folded for w in CURSOR_WORDS):
                    return _cursor_in(value)
        return _cursor_in(self.link_next) if self.link_next else None

    def describe(self) -> str:
        """What was sent and what came back, for a failure message."""
        return exchange(self.request, self.sent, self.status, ok=self.ok, value=self.result, error=self.error,
                        received_text=self.received_text, omitted=OMIT, value_label="result ")



def _cursor_in(value: Any) -> Any:
    """A cursor as given, or the `cursor` query parameter of a next-page URL or path."""
    if isinstance(value, str) and "?" in value and "cursor=" in value:
        found = urllib.parse.parse_qs(urllib.parse.urlsplit(value).query).get("cursor")
        if found:
            return found[0]
    return value


class OamsClient(Protocol):
    """A live OAMS server over one binding ("http", "jsonrpc", "stdio")."""

    binding: str
    #: two owner-hashes the checks write under (a target with its own principals names them)
    owners: tuple[str, str]

    def store(self, memory: Any, namespace: str | None = None, key: str | None = None) -> OamsReply:
        """STORE `memory` (REST: PUT to namespace/key, by default the memory's own)."""

    def recall(self, params: dict[str, Any]) -> OamsReply: ...

    def list(self, namespace: str, *, cursor: Any = None, limit: Any = None, since: Any = None,
             tags: Any = None) -> OamsReply: ...

    def forget(self, namespace: str, key: str) -> OamsReply: ...

    def batch_store(self, memories: Any) -> OamsReply: ...

    def consolidate(self, namespace: str, strategy: str | None = None) -> OamsReply:
        """The added consolidation hook, where the target has one (`not_served` otherwise)."""

    def send_raw(self, op: str, payload: bytes | str | Any, *, namespace: str | None = None,
                 key: str | None = None) -> OamsReply:
        """Send `payload` as the operation's body (REST) or params (JSON-RPC) exactly as given
        (bytes/str go out as text: malformed JSON on purpose)."""

    def close(self) -> None: ...


def fresh_namespace(owner: str, tag: str = "t") -> str:
    """A namespace of `owner` nobody wrote before: `<owner>:<tag>-<random>`."""
    return f"{owner}:{tag}-{secrets.token_hex(5)}"


def fresh_key(tag: str = "m") -> str:
    return f"{tag}-{secrets.token_hex(4)}"


class OamsFile(Protocol):
    """A file target: an export bundle folder, a JSONL store or a Markdown serialization."""

    binding: str  # "file"
    path: Any
    kind: str  # "bundle" | "jsonl" | "markdown"

    def read(self) -> Any:
        """A `FileView` (targets/oams.py): the memories, the framing problems, the bundle."""


#: LIST pages followed at most (a cursor that never ends must not hold the run)
MAX_PAGES = 40


def list_every(client: Any, namespace: str, refused: Callable[[Any, str | None], NoReturn],
               replies: list[Any] | None = None, **filters: Any) -> list[Any]:
    """Every memory LIST shows for `namespace`, following cursors (at most MAX_PAGES pages, a cursor
    seen twice ends it). -32001 before any page is an empty namespace (one reading, A17);
    `refused(reply, how)` raises for an answer that is an error (`how` None) or no page; `replies`,
    when given, receives each page's reply (a failure message names what was sent)."""
    from memconform.suite.oams.model import NAMESPACE_NOT_FOUND

    out: list[Any] = []
    cursor = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        reply = client.list(namespace, cursor=cursor, **filters)
        if replies is not None:
            replies.append(reply)
        if reply.error_code == NAMESPACE_NOT_FOUND and not out:
            return []
        if not reply.ok:
            refused(reply, None)
        items, how = reply.memories()
        if items is None:
            refused(reply, how)
        out.extend(items)
        cursor = reply.cursor()
        if not cursor or str(cursor) in seen:
            break
        seen.add(str(cursor))
    return out
