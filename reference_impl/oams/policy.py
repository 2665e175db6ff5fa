"""The OAMS reference implementation's decision points: where OAMS 0.1 leaves a choice open, the
reference reads it one way (the defaults) and a variant (`variants.py`) the other way. The engine
reads `self.policy.<point>` where the choice is made; it never asks a fault's or a variant's name.

`configure` is how an engine gets its policy and its fault's wraps, through the mechanism every spec's
reference shares (reference_impl/faults.py `deviate`, `install_wraps`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OamsPolicy:
    #: oams/forget-gone, oams/soft-deleted-hidden: hard delete ("hard"); §3 allows soft delete, the
    #: row kept but hidden from RECALL and LIST ("soft").
    forget_mode: str = "hard"
    #: oams/error-codes: FORGET of a pair never stored is refused with -32002 ("error"); a delete that
    #: is idempotent and answers success is as faithful to "Returns 204 No Content on success" ("ok").
    forget_unknown: str = "error"
    #: oams/list-paging: the page envelope is unnamed; the reference answers
    #: {"memories": [...], "next_cursor": c|null} ("memories"), another {"items": [...], "cursor": c} ("items").
    list_envelope: str = "memories"
    #: oams/list-endpoint, oams/list-paging: §3 fixes no page size; the reference answers up to `limit`
    #: (default 50, at most 500) per page (None); a server may cap every page lower and give a cursor
    #: for the rest (2: a LIST without a limit, or with a larger one, answers two at a time).
    list_page_cap: int | None = None
    #: oams/list-paging (REST): §3 names the request's `cursor=` and no answer member; the reference
    #: answers the page envelope with its cursor ("body"); a REST server may answer a bare array and
    #: give the next page's URL in an RFC 8288 `Link: <…?cursor=…>; rel="next"` header ("link").
    rest_list_paging: str = "body"
    #: oams/recall-ordered-array: "an ordered array": a bare array ("array") or {"memories": [...]} ("object").
    recall_envelope: str = "array"
    #: oams/store-idempotent: repeating an identical STORE leaves updated_at (False) or moves it, a
    #: write being a write (True).
    repeat_store_touches: bool = False
    #: oams/error-codes (A17): LIST/RECALL of a namespace never written answers empty ("empty") or -32001 ("error";
    #: "error-first": before a RECALL's other parameters are judged).
    unknown_namespace: str = "empty"
    #: oams/timestamps-utc: server-assigned times as "…T12:00:00.123456Z" ("Z") or "…T12:00:00+00:00" ("offset").
    time_style: str = "Z"
    #: oams/forget-endpoint: oams.forget's JSON-RPC result: null (None) or {"deleted": true} ("object").
    rpc_forget_result: str | None = None
    #: "none": a batch (a JSON array) is answered with one -32600 object (variant oams-no-batches)
    rpc_batches: str = "take"
    #: oams/bundle-layout: embeddings.bin is OPTIONAL: left out (False) or written for lines with vectors (True).
    export_embeddings_bin: bool = False
    #: oams/store-returns-stored: RECALL and LIST answer a memory's embedding and embedding_model ("kept") or
    #: leave them out ("omitted"): §2 "Producers MAY omit" the vector, consumers re-embed.
    read_embeddings: str = "kept"
    #: oams/error-codes over JSON-RPC: a malformed parameter of RECALL, LIST or BATCH_STORE (query, k, tags,
    #: since, until, limit, cursor, memories) answers -32003 (None) or JSON-RPC's own -32602 (-32602).
    rpc_params_code: int | None = None
    #: oams/embeddings-bin-layout: "bare" (the vectors one after another, in line order) or "keyed" (each
    #: vector after its line's offset and dimension, uint32 LE each): §7 fixes no layout, only "packed
    #: float32 vectors keyed by line offset".
    embeddings_bin_layout: str = "bare"
    #: §3 "Tags are case-sensitive; implementations SHOULD lowercase on ingest" (True).
    lowercase_tags: bool = True
    #: oams/store-returns-stored: tags kept in the order sent ("given"); §2 calls them "free-form labels for
    #: filtering" and fixes no order, so a server may keep them as a set and answer them sorted ("sorted").
    tags_order: str = "given"
    #: oams/store-returns-stored: an embedding kept as the JSON numbers sent ("float64"); §2 types it "array of
    #: float32", so a server may store float32 and answer each value at float32 precision ("float32").
    embedding_precision: str = "float64"
    #: oams/store-returns-stored: a null parent_id answered as null ("null"); §2's "optional, string | null"
    #: tells null from absent nowhere, so a server may leave a null parent_id out of its answers ("omit").
    null_parent_id: str = "null"
    #: oams/invalid-memory-refused: a created_at/updated_at with a non-zero offset is refused (-32003,
    #: "refuse"); §2 asks "RFC 3339 timestamp, UTC" and defines validity by presence, so a server may
    #: instead store the same instant in UTC ("normalize").
    offset_times: str = "refuse"
    #: oams/invalid-memory-refused: a STORE whose memory has no key (JSON-RPC: the key is the memory's)
    #: is refused -32003 ("refuse"), or given a key of the server's own ("assign": §2, "Implementations
    #: MAY use ULID, UUIDv7, content-hash, or a human-readable slug"; a blind red team's server, round 18).
    missing_key: str = "refuse"


def configure(implementation: Any, fault: Any, variants: Iterable[str], part: str | None = None) -> OamsPolicy:
    """The policy for `variants` and `fault` (a fault's name, or the Fault), with the fault's wraps of
    `part` installed on `implementation` (None: the plain keys, on the engine itself): the shared
    mechanism of reference_impl/faults.py, as every spec's reference uses it."""
    from memconform.reference_impl.faults import deviate, install_wraps

    name = fault if isinstance(fault, str) or fault is None else fault.name
    install_wraps(implementation, "oams", name, part)
    return deviate(OamsPolicy(), "oams", name, tuple(variants))
