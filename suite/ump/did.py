"""W3C DIDs and the ``did:key`` method for Ed25519 keys (UMP §5.1, §2.8).

``did:key:z<base58btc(0xed 0x01 ‖ 32-byte public key)>``: multibase prefix ``z`` (base58btc, Bitcoin
alphabet), multicodec ``ed25519-pub`` (varint 0xed → bytes ``ed 01``). This is what the public reference
implementation writes in ``integrity.signer`` and ``scope.owner``.
"""

from __future__ import annotations

import re

import base58

__all__ = ["DidError", "did_key_from_public_key", "public_key_from_did_key", "is_did", "ED25519_MULTICODEC"]

ED25519_MULTICODEC = b"\xed\x01"
_B58_ALPHABET = set("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")

# W3C DID Core §3.1: did = "did:" method-name ":" method-specific-id
#   method-name = 1*method-char ; method-char = %x61-7A / DIGIT
#   method-specific-id = *( *idchar ":" ) 1*idchar ; idchar = ALPHA / DIGIT / "." / "-" / "_" / pct-encoded
_IDCHAR = r"(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})"
_DID_RE = re.compile(rf"^did:[a-z0-9]+:(?:{_IDCHAR}*:)*{_IDCHAR}+$")


class DidError(ValueError):
    """A string is not a usable Ed25519 ``did:key``. ``reason`` is a stable code:

    ``not-did-key`` (not ``did:key:…``), ``not-multibase-z`` (the key is not multibase base58btc),
    ``bad-base58`` (characters outside the base58btc alphabet, or empty), ``wrong-multicodec``
    (not an Ed25519 public key), ``wrong-length`` (the key is not 32 bytes).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def did_key_from_public_key(pk: bytes) -> str:
    """``did:key`` for a 32-byte Ed25519 public key."""
    pk = bytes(pk)
    if len(pk) != 32:
        raise DidError("wrong-length", f"an Ed25519 public key is 32 bytes, got {len(pk)}")
    return "did:key:z" + base58.b58encode(ED25519_MULTICODEC + pk).decode("ascii")


def public_key_from_did_key(did: str) -> bytes:
    """The 32-byte Ed25519 public key inside a ``did:key``; :class:`DidError` says precisely why not."""
    if not isinstance(did, str):
        raise DidError("not-did-key", f"expected a did:key string, found {type(did).__name__}")
    if not did.startswith("did:key:"):
        shown = did if len(did) <= 60 else did[:57] + "..."
        raise DidError("not-did-key", f"expected a DID starting with 'did:key:', found {shown!r}")
    msid = did[len("did:key:") :]
    if not msid.startswith("z"):
        raise DidError(
            "not-multibase-z",
            f"did:key method-specific id must be multibase base58btc (prefix 'z'), found prefix {msid[:1]!r}",
        )
    encoded = msid[1:]
    if not encoded:
        raise DidError("bad-base58", "did:key has no key material after the multibase prefix 'z'")
    bad = sorted({c for c in encoded if c not in _B58_ALPHABET})
    if bad:
        raise DidError("bad-base58", f"did:key contains characters outside base58btc: {''.join(bad)!r}")
    try:
        raw = base58.b58decode(encoded)
    except ValueError as exc:  # pragma: no cover - alphabet already checked
        raise DidError("bad-base58", f"did:key is not valid base58btc: {exc}") from exc
    if raw[:2] != ED25519_MULTICODEC:
        raise DidError(
            "wrong-multicodec",
            f"did:key multicodec must be ed25519-pub (0xed 0x01), found {raw[:2].hex(' ') or 'nothing'}",
        )
    key = raw[2:]
    if len(key) != 32:
        raise DidError("wrong-length", f"did:key Ed25519 public key must be 32 bytes, found {len(key)}")
    return key


def is_did(s: object) -> bool:
    """True when ``s`` matches W3C DID syntax ``did:<method>:<method-specific-id>`` (no path/query/fragment)."""
    return isinstance(s, str) and _DID_RE.fullmatch(s) is not None  # fullmatch: `$` would take a final newline
