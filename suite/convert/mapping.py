"""The mapping table between UMP, OMF, UPP, OAMS and memoturn, as data: the single source of docs/mapping.md, of
what the converters carry and drop, and of what the round-trip checks hold them to.

For every ordered pair of formats (source → target) each field of a source record has one row:

* **mapped** — written into a native field of the target (`to`), and read back from there;
* **extension** — carried verbatim in the target's extension place (`to`: OMF
  `extensions.<source>`, UPP `extensions.<source>` on each StoredEvent, UMP
  `body.structured["x-extensions"].<source>`, OAMS `metadata["x-extensions"].<source>`, memoturn
  `content["x-extensions"].<source>`) and restored
  from there on the way back;
* **lost** — not carried, with the reason.

A row id is `mapping/<source>-<target>/<field>` ("mapping/ump-omf/body.text"); it is what a
round-trip `Loss` names as its requirement, because the promise comes from this table, not a spec.

Fields are JSON pointers into one record (a UMP record, an OMF item, a UPP StoredEvent, an OAMS memory,
a memoturn memory as GET shows it); `document:/…` names a member of the envelope (OMF document, UPP
ExportPackage, memoturn `{"memories": […]}`); a pointer ending in
`/*` names every member at that level no other row names; `@…` rows are about whole records.
Mapped fields are converted by the `NATIVES` of each pair module (a test keeps the two equal);
everything a mapped row does not take, and no lost row drops, is the extension.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cache

FORMATS = ("ump", "omf", "upp", "oams", "memoturn")
#: The version of each format the converters read and write (UMP 0.1 records are read too).
VERSIONS = {"ump": "1.0", "omf": "1.0", "upp": "1.0.0", "oams": "0.1", "memoturn": "2026.06"}
NAMES = {"ump": "UMP", "omf": "OMF", "upp": "UPP", "oams": "OAMS", "memoturn": "memoturn"}
#: What one record of each format is called.
RECORD = {"ump": "record", "omf": "item", "upp": "event", "oams": "memory", "memoturn": "memory"}

#: Where a format carries fields of another (the namespace is the other format's name). OAMS: the
#: memory's `metadata`, "an arbitrary JSON-serializable map" (OAMS §2) whose reserved keys
#: (value_type, confidence, last_used_at, decay_score, language, pii) x-extensions is not. memoturn: the
#: memory's `content`, its only free-form member that an ingest keeps (every other field is typed), so
#: a carried record is part of what the content-addressed id hashes.
CARRIER = {"ump": "/body/structured/x-extensions", "omf": "/extensions", "upp": "/extensions",
           "oams": "/metadata/x-extensions", "memoturn": "/content/x-extensions"}


class Fate(str, enum.Enum):
    MAPPED = "mapped"
    EXTENSION = "extension"
    LOST = "lost"


RECORD_FIELDS: dict[str, tuple[str, ...]] = {
    # Every member of the UMP record schema (additionalProperties false everywhere but
    # body.structured), at the depth a conversion treats differently.
    "ump": ("/ump", "/id", "/kind", "/body/text", "/body/structured", "/scope/owner", "/scope/user",
            "/scope/project", "/scope/agent", "/scope/session", "/scope/visibility", "/time/created",
            "/time/observed", "/time/valid_from", "/time/valid_to", "/lifecycle/confidence",
            "/lifecycle/salience", "/lifecycle/decay", "/lifecycle/status", "/supersedes", "/superseded_by",
            "/relations", "/provenance", "/consent/retention", "/consent/exportable", "/consent/redact",
            "/integrity"),
    "omf": ("/content", "/category", "/tags", "/status", "/created_at", "/updated_at", "/expires_at",
            "/extensions/memd/v", "/extensions/memd/chunk_id", "/extensions/memd/project_id",
            "/extensions/memd/chunk_type", "/extensions/memd/ingestion_mode", "/extensions/memd/lifecycle",
            "/extensions/memd/*", "/extensions/*", "/*"),
    "upp": ("/id", "/entity_key", "/value", "/labels", "/confidence", "/source_type", "/valid_from",
            "/valid_until", "/status", "/created_at", "/superseded_by", "/*"),
    # OAMS §2's fields (members it does not name are allowed: a later minor version adds fields, §8).
    "oams": ("/key", "/namespace", "/value", "/tags", "/metadata/confidence", "/metadata/*", "/created_at",
             "/updated_at", "/embedding_model", "/embedding", "/parent_id", "/source_id", "/*"),
    # A memory as GET shows it (a recall hit's score and channels are "other members").
    "memoturn": ("/id", "/type", "/topic_key", "/summary", "/content", "/keywords", "/embedding", "/session_id",
                 "/source", "/created_at", "/superseded_by", "/superseded_at", "/expires_at", "/supersedes", "/*"),
}
#: Envelope members (UMP record lists have no envelope; the format version members `omf` is not data).
DOCUMENT_FIELDS: dict[str, tuple[str, ...]] = {
    "ump": (),
    "omf": ("document:/exported_at", "document:/source", "document:/*"),
    "upp": ("document:/entity_key", "document:/ontology", "document:/exported_at", "document:/*"),
    # An OAMS document here is the memories (a JSON array or a JSONL store): no envelope. A bundle's
    # manifest is derived from its lines (§7), so reading a bundle takes its memories.
    "oams": (),
    # {"memories": [...]}: an ingest body's or a recall answer's shape; a recall answer's txid is "other".
    "memoturn": ("document:/*",),
}
#: Rows about whole records: "@record" (each record becomes one, in order) on every pair, the others
#: only where a pair drops records or values.
#: Envelope members that are structure, not data: the format version and the record list.
ENVELOPE = {"ump": (), "omf": ("omf", "memories"), "upp": ("events",), "oams": (), "memoturn": ("memories",)}
POLICIES = ("@record", "@unexportable", "@redacted", "@blank-text")


@dataclass(frozen=True)
class Row:
    source: str
    target: str
    field: str
    fate: Fate
    to: str          # a pointer into the target record (or "document:/…"); "" for lost rows
    note: str = ""

    @property
    def id(self) -> str:
        return f"mapping/{self.source}-{self.target}/{slug(self.field)}"

    @property
    def is_document(self) -> bool:
        return self.field.startswith("document:")

    @property
    def is_policy(self) -> bool:
        return self.field.startswith("@")

    @property
    def pointer(self) -> str:
        """The field as a plain pointer (document rows: into the envelope)."""
        return self.field.removeprefix("document:")

    @property
    def promised(self) -> bool:
        return self.fate is not Fate.LOST


@dataclass(frozen=True)
class Pair:
    source: str
    target: str
    rows: tuple[Row, ...]
    defaults: tuple[str, ...]   # what a record gets in the target that no source field gives

    def row(self, field: str) -> Row:
        for r in self.rows:
            if r.field == field:
                return r
        raise KeyError(f"no row for {field!r} in {self.source} → {self.target}")


def slug(field: str) -> str:
    if field.startswith("@"):
        return "record" if field == "@record" else "record." + field[1:]
    if field.startswith("document:"):
        return "document." + field.removeprefix("document:/").replace("/", ".")
    return field.lstrip("/").replace("/", ".")


def carried_at(source: str, target: str, field: str) -> str:
    """Where an extension row's field sits in the target record."""
    base = f"{CARRIER[target]}/{source}"
    if field.startswith("document:"):
        return base + "/document" + field.removeprefix("document:")
    return base + "/fields" + field


