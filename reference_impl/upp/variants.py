"""UPP variants of the reference implementation: each one legitimate choice the UPP text leaves
open, made the other way (reference_impl/variants.py; decision points in policy.py). The suite must
pass every one (tests/harness/test_variants.py); docs/catalogue-upp.md documents each beside the
requirement whose reading it pins."""

from __future__ import annotations

from memconform.reference_impl.variants import Variant


def _v(name: str, description: str, readings: tuple[str, ...], **overrides: object) -> Variant:
    return Variant(f"upp-{name}", "upp", description, tuple(f"upp/{r}" for r in readings), overrides,
                   since="1.0.0")


UPP_VARIANTS: tuple[Variant, ...] = (
    Variant("upp-http-status-by-code", "upp", "over HTTP, a lone JSON-RPC error answer carries the status the "
            "JSON-RPC-over-HTTP convention gives its code (-32700, -32602, -32603 and -32000…-32099: 500; -32600: "
            "400; -32601: 404), the JSON-RPC body unchanged", ("upp/error-invalid-params", "upp/jsonrpc-parse-error"),
            {"http_error_status": "by-code"}, since="1.0.0", bindings=("http",)),
    _v("params-required", "upp/info and upp/get_labels refuse a request without a `params` member (-32602), "
       "as 05 §2 marks params Required", ("params-may-be-omitted",), params_required=True),
    _v("params-by-position", "params given as a JSON array are taken by position, in the order of the "
       "operation's parameter table, as JSON-RPC 2.0 allows (05 §1), instead of refused with -32602",
       ("error-invalid-params",), params_by_position=True),
    _v("unknown-params-rejected", "a request carrying a parameter the server does not know is refused with -32602 "
       "(a strict server; 08 §5 tells clients not to rely on extensions)", ("unknown-params-ignored",),
       unknown_params="reject"),
    _v("times-without-offset", "every timestamp the text calls ISO-8601 (created_at, exported_at) is an ISO-8601 "
       "local date-time without an offset, as Python's isoformat() writes a naive time; the task times, which 03 "
       "§3 calls ISO-8601 UTC, keep their Z",
       ("stored-event-created-at", "export-result-shape", "export-package-fields"),
       times_with_offset=False),
    _v("protocol-version-1-x", "upp/info reports protocol_version \"1.2.0\": a later minor release, which semver "
       "makes backward-compatible with 1.0.0", ("info-protocol-version",), protocol_version="1.2.0"),
    _v("high-staging-threshold", "events below confidence 0.9 are stored staged (the reference stages below 0.5); "
       "\"high\" and \"low\" confidence are the server's to define", ("high-confidence-valid", "low-confidence-staged"),
       staged_below=0.9),
    _v("import-keeps-status", "an imported event keeps the package's status (valid or staged) instead of one derived "
       "from its confidence: a reinforced event is valid with a low confidence (02 §6)", ("low-confidence-staged",),
       import_status="package"),
    _v("import-package-order", "a package's events are stored in the package's order, not oldest first by "
       "created_at (03 §4 fixes no order)", ("import-supersession",), import_order="package"),
    _v("import-skips-duplicates", "upp/import_events skips an event repeating, value and labels, one the user "
       "already holds valid and counts it in skipped_count (08 §6: \"Implementations handle duplicate detection "
       "internally\"; 03 §4 skipped_count \"e.g., invalid labels\")", ("import-persists",),
       import_duplicates="skip"),
    _v("import-skips-folded-duplicates", "upp/import_events skips an event repeating, labels and value but for case, "
       "runs of whitespace and Unicode compatibility forms, one the user already holds, whatever its status (\"User "
       "enjoys CHESS\" beside a held \"User enjoys chess\"; a superseded name imported again), and counts it in "
       "skipped_count (08 §6 leaves what a duplicate is to "
       "the implementation; a blind red team's reading, round 27)", ("import-persists",),
       import_duplicates="skip-folded"),
    _v("export-per-user-folders", "each user's export file goes into a folder of its own under the export folder "
       "(named by a hash of the entity_key)", ("export-confined-paths", "import-confined-paths"),
       export_layout="per-user"),
    _v("export-nested-user-folders", "each user's export file goes into users/<hash of the entity_key>/ under the "
       "export folder, while imports read the whole export folder (a blind red team's layout, round 16)",
       ("export-confined-paths", "import-confined-paths"), export_layout="nested"),
    _v("import-foreign-ontology", "a package of another ontology is imported under the label rule: events whose "
       "labels this server's ontology defines are imported, the rest skipped (no -32002)",
       ("import-ontology-mismatch",), foreign_ontology="by-labels"),
    _v("import-foreign-ontology-skipped", "a package of another ontology is imported with every event skipped and "
       "counted (imported_count 0): a label is its ontology's, so none of that package's is this server's",
       ("import-ontology-mismatch",), foreign_ontology="skip-all"),
    _v("export-relative-path", "export answers the file's path relative to the server's working folder (03 §4: "
       "\"Path to the generated export file\"), and import reads a relative path from there",
       ("export-writes-package",), export_path_form="relative"),
    _v("import-bad-file-own-code", "a file that cannot be read or is no ExportPackage is refused with the "
       "implementation code -32010 (05 §4: -32000..-32099) instead of -32602",
       ("import-bad-file", "import-confined-paths"), bad_file_code=-32010),
    _v("empty-entity-key", "entity_key \"\" is a string like any other: it names a user nobody wrote (reads answer "
       "-32001), not invalid params", ("error-invalid-params",), empty_entity_key_valid=True),
    _v("unknown-user-empty", "upp/retrieve, upp/get_events and upp/export_events answer an empty result for a user "
       "never written, not -32001", ("retrieve-unknown-user", "get-events-unknown-user", "export-unknown-user"),
       unknown_user="empty"),
    _v("retrieve-plain-events", "upp/retrieve returns only the Event members 03 §2 names (value, labels, "
       "confidence, source_type), no id or status", ("retrieve-returns-events",), retrieve_members="event"),
    _v("validity-dates", "extracted events carry valid_from, the ISO-8601 date the fact was told (\"2026-01-15\", "
       "no time)", ("event-field-types",), valid_from_date=True),
    _v("newest-first", "upp/get_events and export files list a user's events newest first (03 §2 fixes no order)",
       ("get-events-complete", "export-all-events"), listing_order="newest-first"),
    _v("stricter-sensitivity", "upp/get_labels reports every tier_personal label of user/v1 as tier_sensitive (a "
       "deployment that handles personal data more strictly)", ("ontology-major-stable",), stricter_sensitivity=True),
    _v("retrieve-hides-sensitive", "a deployment handling personal data strictly: upp/get_labels serves every "
       "tier_personal label of user/v1 as tier_sensitive, and upp/retrieve leaves events of the tier_sensitive and "
       "tier_internal labels out by default (06 §6: \"Implementations should support filtering events by "
       "sensitivity tier\"); upp/get_events and exports still hold them",
       ("retrieve-finds-stored",), retrieve_hidden_tiers=("tier_sensitive", "tier_internal"),
       stricter_sensitivity=True),
    _v("no-batches", "a batch (a JSON array) is answered with one -32600 Invalid Request object: 05 §1 says every "
       "UPP message is a JSON object", ("jsonrpc-batch", "jsonrpc-batch-notifications"), batches=False),
)
