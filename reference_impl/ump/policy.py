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
    #: envelope {"error": {code, message}} as the tool's ordinary output ("output"); MCP 2025-06-18
    #: makes invalid arguments a JSON-RPC protocol error, so a refused argument (invalid_record,
    #: bad_request) may come as -32602 carrying the envelope in data ("protocol"); the public
    #: implementation's {"error": {"message": "<code>: …"}} as ordinary output ("output-prefixed").
    mcp_error_form: str = "iserror"
    #: ump/capabilities-open: capabilities (HTTP and MCP) and /.well-known/ump.json answer without a
    #: token ("open"), as the public implementation serves them. Other reading: §4.2's "Auth via
    #: capability tokens (§5.2) in Authorization: Bearer" covers every route it lists, and no
    #: sentence exempts capabilities, so they ask for a valid token ("token"; any verb); or only the
    #: capabilities route §4.2 lists does, the well-known document staying open ("capabilities-token").
    discovery_auth: str = "open"

    # -- records and operations, L0-L2 (§2, §3.2-§3.6, §6.2, §8) --------------------------------

    #: ump/recall-honors-valid-at: a record's valid time is the half-open [valid_from, valid_to),
    #: so at valid_to exactly it is no longer valid. Other reading: the closed [valid_from,
    #: valid_to]; §2.3 and §3.2 say "when the fact is true" and give no bound's inclusion.
    valid_to_inclusive: bool = False
    #: ump/revise-applies-patch: a patch is merged into the prior member by member ("merge", as
    #: §3.5's example of a partial body reads). Other reading: each top-level member the patch
    #: names replaces the prior's whole ("replace"); §3.5 gives no merge rule.
    revise_patch: str = "merge"
    #: ump/revise-applies-patch: the successor carries the prior's time.observed over ("carry").
    #: Other reading: it is stamped with the revise's own time ("restamp"): §2.3 makes
    #: created/observed the transaction time, "when the system learned it".
    revise_observed: str = "carry"
    #: ump/revise-applies-patch: a patch's scope is applied like any other member ("patch").
    #: Other reading: scope (owner, project, visibility) is set at remember and a revise keeps the
    #: prior's, leaving a scope member of the patch unapplied ("keep"): §3.5 calls revise an
    #: update, names no patchable members, and patches body and time in its example; the public
    #: implementation patches body, lifecycle, relations and time only.
    revise_scope: str = "patch"
    #: ump/revise-forget-stamp-provenance (§9 MAY): the successor's provenance is the prior's with
    #: the acting principal stamped in ("carry": source and evidence kept). Other reading: the
    #: successor's provenance is the revise's own ("own": actor, actor_kind, method revise,
    #: source.ref the prior; the prior's source and evidence were about the prior's assertion).
    revise_provenance: str = "carry"
    #: ump/forget-hard-erases: a hard forget deletes the record ("erase"). Other reading: it keeps
    #: a tombstoned shell with the content erased ("shell"): §3.6 "demands erasure" of the memory,
    #: not of the fact that an id once existed.
    hard_forget: str = "erase"
    #: ump/remember-invalid-record, ump/reject-invalid-record: a body is validated before the token
    #: is asked whether it may write the record's owner. Other reading: authorization first, so a
    #: record naming no owner the token grants is forbidden_scope however malformed; §3 orders
    #: neither.
    authorize_before_validate: bool = False
    #: ump/remember-invalid-record, ump/reject-invalid-record, ump/reject-unknown-major,
    #: ump/remember-reject-bad-signature: remember refuses with the §3.7 error envelope ("error").
    #: Other reading: the §3.3 response {"result": "rejected"} ("result"), a value §3.3 lists.
    remember_refusal: str = "error"
    #: ump/unknown-id-not-found: forget of an id the server never held answers not_found. Other
    #: reading: forget is idempotent and answers {"result": "tombstoned"} (nothing to forget is
    #: forgotten); §3.6 names no error.
    forget_unknown: str = "not_found"
    #: ump/forget-tombstones, ump/forget-retained: a tombstone keeps its valid time (forgetting is
    #: about keeping the record, not about when the fact held). Other reading: forget also ends the
    #: record's valid time (time.valid_to = now when it is open), as the public contract says.
    forget_sets_valid_to: bool = False
    #: ump/consent-retention-tombstone: a record whose retention passed is tombstoned ("tombstone",
    #: §2.7's words). Other reading: it is erased ("erase"); §3.6 lets consent.retention demand
    #: erasure.
    retention_expiry: str = "tombstone"
    #: ump/consent-retention-tombstone: consent.retention counts from time.created ("created"). Other
    #: reading: from when the store received the record ("receipt"): §2.7 calls it the "max time to keep"
    #: and names no start (a blind red team's server, round 20)
    retention_from: str = "created"
    #: ump/cap-token-verbs: a valid token lacking the operation's verb is refused forbidden_scope (the
    #: public implementation's code). Other reading: unauthorized (§3.7 defines neither code; a blind red
    #: team's server, round 20), or not_found for an operation naming one record (get, revise, forget,
    #: feedback), which hides the record from a token that may not touch it (round 29's server), as
    #: foreign_write_code does for another owner's
    verb_mismatch_code: str = "forbidden_scope"
    #: ump/cap-token-required: at L3 every memory operation without a token is refused unauthorized
    #: (False). Other reading: recall, get and subscribe without a token are served as an anonymous
    #: requester, who sees public records only (§2.2 "public - anyone"; a blind red team's server, round 20)
    anonymous_public_reads: bool = False
    #: ump/visibility-public, ump/consent-redact-boundary: a recall naming no scope.owner searches every
    #: record the requester may read (False). Other reading: it searches the requester's own records (§3.2
    #: "search by query + scope": no owner named, the requester's), and another owner's public records come
    #: back only to a recall naming that owner (a blind red team's server, round 20)
    unscoped_recall_own: bool = False
    #: ump/provenance-required: remember of a record without provenance (or, 1.0, without one of its
    #: members) is refused ("refuse"). Other reading: the server fills what is missing from the token's
    #: verified issuer, who did write it ("writer": actor the issuer, actor_kind agent, method remember;
    #: §3.3 "server fills id/time/integrity if omitted" names what it fills, not all it may; a blind red
    #: team's server, round 22). "placeholder" (a fault) fills an actor nobody is.
    fill_provenance: str = "refuse"
    #: ump/reject-unknown-major: a record of an unknown major version is refused invalid_record. Other
    #: reading: unsupported (§8 says reject, not with which code; §3.7 lists both; a blind red team's
    #: server, round 22)
    unknown_major_code: str = "invalid_record"
    #: ump/forget-hard-owner-only and the write rules: revise or forget of a record the requester may
    #: not change is refused forbidden_scope. Other reading: not_found, as for an id it does not hold
    #: (§3.7 ties no code to it; a blind red team's server, round 22)
    foreign_write_code: str = "forbidden_scope"
    #: ump/consent-retention-tombstone: a record whose retention ran out before it arrived is stored and
    #: tombstoned when read ("keep"). Other reading: it is refused consent_violation ("refuse"; §3.3
    #: "reject (not silently store) records that fail consent/policy"; a blind red team's server, round 22)
    expired_on_arrival: str = "keep"
    #: ump/remember-may-merge, ump/remember-reports-result: a remember whose text, kind and owner
    #: equal an active record's is merged into it. Other reading: the server never merges (§3.3
    #: "MAY merge ... per its own dedup policy") and creates a record each time.
    merge_duplicates: bool = True
    #: ump/reject-invalid-record, ump/remember-may-merge: a remember naming an id the store already
    #: holds is merged when it repeats that record, refused (invalid_record) when it differs, and
    #: only after the record itself is validated ("merge"). Other reading: an id is used once: any
    #: remember naming a held id is refused "id already in use" before the record is read
    #: ("refuse", a blind red team's server, round 17); §2's "stable, globally unique" and §3.3 allow
    #: both.
    reused_id: str = "merge"
    #: ump/record-required-fields: a 0.1 record that arrives without scope.visibility is stored
    #: with the narrowest audience written out, "private" ("private"). Other reading: the 0.1 text
    #: leaves visibility unmarked (scope.owner is REQUIRED, user/agent/session OPTIONAL), so the
    #: record is kept as sent and read as private ("absent"; a blind red team's server, round 17).
    unmarked_visibility: str = "private"
    #: a remembered record without `ump`: "fill" it with the session's version, or "refuse" it as invalid
    #: (§2 marks it REQUIRED; §3.3's fill list leaves it out, its example has none)
    missing_ump: str = "fill"
    #: ump/capabilities-no-0.1-runtime: the UMP versions spoken at runtime. The reference speaks
    #: 0.1 and 1.0 and says so in capabilities.versions. Other reading: a 1.0 server speaks 1.0
    #: only (§8: 0.1 is "not a negotiated runtime version") and refuses a 0.1 client, while still
    #: importing 0.1 records.
    runtime_versions: tuple[str, ...] = ("1.0", "0.1")
    #: ump/capabilities-no-0.1-runtime: the runtime versions are listed in capabilities.versions
    #: (True). Other reading: `versions` is no spec's member (§3.1 has `ump` alone), so a server
    #: speaking 0.1 and 1.0 may answer each client in its version and list nothing (False).
    list_versions: bool = True
    #: ump/id-minted-form, ump/record-id-format: minted ids are lowercase unpadded RFC 4648 base32
    #: ("base32", the public implementation's). Other reading: §6.2 says only "base32", so the
    #: base32hex alphabet in RFC 4648's upper case ("base32hex") is as literal.
    minted_ids: str = "base32"
    #: ump/record-version: a record declaring an unknown minor of a known major ("1.7", "0.2") is
    #: refused ("reject"). Other reading: §8 forbids reinterpreting an unknown *major* only and makes
    #: minors additive, so a reader takes it as the version it knows of that major ("accept").
    unknown_minor: str = "reject"
    #: ump/remember-reject-policy, ump/consent-redact-boundary: a consent.redact entry that is no
    #: JSON-path the server can read is refused with consent_violation ("refuse"). Other reading:
    #: §2.7 says "JSON-paths" and fixes no syntax (RFC 9535 came later; dotted paths, JSON
    #: Pointers and `$`-rooted paths are all in use), so an entry the server cannot read names
    #: nothing it holds and is ignored ("ignore"), the paths it can read still applied.
    unreadable_redact_paths: str = "refuse"
    #: ump/consent-redact-keeps-record, ump/remember-reject-policy: a consent.redact path that would
    #: strip a member no record can lack (id, scope.owner, `$..*` …) is refused at remember with
    #: consent_violation ("refuse": §2.7's redact and §2's REQUIRED members cannot both hold, so the
    #: consent fails policy, §3.3). Other reading: the record is stored and those members are kept
    #: when it is served across the boundary, every other path applied ("keep"); §2.7 names no
    #: member redact may not reach.
    required_member_redact: str = "refuse"
    #: ump/reject-invalid-record: an import (a .ump.json array, NDJSON) holding an invalid record
    #: is refused whole, nothing stored ("atomic"). Other reading: each record is admitted on its
    #: own; the valid ones are stored and the import reports the refused one ("per-record"); §3.3's
    #: "MUST reject (not silently store)" binds the invalid record, and no text makes a file atomic.
    import_batch: str = "atomic"
    #: ump/md-roundtrip-lossless: the Markdown front matter writes each number as the record holds
    #: it ("as-given"). Other reading: JSON has one number type (RFC 8259 §6), so a writer that keeps
    #: numbers as doubles writes an integer-valued one with a fraction (1 as 1.0, "floats"); the
    #: value, and so the record's JCS form and signature, is the same.
    md_numbers: str = "as-given"
    #: ump/integrity-content-hash, ump/integrity-signature: the digest and the signature are written
    #: as the public implementation writes them, lowercase unpadded base32 and padded base64
    #: ("base32"). Other reading: the text names no encoding (its examples are "blake3:5e…",
    #: "ed25519:9c…"), so both in lowercase hex ("hex"; the signature is over BLAKE3 of that string).
    integrity_encoding: str = "base32"
    #: ump/revise-sets-superseded-by: a record already superseded is not revised again ("refuse":
    #: revise the latest). Other reading: superseded_by is a list (§2: "set by engine on revise"), so
    #: a prior may be revised twice, each successor added to it, its valid time ended by the first
    #: ("branch"; found by the blind red team, round 17, whose server did so).
    revise_superseded: str = "refuse"
    #: ump/recall-signal-names: each result's signals are the five standard ones (()). Other reading:
    #: §3.2 standardizes the names of the signals it names and closes no set, so an engine may report
    #: one of its own beside them without listing it in capabilities.retrieval_signals ((name, value)
    #: pairs added to every result).
    extra_signals: tuple[tuple[str, float], ...] = ()
    #: ump/http-route-remember, ump/http-route-revise: the HTTP status of a write that created a
    #: record (a fresh remember, a revise's successor): 200, as the public implementation and its
    #: runner have it. Other reading: §4.2 lists routes, no status, and 201 Created is HTTP's own
    #: word for it (201); the public runner's exact 200 is then missed (class ump-reference-interop).
    http_created_status: int = 200
    #: ump/http-route-*, ump/http-error-status: a refused operation is answered with the status its
    #: code maps to ("by-code": not_found 404, unauthorized 401, …). Other reading: §3 fixes the
    #: envelope and §4.2 no status, so the envelope in a 200 ("200"), which the SHOULD
    #: ump/http-error-status warns and no MUST refuses (found by the blind red team, round 17).
    http_error_status: str = "by-code"
    #: ump/mcp-tool-capabilities and the §3.1 capabilities requirements over MCP: the reference lists
    #: the ump.capabilities tool (True). Other reading: §4.1 "capabilities is derivable from the tool
    #: list, so a minimal server can skip the explicit tool and just expose the others" (False).
    mcp_capabilities_tool: bool = True
    #: ump/subscribe-stream, ump/capabilities-no-side-effects: an SSE stream opens with a comment line
    #: ("comment"), the public implementation's habit. Other reading: §3.8 fixes no preamble, so a
    #: server may open with an event of its own that names no record ("event": `event: ready`).
    sse_hello: str = "comment"
    #: ump/rehydrate-*: the server offers memconform's rehydration helper (True), the consumer side of
    #: §5.3 made observable. Other reading: §5.3 binds "any consumer that injects recalled memory into
    #: a model context", and no UMP binding has such an operation, so a server offers none (False).
    rehydrate_helper: bool = True
    #: ump/rehydrate-frame-structurally: §5.3 asks for "clearly delimited, typed data (e.g. a fenced
    #: block tagged as untrusted memory)". The reference frames a tag, one escaped line per record
    #: ("tag"); a tilde fence tagged untrusted, one JSON object per line, closed by a fence longer
    #: than any run of tildes inside, is §5.3's own example ("fence"); one JSON document typed as
    #: untrusted memory with the records as members is typed data too ("json"); each record in an
    #: element of its own closed by its own end tag, inside one element tagged untrusted ("elements").
    rehydrate_frame: str = "tag"
    #: ump/rehydrate-*: the helper answers memconform's form, {text, included, dropped} for {ids},
    #: {records} or {query, scope} ("helper"), or a form of its own (a blind red team, round 28):
    #: {context, included, dropped, framing}, taking the records themselves or a query and no `ids`
    #: ("context"). §5.3 gives a helper no form.
    rehydrate_answer: str = "helper"
    #: ump/visibility-private, ump/consent-redact-boundary on a stream: a subscription naming another
    #: owner's scope is refused ("refused", forbidden_scope), or served only what the subscriber may
    #: see, public records redacted, as recall would ("visible"). §3.8 says only "a scope".
    subscribe_foreign_owner: str = "refused"
    #: ump/subscribe-stream over MCP: change notifications come under the logger "ump/subscribe",
    #: after a {"type": "subscribed"} acknowledgement (memconform's convention). Other reading: §3.8
    #: says only "MCP notifications", so a server may use a logger of its own and send no
    #: acknowledgement (any other name: that logger, no acknowledgement).
    mcp_subscribe_logger: str = "ump/subscribe"
    #: ump/subscribe-stream over MCP: the ump.subscribe call stays open and its notifications are the
    #: events ("in-call"). Other reading: the call answers a subscription handle at once and each change
    #: follows as a notification after it ("after-call"), where the protocol lets a server notify
    #: outside a request (the handshake-era ones; 2026-07-28 does not, so there it stays in-call), or
    #: as MCP's own `notifications/resources/updated` naming the record's §4.1 resource URI, which says
    #: that it changed and not how ("resource-updated"; a blind red team's server, round 29), and
    #: those notices for as long as the session lasts, not bounded by the call
    #: ("resource-updated-session", the same server).
    mcp_subscribe_delivery: str = "in-call"
    #: ump/runner-rules: the HTTP status of invalid_record raised by the service (a record the
    #: operation refuses): 400, the public implementation's. The text fixes none; any other 4xx
    #: (422, fault `http-invalid-422`) misses only the public runner's exact rule.
    http_invalid_status: int = 400
