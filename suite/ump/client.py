"""What the UMP checks need from an implementation, independent of how it is reached.

L0 (the file binding, §4.3) is `UmpFileClient`; the live operations (L1-L3) come with the
server bindings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from memconform.suite.ump.files import Loaded

FileFormat = Literal["json", "ndjson", "md"]


@dataclass(frozen=True)
class ParseOutcome:
    """What an implementation did with one document it was asked to read."""

    sent: str
    accepted: tuple[dict[str, Any], ...] = ()  # the records as the implementation re-emits them
    error: str | None = None  # the spec's error code when refused
    message: str | None = None
    stored_after: tuple[str, ...] = ()  # ids the store holds after the attempt


class UmpFileClient(Protocol):
    version: str

    def exported(self) -> Loaded:
        """The records the implementation emitted, in every format it emitted them."""

    def seeded(self) -> tuple[dict[str, Any], ...] | None:
        """The records it was given before exporting, or None when that is unknown (a plain file)."""

    def parse(self, text: str, fmt: FileFormat) -> ParseOutcome:
        """Ask the implementation to read a document; raises NotApplicable when it cannot be asked."""


# -- live bindings (L1-L3): one protocol over HTTP and MCP ------------------------------------

Operation = Literal["capabilities", "recall", "remember", "get", "revise", "forget", "feedback",
                    "subscribe", "rehydrate"]


@dataclass(frozen=True)
class Auth:
    """Who a request is made as.

    `owner`: the driver mints a fresh, valid capability token signed by that deterministic test
    key (`memconform.suite.ump.testkeys`), all verbs, scope {owner: its DID}, 15 minutes.
    `bearer`: send exactly this token. `anonymous`: send none.
    """

    kind: Literal["owner", "bearer", "anonymous"] = "owner"
    owner: str | None = "owner-a"
    token: str | None = None

    @classmethod
    def as_owner(cls, name: str = "owner-a") -> "Auth":
        return cls("owner", name, None)

    @classmethod
    def bearer(cls, token: str) -> "Auth":
        return cls("bearer", None, token)

    @classmethod
    def anonymous(cls) -> "Auth":
        return cls("anonymous", None, None)


DEFAULT_AUTH = Auth.as_owner("owner-a")


@dataclass(frozen=True)
class Reply:
    """One operation as it happened on the wire: what was sent and what came back.

    Drivers never raise for an answer they do not like; they raise `TargetError` only when no
    answer came (refused connection, timeout, crashed process)."""

    operation: str
    binding: str
    sent: Any                        # the §3 request object as sent (JSON-able)
    status: int | None = None        # HTTP status; None over MCP
    body: Any = None                 # the parsed response object (JSON / MCP structured content)
    error_code: str | None = None    # the §3.7 code when the answer is an error
    error_message: str | None = None
    raw: str | None = None           # the undecoded answer when it was not JSON
    wire: tuple[str, ...] = ()       # binding-level remarks (e.g. "isError without a code")
    auth: str | None = None          # how the request was authorised, for messages

    @property
    def ok(self) -> bool:
        return self.error_code is None and isinstance(self.body, dict) and "error" not in self.body

    @property
    def code_unreadable(self) -> bool:
        """A refusal whose §3.7 code cannot be read: an MCP tool error (isError) with no code in its
        structured content or text. (Over HTTP the status still tells refusals apart.)"""
        return self.binding == "mcp" and self.error_code is None and "isError without a code" in self.wire

    def describe(self) -> str:
        """A one-line account for failure messages: status, then the body (shortened)."""
        import json as _json

        head = f"HTTP {self.status}" if self.status is not None else self.binding.upper()
        if self.body is not None:
            text = _json.dumps(self.body, ensure_ascii=False, sort_keys=True)
        else:
            text = repr(self.raw)
        if len(text) > 600:
            text = text[:600] + "…"
        return f"{head} {text}"


#: The `type` of an event a driver makes of MCP's `notifications/resources/updated` naming a record
#: (`{type, id, uri}`): it says that the record changed, not how; the client reads the record.
RESOURCE_NOTICE = "notifications/resources/updated"


@dataclass(frozen=True)
class OpenSubscription:
    """An earlier subscription of the same session that answered a handle and may still be
    notifying: what it asked for (`request`, its scope) and as whom (`auth`), so a check can tell
    whether it could rightly be told of a record."""

    handle: str | None
    request: Any
    auth: Auth


@dataclass(frozen=True)
class SubscribeOutcome:
    """What a subscription delivered while `trigger` ran."""

    sent: Any
    status: int | None = None
    content_type: str | None = None
    events: tuple[dict[str, Any], ...] = ()   # each {"type", "id", "record"?}, as parsed
    raw: str | None = None                    # the stream text as received (for messages)
    error_code: str | None = None
    error_message: str | None = None
    problems: tuple[str, ...] = ()            # malformed frames and the like
    #: why the events cannot all be told to be this subscription's (None: they can): over MCP, an
    #: earlier subscription of the session that answered a handle may still be notifying
    shared: str | None = None
    #: those earlier subscriptions (set with `shared`)
    open_before: tuple[OpenSubscription, ...] = ()


class UmpClient(Protocol):
    """The six operations plus feedback, subscribe and the rehydration extension, over one
    binding, judged under one spec version. Every method returns what happened; none raises
    for an unwelcome answer."""

    version: str
    binding: str  # "http" | "mcp"

    def capabilities(self, request: dict[str, Any] | None = None) -> Reply: ...

    def as_version(self, version: str) -> UmpClient:
        """A client of the same live server speaking `version` (HTTP: UMP-Version; MCP: a session
        that announced it in capabilities)."""
        ...

    def recall(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply: ...

    def remember(self, record: Any, *, auth: Auth = DEFAULT_AUTH, wrap: bool = True) -> Reply:
        """Send {"record": record} (or the bare value when wrap=False)."""

    def get(self, id: str, *, auth: Auth = DEFAULT_AUTH) -> Reply: ...

    def revise(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply: ...

    def forget(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply: ...

    def feedback(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply: ...

    def rehydrate(self, request: dict[str, Any], *, auth: Auth = DEFAULT_AUTH) -> Reply:
        """The §5.3 helper, where the target offers one (error_code "unsupported" otherwise)."""

    def subscribe(self, trigger: Any, *, auth: Auth = DEFAULT_AUTH,
                  request: dict[str, Any] | None = None, expect: int = 1) -> SubscribeOutcome:
        """Open a subscription, call `trigger()` once it is established, and collect events
        until `expect` have arrived or the driver's timeout passes. Over a binding without
        subscribe: error_code "unsupported"."""

    def offered(self) -> frozenset[str]:
        """The operations this binding offers (MCP: from the tool list)."""

    def call_raw(self, method: str, path: str, body: bytes | None = None,
                 headers: dict[str, str] | None = None, *, auth: Auth = DEFAULT_AUTH) -> Reply:
        """HTTP only: any request, for bad-input checks. Raises NotApplicable over MCP."""

    def tools(self) -> list[dict[str, Any]] | None:
        """MCP only: the tool listing (name, inputSchema, outputSchema?); None over HTTP."""
