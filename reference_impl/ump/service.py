"""The reference UMP server's engine for the live operations (L1–L3): `UmpService`.

The contract is docs/live-ump.md; this module is its reading, over the sqlite store in `store.py`
and the ranking in `ranking.py`. Bindings (`http_app.py`, `mcp_app.py`) call `handle`,
`subscribe` and `well_known`; every refusal is an `UmpError(code, message)` whose code is a §3.7
code and whose message says what was wrong; `HTTP_STATUS` maps codes to HTTP statuses.

Who asks (docs/live-ump.md, "Who is asking"):

* With a token, the requester is the token's issuer. A token grants the issuer's own records
  within its scope (`captoken.Grant.covers`); public records need no grant and are served to
  every requester (redacted when the requester is not the owner).
* Without a token (only when `require_capability=False`): the requester is what the request
  asserts: recall's / rehydrate's / subscribe's `scope.owner`, the `actor` of get, revise, forget
  and feedback (get's `actor` is an extension), the record's own `scope.owner` for remember.
  Without such a member the requester is anonymous: it sees public records only and may change
  nothing (least privilege; the contract leaves this open).

Readings where docs/live-ump.md is silent, and deliberate deviations from it:

* Public records need no grant: every requester gets them (recall, get, rehydrate, subscribe),
  whatever its token's scope, redacted when it is not the owner. get of another owner's *shared*
  record without a grant answers forbidden_scope (the contract fixes not_found only for private).
* forget does not set `time.valid_to` (the contract says "valid_to now if null"). Valid time says
  when a fact holds in the world; forgetting is about keeping the record. Setting it would also
  make `filter.include_tombstoned` useless for a recall at "now". Tombstones are left out of
  default recall by their status. Retention tombstones likewise.
* revise and forget stamp the acting principal into provenance (§9, a MAY; the public reference
  implementation does): `method` "revise"/"forget", `source.ref` the prior id, `actor` the
  requester when known. A patch that sets `provenance` itself wins over the stamp.
* get takes an optional `actor` (who asks, without a token), like revise/forget/feedback.
* Recall over a very large match set ranks a bounded candidate set (ranking.py), so a weak old
  match of common words only may be missed; every filter still runs before ranking.
* A record the server must sign but holds no key for (mallory's, a did:web owner) is refused with
  signature_invalid; one its owner signed is stored as sent. Retention cannot re-sign such a
  record: its tombstone is kept without integrity and then not served (verify on read).

Faults (`reference_impl/ump/faults.py`) are made apart from this module: an entry either sets a
decision point of `policy.UmpPolicy` or wraps one of the service's methods on the one instance
(`install_wraps`), the longer wrongs named in `faulty.py`. That is why the operations are built
from small methods (`_recall`, `_recall_time`, `_complete`, `_check_owner`, `_superseded`,
`_tombstone`, `_frame`, …): each is a place where a wrong server differs from this one. The
service holds no test of a fault's name; `fault` is kept for the bindings, whose own faults are
still read from it.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import math
import queue
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from memconform.reference_impl.ump import ranking
from memconform.reference_impl.ump.engine import Keyring, UmpError
from memconform.reference_impl.ump.store import Store, Stored, format_time, parse_duration, parse_time, to_us
from memconform.suite.jsonvalue import a_json_type
from memconform.suite.ump import captoken, consent, ids, integrity
from memconform.suite.ump import record as ump_record
from memconform.suite.ump.canonical import CanonicalizationError, without_integrity
from memconform.suite.ump.did import is_did
from memconform.suite.ump.rehydrate import render, render_elements, render_fenced, render_json

__all__ = ["UmpService", "Subscription", "HTTP_STATUS", "ERROR_CODES", "OPERATIONS", "MAX_RECALL"]

#: The §3.7 error codes.
ERROR_CODES = ("unauthorized", "forbidden_scope", "not_found", "invalid_record", "consent_violation",
               "signature_invalid", "unsupported", "rate_limited")
#: HTTP status per error code (docs/live-ump.md); a code not listed is 400.
HTTP_STATUS = {"not_found": 404, "unauthorized": 401, "forbidden_scope": 403, "rate_limited": 429,
               "invalid_record": 400, "consent_violation": 400, "signature_invalid": 400, "unsupported": 400}

OPERATIONS = ("capabilities", "recall", "remember", "get", "revise", "forget", "feedback", "rehydrate")
OUTCOMES = ("followed", "overridden", "ignored", "contradicted")
MAX_RECALL = 50
DEFAULT_LIMIT = 10
SERVER_NAME = "memconform-reference"
BINDINGS = ("mcp", "http", "file")
#: Deepest nesting of a request the service takes (deeper is invalid_record).
MAX_DEPTH = 64

_SCOPE_COLUMNS = {"owner": "r.owner", "project": "r.scope_project", "agent": "r.scope_agent",
                  "visibility": "r.visibility"}
_SCOPE_MEMBERS = ("owner", "user", "project", "agent", "session", "visibility")


class _Any:
    """The principal that may act on every owner's records (no right requester is: only a wrong
    reading of a token's issuer, token-issuer-unchecked, makes one)."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()
_MISSING = object()


@functools.cache
def _server_version() -> str:
    # read once: the installed distribution's metadata is parsed from disk on every call (~0.5 ms)
    try:
        from importlib.metadata import version

        return version("memconform")
    except Exception:  # pragma: no cover - not installed
        return "0"


@dataclass
class _Who:
    """Who a request is made as."""

    grant: captoken.Grant | None
    requester: str | None            # the identity redaction compares with the owner
    principal: Any                   # whose non-public records may be read and written (str|None|ANY)


@dataclass(eq=False)
class Subscription:
    """A live stream of record changes (§3.8). `next(timeout)` returns the next event
    ({"type", "id", "record"?}) or None when none arrived in time or the subscription is closed."""

    service: UmpService
    version: str
    who: _Who
    scope: dict[str, str]
    _queue: queue.Queue = field(default_factory=queue.Queue, repr=False)
    closed: bool = False

    def next(self, timeout: float | None = None) -> dict[str, Any] | None:
        if self.closed and self._queue.empty():
            return None
        try:
            event = self._queue.get(timeout=timeout) if timeout is None or timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            return None
        return event  # None is the wake-up put by close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.service._unsubscribe(self)
            self._queue.put(None)

    def _push(self, event: dict[str, Any]) -> None:
        if not self.closed:
            self._queue.put(event)


# ---------------------------------------------------------------------------------------------
# request checking helpers (every failure is invalid_record)


#: The operations that name one stored record: a token that may not touch it may be told it is not there.
_NAMES_A_RECORD = frozenset({"get", "revise", "forget", "feedback"})


def _invalid(message: str) -> UmpError:
    return UmpError("invalid_record", message)




