"""What is judged and what is a target error: one rule for every driver (docs/contracts.md).

An answer **in the protocol** is judged: a status and an envelope the spec defines, its error
shapes included (UMP's `{"error": {"code", "message"}}` with a 4xx, a JSON-RPC error object, OMF's
error JSON, an MCP tool result with `isError`). A wrong code, a missing member, a 4xx without the
envelope: those are findings, and the checks report them against the requirement.

An answer that is **not the protocol at all** is a target error (`NotTheProtocol`, a
`TargetError`) naming what came back:

* a success status (2xx) whose body is not what the protocol fixes for it: not JSON where the
  protocol answers JSON (an HTML page, garbage), or not the content type where the protocol fixes
  one (an event stream for UMP's subscribe);
* a server error status (5xx) without the spec's error envelope (a proxy's error page, a crash
  trace): the spec's own error answers carry the envelope whatever the status;
* over stdio, a line that is not JSON where a message is due (it fails the pending request at
  once, rather than at the timeout);
* over a command line, a run that reports success (exit 0) but prints no JSON result where the
  operation has one.

A 4xx is always judged, whatever its body: the status is the protocol's own answer (a refusal),
and a refusal without the envelope is what the envelope requirements are about. Over a command
line a failing exit status is judged likewise.

A **provoked** answer is judged whatever it is: a bad-input probe sends what the protocol forbids
(malformed JSON, wrong types, bad escapes) to see the spec's error come back, and a crash trace
there (a 5xx without the envelope) is exactly the failure those checks exist to find, not a target
that stopped speaking the protocol. Drivers skip this rule for their raw-probe calls only.

A rate limit (HTTP 429) is waited out and the request sent again (`targets/http_session.py`); one
that does not lift is `RateLimited`, a target error.

`NotTheProtocol` is not a transport failure: an answer came. The circuit breaker
(`suite/breaker.py`) does not count it, so one route answering garbage does not end the verdicts
of the others.
"""

from __future__ import annotations

from memconform.suite.outcomes import TargetError


class NotTheProtocol(TargetError):
    """The target answered, but not in the protocol at all (see the module's rule)."""

    #: read by the runner for the circuit breaker: an answer came, the transport works
    transport_failure = False


class RateLimited(TargetError):
    """The server kept answering 429 (UMP's rate_limited) after the HTTP session waited each one
    out: what it would have answered was not seen. A target error naming it, never a verdict; an
    answer came, so the circuit breaker does not count it."""

    transport_failure = False


def http_answer(what: str, status: int, content_type: str | None, body: bytes, *, body_ok: bool,
                envelope: bool, expected: str = "JSON") -> None:
    """Raise `NotTheProtocol` when an HTTP answer is not the protocol at all; return when it is to
    be judged. `body_ok`: the body is what a success carries (JSON, an event stream …, `expected`
    says what); `envelope`: the body is the spec's error envelope."""
    from memconform.targets.http_session import first_bytes  # here: the command-line driver needs no httpx

    # a 2xx carrying the spec's error envelope is a refusal with the wrong status: judged (the status
    # is a SHOULD where a spec names one, e.g. ump/http-error-status), not garbage (round 17)
    if 200 <= status < 300 and not body_ok and not envelope:
        raise NotTheProtocol(f"{what}: answered HTTP {status} (Content-Type {content_type!r}) with "
                             f"{len(body)} bytes that are not {expected}: {first_bytes(body)}")
    if status >= 500 and not envelope:
        shown = first_bytes(body) if body else "an empty body"
        raise NotTheProtocol(f"{what}: answered HTTP {status} (Content-Type {content_type!r}) without the "
                             f"spec's error envelope: {shown}")


__all__ = ["NotTheProtocol", "RateLimited", "http_answer"]
