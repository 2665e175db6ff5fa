"""The mapping table's rows between memoturn and the formats before it (UMP, OAMS, OMF, UPP), in both
directions: part of the one table (suite/convert/mapping.py) that docs/mapping.md renders and the
memoturn converters and their round trips are held to; `FORMAT.rows` brings them in."""

from __future__ import annotations

from memconform.suite.convert.mapping import (CONVERTER_SOURCE, EXPORTED_AT, INTEGRITY, NEW_UMP, REDACTED, SOURCE,
                                              UNEXPORTABLE, Pair, build_pair)
from memconform.suite.oams.convert.rows import OAMS_DEFAULTS

_MT_ENVELOPE = ("the envelope's members beside memories (a recall answer's txid) say where that store's log "
                "stood, not what a memory is: not carried")
_MT_DEFAULTS = ("type {what}, no topic_key (it names a supersession key no other format has); content "
                "{{\"x-extensions\": …}}: the record rides in the content, so the id is mem_ + SHA-256 of the type "
                "and that content (floats in it print as Python does: implementation-defined, memoturn/id-float-"
                "content); keywords, session_id and source null unless mapped or hinted; created_at from the "
                "record's time (else the conversion's); superseded_by, superseded_at null and supersedes [] unless "
                "hinted; expires_at only on a task (default 24 h after created_at)")


def _mt_notes(*, created: str, keywords: str, superseded_by: str = "", supersedes: str = "", superseded_at: str = "",
              expires_at: str = "", type: str = "", source: str = "", id: str = "") -> dict[str, str]:
    """The notes of a memoturn → X pair: every field a typed memory has that X has no place for."""
    notes = {"/id": id, "/created_at": "hints " + created,
             "/topic_key": "travels: a supersession key no other format has",
             "/embedding": "travels as it is: the vector is the source's embedding model's"}
    for field, hint in (("/keywords", keywords), ("/superseded_by", superseded_by), ("/supersedes", supersedes),
                        ("/superseded_at", superseded_at), ("/expires_at", expires_at), ("/type", type),
                        ("/source", source)):
        if hint:
            notes[field] = "hints " + hint
    notes["/content"] = "the memory's JSON payload travels as it is"
    return notes


