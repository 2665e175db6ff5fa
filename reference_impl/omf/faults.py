"""OMF faults of the reference implementation (spec "omf", since 1.0).

Each is one deliberate violation of one MUST of suite/omf/catalogue.toml, made apart from the right
implementation: its entry says how. `overrides` set a decision point of `policy.py` to a value the
text forbids; `wraps` replace an operation of `engine.OmfEngine` by a small wrong one from
`faulty.py`, named after the fault (operation name -> wrap(engine, original)). `OmfEngine.__init__`
applies both (reference_impl/faults.py: `deviate`, `install_wraps`); the engine itself never tests
a fault's name. The engine serves both live bindings (cli and http), so `bindings` is None: every
fault shows through either, but for a server's state kept between calls (a cache), which only the
long-lived HTTP server has: those faults name ("http",).

`breaks` are the requirements the checks are expected to report failed against each fault; the
calibration against the real checks is the lead's.
"""

from typing import Any

from memconform.reference_impl.faults import Fault
from memconform.reference_impl.omf import faulty


def _f(name: str, description: str, *breaks: str, interop_only: bool = False, stateful: bool = False,
       **how: Any) -> Fault:
    return Fault(f"omf-{name}", "omf", description, tuple(f"omf/{b}" for b in breaks), since="1.0",
                 interop_only=interop_only, stateful=stateful, **how)


