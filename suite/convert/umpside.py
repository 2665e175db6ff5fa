"""UMP on either side of a conversion.

As a source: consent first (UMP §2.7). A conversion is an export into a format whose consumers do
not enforce UMP consent, so records with `consent.exportable: false` stay behind and redact paths
are stripped, each reported as lost (consent.py strips; what a strip leaves invalid is settled here). As a target: what a new record gets (owner, visibility,
import provenance), and signing: a record is signed only with a key given for it and only when
that key's DID is the record's owner (UMP §2.8: the operator's key), never with a signature
carried from elsewhere.
"""

from __future__ import annotations

import copy
from typing import Any

from memconform.suite.convert import corpora, validate
from memconform.suite.convert.common import (CONVERTER_METHOD, UNKNOWN_OWNER, Ctx, InvalidInput, LostField,
                                              signer_did)
from memconform.suite.convert.documents import policy_row
from memconform.suite.convert.formats import Format
from memconform.suite.ump import consent, files as ump_files, ids, integrity

UMP_VERSION = "1.0"


# -- source ------------------------------------------------------------------------------------------

def exportable(records: list[Any], ctx: Ctx) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(index in the source, the record, the record as it may leave) for every record consent lets out."""
    out = []
    for i, rec in enumerate(records):
        rid = rec.get("id", f"/{i}")
        if not consent.is_exportable(rec):
            row = policy_row(ctx, "@unexportable")
            ctx.lost.append(LostField(rid, "", row.id, row.note))
            continue
        leaving = rec
        stripped = consent.redacted_paths_present(rec)
        if stripped:
            row = policy_row(ctx, "@redacted")
            ctx.lost.extend(LostField(rid, path, row.id, row.note) for path in stripped)
            leaving = redacted(rec)
            if leaving is None:
                ctx.lost.append(LostField(rid, "", row.id, "redaction leaves no valid record: not converted"))
                continue
        out.append((i, rec, leaving))
    return out


def redacted(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The record with its redact paths stripped, still a valid record, or None. Stripping can take
    a REQUIRED member (a relation's target, provenance.actor): the element that needed it goes too
    (a relation without a target says nothing); a record still invalid then is not converted."""
    out = consent.apply_redact(rec)
    if not validate.ump_record_problems(out):
        return out
    out = copy.deepcopy(out)
    if isinstance(out.get("relations"), list):
        out["relations"] = [r for r in out["relations"] if isinstance(r, dict) and {"type", "target"} <= r.keys()]
    prov = out.get("provenance")
    if isinstance(prov, dict):
        if isinstance(prov.get("evidence"), list):
            prov["evidence"] = [e for e in prov["evidence"] if isinstance(e, dict) and "ref" in e]
        if not {"actor", "actor_kind", "method"} <= prov.keys():
            del out["provenance"]
    return None if validate.ump_record_problems(out) else out


# -- target ------------------------------------------------------------------------------------------

def owner(ctx: Ctx, fallback: str | None) -> str:
    """scope.owner of a new record: --owner, the signing key's DID, the source's own name for the
    owner (OMF --tenant, a UPP entity_key), else an opaque placeholder (said in a warning)."""
    chosen = ctx.options.owner or signer_did(ctx.options.sign_key) or fallback
    if chosen:
        return chosen
    ctx.warn(f"no owner given: new records say scope.owner {UNKNOWN_OWNER!r} (give --owner DID or a signing key)")
    return UNKNOWN_OWNER


def provenance(owner_did: str, provider: str, ref: Any) -> dict[str, Any]:
    prov: dict[str, Any] = {"actor": owner_did, "actor_kind": "import", "method": CONVERTER_METHOD,
                            "source": {"provider": provider}}
    if isinstance(ref, str) and ref:
        prov["source"]["ref"] = ref
    return prov


def with_content_id(rec: dict[str, Any]) -> dict[str, Any]:
    """The record with its content-addressed id (UMP §6.2), id first as records are written."""
    rec = {"ump": rec["ump"], "id": "", **{k: v for k, v in rec.items() if k not in ("ump", "id")}}
    rec["id"] = ids.content_addressed_id(rec)
    return rec


def finish(records: list[dict[str, Any]], ctx: Ctx) -> list[dict[str, Any]]:
    """Sign what the key owns; say what stays unsigned."""
    key = ctx.options.sign_key
    if key is None:
        return records
    did = signer_did(key)
    out = []
    for rec in records:
        if rec.get("scope", {}).get("owner") == did:
            out.append(integrity.sign(rec, key))
        else:
            ctx.warn(f"{rec.get('id')}: owned by {rec.get('scope', {}).get('owner')!r}, not by the signing key "
                     f"({did}): left unsigned")
            out.append(rec)
    return out


def tidy(rec: dict[str, Any]) -> dict[str, Any]:
    """Members in the order the spec lists them (restoring appends the mapped ones at the end)."""
    order = ("ump", "id", "kind", "body", "scope", "time", "lifecycle", "supersedes", "superseded_by",
             "relations", "provenance", "consent", "integrity")
    out = {k: rec[k] for k in order if k in rec}
    out.update({k: v for k, v in rec.items() if k not in out})
    return out


# -- the format --------------------------------------------------------------------------------------

def _one_record(document: Any) -> Any:
    # UMP's file binding reads one record object as a document
    return [document] if isinstance(document, dict) else document


def read_path(path: str) -> list[Any]:
    """Through the file binding (suite/ump/files.py): `.ump.json`, NDJSON, `.ump.md`, folders."""
    loaded = ump_files.load(path)
    if loaded.problems:
        raise InvalidInput("ump", [f"{p.source}{' ' + p.pointer if p.pointer else ''}: {p.message} ({p.requirement})"
                                   for p in loaded.problems])
    return [located.record for located in loaded.records]


def dumps(document: Any, output: str | None) -> str:
    if output and output.lower().endswith((".ndjson", ".jsonl")):
        return ump_files.dump_ndjson(document)
    return ump_files.dump_json(document)


FORMAT = Format(
    "ump", label="UMP", version=UMP_VERSION, record="record",
    # the record schema is closed (additionalProperties false) everywhere but this open payload
    carrier="/body/structured/x-extensions",
    # every member of the record schema, at the depth a conversion treats differently; a record list
    # has no envelope
    record_fields=("/ump", "/id", "/kind", "/body/text", "/body/structured", "/scope/owner", "/scope/user",
                   "/scope/project", "/scope/agent", "/scope/session", "/scope/visibility", "/time/created",
                   "/time/observed", "/time/valid_from", "/time/valid_to", "/lifecycle/confidence",
                   "/lifecycle/salience", "/lifecycle/decay", "/lifecycle/status", "/supersedes", "/superseded_by",
                   "/relations", "/provenance", "/consent/retention", "/consent/exportable", "/consent/redact",
                   "/integrity"),
    problems=validate.ump_problems, record_problems=validate.ump_record_problems,
    corpus=corpora.ump_corpus, normalize=_one_record, tidy=tidy, jsonl=True, read_path=read_path, dumps=dumps,
    extensions=(".ump.ndjson", ".ump.json", ".ump.md", ".ndjson", ".jsonl"),
    extensions_help=".ump.json, .ump.md, .ndjson, .jsonl or a folder", tenant_help="UMP owner",
)
