"""UMP capability tokens (§5.2) in the format the public reference implementation uses.

    umpcap.<base64url-nopad(JCS(claims))>.ed25519:<base64url-nopad(signature)>

The signature is Ed25519 over BLAKE3 of the payload's base64url text, by the key named in
`iss` (a did:key). Claims: `v` ("ump-cap/1.0", "ump-cap/0.1" accepted), `iss`, `aud?`,
`verbs` (a subset of read/write/derive/export), `scope {owner?, project?, agent?, visibility?}`
(an absent member means any), `nbf?`, `exp`, `jti`.

Times: the public reference implementation writes `exp`/`nbf` as ISO-8601 (RFC 3339) strings and
refuses an expired one ("token expired"); §5.2 says only "verbs × scope × time", so a JWT-style
NumericDate (seconds since the epoch) is as legitimate. `mint` writes either (`times`, "iso" by
default, the public implementation's); `verify` reads what it is told to read (`times`: "iso",
"numeric" or "either") and refuses, never ignores, a time it cannot read: a token whose time
bound cannot be established grants nothing (fail closed).

Verifying a token proves only who signed it. Whether that signer may grant access to a record
(the issuer bound to the owner, §5.2) is the server's decision: `Grant.covers` answers it.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import json
import math
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

import blake3
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from memconform.suite.ump.canonical import CanonicalizationError, canonical_bytes
from memconform.suite.ump.did import DidError, did_key_from_public_key, public_key_from_did_key

PREFIX = "umpcap"
VERSIONS = ("ump-cap/1.0", "ump-cap/0.1")
VERBS = ("read", "write", "derive", "export")
#: How a token writes `exp`/`nbf`: "iso" (RFC 3339 strings, the public implementation's) or
#: "numeric" (NumericDate seconds, as JWT). Readers may also take "either".
TIME_FORMATS = ("iso", "numeric")
DEFAULT_TIMES = "iso"
SCOPE_MEMBERS = ("owner", "project", "agent", "visibility")

#: The verb each operation needs (the reference implementation's mapping).
VERB_FOR_OPERATION = {
    "capabilities": None, "recall": "read", "get": "read", "subscribe": "read", "rehydrate": "read",
    "remember": "write", "revise": "write", "forget": "write", "feedback": "derive",
}


class TokenError(Exception):
    """A token that cannot be honoured. `code` is the reference implementation's reason
    (malformed, bad_sig_format, bad_payload, unsupported_version, signature_invalid,
    not_yet_valid, expired); every one maps to the §3.7 error `unauthorized`."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Grant:
    """The verified claims of a token."""

    issuer: str
    verbs: frozenset[str]
    scope: Mapping[str, str] = field(default_factory=dict)
    expires: float = 0.0
    not_before: float | None = None
    audience: str | None = None
    jti: str | None = None
    version: str = VERSIONS[0]

    def allows_verb(self, verb: str | None) -> bool:
        return verb is None or verb in self.verbs

    def covers(self, record: Mapping[str, Any]) -> bool:
        """Whether the record lies inside the token's scope and the issuer may grant it:
        a token is honoured only for records its issuer owns (§5.2, 'signed by the owner DID')."""
        rec_scope = record.get("scope") if isinstance(record.get("scope"), Mapping) else {}
        if rec_scope.get("owner") != self.issuer:
            return False
        return all(rec_scope.get(k) == v for k, v in self.scope.items() if k in SCOPE_MEMBERS)

    def covers_request_scope(self, scope: Mapping[str, Any] | None) -> bool:
        """Whether a request's own scope (e.g. recall's `scope`) stays inside the token's."""
        scope = scope or {}
        for key, value in self.scope.items():
            if key in scope and scope[key] != value:
                return False
        owner = scope.get("owner")
        return owner is None or owner == self.issuer


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    if not text or any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in text):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _digest(payload_text: str) -> bytes:
    return blake3.blake3(payload_text.encode("ascii")).digest()