# -- the table ---------------------------------------------------------------------------------------

_INTEGRITY = ("the signature covers the UMP record's canonical bytes; {what} is new bytes. Converting "
              "back to UMP re-signs the records the given key owns (--sign-key / --test-key); without a key "
              "they come back unsigned")
_UNEXPORTABLE = ("consent.exportable false: the record must not leave its store (UMP §2.7), so it is not "
                 "converted (a conversion is an export: OMF and UPP consumers do not enforce UMP consent)")
_REDACTED = ("the values at consent.redact paths are stripped before conversion (UMP §2.7), for the same "
             "reason; a relation or provenance left without a required member goes too, a record left invalid "
             "stays behind; the redact list itself travels")
_SOURCE = ("the converter, not memd, produced the new document: carrying source.app would let any UMP or "
           "UPP file pass memd's trust gate (lifecycle honoured only from memd). The result names "
           "source.app \"memconform-convert\"")
_EXPORTED_AT = "a conversion is a new export: exported_at is the conversion's time"
_BLANK = "OMF content must not be blank (omf/content-not-blank): {what} whose {f} is blank is not converted"
_ONE_EACH = "each {r} becomes one {t}, in document order"


def _pair(source: str, target: str, *, mapped: dict[str, tuple[str, str]], lost: dict[str, str],
          notes: dict[str, str], defaults: tuple[str, ...]) -> Pair:
    rows = [Row(source, target, "@record", Fate.MAPPED, "",
                _ONE_EACH.format(r=RECORD[source], t=RECORD[target]))]
    for field in RECORD_FIELDS[source] + DOCUMENT_FIELDS[source]:
        if field in mapped:
            to, note = mapped[field]
            rows.append(Row(source, target, field, Fate.MAPPED, to, note))
        elif field in lost:
            rows.append(Row(source, target, field, Fate.LOST, "", lost[field]))
        else:
            rows.append(Row(source, target, field, Fate.EXTENSION, carried_at(source, target, field),
                            notes.get(field, "")))
    rows += [Row(source, target, f, Fate.LOST, "", lost[f]) for f in POLICIES if f in lost]
    unknown = (set(mapped) | set(lost) | set(notes)) - {r.field for r in rows}
    assert not unknown, f"{source}→{target}: rows for unknown fields {sorted(unknown)}"
    return Pair(source, target, tuple(rows), defaults)


