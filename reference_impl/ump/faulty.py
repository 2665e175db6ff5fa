"""The wrong UMP implementations that need more than a line: each named after its fault
(reference_impl/ump/faults.py, where the one-line ones sit beside their entries) and written apart
from the right one (service.py), as Bowtie's miniatures are.

A wrap takes the service and the method it replaces (`original`) and returns the wrong method
(reference_impl/faults.py, `install_wraps`); `after`, `before` and `instead` build the common ones.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable, Mapping
from typing import Any

import blake3

from memconform.reference_impl.ump.engine import _SERVICE_KEY
from memconform.suite.ump import captoken, integrity
from memconform.suite.ump.canonical import canonical_bytes, without_integrity
from memconform.suite.ump.did import did_key_from_public_key

Wrap = Callable[[Any, Callable[..., Any]], Callable[..., Any]]


# -- building wraps --------------------------------------------------------------------------------

def after(operation: str, change: Callable[..., Any]) -> dict[str, Wrap]:
    """The operation's answer, changed: `change(answer)` returns the wrong one."""
    return {operation: lambda service, original: lambda *a, **k: change(original(*a, **k))}


def before(operation: str, change: Callable[..., tuple[tuple[Any, ...], dict[str, Any]]]) -> dict[str, Wrap]:
    """The operation called with changed arguments: `change(*args, **kwargs)` returns (args, kwargs)."""
    def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(*a: Any, **k: Any) -> Any:
            args, kwargs = change(*a, **k)
            return original(*args, **kwargs)
        return wrong
    return {operation: wrap}


def instead(operation: str, wrong: Callable[..., Any]) -> dict[str, Wrap]:
    """The operation replaced outright by `wrong` (called with the operation's arguments)."""
    return {operation: lambda service, original: wrong}


# -- capability tokens (§5.2) ----------------------------------------------------------------------

def _claimed_grant(token: str, expires: float) -> captoken.Grant:
    """The grant a token claims, read without verifying anything."""
    claims = captoken.claims_of(token)
    return captoken.Grant(issuer=claims["iss"], verbs=frozenset(claims["verbs"]),
                          scope={k: v for k, v in claims.get("scope", {}).items() if k in captoken.SCOPE_MEMBERS},
                          expires=expires, jti=claims.get("jti"), version=claims["v"])


