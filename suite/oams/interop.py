"""OAMS round trip between two servers (§1: "a baseline OAMS-conforming export from one vendor MUST be
ingestible by any other OAMS-conforming vendor"): place memories in A, read A's export, write it
into B, read B's export, and name every field that did not survive.

The journey, each view on its own so a loss is charged where it happened:

1. **placing** — `PLAN` is written into A with BATCH_STORE (one STORE each when A refuses the batch),
   in a fresh namespace of the first owner;
2. A's LIST of that namespace ("Used for export and audit", §3), every page, is the view *export from A*;
3. those memories, as A answered them, are written into B with BATCH_STORE (what importing is over the
   wire); B's LIST is the view *import into B*.

Every view is compared with the plan, memory by memory (matched by key). Each field is charged once,
at the first view where it differs, to the requirement that promises it survives:

| field | export from A | import into B |
|---|---|---|
| the memory itself (`""`) | oams/list-paging | oams/export-ingestible |
| `/value`, `/namespace`, `/tags` (a case-folded set), `/metadata` (minus `score`), `/embedding_model`, `/embedding`, `/parent_id` | oams/store-returns-stored | oams/export-ingestible |
| `/created_at`, `/updated_at` (as instants) | oams/store-keeps-given-timestamps | oams/store-keeps-given-timestamps |
| `/source_id` | oams/export-keeps-source-id | oams/import-preserves-source-id |
| `/metadata/dream_strategy` = `vendor:<name>` | oams/vendor-strategy-passthrough | oams/vendor-strategy-passthrough |

Allowances: tags are a set and may be lowercased (§2's SHOULD), embeddings compare at float32
precision and may be left out with their model ("Producers MAY omit"), `metadata.score` may be
added, a null parent_id may be left out, members the plan does not hold are not compared. The
placed memories are forgotten on both sides afterwards.

The pairing module (suite/interop/pairing.py) calls `round_trip(source, destination, *, version,
source_label, destination_label)`.
"""

from __future__ import annotations

from typing import Any, NoReturn

from memconform.suite.interop.model import MISSING, Loss, RoundTrip, charge_once
from memconform.suite.jsonvalue import json_equal
from memconform.suite.oams import model
from memconform.suite.oams.client import OamsClient, fresh_namespace, list_every
from memconform.suite.outcomes import NotApplicable

SPEC = "oams"
_VENDOR_RUN = "7b1e3c2a-5d4f-4a6b-8c9d-0e1f2a3b4c5d"


def plan(namespace: str) -> list[dict[str, Any]]:
    """What is placed: the shapes §2 allows, provenance of §5's forms, a consolidation of §6."""
    t = "2026-04-{:02d}T{:02d}:00:00Z".format
    return [
        {"key": "plain", "namespace": namespace, "value": "A plain memory.", "created_at": t(20, 9),
         "updated_at": t(20, 9)},
        {"key": "tagged", "namespace": namespace, "value": "# Notes\n\n**Markdown** — ünïcödé ✓",
         "tags": ["research", "memory"], "metadata": {"value_type": "markdown", "confidence": 0.8, "language": "en",
                                                      "pii": False, "nested": {"a": [1, 2, None]}},
         "source_id": "https://example.com/article?a=1#frag", "created_at": t(21, 10), "updated_at": t(24, 8)},
        {"key": "embedded", "namespace": namespace, "value": "A memory with a vector.",
         "embedding_model": "text-embedding-3-small", "embedding": [0.0123, -0.0456, 0.5],
         "source_id": "sha256:" + "ab" * 32, "created_at": t(22, 11), "updated_at": t(22, 11)},
        {"key": "unresolvable", "namespace": namespace, "value": "Provenance nobody can resolve.",
         "source_id": "x-unknown:opaque/ü 1", "parent_id": None, "created_at": t(23, 12), "updated_at": t(23, 12)},
        {"key": "dreamed", "namespace": namespace, "value": "A consolidation of the others.", "parent_id": "tagged",
         "source_id": "https://example.com/article?a=1#frag",
         "metadata": {"dream_strategy": "vendor:acme-merge", "dream_inputs": [[namespace, "tagged"], [namespace, "plain"]],
                      "dream_run_id": _VENDOR_RUN},
         "created_at": t(25, 13), "updated_at": t(25, 13)},
    ]


