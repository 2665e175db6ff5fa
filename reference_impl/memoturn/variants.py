"""memoturn variants of the reference implementation: each one legitimate choice the typed-memories
page leaves open, made the other way (reference_impl/variants.py; decision points in policy.py).
The suite must pass every one; docs/catalogue-memoturn.md says why the text allows both readings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memconform.reference_impl.variants import Variant


def _v(name: str, description: str, readings: tuple[str, ...], bindings: tuple[str, ...] | None = None,
       **overrides: object) -> Variant:
    return Variant(f"memoturn-{name}", "memoturn", description, tuple(f"memoturn/{r}" for r in readings),
                   overrides, since="2026.06", bindings=bindings)


MEMOTURN_VARIANTS: tuple[Variant, ...] = (
    _v("expired-task-revived", "an expired task ingested again answers `revived`: its row is active again with a "
       "fresh expiry (instead of `created`, a new row)", ("expired-task-reingest",),
       expired_task_reingest="revived"),
    _v("topic-key-dropped", "a topic_key on an event or a task is dropped and the memory taken without it (\"valid "
       "only on fact and instruction\" says no event or task carries one, not that the memory is refused; round 21)",
       ("topic-key-only-fact-instruction",), topic_key_off_type="drop"),
    _v("ingest-200", "ingest answers 200 instead of 201", ("ingest-status-per-memory",), bindings=("http",),
       ingest_status=200),
    _v("forget-204", "DELETE of a memory answers 204 with no body instead of 200 {\"deleted\", \"txid\"}",
       ("forget-hard",), bindings=("http",), forget_status=204),
    _v("batch-cap-413", "a batch of more than 1,000 memories is refused with 413 payload_too_large instead of "
       "400 invalid_request", ("batch-cap",), over_cap_code="payload_too_large"),
    _v("sessions-of-tasks", "GET …/sessions lists only the sessions that hold tasks (session_id has required "
       "semantics only for tasks)", ("sessions-listed",), sessions_listed="tasks"),
    _v("times-rfc3339", "created_at, superseded_at and expires_at are RFC 3339 strings (UTC, milliseconds) instead "
       "of integer Unix milliseconds (the created-at-ms SHOULD warns)", ("history-kept", "created-at-ms"), times="rfc3339"),
    _v("no-created-at", "the record has no created_at (GET and recall show the page's table exactly)",
       ("record-fields",), created_at_shown=False),
    _v("mcp-default-source", "the MCP server runs with MEMOTURN_SOURCE=memconform-agent: a memory ingested without a "
       "source gets that one", ("source-returned",), bindings=("mcp",), mcp_default_source="memconform-agent"),
    _v("supersedes-chain", "GET lists under `supersedes` every row before the memory in its chain, not only the one "
       "it replaced", ("supersedes-listed",), supersedes_listed="chain"),
    _v("expiry-whole-seconds", "a task expires at the next whole second at or after created + ttl (TTLs are "
       "seconds; the page states no precision), and recall keeps it until then", ("task-ttl-explicit",
                                                                                  "recall-drops-expired"),
       expiry="whole-seconds"),
)


def apply(policy: Any, names: Iterable[str]) -> Any:
    """`policy` with the overrides of the named memoturn variants (reference_impl/variants.py's `apply`:
    other specs' variants passed over, an unknown name or one point set two ways refused)."""
    from memconform.reference_impl import variants

    return variants.apply(policy, "memoturn", names)
