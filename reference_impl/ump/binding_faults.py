"""Faults of the HTTP and MCP bindings alone (the routes and tools of §4.1/§4.2); the engine's
are in faults.py.

An operation a binding does not serve breaks its route or tool requirement; for the core four
also ump/l1-one-binding. The L1 checks skip rather than fail on an absent operation, but checks
that need the operation to observe their own requirement (a token refused on recall, a tombstone
read back with get) fail with it. tests/harness/test_faults.py holds each list to what the suite
reports.
"""

from memconform.reference_impl.faults import Fault
from memconform.reference_impl.ump import binding_faulty as w
from memconform.reference_impl.ump import faulty as server_faulty

#: The §4.2 route of each operation.
_ROUTE_OF = {"capabilities": "/ump/capabilities", "recall": "/ump/recall", "remember": "/ump/remember",
             "get": "/ump/memory/{id:path}", "revise": "/ump/revise", "forget": "/ump/forget",
             "feedback": "/ump/feedback", "subscribe": "/ump/subscribe"}

_TOKENS_READ = ("ump/cap-token-expiry", "ump/cap-token-format", "ump/cap-token-not-before",
                "ump/cap-token-required", "ump/cap-token-signature", "ump/cap-token-verbs")
_GET = ("ump/cap-token-issuer-owner", "ump/cap-token-scope", "ump/forget-hard-owner-only", "ump/forget-retained",
        "ump/get-returns-record", "ump/rehydrate-never-execute", "ump/remember-persists",
        "ump/revise-creates-successor", "ump/visibility-shared-grant", *_TOKENS_READ)


def _http(op: str, *breaks: str) -> Fault:
    return Fault(f"http-no-{op}-route", "ump", f"the HTTP binding does not serve the §4.2 route of {op} (404)",
                 tuple(sorted(set(breaks))), bindings=("http",), wraps={"http.routes": w.without_route(_ROUTE_OF[op])})


def _mcp(op: str, *breaks: str) -> Fault:
    return Fault(f"mcp-no-{op}-tool", "ump", f"the MCP binding does not list the tool ump.{op}",
                 tuple(sorted(set(breaks))), bindings=("mcp",), wraps={"mcp.tools": w.without_tool(f"ump.{op}")})