def _check_json(value: Any, where: str = "the request", depth: int = 0) -> None:
    """Refuse anything that is not plain JSON data (JSON types only, string keys, finite numbers,
    text that is valid Unicode, at most MAX_DEPTH levels)."""
    if depth > MAX_DEPTH:
        raise _invalid(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _invalid(f"{where} holds text that is not valid Unicode (a lone surrogate)") from None
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _invalid(f"{where} holds {value!r}; JSON numbers are finite")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise _invalid(f"{where} has a member name that is not a string ({k!r})")
            _check_json(k, where, depth + 1)
            _check_json(v, f"{where}/{k}" if len(where) < 200 else where, depth + 1)
        return
    if isinstance(value, list):
        for i, v in enumerate(value):
            _check_json(v, f"{where}/{i}" if len(where) < 200 else where, depth + 1)
        return
    raise _invalid(f"{where} holds {a_json_type(value)}; only JSON values are accepted")


def _request_object(request: Any, operation: str, shape: str) -> dict[str, Any]:
    if request is None:
        request = {}
    if not isinstance(request, dict):
        raise _invalid(f"the {operation} request must be a JSON object {shape}, found {a_json_type(request)}")
    return request


def _refuse_nulls(request: Mapping[str, Any], operation: str, *keys: str) -> None:
    """An optional member is left out, never sent as null (null is not a string, number, object
    or list: invalid_record, as the OpenAPI document says)."""
    for key in keys:
        if key in request and request[key] is None:
            raise _invalid(f"{operation}: `{key}` is null; leave it out instead (it must be "
                           "a value of its type when present)")


def _opt_str(request: Mapping[str, Any], key: str, operation: str) -> str | None:
    _refuse_nulls(request, operation, key)
    value = request.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _invalid(f"{operation}: `{key}` must be a string, found {a_json_type(value)}")
    return value


def _req_id(request: Mapping[str, Any], operation: str) -> str:
    value = request.get("id", _MISSING)
    if value is _MISSING:
        raise _invalid(f"{operation}: the request has no `id` (the record id, urn:ump:…)")
    if not isinstance(value, str) or not value:
        raise _invalid(f"{operation}: `id` must be a non-empty string (urn:ump:…), found {a_json_type(value)}")
    return value


def _opt_scope(request: Mapping[str, Any], operation: str) -> dict[str, str]:
    _refuse_nulls(request, operation, "scope")
    scope = request.get("scope")
    if scope is None:
        return {}
    if not isinstance(scope, dict):
        raise _invalid(f"{operation}: `scope` must be an object, found {a_json_type(scope)}")
    for k, v in scope.items():  # §2.2: scope members are strings (null is not one: invalid_record)
        if not isinstance(v, str):
            raise _invalid(f"{operation}: scope.{k} must be a string, found {a_json_type(v)}")
    return dict(scope)


def _opt_limit(request: Mapping[str, Any], operation: str) -> int:
    _refuse_nulls(request, operation, "limit")
    value = request.get("limit")
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _invalid(f"{operation}: `limit` must be a positive integer, found {a_json_type(value)}")
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        raise _invalid(f"{operation}: `limit` must be a positive integer, found {value!r}")
    limit = int(value)
    if limit < 1:
        raise _invalid(f"{operation}: `limit` must be at least 1, found {limit}")
    return limit


def _subsumes(part: Any, whole: Any) -> bool:
    """Whether every member of `part` is in `whole` with the same value (objects recursively)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and _subsumes(v, whole[k]) for k, v in part.items())
    if isinstance(part, list):
        return isinstance(whole, list) and len(part) == len(whole) and all(_subsumes(a, b) for a, b in zip(part, whole))
    if isinstance(part, bool) or isinstance(whole, bool):
        return isinstance(part, bool) and isinstance(whole, bool) and part == whole
    return part == whole


def _merge_patch(base: Any, patch: Any) -> Any:
    """The patch merged into base: objects member by member, every other value replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = copy.deepcopy(base)
        for k, v in patch.items():
            out[k] = _merge_patch(base.get(k), v) if isinstance(v, dict) and isinstance(base.get(k), dict) else copy.deepcopy(v)
        return out
    return copy.deepcopy(patch)


def _violation_error(violations: tuple[ump_record.Violation, ...]) -> UmpError:
    """invalid_record for the first violation, or signature_invalid when only the integrity block
    is malformed (a record whose integrity cannot verify)."""
    others = [v for v in violations if not v.pointer.startswith("/integrity")]
    first = (others or list(violations))[0]
    code = "invalid_record" if others else "signature_invalid"
    more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
    return UmpError(code, f"{first.pointer or '/'}: {first.message} [{first.requirement}]{more}")


def _scope_of(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    scope = rec.get("scope")
    return scope if isinstance(scope, Mapping) else {}


def _owner_of(rec: Mapping[str, Any]) -> Any:
    return _scope_of(rec).get("owner")


def _status_of(rec: Mapping[str, Any]) -> Any:
    life = rec.get("lifecycle")
    return life.get("status") if isinstance(life, Mapping) else None


def _grant_text(grant: captoken.Grant) -> str:
    return f"issuer {grant.issuer}, scope {json.dumps(dict(grant.scope), sort_keys=True)}"


# ---------------------------------------------------------------------------------------------


class UmpService:
    """The six UMP operations plus feedback, subscribe and rehydrate, over sqlite (§3, §5)."""

    def __init__(self, *, db: str = ":memory:", require_capability: bool = True, fault: str | None = None,
                 keyring: Keyring | None = None, clock: Callable[[], datetime] | None = None,
                 versions: tuple[str, ...] | list[str] = ("1.0", "0.1"), variants: tuple[str, ...] = ()):
        from memconform.reference_impl import variants as switches
        from memconform.reference_impl.ump.policy import UmpPolicy

        from memconform.reference_impl.faults import FAULTS, deviate, install_wraps

        self.policy = deviate(UmpPolicy(), "ump", fault, variants)
        self.variants = switches.check_names(variants)
        versions = tuple(v for v in versions if v in self.policy.runtime_versions)
        if not versions or any(v not in ump_record.VERSIONS for v in versions) or len(set(versions)) != len(versions):
            raise ValueError(f"versions must be distinct UMP versions among {ump_record.VERSIONS}, got {versions!r}")
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        self.versions: tuple[str, ...] = tuple(sorted(versions, key=lambda v: tuple(map(int, v.split("."))),
                                                      reverse=True))
        self.require_capability = require_capability
        self.fault = fault
        self.keyring = keyring or Keyring.with_test_keys()
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._lock = threading.RLock()
        self._store = Store(db)
        self._store.retention_from_receipt = self.policy.retention_from == "receipt"
        self._subscriptions: list[Subscription] = []
        self._closed = False
        self._verified: dict[bytes, bool] = {}        # verify-on-read verdicts per stored bytes
        self._grants: dict[str, captoken.Grant] = {}  # tokens whose signature was verified
        install_wraps(self, "ump", fault)  # the plain keys; file faults wrap the file engine (`file.` part)

    # -- public API ----------------------------------------------------------------------------

    def handle(self, operation: str, request: Any, *, version: str, token: str | None) -> dict[str, Any]:
        """Run one operation; the §3 response object, or UmpError."""
        if not isinstance(operation, str) or operation not in OPERATIONS:
            raise UmpError("unsupported", f"unknown operation {operation!r}; this server offers "
                                          f"{', '.join(OPERATIONS)} and subscribe")
        self._check_version(version)
        with self._lock:
            self._check_open()
            if operation == "capabilities":
                self._admit_discovery(token)
                _check_json(request)
                return self._capabilities(request, version)
            grant = self._authorize(operation, token)
            _check_json(request)
            self._expire()
            try:
                return getattr(self, f"_op_{operation}")(request, version, grant)
            except UmpError as exc:
                if operation == "remember" and self.policy.remember_refusal == "result" \
                        and exc.code in ("invalid_record", "signature_invalid", "consent_violation"):
                    return {"result": "rejected", "reason": f"{exc.code}: {exc.message}"}
                raise

    def subscribe(self, *, version: str, token: str | None, request: dict | None = None) -> Subscription:
        self._check_version(version)
        with self._lock:
            self._check_open()
            grant = self._authorize("subscribe", token)
            _check_json(request)
            req = _request_object(request, "subscribe", "{scope?}")
            scope = _opt_scope(req, "subscribe")
            if self.policy.subscribe_needs_owner and not scope.get("owner"):
                raise UmpError("forbidden_scope", "subscribe: name the owner whose records to stream "
                                                  "(scope.owner; over HTTP ?owner=<did>)")
            who = self._who(grant, scope.get("owner"))
            self._check_request_scope(who, scope, "subscribe",
                                      foreign_owner=self.policy.subscribe_foreign_owner == "visible")
            sub = Subscription(self, version, who, scope)
            self._subscriptions.append(sub)
            return sub

    def well_known(self, base_url: str | None = None) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "ump": self.versions[0],
            "versions": list(self.versions),
            "conformance": "L3",
            "bindings": list(BINDINGS),
            "kinds": list(ump_record.KINDS),
            "retrieval_signals": list(ranking.SIGNALS),
        }
        if not self.policy.list_versions:
            del doc["versions"]
        if base_url:
            doc["endpoint"] = base_url
        return doc

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for sub in list(self._subscriptions):
                sub.close()
            self._store.close()

    # -- plumbing ------------------------------------------------------------------------------

    def _check_version(self, version: Any) -> None:
        if version not in self.versions:
            raise UmpError("unsupported", f"UMP version {version!r} is not spoken here (this server speaks "
                                          f"{', '.join(self.versions)})")

    def _check_open(self) -> None:
        if self._closed:
            raise UmpError("unsupported", "the service is closed")

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            now = now.replace(tzinfo=timezone.utc)
        return now.astimezone(timezone.utc)

    def admit_discovery(self, token: str | None) -> None:
        """The well-known document behind a token (policy discovery_auth "token"): any valid
        capability token is enough, whatever its verbs; UmpError unauthorized otherwise."""
        if self.policy.discovery_auth == "token":  # the open readings take no lock
            with self._lock:
                self._admit_discovery(token)

    def _admit_discovery(self, token: Any) -> None:
        """capabilities behind a token (policy discovery_auth "token" or "capabilities-token")."""
        if self.policy.discovery_auth not in ("token", "capabilities-token"):
            return
        if not isinstance(token, str):
            raise UmpError("unauthorized", "this server answers capabilities only with a capability token "
                                           "(Authorization: Bearer umpcap.…; over MCP the _meta key ump/capability)")
        try:
            self._verify_token(token)
        except captoken.TokenError as exc:
            raise UmpError("unauthorized", f"capability token refused ({exc.code}): {exc.message}") from None

    def _authorize(self, operation: str, token: Any) -> captoken.Grant | None:
        """The verified grant of the request's token (None without one), or UmpError."""
        if token is None:
            if self.require_capability and not (self.policy.anonymous_public_reads
                                                and operation in ("recall", "get", "subscribe")):
                raise UmpError("unauthorized", f"{operation} needs a capability token (Authorization: Bearer "
                                               "umpcap.…; over MCP the _meta key ump/capability)")
            return None
        if not isinstance(token, str):
            raise UmpError("unauthorized", f"capability token refused (malformed): the token is {a_json_type(token)}, "
                                           "not a string")
        try:
            grant = self._verify_token(token)
        except captoken.TokenError as exc:
            raise UmpError("unauthorized", f"capability token refused ({exc.code}): {exc.message}") from None
        self._check_verb(operation, grant)
        return grant

    def _check_verb(self, operation: str, grant: captoken.Grant) -> None:
        verb = self.policy.feedback_verb if operation == "feedback" else captoken.VERB_FOR_OPERATION.get(operation)
        if not grant.allows_verb(verb):
            code = self.policy.verb_mismatch_code
            if code == "not_found" and operation not in _NAMES_A_RECORD:
                code = "forbidden_scope"
            raise UmpError(code, f"{operation} needs the verb {verb!r}; the token grants {', '.join(sorted(grant.verbs))}")

    def _verify_token(self, token: str) -> captoken.Grant:
        now = self._now().timestamp()
        cached = self._grants.get(token)
        if cached is not None and (cached.not_before is None or now >= cached.not_before) and now < cached.expires:
            return cached  # signature checked before; the time window is checked every time
        grant = self._verify_token_fully(token, now)
        if len(self._grants) >= 4096:
            self._grants.clear()
        self._grants[token] = grant
        return grant

    def _verify_token_fully(self, token: str, now: float) -> captoken.Grant:
        return captoken.verify(token, now=now, times=self.policy.token_times)

    def _who(self, grant: captoken.Grant | None, asserted: Any) -> _Who:
        """With a token: its issuer. Without: the identity the request asserts (or anonymous)."""
        if grant is None:
            if self.require_capability:  # a tokenless read of anonymous-public-reads: asserting proves nothing
                return _Who(None, None, None)
            ident = asserted if isinstance(asserted, str) and asserted else None
            return _Who(None, ident, ident)
        return _Who(grant, grant.issuer, grant.issuer)

    def _token_scope(self, who: _Who) -> Mapping[str, str]:
        if who.grant is None:
            return {}
        return who.grant.scope

    def _check_request_scope(self, who: _Who, scope: Mapping[str, Any], operation: str,
                             foreign_owner: bool = False) -> None:
        """A request's scope (recall, rehydrate, subscribe) must stay inside the token's.
        `foreign_owner`: another owner's scope may be asked for (what is served is then only what
        the requester may see)."""
        if who.grant is None:
            return
        for key, value in self._token_scope(who).items():
            if key in scope and scope[key] != value and not (foreign_owner and key == "owner"):
                raise UmpError("forbidden_scope", f"{operation}: scope.{key} {scope[key]!r} lies outside the "
                                                  f"token's scope ({_grant_text(who.grant)})")
        owner = scope.get("owner")
        if owner is not None and who.principal is not ANY and owner != who.principal and not foreign_owner:
            raise UmpError("forbidden_scope", f"{operation}: scope.owner {owner!r} is not the token's issuer "
                                              f"({_grant_text(who.grant)}); a token grants only its issuer's records")

    def _public(self) -> tuple[str, ...]:
        """The visibilities served to every requester (§2.2: public only)."""
        return ("public",)

    def _visible_sql(self, who: _Who) -> tuple[str, list[Any]]:
        """SQL (alias r) for: the requester may see this record. Public records are served to
        anyone; the others only to their owner (with a token: within the token's scope)."""
        public = f"r.visibility IN ({', '.join(repr(v) for v in self._public())})"
        own: list[str] = []
        params: list[Any] = []
        for key, value in self._token_scope(who).items():
            own.append(f"{_SCOPE_COLUMNS[key]} = ?")
            params.append(value)
        if who.principal is None:
            own.append("0")
        elif who.principal is not ANY:
            own.append("r.owner = ?")
            params.append(who.principal)
        own_sql = " AND ".join(own) or "1"
        return f"({public} OR ({own_sql}))", params

    def _may_write(self, who: _Who, rec: Mapping[str, Any]) -> bool:
        """Whether the requester may change (revise, forget) or give feedback on this record: its
        owner, with a token only within the token's scope."""
        scope = _scope_of(rec)
        for key, value in self._token_scope(who).items():
            if scope.get(key) != value:
                return False
        if who.principal is ANY:
            return True
        return who.principal is not None and scope.get("owner") == who.principal

    def _present(self, rec: dict[str, Any], who: _Who) -> dict[str, Any]:
        """The record as served to this requester: redacted across the owner boundary (§2.7)."""
        out = rec
        if who.requester != _owner_of(rec):
            try:
                out = consent.apply_redact(_readable_redact(rec) if self.policy.unreadable_redact_paths == "ignore"
                                           else rec)
            except consent.RedactPathError:  # only a record stored under accepts-bad-consent
                out = {k: v for k, v in rec.items() if k not in ("integrity", "body")}
                out["body"] = {"text": ""}
            # whatever the redact named (a record stored before its path was refused, or under
            # required_member_redact "keep"), what crosses the boundary is still a record
            out = consent.keep_required(out, rec)
        return out

    def _mint_id(self) -> str:
        """A new record id: urn:ump: + base32 of 16 random bytes (§6.2, L1 form)."""
        if self.policy.minted_ids == "base32hex":
            return "urn:ump:" + base64.b32hexencode(secrets.token_bytes(16)).decode("ascii").rstrip("=")
        return ids.random_id()

    def _verifies(self, rec: Mapping[str, Any], stored_text: str | None = None) -> bool:
        """Integrity verifies (hash, signature, signer = owner). A stored record's verdict is
        remembered per exact stored bytes (its canonical JSON), so a changed row is checked again."""
        if stored_text is None:
            return self._integrity_ok(rec)
        key = _blake3_digest(stored_text.encode("utf-8"))[:16]
        verdict = self._verified.get(key)
        if verdict is None:
            verdict = self._integrity_ok(rec)
            if len(self._verified) >= 200_000:
                self._verified.clear()
            self._verified[key] = verdict
        return verdict

    def _integrity_ok(self, rec: Mapping[str, Any]) -> bool:
        return integrity.verify(rec).ok

    def _signing_key(self, owner: Any) -> Any:
        return self.keyring.for_owner(owner)

    def _sign(self, rec: dict[str, Any]) -> dict[str, Any]:
        """Sign with the owner's key (L3: every stored record is signed), or UmpError."""
        owner = _owner_of(rec)
        key = self._signing_key(owner)
        bare = without_integrity(rec)
        if key is None:
            if not is_did(owner):  # a local account taken despite §2.2 (accepts-opaque-owner): nothing can sign it
                return bare
            raise UmpError("signature_invalid", f"this server signs every record it stores (L3) and holds no "
                                                f"signing key for the owner {owner!r}; send the record signed by "
                                                "its owner (integrity) instead")
        try:
            return integrity.sign(bare, key, self.policy.integrity_encoding)
        except (CanonicalizationError, RecursionError, TypeError, ValueError) as exc:
            raise _invalid(f"the record has no RFC 8785 canonical form to sign: {exc}") from None

    def _publish(self, kind: str, version: str, rowid: int | None, rec: dict[str, Any]) -> None:
        """Deliver a change to every subscription that may see it (call while the row exists)."""
        for sub in list(self._subscriptions):
            if sub.closed or sub.version != version:
                continue
            scope = _scope_of(rec)
            if any(scope.get(k) != v for k, v in sub.scope.items() if k in _SCOPE_MEMBERS):
                continue
            if rowid is not None and not self._may_see(sub.who, rowid):
                continue
            event: dict[str, Any] = {"type": kind, "id": rec["id"]}
            if kind != "erased":
                event["record"] = self._streamed(rec, sub.who)
            sub._push(event)

    def _may_see(self, who: _Who, rowid: int) -> bool:
        """A subscriber is sent a change only of a record it may read (§2.2, as get and recall)."""
        where, params = self._visible_sql(who)
        return self._store.visible(rowid, where, params)

    def _streamed(self, rec: dict[str, Any], who: _Who) -> dict[str, Any]:
        """The record an event carries: as the subscriber is served it (redacted across owners)."""
        return self._present(rec, who)

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subscriptions:
                self._subscriptions.remove(sub)

    def _expire(self) -> None:
        """Retention (§2.7): tombstone every record whose time.created + consent.retention passed."""
        now = self._now()
        for stored in self._store.expired(to_us(now)):
            if self.policy.retention_expiry == "erase":
                self._publish("erased", stored.version, stored.rowid, stored.record)
                with self._store.transaction():
                    self._store.delete(stored.rowid)
                    self._store.log_forget(stored.version, stored.record["id"], "retention", None, True,
                                           format_time(now))
                continue
            rec = copy.deepcopy(stored.record)
            life = rec.get("lifecycle") if isinstance(rec.get("lifecycle"), dict) else {}
            rec["lifecycle"] = dict(life, status="tombstoned")
            key = self.keyring.for_owner(_owner_of(rec))
            rec = (integrity.sign(without_integrity(rec), key, self.policy.integrity_encoding) if key is not None
                   else without_integrity(rec))
            with self._store.transaction():
                self._store.update(stored.rowid, rec)
                self._store.log_forget(stored.version, rec["id"], "retention", None, False, format_time(now))
            self._publish("tombstoned", stored.version, stored.rowid, rec)

    # -- capabilities ----------------------------------------------------------------------------

    def _capabilities(self, request: Any, version: str) -> dict[str, Any]:
        if request is not None and not isinstance(request, dict):
            raise _invalid(f"the capabilities request must be a JSON object ({{client?}}), found {a_json_type(request)}")
        doc = {
            "server": {"name": SERVER_NAME, "version": _server_version()},
            "ump": version,
            "versions": list(self.versions),
            "conformance": "L3",
            "kinds": list(ump_record.KINDS),
            "bindings": list(BINDINGS),
            "retrieval_signals": list(ranking.SIGNALS),
            "max_recall": MAX_RECALL,
            "writable": True,
            "subscribe": True,
            "rehydrate": self.policy.rehydrate_helper,
            "auth": {"capability_tokens": True, "required": self.require_capability},
        }
        if not self.policy.list_versions:
            del doc["versions"]
        return doc

    # -- remember ----------------------------------------------------------------------------------

    def _op_remember(self, request: Any, version: str, grant: captoken.Grant | None) -> dict[str, Any]:
        request = _request_object(request, "remember", "{record: {...}} or a bare record")
        if "record" in request:
            raw = request["record"]
            if not isinstance(raw, dict):
                raise _invalid(f"remember: /record must be a JSON object (a partial memory record), found {a_json_type(raw)}")
        else:
            raw = {k: v for k, v in request.items() if not (k == "capability" and isinstance(v, str))}
        if self.policy.authorize_before_validate and grant is not None:
            scope = raw.get("scope")
            if not isinstance(scope, dict) or not self._may_write(self._who(grant, scope.get("owner")), {"scope": scope}):
                raise UmpError("forbidden_scope", f"remember: the token ({_grant_text(grant)}) does not grant writing "
                                                  f"a record whose scope is {json.dumps(scope)[:200]}")
        raw = self._filled_provenance(raw, grant)
        now = self._now()
        rec, changed, minted, effective = self._complete(raw, version, now)
        if self.policy.reused_id == "refuse" and not minted and isinstance(rec.get("id"), str) \
                and self._store.get(version, rec["id"]) is not None:
            raise _invalid(f"/id: {rec['id']} is already in use; an id names one record once")
        self._validate(rec, effective)
        self._check_l2(rec)
        self._check_not_expired(rec, now)
        owner = _owner_of(rec)
        if grant is not None:
            self._check_may_remember(self._who(grant, owner), rec)
        if "integrity" in raw:
            self._check_integrity(raw)

        if not minted:
            existing = self._store.get(version, rec["id"])
            if existing is not None:
                submitted = {k: v for k, v in raw.items() if k not in ("integrity", "ump")}
                if _subsumes(submitted, existing.record):
                    return self._merged(version, existing)
                raise _invalid(f"/id: {rec['id']} is already the id of a different record; leave id out to get a "
                               "new one")
        target = self._merge_target(version, owner, rec["kind"], rec["body"]["text"]) \
            if self.policy.merge_duplicates else None
        if target is not None:
            return self._merged(version, target)

        rec = self._stored_form(rec, raw, changed)
        depth = self._depth(version, rec)
        with self._store.transaction():
            rowid = self._store.insert(version, rec, depth, to_us(self._now()))
        self._publish("created", version, rowid, rec)
        return {"id": rec["id"], "result": "created"}

    def _validate(self, rec: dict[str, Any], version: str) -> None:
        violations = ump_record.validate(rec, version)
        if violations:
            raise _violation_error(violations)

    def _check_may_remember(self, who: _Who, rec: dict[str, Any]) -> None:
        if not self._may_write(who, rec):
            raise UmpError("forbidden_scope", f"remember: the token ({_grant_text(who.grant)}) does not grant writing "
                                              f"a record owned by {_owner_of(rec)!r} in scope "
                                              f"{json.dumps(dict(_scope_of(rec)), sort_keys=True)}")

    def _check_integrity(self, raw: Mapping[str, Any]) -> None:
        """A record that arrives signed is stored only when its integrity verifies (§7 L3)."""
        report = integrity.verify(raw)
        if not report.ok:
            raise UmpError("signature_invalid", "the record's integrity does not verify: "
                           + "; ".join(f"{p.pointer or '/'}: {p.message}" for p in report.problems))

    def _stored_form(self, rec: dict[str, Any], raw: Mapping[str, Any], changed: bool) -> dict[str, Any]:
        """What is stored: the record as sent when its owner's signature still covers it, else
        signed by the server with the owner's key."""
        return self._sign(rec) if changed or "integrity" not in rec else rec

    def _filled_provenance(self, raw: dict[str, Any], grant: captoken.Grant | None) -> dict[str, Any]:
        """The record with the provenance members it lacks filled from the token's issuer (policy
        fill_provenance); a signed record is left as sent (filling would break its signature)."""
        if self.policy.fill_provenance == "refuse" or grant is None or "integrity" in raw:
            return raw
        prov = raw.get("provenance", {})
        if not isinstance(prov, dict):
            return raw
        actor = grant.issuer if self.policy.fill_provenance == "writer" else "anonymous"
        filled = {"actor": actor, "actor_kind": "agent", "method": "remember", **prov}
        return raw if filled == prov else {**raw, "provenance": filled}

    def _complete(self, raw: dict[str, Any], version: str, now: datetime) -> tuple[dict[str, Any], bool, bool, str]:
        """The record with what the server fills (§3.3): (record, changed, id minted, version to
        validate against)."""
        declared = raw.get("ump", _MISSING)
        effective = version
        changed = False
        if isinstance(declared, str):
            major = declared.split(".", 1)[0]
            if major.isdigit() and major not in {v.split(".")[0] for v in ump_record.VERSIONS}:
                raise UmpError(self.policy.unknown_major_code,
                               f"/ump: {declared!r} has major version {major}, which this server does not know; "
                               "a record of an unknown major version is rejected, not reinterpreted (§8) "
                               "[ump/reject-unknown-major]")
            known = ump_record.known_minor(declared) if self.policy.unknown_minor == "accept" else None
            if known is not None and known != declared:
                raw, declared = dict(raw, ump=known), known  # minors are additive (§8): read as the known one
        if declared is _MISSING and self.policy.missing_ump == "refuse":
            raise _invalid("/ump: the spec version is REQUIRED (§2); the server fills id, time and integrity "
                           "only (§3.3) [ump/record-required-fields]")
        if declared is _MISSING:
            rec = {"ump": version, **copy.deepcopy(raw)}
            changed = True
        elif declared == "0.1" and version == "1.0":
            rec, effective = self._read_0_1(raw)
            changed = effective == version
        else:
            rec = copy.deepcopy(raw)
        minted = "id" not in rec
        if minted:
            rec["id"] = self._mint_id()
            changed = True
        stamp = format_time(now)
        if "time" not in rec:
            rec["time"] = {}
        time = rec["time"]
        if isinstance(time, dict):
            if "created" not in time:
                time["created"] = stamp
                changed = True
            if "valid_from" not in time and isinstance(time.get("created"), str):
                time["valid_from"] = time["created"]
                changed = True
        scope = rec.get("scope")
        if isinstance(scope, dict) and "visibility" not in scope and not (
                rec.get("ump") == "0.1" and self.policy.unmarked_visibility == "absent"):
            scope["visibility"] = "private"
            changed = True
        if "lifecycle" not in rec:
            rec["lifecycle"] = {"status": "active"}
            changed = True
        elif isinstance(rec["lifecycle"], dict) and "status" not in rec["lifecycle"]:
            rec["lifecycle"]["status"] = "active"
            changed = True
        return rec, changed, minted, effective

    def _read_0_1(self, raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """A 0.1 record remembered in a 1.0 exchange, and the version it is validated against:
        it is stored as 1.0 (§8)."""
        return ump_record.normalize(raw, "1.0"), "1.0"

    def _check_l2(self, rec: dict[str, Any]) -> None:
        """What a valid record must also have on this L3 server: provenance, a DID owner, a
        consent block the store can honour."""
        self._check_provenance(rec)
        self._check_owner(rec)
        self._check_consent(rec)
        self._check_redact_keeps_record(rec)

    def _check_not_expired(self, rec: dict[str, Any], now: datetime) -> None:
        """Policy expired_on_arrival "refuse": a record whose consent.retention ran out (counted from
        its time.created) before it arrived is refused, not stored."""
        if self.policy.expired_on_arrival != "refuse":
            return
        expires = self._store._columns(rec, 0)["expires"]  # the store's own reading of the retention
        if expires is not None and expires <= to_us(now):
            retention = (rec.get("consent") or {}).get("retention")
            raise UmpError("consent_violation", f"consent.retention {retention!r} ran out before the record arrived "
                                                "(counted from time.created); it is not stored (§2.7, §3.3)")

    def _check_provenance(self, rec: dict[str, Any]) -> None:
        if "provenance" not in rec:
            raise _invalid("/provenance is missing; at L2 and above every record carries provenance "
                           "{actor, actor_kind, method} (§2.6) [ump/provenance-required]")

    def _check_owner(self, rec: dict[str, Any]) -> None:
        owner = _owner_of(rec)
        if not is_did(owner):
            raise _invalid(f"/scope/owner is {owner!r}; at L2 and above the owner is a W3C DID "
                           "(did:<method>:<id>, §2.2, §5.1) [ump/owner-did]")

    def _check_consent(self, rec: dict[str, Any]) -> None:
        try:
            consent.redact_paths(rec)
        except consent.RedactPathError as exc:
            if self.policy.unreadable_redact_paths == "refuse":
                raise UmpError("consent_violation", f"/consent/redact: {exc}; the store could not apply it (§2.7)") \
                    from None
        cons = rec.get("consent")
        if isinstance(cons, dict) and "retention" in cons and parse_duration(cons["retention"]) is None:
            raise UmpError("consent_violation", f"/consent/retention is {cons['retention']!r}, not an ISO-8601 "
                                                "duration (e.g. P30D, PT12H); the store could not honour it (§2.7)")

    def _check_redact_keeps_record(self, rec: dict[str, Any]) -> None:
        """A redact path that would strip a member no record can lack (id, scope.owner, `$..*` …)
        leaves the store two MUSTs it cannot both keep: apply redact across the boundary (§2.7) and
        serve records (§2). Such a consent fails policy and is refused (§3.3); the other reading
        (policy required_member_redact "keep") stores it and keeps those members when serving."""
        if self.policy.required_member_redact != "refuse":
            return
        try:
            breaking = consent.breaking_paths(rec)
        except consent.RedactPathError:
            return  # a path the store cannot read at all is _check_consent's to judge
        if breaking:
            raise UmpError("consent_violation", f"/consent/redact: {', '.join(map(repr, breaking))} would strip a "
                                                "member every record carries (§2: id, ump, kind, body.text, "
                                                "scope.owner, scope.visibility, time.created; provenance at L2+, "
                                                "§2.6), so no other owner could be served this record with its "
                                                "redact applied (§2.7); name members a record may lack")

    def _check_patch_keeps_owner(self, prior: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
        """A revise never gives a record away: the successor keeps the prior's owner (whose key
        signs the chain), whatever the token allows."""
        if isinstance(patch.get("scope"), dict) and "owner" in patch["scope"] and patch["scope"]["owner"] != _owner_of(prior):
            raise _invalid("revise: the patch may not change scope.owner (/patch/scope/owner)")

    def _check_successor_writable(self, who: _Who, succ: Mapping[str, Any], grant: captoken.Grant | None) -> None:
        """revise writes a record: its successor lies where the requester may write, as a remember's
        would (a patch of scope cannot carry it out of the token's scope)."""
        if not self._may_write(who, succ):
            raise UmpError("forbidden_scope", f"revise: the successor's scope lies outside what the requester may "
                                              f"write ({_grant_text(grant) if grant else who.requester})")

    def _merge_target(self, version: str, owner: str, kind: str, text: str) -> Stored | None:
        """§3.3's dedup policy: an active record of the same owner and kind with the same text."""
        return self._store.merge_target(version, owner, kind, text)

    def _merged(self, version: str, existing: Stored) -> dict[str, Any]:
        self._publish("merged", version, existing.rowid, existing.record)
        return {"id": existing.record["id"], "result": "merged"}

    def _depth(self, version: str, rec: Mapping[str, Any]) -> int:
        sup = rec.get("supersedes")
        if not isinstance(sup, list) or not sup:
            return 0
        known = [d for d in (self._store.depth(version, s) for s in sup if isinstance(s, str)) if d is not None]
        return 1 + max(known, default=0)

    # -- get ---------------------------------------------------------------------------------------

    def _op_get(self, request: Any, version: str, grant: captoken.Grant | None) -> dict[str, Any]:
        request = _request_object(request, "get", "{id}")
        rid = _req_id(request, "get")
        who = self._who(grant, _opt_str(request, "actor", "get"))
        stored = self._readable(version, rid, who, "get")
        if not self._verifies(stored.record, stored.text):
            raise UmpError("signature_invalid", f"the stored record {rid} no longer verifies (integrity); it is not "
                                                "served")
        return {"record": self._present(stored.record, who)}

    def _readable(self, version: str, rid: str, who: _Who, operation: str) -> Stored:
        """The stored record when the requester may read it, else UmpError: not_found when it does
        not exist or is another owner's private record (ids do not leak), forbidden_scope otherwise."""
        stored = self._store.get(version, rid)
        if stored is None:
            raise UmpError("not_found", f"no record {rid} here")
        where, params = self._visible_sql(who)
        if not self._store.visible(stored.rowid, where, params):
            scope = _scope_of(stored.record)
            private = scope.get("visibility", "private") == "private"  # a 0.1 record may leave it out
            if private and (who.principal is None or scope.get("owner") != who.principal):
                raise UmpError("not_found", f"no record {rid} here")
            raise UmpError("forbidden_scope", f"{operation}: the record {rid} is not readable by "
                                              f"{who.requester or 'an anonymous requester'}"
                                              + (f" with this token ({_grant_text(who.grant)})" if who.grant else ""))
        return stored

    # -- recall ------------------------------------------------------------------------------------

    def _op_recall(self, request: Any, version: str, grant: captoken.Grant | None) -> dict[str, Any]:
        request = _request_object(request, "recall", "{query, scope?, filter?, limit?, ranking_hints?}")
        _refuse_nulls(request, "recall", "query", "filter", "ranking_hints")
        query = request.get("query")
        if query is not None and not isinstance(query, str):
            raise _invalid(f"recall: `query` must be a string, found {a_json_type(query)}")
        scope = _opt_scope(request, "recall")
        filt = request.get("filter")
        if filt is not None and not isinstance(filt, dict):
            raise _invalid(f"recall: `filter` must be an object, found {a_json_type(filt)}")
        filt = filt or {}
        _refuse_nulls(filt, "recall: filter", "kind", "valid_at", "include_tombstoned")
        kinds = filt.get("kind")
        if isinstance(kinds, str):
            kinds = [kinds]
        if kinds is not None and (not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds)):
            raise _invalid(f"recall: filter.kind must be a list of kinds, found {a_json_type(filt.get('kind'))}")
        valid_at = filt.get("valid_at")
        at_us: int | None = None
        if valid_at is not None:
            if not ump_record.is_date_time(valid_at) or parse_time(valid_at) is None:
                raise _invalid(f"recall: filter.valid_at must be an RFC 3339 date-time, found {valid_at!r}")
            at_us = self._valid_at(valid_at)
        tomb = filt.get("include_tombstoned", False)
        if not isinstance(tomb, bool):
            raise _invalid(f"recall: filter.include_tombstoned must be a boolean, found {a_json_type(tomb)}")
        hints = request.get("ranking_hints")
        if hints is not None and not isinstance(hints, dict):
            raise _invalid(f"recall: `ranking_hints` must be an object, found {a_json_type(hints)}")
        limit = self._clamped(_opt_limit(request, "recall"))
        who = self._who(grant, scope.get("owner"))
        # unscoped_recall_own: another owner's records are reached by naming that owner (public ones only)
        self._check_request_scope(who, scope, "recall", foreign_owner=self.policy.unscoped_recall_own)

        return self._recall(version, who, query or "", scope, kinds=kinds, valid_at=at_us, include_tombstoned=tomb,
                            limit=limit)

    def _clamped(self, limit: int) -> int:
        """A recall's page: the limit asked, at most the max_recall capabilities advertises."""
        return min(limit, MAX_RECALL)

    def _recall(self, version: str, who: _Who, query: str, scope: Mapping[str, Any], *, kinds: list[str] | None,
                valid_at: int | None, include_tombstoned: bool, limit: int) -> dict[str, Any]:
        """The recall response once the request is read: best first (§3.2)."""
        visible = self._recall_visible(who)
        if self.policy.unscoped_recall_own and "owner" not in scope and isinstance(who.principal, str):
            visible = (f"({visible[0]}) AND r.owner = ?", [*visible[1], who.principal])
        results = self._search(version, who, query, scope, kinds=kinds, valid_at=self._recall_time(valid_at),
                               include_tombstoned=include_tombstoned, limit=limit, visible=visible)
        extra = dict(self.policy.extra_signals)
        return {"results": [{"record": self._present(stored.record, who), "signals": {**sig, **extra}, "score": score}
                            for stored, sig, score in results]}

    def _valid_at(self, text: str) -> int:
        """filter.valid_at as the instant recall looks at (epoch microseconds)."""
        return parse_time(text)

    def _recall_time(self, valid_at: int | None) -> int | None:
        """The valid time recall looks at: filter.valid_at, and without it now (§3.2)."""
        return to_us(self._now()) if valid_at is None else valid_at

    def _recall_visible(self, who: _Who) -> tuple[str, list[Any]]:
        return self._visible_sql(who)

    def _search(self, version: str, who: _Who, query: str, scope: Mapping[str, Any], *, kinds: list[str] | None,
                valid_at: int | None, include_tombstoned: bool, limit: int,
                visible: tuple[str, list[Any]] | None = None) -> list[tuple[Stored, dict[str, Any], float]]:
        """Visible, verified records valid at `valid_at` (None: at any time) ranked for `query`:
        [(stored, signals, score)]. Filters (visibility, by default `_visible_sql`; tombstones, valid
        time, kind) run in SQL before any ranking."""
        now_us = to_us(self._now())
        conds = ["r.version = ?"]
        params: list[Any] = [version]
        vis, vis_params = visible or self._visible_sql(who)
        conds.append(vis)
        params += vis_params
        if not include_tombstoned:
            conds.append("r.status != 'tombstoned'")
        if valid_at is not None:
            at = valid_at
            until = "<=" if self.policy.valid_to_inclusive else "<"
            conds.append(f"r.valid_from <= ? AND (r.valid_to IS NULL OR ? {until} r.valid_to)")
            params += [at, at]
        if kinds is not None:
            if not kinds:
                conds.append("0")
            else:
                conds.append(f"r.kind IN ({', '.join('?' * len(kinds))})")
                params += kinds
        where = " AND ".join(conds)
        terms = ranking.query_terms(query)
        df = self._store.document_frequencies(terms)
        terms = [t for t in terms if t in df]
        rows: list[Any]
        if terms:
            rows = self._candidates(terms, df, where, params)
            docs = max(self._store.docs, 1)
            avgdl = self._store.tokens / docs
            scorer = ranking.bm25_scorer(terms, df, docs, avgdl)
            sims = ranking.similarities([scorer(row["text"]) for row in rows])
        elif ranking.query_terms(query):
            rows, sims = [], []  # words, but none that any record contains
        else:
            score_sql, score_params = ranking.sql_score(now_us, scope)
            rows = self._store.best(score_sql, score_params, where, params, limit * 2 + 10, ranking.EMPTY_WINDOW)
            sims = [0.0] * len(rows)
        wanted = [(f"scope_{k}", v) for k, v in scope.items() if k in ranking.SCOPE_MEMBERS]
        scored = []
        for row, sim in zip(rows, sims):
            hits = sum(1 for col, v in wanted if row[col] == v)
            scope_match = hits / len(wanted) if wanted else 1.0
            score = ranking.fast_score(sim, row["created"], now_us, row["salience"], scope_match, row["depth"])
            scored.append((row["id"], score, (row["rowid"], sim, row["created"], row["salience"], scope_match,
                                              row["depth"])))
        ranked = ranking.rank(scored)
        out: list[tuple[Stored, dict[str, Any], float]] = []
        start = 0
        while len(out) < limit and start < len(ranked):
            chunk = ranked[start:start + limit - len(out) + 5]
            start += len(chunk)
            loaded = self._store.many([payload[0] for _, _, payload in chunk])
            for _, score, (rowid, sim, created, salience, scope_match, depth) in chunk:
                stored = loaded.get(rowid)
                if stored is None or not self._verifies(stored.record, stored.text):
                    continue  # verify on read: a record that no longer verifies is not served
                sig = ranking.signals(similarity=sim, created_us=created, now_us=now_us, salience=salience,
                                      scope=scope_match, depth=depth)
                out.append((stored, sig, score))
                if len(out) >= limit:
                    break
        return out

    def _candidates(self, terms: list[str], df: Mapping[str, int], where: str, params: list[Any]) -> list[Any]:
        """The records (rank columns + text) that recall scores for these words (ranking.py)."""
        if sum(df.values()) <= ranking.EXACT_MATCHES:
            return self._store.matches(ranking.fts_query(terms), where, params, ranking.EXACT_MATCHES)
        by_rowid = {row["rowid"]: row for row in
                    self._store.matches(ranking.fts_query(terms), where, params, ranking.NEWEST, newest=True)}
        rare: list[str] = []
        budget = 0
        for term in sorted(terms, key=lambda t: df[t]):
            if budget + df[term] > ranking.EXACT_MATCHES:
                break
            rare.append(term)
            budget += df[term]
        if rare:
            for row in self._store.matches(ranking.fts_query(rare), where, params, ranking.EXACT_MATCHES):
                by_rowid.setdefault(row["rowid"], row)
        return list(by_rowid.values())

    # -- revise ------------------------------------------------------------------------------------

    def _op_revise(self, request: Any, version: str, grant: captoken.Grant | None) -> dict[str, Any]:
        request = _request_object(request, "revise", "{id, patch, actor?}")
        rid = _req_id(request, "revise")
        patch = request.get("patch", _MISSING)
        if patch is _MISSING:
            raise _invalid("revise: the request has no `patch` (the members to change)")
        if not isinstance(patch, dict):
            raise _invalid(f"revise: `patch` must be an object, found {a_json_type(patch)}")
        actor = _opt_str(request, "actor", "revise")
        stored = self._store.get(version, rid)
        if stored is None:
            raise UmpError("not_found", f"no record {rid} here")
        prior = stored.record
        who = self._who(grant, actor)
        if not self._may_write(who, prior):
            raise self._write_refusal(who, prior, "revise")
        if _status_of(prior) == "tombstoned":
            raise _invalid(f"revise: {rid} is tombstoned; a forgotten record cannot be revised")
        if prior.get("superseded_by") and self.policy.revise_superseded == "refuse":
            raise _invalid(f"revise: {rid} is already superseded by {', '.join(map(str, prior['superseded_by']))}; "
                           "revise the latest record instead")
        if not self._verifies(prior):
            raise UmpError("signature_invalid", f"the stored record {rid} no longer verifies; it is not revised")
        for member in ("id", "ump"):
            if member in patch and patch[member] != prior.get(member):
                raise _invalid(f"revise: the patch may not change `{member}` (/patch/{member})")
        if "integrity" in patch:
            raise _invalid("revise: the patch may not set `integrity`; the server signs the successor (/patch/integrity)")
        self._check_patch_keeps_owner(prior, patch)

        now = self._now()
        stamp = format_time(now)
        base = {k: v for k, v in without_integrity(prior).items() if k != "superseded_by"}
        succ = self._patched(base, patch)
        succ["id"] = self._mint_id()
        succ["supersedes"] = [rid]
        time = succ.get("time") if isinstance(succ.get("time"), dict) else {}
        patched_time = patch.get("time") if isinstance(patch.get("time"), dict) else {}
        valid_from = patched_time.get("valid_from", stamp)
        succ["time"] = dict(time, created=stamp, valid_from=valid_from, valid_to=None)
        if self.policy.revise_observed == "restamp" and "observed" in time and "observed" not in patched_time:
            succ["time"]["observed"] = stamp
        if "provenance" not in patch and isinstance(prior.get("provenance"), dict):
            prov = copy.deepcopy(prior["provenance"])
            source = prov.get("source") if isinstance(prov.get("source"), dict) else {}
            prov.update(method="revise", source=dict(source, ref=rid))
            if self.policy.revise_provenance == "own":
                prov = {k: v for k, v in prov.items() if k in ("actor", "actor_kind", "method")} | {"source": {"ref": rid}}
            if who.requester:
                prov["actor"] = who.requester
            succ["provenance"] = prov
        violations = ump_record.validate(succ, version)
        if violations:
            raise _violation_error(tuple(ump_record.Violation(f"/patch{v.pointer}", v.requirement, v.message)
                                         for v in violations))
        self._check_l2(succ)
        self._check_successor_writable(who, succ, grant)

        new_prior = self._superseded(prior, succ, valid_from)
        self._check_prior_interval(prior, new_prior, valid_from, version)
        succ = self._sign(succ)
        new_prior = self._sign(new_prior)
        with self._store.transaction():
            rowid = self._store.insert(version, succ, self._depth(version, succ), to_us(self._now()))
            self._store.update(stored.rowid, new_prior)
        self._publish("revised", version, rowid, succ)
        return {"id": succ["id"], "supersedes": [rid]}

    def _check_prior_interval(self, prior: Mapping[str, Any], new_prior: Mapping[str, Any], valid_from: str,
                              version: str) -> None:
        """A successor valid from before the prior began would leave the prior's validity ending before
        it began (ump/record-time): refused."""
        bad = [v for v in ump_record.validate(new_prior, version) if v.pointer.startswith("/time")]
        if bad:
            raise _invalid(f"revise: /patch/time/valid_from {valid_from!r} lies before the prior's valid_from "
                           f"{(prior.get('time') or {}).get('valid_from')!r}; the prior's validity would end before "
                           "it began")

    def _patched(self, base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        """The successor's members: the prior's with the patch applied (policies revise_patch and
        revise_scope)."""
        if self.policy.revise_scope == "keep":
            patch = {k: v for k, v in patch.items() if k != "scope"}
        if self.policy.revise_patch == "replace":
            return dict(copy.deepcopy(base), **copy.deepcopy(patch))
        return _merge_patch(base, patch)

    def _superseded(self, prior: dict[str, Any], succ: dict[str, Any], valid_from: str) -> dict[str, Any]:
        """The prior as a revise leaves it (§3.5): valid until the successor's valid_from and
        superseded by it, otherwise untouched (non-destructive)."""
        new_prior = without_integrity(prior)
        ended = (prior.get("time") or {}).get("valid_to") if prior.get("superseded_by") else None
        # a second successor (policy revise_superseded "branch") leaves the valid time the first ended
        new_prior["time"] = dict(new_prior.get("time") or {}, valid_to=ended or valid_from)
        new_prior["superseded_by"] = [*(prior.get("superseded_by") or []), succ["id"]]
        return new_prior

    def _write_refusal(self, who: _Who, rec: Mapping[str, Any], operation: str) -> UmpError:
        owner = _owner_of(rec)
        if self.policy.foreign_write_code == "not_found":
            return UmpError("not_found", f"{operation}: no record {rec.get('id')} here")
        if who.grant is not None:
            return UmpError("forbidden_scope", f"{operation}: the token ({_grant_text(who.grant)}) does not grant "
                                               f"the record {rec.get('id')} (owner {owner})")
        if who.principal is None:
            return UmpError("forbidden_scope", f"{operation}: an anonymous requester may not change {rec.get('id')}; "
                                               "say who you are (`actor`) or send a capability token")
        return UmpError("forbidden_scope", f"{operation}: {who.principal} is not the owner ({owner}) of "
                                           f"{rec.get('id')}")

    # -- forget ------------------------------------------------------------------------------------

    def _op_forget(self, request: Any, version: str, grant: captoken.Grant | None) -> dict[str, Any]:
        request = _request_object(request, "forget", "{id, reason, hard?, actor?}")
        rid = _req_id(request, "forget")
        reason = _opt_str(request, "reason", "forget")
        actor = _opt_str(request, "actor", "forget")
        _refuse_nulls(request, "forget", "hard")
        hard = request.get("hard", False)
        if not isinstance(hard, bool):
            raise _invalid(f"forget: `hard` must be a boolean, found {a_json_type(hard)}")
        stored = self._store.get(version, rid)
        if stored is None:
            if self.policy.forget_unknown == "idempotent":
                return {"result": "tombstoned"}
            raise UmpError("not_found", f"no record {rid} here")
        rec = stored.record
        who = self._who(grant, actor)
        now = self._now()
        if hard:
            self._check_may_hard_forget(who, rec)
            return self._erase(version, stored, who, reason, now)
        if not self._may_write(who, rec):
            raise self._write_refusal(who, rec, "forget")
        if _status_of(rec) == "tombstoned":
            return {"result": "tombstoned"}
        return self._tombstone(version, stored, who, reason, now)

    def _check_may_hard_forget(self, who: _Who, rec: Mapping[str, Any]) -> None:
        if not self._may_write(who, rec):
            err = self._write_refusal(who, rec, "forget")
            raise UmpError(err.code, f"{err.message} (hard forget is owner-only, §3.6)")

    def _erase(self, version: str, stored: Stored, who: _Who, reason: str | None, now: datetime) -> dict[str, Any]:
        """A hard forget (§3.6): the record is erased (policy hard_forget)."""
        if self.policy.hard_forget == "shell":
            return self._erase_to_shell(version, stored, who, reason, now)
        rid = stored.record["id"]
        self._publish("erased", version, stored.rowid, stored.record)
        with self._store.transaction():
            self._store.delete(stored.rowid)
            self._store.db.execute("DELETE FROM feedback WHERE version = ? AND record_id = ?", (version, rid))
            self._store.log_forget(version, rid, reason, who.requester, True, format_time(now))
        return {"result": "erased"}

    def _tombstone(self, version: str, stored: Stored, who: _Who, reason: str | None,
                   now: datetime) -> dict[str, Any]:
        """A soft forget (§3.6): the record kept, tombstoned and re-signed."""
        rec, rid = stored.record, stored.record["id"]
        if not self._verifies(rec):
            raise UmpError("signature_invalid", f"the stored record {rid} no longer verifies; it is not re-signed "
                                                "as a tombstone (hard forget erases it)")
        tomb = without_integrity(rec)
        life = tomb.get("lifecycle") if isinstance(tomb.get("lifecycle"), dict) else {}
        tomb["lifecycle"] = dict(life, status="tombstoned")
        valid = tomb.get("time") if isinstance(tomb.get("time"), dict) else {}
        if self.policy.forget_sets_valid_to and valid.get("valid_to") is None \
                and (parse_time(valid.get("valid_from")) or 0) <= to_us(now):
            tomb["time"] = dict(valid, valid_to=format_time(now))
        if isinstance(tomb.get("provenance"), dict):
            prov = copy.deepcopy(tomb["provenance"])
            source = prov.get("source") if isinstance(prov.get("source"), dict) else {}
            prov.update(method="forget", source=dict(source, ref=rid))
            if who.requester:
                prov["actor"] = who.requester
            tomb["provenance"] = prov
        self._keep_tombstone(version, stored, self._sign(tomb), reason, who.requester, now)
        return {"result": "tombstoned"}

    def _keep_tombstone(self, version: str, stored: Stored, tomb: dict[str, Any], reason: str | None,
                        requester: str | None, now: datetime) -> None:
        with self._store.transaction():
            self._store.update(stored.rowid, tomb)
            self._store.log_forget(version, tomb["id"], reason, requester, False, format_time(now))
        self._publish("tombstoned", version, stored.rowid, tomb)

    def _erase_to_shell(self, version: str, stored: Stored, who: _Who, reason: str | None,
                        now: datetime) -> dict[str, Any]:
        """A hard forget read as erasing the memory, not the id (policy hard_forget "shell"): a
        tombstone keeping only what says which record it was and whose."""
        rec = stored.record
        shell = {k: copy.deepcopy(rec[k]) for k in ("ump", "id", "kind", "scope", "time") if k in rec}
        shell["body"] = {"text": ""}
        shell["lifecycle"] = {"status": "tombstoned"}
        shell["provenance"] = {"actor": who.requester or _owner_of(rec), "actor_kind": "agent", "method": "forget"}
        shell = self._sign(shell)
        with self._store.transaction():
            self._store.update(stored.rowid, shell)
            self._store.db.execute("DELETE FROM feedback WHERE version = ? AND record_id = ?", (version, rec["id"]))
            self._store.log_forget(version, rec["id"], reason, who.requester, True, format_time(now))
        self._publish("tombstoned", version, stored.rowid, shell)
        return {"result": "erased"}

    # -- feedback ----------------------------------------------------------------------------------

    def _op_feedback(self, request: Any, version: str, grant: captoken.Grant | None) -> dict[str, Any]:
        request = _request_object(request, "feedback", "{id, outcome, session?, actor?}")
        rid = _req_id(request, "feedback")
        outcome = request.get("outcome")
        allowed = self._outcomes()
        if outcome not in allowed:
            raise _invalid(f"feedback: `outcome` must be one of {', '.join(allowed)}, found "
                           f"{json.dumps(outcome) if isinstance(outcome, str) else a_json_type(outcome)}")
        session = _opt_str(request, "session", "feedback")
        actor = _opt_str(request, "actor", "feedback")
        stored = self._store.get(version, rid)
        if stored is None:
            raise UmpError("not_found", f"no record {rid} here")
        who = self._who(grant, actor)
        if grant is not None:
            if not self._may_write(who, stored.record):
                raise UmpError("forbidden_scope", f"feedback: the token ({_grant_text(grant)}) does not grant the record "
                                                  f"{rid}")
        else:
            self._readable(version, rid, who, "feedback")
        self._store.add_feedback(version, rid, outcome, session, who.requester, format_time(self._now()))
        return {"ok": True}

    # -- rehydrate ---------------------------------------------------------------------------------

    def _op_rehydrate(self, request: Any, version: str, grant: captoken.Grant | None) -> dict[str, Any]:
        if not self.policy.rehydrate_helper:
            raise UmpError("unsupported", "this server offers no rehydration helper (§5.3 binds the consumer)")
        request = _request_object(request, "rehydrate", "{ids?, records?, query?, scope?, limit?}")
        _refuse_nulls(request, "rehydrate", "ids", "records", "query")
        wanted = request.get("ids") if self.policy.rehydrate_answer == "helper" else None
        if wanted is not None and (not isinstance(wanted, list) or not all(isinstance(i, str) for i in wanted)):
            raise _invalid("rehydrate: `ids` must be a list of record ids")
        given = request.get("records")
        if given is not None and not isinstance(given, list):
            raise _invalid(f"rehydrate: `records` must be a list of records, found {a_json_type(given)}")
        query = request.get("query")
        if query is not None and not isinstance(query, str):
            raise _invalid(f"rehydrate: `query` must be a string, found {a_json_type(query)}")
        scope = _opt_scope(request, "rehydrate")
        limit = self._clamped(_opt_limit(request, "rehydrate"))
        who = self._who(grant, scope.get("owner") or _opt_str(request, "actor", "rehydrate"))
        self._check_request_scope(who, scope, "rehydrate")

        included: list[dict[str, Any]] = []
        included_ids: list[str] = []
        dropped: list[dict[str, Any]] = []
        seen: set[str] = set()

        def take(rec: dict[str, Any]) -> None:
            if len(included) >= limit:
                dropped.append({"id": rec.get("id"), "reason": "limit"})
                return
            seen.add(rec["id"])
            included.append(self._present(rec, who))
            included_ids.append(rec["id"])  # the stored record's: what is presented is the requester's view

        for rid in wanted or []:
            if rid in seen:
                continue
            seen.add(rid)
            try:
                stored = self._readable(version, rid, who, "rehydrate")
            except UmpError as exc:
                dropped.append({"id": rid, "reason": exc.code})
                continue
            reason = self._drop_reason(stored.record, version)
            if reason:
                dropped.append({"id": rid, "reason": reason})
            else:
                take(stored.record)
        given = self._given(given, limit)
        for rec in given or []:
            rid = rec.get("id") if isinstance(rec, dict) and isinstance(rec.get("id"), str) else None
            reason = self._inline_drop_reason(rec, version, who)
            if reason is None and rid in seen:
                reason = "duplicate"
            if reason:
                dropped.append({"id": rid, "reason": reason})
            else:
                take(rec)
        if (query is not None or (wanted is None and given is None)) and len(included) < limit:
            for rec, reason in self._rehydrate_search(version, who, query or "", scope, limit - len(included)):
                if reason:
                    dropped.append({"id": rec["id"], "reason": reason})
                elif rec["id"] not in seen:
                    take(rec)
        text = self._frame(included)
        if self.policy.rehydrate_answer == "context":
            return {"context": text, "included": included_ids, "dropped": dropped,
                    "framing": "ump:memory/untrusted-data"}
        return {"text": text, "included": included_ids, "dropped": dropped}

    def _outcomes(self) -> list[str]:
        return list(OUTCOMES)

    def _given(self, given: list[Any] | None, limit: int) -> list[Any] | None:
        """The records the client gave inline, each judged before any limit applies (§5.3)."""
        return given

    def _rehydrate_search(self, version: str, who: _Who, query: str, scope: Mapping[str, Any],
                          limit: int) -> list[tuple[dict[str, Any], str | None]]:
        """The best records for the query, filtered before they are ranked (§5.3), each with why
        it is dropped (None: it is not)."""
        return [(stored.record, None) for stored, _, _ in
                self._search(version, who, query, scope, kinds=None, valid_at=to_us(self._now()),
                             include_tombstoned=False, limit=limit)]

    def _frame(self, included: list[dict[str, Any]]) -> str:
        """The rehydration text: the records as data inside the frame (§5.3)."""
        if self.policy.rehydrate_frame == "fence":
            return render_fenced(included)
        if self.policy.rehydrate_frame == "json":
            return render_json(included)
        if self.policy.rehydrate_frame == "elements":
            return render_elements(included)
        return render(included)

    def _drop_reason(self, rec: Mapping[str, Any], version: str) -> str | None:
        if _status_of(rec) == "tombstoned":
            return "tombstoned"
        if not self._rehydrate_verifies(rec):
            return "signature_invalid"
        return None

    def _rehydrate_verifies(self, rec: Mapping[str, Any]) -> bool:
        """§5.3 step 1: drop unverifiable L3 records (a record without integrity is unverifiable)."""
        return "integrity" in rec and self._verifies(rec)

    def _inline_drop_reason(self, rec: Any, version: str, who: _Who) -> str | None:
        """Why a record the client gave inline is not rehydrated (None: it is)."""
        if not isinstance(rec, dict):
            return "invalid_record"
        declared = ump_record.detect_version(rec)
        if declared is None or ump_record.validate(rec, declared):
            return "invalid_record"
        if not self._rehydrate_verifies(rec):
            return "signature_invalid"
        if _status_of(rec) == "tombstoned":
            return "tombstoned"
        cons = rec.get("consent") if isinstance(rec.get("consent"), dict) else {}
        retention = parse_duration(cons.get("retention")) if "retention" in cons else None
        created = parse_time((rec.get("time") or {}).get("created"))
        if (retention is not None and created is not None and created + retention <= to_us(self._now())
                and self.policy.retention_from != "receipt"):  # an inline record is received now
            return "tombstoned"
        try:
            consent.redact_paths(rec)
        except consent.RedactPathError:
            return "consent_violation"
        scope = _scope_of(rec)
        public = scope.get("visibility") in self._public()
        if not public and not self._may_write(who, rec):
            return "not_visible"
        return None


def _readable_redact(rec: dict[str, Any]) -> dict[str, Any]:
    """The record with only the redact paths this server can read (policy unreadable_redact_paths
    "ignore": a path it cannot read names nothing it holds)."""
    cons = rec.get("consent")
    paths = cons.get("redact") if isinstance(cons, dict) else None
    if not isinstance(paths, list):
        return rec
    readable = []
    for path in paths:
        try:
            consent.redact_paths({"consent": {"redact": [path]}})
        except consent.RedactPathError:
            continue
        readable.append(path)
    return rec if len(readable) == len(paths) else dict(rec, consent=dict(cons, redact=readable))


# -- helpers ---------------------------------------------------------------------------------------


def _blake3_digest(data: bytes) -> bytes:
    import blake3

    return blake3.blake3(data).digest()
