"""The UMP reference implementation's decision points: where the spec leaves a choice open, the
reference reads it one way (the defaults here) and a variant (`variants.py`) may read it the other
way (reference_impl/variants.py). The service reads `self.policy.<point>` where the choice is made."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UmpPolicy:
    """Each field is one open choice of the UMP text; its default is the reference reading, and its
    comment names the requirement and the other legitimate reading."""

    # -- capability tokens, feedback, subscribe, MCP errors (§3.8, §4.1, §5.2) -----------------

    #: ump/cap-token-expiry, ump/cap-token-not-before: how a token writes `exp`/`nbf`. §5.2 says
    #: "verbs × scope × time", no encoding; the public implementation writes ISO-8601 strings
    #: ("iso"), a JWT-minded server NumericDate seconds ("numeric"); a lenient one reads both
    #: ("either"; the suite then mints ISO). Either way a time the server cannot read is refused,
    #: never skipped.
    token_times: str = "iso"
    #: ump/cap-token-verbs: the verb feedback needs. The public implementation asks `derive`; §5.2's
    #: derive "may produce new memories from these" does not obviously cover reporting an
    #: outcome, so `write` (or `read`) is as good a reading.
    feedback_verb: str = "derive"
    #: ump/subscribe-stream, ump/http-route-subscribe: whether subscribe must name `scope.owner`.
    #: §3.8 streams "record changes in a scope"; the public implementation refuses a subscription
    #: without `?owner=` (403 forbidden_scope); the reference takes the token's issuer.
    subscribe_needs_owner: bool = False
    #: ump/subscribe-stream: how an SSE frame says what changed. The public implementation names
    #: the event (`event: created`) and repeats it as `data.type`; §3.8 fixes no encoding, so a
    #: server may send unnamed frames of its own shape, here `{change, record}` ("data").
    subscribe_event_names: str = "event"
    #: ump/mcp-errors: how an ump.* tool reports a §3 error. The public implementation answers an
    #: MCP tool error (isError: true); §4.1's "Tool input/output schemas are §3" allows the §3
    #: envelope {"error": {code, message}} as the tool's ordinary output ("output").
    mcp_error_form: str = "iserror"