BINDING_FAULTS = (
    _http("capabilities", "ump/http-route-capabilities", "ump/l1-one-binding"),
    _http("recall", "ump/http-route-recall", "ump/l1-one-binding", *_TOKENS_READ, "ump/recall-finds-remembered",
          "ump/revise-prior-queryable"),
    _http("remember", "ump/http-route-remember", "ump/l1-one-binding", "ump/remember-invalid-record"),
    _http("get", "ump/http-route-get", *_GET, "ump/http-bearer-token", "ump/remember-merge-returns-existing-id",
          "ump/remember-returns-id"),
    _http("revise", "ump/http-route-revise", "ump/cap-token-required", "ump/cap-token-verbs",
          "ump/revise-creates-successor"),
    _http("forget", "ump/http-route-forget", "ump/cap-token-expiry", "ump/cap-token-not-before",
          "ump/cap-token-required", "ump/cap-token-signature", "ump/cap-token-verbs", "ump/forget-hard-erases",
          "ump/forget-tombstones"),
    _http("feedback", "ump/http-route-feedback", "ump/cap-token-required", "ump/cap-token-verbs",
          "ump/feedback-accepts-outcome"),
    _http("subscribe", "ump/http-route-subscribe", "ump/subscribe-stream"),
    _mcp("recall", "ump/mcp-tool-recall", "ump/l1-one-binding", *_TOKENS_READ, "ump/recall-finds-remembered",
         "ump/revise-prior-queryable"),
    _mcp("remember", "ump/mcp-tool-remember", "ump/l1-one-binding"),
    _mcp("get", "ump/mcp-tool-get", "ump/l1-one-binding", "ump/forget-hard-erases",
         *(r for r in _GET if r != "ump/get-returns-record")),
    _mcp("revise", "ump/mcp-tool-revise", "ump/cap-token-required", "ump/cap-token-verbs",
         "ump/revise-creates-successor", "ump/unknown-id-not-found"),
    _mcp("forget", "ump/mcp-tool-forget", "ump/cap-token-expiry", "ump/cap-token-not-before",
         "ump/cap-token-required", "ump/cap-token-signature", "ump/cap-token-verbs", "ump/forget-hard-owner-only",
         "ump/forget-tombstones", "ump/unknown-id-not-found"),
    _mcp("feedback", "ump/mcp-tool-feedback", "ump/feedback-accepts-outcome"),
    # §4.2 gives no statuses: a 422 for a refused record is as faithful to the text, and misses only
    # the public runner's exact 400 (a class of its own, no level lost)
    Fault("http-invalid-422", "ump", "a record the service refuses as invalid_record is answered HTTP 422",
          ("ump/runner-rules",), bindings=("http",), overrides={"http_invalid_status": 422}),
    # §4.2's tokens exempt no route (variant capabilities-need-token): only the public implementation's
    # open discovery is missing
    Fault("discovery-needs-token", "ump", "capabilities (and over HTTP /.well-known/ump.json) answers unauthorized "
          "to a request without a capability token", ("ump/capabilities-open",), bindings=("http", "mcp"),
          overrides={"discovery_auth": "token"}),
    # the §3 envelope as output is a reading the text allows (variant mcp-errors-as-output): only
    # the public implementation's isError form is missing
    Fault("mcp-errors-not-iserror", "ump",
          "failures come back as ordinary results (isError false) carrying the error envelope",
          ("ump/mcp-errors-iserror",), bindings=("mcp",),
          wraps={"mcp.error": w.error_not_iserror}),
    # found by a blind red team (round 14): seen only by another owner's recall, outside the
    # requester's own scope. Over MCP only: HTTP's GET /ump/capabilities carries no client.
    Fault("capabilities-remembers-client", "ump", "a capabilities call announcing a client stores a public identity "
          "memory \"client <name> connected\" owned by the server's DID", ("ump/capabilities-no-side-effects",),
          bindings=("mcp",), wraps={"_capabilities": server_faulty.capabilities_remembers_client}),
    # a blind red team's bug (round 22): a resource is one more way a record leaves the store
    Fault("resource-unredacted", "ump", "an ump:// resource read serves another owner's public record without its "
          "consent.redact paths stripped", ("ump/consent-redact-boundary",), bindings=("mcp",),
          wraps={"mcp.resource_record": w.resource_unredacted}),
    Fault("resource-skips-visibility", "ump", "an ump:// resource read serves any record it holds, another owner's "
          "private one too", ("ump/visibility-private", "ump/consent-redact-boundary"), bindings=("mcp",),
          wraps={"mcp.resource_record": w.resource_skips_visibility}),
    Fault("mcp-errors-codeless", "ump",
          "get of an id never stored fails as a tool error whose text names no §3.7 code",
          ("ump/mcp-errors",), bindings=("mcp",),
          wraps={"mcp._operation": w.get_not_found_codeless}),
    # a blind red team's bug: the refusals stay refusals, only their code is lost; the checks that
    # expected forbidden_scope cannot tell which refusal it was, so ump/mcp-errors alone is charged
    Fault("mcp-forbidden-scope-codeless", "ump",
          "a forbidden_scope failure is a tool error whose only content is the text \"Error: access denied\"",
          ("ump/mcp-errors",), bindings=("mcp",),
          wraps={"mcp.error": w.forbidden_scope_codeless}),
    # a blind red team's bug: structuredContent right, the text block wrong for non-ASCII text
    Fault("mcp-text-mojibake", "ump", "the text block of get and recall carries the JSON's UTF-8 bytes decoded as "
          "Latin-1 (structuredContent stays right)", ("ump/mcp-text-mirrors-structured",), bindings=("mcp",),
          wraps={"mcp._operation": w.text_mojibake}),
    Fault("sse-events-misnamed", "ump", "every SSE frame of subscribe is named `change` (data.type still says what "
          "changed)", ("ump/subscribe-event-form",), bindings=("http",),
          wraps={"http.sse_frame": w.every_event_named_change}),
    Fault("mcp-schemas-without-members", "ump", "the ump.* inputSchemas name none of the request's members",
          ("ump/mcp-tool-schemas",), bindings=("mcp",),
          wraps={"mcp.input_schema": w.schema_without_members}),
    Fault("errors-without-message", "ump", "the HTTP error envelope leaves out `message`",
          ("ump/error-envelope",), bindings=("http",),
          wraps={"http.app": w.error_answers(w.without_message)}),
    Fault("http-not-found-as-text", "ump", "not_found is answered as a text/plain line, not the JSON envelope",
          ("ump/messages-json-objects", "ump/error-envelope", "ump/get-not-found", "ump/http-route-get",
           "ump/forget-hard-erases", "ump/unknown-id-not-found"),
          bindings=("http",),
          wraps={"http.app": w.error_answers(w.not_found_as_text)}),
    Fault("mcp-capabilities-misnamed", "ump", "capabilities is offered as the tool ump.get_capabilities",
          # without ump.capabilities an MCP session cannot be asked for 0.1 (§4.1 gives no other
          # way), so the 0.1 subject is served 1.0 records
          ("ump/mcp-tool-capabilities", "ump/record-version", "ump/served-records-valid"), bindings=("mcp",),
          wraps={"mcp.tools": w.tool_renamed("ump.capabilities", "ump.get_capabilities")}),
)

# The engine faults only a round trip shows (faults.INTEROP_FAULTS) are registered with these: they
# name the live bindings explicitly, like the faults here.
from memconform.reference_impl.ump.faults import INTEROP_FAULTS  # noqa: E402

BINDING_FAULTS = BINDING_FAULTS + INTEROP_FAULTS