def format_time(seconds: float, times: str = DEFAULT_TIMES) -> int | str:
    """A point in time as a token claim: NumericDate or an RFC 3339 UTC string (whole seconds)."""
    if times == "numeric":
        return int(seconds)
    if times == "iso":
        return _dt.datetime.fromtimestamp(int(seconds), _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    raise ValueError(f"token times are one of {TIME_FORMATS}, not {times!r}")


def mint(signing_key: SigningKey, *, verbs: tuple[str, ...] | list[str] = VERBS,
         scope: Mapping[str, str] | None = None, ttl: float = 900.0, now: float | None = None,
         exp: float | None = None, nbf: float | None = None, aud: str | None = None,
         version: str = VERSIONS[0], iss: str | None = None, jti: str | None = None,
         extra: Mapping[str, Any] | None = None, times: str = DEFAULT_TIMES) -> str:
    """A token signed by `signing_key`, its times written as `times` says. `iss` defaults to that
    key's did:key; passing another value makes a token whose claimed issuer is not its signer
    (for negative tests)."""
    now = time.time() if now is None else now
    claims: dict[str, Any] = {
        "v": version,
        "iss": iss or did_key_from_public_key(bytes(signing_key.verify_key)),
        "verbs": list(verbs),
        "scope": dict(scope or {}),
        "exp": format_time(exp if exp is not None else now + ttl, times),
        "jti": jti or secrets.token_hex(8),
    }
    if nbf is not None:
        claims["nbf"] = format_time(nbf, times)
    if aud is not None:
        claims["aud"] = aud
    if extra:
        claims.update(extra)
    try:
        text = canonical_bytes(claims)
    except CanonicalizationError:
        # a claim JCS has no form for (an integer past IEEE doubles: the absurd times of negative
        # tests) is written as plain JSON; the signature covers the payload text, whatever wrote it
        text = json.dumps(claims, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    payload = _b64url(text)
    signature = signing_key.sign(_digest(payload)).signature
    return f"{PREFIX}.{payload}.ed25519:{_b64url(signature)}"


#: The span a token time may name: what RFC 3339 can write (years 0001-9999, the first year Python's
#: calendar holds). A NumericDate outside it (1e308, 10**400) names no moment any clock reaches: read
#: as a time it would make a forever-token of a typo or an overflow, so it is no time either.
EARLIEST = _dt.datetime(1, 1, 1, tzinfo=_dt.timezone.utc).timestamp()
LATEST = _dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=_dt.timezone.utc).timestamp()

_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def read_time(value: Any, name: str, times: str = "either") -> float:
    """A claim's time in seconds since the epoch, read as `times` says; TokenError (bad_payload)
    for anything else: a time that cannot be read bounds nothing, so it is never skipped."""
    try:  # an integer no float can hold (10**400) is no time either
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
            and EARLIEST <= value <= LATEST
    except OverflowError:
        numeric = False
    if numeric and times in ("numeric", "either"):
        return float(value)
    if isinstance(value, str) and times in ("iso", "either") and _RFC3339.match(value):
        try:
            parsed = _dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed.timestamp()
    want = {"numeric": "a NumericDate (seconds since the epoch)", "iso": "an RFC 3339 time with an offset",
            "either": "a NumericDate or an RFC 3339 time with an offset"}[times]
    raise TokenError("bad_payload", f"{name} is not {want}: {value!r}")


def claims_of(token: str) -> dict[str, Any]:
    """The claims of a token without verifying it (for messages and negative tests)."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise TokenError("malformed", "a token is umpcap.<payload>.ed25519:<signature>")
    try:
        claims = json.loads(_b64url_decode(parts[1]))
    except RecursionError:  # nested deeper than the parser goes: no claims can be read
        raise TokenError("bad_payload", "the payload is JSON nested too deep to read") from None
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise TokenError("bad_payload", f"the payload is not base64url JSON ({exc})") from None
    if not isinstance(claims, dict):
        raise TokenError("bad_payload", "the payload is not a JSON object")
    return claims


def verify(token: str, *, now: float | None = None, audience: str | None = None,
           leeway: float = 0.0, times: str = "either") -> Grant:
    """Check format, signature and time window (`exp`/`nbf` read as `times` says). Raises
    TokenError; never checks ownership."""
    if not isinstance(token, str):
        raise TokenError("malformed", "the token is not a string")
    claims = claims_of(token)
    payload_text, sig_part = token.split(".")[1:]
    if not sig_part.startswith("ed25519:"):
        raise TokenError("bad_sig_format", "the signature part must start with ed25519:")
    try:
        signature = _b64url_decode(sig_part[len("ed25519:"):])
    except (ValueError, binascii.Error):
        raise TokenError("bad_sig_format", "the signature is not base64url") from None
    if len(signature) != 64:
        raise TokenError("bad_sig_format", f"an Ed25519 signature has 64 bytes, not {len(signature)}")
    if claims.get("v") not in VERSIONS:
        raise TokenError("unsupported_version", f"token version {claims.get('v')!r} is not one of {VERSIONS}")
    iss = claims.get("iss")
    try:
        public = public_key_from_did_key(iss) if isinstance(iss, str) else None
    except DidError:
        public = None
    if public is None:
        raise TokenError("bad_payload", f"iss {iss!r} is not an Ed25519 did:key")
    verbs = claims.get("verbs")
    if not isinstance(verbs, list) or not verbs or not all(v in VERBS for v in verbs):
        raise TokenError("bad_payload", f"verbs must be a non-empty subset of {VERBS}, got {verbs!r}")
    scope = claims.get("scope", {})
    if not isinstance(scope, dict) or not all(isinstance(v, str) for v in scope.values()):
        raise TokenError("bad_payload", "scope must be an object of strings")
    if "exp" not in claims:
        raise TokenError("bad_payload", "exp is required")
    try:
        VerifyKey(public).verify(_digest(payload_text), signature)
    except BadSignatureError:
        raise TokenError("signature_invalid", "the signature does not verify under the iss key") from None
    now = time.time() if now is None else now
    exp = read_time(claims["exp"], "exp", times)
    nbf = read_time(claims["nbf"], "nbf", times) if "nbf" in claims else None
    if nbf is not None and now + leeway < nbf:
        raise TokenError("not_yet_valid", "nbf lies in the future")
    if now - leeway >= exp:
        raise TokenError("expired", "exp lies in the past")
    aud = claims.get("aud")
    if audience is not None and aud is not None and aud != audience:
        raise TokenError("bad_payload", f"the token is for audience {aud!r}, not {audience!r}")
    return Grant(issuer=iss, verbs=frozenset(verbs), scope={k: v for k, v in scope.items() if k in SCOPE_MEMBERS},
                 expires=exp, not_before=nbf, audience=aud, jti=claims.get("jti"), version=claims["v"])
