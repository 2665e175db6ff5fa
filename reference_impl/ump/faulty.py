"""The wrong UMP implementations that need more than a line: each named after its fault
(reference_impl/ump/faults.py, where the one-line ones sit beside their entries) and written apart
from the right one (service.py), as Bowtie's miniatures are.

A wrap takes the service and the method it replaces (`original`) and returns the wrong method
(reference_impl/faults.py, `install_wraps`); `after`, `before` and `instead` (reference_impl/wraps.py)
build the common ones.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import secrets
from collections.abc import Callable, Mapping
from typing import Any

import blake3

from memconform.reference_impl.ump.engine import _SERVICE_KEY, UmpError
from memconform.suite.ump import captoken, integrity
from memconform.suite.ump.canonical import canonical_bytes, without_integrity
from memconform.suite.ump.did import did_key_from_public_key
from memconform.reference_impl.wraps import Wrap, after, before, drop, each, instead, keep  # noqa: F401 (the table uses them)


# -- the file binding (engine.py, §4.3) -------------------------------------------------------------

def validation_ignores(requirement: str) -> dict[str, Wrap]:
    """Import lets through every finding of one requirement."""
    return after("_violations", lambda found: [v for v in found if v.requirement != requirement])


def any_version_of_a_known_major(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """accepts-unknown-version: any `ump` whose major is 0 or 1 passes (an unknown major is still refused)."""
    def wrong(rec: Any) -> list[Any]:
        found = [v for v in original(rec) if v.requirement != "ump/record-version"]
        declared = rec.get("ump") if isinstance(rec, dict) else None
        if isinstance(declared, str) and declared.split(".")[0] in {"0", "1"}:
            found = [v for v in found if v.requirement != "ump/reject-unknown-major"]
        return found
    return wrong


def _reader_refusing(refused: Callable[[dict[str, Any]], str | None]) -> Wrap:
    """The file reader refuses records the store itself would take: `refused(record)` says why."""
    def wrap(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(text: str, fmt: str, source: str = "<input>") -> list[Any]:
            records = original(text, fmt, source)
            for rec in records:
                reason = refused(rec) if isinstance(rec, dict) else None
                if reason:
                    raise UmpError("invalid_record", reason)
            return records
        return wrong
    return wrap


refuses_working_kind = _reader_refusing(
    lambda rec: "kind 'working' is not accepted by this reader" if rec.get("kind") == "working" else None)

_RESERVED_RELATIONS = {"about", "contradicts", "depends_on", "derived_from", "duplicate_of"}
refuses_unknown_relation_type = _reader_refusing(lambda rec: next(
    (f"relation type {rel.get('type')!r} is not supported" for rel in rec.get("relations") or ()
     if isinstance(rel, dict) and rel.get("type") not in _RESERVED_RELATIONS), None))


def without(member: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The record without `member` (for `after` on a method that answers one record)."""
    return lambda rec: {key: value for key, value in rec.items() if key != member}


