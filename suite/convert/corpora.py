"""The documents the format round trips start from: one rich, valid, deterministic document per
format, each exercising every row of its format's part of the mapping table.

* UMP: the L0 export corpus (suite/ump/corpus.py): all five kinds, every optional block, relations
  and supersession, redaction in three path forms, a record that must not be exported, a signed
  record, hostile text, a 0.1 record.
* OMF: memd's shape (extensions.memd, full lifecycle, a supersession pair, a date-only created_at,
  a null project) beside a third-party item (no memd namespace, another namespace, a vendor member),
  a UMP-shaped chunk_id, and an extra envelope member.
* UPP: a user/v1 package: a superseded singular label, plural labels, a staged event, validity
  windows (an offset, a null end), a label outside user/v1, a vendor member, hostile text, and an
  extra package member.

The other formats' corpora are their `Format.corpus` (suite/convert/formats.py), in their specs' folders.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.omf import model as omf
from memconform.suite.ump.corpus import INJECTION_TEXT, export_corpus

_MS = 1_776_500_000_000   # 2026-04-18, fixed: the corpus is the same bytes every run
_C = "018fa6a0-0000-7000-8000-0000000000{:02d}"


def ump_corpus() -> list[dict[str, Any]]:
    return list(export_corpus("1.0"))


def omf_corpus() -> dict[str, Any]:
    def lc(**fields: Any) -> dict[str, Any]:
        return {"lifecycle_updated_at_ms": _MS, **fields}

    items = [
        omf.item("The release train leaves every second Tuesday.", category="topic:release",
                 tags=["topic:release", "owner:alice"], status="final", chunk_id=_C.format(1), project="p1",
                 chunk_type="doc", ingestion_mode="document",
                 lifecycle=lc(tier="working", review_after_ms=_MS + 86_400_000),
                 created_at="2026-04-18T09:00:00Z", updated_at="2026-04-19", expires_at="2026-05-01"),
        omf.item("Staging deploys need a green canary.", status="superseded", chunk_id=_C.format(2), project="p1",
                 chunk_type="decision", lifecycle=lc(status="superseded", superseded_by=_C.format(3)),
                 created_at="2026-04-10T08:00:00Z"),
        omf.item("Staging deploys need a green canary and a second reviewer.", chunk_id=_C.format(3),
                 project="p1", chunk_type="decision", lifecycle=lc(supersedes=_C.format(2)),
                 created_at="2026-04-12T08:00:00Z"),
        omf.item("Old retro notes from the March incident.", status="archived", chunk_id=_C.format(4),
                 project=None, chunk_type="summary", ingestion_mode="conversation",
                 lifecycle=lc(tier="history", status="expired", expires_at_ms=_MS - 1),
                 created_at="2026-03-02", tags=[]),
        omf.item("Prefers dark mode and short answers.", tags=["what_preferences"], memd=False,
                 category="prefs", extensions={"nanomem": {"score": 0.7, "nested": {"a": [1, {"b": None}]}}},
                 x_vendor={"k": [1, 2, 3], "flag": True}),
        omf.item(INJECTION_TEXT + " 日本語 ✓ 😀", chunk_id="urn:ump:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                 lifecycle=lc(status="draft"), tags=["who_name", "topic:x"]),
    ]
    doc = omf.document(items, exported_at="2026-04-18T12:00:00Z")
    doc["generator"] = {"name": "memd", "version": "0.7.3"}
    return doc


def upp_corpus() -> dict[str, Any]:
    def ev(n: int, value: str, labels: list[str], **members: Any) -> dict[str, Any]:
        event = {"id": f"evt_{n:04d}-corpus", "entity_key": "user_alice", "value": value, "labels": labels,
                 "confidence": 0.9, "source_type": "user_stated", "status": "valid",
                 "created_at": f"2026-01-{10 + n:02d}T10:30:00Z", "superseded_by": None}
        event.update(members)
        return event

    events = [
        ev(1, "User's name is Alice Chen", ["who_name"], confidence=0.95, status="superseded",
           superseded_by="evt_0002-corpus", valid_from="2020-01-01T00:00:00Z", valid_until="2026-01-12T00:00:00Z"),
        ev(2, "User's name is Alice Chen-Rivera", ["who_name"], valid_from="2026-01-12T00:00:00Z"),
        ev(3, "User enjoys hiking and speaks Spanish", ["what_interests_hobbies", "who_languages"],
           confidence=0.85, source_type="agent_observed"),
        ev(4, "User might be learning Portuguese", ["who_languages"], confidence=0.3, source_type="inferred",
           status="staged"),
        ev(5, "User lives in São Paulo", ["where_home"], confidence=0.99, source_type="agent_observed",
           valid_from="2026-01-15T10:00:00+02:00", valid_until=None),
        ev(6, "User is on the platform team at Acme", ["who_role", "acme_team"], x_vendor_score=0.5),
        ev(7, INJECTION_TEXT, ["what_preferences"], confidence=1.0, source_type="inferred"),
    ]
    return {"entity_key": "user_alice", "ontology": "user/v1", "events": events,
            "exported_at": "2026-03-01T12:00:00Z", "x_generator": "upp-corpus"}


def default_corpora() -> dict[str, Any]:
    """format → a fresh copy of its rich document."""
    from memconform.suite.convert import formats

    return {name: fmt.corpus() for name, fmt in formats.registered().items()}