OMF_FAULTS = (
    # -- size (a SHOULD: shows as a warning) ---------------------------------------------------------
    _f("large-document-crash", "a document of more than 5,000 items fails unexpectedly (HTTP 500, a traceback "
       "from the command line), as an importer that runs out of memory", "large-document-answered",
       wraps={"preview": faulty.fails_on_large_documents, "import_document": faulty.fails_on_large_documents}),
    # -- envelope and items ------------------------------------------------------------------------
    # a blind red team (round 31): what an export loses on its way out, and a preview that forgets a flag
    _f("project-export-cached", "a project's export is answered from the rows of its first export: a later import "
       "into the project is not listed (a server's cache: each command line starts without one)",
       "export-every-eligible", bindings=("http",), wraps={"_rows": faulty.project_export_cached}),
    _f("export-page-drops-last", "export reads rows in pages of 1,000 and loses the last row of each full page",
       "export-every-eligible", wraps={"_rows": faulty.export_page_drops_last}),
    _f("preview-ignores-fuzzy", "preview walks the dedup path without the fuzzy_threshold it was given: a near-copy "
       "the import counts a duplicate is previewed to_import", "preview-matches-import",
       wraps={"preview": faulty.preview_drops_fuzzy}),
    # a blind red team (round 31): a crash is no validation error
    _f("non-object-item-crash", "an item that is a number or null makes the import fail unexpectedly (HTTP 500, a "
       "traceback from the command line) instead of failing validation", "malformed-document-refused",
       wraps={"resolve_item": faulty.item_read_before_typed}),
    _f("accepts-other-version", "import accepts any string \"omf\" version, not only \"1.0\"", "omf-version-gated",
       wraps={"validate_envelope": faulty.accepts_other_version}),
    _f("accepts-blank-content", "an item whose content is empty or whitespace-only is imported",
       "content-not-blank",
       wraps={"_is_blank": faulty.accepts_blank_content}),
    # found by the blind red team (round 7): only ASCII white space counted as blank
    _f("blank-check-ascii-only", "content made only of non-ASCII white space (U+00A0, U+3000, U+2003) passes "
       "validation and is imported", "content-not-blank", wraps={"_is_blank": faulty.blank_ascii_only}),
    # round 19: a file's "18/04/2026" reached the claim
    _f("export-dates-day-first", "export writes created_at / updated_at / expires_at as DD/MM/YYYY", "item-date-format",
       wraps={"_export_item": faulty.dates_day_first}),
    # round 24: the informational date of an expiry past year 9999 ended the export
    _f("far-expiry-export-fails", "export writes the informational expires_at through a datetime with no range "
       "guard: a trusted expires_at_ms past the year 9999 (10^15 ms, within 2^53) fails the whole export",
       "export-every-eligible", wraps={"_export_item": faulty.far_expiry_unguarded}),
    # round 19: a superseded_by that the sibling's supersedes does not answer
    _f("export-superseded-by-dropped", "export writes superseded_by null on every item, while the sibling's supersedes "
       "names it (so a replayed edge reads back without its superseded_by too)", "export-edges-agree",
       "superseded-by-derived", wraps={"_export_item": faulty.superseded_by_dropped}),
    _f("exported-at-millis", "export stamps exported_at with milliseconds (…:SS.mmmZ), not seconds precision",
       "exported-at-format",
       wraps={"_envelope": faulty.exported_at_millis}),
    # Shows only where the check puts a valid item before the invalid one.
    # Whole-document validation only: a malformed lifecycle found while the items are walked may keep
    # the earlier items (the variant omf-lifecycle-error-keeps-earlier), a document that fails
    # validate_omf or deserialization may not.
    _f("partial-write-on-invalid", "an import that fails validation on an item keeps the items before it",
       "content-not-blank", "content-required", "malformed-document-refused",
       wraps={"_keeps_written": faulty.partial_write_on_invalid, "_walk": faulty.partial_write_walk}),
    # -- trust gate and lifecycle ------------------------------------------------------------------
    # Every document is trusted: a lifecycle claim from a foreign or missing source is honoured, and a
    # malformed untrusted lifecycle block is now parsed (and refused); a source.app "MEMD" (not exactly
    # "memd") is trusted too, which is the gate's own comparison failing.
    _f("trusts-any-source", "the lifecycle block is honoured whatever source.app says (or without source)",
       "source-optional", "trust-gate", "untrusted-defaults", "untrusted-lifecycle-not-parsed",
       wraps={"_source_trusted": faulty.trusts_any_source}),
    # Only a source.app that differs from "memd" in case or surrounding spaces shows it (red-team finding).
    _f("trust-gate-casefold", "source.app is compared after strip() and lower(): a document from \"MEMD\", "
       "\"Memd\" or \"memd \" is trusted and its lifecycle (draft, working, an expiry) honoured", "trust-gate",
       wraps={"_source_trusted": faulty.trust_gate_casefold}),
    _f("trusts-other-ext-version", "the lifecycle block is honoured for any integer extensions.memd.v (2 too)",
       "memd-v-gated",
       wraps={"_ext_trusted": faulty.trusts_other_ext_version}),
    # found by the blind red team (round 13): a boolean is no integer in JSON, and no 1
    _f("trust-v-truthy", "extensions.memd.v is compared with a loose ==: a memd document with \"v\": true is "
       "trusted and its lifecycle (tier history, status expired) honoured", "memd-v-gated",
       wraps={"_ext_trusted": faulty.trust_v_truthy}),
    _f("lenient-lifecycle", "a trusted malformed lifecycle (non-string or unknown status/tier, non-integer *_ms, "
       "non-object) imports with defaults for the bad fields instead of failing validation",
       "fail-closed-string", "fail-closed-vocabulary", "fail-closed-ms", "fail-closed-object",
       "preview-fail-closed",
       wraps={"_lifecycle": faulty.lenient_lifecycle}),
    # -- export ----------------------------------------------------------------------------------------
    _f("exports-deleted", "export includes status=deleted and status=error rows", "export-never-deleted-error",
       wraps={"_eligible": faulty.exports_deleted}),
    _f("history-by-default", "export includes tier=history rows although include_history is false",
       "export-include-history",
       wraps={"export": faulty.history_by_default}),
    _f("no-lazy-expiry", "include_expired=false drops status=expired rows but not rows whose expires_at_ms "
       "is past", "export-lazy-expiry",
       wraps={"_eligible": faulty.no_lazy_expiry}),
    # found by the blind red team (round 13): the exclusions hold with a project_id too
    _f("project-export-keeps-history", "an export with a project_id ignores include_history=false: the "
       "project's tier=history rows are listed", "export-include-history",
       wraps={"export": faulty.project_export_keeps_history}),
    # found by the blind red team (round 13): creation order is not the order of lifecycle_updated_at_ms
    _f("export-by-lifecycle-updated", "export lists rows by ascending lifecycle_updated_at_ms (as a trusted "
       "import set it), not in creation order", "export-order",
       wraps={"_rows": faulty.export_by_lifecycle_updated}),
    # -- import ----------------------------------------------------------------------------------------
    _f("dedup-across-projects", "dedup compares against the rows of every project, not the resolved project's "
       "(or the unscoped rows only)", "dedup-scope-project", "dedup-scope-null",
       overrides={"dedup_scope": "tenant"}),
    # found by the blind red team (round 13), who saw it blamed on whatever check reused a text
    _f("dedup-across-tenants", "the dedup index is not keyed by tenant: an item whose text another tenant holds "
       "in the same project (or unscoped) is counted a duplicate and not written", "dedup-scope-tenant",
       wraps={"_is_duplicate": faulty.dedup_across_tenants}),
    _f("category-ignored", "category is not used as the fallback project",
       "category-fallback-project",
       wraps={"_project": faulty.category_ignored}),
    _f("archived-not-skipped", "items whose top-level status is archived/expired are imported although include_archived=false",
       "archived-skipped", "dedup-exact", "import-buckets", "preview-unscoped-counter",
       wraps={"_walk": faulty.archived_not_skipped}),
    _f("keeps-source-ids", "imported chunks keep the document's chunk_id instead of a fresh one",
       "fresh-chunk-id",
       wraps={"_target_id": faulty.keeps_source_ids}),
    _f("dangling-edges", "a supersedes edge whose other side is not in the document keeps the source-side id",
       "orphan-edge-dropped",
       wraps={"_replay_edges": faulty.dangling_edges}),
    _f("drops-supersession", "supersedes edges are never replayed (no supersedes / superseded_by after import)",
       "supersedes-replayed", "superseded-by-derived",
       wraps={"_replay_edges": faulty.drops_supersession}),
    # found by the blind red team (round 7): the document order memd's own export writes is not the only one
    _f("replay-forward-edges-lost", "supersedes edges are replayed in one pass: an edge naming an item later in the "
       "document is lost (an edge to an earlier item is replayed)", "supersedes-replayed", "superseded-by-derived",
       wraps={"_replay_edges": faulty.replays_in_one_pass}),
    # -- preview ---------------------------------------------------------------------------------------
    _f("preview-writes", "preview (--dry-run true) writes the items like an import",
       "preview-matches-import", "preview-no-write",
       wraps={"preview": faulty.preview_writes}),
    # Shows where the previewed document holds duplicates (of stored rows or of its own items).
    _f("preview-miscounts", "preview skips the dedup lookup: duplicates are counted as to_import",
       "preview-matches-import", "preview-unscoped-counter",
       wraps={"_is_duplicate": faulty.preview_miscounts}),
    # -- calibrated one by one against the checks (issue 5) -----------------------------------------
    _f("missing-v-trusted", "a memd item without extensions.memd.v is trusted as if v were 1", "trust-gate",
       wraps={"_ext_trusted": faulty.missing_v_trusted}),
    _f("restamps-lifecycle", "a trusted lifecycle_updated_at_ms is replaced by the import time", "lifecycle-honoured",
       wraps={"_lifecycle": faulty.restamps_lifecycle}),
    _f("category-first", "category wins over extensions.memd.project_id when both are given", "project-resolution",
       wraps={"_project": faulty.category_first}),
    _f("superseded-always-exported", "include_superseded=false still exports status=superseded rows",
       "export-include-superseded",
       wraps={"_eligible": faulty.superseded_always_exported}),
    _f("expired-status-exported", "include_expired=false still exports status=expired rows (lazy expiry kept)",
       "export-include-expired",
       wraps={"_eligible": faulty.expired_status_exported}),
    _f("export-by-content", "export lists rows sorted by content, not in creation order", "export-order",
       wraps={"_rows": faulty.export_by_content}),
    _f("project-filter-ignored", "export ignores project_id and lists every project's rows", "export-project-filter",
       wraps={"export": faulty.project_filter_ignored}),
    _f("fuzzy-ignored", "fuzzy_threshold is accepted but ignored: only exact duplicates are found", "dedup-fuzzy",
       wraps={"_walk": faulty.fuzzy_ignored}),
    # found by the blind red team (round 24)
    _f("export-project-prefix", "export's project filter matches by prefix: --project-id p1 also exports p10's "
       "rows", "export-project-filter", wraps={"_rows": faulty.export_project_prefix}),
    _f("untrusted-edges-replayed", "pass 2 reads supersedes from the raw extension, so an untrusted item's edge "
       "is replayed onto fresh rows", "untrusted-defaults", wraps={"resolve_item": faulty.untrusted_edges_replayed}),
    _f("supersede-chain-clobber", "atomic_supersede clears the older row's own supersedes when it writes its "
       "superseded_by: the middle of a chain A <- B <- C loses its edge to A", "supersedes-replayed",
       wraps={"_replay_edges": faulty.supersede_chain_clobber}),
    _f("fuzzy-skips-exact-short", "with fuzzy_threshold only similarity decides: a text too short for a trigram "
       "is never a duplicate, even of its exact copy", "dedup-fuzzy", wraps={"_is_duplicate": faulty.fuzzy_skips_exact_short}),
    _f("fuzzy-overlap-coefficient", "fuzzy dedup measures |A∩B| / min(|A|, |B|), not Jaccard: a short text whose "
       "trigrams all occur in a long stored one counts as its duplicate", "dedup-fuzzy",
       wraps={"_is_duplicate": faulty.fuzzy_overlap_coefficient}),
    # the gate's v is each item's own
    _f("v-of-first-item", "the trust gate reads extensions.memd.v of a document's first item only and applies "
       "it to every item: an item of v 2 after one of v 1 is trusted", "memd-v-gated", "lifecycle-honoured",
       wraps={"resolve_item": faulty.v_of_first_item}),
    _f("tags-lowercased", "imported tags are stored lower-cased, not verbatim", "tags-verbatim",
       wraps={"resolve_item": faulty.tags_lowercased}),
    # found by the blind red team (round 13): "verbatim" is the array, its order and repeats too
    _f("tags-sorted-unique", "imported tags are stored as a set: repeats dropped, read back sorted", "tags-verbatim",
       wraps={"resolve_item": faulty.tags_sorted_unique}),
    _f("unknown-type-other", "an unknown or missing chunk_type imports as other, not doc", "chunk-type-import",
       overrides={"unknown_chunk_type": "other"}),
    _f("unknown-mode-conversation", "an unknown or missing ingestion_mode imports as conversation, not document",
       "ingestion-mode-import",
       overrides={"import_ingestion_mode": "conversation"}),
    _f("untrusted-drops-fields", "an untrusted item loses its extensions.memd project_id, chunk_type and "
       "ingestion_mode (defaults instead)", "untrusted-fields-flow",
       wraps={"resolve_item": faulty.untrusted_drops_fields}),
    _f("memories-optional", "a document without a memories member imports as an empty one", "memories-required",
       wraps={"validate_envelope": faulty.memories_optional}),
    _f("exports-version-1", "export writes \"omf\": \"1\" instead of \"1.0\"", "omf-version", "self-roundtrip",
       wraps={"_envelope": faulty.exports_version_1}),
    _f("exports-v-string", "export writes extensions.memd.v as the string \"1\"", "memd-v", "self-roundtrip",
       wraps={"_export_item": faulty.exports_v_string}),
    # Only the exporter's duty ("Emitted: yes") breaks: an import reads a member left out as null
    # ("Missing fields and explicit nulls are equivalent to 'unset'"), so no import check may blame it
    # (found by the blind red team: the trust gate, defaults and orphan edges were blamed).
    _f("exports-sparse-lifecycle", "export leaves out every lifecycle member that is null (supersedes, superseded_by, "
       "expires_at_ms, review_after_ms) instead of emitting null", "memd-lifecycle",
       wraps={"_export_item": faulty.exports_sparse_lifecycle}),
    _f("refuses-null-lifecycle", "a trusted lifecycle field given as explicit null fails validation",
       "exported-at-not-interpreted", "lifecycle-null-unset",
       wraps={"_lifecycle": faulty.refuses_null_lifecycle}),
    _f("preview-no-by-project", "preview answers without the by_project member", "preview-fields",
       wraps={"preview": faulty.preview_no_by_project}),
    _f("refuses-empty-memories", "a document whose memories array is empty fails validation", "memories-empty-valid",
       wraps={"validate_envelope": faulty.refuses_empty_memories}),
    _f("status-sets-lifecycle", "an untrusted item's top-level status (when a lifecycle status) sets its lifecycle "
       "status", "status-informational",
       wraps={"resolve_item": faulty.status_sets_lifecycle}),
    _f("dates-set-expiry", "an untrusted item's top-level expires_at sets its lifecycle expires_at_ms",
       "dates-informational", "nanomem-compatible",
       wraps={"resolve_item": faulty.dates_set_expiry}),
    # A strict parser refuses the item instead (found by the blind red team: such a refusal was a skip).
    _f("refuses-unknown-chunk-type", "an item whose extensions.memd.chunk_type is not in the vocabulary fails "
       "validation instead of defaulting to doc", "chunk-type-import",
       wraps={"resolve_item": faulty.refuses_unknown_chunk_type}),
    _f("refuses-unknown-ingestion-mode", "an item whose extensions.memd.ingestion_mode is not in the vocabulary fails "
       "validation instead of falling back to the import default", "ingestion-mode-import",
       wraps={"resolve_item": faulty.refuses_unknown_ingestion_mode}),
    _f("exports-type-uppercase", "export writes extensions.memd.chunk_type upper-case",
       "chunk-type-import", "memd-chunk-type", "untrusted-fields-flow",
       wraps={"_export_item": faulty.exports_type_uppercase}),
    _f("exports-mode-uppercase", "export writes extensions.memd.ingestion_mode upper-case",
       "ingestion-mode-import", "memd-ingestion-mode", "untrusted-fields-flow",
       wraps={"_export_item": faulty.exports_mode_uppercase}),
    _f("exports-tier-hyphen", "export writes lifecycle.tier long_term as long-term",
       "foreign-extensions-ignored", "lifecycle-tier-vocabulary", "memd-v-gated", "self-roundtrip",
       "source-optional", "trust-gate", "untrusted-defaults", "untrusted-lifecycle-not-parsed",
       wraps={"_export_item": faulty.exports_tier_hyphen}),
    _f("exports-ms-strings", "export writes lifecycle *_ms as decimal strings",
       "lifecycle-field-types", "lifecycle-honoured", "self-roundtrip",
       wraps={"_export_item": faulty.exports_ms_strings}),
    _f("exports-sparse-project", "export leaves extensions.memd.project_id out when it is null",
       "memd-project-id",
       wraps={"_export_item": faulty.exports_sparse_project}),
    _f("expiry-drops-future", "include_expired=false also drops rows whose expires_at_ms is still in the future",
       "export-every-eligible",
       wraps={"_eligible": faulty.expiry_drops_future}),
    _f("exports-status-active", "export writes lifecycle.status final as active",
       "foreign-extensions-ignored", "lifecycle-status-vocabulary", "memd-v-gated", "self-roundtrip",
       "source-optional", "status-informational", "trust-gate", "untrusted-defaults",
       "untrusted-lifecycle-not-parsed",
       wraps={"_export_item": faulty.exports_status_active}),
    _f("exports-no-chunk-id", "export leaves extensions.memd.chunk_id out",
       "memd-chunk-id", "superseded-by-derived", "supersedes-replayed",
       wraps={"_export_item": faulty.exports_no_chunk_id}),
    _f("exports-null-category", "export writes category: null for an item without one", "item-field-types",
       wraps={"_export_item": faulty.exports_null_category}),
    _f("exports-tier-top-level", "export also writes the lifecycle tier as a top-level item member (memd-specific "
       "data outside extensions.memd)", "memd-namespace",
       wraps={"_export_item": faulty.exports_tier_top_level}),
    # -- seen only by a round trip between two implementations (suite/interop/omf.py) -----------------
    # The single-target checks build their documents older side first, without top-level dates on
    # trusted items and with short contents, and their self round trip compares tags, project,
    # status and tier only: these faults pass them all.
    _f("import-one-pass-edges", "supersedes edges are resolved while the items are written (one pass): an edge "
       "whose older side comes later in the document is dropped as if it pointed outside",
       "supersedes-replayed", "superseded-by-derived", interop_only=True,
       wraps={"_land": faulty.import_one_pass_edges}),
    _f("import-dates-override-lifecycle", "a trusted item's top-level updated_at / expires_at (seconds) replace "
       "its lifecycle_updated_at_ms / expires_at_ms (milliseconds)", "lifecycle-honoured", interop_only=True,
       wraps={"resolve_item": faulty.import_dates_override_lifecycle}),
    _f("export-truncates-content", "export cuts content to its first 256 characters", "content-required",
       interop_only=True,
       wraps={"_export_item": faulty.export_truncates_content}),
    # -- seen only by a longer sequence of operations (issue 16: omf/stateful/import-export) ---------
    # Each shows under a condition the scripted checks do not reach (a chain of three, more than 25
    # rows, an archived duplicate previewed, a long text re-imported, projects differing in case);
    # tests/harness/test_stateful_faults_upp_omf.py proves the machine finds it within the default effort.
    _f("replay-skips-chained", "supersession replay skips an edge whose older side already supersedes another "
       "row: in a chain a <- b <- c, c's supersedes is lost (chains of two are right)", "supersedes-replayed",
       stateful=True, wraps={"_replay_edges": faulty.replay_skips_chained}),
    _f("export-page-seam", "export reads rows in pages of 25 and the second page starts one row late: a tenant's "
       "26th row is never exported", "export-every-eligible", stateful=True,
       wraps={"_rows": faulty.export_page_seam}),
    _f("preview-other-bucket-order", "preview applies dedup and the include_archived filter in the other order "
       "than the import: an archived duplicate is counted in another bucket by the preview",
       "preview-matches-import", stateful=True,
       wraps={"preview": faulty.preview_other_bucket_order}),
    _f("long-text-never-duplicate", "dedup looks texts up through a 1,000-character prefix index: a longer text "
       "never matches, so importing it again writes it again", "dedup-exact", stateful=True,
       wraps={"_is_duplicate": faulty.long_text_never_duplicate}),
    _f("project-scope-ignores-case", "the dedup scope compares project ids without case: a text held in project "
       "\"alpha\" is a false duplicate in \"Alpha\"", "dedup-scope-project", stateful=True,
       wraps={"_is_duplicate": faulty.project_scope_ignores_case}),
    _f("fuzzy-on-raw-text", "fuzzy dedup takes the incoming item's trigrams from its content as written, the "
       "stored rows' from their canonical form: a near copy that also differs in case or spacing is never a "
       "duplicate", "dedup-fuzzy", stateful=True,
       wraps={"_is_duplicate": faulty.fuzzy_on_raw_text}),
    _f("lazy-expiry-final-only", "lazy expiry applies to final chunks only: a draft or superseded row whose "
       "expires_at_ms has passed is still exported with include_expired=false", "export-lazy-expiry",
       stateful=True, wraps={"_eligible": faulty.lazy_expiry_final_only}),
)
