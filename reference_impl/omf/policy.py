"""The OMF reference implementation's decision points: where the spec leaves a choice open, the
reference reads it one way (the defaults here) and a variant (`variants.py`) may read it the other
way (reference_impl/variants.py). A few points are values the text fixes (the last fields): no
variant moves them, and a fault (`faults.py`) that sets one breaks the requirement its comment
names. The engine reads `self.policy.<point>` where the choice is made."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OmfPolicy:
    """Each field is one open choice of the OMF text; its default is the reference reading, and its
    comment names the requirement and the other legitimate reading (the last group: the requirement
    and the value the text fixes)."""

    #: omf/fail-closed-*: a malformed trusted lifecycle is a ValidationError; the reference rolls the
    #: whole import back. Atomicity is not stated: an importer that writes item by item may keep the
    #: items it wrote before the bad one (True). Whole-document validation (validate_omf, JSON
    #: deserialization) still refuses everything either way.
    lifecycle_error_keeps_earlier: bool = False
    #: omf/dedup-exact: a duplicate "matched an existing row"; the reference counts rows written
    #: earlier in the same document as existing (True). The other reading dedups against the rows
    #: stored before this import only, so the same text twice in one document lands twice (False).
    dedup_within_document: bool = True
    #: omf/preview-matches-import: the preview "walks the same dedup + filter + trust-gate path as
    #: import_omf but never writes"; the reference's preview sees the document's earlier items as the
    #: import does (True). The other reading, that of two blind red teams (rounds 13 and 31): writing
    #: nothing, it looks duplicates up among the stored rows only, so an item repeating an earlier one
    #: of the document is counted to_import where the import counts it a duplicate (False).
    preview_dedup_within_document: bool = True
    #: omf/dedup-exact: the canonical form is not defined; the reference collapses whitespace and
    #: casefolds ("folded"); the text as given is canonical too ("verbatim"), and so is the text trimmed
    #: ("trimmed"; a blind red team's form).
    canonical_form: str = "folded"
    #: omf/dedup-fuzzy: "trigram Jaccard" without a trigram definition; the reference takes the
    #: character trigrams of the canonical text ("characters"); pg_trgm's padded per-word trigrams
    #: ("words") are another.
    trigrams: str = "characters"
    #: omf/import-buckets, omf/archived-skipped: an archived item that is also a duplicate fits two
    #: buckets; the reference filters first (skipped: True), the other order dedups first (False).
    filter_before_dedup: bool = True
    #: omf/project-resolution: "extensions.memd.project_id if present"; the reference reads an explicit
    #: null as absent, so category is the fallback (True); null as "present, no project" keeps the
    #: item unscoped whatever its category (False).
    null_project_falls_back: bool = True
    #: omf/chunk-type-import, omf/ingestion-mode-import: FromStr's case is not fixed; the reference
    #: trims and lowercases (True); an exact, case-sensitive match is as valid (False).
    vocab_case_insensitive: bool = True
    #: omf/memd-v-gated: "only 1 is trusted"; the reference reads any other v, a string "1" too, as
    #: untrusted (False); the table types v as an integer, so a typed reader may refuse a non-integer v
    #: as a malformed document, like any mistyped member (True).
    ext_v_typed: bool = False
    #: omf/memd-namespace: only memd-specific data must live under extensions.memd; the reference
    #: writes no other top-level member (()); an exporter may add members of another convention
    #: ((name, value) pairs) — the item object is not closed.
    extra_item_members: tuple[tuple[str, object], ...] = ()
    #: omf/dedup-fuzzy: whether a similarity equal to fuzzy_threshold is a duplicate is not said; the
    #: reference counts it (>=, False), a strict reader does not (>, True).
    fuzzy_strict: bool = False
    #: omf/nanomem-compatible: category is free-form; the reference exports a chunk's own category only
    #: (False); an exporter may write the project as category for a chunk without one, so a nanomem
    #: consumer routing by category files it where memd did (True).
    category_from_project: bool = False
    #: omf/item-field-types: tags are optional ("Required no"); the reference writes [] for a chunk
    #: without tags (True), an exporter may leave the member out (False).
    export_empty_tags: bool = True
    #: omf/export-status-hint: "expired" for "the corresponding chunk states"; the reference hints
    #: lazily expired rows too (True); hinting only status=expired rows is the other reading (False).
    expired_hint_for_lapsed: bool = True
    #: omf/item-field-types: created_at / updated_at / expires_at are optional ("Required no"); the
    #: reference writes them (True); an exporter may leave them out (False).
    export_dates: bool = True
    #: omf/export-order: "ascending timestamp_created order" without the timestamp's resolution; the
    #: reference's is finer than any two writes (None); a store keeping it in whole seconds, as SQLite's
    #: CURRENT_TIMESTAMP does (1000), ties rows written within a second, and lists ties by descending chunk_id.
    created_resolution_ms: int | None = None

    #: omf/supersedes-replayed, omf/lifecycle-honoured: the text names MetadataStore::atomic_supersede
    #: and the superseded_by pointer it writes, no more; the reference writes the two pointers and
    #: leaves the older row's parsed status (False); marking that row superseded is the other reading
    #: (True: a blind red team's).
    supersede_marks_status: bool = False
    #: omf/supersedes-replayed: pass 2's source → target map holds the items written in pass 1 (False);
    #: mapping a duplicate's source chunk_id to the row it matched (True), so an edge to an item
    #: deduplicated away lands on that row, is the other reading: the text drops an edge only "whose
    #: other side is NOT in the document".
    edges_to_duplicates: bool = False

    # -- fixed by the text: only a fault sets these another way ---------------------------------------
    #: omf/dedup-scope-project, omf/dedup-scope-null: "dedup compares against rows in that project
    #: only", and an unscoped item "against project_id IS NULL rows only" ("project"); any wider
    #: scope ("tenant": every row of the tenant) dedups falsely against other projects' rows.
    dedup_scope: str = "project"
    #: omf/chunk-type-import: chunk_type "Unknown → defaults to doc".
    unknown_chunk_type: str = "doc"
    #: omf/ingestion-mode-import: "unknown values fall back to the import default (document)".
    import_ingestion_mode: str = "document"
