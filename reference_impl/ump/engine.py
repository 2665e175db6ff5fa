"""The reference implementation's UMP record engine: admission, an sqlite store, and the file
binding (§4.3). The live operations build on it.

It builds on the judge's record model (DESIGN.md), and every deliberate deviation is a named
fault (`memconform.reference_impl.ump.faults`).
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import blake3
from nacl.signing import SigningKey

from memconform.suite.ump import consent, files, ids, integrity, markdown, record as ump_record
from memconform.suite.ump.canonical import canonical_bytes, without_integrity
from memconform.suite.ump.did import did_key_from_public_key
from memconform.suite.ump.testkeys import TEST_KEY_NAMES, test_signing_key

#: Validation findings each `accepts-*` fault lets through.
_IGNORED_BY_FAULT = {
    "accepts-missing-fields": "ump/record-required-fields",
    "accepts-unknown-version": "ump/record-version",
    "accepts-unknown-major": "ump/reject-unknown-major",
    "accepts-bad-ids": "ump/record-id-format",
    "accepts-unknown-kind": "ump/record-kind",
    "accepts-unknown-visibility": "ump/record-visibility",
    "accepts-bad-time": "ump/record-time",
    "accepts-bad-field-types": "ump/record-field-types",
}

#: The reference store's own service key: never an owner's, used only by a fault.
_SERVICE_KEY = SigningKey(blake3.blake3(b"memconform reference service key").digest())


class UmpError(Exception):
    """An error the spec names (§3.7): `code` is what goes on the wire."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Keyring:
    """Owner keys the operator of this store holds (sign on write)."""

    keys: Mapping[str, SigningKey]

    @classmethod
    def with_test_keys(cls) -> Keyring:
        keys = {}
        for name in TEST_KEY_NAMES:
            if name == "mallory":  # the adversary's key is never the operator's
                continue
            key = test_signing_key(name)
            keys[did_key_from_public_key(bytes(key.verify_key))] = key
        return cls(keys)

    def for_owner(self, owner: Any) -> SigningKey | None:
        return self.keys.get(owner) if isinstance(owner, str) else None


