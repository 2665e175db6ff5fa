"""The UPP reference implementation's decision points: where the spec leaves a choice open, the
reference reads it one way (the defaults here) and a variant (`variants.py`) may read it the other
way (reference_impl/variants.py). The service reads `self.policy.<point>` where the choice is made.

A few faults set one of these points to a value the text forbids (`overrides` of their entry in
faults.py: the staging threshold at 0, the bad-file code -32603, and the params readings kept as
faults of the SHOULDs they miss); `reference_impl.faults.deviate` builds the policy the service
runs, so the service reads one policy whatever made it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UppPolicy:
    """Each field is one open choice of the UPP text; its default is the reference reading, and its
    comment names the requirement and the other legitimate reading."""

    # upp/params-may-be-omitted: info and get_labels answer a request without `params` (JSON-RPC
    # 2.0 lets a client omit it). Other reading: 05 §2 marks `params` Required, so -32602.
    params_required: bool = False
    # upp/error-invalid-params: params given as an array are -32602 (05 §2: params is an object, by
    # name). Other reading: JSON-RPC 2.0's by-position params (05 §1 makes every message JSON-RPC 2.0)
    # taken in the order of the operation's parameter table (True; a blind red team's, round 23).
    params_by_position: bool = False
    # upp/unknown-params-ignored: a member the server does not know is ignored ("ignore"). Other
    # reading: a strict server refuses it with -32602 ("reject"); 08 §5 tells clients not to rely
    # on extensions, so a strict server breaks no conforming client.
    unknown_params: str = "ignore"
    # upp/stored-event-created-at (and every UPP timestamp the text calls ISO-8601): RFC 3339 UTC with
    # a Z. Other reading: ISO-8601 local date-times without an offset ("2026-01-15T10:30:00.123456").
    # Not the task times: 03 §3 calls them "ISO-8601 UTC", so they keep their Z either way.
    times_with_offset: bool = True
    # upp/info-protocol-version: "1.0.0". Other reading: a later 1.x release, which semver (01 §8)
    # makes backward-compatible with 1.0.0.
    protocol_version: str = "1.0.0"
    # upp/high-confidence-valid, upp/low-confidence-staged: events below this confidence are
    # stored staged. "High" and "low" are not defined; any threshold keeps confidence 1.0 valid.
    staged_below: float = 0.5
    # upp/low-confidence-staged on import: an imported event's status is derived from its confidence
    # ("confidence"). Other reading: a package's "valid" or "staged" is kept ("package"): a staged
    # event reinforced keeps its low confidence and is valid (02 §6), and 03 §4 does not say an import
    # recomputes statuses.
    import_status: str = "confidence"
    # upp/import-supersession: a package's events are stored oldest first by created_at, package
    # order for ties ("created"). Other reading: in package order ("package"); 03 §4 "assigns new IDs
    # and timestamps" and fixes no order.
    import_order: str = "created"
    # upp/import-persists: every valid event of a package is stored ("store"). Other reading: an event
    # repeating, value and labels, one the user holds valid is skipped and counted in skipped_count
    # ("skip"); 08 §6 "Implementations handle duplicate detection internally", and 03 §4's
    # skipped_count names invalid labels only as an example ("e.g."); or the same with values compared
    # but for case, whitespace and compatibility forms ("skip-folded").
    import_duplicates: str = "store"
    # upp/export-confined-paths, upp/import-confined-paths: export files go straight into the export
    # folder ("flat"). Other readings: each user's into a folder of its own under it ("per-user"), or
    # under a `users` folder in it ("nested": imports still read the whole export folder); 03
    # §4 fixes no layout, only that the server writes a file and answers its path.
    export_layout: str = "flat"
    # upp/import-ontology-mismatch: a package of another ontology is refused with -32002
    # ("refuse"). Other reading: import it under the label rule, skipping events whose labels are
    # not in this server's ontology ("by-labels"); 03 §4 names only that rule. Or: a label is its
    # ontology's, so no event of another ontology carries a label of this one, and all are skipped
    # and counted ("skip-all"; a blind red team's, round 23).
    foreign_ontology: str = "refuse"
    # upp/export-writes-package: export answers the file's absolute path ("absolute"). Other reading:
    # the path relative to the server's working folder ("relative"; 03 §4 says only "Path to the
    # generated export file"; a blind red team's, round 23), and import reads a relative path from there.
    export_path_form: str = "absolute"
    # upp/import-bad-file: a file that cannot be read or is no ExportPackage is -32602. Other
    # reading: an implementation error code of -32000..-32099 (05 §4 allows them).
    bad_file_code: int = -32602
    # upp/error-invalid-params: entity_key "" is -32602. Other reading: "" is a string, so it names
    # a user the server does not know (-32001 for reads).
    empty_entity_key_valid: bool = False
    # upp/retrieve-unknown-user, upp/get-events-unknown-user, upp/export-unknown-user: a user never
    # written is -32001 ("error"). Other reading: an empty result ("empty").
    unknown_user: str = "error"
    # upp/retrieve-returns-events: retrieve returns full StoredEvents (a superset of Event,
    # "stored"). Other reading: only the Event members 03 §2 names ("event").
    retrieve_members: str = "stored"
    # upp/event-field-types: extracted events carry no validity window. Other reading: a server
    # dates each fact from the day it was told (valid_from "2026-01-15", an ISO-8601 date).
    valid_from_date: bool = False
    # upp/jsonrpc-batch: batches are answered with an array (JSON-RPC 2.0 §6). Other reading: 05 §1
    # says "All messages are JSON objects", so a batch is one invalid request (-32600).
    batches: bool = True
    # upp/http-chunked-body: a POST body without Content-Length (Transfer-Encoding: chunked) is read
    # whole ("read"). No other reading: RFC 9112 §7.1; "ignored" (read as empty) is a fault's.
    http_chunked_bodies: str = "read"
    # upp/get-events-complete, upp/export-all-events: get_events and exports list events in the
    # order stored ("stored"). Other reading: newest first ("newest-first"); 03 §2 fixes no order
    # ("a raw listing"), only that nothing is left out.
    listing_order: str = "stored"
    # upp/retrieve-finds-stored: retrieve ranks every valid event of the user (()). Other reading:
    # events of a label whose served tier is one of these are left out by default (06 §6
    # "Implementations should support filtering events by sensitivity tier"; 03 §2 leaves what is
    # relevant to the server); get_events and exports still hold them.
    retrieve_hidden_tiers: tuple[str, ...] = ()
    # upp/ontology-major-stable: labels are served as the official user/v1 file has them. Other
    # reading: a deployment handles personal data more strictly (tier_personal labels served as
    # tier_sensitive); 07 §5 fixes category and cardinality within a major version, not the tier.
    stricter_sensitivity: bool = False
    # upp/error-invalid-params, upp/jsonrpc-parse-error (HTTP only): every JSON-RPC answer comes with HTTP
    # 200 ("200"). Other reading: the JSON-RPC-over-HTTP convention, a lone error answer's status from its
    # code (-32700 and -32602 and -32603 and server errors 500, -32600 400, -32601 404: "by-code"); 05 §5
    # makes UPP transport-agnostic and names no HTTP status.
    http_error_status: str = "200"