def round_trip(source: OamsClient, destination: OamsClient, *, version: str, source_label: str,
               destination_label: str) -> RoundTrip:
    owner = getattr(source, "owners", ("mc-owner-a",))[0]
    namespace = fresh_namespace(owner, "interop")
    planned = plan(namespace)
    notes: list[str] = []
    invalid: set[Any] = set()
    try:
        _place(source, planned, source_label)
        exported = _listed(source, namespace, source_label)
        views = [(f"export from {source_label}", exported, "a")]
        invalid = {m.get("key") for m in exported if model.memory_problems(m)}
        if invalid:  # what A lost is charged to A; B is right to refuse what is no longer a memory
            notes.append(f"{source_label} exported {len(invalid)} memory(ies) that are not valid OAMS 0.1 "
                         f"({', '.join(sorted(map(str, invalid)))}): not offered to {destination_label}")
            exported = [m for m in exported if m.get("key") not in invalid]
        if exported:
            reply = destination.batch_store(exported)
            if not reply.ok:
                notes.append(f"{destination_label} refused the batch of {source_label}'s export "
                             f"({reply.describe()}); stored one by one")
                for m in exported:
                    one = destination.store(m)
                    if not one.ok:
                        notes.append(f"{destination_label} refused {m.get('key')!r}: {one.describe()}")
            views.append((f"import into {destination_label}", _listed(destination, namespace, destination_label), "b"))
    finally:
        for client in (source, destination):
            for m in planned:
                try:
                    client.forget(namespace, m["key"])
                except Exception:  # noqa: BLE001 — cleaning up is best effort
                    pass
    losses: list[Loss] = []
    charged: set[tuple[str, str]] = set()
    compared = 0
    for stage, items, side in views:
        by_key = {m.get("key"): m for m in items if isinstance(m, dict)}
        for p in planned:
            if side == "b" and p["key"] in invalid:
                continue
            got = by_key.get(p["key"])
            if got is None:
                rule = "oams/list-paging" if side == "a" else "oams/export-ingestible"
                charge_once(losses, charged, Loss(p["key"], "", rule, _brief(p), MISSING, stage))
                continue
            for field, rule_a, rule_b in FIELDS:
                if field not in p:
                    continue
                if field in ("embedding", "embedding_model") and "embedding" not in got:
                    note = (f"{stage}: {p['key']!r} comes without its vector (§2: \"Producers MAY omit\"; consumers "
                            "re-embed): embedding and embedding_model not compared")
                    if note not in notes:
                        notes.append(note)
                    continue
                want, have = p[field], got.get(field, MISSING)
                if not _same(field, want, have):
                    charge_once(losses, charged, Loss(p["key"], f"/{field}", _rule(field, want, side, rule_a, rule_b),
                                                      want, have, stage))
    if len(views) == 2:
        compared = len({m.get("key") for m in views[-1][1] if isinstance(m, dict)} & {p["key"] for p in planned})
    compared += len(invalid)  # compared (and charged) at A's export
    return RoundTrip(SPEC, version, source_label, destination_label, placed=len(planned), compared=compared,
                     losses=tuple(losses), notes=tuple(notes), extra={"namespace": namespace})


#: (field, requirement at A's export, requirement at B's import)
FIELDS = (
    ("value", "oams/store-returns-stored", "oams/export-ingestible"),
    ("namespace", "oams/store-returns-stored", "oams/export-ingestible"),
    ("tags", "oams/store-returns-stored", "oams/export-ingestible"),
    ("metadata", "oams/store-returns-stored", "oams/export-ingestible"),
    ("embedding_model", "oams/store-returns-stored", "oams/export-ingestible"),
    ("embedding", "oams/store-returns-stored", "oams/export-ingestible"),
    ("parent_id", "oams/store-returns-stored", "oams/export-ingestible"),
    ("created_at", "oams/store-keeps-given-timestamps", "oams/store-keeps-given-timestamps"),
    ("updated_at", "oams/store-keeps-given-timestamps", "oams/store-keeps-given-timestamps"),
    ("source_id", "oams/export-keeps-source-id", "oams/import-preserves-source-id"),
)


def _rule(field: str, want: Any, side: str, rule_a: str, rule_b: str) -> str:
    if field == "metadata" and str((want or {}).get("dream_strategy", "")).startswith("vendor:"):
        return "oams/vendor-strategy-passthrough"
    return rule_a if side == "a" else rule_b


def _same(field: str, want: Any, have: Any) -> bool:
    if have is MISSING:  # a null parent_id may be left out (§2 "optional, string | null"; variant
        return field == "parent_id" and want is None  # oams-null-parent-omitted), as the checks read it

    if field in ("created_at", "updated_at"):
        t = model.parse_time(have)
        return t is not None and t == model.parse_time(want)
    if field == "tags":  # a set of labels, case folded, as the conformance checks read them
        return model.same_tags(want, have)
    if field == "metadata" and isinstance(have, dict):
        return json_equal({k: v for k, v in have.items() if k != "score" or "score" in want}, want)
    if field == "embedding":
        return model.same_embedding(want, have)
    return json_equal(have, want)


def _place(client: OamsClient, planned: list[dict[str, Any]], label: str) -> None:
    reply = client.batch_store(planned)
    if reply.ok:
        return
    for m in planned:
        one = client.store(m)
        if not one.ok:
            raise NotApplicable(f"{label} does not take the memories a round trip places: {one.describe()}")


def _listed(client: OamsClient, namespace: str, label: str) -> list[Any]:
    def refused(reply: Any, how: str | None) -> NoReturn:
        if how is None:
            raise NotApplicable(f"{label} does not answer LIST of {namespace!r}: {reply.describe()}")
        raise NotApplicable(f"{label}'s LIST of {namespace!r} holds {how}")

    return list_every(client, namespace, refused)


def _brief(memory: dict[str, Any]) -> dict[str, Any]:
    return {k: memory[k] for k in ("key", "namespace", "value") if k in memory}
