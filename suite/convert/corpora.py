"""The documents the format round trips start from: one rich, valid, deterministic document per
format, each exercising every row of its format's part of the mapping table.

* UMP: the L0 export corpus (suite/ump/corpus.py): all five kinds, every optional block, relations
  and supersession, redaction in three path forms, a record that must not be exported, a signed
  record, hostile text, a 0.1 record.
* OMF: memd's shape (extensions.memd, full lifecycle, a supersession pair, a date-only created_at,
  a null project) beside a third-party item (no memd namespace, another namespace, a vendor member),
  a UMP-shaped chunk_id, and an extra envelope member.
* OAMS: memories in two namespaces of one owner and one of another, a key repeated across
  namespaces, a UMP-id key, tags, reserved and vendor metadata, an embedding, a consolidated memory
  (parent_id, dream metadata), null and string source_id, +00:00 and fractional timestamps, an
  unknown member, hostile text.
* memoturn: memories as GET shows them, in a recall answer's envelope (with its txid): all four types, a
  supersession pair (superseded_by / superseded_at / supersedes), a task with its expiry, a session, two
  sources and a null one, keywords, an instruction with an embedding and a recall hit's score and
  channels, content that is a string, nested content with floats and unicode, hostile text.
* UPP: a user/v1 package: a superseded singular label, plural labels, a staged event, validity
  windows (an offset, a null end), a label outside user/v1, a vendor member, hostile text, and an
  extra package member.
"""

from __future__ import annotations

from typing import Any

from memconform.suite.memoturn import model as memoturn
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


def oams_corpus() -> list[dict[str, Any]]:
    def mem(key: str, ns: str, value: str, created: str, **members: Any) -> dict[str, Any]:
        return {"key": key, "namespace": ns, "value": value, **members, "created_at": created,
                "updated_at": members.pop("updated_at", created) if "updated_at" in members else created}

    personal, project = "user-x123ab:personal", "user-x123ab:project-mithril"
    return [
        mem("01HXPREFS", personal, "Prefers **dark mode** and short answers.", "2026-04-01T09:00:00Z",
            tags=["preferences", "ui"], metadata={"value_type": "markdown", "confidence": 0.9, "language": "en",
                                                   "pii": False, "last_used_at": "2026-04-20T10:00:00Z"},
            source_id="slack:CH123:1700000000.123456", updated_at="2026-04-20T10:00:00.250Z"),
        mem("01HXPREFS", project, "In project Mithril the answers may be long.", "2026-04-02T09:00:00+00:00",
            tags=[], source_id=None),
        mem("fedramp-notes", project, "FedRAMP moderate needs 325 controls.", "2026-04-03T09:00:00.123456Z",
            embedding_model="text-embedding-3-small", embedding=[0.0123, -0.0456, 1, 0.5e-3],
            source_id="https://example.com/fedramp", metadata={"decay_score": 0.2, "vendor": {"rank": [1, 2]}}),
        mem("dream-0001", project, "Mithril's compliance work centres on FedRAMP moderate.", "2026-04-04T09:00:00Z",
            parent_id="user-x123ab:project-mithril/fedramp-notes", source_id="https://example.com/fedramp",
            metadata={"dream_strategy": "synthesize", "dream_run_id": "6f1c1a52-8d7e-4f3b-9a43-2b0c1d9e7f10",
                      "dream_inputs": [[project, "fedramp-notes"], [project, "01HXPREFS"]], "confidence": 1}),
        mem("urn:ump:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "org-acme:legal-archive",
            "Contract renewals go through legal.", "2026-04-05T09:00:00Z", tags=["legal"], x_vendor={"k": True}),
        mem("no-scope", "agent-research-bot", INJECTION_TEXT + " 日本語 ✓ 😀", "2026-04-06T09:00:00Z",
            metadata={}, parent_id=None),
    ]


def memoturn_corpus() -> dict[str, Any]:
    def mem(mtype: str, summary: str, content: Any, created: int, topic_key: str | None = None,
            **members: Any) -> dict[str, Any]:
        record = {"id": memoturn.memory_id(mtype, topic_key, content), "type": mtype, "topic_key": topic_key,
                  "summary": summary, "content": content, "keywords": None, "session_id": None, "source": None,
                  "created_at": created, "superseded_by": None, "superseded_at": None, "expires_at": None,
                  "supersedes": []}
        record.update(members)
        return record

    old = mem("fact", "vegetarian since 2024", {"diet": "vegetarian"}, _MS, "user.diet",
              keywords="food preference", source="claude-code")
    new = mem("fact", "vegan since 2026", {"diet": "vegan"}, _MS + 60_000, "user.diet",
              keywords="food preference", source="cursor", supersedes=[old["id"]])
    old.update(superseded_by=new["id"], superseded_at=_MS + 60_000)
    memories = [
        old, new,
        mem("event", "deployed v2 to prod", {"version": "v2"}, _MS + 120_000, session_id="s-417"),
        mem("task", "follow up on refund #88", {}, _MS + 180_123, session_id="s-417",
            expires_at=_MS + 180_123 + memoturn.TASK_TTL_DEFAULT * 1000),
        mem("instruction", "answer concisely, no emoji", {"tone": "concise", "emoji": False}, _MS + 240_000,
            "agent.tone", source="cursor", embedding=[0.25, -0.5, 1], score=0.9, channels=["topic"]),
        mem("event", INJECTION_TEXT + " 日本語 ✓ 😀", "a string is content too", _MS + 300_000),
        mem("fact", "Prefers dark mode", {"ui": {"theme": "dark", "contrast": 0.75, "langs": ["en", "é"],
                                                 "n": None}}, _MS + 360_000, keywords="ui theme"),
    ]
    return {"memories": memories, "txid": 43}


def default_corpora() -> dict[str, Any]:
    """format → a fresh copy of its rich document."""
    return {"ump": ump_corpus(), "omf": omf_corpus(), "upp": upp_corpus(), "oams": oams_corpus(),
            "memoturn": memoturn_corpus()}
