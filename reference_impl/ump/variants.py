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
    Variant("mcp-errors-as-output-prefixed", "ump",
            "a failing ump.* tool returns {\"error\": {\"message\": \"<code>: …\"}} as its ordinary output "
            "(isError false): the envelope as output (variant mcp-errors-as-output) in the public implementation's "
            "message form, the code only as the message's prefix (found by the blind MCP red team, round 14)",
            ("ump/mcp-errors", "ump/mcp-errors-iserror"), {"mcp_error_form": "output-prefixed"}, bindings=("mcp",)),
    Variant("mcp-errors-as-protocol", "ump",
            "a tool call whose arguments are refused (invalid_record, bad_request) answers a JSON-RPC error "
            "-32602 whose message is \"<code>: …\" and whose data is the §3 envelope, as MCP 2025-06-18 makes "
            "invalid arguments a protocol error; other failures stay isError results",
            ("ump/mcp-errors", "ump/mcp-errors-iserror"), {"mcp_error_form": "protocol"}, bindings=("mcp",)),
    Variant("capabilities-need-token", "ump",
            "capabilities (GET /ump/capabilities, the tool ump.capabilities) and GET /.well-known/ump.json answer only "
            "a request carrying a valid capability token (unauthorized without one), reading §4.2's \"Auth via "
            "capability tokens (§5.2) in Authorization: Bearer\" as covering every operation; the public "
            "implementation serves them open",
            ("ump/capabilities-open",), {"discovery_auth": "token"}, bindings=("http", "mcp")),
    Variant("capabilities-need-token-well-known-open", "ump",
            "capabilities (GET /ump/capabilities, the tool ump.capabilities) answers only a request carrying a valid "
            "capability token, as §4.2 lists its route beside the others \"Auth via capability tokens\" covers, "
            "while GET /.well-known/ump.json, a route §4.2 does not list, stays open (a blind red team's reading, "
            "round 28: discovery found the open document and the checks then asked capabilities without a token)",
            ("ump/capabilities-open",), {"discovery_auth": "capabilities-token"}, bindings=("http", "mcp")),
    # -- records and operations, L0-L2 (issue 13: readings of §2, §3.2-§3.6, §6.2, §8) -----------
    Variant("valid-to-inclusive", "ump", "a record is still valid at its valid_to instant (the closed interval "
            "[valid_from, valid_to] instead of the half-open one)", ("ump/recall-honors-valid-at",),
            {"valid_to_inclusive": True}, bindings=("http", "mcp")),
    Variant("revise-patch-replaces", "ump", "each top-level member a revise patch names replaces the prior's "
            "whole member (a body.text patch drops body.structured) instead of being merged into it",
            ("ump/revise-applies-patch",), {"revise_patch": "replace"}, bindings=("http", "mcp")),
    Variant("revise-keeps-scope", "ump", "a revise keeps the prior's scope (owner, project, visibility) and leaves "
            "a scope member of the patch unapplied, as the public implementation does: §3.5 calls revise an update "
            "and names no patchable members", ("ump/revise-applies-patch",), {"revise_scope": "keep"},
            bindings=("http", "mcp")),
    Variant("revise-restamps-observed", "ump", "a revise stamps the successor's time.observed with the revise's "
            "own time (when the revised fact was learned: §2.3's transaction time) instead of carrying the "
            "prior's over", ("ump/revise-applies-patch",), {"revise_observed": "restamp"}, bindings=("http", "mcp")),
    Variant("revise-stamps-own-provenance", "ump", "a revise gives the successor the revise's own provenance (actor, "
            "actor_kind, method revise, source.ref the prior) instead of the prior's with the principal stamped in: "
            "§9 lets revise stamp the acting principal into the successor's provenance, and the prior's source and "
            "evidence were about the prior's assertion", ("ump/revise-forget-stamp-provenance",),
            {"revise_provenance": "own"}, bindings=("http", "mcp")),
    Variant("hard-forget-shell", "ump", "a hard forget keeps a tombstoned shell of the record (id, kind, scope, "
            "time) with its content erased, instead of deleting it", ("ump/forget-hard-erases",),
            {"hard_forget": "shell"}, bindings=("http", "mcp")),
    Variant("authorize-before-validate", "ump", "remember asks the token first: a record whose owner the token "
            "does not grant is forbidden_scope however malformed, before its body is validated",
            ("ump/remember-invalid-record", "ump/reject-invalid-record"), {"authorize_before_validate": True},
            bindings=("http", "mcp")),
    Variant("remember-rejects-as-result", "ump", "remember refuses a record with the §3.3 response "
            "{\"result\": \"rejected\"} (and the reason) instead of an error envelope",
            ("ump/remember-invalid-record", "ump/reject-invalid-record", "ump/reject-unknown-major",
             "ump/remember-reject-bad-signature"), {"remember_refusal": "result"}, bindings=("http", "mcp")),
    Variant("forget-unknown-idempotent", "ump", "forget of an id the server never held answers {\"result\": "
            "\"tombstoned\"} (forget is idempotent) instead of not_found", ("ump/unknown-id-not-found",),
            {"forget_unknown": "idempotent"}, bindings=("http", "mcp")),
    Variant("forget-ends-valid-time", "ump", "forget also ends the record's valid time (time.valid_to = now when "
            "open), as the public contract says, besides tombstoning it", ("ump/forget-tombstones",
                                                                            "ump/forget-retained"),
            {"forget_sets_valid_to": True}, bindings=("http", "mcp")),
    Variant("retention-erases", "ump", "a record whose consent.retention has passed is erased, not tombstoned",
            ("ump/consent-retention-tombstone",), {"retention_expiry": "erase"}, bindings=("http", "mcp")),
    Variant("never-merges", "ump", "remember never merges: a record equal in text, kind and owner to a stored "
            "one is created anew (result created, a new id)", ("ump/remember-may-merge", "ump/remember-reports-result"),
            {"merge_duplicates": False}, bindings=("http", "mcp")),
    Variant("visibility-unmarked", "ump",
            "a 0.1 record remembered without scope.visibility is kept without it and read as private: the 0.1 text "
            "marks scope.owner REQUIRED and user, agent, session OPTIONAL, and leaves visibility unmarked (a blind red "
            "team's server, round 17)",
            ("ump/record-required-fields",), {"unmarked_visibility": "absent"}, bindings=("http", "mcp")),
    Variant("retention-from-receipt", "ump",
            "consent.retention counts from when the store received the record, not from its time.created: §2.7 calls "
            "it the \"max time to keep\" and names no start (a blind red team's server, round 20)",
            ("ump/consent-retention-tombstone",), {"retention_from": "receipt"}, bindings=("http", "mcp")),
    Variant("verb-mismatch-unauthorized", "ump",
            "a valid capability token lacking the operation's verb is refused unauthorized instead of forbidden_scope "
            "(§3.7 lists both codes and defines neither; a blind red team's server, round 20)",
            ("ump/cap-token-verbs",), {"verb_mismatch_code": "unauthorized"}, bindings=("http", "mcp")),
    Variant("verb-mismatch-hides-record", "ump",
            "a valid capability token lacking the verb of an operation naming one record (get, revise, forget, "
            "feedback) is answered not_found, hiding the record from a token that may not touch it (§3.4: "
            "\"error not_found\"; a blind red team's UMP 0.1 server, round 29)",
            ("ump/cap-token-verbs",), {"verb_mismatch_code": "not_found"}, bindings=("http", "mcp")),
    Variant("anonymous-public-reads", "ump",
            "recall, get and subscribe without a capability token are served to an anonymous requester, who sees "
            "public records only (§2.2: public is \"anyone\"); writes still need a token (a blind red team's server, "
            "round 20); the public runner's \"no token → 401\" is then not met (its class)",
            ("ump/cap-token-required", "ump/runner-rules"), {"anonymous_public_reads": True}, bindings=("http", "mcp")),
    Variant("recall-unscoped-own", "ump",
            "a recall naming no scope.owner searches the requester's own records; another owner's public records "
            "come back to a recall naming that owner (§3.2 \"search by query + scope\" names no default scope; a "
            "blind red team's server, round 20)", ("ump/visibility-public", "ump/consent-redact-boundary"),
            {"unscoped_recall_own": True}, bindings=("http", "mcp")),
    Variant("fills-provenance", "ump",
            "remember of a record without provenance (or lacking its method) fills what is missing from the "
            "capability token's verified issuer (actor the issuer, actor_kind agent, method remember) instead of "
            "refusing it (§3.3 names what a server fills, not all it may; a blind red team's server, round 22)",
            ("ump/provenance-required",), {"fill_provenance": "writer"}, bindings=("http", "mcp")),
    Variant("unknown-major-unsupported", "ump",
            "a record of an unknown major version is refused with unsupported instead of invalid_record (§8 says "
            "reject, not with which code; a blind red team's server, round 22)", ("ump/reject-unknown-major",),
            {"unknown_major_code": "unsupported"}, since="1.0", bindings=("http", "mcp")),
    Variant("foreign-writes-not-found", "ump",
            "revise and forget (soft or hard) of a record the requester may not change are refused not_found, as "
            "for an id it does not hold, instead of forbidden_scope (§3.7 ties no code to it; a blind red team's "
            "server, round 22)", ("ump/forget-hard-owner-only", "ump/cap-token-scope"),
            {"foreign_write_code": "not_found"}, bindings=("http", "mcp")),
    Variant("expired-on-arrival-refused", "ump",
            "a record whose consent.retention ran out before it arrived is refused consent_violation instead of stored "
            "and tombstoned (§3.3 rejects what fails consent/policy; a blind red team's server, round 22)",
            ("ump/consent-retention-tombstone",), {"expired_on_arrival": "refuse"}, bindings=("http", "mcp")),
    Variant("records-need-ump", "ump",
            "a remembered record without `ump` is refused invalid_record: §2 marks it REQUIRED and §3.3's \"server "
            "fills id/time/integrity if omitted\" leaves it out, though §3.3's example has none (a blind red team's "
            "server, round 20)", ("ump/record-required-fields",), {"missing_ump": "refuse"}, bindings=("http", "mcp")),
    Variant("refuses-reused-id", "ump", "remember refuses any record naming an id the store already holds "
            "(invalid_record, \"id already in use\") before reading the record, even one repeating the stored "
            "record, instead of merging a repeat and validating first (a blind red team's server, round 17)",
            ("ump/reject-invalid-record", "ump/remember-may-merge"), {"reused_id": "refuse"},
            bindings=("http", "mcp")),
    Variant("runtime-1.0-only", "ump", "the server speaks UMP 1.0 only at runtime (capabilities.versions [\"1.0\"]) "
            "and refuses a client announcing 0.1, while still importing 0.1 records",
            ("ump/capabilities-no-0.1-runtime", "ump/normalize-imported-0.1"),
            {"runtime_versions": ("1.0",)}, since="1.0", bindings=("http", "mcp")),
    Variant("versions-unlisted", "ump", "the server speaks 0.1 and 1.0 at runtime, answering each client in the "
            "version it announces, and lists neither in capabilities (no `versions` member)",
            ("ump/capabilities-no-0.1-runtime",), {"list_versions": False}, since="1.0", bindings=("http", "mcp")),
    Variant("mints-base32hex-ids", "ump", "minted ids are 26 characters of RFC 4648 base32hex in upper case "
            "(0-9A-V), not lowercase base32", ("ump/id-minted-form", "ump/record-id-format"),
            {"minted_ids": "base32hex"}, bindings=("http", "mcp")),
    Variant("unknown-minor-accepted", "ump", "a record declaring an unknown minor of a known major (\"0.2\", "
            "\"1.7\") is taken as the version known of that major (minors are additive), not refused",
            ("ump/record-version",), {"unknown_minor": "accept"}),
    Variant("redact-unreadable-paths-ignored", "ump", "a consent.redact entry the server cannot read as a path "
            "(\"body..[[(\") is kept and names nothing, instead of refusing the record; the readable paths are "
            "still applied", ("ump/remember-reject-policy", "ump/consent-redact-boundary"),
            {"unreadable_redact_paths": "ignore"}, bindings=("http", "mcp")),
    Variant("redact-keeps-required-members", "ump", "a consent.redact path naming a member no record can lack "
            "(id, scope.owner, $..* …) is stored, and those members are kept when the record is served to another "
            "owner (every other path applied), instead of refusing the record", ("ump/consent-redact-keeps-record",),
            {"required_member_redact": "keep"}, bindings=("http", "mcp")),
    Variant("recall-extra-signal", "ump", "every recall result carries an engine signal of its own (x_bm25_raw) "
            "beside the five standard ones, not listed in capabilities.retrieval_signals",
            ("ump/recall-signal-names",), {"extra_signals": (("x_bm25_raw", 3.25),)}, bindings=("http", "mcp")),
    Variant("created-201", "ump", "a remember that creates a record and every revise answer HTTP 201 Created "
            "(a merge stays 200)", ("ump/http-route-remember", "ump/http-route-revise", "ump/runner-rules"),
            {"http_created_status": 201}, bindings=("http",)),
    Variant("mcp-no-capabilities-tool", "ump", "the MCP server lists no ump.capabilities tool: capabilities is "
            "derived from the tool list, as §4.1 lets a minimal server do",
            ("ump/mcp-tool-capabilities", "ump/capabilities-version", "ump/capabilities-conformance",
             "ump/capabilities-kinds", "ump/capabilities-bindings", "ump/capabilities-no-side-effects",
             "ump/capabilities-no-0.1-runtime"), {"mcp_capabilities_tool": False}, since="1.0", bindings=("mcp",)),
    Variant("subscribe-hello-event", "ump", "an SSE subscription opens with an event of its own, `event: ready` "
            "with data {\"status\": \"ready\"}, naming no record, before any change",
            ("ump/subscribe-stream", "ump/capabilities-no-side-effects", "ump/subscribe-event-form"),
            {"sse_hello": "event"}, bindings=("http",)),
    Variant("no-rehydrate-helper", "ump", "the server offers no rehydration helper (capabilities.rehydrate false; "
            "rehydrate answers unsupported): §5.3 binds the consumer that injects memory into a model context",
            ("ump/rehydrate-verify", "ump/rehydrate-filter-before-ranking", "ump/rehydrate-frame-structurally",
             "ump/rehydrate-never-execute", "ump/client-procedural-not-authoritative"),
            {"rehydrate_helper": False}, bindings=("http", "mcp")),
    Variant("rehydrate-tilde-fence", "ump", "rehydrate frames the records in a tilde fence tagged untrusted "
            "(~~~~ump-memory untrusted … ~~~~, the closing fence longer than any tilde run inside), one JSON "
            "object per record: §5.3's own example of a frame", ("ump/rehydrate-frame-structurally",),
            {"rehydrate_frame": "fence"}, bindings=("http", "mcp")),
    Variant("rehydrate-json-document", "ump", "rehydrate answers one JSON document typed as untrusted memory "
            "({type: ump.untrusted_memory, trust: untrusted, records: [...]}), the records as members of it: "
            "clearly delimited, typed data as a structure", ("ump/rehydrate-frame-structurally",
                                                             "ump/client-procedural-not-authoritative"),
            {"rehydrate_frame": "json"}, bindings=("http", "mcp")),
    Variant("rehydrate-own-answer", "ump", "rehydrate answers a form of its own, {context, included, dropped, "
            "framing}, takes the records themselves or a query and no `ids`, and closes each record in its own "
            "<ump:memory id kind> element inside one tagged untrusted (a blind red team's helper, round 28): "
            "§5.3 gives a helper no form", ("ump/rehydrate-verify", "ump/rehydrate-filter-before-ranking",
                                            "ump/rehydrate-frame-structurally", "ump/rehydrate-never-execute",
                                            "ump/client-procedural-not-authoritative"),
            {"rehydrate_frame": "elements", "rehydrate_answer": "context"}, bindings=("http", "mcp")),
    Variant("subscribe-other-owners-public", "ump", "a subscription naming another owner's scope is served what "
            "the subscriber may see (that owner's public records, redacted) instead of being refused",
            ("ump/visibility-private", "ump/consent-redact-boundary"), {"subscribe_foreign_owner": "visible"}),
    Variant("mcp-subscribe-own-logger", "ump", "ump.subscribe notifies each change under a logger of its own "
            "(acme.memory.changes) and sends no {\"type\": \"subscribed\"} acknowledgement",
            ("ump/subscribe-stream",), {"mcp_subscribe_logger": "acme.memory.changes"}, bindings=("mcp",)),
    Variant("mcp-subscribe-after-call", "ump", "ump.subscribe answers a subscription handle at once "
            "({subscription, delivery, logger}) and pushes each change as an MCP notification after the call "
            "(§3.8: \"Binding-specific (MCP notifications / SSE)\"), where the protocol lets a server notify "
            "outside a request (found by the blind MCP red team, round 14)", ("ump/subscribe-stream",),
            {"mcp_subscribe_delivery": "after-call"}, bindings=("mcp",)),
    Variant("mcp-subscribe-resource-updated", "ump", "ump.subscribe answers a subscription handle at once and "
            "tells each change as MCP's own notifications/resources/updated naming the record's resource "
            "(ump://{project}/{id}, §4.1), which says that the record changed and not how: the client reads it "
            "(a blind red team's UMP 0.1 server, round 29)", ("ump/subscribe-stream",),
            {"mcp_subscribe_delivery": "resource-updated"}, bindings=("mcp",)),
    Variant("mcp-subscribe-for-session", "ump", "ump.subscribe answers a subscription handle at once, tells each "
            "change as notifications/resources/updated (which names no subscription) and keeps the subscription for "
            "as long as the MCP session lasts: the events of every subscription the session opened arrive mixed "
            "(a blind red team's UMP 0.1 server, round 29)", ("ump/subscribe-stream",),
            {"mcp_subscribe_delivery": "resource-updated-session"}, bindings=("mcp",)),
    Variant("import-keeps-valid-records", "ump", "a file import holding an invalid record stores the valid "
            "records and reports the invalid one refused, instead of refusing the whole file",
            ("ump/reject-invalid-record",), {"import_batch": "per-record"}, bindings=("file",)),
    Variant("md-numbers-as-doubles", "ump", "the .ump.md front matter writes every number as a double does (an "
            "evidence weight 1 as 1.0), while the .ump.json keeps 1: one JSON value (RFC 8259 §6), the same JCS form",
            ("ump/md-roundtrip-lossless",), {"md_numbers": "floats"}, bindings=("file",)),
    Variant("http-errors-200", "ump", "a refused operation answers HTTP 200 with the §3 error envelope (§3 fixes the "
            "envelope, §4.2 no status; the SHOULD ump/http-error-status warns it; found by the blind red team, round 17)",
            ("ump/http-route-remember", "ump/http-route-get", "ump/http-error-status"),
            {"http_error_status": "200"}, bindings=("http",)),
    Variant("revise-superseded-branches", "ump", "a record already superseded may be revised again: each successor "
            "is added to its superseded_by (a list, \"set by engine on revise\"), its valid time stays as the first "
            "revise ended it (found by the blind red team, round 17)", ("ump/revise-sets-superseded-by",),
            {"revise_superseded": "branch"}),
    Variant("integrity-hex", "ump", "the records it signs carry content_hash \"blake3:<hex>\" and signature "
            "\"ed25519:<hex>\" (the text names no encoding; its examples read \"blake3:5e…\", \"ed25519:9c…\"; "
            "found by the blind red team, round 17)", ("ump/integrity-content-hash",),
            {"integrity_encoding": "hex"}),
)
