"""The mapping table's rows between OAMS and the formats before it (UMP, OMF, UPP), in both
directions: part of the one table (suite/convert/mapping.py) that docs/mapping.md renders and the OAMS
converters and their round trips are held to; `FORMAT.rows` brings them in."""

from __future__ import annotations

from memconform.suite.convert.mapping import (BLANK, CONVERTER_SOURCE, EXPORTED_AT, INTEGRITY, NEW_UMP, REDACTED, SOURCE,
                                              UNEXPORTABLE, Pair, build_pair)

#: memoturn → OAMS writes new memories the same way (that pair lives with memoturn).
OAMS_DEFAULTS = ("updated_at is created_at (OAMS §2: \"equal to created_at if never updated\"); created_at "
                 "is {what}; metadata holds only the carried fields and the mapped confidence")


def pairs() -> list[Pair]:
    return [
        build_pair("ump", "oams", mapped={
            "/id": ("/key", "unless an earlier record of the same namespace took that key (a UMP list may repeat "
                            "an id; (namespace, key) is unique, OAMS §2): then the key is \"<id>~n\" and the id "
                            "travels in the extension"),
            "/body/text": ("/value", ""),
            "/time/created": ("/created_at", "when UTC (OAMS §2: RFC 3339, UTC); another offset travels in the "
                                             "extension and created_at is that instant in UTC"),
            "/lifecycle/confidence": ("/metadata/confidence", "a reserved metadata key (OAMS §2), same 0–1 range"),
        }, lost={
            "/integrity": INTEGRITY.format(what="an OAMS memory"),
            "@unexportable": UNEXPORTABLE.replace("OMF and UPP consumers", "OMF, UPP and OAMS consumers"),
            "@redacted": REDACTED,
        }, notes={
            "/scope/owner": "the namespace is <owner-hash>:<scope> (OAMS §4): owner-hash is scope.owner when it "
                            "holds no colon, slash or space, else \"ump-\" + a hash of it (§4: a hash, so the "
                            "namespace does not leak the DID)",
            "/scope/project": "the namespace's scope (slashes, colons and spaces become \"-\"; no project: "
                              "\"default\")",
            "/provenance": "source.ref (else the first evidence ref) hints source_id (OAMS §5)",
        }, defaults=(
            OAMS_DEFAULTS.format(what="the record's time.created in UTC"),)),

        build_pair("oams", "ump", mapped={
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
            "kind semantic; " + NEW_UMP.format(who="the namespace's owner-hash", fmt="oams", src="memory key"),)),

        build_pair("omf", "oams", mapped={
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
            "document:/source": SOURCE,
            "document:/exported_at": EXPORTED_AT,
        }, notes={
            "/extensions/memd/project_id": "hints the namespace's scope (OAMS §4: slashes, colons and spaces become "
                                           "\"-\"; null or absent: \"default\"); the owner-hash is --tenant, "
                                           "else \"omf\"",
            "document:/*": "carried on every memory (nothing to carry it in an empty document)",
        }, defaults=(
            "the namespace <--tenant, else \"omf\">:<project_id, else \"default\">; " + OAMS_DEFAULTS.format(
                what="the item's created_at when UTC") .replace("the mapped confidence", "nothing else"),)),

        build_pair("oams", "omf", mapped={
            "/value": ("/content", ""),
            "/key": ("/extensions/memd/chunk_id", ""),
            "/tags": ("/tags", ""),
            "/created_at": ("/created_at", ""),
            "/updated_at": ("/updated_at", ""),
        }, lost={
            "@blank-text": BLANK.format(what="a memory", f="value"),
        }, notes={
            "/namespace": "its scope hints extensions.memd.project_id (a namespace without a scope: --project)",
        }, defaults=(
            "extensions.memd {v: 1, chunk_id: the key, project_id: the namespace's scope, else --project}; no "
            "memd lifecycle block (memd ignores it from a third-party producer)", CONVERTER_SOURCE)),

        build_pair("upp", "oams", mapped={
            "/id": ("/key", "unless an earlier event took that key in the namespace: then \"<id>~n\" and the id "
                            "travels in the extension"),
            "/value": ("/value", ""),
            "/labels": ("/tags", ""),
            "/confidence": ("/metadata/confidence", "a reserved metadata key (OAMS §2), same 0–1 range"),
            "/created_at": ("/created_at", "when UTC (OAMS §2); another offset travels in the extension and "
                                           "created_at is that instant in UTC"),
        }, lost={
            "document:/exported_at": EXPORTED_AT,
        }, notes={
            "/entity_key": "every event's entity_key is the package's (document.entity_key), which gives the "
                           "namespace's owner-hash",
            "/valid_until": "OAMS has no validity window: it travels",
            "document:/entity_key": "the namespace is <entity_key (\"upp-\" + a hash of it unless a token)>:"
                                    "<the ontology, slashes and colons as \"-\">; carried on every memory "
                                    "(nothing to carry it in an empty package)",
            "document:/ontology": "carried on every memory",
            "document:/*": "carried on every memory",
        }, defaults=(OAMS_DEFAULTS.format(what="the event's created_at in UTC"),)),

        build_pair("oams", "upp", mapped={
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
    ]
