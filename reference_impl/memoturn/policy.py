"""The memoturn reference implementation's decision points: where the typed-memories page (and its
sibling pages) leave a choice open, the reference reads it one way (the defaults) and a variant
(`variants.py`) the other way. The engine and its bindings read `self.policy.<point>` where the
choice is made; they never ask a fault's or a variant's name.

`configure` is how an engine (or a binding) gets its policy and its fault's wraps, through the
mechanism every spec's reference shares (reference_impl/faults.py `deviate`, `install_wraps`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MemoturnPolicy:
    #: memoturn/expired-task-reingest: an expired task is not "already-active", so re-ingesting it is
    #: no duplicate. Read as a new row with a fresh expiry ("created": the old one, hidden since it
    #: expired, is replaced), or as the old row made active again with a fresh expiry ("revived").
    expired_task_reingest: str = "created"
    #: memoturn/ingest-status-per-memory: the page gives no HTTP status; api-rest.md shows 201 (201),
    #: the catalogue takes any 2xx (200).
    ingest_status: int = 201
    #: memoturn/forget-hard: the page gives no answer for DELETE; the reference answers 200
    #: {"deleted": id, "txid": n} (200), a bodiless 204 is as faithful (204). HTTP only: an MCP
    #: result always carries its txid (mcp.md).
    forget_status: int = 200
    #: memoturn/batch-cap: above 1,000 memories the batch is refused as a malformed request
    #: ("invalid_request", 400), or as a body over the limit ("payload_too_large", 413).
    over_cap_code: str = "invalid_request"
    #: a topic_key on an event or a task ("valid only on fact and instruction"): "refuse" the memory, or
    #: "drop" the key and take the memory without it (a blind red team's reading, round 21)
    topic_key_off_type: str = "refuse"
    #: memoturn/sessions-listed: GET …/sessions lists every session_id memories carry ("any"), or
    #: only the sessions holding tasks ("tasks": session_id is "an optional grouping; required
    #: semantics only for tasks").
    sessions_listed: str = "any"
    #: memoturn/history-kept, memoturn/created-at-ms: the page gives times no format. The reference
    #: answers created_at, superseded_at and expires_at as integer Unix milliseconds ("ms", recall.md
    #: and the engine), or as RFC 3339 strings ("rfc3339").
    times: str = "ms"
    #: memoturn/record-fields: the page's record table has no created_at; the reference shows the
    #: engine's (True), or leaves it out (False), the record exactly as the table lists it.
    created_at_shown: bool = True
    #: memoturn/source-returned over MCP: "The MCP server defaults it from the MEMOTURN_SOURCE
    #: environment variable". The reference reads the variable (None), or runs as though it were set
    #: to this value when it is not (a server deployed as the page describes).
    mcp_default_source: str | None = None
    #: memoturn/supersedes-listed: "lists mem_a1… under supersedes — the full chain in both
    #: directions": the rows the memory replaced ("replaced"), or every row before it in the chain,
    #: transitively ("chain").
    supersedes_listed: str = "replaced"
    #: memoturn/task-ttl-explicit, memoturn/recall-drops-expired: a task expires at created + ttl to the
    #: millisecond ("exact"), or at the next whole second ("whole-seconds": the page states TTLs in
    #: seconds and no precision; a task then lives up to a second longer, and recall honours that).
    expiry: str = "exact"


def configure(implementation: Any, fault: Any, variants: Iterable[str], part: str | None = None) -> MemoturnPolicy:
    """The policy for `variants` and `fault` (a fault's name, or the Fault), with the fault's wraps of
    `part` installed on `implementation` (None: the plain keys, on the engine itself): the shared
    mechanism of reference_impl/faults.py, as every spec's reference uses it."""
    from memconform.reference_impl.faults import deviate, install_wraps

    name = fault if isinstance(fault, str) or fault is None else fault.name
    install_wraps(implementation, "memoturn", name, part)
    return deviate(MemoturnPolicy(), "memoturn", name, tuple(variants))
