"""Record integrity (UMP §2.8, §6.1): BLAKE3 content hash + Ed25519 signature by the owner's did:key.

Exactly the public reference implementation's reading (checked against the signed example
``responsibility-confirmed.ump.json``):

* ``content_hash`` = ``"blake3:"`` + lowercase, unpadded RFC 4648 base32 of BLAKE3-256 over the JCS
  (RFC 8785) bytes of the record without its ``integrity`` member;
* ``signature`` = ``"ed25519:"`` + standard base64 *with* padding of the Ed25519 signature over
  BLAKE3-256(UTF-8 bytes of the ``content_hash`` string) — the hash of the hash string, not the raw
  canonical bytes;
* ``signer`` = the signer's ``did:key`` (see :mod:`.did`); §2.8 wants the operator's key, so a verifier
  also checks ``signer == scope.owner``.

:func:`verify` never raises: malformed integrity blocks become :class:`IntegrityProblem` entries. It
reads the digest and the signature in any unambiguous encoding (`digest_of`, `signature_bytes`): the
encodings above are the public implementation's, the text names none.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import blake3
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from .canonical import CanonicalizationError, canonical_bytes, without_integrity
from .did import DidError, did_key_from_public_key, public_key_from_did_key

__all__ = [
    "content_hash",
    "sign",
    "verify",
    "IntegrityReport",
    "IntegrityProblem",
    "REQ_CONTENT_HASH",
    "REQ_SIGNATURE",
    "REQ_SIGNER_OWNER",
]

REQ_CONTENT_HASH = "ump/integrity-content-hash"
REQ_SIGNATURE = "ump/integrity-signature"
REQ_SIGNER_OWNER = "ump/integrity-signer-owner"
_CODE = "signature_invalid"


def _b32(digest: bytes) -> str:
    return base64.b32encode(digest).decode("ascii").rstrip("=").lower()


def _blake3(data: bytes) -> bytes:
    return blake3.blake3(data).digest()


def content_hash(record: Mapping[str, Any]) -> str:
    """``blake3:<base32>`` of the canonical record minus ``integrity``. Raises CanonicalizationError."""
    return "blake3:" + _b32(_blake3(canonical_bytes(without_integrity(record))))


def _decodings(text: str, size: int) -> dict[str, bytes]:
    """Every encoding `text` reads as `size` bytes in: base32 (either case, padding optional), hex
    (either case), base64 or base64url (padding optional). For 32 and 64 bytes their lengths differ
    (52, 64, 43 characters unpadded; 103, 128, 86), so at most one reads."""
    out: dict[str, bytes] = {}
    bare = text.rstrip("=")
    attempts = (
        ("base32", lambda: base64.b32decode(bare.upper() + "=" * (-len(bare) % 8))),
        ("hex", lambda: bytes.fromhex(text)),
        ("base64", lambda: base64.b64decode(bare + "=" * (-len(bare) % 4), validate=True)),
        ("base64url", lambda: base64.b64decode(bare + "=" * (-len(bare) % 4), altchars=b"-_", validate=True)),
    )
    for name, decode in attempts:
        try:
            raw = decode()
        except (binascii.Error, ValueError):
            continue
        if len(raw) == size:
            out[name] = raw
    return out


def digest_of(hash_string: str) -> bytes | None:
    """The 32-byte BLAKE3 digest a ``blake3:<digest>`` string writes, in any unambiguous encoding.
    §2.8/§6.1 name no encoding (the text's example is "blake3:5e…"); the public implementation writes
    lowercase unpadded base32, and a server writing hex or base64 writes the same digest (red team
    round 17: a hex digest was charged as a wrong hash and a canonicalization fault)."""
    if not hash_string.startswith("blake3:"):
        return None
    found = _decodings(hash_string[len("blake3:"):], 32)
    return next(iter(found.values())) if len(set(found.values())) == 1 else None


def same_hash(found: str, expected: str) -> bool:
    """Whether two ``blake3:`` strings write the same digest, whatever encoding each uses."""
    if found == expected:
        return True
    digest = digest_of(found)
    return digest is not None and digest == digest_of(expected)


def signature_bytes(signature: str) -> bytes | None:
    """The 64 signature bytes after ``ed25519:``: standard base64 (the public implementation's, with
    padding), base64url, hex or base32 (the text fixes no encoding; its example is "ed25519:9c…")."""
    if not signature.startswith("ed25519:"):
        return None
    found = _decodings(signature[len("ed25519:"):], 64)
    return next(iter(found.values())) if len(set(found.values())) == 1 else None


def _hash_digest_for_signing(hash_string: str) -> bytes:
    return _blake3(hash_string.encode("utf-8"))


def sign(record: Mapping[str, Any], signing_key: SigningKey | bytes, encoding: str = "base32") -> dict:
    """A new record (deep copy) carrying ``integrity = {content_hash, signature, signer}``; with
    `encoding` "hex" the digest and the signature are written in lowercase hex instead of the public
    implementation's base32 and base64."""
    if not isinstance(signing_key, SigningKey):
        signing_key = SigningKey(bytes(signing_key))
    new = copy.deepcopy(dict(record))
    digest = _blake3(canonical_bytes(without_integrity(new)))
    ch = "blake3:" + (digest.hex() if encoding == "hex" else _b32(digest))
    sig = signing_key.sign(_hash_digest_for_signing(ch)).signature
    new["integrity"] = {
        "content_hash": ch,
        "signature": "ed25519:" + (sig.hex() if encoding == "hex" else base64.b64encode(sig).decode("ascii")),
        "signer": did_key_from_public_key(bytes(signing_key.verify_key)),
    }
    return new


@dataclass(frozen=True)
class IntegrityProblem:
    requirement: str
    code: str
    pointer: str
    message: str


@dataclass(frozen=True)
class IntegrityReport:
    """What :func:`verify` found.

    ``present`` — the record has an ``integrity`` member. The three checks are ``None`` when not
    performed (no integrity block, or the signer is not a string for ``signer_is_owner``), ``True`` when
    they pass and ``False`` when they fail. ``expected_hash`` is the recomputed content hash (``None`` when
    the record has no canonical form). ``ok`` is true only when integrity is present and every check
    passed.
    """

    present: bool
    hash_ok: bool | None
    signature_ok: bool | None
    signer_is_owner: bool | None
    expected_hash: str | None
    problems: tuple[IntegrityProblem, ...] = ()

    @property
    def ok(self) -> bool:
        return (
            self.present
            and self.hash_ok is True
            and self.signature_ok is True
            and self.signer_is_owner is True
            and not self.problems
        )


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def verify(record: Any) -> IntegrityReport:
    """Check the content hash, the Ed25519 signature and that the signer is ``scope.owner``."""
    if not isinstance(record, Mapping) or "integrity" not in record:
        expected = None
        if isinstance(record, Mapping):
            try:
                expected = content_hash(record)
            except (CanonicalizationError, TypeError, ValueError):
                expected = None
        return IntegrityReport(False, None, None, None, expected, ())

    problems: list[IntegrityProblem] = []

    def problem(req: str, pointer: str, message: str) -> None:
        problems.append(IntegrityProblem(req, _CODE, pointer, message))

    try:
        expected: str | None = content_hash(record)
    except (CanonicalizationError, TypeError, ValueError) as exc:
        expected = None
        problem(REQ_CONTENT_HASH, getattr(exc, "pointer", ""),
                f"the record has no RFC 8785 canonical form, so no content hash can be computed: {exc}")

    integ = record["integrity"]
    if not isinstance(integ, Mapping):
        msg = (f"expected integrity to be an object {{content_hash, signature, signer}}, "
               f"found {type(integ).__name__} {_show(integ)}")
        problem(REQ_CONTENT_HASH, "/integrity", msg)
        problem(REQ_SIGNATURE, "/integrity", msg)
        return IntegrityReport(True, False, False, None, expected, tuple(problems))

    # -- content hash ------------------------------------------------------------------------------
    ch = integ.get("content_hash")
    hash_ok: bool
    if not isinstance(ch, str):
        hash_ok = False
        problem(REQ_CONTENT_HASH, "/integrity/content_hash",
                f"expected a string 'blake3:<base32>'{f' equal to {expected!r}' if expected else ''}, "
                f"found {'nothing' if 'content_hash' not in integ else _show(ch)}")
    elif not ch.startswith("blake3:"):
        hash_ok = False
        problem(REQ_CONTENT_HASH, "/integrity/content_hash",
                f"expected prefix 'blake3:'{f' (the record hashes to {expected!r})' if expected else ''}, "
                f"found {_show(ch)}")
    elif expected is None:
        hash_ok = False
    elif not same_hash(ch, expected):
        hash_ok = False
        found = digest_of(ch)
        problem(REQ_CONTENT_HASH, "/integrity/content_hash",
                f"content_hash is {ch!r} but the record (minus integrity, JCS, BLAKE3) hashes to {expected!r} "
                + (f"(hex {digest_of(expected).hex()}; the content_hash's digest is hex {found.hex()})" if found
                   else "(and the content_hash is no 32-byte digest in base32, hex or base64)"))
    else:
        hash_ok = True

    # -- signature -----------------------------------------------------------------------------------
    signer = integ.get("signer")
    sig = integ.get("signature")
    signature_ok = True
    public_key: bytes | None = None
    if not isinstance(signer, str):
        signature_ok = False
        problem(REQ_SIGNATURE, "/integrity/signer",
                f"expected the signer's did:key string, found "
                f"{'nothing' if 'signer' not in integ else _show(signer)}")
    else:
        try:
            public_key = public_key_from_did_key(signer)
        except DidError as exc:
            signature_ok = False
            problem(REQ_SIGNATURE, "/integrity/signer",
                    f"expected an Ed25519 did:key to verify with, found {_show(signer)}: {exc}")
    sig_bytes: bytes | None = None
    if not isinstance(sig, str):
        signature_ok = False
        problem(REQ_SIGNATURE, "/integrity/signature",
                f"expected a string 'ed25519:<signature>', found "
                f"{'nothing' if 'signature' not in integ else _show(sig)}")
    elif not sig.startswith("ed25519:"):
        signature_ok = False
        problem(REQ_SIGNATURE, "/integrity/signature", f"expected prefix 'ed25519:', found {_show(sig)}")
    else:
        sig_bytes = signature_bytes(sig)
        if sig_bytes is None:
            signature_ok = False
            problem(REQ_SIGNATURE, "/integrity/signature",
                    f"expected the 64 bytes of an Ed25519 signature after 'ed25519:' (read as base64, base64url, hex "
                    f"or base32: the text fixes no encoding), found {_show(sig)}, which none of them reads as 64 bytes")
    if not isinstance(ch, str):
        if signature_ok:
            problem(REQ_SIGNATURE, "/integrity/signature",
                    "the signature covers BLAKE3 of the content_hash string, and there is no content_hash string")
        signature_ok = False
    if signature_ok and public_key is not None and sig_bytes is not None and isinstance(ch, str):
        try:
            VerifyKey(public_key).verify(_hash_digest_for_signing(ch), sig_bytes)
        except (BadSignatureError, ValueError, TypeError):
            signature_ok = False
            problem(REQ_SIGNATURE, "/integrity/signature",
                    f"expected an Ed25519 signature by {signer} over BLAKE3({ch!r}); the signature found "
                    f"does not verify with that key")
        except Exception as exc:  # pragma: no cover - libsodium refusing a malformed key
            signature_ok = False
            problem(REQ_SIGNATURE, "/integrity/signature", f"signature could not be checked: {exc}")

    # -- signer is the owner ------------------------------------------------------------------------------
    signer_is_owner: bool | None
    scope = record.get("scope")
    owner = scope.get("owner") if isinstance(scope, Mapping) else None
    if not isinstance(signer, str):
        signer_is_owner = None
    elif not isinstance(owner, str):
        signer_is_owner = False
        problem(REQ_SIGNER_OWNER, "/scope/owner",
                f"expected scope.owner to be the signer's DID {signer!r}, found "
                f"{'no scope.owner' if owner is None else _show(owner)}")
    elif owner != signer:
        signer_is_owner = False
        problem(REQ_SIGNER_OWNER, "/integrity/signer",
                f"expected the owner's key to sign (scope.owner = {owner!r}); the signer is {signer!r}")
    else:
        signer_is_owner = True

    return IntegrityReport(True, hash_ok, signature_ok, signer_is_owner, expected, tuple(problems))


#: What "sign the hash" (§6.1) can be read to sign, the public implementation's reading first:
#: BLAKE3 of the content_hash string, the raw 32-byte BLAKE3 digest, the content_hash string itself.
SIGNATURE_INPUTS = ("blake3-of-hash-string", "digest", "hash-string")


def signed_over(record: Any) -> str | None:
    """Which reading of "sign the hash" the record's signature verifies under its signer's key (one
    of SIGNATURE_INPUTS), or None when it verifies under none or cannot be read. Only
    "blake3-of-hash-string" satisfies ump/integrity-signature (the public implementation's input);
    the others are as literal readings of the text (docs/catalogue-ump.md)."""
    integ = record.get("integrity") if isinstance(record, Mapping) else None
    if not isinstance(integ, Mapping):
        return None
    ch, sig, signer = integ.get("content_hash"), integ.get("signature"), integ.get("signer")
    if not (isinstance(ch, str) and isinstance(sig, str) and sig.startswith("ed25519:") and isinstance(signer, str)):
        return None
    try:
        key = VerifyKey(public_key_from_did_key(signer))
    except (DidError, ValueError, TypeError):
        return None
    sig_bytes = signature_bytes(sig)
    if sig_bytes is None:
        return None
    messages = {"blake3-of-hash-string": _hash_digest_for_signing(ch), "hash-string": ch.encode("utf-8")}
    digest = digest_of(ch)
    if digest is not None:
        messages["digest"] = digest
    for name in SIGNATURE_INPUTS:
        if name in messages:
            try:
                key.verify(messages[name], sig_bytes)
            except (BadSignatureError, ValueError, TypeError):
                continue
            return name
    return None
