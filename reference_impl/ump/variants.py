"""UMP variants of the reference implementation: each one legitimate choice the UMP text leaves
open, made the other way (reference_impl/variants.py; decision points in policy.py). The suite must
pass every one (tests/harness/test_variants.py); docs/catalogue-ump.md documents each beside the
requirement whose reading it pins."""

from __future__ import annotations

from memconform.reference_impl.variants import Variant

UMP_VARIANTS: tuple[Variant, ...] = (
    # -- capability tokens, subscribe, MCP errors (issue 13: readings of §3.8, §4.1, §5.2) -------
    Variant("token-times-numeric", "ump",
            "capability tokens carry exp/nbf as NumericDate seconds (as JWT), not ISO-8601 strings; an ISO "
            "time is one this server cannot read, and is refused",
            ("ump/cap-token-expiry", "ump/cap-token-not-before", "ump/cap-token-unreadable-time"),
            {"token_times": "numeric"}, bindings=("http", "mcp")),
    Variant("token-times-either", "ump",
            "capability tokens are read with exp/nbf as ISO-8601 strings or NumericDate seconds alike; only a "
            "value that is no time at all is refused",
            ("ump/cap-token-expiry", "ump/cap-token-unreadable-time"), {"token_times": "either"},
            bindings=("http", "mcp")),
    Variant("feedback-needs-write", "ump",
            "feedback needs the verb write (reporting an outcome changes what the engine keeps), not derive",
            ("ump/cap-token-verbs",), {"feedback_verb": "write"}, bindings=("http", "mcp")),
    Variant("feedback-needs-read", "ump",
            "feedback needs only the verb read: a consumer that may read a memory may say how it used it",
            ("ump/cap-token-verbs",), {"feedback_verb": "read"}, bindings=("http", "mcp")),
    Variant("subscribe-needs-owner", "ump",
            "subscribe must name the owner whose records it streams (scope.owner, ?owner= over HTTP), as the "
            "public implementation asks; without it 403 forbidden_scope",
            ("ump/subscribe-stream", "ump/http-route-subscribe"), {"subscribe_needs_owner": True},
            bindings=("http", "mcp")),
    Variant("subscribe-events-unnamed", "ump",
            "SSE frames carry no event name and data of another shape, {change, record}: the changed record and "
            "what happened to it, in this server's own words",
            ("ump/subscribe-stream", "ump/subscribe-event-form"), {"subscribe_event_names": "data"},
            bindings=("http",)),
    Variant("mcp-errors-as-output", "ump",
            "a failing ump.* tool returns the §3 error envelope {\"error\": {code, message}} as its ordinary "
            "output (isError false), reading §4.1's \"Tool input/output schemas are §3\" literally",
            ("ump/mcp-errors", "ump/mcp-errors-iserror"), {"mcp_error_form": "output"}, bindings=("mcp",)),
)