def pairs() -> list[Pair]:
    return [
        build_pair("memoturn", "ump", mapped={
            "/summary": ("/body/text", ""),
            "/content": ("/body/structured/content", "body.structured is an object, the content any JSON: it is "
                                                     "the member \"content\" there"),
            "/session_id": ("/scope/session", "when a string (null travels in the extension)"),
            "/source": ("/scope/agent", "when a string: the agent that wrote the memory (null travels)"),
        }, lost={"document:/*": _MT_ENVELOPE}, notes=_mt_notes(
            created="time.created (Unix ms as RFC 3339 UTC)", keywords="",
            superseded_by="UMP superseded_by [the id that memory became]",
            supersedes="UMP supersedes (the ids those memories became)",
            superseded_at="time.valid_to (the end of the superseded memory's validity, UMP §2.3)",
            expires_at="consent.retention, the task's lifetime from created_at as an ISO 8601 duration (PTnS)",
            type="kind: fact → semantic, instruction → procedural, event → episodic, task → working",
            id="the record's id is derived from it (urn:ump: + base32 BLAKE3 of \"memoturn:\" + the mem_ id) and "
               "provenance.source.ref names it"),
            defaults=("kind from the type (see type); id urn:ump: + base32 BLAKE3 of \"memoturn:\" + the mem_ id; "
                      + NEW_UMP.format(who="\"unknown-owner\"", fmt="memoturn", src="mem_"),)),

        build_pair("ump", "memoturn", mapped={
            "/body/text": ("/summary", "when not blank (memoturn refuses a blank summary): a blank text travels in "
                                       "the extension and the summary says \"(no text)\""),
            "/scope/session": ("/session_id", ""),
            "/scope/agent": ("/source", "the agent that wrote the record: memoturn's provenance"),
        }, lost={
            "/integrity": INTEGRITY.format(what="a memoturn memory"),
            "@unexportable": UNEXPORTABLE.replace("OMF and UPP consumers", "memoturn stores"),
            "@redacted": REDACTED,
        }, notes={
            "/id": "the memory's id is content-addressed (mem_ + SHA-256 of type, topic_key and content, which "
                   "holds this extension): the UMP id travels",
            "/kind": "hints type: semantic and identity → fact, procedural → instruction, episodic → event, "
                     "working → task",
            "/time/created": "hints created_at (Unix ms)",
            "/time/valid_to": "hints superseded_at when the record is superseded",
            "/supersedes": "hints supersedes (the ids those records became)",
            "/superseded_by": "its first id hints superseded_by (the id that record became)",
            "/consent/retention": "on a working record (a task) a duration in days, hours, minutes and seconds "
                                  "hints expires_at = created_at + it",
        }, defaults=(_MT_DEFAULTS.format(what="the record's kind"),)),

        build_pair("memoturn", "oams", mapped={
            "/id": ("/key", "unless an earlier memory took that key in the namespace: then \"<id>~n\" and the id "
                            "travels in the extension"),
            "/summary": ("/value", ""),
            "/source": ("/source_id", "when a string (OAMS §5's provenance; null travels)"),
        }, lost={"document:/*": _MT_ENVELOPE}, notes=_mt_notes(
            created="created_at and updated_at (Unix ms as RFC 3339 UTC)", keywords="tags (split at spaces)")
            , defaults=("the namespace memoturn:default (a memory names no profile); "
                        + OAMS_DEFAULTS.format(what="created_at in UTC, else the conversion's time")
                        .replace("the mapped confidence", "nothing else"),)),

        build_pair("oams", "memoturn", mapped={
            "/value": ("/summary", "when not blank: a blank value travels in the extension and the summary says "
                                   "\"(no text)\""),
            "/source_id": ("/source", "when a string"),
        }, lost={}, notes={
            "/key": "the memory's id is content-addressed: the key travels",
            "/created_at": "hints created_at (Unix ms)",
            "/tags": "hint keywords (joined with spaces, when no tag holds a space)",
        }, defaults=(_MT_DEFAULTS.format(what="fact"),)),

        build_pair("memoturn", "omf", mapped={
            "/summary": ("/content", "a memory's summary is never blank"),
            "/id": ("/extensions/memd/chunk_id", ""),
        }, lost={"document:/*": _MT_ENVELOPE}, notes=_mt_notes(
            created="created_at (RFC 3339 UTC)", keywords="tags (split at spaces)",
            superseded_by="OMF status \"superseded\"", expires_at="expires_at (RFC 3339 UTC)"),
            defaults=("extensions.memd {v: 1, chunk_id, project_id: --project when given}; no memd lifecycle block",
                      CONVERTER_SOURCE)),

        build_pair("omf", "memoturn", mapped={
            "/content": ("/summary", ""),
        }, lost={
            "document:/source": SOURCE,
            "document:/exported_at": EXPORTED_AT,
        }, notes={
            "/created_at": "hints created_at (Unix ms; a date: its midnight UTC; else the conversion's time)",
            "/tags": "hint keywords (joined with spaces, when no tag holds a space)",
            "/extensions/memd/chunk_id": "the memory's id is content-addressed: the chunk_id travels",
            "/extensions/memd/lifecycle": "supersedes / superseded_by hint supersedes / superseded_by (the ids "
                                          "those chunks became)",
            "document:/*": "carried on every memory (nothing to carry it in an empty document)",
        }, defaults=(_MT_DEFAULTS.format(what="fact"),)),

        build_pair("memoturn", "upp", mapped={
            "/id": ("/id", "unless an earlier memory took that id: then \"<id>~n\" and the id travels"),
            "/summary": ("/value", ""),
        }, lost={"document:/*": _MT_ENVELOPE}, notes=_mt_notes(
            created="created_at (RFC 3339 UTC)", keywords="",
            superseded_by="status superseded and superseded_by (an id is an event id here)",
            source="source_type agent_observed (an agent wrote it)"),
            defaults=("entity_key: --entity-key, else \"memoturn\"; labels [] (a memory has no ontology labels); "
                      "ontology user/v1; confidence 1.0; source_type inferred unless hinted; status valid unless "
                      "hinted",)),

        build_pair("upp", "memoturn", mapped={
            "/value": ("/summary", "when not blank: a blank value travels in the extension and the summary says "
                                   "\"(no text)\""),
        }, lost={
            "document:/exported_at": EXPORTED_AT,
        }, notes={
            "/id": "the memory's id is content-addressed: the event id travels",
            "/entity_key": "every event's entity_key is the package's (document.entity_key)",
            "/created_at": "hints created_at (Unix ms)",
            "/labels": "hint keywords (joined with spaces)",
            "/superseded_by": "hints superseded_by (the id its successor became)",
            "document:/entity_key": "carried on every memory (nothing to carry it in an empty package)",
            "document:/ontology": "carried on every memory",
            "document:/*": "carried on every memory",
        }, defaults=(_MT_DEFAULTS.format(what="fact"),)),
    ]
