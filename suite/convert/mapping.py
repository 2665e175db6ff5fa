"""The mapping table between the formats the specs declare (suite/specs.py `format`), as data: the
single source of docs/mapping.md, of what the converters carry and drop, and of what the round-trip
checks hold them to. The rows between UMP, OMF and UPP are written here; a later format brings its
rows with it (`Format.rows`, beside its converters).

For every ordered pair of formats (source → target) each field of a source record has one row:

* **mapped** — written into a native field of the target (`to`), and read back from there;
* **extension** — carried verbatim in the target's extension place (`to`: the target's
  `Format.carrier` + `/<source>`, e.g. OMF `extensions.<source>`, UPP `extensions.<source>` on each
  StoredEvent, UMP `body.structured["x-extensions"].<source>`) and restored from there on the way back;
* **lost** — not carried, with the reason.

A row id is `mapping/<source>-<target>/<field>` ("mapping/ump-omf/body.text"); it is what a
round-trip `Loss` names as its requirement, because the promise comes from this table, not a spec.

Fields are JSON pointers into one record (`Format.record_fields`: a UMP record, an OMF item, a UPP
StoredEvent, …); `document:/…` names a member of the envelope (`Format.document_fields`: OMF document,
UPP ExportPackage, …); a pointer ending in `/*` names every member at that level no other row names;
`@…` rows are about whole records. Mapped fields are converted by the `NATIVES` of each pair module
(a test keeps the two equal); everything a mapped row does not take, and no lost row drops, is the
extension.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cache
from typing import Any

from memconform.suite.convert import formats

#: What the table says of each format, read from the formats the specs declare: FORMATS (in the
#: table's order), VERSIONS (the version the converters read and write), NAMES, RECORD (what one
#: record is called), CARRIER (where it carries fields of another: the namespace is the other
#: format's name), RECORD_FIELDS, DOCUMENT_FIELDS, ENVELOPE (envelope members that are structure).
_DECLARED = {"VERSIONS": "version", "NAMES": "label", "RECORD": "record", "CARRIER": "carrier",
             "RECORD_FIELDS": "record_fields", "DOCUMENT_FIELDS": "document_fields", "ENVELOPE": "envelope"}


def __getattr__(name: str) -> Any:
    if name == "FORMATS":
        return formats.names()
    if name in _DECLARED:
        return {fmt: getattr(declared, _DECLARED[name]) for fmt, declared in formats.registered().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Fate(str, enum.Enum):
    MAPPED = "mapped"
    EXTENSION = "extension"
    LOST = "lost"


#: Rows about whole records: "@record" (each record becomes one, in order) on every pair, the others
#: only where a pair drops records or values.
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
    base = f"{formats.get(target).carrier}/{source}"
    if field.startswith("document:"):
        return base + "/document" + field.removeprefix("document:")
    return base + "/fields" + field


# -- the table ---------------------------------------------------------------------------------------

# The notes a later format's rows share with these (suite/<spec>/convert/rows.py) are public.
INTEGRITY = ("the signature covers the UMP record's canonical bytes; {what} is new bytes. Converting "
             "back to UMP re-signs the records the given key owns (--sign-key / --test-key); without a key "
             "they come back unsigned")
UNEXPORTABLE = ("consent.exportable false: the record must not leave its store (UMP §2.7), so it is not "
                "converted (a conversion is an export: OMF and UPP consumers do not enforce UMP consent)")
REDACTED = ("the values at consent.redact paths are stripped before conversion (UMP §2.7), for the same "
            "reason; a relation or provenance left without a required member goes too, a record left invalid "
            "stays behind; the redact list itself travels")
SOURCE = ("the converter, not memd, produced the new document: carrying source.app would let any UMP or "
          "UPP file pass memd's trust gate (lifecycle honoured only from memd). The result names "
          "source.app \"memconform-convert\"")
EXPORTED_AT = "a conversion is a new export: exported_at is the conversion's time"
BLANK = "OMF content must not be blank (omf/content-not-blank): {what} whose {f} is blank is not converted"
_ONE_EACH = "each {r} becomes one {t}, in document order"


def build_pair(source: str, target: str, *, mapped: dict[str, tuple[str, str]], lost: dict[str, str],
               notes: dict[str, str], defaults: tuple[str, ...]) -> Pair:
    given = formats.get(source)
    rows = [Row(source, target, "@record", Fate.MAPPED, "",
                _ONE_EACH.format(r=given.record, t=formats.get(target).record))]
    for field in given.record_fields + given.document_fields:
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


CONVERTER_SOURCE = ("the document names source {\"app\": \"memconform-convert\"} and exported_at the "
                    "conversion's time")
NEW_UMP = ("ump \"1.0\"; scope.owner: --owner, else the signing key's DID, else {who}; scope.visibility "
           "private; provenance {{actor: the owner, actor_kind: import, method: memconform-convert, "
           "source: {{provider: \"{fmt}\", ref: the {src} id}}}} (UMP §2.6: an import names its provider); "
           "records the signing key owns are signed")


@cache
def table() -> dict[tuple[str, str], Pair]:
    pairs = [
        build_pair("ump", "omf", mapped={
            "/id": ("/extensions/memd/chunk_id", "memd reads chunk_id as informational; a UMP id comes back "
                                                 "as the record's id"),
            "/body/text": ("/content", ""),
            "/scope/project": ("/extensions/memd/project_id", "memd's primary project resolution on import"),
            "/time/created": ("/created_at", "RFC 3339 both ways"),
        }, lost={
            "/integrity": INTEGRITY.format(what="an OMF item"),
            "@unexportable": UNEXPORTABLE,
            "@redacted": REDACTED,
            "@blank-text": BLANK.format(what="a record", f="body.text"),
        }, notes={
            "/lifecycle/status": "tombstoned also hints OMF status \"archived\"",
            "/superseded_by": "a non-empty list also hints OMF status \"superseded\"",
        }, defaults=(
            "extensions.memd {v: 1, chunk_id, project_id (--project when the record names none)}; no memd "
            "lifecycle block (memd ignores it from a third-party producer)", CONVERTER_SOURCE)),

        build_pair("ump", "upp", mapped={
            "/id": ("/id", ""),
            "/body/text": ("/value", ""),
            "/time/created": ("/created_at", ""),
            "/time/valid_from": ("/valid_from", ""),
            "/time/valid_to": ("/valid_until", "null (still valid) stays null"),
            "/lifecycle/confidence": ("/confidence", "absent: the event says 1.0, and the field is absent "
                                                     "again on the way back"),
        }, lost={
            "/integrity": INTEGRITY.format(what="a UPP event"),
            "@unexportable": UNEXPORTABLE,
            "@redacted": REDACTED,
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

        build_pair("omf", "ump", mapped={
            "/content": ("/body/text", ""),
            "/created_at": ("/time/created", "when an RFC 3339 date-time; a date or other text travels in the "
                                             "extension and time.created is that date's midnight UTC (else "
                                             "the conversion's time)"),
            "/extensions/memd/chunk_id": ("/id", "when it is a UMP id (urn:ump:…); otherwise the id is derived "
                                                 "(urn:ump: + base32 BLAKE3 of \"omf:\" + chunk_id) and the "
                                                 "chunk_id travels in the extension"),
            "/extensions/memd/project_id": ("/scope/project", "when a string (null travels in the extension)"),
        }, lost={
            "document:/source": SOURCE,
            "document:/exported_at": EXPORTED_AT,
        }, notes={
            "/extensions/memd/lifecycle": "supersedes / superseded_by also hint UMP supersedes / "
                                          "superseded_by (as the ids those chunks became); status hints "
                                          "lifecycle.status (draft → candidate, expired → tombstoned)",
            "/status": "archived / expired hint lifecycle.status tombstoned when no memd lifecycle says more",
            "document:/*": "carried on every item (nothing to carry it in an empty document)",
        }, defaults=(
            "kind semantic; " + NEW_UMP.format(who="--tenant, else \"unknown-owner\"", fmt="omf", src="chunk"),)),

        build_pair("omf", "upp", mapped={
            "/content": ("/value", ""),
            "/created_at": ("/created_at", "when an RFC 3339 date-time; otherwise it travels in the extension "
                                           "and created_at is that date's midnight UTC (else the conversion's "
                                           "time)"),
            "/extensions/memd/chunk_id": ("/id", "when a non-empty string no earlier item used; otherwise a "
                                                 "derived id, and the chunk_id travels in the extension"),
            "/tags": ("/labels", "when every tag is a user/v1 label; otherwise the tags that are labels become "
                                 "labels and the tags travel in the extension"),
        }, lost={
            "document:/source": SOURCE,
            "document:/exported_at": EXPORTED_AT,
        }, notes={
            "/extensions/memd/lifecycle": "status hints status (superseded / expired → superseded, draft → "
                                          "staged) and superseded_by hints superseded_by (the id that chunk "
                                          "became)",
            "document:/*": "carried on every event (nothing to carry it in an empty document)",
        }, defaults=(
            "entity_key: --entity-key, else --tenant, else \"omf\"; ontology user/v1; confidence 1.0; "
            "source_type inferred; status valid unless hinted", )),

        build_pair("upp", "ump", mapped={
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
            "document:/exported_at": EXPORTED_AT,
        }, notes={
            "/labels": "a who_* label hints kind identity",
            "/status": "staged hints lifecycle.status candidate",
            "/superseded_by": "hints UMP superseded_by (the id its successor became)",
            "document:/entity_key": "carried on every record (nothing to carry it in an empty package)",
            "document:/ontology": "carried on every record",
            "document:/*": "carried on every record",
        }, defaults=(
            "kind semantic (identity with a who_* label); " + NEW_UMP.format(who="the entity_key", fmt="upp",
                                                                              src="event"),)),

        build_pair("upp", "omf", mapped={
            "/id": ("/extensions/memd/chunk_id", ""),
            "/value": ("/content", ""),
            "/labels": ("/tags", ""),
            "/created_at": ("/created_at", ""),
        }, lost={
            "document:/exported_at": EXPORTED_AT,
            "@blank-text": BLANK.format(what="an event", f="value"),
        }, notes={
            "/entity_key": "every event's entity_key is the package's (document.entity_key)",
            "/status": "superseded also hints OMF status \"superseded\"",
            "document:/entity_key": "carried on every item (nothing to carry it in an empty package)",
            "document:/ontology": "carried on every item",
            "document:/*": "carried on every item",
        }, defaults=(
            "extensions.memd {v: 1, chunk_id, project_id: --project when given}; no memd lifecycle block",
            CONVERTER_SOURCE)),

    ]
    for name in formats.names():
        later = formats.get(name).rows
        if later is not None:
            pairs += later()
    return {(p.source, p.target): p for p in pairs}


def pair(source: str, target: str) -> Pair:
    try:
        return table()[(source, target)]
    except KeyError:
        raise KeyError(f"no mapping from {source!r} to {target!r} (formats: {', '.join(formats.names())})") from None


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
    declared = formats.get(fmt)
    out: dict[str, set[str]] = {"document:": set(declared.envelope)}
    for field in declared.record_fields + declared.document_fields:
        prefix = "document:" if field.startswith("document:") else ""
        steps = field.removeprefix("document:").split("/")[1:]
        for depth, name in enumerate(steps):
            if name != "*":
                parent = "".join("/" + s for s in steps[:depth])
                out.setdefault(prefix + parent, set()).add(name)
    return out