_CONVERTER_SOURCE = ("the document names source {\"app\": \"memconform-convert\"} and exported_at the "
                     "conversion's time")
_NEW_UMP = ("ump \"1.0\"; scope.owner: --owner, else the signing key's DID, else {who}; scope.visibility "
            "private; provenance {{actor: the owner, actor_kind: import, method: memconform-convert, "
            "source: {{provider: \"{fmt}\", ref: the {src} id}}}} (UMP §2.6: an import names its provider); "
            "records the signing key owns are signed")


_OAMS_DEFAULTS = ("updated_at is created_at (OAMS §2: \"equal to created_at if never updated\"); created_at "
                  "is {what}; metadata holds only the carried fields and the mapped confidence")


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


@cache
def table() -> dict[tuple[str, str], Pair]:
    pairs = [
        _pair("ump", "omf", mapped={
            "/id": ("/extensions/memd/chunk_id", "memd reads chunk_id as informational; a UMP id comes back "
                                                 "as the record's id"),
            "/body/text": ("/content", ""),
            "/scope/project": ("/extensions/memd/project_id", "memd's primary project resolution on import"),
            "/time/created": ("/created_at", "RFC 3339 both ways"),
        }, lost={
            "/integrity": _INTEGRITY.format(what="an OMF item"),
            "@unexportable": _UNEXPORTABLE,
            "@redacted": _REDACTED,
            "@blank-text": _BLANK.format(what="a record", f="body.text"),
        }, notes={
            "/lifecycle/status": "tombstoned also hints OMF status \"archived\"",
            "/superseded_by": "a non-empty list also hints OMF status \"superseded\"",
        }, defaults=(
            "extensions.memd {v: 1, chunk_id, project_id (--project when the record names none)}; no memd "
            "lifecycle block (memd ignores it from a third-party producer)", _CONVERTER_SOURCE)),

        _pair("ump", "upp", mapped={
            "/id": ("/id", ""),
            "/body/text": ("/value", ""),
            "/time/created": ("/created_at", ""),
            "/time/valid_from": ("/valid_from", ""),
            "/time/valid_to": ("/valid_until", "null (still valid) stays null"),
            "/lifecycle/confidence": ("/confidence", "absent: the event says 1.0, and the field is absent "
                                                     "again on the way back"),
        }, lost={
            "/integrity": _INTEGRITY.format(what="a UPP event"),
            "@unexportable": _UNEXPORTABLE,
            "@redacted": _REDACTED,
        }, notes={
            "/scope/owner": "the package's entity_key is --entity-key, else the first record's subject "
                            "(scope.user, else scope.owner)",
            "/scope/user": "see scope.owner",
            "/provenance": "actor_kind hints source_type (user → user_stated, agent → agent_observed, "
                           "otherwise inferred)",
            "/lifecycle/status": "candidate hints status staged; tombstoned hints superseded (UPP has no "
                                 "tombstone)",
            "/superseded_by": "a non-empty list hints status superseded and superseded_by (its first id)",
        }, defaults=(
            "labels [] (a UMP record has no ontology labels); ontology user/v1; status valid unless hinted; "
            "source_type inferred without provenance",)),

        _pair("omf", "ump", mapped={
            "/content": ("/body/text", ""),
            "/created_at": ("/time/created", "when an RFC 3339 date-time; a date or other text travels in the "
                                             "extension and time.created is that date's midnight UTC (else "
                                             "the conversion's time)"),
            "/extensions/memd/chunk_id": ("/id", "when it is a UMP id (urn:ump:…); otherwise the id is derived "
                                                 "(urn:ump: + base32 BLAKE3 of \"omf:\" + chunk_id) and the "
                                                 "chunk_id travels in the extension"),
            "/extensions/memd/project_id": ("/scope/project", "when a string (null travels in the extension)"),
        }, lost={
            "document:/source": _SOURCE,
            "document:/exported_at": _EXPORTED_AT,
        }, notes={
            "/extensions/memd/lifecycle": "supersedes / superseded_by also hint UMP supersedes / "
                                          "superseded_by (as the ids those chunks became); status hints "
                                          "lifecycle.status (draft → candidate, expired → tombstoned)",
            "/status": "archived / expired hint lifecycle.status tombstoned when no memd lifecycle says more",
            "document:/*": "carried on every item (nothing to carry it in an empty document)",
        }, defaults=(
            "kind semantic; " + _NEW_UMP.format(who="--tenant, else \"unknown-owner\"", fmt="omf", src="chunk"),)),

        _pair("omf", "upp", mapped={
            "/content": ("/value", ""),
            "/created_at": ("/created_at", "when an RFC 3339 date-time; otherwise it travels in the extension "
                                           "and created_at is that date's midnight UTC (else the conversion's "
                                           "time)"),
            "/extensions/memd/chunk_id": ("/id", "when a non-empty string no earlier item used; otherwise a "
                                                 "derived id, and the chunk_id travels in the extension"),
            "/tags": ("/labels", "when every tag is a user/v1 label; otherwise the tags that are labels become "
                                 "labels and the tags travel in the extension"),
        }, lost={
            "document:/source": _SOURCE,
            "document:/exported_at": _EXPORTED_AT,
        }, notes={
            "/extensions/memd/lifecycle": "status hints status (superseded / expired → superseded, draft → "
                                          "staged) and superseded_by hints superseded_by (the id that chunk "
                                          "became)",
            "document:/*": "carried on every event (nothing to carry it in an empty document)",
        }, defaults=(
            "entity_key: --entity-key, else --tenant, else \"omf\"; ontology user/v1; confidence 1.0; "
            "source_type inferred; status valid unless hinted", )),

        _pair("upp", "ump", mapped={
            "/id": ("/id", "when it is a UMP id (urn:ump:…); otherwise the id is derived (urn:ump: + base32 "
                           "BLAKE3 of \"upp:\" + id) and the event id travels in the extension"),
            "/entity_key": ("/scope/user", "the subject: scope.user; scope.owner is --owner, else the signing "
                                           "key's DID, else the entity_key itself (then there is no scope.user)"),
            "/value": ("/body/text", ""),
            "/confidence": ("/lifecycle/confidence", ""),
            "/valid_from": ("/time/valid_from", "when a string (null travels in the extension)"),
            "/valid_until": ("/time/valid_to", "unless it is before valid_from (a UMP record cannot say that: "
                                               "then it travels in the extension)"),
            "/created_at": ("/time/created", ""),
        }, lost={
            "document:/exported_at": _EXPORTED_AT,
        }, notes={
            "/labels": "a who_* label hints kind identity",
            "/status": "staged hints lifecycle.status candidate",
            "/superseded_by": "hints UMP superseded_by (the id its successor became)",
            "document:/entity_key": "carried on every record (nothing to carry it in an empty package)",
            "document:/ontology": "carried on every record",
            "document:/*": "carried on every record",
        }, defaults=(
            "kind semantic (identity with a who_* label); " + _NEW_UMP.format(who="the entity_key", fmt="upp",
                                                                              src="event"),)),

        _pair("upp", "omf", mapped={
            "/id": ("/extensions/memd/chunk_id", ""),
            "/value": ("/content", ""),
            "/labels": ("/tags", ""),
            "/created_at": ("/created_at", ""),
        }, lost={
            "document:/exported_at": _EXPORTED_AT,
            "@blank-text": _BLANK.format(what="an event", f="value"),
        }, notes={
            "/entity_key": "every event's entity_key is the package's (document.entity_key)",
            "/status": "superseded also hints OMF status \"superseded\"",
            "document:/entity_key": "carried on every item (nothing to carry it in an empty package)",
            "document:/ontology": "carried on every item",
            "document:/*": "carried on every item",
        }, defaults=(
            "extensions.memd {v: 1, chunk_id, project_id: --project when given}; no memd lifecycle block",
            _CONVERTER_SOURCE)),

        _pair("ump", "oams", mapped={
            "/id": ("/key", "unless an earlier record of the same namespace took that key (a UMP list may repeat "
                            "an id; (namespace, key) is unique, OAMS §2): then the key is \"<id>~n\" and the id "
                            "travels in the extension"),
            "/body/text": ("/value", ""),
            "/time/created": ("/created_at", "when UTC (OAMS §2: RFC 3339, UTC); another offset travels in the "
                                             "extension and created_at is that instant in UTC"),
            "/lifecycle/confidence": ("/metadata/confidence", "a reserved metadata key (OAMS §2), same 0–1 range"),
        }, lost={
            "/integrity": _INTEGRITY.format(what="an OAMS memory"),
            "@unexportable": _UNEXPORTABLE.replace("OMF and UPP consumers", "OMF, UPP and OAMS consumers"),
            "@redacted": _REDACTED,
        }, notes={
            "/scope/owner": "the namespace is <owner-hash>:<scope> (OAMS §4): owner-hash is scope.owner when it "
                            "holds no colon, slash or space, else \"ump-\" + a hash of it (§4: a hash, so the "
                            "namespace does not leak the DID)",
            "/scope/project": "the namespace's scope (slashes, colons and spaces become \"-\"; no project: "
                              "\"default\")",
            "/provenance": "source.ref (else the first evidence ref) hints source_id (OAMS §5)",
        }, defaults=(
            _OAMS_DEFAULTS.format(what="the record's time.created in UTC"),)),

        _pair("oams", "ump", mapped={
            "/key": ("/id", "when it is a UMP id (urn:ump:…); otherwise the id is derived (urn:ump: + base32 BLAKE3 "
                            "of \"oams:\" + the [namespace, key] JSON) and the key travels in the extension"),
            "/value": ("/body/text", ""),
            "/created_at": ("/time/created", "an OAMS timestamp is an RFC 3339 date-time"),
            "/metadata/confidence": ("/lifecycle/confidence", ""),
        }, lost={}, notes={
            "/namespace": "its owner-hash is scope.owner unless --owner or a signing key says otherwise; its "
                          "scope is scope.project",
            "/source_id": "a string also hints provenance.evidence [{ref: source_id}] (OAMS §5: kept as-is)",
            "/embedding": "carried as is: the vector is the source model's (§2: a consumer MAY re-embed)",
        }, defaults=(
            "kind semantic; " + _NEW_UMP.format(who="the namespace's owner-hash", fmt="oams", src="memory key"),)),

        _pair("omf", "oams", mapped={
            "/content": ("/value", ""),
            "/extensions/memd/chunk_id": ("/key", "when a non-empty string no earlier item of the same namespace "
                                                  "used; otherwise a derived key (\"omf-\" + a hash of position, "
                                                  "chunk_id and content), and the chunk_id travels in the extension"),
            "/tags": ("/tags", ""),
            "/created_at": ("/created_at", "when RFC 3339 UTC (OAMS §2); otherwise it travels in the extension and "
                                           "created_at is that instant in UTC (a date: its midnight UTC; else the "
                                           "conversion's time)"),
            "/updated_at": ("/updated_at", "when RFC 3339 UTC and not before created_at; otherwise it travels in "
                                           "the extension and updated_at is created_at"),
        }, lost={
            "document:/source": _SOURCE,
            "document:/exported_at": _EXPORTED_AT,
        }, notes={
            "/extensions/memd/project_id": "hints the namespace's scope (OAMS §4: slashes, colons and spaces become "
                                           "\"-\"; null or absent: \"default\"); the owner-hash is --tenant, "
                                           "else \"omf\"",
            "document:/*": "carried on every memory (nothing to carry it in an empty document)",
        }, defaults=(
            "the namespace <--tenant, else \"omf\">:<project_id, else \"default\">; " + _OAMS_DEFAULTS.format(
                what="the item's created_at when UTC") .replace("the mapped confidence", "nothing else"),)),

        _pair("oams", "omf", mapped={
            "/value": ("/content", ""),
            "/key": ("/extensions/memd/chunk_id", ""),
            "/tags": ("/tags", ""),
            "/created_at": ("/created_at", ""),
            "/updated_at": ("/updated_at", ""),
        }, lost={
            "@blank-text": _BLANK.format(what="a memory", f="value"),
        }, notes={
            "/namespace": "its scope hints extensions.memd.project_id (a namespace without a scope: --project)",
        }, defaults=(
            "extensions.memd {v: 1, chunk_id: the key, project_id: the namespace's scope, else --project}; no "
            "memd lifecycle block (memd ignores it from a third-party producer)", _CONVERTER_SOURCE)),

        _pair("upp", "oams", mapped={
            "/id": ("/key", "unless an earlier event took that key in the namespace: then \"<id>~n\" and the id "
                            "travels in the extension"),
            "/value": ("/value", ""),
            "/labels": ("/tags", ""),
            "/confidence": ("/metadata/confidence", "a reserved metadata key (OAMS §2), same 0–1 range"),
            "/created_at": ("/created_at", "when UTC (OAMS §2); another offset travels in the extension and "
                                           "created_at is that instant in UTC"),
        }, lost={
            "document:/exported_at": _EXPORTED_AT,
        }, notes={
            "/entity_key": "every event's entity_key is the package's (document.entity_key), which gives the "
                           "namespace's owner-hash",
            "/valid_until": "OAMS has no validity window: it travels",
            "document:/entity_key": "the namespace is <entity_key (\"upp-\" + a hash of it unless a token)>:"
                                    "<the ontology, slashes and colons as \"-\">; carried on every memory "
                                    "(nothing to carry it in an empty package)",
            "document:/ontology": "carried on every memory",
            "document:/*": "carried on every memory",
        }, defaults=(_OAMS_DEFAULTS.format(what="the event's created_at in UTC"),)),

        _pair("oams", "upp", mapped={
            "/key": ("/id", "unless an earlier memory (of another namespace) took that id: then \"<key>~n\" and "
                            "the key travels in the extension"),
            "/value": ("/value", ""),
            "/tags": ("/labels", "when every tag is a user/v1 label; otherwise the tags that are labels become "
                                 "labels and the tags travel in the extension"),
            "/metadata/confidence": ("/confidence", "absent: the event says 1.0, and the field is absent again on "
                                                    "the way back"),
            "/created_at": ("/created_at", ""),
        }, lost={}, notes={
            "/namespace": "the package's entity_key is --entity-key, else the first memory's owner-hash (a "
                          "package is one user's, UPP 02 §4)",
        }, defaults=(
            "ontology user/v1; source_type inferred; status valid; superseded_by null",)),

        # -- memoturn ---------------------------------------------------------------------------------
        _pair("memoturn", "ump", mapped={
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
                      + _NEW_UMP.format(who="\"unknown-owner\"", fmt="memoturn", src="mem_"),)),

        _pair("ump", "memoturn", mapped={
            "/body/text": ("/summary", "when not blank (memoturn refuses a blank summary): a blank text travels in "
                                       "the extension and the summary says \"(no text)\""),
            "/scope/session": ("/session_id", ""),
            "/scope/agent": ("/source", "the agent that wrote the record: memoturn's provenance"),
        }, lost={
            "/integrity": _INTEGRITY.format(what="a memoturn memory"),
            "@unexportable": _UNEXPORTABLE.replace("OMF and UPP consumers", "memoturn stores"),
            "@redacted": _REDACTED,
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

        _pair("memoturn", "oams", mapped={
            "/id": ("/key", "unless an earlier memory took that key in the namespace: then \"<id>~n\" and the id "
                            "travels in the extension"),
            "/summary": ("/value", ""),
            "/source": ("/source_id", "when a string (OAMS §5's provenance; null travels)"),
        }, lost={"document:/*": _MT_ENVELOPE}, notes=_mt_notes(
            created="created_at and updated_at (Unix ms as RFC 3339 UTC)", keywords="tags (split at spaces)")
            , defaults=("the namespace memoturn:default (a memory names no profile); "
                        + _OAMS_DEFAULTS.format(what="created_at in UTC, else the conversion's time")
                        .replace("the mapped confidence", "nothing else"),)),

        _pair("oams", "memoturn", mapped={
            "/value": ("/summary", "when not blank: a blank value travels in the extension and the summary says "
                                   "\"(no text)\""),
            "/source_id": ("/source", "when a string"),
        }, lost={}, notes={
            "/key": "the memory's id is content-addressed: the key travels",
            "/created_at": "hints created_at (Unix ms)",
            "/tags": "hint keywords (joined with spaces, when no tag holds a space)",
        }, defaults=(_MT_DEFAULTS.format(what="fact"),)),

        _pair("memoturn", "omf", mapped={
            "/summary": ("/content", "a memory's summary is never blank"),
            "/id": ("/extensions/memd/chunk_id", ""),
        }, lost={"document:/*": _MT_ENVELOPE}, notes=_mt_notes(
            created="created_at (RFC 3339 UTC)", keywords="tags (split at spaces)",
            superseded_by="OMF status \"superseded\"", expires_at="expires_at (RFC 3339 UTC)"),
            defaults=("extensions.memd {v: 1, chunk_id, project_id: --project when given}; no memd lifecycle block",
                      _CONVERTER_SOURCE)),

        _pair("omf", "memoturn", mapped={
            "/content": ("/summary", ""),
        }, lost={
            "document:/source": _SOURCE,
            "document:/exported_at": _EXPORTED_AT,
        }, notes={
            "/created_at": "hints created_at (Unix ms; a date: its midnight UTC; else the conversion's time)",
            "/tags": "hint keywords (joined with spaces, when no tag holds a space)",
            "/extensions/memd/chunk_id": "the memory's id is content-addressed: the chunk_id travels",
            "/extensions/memd/lifecycle": "supersedes / superseded_by hint supersedes / superseded_by (the ids "
                                          "those chunks became)",
            "document:/*": "carried on every memory (nothing to carry it in an empty document)",
        }, defaults=(_MT_DEFAULTS.format(what="fact"),)),

        _pair("memoturn", "upp", mapped={
            "/id": ("/id", "unless an earlier memory took that id: then \"<id>~n\" and the id travels"),
            "/summary": ("/value", ""),
        }, lost={"document:/*": _MT_ENVELOPE}, notes=_mt_notes(
            created="created_at (RFC 3339 UTC)", keywords="",
            superseded_by="status superseded and superseded_by (an id is an event id here)",
            source="source_type agent_observed (an agent wrote it)"),
            defaults=("entity_key: --entity-key, else \"memoturn\"; labels [] (a memory has no ontology labels); "
                      "ontology user/v1; confidence 1.0; source_type inferred unless hinted; status valid unless "
                      "hinted",)),

        _pair("upp", "memoturn", mapped={
            "/value": ("/summary", "when not blank: a blank value travels in the extension and the summary says "
                                   "\"(no text)\""),
        }, lost={
            "document:/exported_at": _EXPORTED_AT,
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
    return {(p.source, p.target): p for p in pairs}


def pair(source: str, target: str) -> Pair:
    try:
        return table()[(source, target)]
    except KeyError:
        raise KeyError(f"no mapping from {source!r} to {target!r} (formats: {', '.join(FORMATS)})") from None


def rows(source: str, target: str) -> tuple[Row, ...]:
    return pair(source, target).rows


def lost_pointers(source: str, target: str) -> list[str]:
    """The record pointers the pair drops (what the extension must never hold)."""
    return [r.field for r in rows(source, target) if r.fate is Fate.LOST and r.field.startswith("/")]


def siblings(fmt: str) -> dict[str, set[str]]:
    """For each parent pointer of a wildcard row: the member names the other rows give there (every
    step of their pointers), record and document fields alike (a document field's parent is
    prefixed "document:"). The envelope members that hold the records are named too: they are
    never "other members"."""
    out: dict[str, set[str]] = {"document:": set(ENVELOPE[fmt])}
    for field in RECORD_FIELDS[fmt] + DOCUMENT_FIELDS[fmt]:
        prefix = "document:" if field.startswith("document:") else ""
        steps = field.removeprefix("document:").split("/")[1:]
        for depth, name in enumerate(steps):
            if name != "*":
                parent = "".join("/" + s for s in steps[:depth])
                out.setdefault(prefix + parent, set()).add(name)
    return out