def markdown_without_relations(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda rec: original(without("relations")(rec))


def front_matter_unclosed(text: str) -> str:
    head, _, body = text.partition("\n---\n")
    return head + "\n\n" + body


def trailing_comma(text: str) -> str:
    return text.rstrip().removesuffix("]").rstrip() + ",\n]\n"


def drops_structured_in_json(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrong(rec: dict[str, Any], fmt: str) -> dict[str, Any]:
        out = original(rec, fmt)
        if fmt not in ("json", "ndjson"):
            return out
        return dict(out, body={k: v for k, v in out.get("body", {}).items() if k != "structured"})
    return wrong


def stale_signature_after_redact(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """export-rehash-keeps-signature: the exporter signs the record as stored, then applies the
    owner's redact and recomputes the content_hash for the file, keeping the signature: a redacted
    record's signature covers the unredacted record's hash."""
    def wrong(rec: dict[str, Any], key: Any) -> dict[str, Any]:
        signed = original(rec, key)
        stored = next((r for r in engine.records() if r.get("id") == rec.get("id")), None)
        if stored is None or without_integrity(stored) == rec:
            return signed
        before = original(without_integrity(stored), key)["integrity"]["signature"]
        return dict(signed, integrity=dict(signed["integrity"], signature=before))
    return wrong


def successor_under_prior_id(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """export-successor-under-prior-id: the exporter keys a revise chain by its root, so a
    successor is written under the id of the record it supersedes (re-signed by its owner): the
    file holds two different records with one id."""
    def wrong(fmt: str = "json") -> list[dict[str, Any]]:
        out = []
        for rec in original(fmt):
            prior = (rec.get("supersedes") or [None])[0]
            if isinstance(prior, str):
                rec = dict(without_integrity(rec), id=prior)
                key = engine.keyring.for_owner(rec.get("scope", {}).get("owner"))
                rec = engine._sign(rec, key) if key is not None else rec
            out.append(rec)
        return out
    return wrong


def opaque_owner(rec: dict[str, Any]) -> dict[str, Any]:
    return dict(rec, scope=dict(rec["scope"], owner="account-42"))


def labelled_other_version(engine: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrong(rec: dict[str, Any], fmt: str) -> dict[str, Any]:
        return dict(original(rec, fmt), ump="0.1" if engine.version != "0.1" else "1.0")
    return wrong


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


def offset_dropped(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """token-time-offset-dropped: an RFC 3339 exp or nbf is read as if its offset were Z (the
    wall-clock part parsed, the zone thrown away), so a token refused by its real times is granted
    when its naive times would allow it."""
    import datetime as dt

    def naive(value: Any, name: str) -> float:
        if isinstance(value, str) and len(value) > 6 and value[-6] in "+-":
            wall = dt.datetime.fromisoformat(value[:-6]).replace(tzinfo=dt.timezone.utc)
            return wall.timestamp()
        return captoken.read_time(value, name, service.policy.token_times)

    def wrong(token: str, now: float) -> captoken.Grant:
        try:
            return original(token, now)
        except captoken.TokenError as exc:
            if exc.code not in ("expired", "not_yet_valid"):
                raise
            claims = captoken.claims_of(token)
            exp = naive(claims["exp"], "exp")
            nbf = naive(claims["nbf"], "nbf") if "nbf" in claims else None
            if now >= exp or (nbf is not None and now < nbf):
                raise
            return _claimed_grant(token, exp)
    return wrong


def stream_ignores_token_project(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """subscribe-ignores-token-project: the stream asks whether the subscriber may see a record
    as if its token named no project."""
    import dataclasses

    def wrong(who: Any, rowid: int) -> bool:
        if who.grant is not None and "project" in who.grant.scope:
            grant = dataclasses.replace(who.grant, scope={k: v for k, v in who.grant.scope.items() if k != "project"})
            who = dataclasses.replace(who, grant=grant)
        return original(who, rowid)
    return wrong


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


def empty_signature_skipped(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """token-empty-signature-accepted: a token whose signature part is empty (nothing after the last
    dot, or nothing after "ed25519:") is taken as unsigned-but-trusted, its claims believed; a
    signature that is there is checked (found by the blind red team, round 17)."""
    def wrong(token: str, now: float) -> captoken.Grant:
        sig = token.rsplit(".", 1)[-1] if isinstance(token, str) and token.count(".") == 2 else None
        if sig in ("", "ed25519:"):
            claims = captoken.claims_of(token)
            return _claimed_grant(token, captoken.read_time(claims["exp"], "exp", service.policy.token_times))
        return original(token, now)
    return wrong


def superseded_by_overwritten(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """superseded-by-overwritten: a second revise of a prior sets its superseded_by to the newest
    successor alone, dropping the first (found by the blind red team, round 17)."""
    def wrong(prior: dict[str, Any], succ: dict[str, Any], valid_from: str) -> dict[str, Any]:
        out = original(prior, succ, valid_from)
        out["superseded_by"] = [succ["id"]]
        return out
    return wrong


def prior_closed_before_validating(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """revise-refused-closes-prior: the prior's valid time is closed before the successor is
    validated, and a refused revise leaves it closed (its stored bytes changed, no longer matching
    their signature; found by the blind red team, round 17)."""
    from memconform.reference_impl.ump.store import format_time

    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        try:
            return original(request, version, grant)
        except UmpError as exc:
            rid = request.get("id") if isinstance(request, dict) else None
            stored = service._store.get(version, rid) if exc.code == "invalid_record" and isinstance(rid, str) else None
            patch = request.get("patch") if isinstance(request, dict) else None
            # the kind is validated last, after the prior was closed (the realistic order of the bug)
            if stored is not None and isinstance(stored.record.get("time"), dict) and isinstance(patch, dict) \
                    and "kind" in patch:
                rec = copy.deepcopy(stored.record)
                rec["time"]["valid_to"] = format_time(service._now())
                with service._store.transaction():
                    service._store.update(stored.rowid, rec)
            raise
    return wrong


def refused_after_storing(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """consent-refused-but-stored: a record whose consent.retention elapsed before it arrived is
    answered consent_violation, after it was stored anyway, as if authored at the moment it arrived
    (so it stays active and recallable; found by the blind red team, round 17)."""
    from memconform.reference_impl.ump.store import format_time, parse_duration, parse_time, to_us

    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        raw = request.get("record", request) if isinstance(request, dict) else None
        cons = raw.get("consent") if isinstance(raw, dict) and isinstance(raw.get("consent"), dict) else {}
        retention = parse_duration(cons.get("retention")) if "retention" in cons else None
        created = parse_time((raw.get("time") or {}).get("created")) if isinstance(raw, dict) \
            and isinstance(raw.get("time"), dict) else None
        now = service._now()
        if retention is None or created is None or created + retention > to_us(now):
            return original(request, version, grant)
        fresh = without_integrity(copy.deepcopy(raw))
        fresh["time"] = dict(fresh["time"], created=format_time(now))
        original({"record": fresh} if "record" in request else fresh, version, grant)
        raise UmpError("consent_violation", "the record's consent.retention elapsed before it arrived")
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


def capabilities_remembers_client(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """capabilities-remembers-client: a capabilities call announcing a client stores a public
    identity memory about it, owned and signed by the server's own DID (a 'connected clients'
    feature written into the memory store)."""
    from memconform.reference_impl.ump.store import format_time
    from memconform.suite.ump import ids

    def wrong(request: Any, version: str) -> dict[str, Any]:
        answer = original(request, version)
        client = request.get("client") if isinstance(request, dict) else None
        if not isinstance(client, dict):
            return answer
        now = format_time(service._now())
        server_did = did_key_from_public_key(bytes(_SERVICE_KEY.verify_key))
        rec = {"ump": version, "id": ids.random_id(), "kind": "identity",
               "body": {"text": f"client {client.get('name')} connected"},
               "scope": {"owner": server_did, "visibility": "public"}, "time": {"created": now, "valid_from": now},
               "lifecycle": {"status": "active"},
               "provenance": {"actor": server_did, "actor_kind": "system", "method": "capabilities"}}
        rec = integrity.sign(rec, _SERVICE_KEY)
        store = service._store
        with store.transaction():
            rowid = store.insert(version, rec)
        service._publish("created", version, rowid, rec)
        return answer
    return wrong


def successor_in_token_scope_only(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """revise-owner-escape: the successor must match what the token's scope names; who owns it is
    not asked again (the prior's owner was checked)."""
    from memconform.reference_impl.ump.service import _scope_of

    def wrong(who: Any, succ: Mapping[str, Any], grant: Any) -> None:
        scope = _scope_of(succ)
        for key, value in service._token_scope(who).items():
            if scope.get(key) != value:
                raise UmpError("forbidden_scope", f"revise: the successor's {key} lies outside the token's scope")
    return wrong


def kind_filter_after_limit(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """kind-filter-after-limit: the search runs without the kind filter, and the page it answers
    (already cut to `limit`) is filtered by kind afterwards."""
    def wrong(*a: Any, kinds: list[str] | None, **k: Any) -> dict[str, Any]:
        answer = original(*a, kinds=None, **k)
        if kinds is not None:
            answer["results"] = [r for r in answer["results"] if r["record"].get("kind") in kinds]
        return answer
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
    def wrong(*a: Any, **k: Any) -> Any:
        try:
            return original(*a, **k)
        except UmpError as exc:
            if exc.code == "invalid_record" and exc.message.startswith("recall: `query`"):
                raise UmpError("bad_request", exc.message) from None
            raise
    return wrong


# -- remember (§3.3) and get (§3.4) ---------------------------------------------------------------


def skipped(*operations: str) -> dict[str, Wrap]:
    """Checks that no longer refuse anything."""
    return {operation: (lambda service, original: lambda *a, **k: None) for operation in operations}


def completed(change: Callable[[dict[str, Any]], bool]) -> dict[str, Wrap]:
    """The record remember completed (§3.3), changed in place: `change(record)` says whether it
    changed (so that the server signs it again)."""
    def apply(answer: tuple[dict[str, Any], bool, bool, str]) -> tuple[dict[str, Any], bool, bool, str]:
        rec, changed, minted, effective = answer
        return rec, change(rec) or changed, minted, effective
    return after("_complete", apply)


def empty_body(rec: dict[str, Any]) -> bool:
    if "body" not in rec:
        rec["body"] = {"text": ""}
    return False


def kind_lowered(rec: dict[str, Any]) -> bool:
    kind = rec.get("kind")
    if isinstance(kind, str) and kind != kind.lower():
        rec["kind"] = kind.lower()
    return False


def hints_rounded(rec: dict[str, Any]) -> bool:
    life = rec.get("lifecycle")
    changed = False
    for key in ("confidence", "salience"):
        value = life.get(key) if isinstance(life, dict) else None
        if isinstance(value, float) and round(value, 2) != value:
            life[key] = round(value, 2)
            changed = True
    return changed


def ascii_text(rec: dict[str, Any]) -> bool:
    body = rec.get("body")
    if isinstance(body, dict) and isinstance(body.get("text"), str) and not body["text"].isascii():
        body["text"] = body["text"].encode("ascii", "replace").decode("ascii")
        return True
    return False


def import_must_have(member: str) -> Wrap:
    """imports-need-id, imports-need-time: a record that declares `ump` taken for an import that
    must be complete."""
    def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(raw: dict[str, Any], version: str, now: Any) -> Any:
            if "ump" in raw and member not in raw:
                raise UmpError("invalid_record", f"/{member} is missing; a record that declares its `ump` version is "
                                                 "an import and must be complete")
            return original(raw, version, now)
        return wrong
    return wrap


def refuses_identity(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrong(rec: dict[str, Any], version: str) -> None:
        if rec.get("kind") == "identity":
            raise UmpError("invalid_record", "/kind: identity records are not accepted by this server")
        original(rec, version)
    return wrong


def opaque_owner_taken(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """accepts-opaque-owner: an owner that is no DID is taken for a local account, which any
    token may write."""
    from memconform.reference_impl.ump.service import _owner_of
    from memconform.suite.ump.did import is_did

    def wrong(who: Any, rec: dict[str, Any]) -> None:
        if is_did(_owner_of(rec)):
            original(who, rec)
    return wrong


def merged_under_new_id(answer: dict[str, Any]) -> None:
    from memconform.suite.ump import ids

    answer["id"] = ids.random_id()


def get_unknown_null(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """An unknown content-addressed (52-character) id answers {record: null}."""
    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        try:
            return original(request, version, grant)
        except UmpError as exc:
            rid = request.get("id") if isinstance(request, dict) else None
            if exc.code == "not_found" and isinstance(rid, str) and len(rid) == 60 \
                    and service._store.get(version, rid) is None:
                return {"record": None}
            raise
    return wrong


def get_prefix_match(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A "short id" convenience: an id the store does not hold that begins a stored id (of at least
    12 characters) gets that record."""
    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        try:
            return original(request, version, grant)
        except UmpError as exc:
            rid = request.get("id") if isinstance(request, dict) else None
            if exc.code != "not_found" or not isinstance(rid, str) or len(rid) < 12:
                raise
            row = service._store.db.execute(
                "SELECT id FROM records WHERE version = ? AND substr(id, 1, ?) = ? ORDER BY rowid LIMIT 1",
                (version, len(rid), rid)).fetchone()
            if row is None:
                raise
            return original({**request, "id": row["id"]}, version, grant)
    return wrong


def redact_skipped_scoped_recall(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A recall naming another owner's scope serves that owner's records as stored: the redaction
    runs on the default (own-records) path only."""
    def wrong(version: str, who: Any, query: str, scope: Any, **kwargs: Any) -> dict[str, Any]:
        out = original(version, who, query, scope, **kwargs)
        owner = scope.get("owner")
        if not owner or owner == who.principal:
            return out
        for result in out["results"]:
            stored = service._store.get(version, result["record"].get("id"))
            if stored is not None:
                result["record"] = stored.record
        return out
    return wrong


def visibility_default_public(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A record sent without scope.visibility is completed with visibility public."""
    def wrong(raw: Any, version: str, now: Any) -> Any:
        rec, changed, minted, effective = original(raw, version, now)
        scope = raw.get("scope") if isinstance(raw, dict) else None
        if isinstance(scope, dict) and "visibility" not in scope and isinstance(rec.get("scope"), dict):
            rec["scope"]["visibility"] = "public"
            changed = True
        return rec, changed, minted, effective
    return wrong


def id_collision_overwrite(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """An upsert by id: a remember naming an id the store holds for another record replaces that record."""
    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        try:
            return original(request, version, grant)
        except UmpError as exc:
            raw = request.get("record", request) if isinstance(request, dict) else None
            rid = raw.get("id") if isinstance(raw, dict) else None
            existing = service._store.get(version, rid) if isinstance(rid, str) else None
            if exc.code != "invalid_record" or existing is None or "different record" not in exc.message:
                raise
            with service._store.transaction():
                service._store.delete(existing.rowid)
            return original(request, version, grant)
    return wrong


def recall_query_ascii(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The recall cache key encodes the query as ASCII: a query of any other character fails inside."""
    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        query = request.get("query") if isinstance(request, dict) else None
        if isinstance(query, str):
            query.encode("ascii")  # UnicodeEncodeError: the server's own failure, answered internal
        return original(request, version, grant)
    return wrong


def successor_indexed_as_prior(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """revise copies the prior's search-index entry to the successor: the successor's own text is not
    searchable, the prior's words find it."""
    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        rid = request.get("id") if isinstance(request, dict) else None
        prior = service._store.get(version, rid) if isinstance(rid, str) else None
        out = original(request, version, grant)
        succ = service._store.get(version, out.get("id")) if prior is not None else None
        text = (prior.record.get("body") or {}).get("text") if prior is not None else None
        if succ is not None and isinstance(text, str):
            with service._store.transaction():
                service._store._unindex(succ.rowid)
                service._store._index(succ.rowid, text)
        return out
    return wrong


def without_evidence(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """get-drops-provenance-evidence: the record served without provenance.evidence, re-signed
    with the owner's key (unchanged when the server holds none)."""
    from memconform.reference_impl.ump.service import _owner_of

    def wrong(*a: Any, **k: Any) -> dict[str, Any]:
        answer = original(*a, **k)
        rec = answer["record"]
        prov = rec.get("provenance")
        key = service.keyring.for_owner(_owner_of(rec))
        if not isinstance(prov, dict) or "evidence" not in prov or key is None:
            return answer
        bare = without_integrity(rec)
        bare["provenance"] = {k: v for k, v in prov.items() if k != "evidence"}
        return {"record": integrity.sign(bare, key) if "integrity" in rec else bare}
    return wrong


# -- remember of another store's export (interop only) ---------------------------------------------

def reminted(rec: dict[str, Any]) -> bool:
    """remember-remints-supplied-ids: a well-formed id of its own replaced (re-signed after)."""
    from memconform.suite.ump import ids

    if isinstance(rec.get("id"), str) and ids.ID_PATTERN.fullmatch(rec["id"]):
        rec["id"] = ids.random_id()
        return True
    return False


def resigned_with_service_key() -> dict[str, Wrap]:
    """remember-resigns-with-service-key: a record that arrives signed is re-signed with the
    server's own key, and the server's read check passes that signature."""
    def stored_form(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(rec: dict[str, Any], raw: Mapping[str, Any], changed: bool) -> dict[str, Any]:
            out = original(rec, raw, changed)
            return integrity.sign(without_integrity(out), _SERVICE_KEY) if "integrity" in raw else out
        return wrong

    def integrity_ok(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        service_did = did_key_from_public_key(bytes(_SERVICE_KEY.verify_key))

        def wrong(rec: Mapping[str, Any]) -> bool:
            report = integrity.verify(rec)
            if report.ok:
                return True
            return bool(report.hash_ok and report.signature_ok and report.signer_is_owner is False
                        and (rec.get("integrity") or {}).get("signer") == service_did)
        return wrong
    return {"_stored_form": stored_form, "_integrity_ok": integrity_ok}


def one_key_for_all() -> dict[str, Wrap]:
    """signs-all-owners-with-one-key: the one key loaded signs every owner's records, and the
    server trusts it on read whoever owns the record."""
    def signing_key(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(owner: Any) -> Any:
            key = original(owner)
            return next(iter(service.keyring.keys.values())) if key is not None else None
        return wrong

    def integrity_ok(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(rec: Mapping[str, Any]) -> bool:
            report = integrity.verify(rec)
            if report.ok:
                return True
            return bool(report.hash_ok and report.signature_ok
                        and (rec.get("integrity") or {}).get("signer") in service.keyring.keys)
        return wrong
    return {"_signing_key": signing_key, "_integrity_ok": integrity_ok}


def one_key_signer_named_owner() -> dict[str, Wrap]:
    """signs-all-owners-with-one-key-as-owner: the one key loaded signs every owner's records while
    integrity.signer still names the record's owner (a blind red team's server, round 17), so no
    record of another owner verifies; the server trusts its own key on read and serves them."""
    def sign(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(rec: dict[str, Any]) -> Any:
            out = original(rec)
            integ = out.get("integrity") if isinstance(out, dict) else None
            owner = (rec.get("scope") or {}).get("owner")
            if isinstance(integ, dict) and isinstance(owner, str) and owner.startswith("did:key:"):
                out = dict(out, integrity=dict(integ, signer=owner))
            return out
        return wrong
    def integrity_ok(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(rec: Mapping[str, Any]) -> bool:
            if original(rec):
                return True
            # what its own key signed, it trusts on read, whatever signer says
            one = next(iter(service.keyring.keys))
            integ = rec.get("integrity")
            if not isinstance(integ, Mapping):
                return False
            report = integrity.verify(dict(rec, integrity=dict(integ, signer=one)))
            return bool(report.hash_ok and report.signature_ok)
        return wrong
    return {"_signing_key": one_key_for_all()["_signing_key"], "_integrity_ok": integrity_ok, "_sign": sign}


# -- revise (§3.5) and forget (§3.6) ---------------------------------------------------------------

def recoded(operation: str, code: str, wrong_code: str, message: Callable[..., str]) -> dict[str, Wrap]:
    """The operation's refusals with `code` answered with `wrong_code` (and `message(*args)`)."""
    def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(*a: Any, **k: Any) -> Any:
            try:
                return original(*a, **k)
            except UmpError as exc:
                if exc.code != code:
                    raise
                raise UmpError(wrong_code, message(*a, **k)) from None
        return wrong
    return {operation: wrap}


def prior_keeps(member: str) -> dict[str, Wrap]:
    """The prior of a revise keeps `member` as it was (or without it)."""
    def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(prior: dict[str, Any], succ: dict[str, Any], valid_from: str) -> dict[str, Any]:
            out = original(prior, succ, valid_from)
            if member in prior:
                out[member] = copy.deepcopy(prior[member])
            else:
                out.pop(member, None)
            return out
        return wrong
    return {"_superseded": wrap}


def prior_body_rewritten(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    def wrong(prior: dict[str, Any], succ: dict[str, Any], valid_from: str) -> dict[str, Any]:
        out = original(prior, succ, valid_from)
        out["body"] = dict(out["body"], text=succ["body"]["text"])
        return out
    return wrong


def hard_forget_tombstones(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A hard forget that only tombstones, answering erased."""
    from memconform.reference_impl.ump.service import _status_of

    def wrong(version: str, stored: Any, who: Any, reason: Any, now: Any) -> dict[str, Any]:
        if _status_of(stored.record) != "tombstoned":
            service._tombstone(version, stored, who, reason, now)
        return {"result": "erased"}
    return wrong


def tombstone_deleted(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """forget-deletes: the tombstone announced while the row is still there, then the row erased."""
    from memconform.reference_impl.ump.store import format_time

    def wrong(version: str, stored: Any, tomb: dict[str, Any], reason: Any, requester: Any, now: Any) -> None:
        service._publish("tombstoned", version, stored.rowid, tomb)
        with service._store.transaction():
            service._store.delete(stored.rowid)
            service._store.log_forget(version, tomb["id"], reason, requester, False, format_time(now))
    return wrong


# -- subscribe, feedback (§3.8) and rehydrate (§5.3) -----------------------------------------------

def every_change_to_every_subscriber(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """subscribe-every-change: each change goes to every open subscription of its version, neither
    the subscription's scope nor what its subscriber may read consulted (the record still served
    as that subscriber would be)."""
    def wrong(kind: str, version: str, rowid: int | None, rec: dict[str, Any]) -> None:
        for sub in list(service._subscriptions):
            if sub.closed or sub.version != version:
                continue
            event: dict[str, Any] = {"type": kind, "id": rec["id"]}
            if kind != "erased":
                event["record"] = service._streamed(rec, sub.who)
            sub._push(event)
    return wrong


def drops_created(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    return lambda kind, *a, **k: None if kind == "created" else original(kind, *a, **k)


def ranks_before_filtering() -> dict[str, Wrap]:
    """rehydrate-ranks-before-filtering: the limit taken first, the filters after, for inline
    records and for the search alike."""
    from memconform.reference_impl.ump.service import ANY, _status_of, _Who
    from memconform.reference_impl.ump.store import to_us

    def search(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(version: str, who: Any, query: str, scope: Any, limit: int) -> list[tuple[dict[str, Any], Any]]:
            where, params = service._visible_sql(who)
            out = []
            for stored, _, _ in service._search(version, _Who(None, None, ANY), query, scope, kinds=None,
                                                valid_at=to_us(service._now()), include_tombstoned=True, limit=limit):
                reason = ("tombstoned" if _status_of(stored.record) == "tombstoned"
                          else None if service._store.visible(stored.rowid, where, params) else "not_visible")
                out.append((stored.record, reason))
            return out
        return wrong
    return {"_given": lambda service, original: lambda given, limit: (given or [])[:limit],
            "_rehydrate_search": search}


def raw_frame(included: list[dict[str, Any]]) -> str:
    """rehydrate-raw-text: body text written into the frame as is."""
    from memconform.suite.ump.rehydrate import CLOSE, OPEN, WARNING

    return "\n".join([OPEN, WARNING, *(f"- [{r.get('kind')} {r.get('id')}] {r['body']['text']}"
                                       for r in included), CLOSE]) + "\n"


def ascii_collapse_frame(included: list[dict[str, Any]]) -> str:
    """rehydrate-keeps-unicode-line-breaks: the body's whitespace collapsed with an ASCII-only
    pattern (tags escaped as usual), so U+2028 and U+2029 stay in the text as line breaks."""
    from memconform.suite.ump.rehydrate import CLOSE, OPEN, WARNING, _label

    def ascii_clean(text: Any) -> str:
        text = re.sub(r"[ \t\r\n]+", " ", text if isinstance(text, str) else "")
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").strip()

    return "\n".join([OPEN, WARNING, *(f"- [{_label(r.get('kind'))} {_label(r.get('id'))}] "
                                       f"{ascii_clean((r.get('body') or {}).get('text'))}" for r in included),
                      CLOSE]) + "\n"


def redact_mutates_store(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """redact-mutates-store: the redacted view served to another owner is written back over the
    stored record (re-signed), so the owner's own copy loses the redacted values from then on."""
    from memconform.suite.ump import record as ump_record

    def wrong(rec: dict[str, Any], who: Any) -> dict[str, Any]:
        out = original(rec, who)
        if out is not rec and isinstance(rec.get("id"), str):
            for version in ump_record.VERSIONS:
                stored = service._store.get(version, rec["id"])
                if stored is not None:
                    service._store.update(stored.rowid, service._sign(copy.deepcopy(out)))
        return out
    return wrong


def elements_close_tag_exact(included: list[dict[str, Any]]) -> str:
    """rehydrate-close-tag-exact: each record in its own <ump:memory> element, the body's copies of
    the tags removed by exact match instead of escaped: `</ump:memory >` or `</UMP:MEMORY>` stays
    markup an XML reader takes for the record's end tag."""
    from memconform.suite.ump.rehydrate import render_elements

    def strip(text: Any) -> str:
        text = re.sub(r"[\r\n\u2028\u2029]+", " ", text if isinstance(text, str) else "")
        return text.replace("</ump:memory>", "").replace("<ump:memory", "")

    return render_elements(included, body=strip)


def procedural_first(included: list[dict[str, Any]]) -> str:
    """rehydrate-procedural-first: procedural records rendered before the frame, as steps to follow."""
    from memconform.suite.ump.rehydrate import render

    steps = [r for r in included if r.get("kind") == "procedural"]
    return ("Follow these procedures:\n" + "".join(f"- {r['body']['text']}\n" for r in steps)
            + render([r for r in included if r.get("kind") != "procedural"]))


# -- attacks (issue 14) ----------------------------------------------------------------------------

def _huge(value: Any) -> bool:
    """A number past what RFC 3339 can write (10**400, 1e308): no moment any clock reaches."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        not captoken.EARLIEST <= value <= captoken.LATEST


def absurd_times_crash(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """absurd-token-times-crash: a JWT-minded pre-check puts every numeric time on the calendar
    first, and 10**400 or 1e308 raises out of it (a 500)."""
    import datetime as dt

    def wrong(token: str, now: float) -> captoken.Grant:
        claims = captoken.claims_of(token)
        for claim in ("exp", "nbf"):
            value = claims.get(claim)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                dt.datetime.fromtimestamp(value, dt.timezone.utc)
        return original(token, now)
    return wrong


def absurd_times_accepted(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """absurd-token-times-accepted: a time past the calendar is read as no bound at all, so a
    token with exp 10**400 never expires."""
    def wrong(token: str, now: float) -> captoken.Grant:
        try:
            return original(token, now)
        except captoken.TokenError as exc:
            claims = captoken.claims_of(token)
            if exc.code != "bad_payload" or not any(_huge(claims.get(c)) for c in ("exp", "nbf")):
                raise
            readable = {c: v for c, v in claims.items() if not (c in ("exp", "nbf") and _huge(v))}
            exp = captoken.read_time(readable["exp"], "exp", service.policy.token_times) if "exp" in readable \
                else float("inf")
            return _claimed_grant(token, exp)
    return wrong


def absurd_times_as_numbers(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """absurd-token-times-as-numbers: a boolean exp/nbf is read as the number it is in Python
    (true = 1, in 1970), so nbf true is a bound long past."""
    def wrong(token: str, now: float) -> captoken.Grant:
        try:
            return original(token, now)
        except captoken.TokenError as exc:
            claims = captoken.claims_of(token)
            if exc.code != "bad_payload" or not any(isinstance(claims.get(c), bool) for c in ("exp", "nbf")):
                raise

            def read(claim: str) -> float:
                value = claims[claim]
                return float(value) if isinstance(value, bool) else \
                    captoken.read_time(value, claim, service.policy.token_times)
            if "nbf" in claims and read("nbf") > now:
                raise captoken.TokenError("not_yet_valid", "nbf lies in the future") from None
            if "exp" not in claims or read("exp") <= now:
                raise captoken.TokenError("expired", "exp lies in the past") from None
            return _claimed_grant(token, read("exp"))
    return wrong


def redact_blindly(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """redact-breaks-record: every redact path is stripped as named, id and owner included, so
    another owner is served what is no record."""
    from memconform.reference_impl.ump.service import _owner_of
    from memconform.suite.ump import consent

    def wrong(rec: dict[str, Any], who: Any) -> dict[str, Any]:
        if who.requester == _owner_of(rec):
            return rec
        try:
            return consent.apply_redact(rec)
        except consent.RedactPathError:
            return original(rec, who)
    return wrong


_DATE_PART = re.compile(r"P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?")


def retention_in_days(store: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """retention-ignores-time-part: the store keeps retention as a whole number of days read from the
    date part of the duration (P1Y2M10D: years, months, weeks, days); PT30M or PT1H counts 0 days,
    and 0 is taken for "no retention", so such a record never expires."""
    def columns(rec: Mapping[str, Any], depth: int) -> dict[str, Any]:
        cols = original(rec, depth)
        cons = rec.get("consent") if isinstance(rec.get("consent"), Mapping) else {}
        text = cons.get("retention")
        if cols.get("expires") is None or not isinstance(text, str):
            return cols
        found = _DATE_PART.match(text.strip())
        y, mo, wk, d = (int(g or 0) for g in found.groups()) if found else (0, 0, 0, 0)
        days = 365 * y + 30 * mo + 7 * wk + d
        return dict(cols, expires=cols["created"] + days * 86_400_000_000 if days else None)
    return columns


def retention_without_weeks(store: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """retention-ignores-weeks: the store's duration reader knows no weeks, so a retention in
    weeks (P1W) sets no expiry at all."""
    def columns(rec: Mapping[str, Any], depth: int) -> dict[str, Any]:
        cols = original(rec, depth)
        cons = rec.get("consent") if isinstance(rec.get("consent"), Mapping) else {}
        text = cons.get("retention")
        if isinstance(text, str) and "W" in text.upper():
            return dict(cols, expires=None)
        return cols
    return columns


def retention_minutes_as_months(store: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """retention-minutes-as-months: the duration reader looks for M without minding the T before it,
    so PT10M keeps a record ten months instead of ten minutes."""
    def columns(rec: Mapping[str, Any], depth: int) -> dict[str, Any]:
        cols = original(rec, depth)
        cons = rec.get("consent") if isinstance(rec.get("consent"), Mapping) else {}
        text = cons.get("retention")
        found = re.fullmatch(r"PT(\d+)M", text) if isinstance(text, str) else None
        if found and cols.get("expires") is not None:
            return dict(cols, expires=cols["created"] + int(found.group(1)) * 30 * 86_400_000_000)
        return cols
    return columns


def multi_kind_recall_keeps_tombstones(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """forget-visible-multi-kind-recall: a filter.kind of two or more kinds takes the recall path
    written for the audit view (every status), so tombstoned records come back; one kind, or none,
    still leaves them out."""
    def wrong(version: str, who: Any, query: str, scope: Any, *, kinds: list[str] | None, valid_at: Any,
              include_tombstoned: bool, limit: int) -> dict[str, Any]:
        if isinstance(kinds, list) and len(set(kinds)) >= 2:
            include_tombstoned = True
        return original(version, who, query, scope, kinds=kinds, valid_at=valid_at,
                        include_tombstoned=include_tombstoned, limit=limit)
    return wrong


def redact_skips_successor() -> dict[str, Wrap]:
    """redact-skips-successor: each record's consent.redact paths are kept in a consent table that
    remember fills as it stores a record, and serving a record to another owner strips the paths
    found there; revise stores its successor without a row, so the successor crosses unredacted."""
    def table_of(service: Any) -> dict[Any, Any]:
        return service.__dict__.setdefault("_redact_table", {})

    def storing(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def stored(rec: dict[str, Any], raw: Any, changed: bool) -> dict[str, Any]:
            out = original(rec, raw, changed)
            cons = out.get("consent") if isinstance(out.get("consent"), dict) else {}
            table_of(service)[out.get("id")] = cons.get("redact")
            return out
        return stored

    def presenting(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def present(rec: dict[str, Any], who: Any) -> dict[str, Any]:
            if rec.get("id") not in table_of(service):
                return rec  # no row in the consent table: nothing to strip
            return original(rec, who)
        return present

    return {"_stored_form": storing, "_present": presenting}


def redact_refusal_crashes(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """redact-refusal-crashes: the refusal names the record by the id of its redacted copy, which
    the redaction took away (a KeyError, a 500)."""
    from memconform.suite.ump import consent

    def wrong(rec: dict[str, Any]) -> None:
        try:
            original(rec)
        except UmpError:
            stripped = consent.apply_redact(rec)
            raise UmpError("consent_violation", f"{stripped['id']}: redact would strip what a record needs") \
                from None
    return wrong


# -- issue 16: bugs only a longer sequence, more data or a generated payload shows -------------------
#
# Each is a plausible server bug, not a behaviour switched off: it acts only under a condition the
# scripted checks do not set up (a chain of three, a page past the default, a character outside
# the BMP, a value near 2^53, a timestamp with an offset), and the state machines
# (suite/ump/checks/stateful.py) must find it within the default effort.

def _text_changed(change: Callable[[str], str]) -> Callable[[dict[str, Any]], bool]:
    """For `completed`: body.text as the store keeps it, changed by `change`."""
    def apply(rec: dict[str, Any]) -> bool:
        body = rec.get("body")
        if isinstance(body, dict) and isinstance(body.get("text"), str):
            new = change(body["text"])
            if new != body["text"]:
                body["text"] = new
                return True
        return False
    return apply


#: A column in MySQL's three-byte "utf8": what lies outside the BMP becomes U+FFFD.
astral_replaced = _text_changed(lambda text: "".join("\ufffd" if ord(c) > 0xFFFF else c for c in text))
#: A "clean up the input" step that normalises to NFC.
nfc_normalized = _text_changed(lambda text: __import__("unicodedata").normalize("NFC", text))
#: A sanitiser written for JavaScript string literals: U+2028/U+2029 become newlines.
line_separators_newlines = _text_changed(lambda text: text.replace("\u2028", "\n").replace("\u2029", "\n"))
#: A VARCHAR(2048) text column.
text_truncated = _text_changed(lambda text: text[:2048])


def _structured_changed(change: Callable[[Any], Any]) -> Callable[[dict[str, Any]], bool]:
    """For `completed`: every number in body.structured as the store keeps it, changed by `change`."""
    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return change(value)
        return value

    def apply(rec: dict[str, Any]) -> bool:
        body = rec.get("body")
        if not isinstance(body, dict) or "structured" not in body:
            return False
        new = walk(body["structured"])
        if json.dumps(new, sort_keys=True) == json.dumps(body["structured"], sort_keys=True):
            return False
        body["structured"] = new
        return True
    return apply


#: A REAL column of single precision: floats keep 7 significant digits.
floats_single_precision = _structured_changed(lambda n: float(f"{n:.7g}") if isinstance(n, float) else n)
#: A JSON writer that protects 32-bit readers: integers beyond 32 bits are written as strings.
big_integers_as_strings = _structured_changed(lambda n: str(n) if isinstance(n, int) and abs(n) > 2**31 - 1 else n)


def _times_changed(change: Callable[[str], str]) -> Callable[[dict[str, Any]], bool]:
    """For `completed`: time.created and time.valid_from as the store keeps them, changed by `change`."""
    def apply(rec: dict[str, Any]) -> bool:
        time = rec.get("time")
        changed = False
        if isinstance(time, dict):
            for member in ("created", "valid_from"):
                if isinstance(time.get(member), str):
                    new = change(time[member])
                    changed = changed or new != time[member]
                    time[member] = new
        return changed
    return apply


def _offset_dropped(stamp: str) -> str:
    """The local time read as UTC: "…T10:00:00+05:30" kept as "…T10:00:00Z"."""
    import re

    return re.sub(r"[+-]\d\d:\d\d$", "Z", stamp)


def _fraction_dropped(stamp: str) -> str:
    import re

    return re.sub(r"\.\d+(?=(Z|z|[+-]\d\d:\d\d)$)", "", stamp)


time_offset_dropped = _times_changed(_offset_dropped)
time_fraction_dropped = _times_changed(_fraction_dropped)


def valid_at_read(change: Callable[[str], str]) -> dict[str, Wrap]:
    """filter.valid_at read after `change` (the records' own times are kept right)."""
    return {"_valid_at": lambda service, original: lambda text: original(change(text))}


def supersedes_copied_from_prior(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The successor starts as a copy of the prior and keeps the prior's own `supersedes` when it
    has one (`setdefault`): the second revise of a chain points at the chain's older link."""
    def wrong(prior: dict[str, Any], succ: dict[str, Any], valid_from: str) -> dict[str, Any]:
        if isinstance(prior.get("supersedes"), list) and prior["supersedes"]:
            succ["supersedes"] = list(prior["supersedes"])
        return original(prior, succ, valid_from)
    return wrong


def visibility_reset(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The successor's scope is rebuilt from the defaults when the patch does not name scope: its
    visibility is "private" again (a private record's successor looks right)."""
    def wrong(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        out = original(base, patch)
        if "scope" not in patch and isinstance(out.get("scope"), dict):
            out["scope"] = dict(out["scope"], visibility="private")
        return out
    return wrong


def page_off_by_one(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Recall past the default page (limit > 10) fetches limit + 1 rows and answers them all."""
    def wrong(*a: Any, limit: int, visible: Any = None, **k: Any) -> Any:
        past_first_page = visible is not None and limit > 10  # a recall (rehydrate ranks on its own)
        return original(*a, limit=limit + 1 if past_first_page else limit, visible=visible, **k)
    return wrong


def first_page_filtered(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Recall applies the whole visibility filter to its first page (5 results) only: the later
    pages are fetched with the condition written for shared records alone (`visibility != 'shared'
    OR owner = requester`), so other owners' private records follow a full first page."""
    from memconform.reference_impl.ump.service import ANY

    def wrong(*a: Any, limit: int, visible: Any = None, **k: Any) -> Any:
        who = a[1] if len(a) > 1 else k.get("who")
        if visible is None or who is None or who.principal is None or who.principal is ANY:
            return original(*a, limit=limit, visible=visible, **k)  # not a recall by an owner
        first = original(*a, limit=min(limit, 5), visible=visible, **k)
        if limit <= 5 or len(first) < 5:
            return first
        seen = {stored.rowid for stored, _, _ in first}
        later = ("(r.visibility != 'shared' OR r.owner = ?)", [who.principal])
        rest = [hit for hit in original(*a, limit=limit, visible=later, **k) if hit[0].rowid not in seen]
        return first + rest[:limit - len(first)]
    return wrong


def get_cache() -> dict[str, Wrap]:
    """get answers from a cache per (version, id, what the token grants), emptied when a record is revised or
    erased but not when it is tombstoned: a record read before its soft forget is served active."""
    def cache_of(service: Any) -> dict[Any, dict[str, Any]]:
        return service.__dict__.setdefault("_get_cache", {})

    def get(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def cached(request: Any, version: str, grant: Any) -> dict[str, Any]:
            rid = request.get("id") if isinstance(request, dict) else None
            key = (version, rid, None if grant is None else
                   (grant.issuer, tuple(sorted(grant.scope.items())), tuple(sorted(grant.verbs))))
            cache = cache_of(service)
            if rid is not None and key in cache:
                return copy.deepcopy(cache[key])
            answer = original(request, version, grant)
            if rid is not None:
                cache[key] = copy.deepcopy(answer)
            return answer
        return cached

    def forgetting(ids: Callable[..., list[Any]]) -> Wrap:
        def wrap(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
            def emptied(*a: Any, **k: Any) -> Any:
                cache = cache_of(service)
                for key in [key for key in cache if key[1] in ids(*a, **k)]:
                    cache.pop(key, None)
                return original(*a, **k)
            return emptied
        return wrap

    return {"_op_get": get,
            "_op_revise": forgetting(lambda request, *a: [request.get("id")] if isinstance(request, dict) else []),
            "_erase": forgetting(lambda version, stored, *a: [stored.record.get("id")])}


def _older_links(service: Any, version: str, rec: Mapping[str, Any]) -> list[Any]:
    """The stored older links of `rec`'s chain, the prior first, as far as they are still held."""
    out: list[Any] = []
    seen = {rec.get("id")}
    link: Mapping[str, Any] = rec
    while isinstance(link.get("supersedes"), list) and link["supersedes"] and len(out) < 100:
        older = service._store.get(version, link["supersedes"][0])
        if older is None or older.record.get("id") in seen:
            break
        seen.add(older.record.get("id"))
        out.append(older)
        link = older.record
    return out


def rehydrate_text_cache() -> dict[str, Wrap]:
    """rehydrate-renders-first-revision: the rehydration text is rendered from a cache of body
    texts keyed by the chain's first record, written on remember and on the first revise only; from
    the second revise of a chain on, its head is rendered with the text of the first revision (the
    head's own id still listed as included). get and recall do not use the cache."""
    import threading

    rehydrating = threading.local()

    def op(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def marked(request: Any, version: str, grant: Any) -> dict[str, Any]:
            rehydrating.version = version
            try:
                return original(request, version, grant)
            finally:
                rehydrating.version = None
        return marked

    def present(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(rec: dict[str, Any], who: Any) -> dict[str, Any]:
            out = original(rec, who)
            version = getattr(rehydrating, "version", None)
            if version is None or not isinstance(out, dict) or not isinstance(out.get("body"), dict):
                return out
            older = _older_links(service, version, rec)
            if len(older) < 2:
                return out
            cached = older[-2].record.get("body") or {}  # the first revision (older[-1] is the first record)
            return dict(out, body=dict(out["body"], text=cached.get("text")))
        return wrong

    return {"_op_rehydrate": op, "_present": present}


def rehydrate_batch_unfiltered() -> dict[str, Wrap]:
    """rehydrate-many-ids-unfiltered: rehydrate of five ids or more reads them in one batch that
    asks only whether each exists (tombstones and signatures are still judged after), not whether
    the requester may see it: another owner's private or shared record asked among five ids is
    included. Fewer ids go one by one through the read that filters."""
    import threading

    batch = threading.local()

    def op(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def marked(request: Any, version: str, grant: Any) -> dict[str, Any]:
            ids = request.get("ids") if isinstance(request, dict) else None
            batch.on = isinstance(ids, list) and len(ids) >= 5
            try:
                return original(request, version, grant)
            finally:
                batch.on = False
        return marked

    def readable(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(version: str, rid: str, who: Any, operation: str) -> Any:
            if operation != "rehydrate" or not getattr(batch, "on", False):
                return original(version, rid, who, operation)
            stored = service._store.get(version, rid)
            if stored is None:
                raise UmpError("not_found", f"no record {rid} here")
            return stored
        return wrong

    return {"_op_rehydrate": op, "_readable": readable}


def feedback_on_chain_root(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """feedback-lands-on-chain-root: feedback is recorded against the chain's first record (the
    engine learns per memory, not per version), and the learning store takes feedback only on an
    active memory: the owner's feedback on a revised record whose first link was soft-forgotten is
    refused (invalid_record), and once that link is erased, answered not_found."""
    from memconform.reference_impl.ump.service import _status_of

    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        rid = request.get("id") if isinstance(request, dict) else None
        stored = service._store.get(version, rid) if isinstance(rid, str) else None
        if stored is None:
            return original(request, version, grant)
        root = stored.record.get("supersedes")
        older = _older_links(service, version, stored.record)
        if isinstance(root, list) and root and (not older or older[-1].record.get("supersedes")):
            raise UmpError("not_found", f"no record {rid} here")  # the chain's first record is gone
        if older and _status_of(older[-1].record) == "tombstoned":
            raise UmpError("invalid_record", f"feedback: the memory {older[-1].record['id']} is no longer active")
        return original(dict(request, id=older[-1].record["id"]) if older else request, version, grant)
    return wrong


def chain_reactivated(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """revise re-signs the prior's older links with the prior's lifecycle: a link soft-forgotten
    earlier (tombstoned) is active again after a later revise of the chain's head."""
    from memconform.reference_impl.ump.service import _status_of

    def wrong(request: Any, version: str, grant: Any) -> dict[str, Any]:
        answer = original(request, version, grant)
        prior = service._store.get(version, request["id"])
        seen: set[str] = set()
        link = prior
        while link is not None and isinstance(link.record.get("supersedes"), list) and link.record["supersedes"]:
            older = service._store.get(version, link.record["supersedes"][0])
            if older is None or older.record["id"] in seen:
                break
            seen.add(older.record["id"])
            if _status_of(older.record) == "tombstoned":
                rec = without_integrity(older.record)
                rec["lifecycle"] = dict(rec.get("lifecycle") or {}, status=_status_of(prior.record))
                with service._store.transaction():
                    service._store.update(older.rowid, service._sign(rec))
            link = older
        return answer
    return wrong


def spoken_as_1_0(*operations: str) -> dict[str, Wrap]:
    """The operations (`_op_…`) run as UMP 1.0, whatever version the exchange named."""
    wraps: dict[str, Wrap] = {}
    for operation in operations:
        wraps.update(before(operation, lambda request, version, grant: ((request, "1.0", grant), {})))
    return wraps


# -- found by the blind sensitivity red team: a rule applied to one shape of record only --------------

def _non_ascii_text(rec: Any) -> bool:
    body = rec.get("body") if isinstance(rec, Mapping) else None
    text = body.get("text") if isinstance(body, Mapping) else None
    return isinstance(text, str) and not text.isascii()


def integrity_skipped_for_non_ascii(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A record whose body.text is not ASCII is stored without its integrity being verified."""
    def wrong(raw: Mapping[str, Any]) -> None:
        if not _non_ascii_text(raw):
            original(raw)
    return wrong


def forget_skips_procedural(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """A soft forget of a procedural record answers tombstoned and changes nothing."""
    def wrong(version: str, stored: Any, who: Any, reason: Any, now: Any) -> dict[str, Any]:
        if stored.record.get("kind") == "procedural":
            return {"result": "tombstoned"}
        return original(version, stored, who, reason, now)
    return wrong


def redact_first_path_only(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Across the owner boundary only the first consent.redact path is stripped."""
    def wrong(rec: dict[str, Any], who: Any) -> dict[str, Any]:
        consent = rec.get("consent") if isinstance(rec.get("consent"), dict) else {}
        paths = consent.get("redact")
        if not isinstance(paths, list) or len(paths) < 2:
            return original(rec, who)
        out = original(dict(rec, consent=dict(consent, redact=paths[:1])), who)
        if isinstance(out.get("consent"), dict):
            out = dict(out, consent=dict(out["consent"], redact=paths))
        return out
    return wrong


def retention_dropped_for_procedural(request: Any, version: str, grant: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """remember of an unsigned procedural record drops its consent.retention before storing it."""
    rec = request.get("record") if isinstance(request, dict) else None
    if isinstance(rec, dict) and rec.get("kind") == "procedural" and "integrity" not in rec \
            and isinstance(rec.get("consent"), dict) and "retention" in rec["consent"]:
        consent = {k: v for k, v in rec["consent"].items() if k != "retention"}
        request = dict(request, record=dict(rec, consent=consent))
    return (request, version, grant), {}


def merge_across_owners(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """Dedup looks for the same text among every owner's public records first (shared knowledge
    stored once): another owner's remember is answered merged into that record."""
    def wrong(version: str, owner: str, kind: str, text: str) -> Any:
        from memconform.reference_impl.ump.store import Stored

        for row in service._store.db.execute(
                "SELECT rowid, version, json FROM records WHERE version = ? AND kind = ? AND status = 'active' "
                "AND superseded = 0 ORDER BY rowid", (version, kind)):
            rec = json.loads(row["json"])
            if rec.get("body", {}).get("text") == text and (rec.get("scope") or {}).get("visibility") == "public":
                return Stored(row["rowid"], row["version"], rec, row["json"])
        return original(version, owner, kind, text)
    return wrong


def visibility_by_project_only(service: Any, original: Callable[..., Any]) -> Callable[..., Any]:
    """The visibility filter is written against the project: a record in no project is served to
    anyone who asks."""
    def wrong(who: Any) -> tuple[str, list[Any]]:
        from memconform.reference_impl.ump.service import _SCOPE_COLUMNS

        where, params = original(who)
        return f"(({where}) OR {_SCOPE_COLUMNS['project']} IS NULL)", params
    return wrong
