"""Signed reports (issue 6): who ran the suite, and that the report was not edited since.

The signature is one optional member of the report::

    "signature": {
      "alg":   "ed25519",
      "hash":  "blake3:<hex of BLAKE3(JCS(report without "signature"))>",
      "key":   "did:key:z6Mk…",          # the signer's Ed25519 public key (suite/ump/did.py)
      "value": "<base64 of the Ed25519 signature over the 32 raw BLAKE3 digest bytes>"
    }

JCS (RFC 8785) makes the hash independent of key order and whitespace, so a report that is
re-indented or re-serialised still verifies; any change of content does not. The digest is
signed rather than the canonical bytes so a verifier can tell "content changed" (hash
mismatch) from "signature forged or by another key" (Ed25519 failure).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import blake3
import rfc8785
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from memconform.suite.ump.did import DidError, did_key_from_public_key, public_key_from_did_key

ALG = "ed25519"
_HASH_RE = re.compile(r"^blake3:([0-9a-f]{64})$")


def report_digest(report: dict[str, Any]) -> bytes:
    """BLAKE3 of the JCS form of the report without its signature."""
    body = {k: v for k, v in report.items() if k != "signature"}
    return blake3.blake3(rfc8785.dumps(body)).digest()


def sign_report(report: dict[str, Any], signing_key: SigningKey | bytes) -> dict[str, Any]:
    """A copy of the report with a `signature` block; an existing signature is replaced.
    `signing_key` is a nacl SigningKey or its 32-byte seed."""
    key = signing_key if isinstance(signing_key, SigningKey) else SigningKey(bytes(signing_key))
    digest = report_digest(report)
    signature = {
        "alg": ALG,
        "hash": "blake3:" + digest.hex(),
        "key": did_key_from_public_key(bytes(key.verify_key)),
        "value": base64.b64encode(key.sign(digest).signature).decode("ascii"),
    }
    return {**{k: v for k, v in report.items() if k != "signature"}, "signature": signature}


def verify_report(report: dict[str, Any], expected_key: str | None = None) -> tuple[bool, str]:
    """(ok, reason). With `expected_key` (a did:key), a valid signature by any other key is
    refused as such: a valid signature only proves *someone* signed."""
    sig = report.get("signature") if isinstance(report, dict) else None
    if sig is None:
        return False, "the report is not signed (no 'signature' member)"
    if not isinstance(sig, dict) or set(sig) != {"alg", "hash", "key", "value"}:
        return False, "the signature block must have exactly alg, hash, key and value"
    if sig["alg"] != ALG:
        return False, f"unsupported signature algorithm {sig['alg']!r} (only {ALG!r})"
    m = _HASH_RE.match(sig["hash"]) if isinstance(sig["hash"], str) else None
    if not m:
        return False, "signature hash is not 'blake3:' followed by 64 lowercase hex digits"
    try:
        public = public_key_from_did_key(sig["key"])
    except DidError as exc:
        return False, f"signature key is not an Ed25519 did:key: {exc}"
    try:
        raw = base64.b64decode(sig["value"], validate=True) if isinstance(sig["value"], str) else b""
    except (binascii.Error, ValueError):
        return False, "signature value is not valid base64"
    try:
        digest = report_digest(report)
    except (rfc8785.CanonicalizationError, TypeError, ValueError) as exc:
        return False, f"the report cannot be canonicalised (RFC 8785): {exc}"
    if digest.hex() != m.group(1):
        return False, "the report content does not match the signed hash: it was changed after signing"
    try:
        VerifyKey(public).verify(digest, raw)
    except (BadSignatureError, ValueError):
        return False, f"the signature does not verify under {sig['key']}: forged, corrupted, or by another key"
    if expected_key is not None and sig["key"] != expected_key:
        return False, f"signed by another key: {sig['key']}, expected {expected_key}"
    return True, f"valid signature by {sig['key']}"
