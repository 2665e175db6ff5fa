"""OMF variants of the reference implementation: each one legitimate choice the OMF text leaves
open, made the other way (reference_impl/variants.py; decision points in policy.py). The suite must
pass every one (tests/harness/test_variants.py); docs/catalogue-omf.md documents each beside the
requirement whose reading it pins."""

from __future__ import annotations

from memconform.reference_impl.variants import Variant


def _v(name: str, description: str, readings: tuple[str, ...], **overrides: object) -> Variant:
    return Variant(f"omf-{name}", "omf", description, tuple(f"omf/{r}" for r in readings), overrides, since="1.0")


OMF_VARIANTS: tuple[Variant, ...] = (
    _v("lifecycle-error-keeps-earlier", "an import writes item by item: a malformed trusted lifecycle fails it "
       "with a validation error, keeping the items written before the bad one",
       ("fail-closed-string", "fail-closed-vocabulary", "fail-closed-ms", "fail-closed-object"),
       lifecycle_error_keeps_earlier=True),
    _v("dedup-stored-rows-only", "dedup compares against the rows stored before the import only: the same "
       "text twice in one document lands twice", ("dedup-exact", "import-buckets"), dedup_within_document=False),
    _v("preview-stored-rows-only", "the preview, writing nothing, looks duplicates up among the stored rows only: "
       "an item repeating an earlier item of the same document is counted to_import, where the import counts it "
       "a duplicate (two blind red teams' reading of \"walks the same … path … but never writes\")",
       ("preview-matches-import",), preview_dedup_within_document=False),
    _v("canonical-verbatim", "the dedup canonical form is the text as given (no case or whitespace folding)",
       ("dedup-exact",), canonical_form="verbatim"),
    _v("canonical-trimmed", "the dedup canonical form is the text without leading and trailing white space "
       "(no case folding, inner spacing kept)", ("dedup-exact",), canonical_form="trimmed"),
    _v("word-trigrams", "fuzzy dedup uses pg_trgm-style trigrams (each word padded) instead of character "
       "trigrams of the whole text", ("dedup-fuzzy",), trigrams="words"),
    _v("fuzzy-strict-threshold", "a near-copy is a duplicate only when its similarity exceeds fuzzy_threshold, "
       "not when it equals it", ("dedup-fuzzy",), fuzzy_strict=True),
    _v("supersede-marks-status", "pass 2's atomic_supersede marks the older row superseded besides writing the "
       "two pointers", ("supersedes-replayed", "lifecycle-honoured"), supersede_marks_status=True),
    _v("edges-to-duplicates", "an edge to an item deduplicated away lands on the stored row that item matched "
       "(its source chunk_id maps to that row)", ("supersedes-replayed",), edges_to_duplicates=True),
    _v("dedup-before-filter", "an archived item that duplicates a stored row is counted a duplicate, not "
       "skipped (dedup before the include_archived filter)", ("import-buckets", "archived-skipped"),
       filter_before_dedup=False),
    _v("null-project-unscoped", "an explicit extensions.memd.project_id null means no project: category is "
       "the fallback only when the member is absent", ("project-resolution", "category-fallback-project"),
       null_project_falls_back=False),
    _v("vocab-case-sensitive", "chunk_type and ingestion_mode are matched exactly (\"Code\" is unknown, so doc)",
       ("chunk-type-import", "ingestion-mode-import"), vocab_case_insensitive=False),
    _v("v-typed", "a non-integer extensions.memd.v (\"1\") refuses the document as mistyped instead of being "
       "untrusted", ("memd-v-gated",), ext_v_typed=True),
    _v("export-open-item", "export adds a top-level member of another convention (importance) beside the "
       "standard fields", ("memd-namespace",), extra_item_members=(("importance", 0.5),)),
    _v("hint-status-only", "export hints top-level status \"expired\" only for status=expired chunks, not "
       "for final chunks whose expires_at_ms has passed", ("export-status-hint",), expired_hint_for_lapsed=False),
    _v("export-category-from-project", "export writes a scoped chunk's project as its category when it has none, "
       "so a nanomem consumer routing by category files it in the same project",
       ("nanomem-compatible", "project-resolution"), category_from_project=True),
    _v("export-no-empty-tags", "export leaves the tags member out for a chunk without tags",
       ("item-field-types", "tags-verbatim"), export_empty_tags=False),
    _v("export-no-dates", "export leaves out the informational top-level created_at / updated_at / expires_at",
       ("item-field-types", "dates-informational"), export_dates=False),
    _v("created-whole-seconds", "timestamp_created is kept in whole seconds: rows written within one second tie "
       "and export in descending chunk_id order, not the order written", ("export-order",), created_resolution_ms=1000),
)