class UmpEngine:
    def __init__(self, version: str = "1.0", fault: str | None = None, keyring: Keyring | None = None,
                 db: str = ":memory:", variants: tuple[str, ...] = ()):
        from memconform.reference_impl import variants as switches
        from memconform.reference_impl.ump.policy import UmpPolicy

        if version not in ump_record.VERSIONS:
            raise ValueError(f"unsupported UMP version {version!r}")
        self.policy = switches.apply(UmpPolicy(), "ump", variants)
        self.version = version
        self.fault = fault
        self.keyring = keyring or Keyring.with_test_keys()
        self._db = sqlite3.connect(db, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, body TEXT NOT NULL)")

    # -- admission -------------------------------------------------------------------------

    def admit(self, rec: Any) -> dict[str, Any]:
        """Validate one record and return it as it will be stored; raises UmpError."""
        ignored = _IGNORED_BY_FAULT.get(self.fault or "")
        if self.policy.unknown_minor == "accept" and isinstance(rec, dict) and isinstance(rec.get("ump"), str):
            known = ump_record.known_minor(rec["ump"])
            if known is not None and known != rec["ump"]:
                rec = dict(rec, ump=known)  # minors are additive (§8): read as the version known of that major
        violations = [v for v in ump_record.validate(rec) if v.requirement != ignored]
        if self.fault == "accepts-unknown-version" and isinstance(rec, dict):
            declared = rec.get("ump")
            known_major = isinstance(declared, str) and declared.split(".")[0] in {"0", "1"}
            violations = [v for v in violations
                          if not (known_major and v.requirement == "ump/reject-unknown-major")]
        if violations:
            first = violations[0]
            raise UmpError("invalid_record", f"{first.pointer or '/'}: {first.message} [{first.requirement}]")
        rec = dict(rec)
        if not isinstance(rec.get("id"), str) or not rec["id"]:
            rec["id"] = ids.random_id()  # only reachable under a fault: a valid record has an id
        if "integrity" in rec and self.fault != "accepts-bad-signatures":
            report = integrity.verify(rec)
            if not report.ok:
                raise UmpError("signature_invalid", "; ".join(p.message for p in report.problems))
        if (rec.get("ump") in ump_record.VERSIONS and rec.get("ump") != self.version
                and self.fault != "keeps-0.1-on-import"):
            rec = ump_record.normalize(rec, self.version)
            rec.pop("integrity", None)  # the old signature covered the old version label
            key = self.keyring.for_owner(rec.get("scope", {}).get("owner"))
            if key is not None:
                rec = self._sign(rec, key)
        return rec

    def import_records(self, records: Iterable[Any]) -> list[str]:
        """Admit every record, then store them in one transaction: a rejected batch writes nothing."""
        records = list(records)
        if self.policy.import_batch == "per-record":
            kept, refused = [], None
            for rec in records:
                try:
                    kept.append(self.admit(rec))
                except UmpError as exc:
                    refused = refused or exc  # the first refusal is what the import reports
            with self._db:
                for rec in kept:
                    self._put(rec)
            if refused is not None:
                raise refused
            return [rec["id"] for rec in kept]
        admitted = [self.admit(rec) for rec in records]
        with self._db:
            for rec in admitted:
                self._put(rec)
        return [rec["id"] for rec in admitted]

    def import_text(self, text: str, fmt: str, source: str = "<input>") -> list[str]:
        records = self.read_text(text, fmt, source)
        for rec in records:
            self._reader_faults(rec)
        return self.import_records(records)

    def _reader_faults(self, rec: Any) -> None:
        """Faults of the file reader alone (the store itself still takes these records)."""
        if not isinstance(rec, dict):
            return
        if self.fault == "refuses-working-kind" and rec.get("kind") == "working":
            raise UmpError("invalid_record", "kind 'working' is not accepted by this reader")
        if self.fault == "refuses-unknown-relation-type":
            reserved = {"about", "contradicts", "depends_on", "derived_from", "duplicate_of"}
            for rel in rec.get("relations") or ():
                if isinstance(rel, dict) and rel.get("type") not in reserved:
                    raise UmpError("invalid_record", f"relation type {rel.get('type')!r} is not supported")

    @staticmethod
    def read_text(text: str, fmt: str, source: str = "<input>") -> list[Any]:
        if fmt == "md":
            try:
                return [markdown.from_markdown(text, source=source)]
            except markdown.ProjectionError as exc:
                raise UmpError("invalid_record", str(exc)) from None
        if fmt == "ndjson":
            out = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise UmpError("invalid_record", f"{source} line {n}: not JSON ({exc.msg})") from None
            return out
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UmpError("invalid_record", f"{source}: not JSON ({exc.msg} at line {exc.lineno} "
                                             f"column {exc.colno})") from None
        return doc if isinstance(doc, list) else [doc]

    def _put(self, rec: dict[str, Any]) -> None:
        self._db.execute("INSERT OR REPLACE INTO records (id, body) VALUES (?, ?)",
                         (rec["id"] if isinstance(rec.get("id"), str) else json.dumps(rec.get("id")),
                          json.dumps(rec, ensure_ascii=False)))

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(body) for (body,) in self._db.execute("SELECT body FROM records ORDER BY rowid")]

    def ids(self) -> tuple[str, ...]:
        return tuple(i for (i,) in self._db.execute("SELECT id FROM records ORDER BY rowid"))

    # -- signing ---------------------------------------------------------------------------

    def _sign(self, rec: dict[str, Any], key: SigningKey) -> dict[str, Any]:
        if self.fault == "signs-with-service-key":
            key = _SERVICE_KEY
        if self.fault == "hash-over-wrong-bytes":
            body = canonical_bytes(rec)  # integrity included when present: the wrong bytes
            digest = base64.b32encode(blake3.blake3(body + b" ").digest()).decode().rstrip("=").lower()
            content_hash = "blake3:" + digest
            signed = dict(without_integrity(rec))
            signature = key.sign(blake3.blake3(content_hash.encode()).digest()).signature
            signed["integrity"] = {"content_hash": content_hash,
                                   "signature": "ed25519:" + base64.b64encode(signature).decode(),
                                   "signer": did_key_from_public_key(bytes(key.verify_key))}
            return signed
        if self.fault == "signature-over-raw-hash":
            signed = integrity.sign(rec, key)
            raw = blake3.blake3(canonical_bytes(without_integrity(rec))).digest()
            signed["integrity"]["signature"] = "ed25519:" + base64.b64encode(key.sign(raw).signature).decode()
            return signed
        return integrity.sign(rec, key)

    # -- export (file binding, §4.3) -------------------------------------------------------

    def export_records(self, fmt: str = "json") -> list[dict[str, Any]]:
        out = []
        for stored in self.records():
            rec = stored
            if not consent.is_exportable(rec) and self.fault != "exports-unexportable":
                continue
            if self.fault != "export-ignores-redact":
                rec = consent.apply_redact(rec)
            if self.fault == "exports-other-version":
                rec = dict(rec, ump="0.1" if self.version != "0.1" else "1.0")
            if self.fault == "export-drops-provenance":
                rec = {k: v for k, v in rec.items() if k != "provenance"}
            if self.fault == "export-opaque-owner":
                rec = dict(rec, scope=dict(rec["scope"], owner="account-42"))
            if self.fault == "json-export-drops-structured" and fmt in ("json", "ndjson"):
                rec = _drop_structured(rec)
            key = self.keyring.for_owner(rec.get("scope", {}).get("owner"))
            if key is not None:  # sign on write with the owner's key
                rec = self._sign(without_integrity(rec), key)
            elif without_integrity(rec) != without_integrity(stored):
                rec = without_integrity(rec)  # a signature over other bytes would be a lie
            out.append(rec)
        return out

    def export_json(self) -> str:
        text = files.dump_json(self.export_records("json"))
        if self.fault == "json-export-trailing-comma":
            text = text.rstrip().removesuffix("]").rstrip() + ",\n]\n"
        return text

    def export_ndjson(self) -> str:
        return files.dump_ndjson(self.export_records("ndjson"))

    def export_md(self) -> dict[str, str]:
        """One `.ump.md` document per record, keyed by a safe file name."""
        out = {}
        for rec in self.export_records("md"):
            if self.fault == "md-drops-relations":
                rec = {k: v for k, v in rec.items() if k != "relations"}
            text = markdown.to_markdown(rec)
            if self.fault == "md-unterminated-front-matter":
                head, _, body = text.partition("\n---\n")
                text = head + "\n\n" + body
            out[_file_name(rec["id"])] = text
        return out


def _drop_structured(rec: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in rec.get("body", {}).items() if k != "structured"}
    return dict(rec, body=body)


def _file_name(record_id: str) -> str:
    suffix = record_id.rsplit(":", 1)[-1]
    safe = "".join(c for c in suffix if c.isalnum() or c in "-_") or "record"
    return f"{safe}.ump.md"
