"""OMF 1.0's vocabularies and defaults: plain constants, shared by the judge (model.py) and the
reference engine, kept apart from the validators so a CLI that only needs these starts without
importing jsonschema (whose format checks take over a second to load)."""

VERSION = "1.0"
MEMD_EXT_VERSION = 1
STATUSES = ("final", "superseded", "expired", "draft", "error", "deleted")
TIERS = ("working", "long_term", "history")
CHUNK_TYPES = ("code", "doc", "trace", "decision", "plan", "research", "message", "summary", "other")
INGESTION_MODES = ("conversation", "document")
LIFECYCLE_FIELDS = ("status", "tier", "supersedes", "superseded_by", "expires_at_ms", "review_after_ms",
                    "lifecycle_updated_at_ms")
MS_FIELDS = ("expires_at_ms", "review_after_ms", "lifecycle_updated_at_ms")
STANDARD_ITEM_FIELDS = ("content", "category", "tags", "status", "created_at", "updated_at", "expires_at",
                        "extensions")
#: Where an untrusted item lands (Trust gate: "status=Final, tier=LongTerm, no expiry, no review").
DEFAULT_LIFECYCLE = {"status": "final", "tier": "long_term", "expires_at_ms": None, "review_after_ms": None}
DEFAULT_CHUNK_TYPE = "doc"
DEFAULT_INGESTION_MODE = "document"
#: The producer a checks' trusted document names, and the one an untrusted document names.
TRUSTED_APP = "memd"
UNTRUSTED_APP = "mcf-third-party"
