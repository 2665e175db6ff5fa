"""OAMS variants of the reference implementation: each one legitimate choice the OAMS 0.1 text
leaves open, made the other way (reference_impl/variants.py; decision points in policy.py). The
suite must pass every one (tests/oams/test_checks_reference.py); docs/catalogue-oams.md says why
the text allows both readings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memconform.reference_impl.variants import Variant


def _v(name: str, description: str, readings: tuple[str, ...], bindings: tuple[str, ...] | None = None,
       **overrides: object) -> Variant:
    return Variant(f"oams-{name}", "oams", description, tuple(f"oams/{r}" for r in readings), overrides,
                   since="0.1", bindings=bindings)


OAMS_VARIANTS: tuple[Variant, ...] = (
    _v("forget-soft", "FORGET soft-deletes: the row is kept, hidden from RECALL and LIST (§3 allows it)",
       ("forget-gone", "soft-deleted-hidden"), forget_mode="soft"),
    _v("forget-unknown-ok", "FORGET of a pair never stored answers success (an idempotent delete) instead of -32002",
       ("error-codes", "forget-204"), forget_unknown="ok"),
    _v("list-items-envelope", "LIST answers {\"items\": [...], \"cursor\": c} instead of {\"memories\": [...], "
       "\"next_cursor\": c}", ("list-paging", "list-endpoint"), list_envelope="items"),
    _v("list-short-pages", "LIST answers at most two memories a page, whatever the limit, with a cursor for the rest",
       ("list-endpoint", "list-paging", "list-filters"), list_page_cap=2),
    _v("list-link-header", "REST LIST answers a bare array, the next page's URL in a Link rel=\"next\" header",
       ("list-paging", "list-endpoint"), bindings=("http",), rest_list_paging="link"),
    _v("recall-object-envelope", "RECALL answers {\"memories\": [...]} instead of a bare array",
       ("recall-ordered-array",), recall_envelope="object"),
    _v("repeat-store-touches", "an identical repeated STORE moves updated_at (a write is a write)",
       ("store-idempotent",), repeat_store_touches=True),
    _v("unknown-namespace-error", "LIST and RECALL of a namespace never written answer -32001 instead of an empty "
       "result", ("error-codes", "recall-single-namespace"), unknown_namespace="error"),
    _v("unknown-namespace-error-first", "LIST and RECALL of a namespace never written answer -32001, and a RECALL "
       "names its unknown namespace before it judges its other parameters (§3 orders no two errors; round 18)",
       ("error-codes", "recall-single-namespace"), unknown_namespace="error-first"),
    _v("assigns-missing-key", "a STORE whose memory has no key is stored under a key the server mints (§2 leaves "
       "key forms to the implementation) instead of refused -32003", ("invalid-memory-refused",),
       bindings=("jsonrpc", "stdio"), missing_key="assign"),
    _v("times-offset", "server-assigned times written as ...+00:00 instead of ...Z", ("timestamps-utc",),
       time_style="offset"),
    _v("no-batches", "a JSON-RPC batch (an array) is answered with one -32600 Invalid Request object: OAMS names "
       "single requests only, and JSON-RPC 2.0 §6 answers a batch with a lowercase \"should\"", ("jsonrpc-batch",),
       bindings=("jsonrpc", "stdio"), rpc_batches="none"),
    _v("rpc-forget-object", "oams.forget's JSON-RPC result is {\"deleted\": true} instead of null",
       ("forget-endpoint",), bindings=("jsonrpc", "stdio"), rpc_forget_result="object"),
    _v("tags-sorted", "tags are kept as a set and answered sorted, not in the order sent", ("store-returns-stored",
       "tags-lowercase"), bindings=("http", "jsonrpc", "stdio"), tags_order="sorted"),
    _v("embedding-float32", "embeddings are stored as float32, as §2 types them, and answered at float32 precision "
       "(0.0123 comes back 0.012299999594688416)", ("store-returns-stored",), bindings=("http", "jsonrpc", "stdio"),
       embedding_precision="float32"),
    _v("null-parent-omitted", "a null parent_id is left out of the answers (§2: optional, string | null)",
       ("store-returns-stored",), bindings=("http", "jsonrpc", "stdio"), null_parent_id="omit"),
    _v("times-normalized", "a created_at/updated_at with a non-zero offset is stored as the same instant in UTC "
       "instead of refused, and a RECALL/LIST since or until with an offset is taken as its instant",
       ("invalid-memory-refused", "recall-filters"), bindings=("http", "jsonrpc", "stdio"), offset_times="normalize"),
    _v("rpc-invalid-params", "over JSON-RPC a malformed parameter (query, k, tags, since, until, limit, cursor, "
       "memories) is refused with JSON-RPC's own -32602 Invalid params instead of -32003", ("error-codes",),
       bindings=("jsonrpc", "stdio"), rpc_params_code=-32602),
    _v("read-omits-embeddings", "RECALL and LIST leave a memory's embedding and embedding_model out (STORE's answer "
       "and the export keep them): §2 \"Producers MAY omit\" the vector", ("store-returns-stored",),
       read_embeddings="omitted"),
    _v("export-embeddings-bin", "the export bundle carries the OPTIONAL embeddings.bin", ("bundle-layout",),
       bindings=("file",), export_embeddings_bin=True),
    _v("export-embeddings-bin-keyed", "the export bundle's embeddings.bin keys each vector by its line: line offset "
       "and dimension (uint32 LE) before the float32 values", ("bundle-layout", "embeddings-bin-layout"),
       bindings=("file",), export_embeddings_bin=True, embeddings_bin_layout="keyed"),
)


def apply(policy: Any, names: Iterable[str]) -> Any:
    """`policy` with the overrides of the named oams variants (reference_impl/variants.py's `apply`:
    other specs' variants passed over, an unknown name or one point set two ways refused)."""
    from memconform.reference_impl import variants

    return variants.apply(policy, "oams", names)