def token_optional(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda operation, token: None if token is None else original(operation, token)


def prefix_added(token: str, now: float) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """token-format-lenient: a signature part without its ed25519: prefix is given one."""
    if token.count(".") == 2 and ":" not in token.rsplit(".", 1)[1]:
        head, payload, sig = token.split(".")
        token = f"{head}.{payload}.ed25519:{sig}"
    return (token, now), {}


def time_moved(claim: str) -> Callable[[Any, Callable[..., Any]], Callable[..., Any]]:
    """token-expiry-unchecked, token-nbf-unchecked: the token is judged at a moment its `exp`
    (or `nbf`) allows, so that bound never refuses it."""
    def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(token: str, now: float) -> captoken.Grant:
            claims = captoken.claims_of(token)
            if claim in claims:
                try:
                    t = captoken.read_time(claims[claim], claim, service.policy.token_times)
                    now = min(now, t - 1) if claim == "exp" else max(now, t)
                except captoken.TokenError:
                    pass
            return original(token, now)
        return wrong
    return wrap


def unreadable_time_ignored(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """token-unreadable-time-ignored: fails open, a time it cannot read bounds nothing."""
    def wrong(token: str, now: float) -> captoken.Grant:
        try:
            return original(token, now)
        except captoken.TokenError as exc:
            if exc.code == "bad_payload" and exc.message.startswith(("exp ", "nbf ")):
                return _claimed_grant(token, now + 60)
            raise
    return wrong


def signature_unchecked(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """token-signature-unchecked: a signature that does not verify, its claims taken anyway."""
    def wrong(token: str, now: float) -> captoken.Grant:
        try:
            return original(token, now)
        except captoken.TokenError as exc:
            if exc.code != "signature_invalid":
                raise
            claims = captoken.claims_of(token)
            return _claimed_grant(token, captoken.read_time(claims["exp"], "exp", service.policy.token_times))
    return wrong


def issuer_unchecked(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """token-issuer-unchecked: the token's own claim of whose records it grants is believed,
    whoever signed it."""
    from memconform.reference_impl.ump.service import ANY, _Who

    def wrong(grant: captoken.Grant | None, asserted: Any) -> Any:
        if grant is None:
            return original(grant, asserted)
        return _Who(grant, grant.issuer, grant.scope.get("owner", ANY))
    return wrong


# -- capabilities (§3.1) ---------------------------------------------------------------------------

def each(operation: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Wrap]:
    """The operation's answer (one object) changed in place."""
    def apply(answer: dict[str, Any]) -> dict[str, Any]:
        change(answer)
        return answer
    return after(operation, apply)


def keep(**changes: Any) -> Callable[[dict[str, Any]], None]:
    """An object whose members are set as given (a callable is applied to the member's value)."""
    def change(item: dict[str, Any]) -> None:
        for name, value in changes.items():
            item[name] = value(item[name]) if callable(value) else value
    return change


def capabilities_side_effect(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Each capabilities call snapshots the most recent memory of the partition into a new
    working memory (same owner, visibility and text)."""
    from memconform.reference_impl.ump.service import _owner_of, _scope_of
    from memconform.reference_impl.ump.store import format_time
    from memconform.suite.ump import ids

    def wrong(request: Any, version: str) -> dict[str, Any]:
        answer = original(request, version)
        store = service._store
        newest = store.max_rowid(version)
        latest = store.by_rowid(newest) if newest is not None else None
        if latest is None:
            return answer
        src = latest.record
        now = format_time(service._now())
        rec = {"ump": version, "id": ids.random_id(), "kind": "working", "body": {"text": src["body"]["text"]},
               "scope": dict(_scope_of(src)), "time": {"created": now, "valid_from": now},
               "lifecycle": {"status": "active"},
               "provenance": {"actor": _owner_of(src), "actor_kind": "agent", "method": "capabilities-snapshot"}}
        rec = service._sign(rec)
        with store.transaction():
            rowid = store.insert(version, rec)
        service._publish("created", version, rowid, rec)
        return answer
    return wrong


# -- served records (integrity, §2.8, §6.1) --------------------------------------------------------

def served(change: Callable[[dict[str, Any], Any], dict[str, Any]], *, keyless: bool = False) -> dict[str, Wrap]:
    """Every signed record as served, changed: `change(record, owner's key)`; the stored record
    stays right. Without `keyless`, only records whose owner's key the server holds."""
    from memconform.reference_impl.ump.service import _owner_of

    def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(rec: dict[str, Any], who: Any) -> dict[str, Any]:
            out = original(rec, who)
            if "integrity" not in out:
                return out
            key = service.keyring.for_owner(_owner_of(out))
            return change(out, key) if key is not None or keyless else out
        return wrong
    return {"_present": wrap}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def sign_over_bytes(rec: Mapping[str, Any], key: Any, body: bytes) -> dict[str, Any]:
    """integrity whose content_hash is BLAKE3 of `body` (not the JCS bytes), signed as usual."""
    content_hash = "blake3:" + base64.b32encode(blake3.blake3(body).digest()).decode().rstrip("=").lower()
    out = dict(without_integrity(rec))
    out["integrity"] = {"content_hash": content_hash,
                        "signature": "ed25519:" + _b64(key.sign(blake3.blake3(content_hash.encode()).digest()).signature),
                        "signer": did_key_from_public_key(bytes(key.verify_key))}
    return out


def hash_over_wrong_bytes(rec: dict[str, Any], key: Any) -> dict[str, Any]:
    return sign_over_bytes(rec, key, canonical_bytes(rec) + b" ")


def python_json_hash(rec: dict[str, Any], key: Any) -> dict[str, Any]:
    return sign_over_bytes(rec, key, json.dumps(without_integrity(rec), sort_keys=True, separators=(",", ":"),
                                                ensure_ascii=True).encode())


def signature_over_raw_hash(rec: dict[str, Any], key: Any) -> dict[str, Any]:
    out = integrity.sign(without_integrity(rec), key)
    raw = blake3.blake3(canonical_bytes(without_integrity(out))).digest()
    out["integrity"]["signature"] = "ed25519:" + _b64(key.sign(raw).signature)
    return out


def long_id() -> str:
    """mints-long-ids: 160 random bits, neither of §6.2's forms."""
    return "urn:ump:" + base64.b32encode(secrets.token_bytes(20)).decode("ascii").rstrip("=").lower()


# -- recall (§3.2) ---------------------------------------------------------------------------------

def called_with(operation: str, **values: Any) -> dict[str, Wrap]:
    """The operation called with these keyword arguments, whatever it was asked."""
    return before(operation, lambda *a, **k: (a, {**k, **values}))


def every_result(change: Callable[[dict[str, Any]], None]) -> dict[str, Wrap]:
    """Every recall result ({record, signals, score}) changed in place."""
    def apply(answer: dict[str, Any]) -> dict[str, Any]:
        for item in answer["results"]:
            change(item)
        return answer
    return after("_recall", apply)


def renamed_signal(item: dict[str, Any]) -> None:
    item["signals"] = {("relevance" if k == "similarity" else k): v for k, v in item["signals"].items()}


def drops_long_queries(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    from memconform.reference_impl.ump import ranking

    def wrong(version: str, who: Any, query: str, *a: Any, **k: Any) -> dict[str, Any]:
        if len(ranking.query_terms(query)) > 5:
            return {"results": []}
        return original(version, who, query, *a, **k)
    return wrong


def cross_owner_leak(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Every other owner's record, whatever its visibility."""
    from memconform.reference_impl.ump.service import ANY

    def wrong(who: Any) -> tuple[str, list[Any]]:
        if who.principal is None or who.principal is ANY:
            return "1", []
        sql, params = original(who)
        return f"({sql} OR r.owner != ?)", [*params, who.principal]
    return wrong


def nonstandard_query_code(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """recall-nonstandard-code: a query that is no string answers "bad_request", no §3.7 code."""
    from memconform.reference_impl.ump.engine import UmpError

    def wrong(*a: Any, **k: Any) -> Any:
        try:
            return original(*a, **k)
        except UmpError as exc:
            if exc.code == "invalid_record" and exc.message.startswith("recall: `query`"):
                raise UmpError("bad_request", exc.message) from None
            raise
    return wrong
