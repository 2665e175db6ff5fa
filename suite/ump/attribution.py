"""Which open subscription could rightly be told of a record (§3.8 subscribe, §2.2 visibility, §5.2 scope).

A server whose subscriptions outlive their call and whose events name no subscription (MCP resource
notices, a round-29 blind red team's server) mixes every open subscription's events on one session.
The driver knows what each of its subscriptions asked for and as whom, and the check knows whose
record it wrote, where, and who may read it: an event about a record that no open subscription
could rightly be told of is a leak by whichever subscription it belongs to. Where one of them
could, the event proves nothing, and the check says so instead of judging.

Every test here errs towards "could": a subscription is taken to cover a record unless its request
or its authority plainly excludes it, so a right server is never charged with another
subscription's rightful event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memconform.suite.ump import captoken, owners
from memconform.suite.ump.client import OpenSubscription


@dataclass(frozen=True)
class Written:
    """What a check knows of a record it wrote."""

    id: str
    owner: str        # the owner's DID
    project: str
    visibility: str   # "private" is the only one no other principal may ever read


def _within(project: str, wanted: Any) -> bool:
    # a server may read a project as a path prefix of its children: count the broader match
    return not isinstance(wanted, str) or project == wanted or project.startswith(wanted.rstrip("/") + "/")


def _authority(sub: OpenSubscription) -> tuple[str, dict[str, Any]] | None:
    """The owner whose private records the subscription's token may read, with the token's scope;
    None for an anonymous subscription. An unreadable token is taken to grant everything."""
    auth = sub.auth
    if auth.kind == "anonymous":
        return None
    if auth.kind == "owner":
        owner = owners.did(auth.owner or "owner-a")
        return owner, {"owner": owner}
    try:
        claims = captoken.claims_of(auth.token or "")
    except captoken.TokenError:
        return "*", {}
    scope = claims.get("scope") if isinstance(claims.get("scope"), dict) else {}
    issuer = claims.get("iss") if isinstance(claims.get("iss"), str) else "*"
    return issuer, dict(scope)


def may_be_told(sub: OpenSubscription, rec: Written) -> bool:
    """Whether `sub` could rightly be sent an event about `rec`: inside the scope it asked for, and
    readable by its authority (its owner's records within the token's scope, anyone's non-private)."""
    request = sub.request if isinstance(sub.request, dict) else {}
    scope = request.get("scope") if isinstance(request.get("scope"), dict) else {}
    if isinstance(scope.get("owner"), str) and scope["owner"] != rec.owner:
        return False
    if not _within(rec.project, scope.get("project")):
        return False
    if rec.visibility != "private":
        return True
    authority = _authority(sub)
    if authority is None:
        return False
    issuer, token_scope = authority
    if issuer not in ("*", rec.owner):
        return False
    if isinstance(token_scope.get("owner"), str) and token_scope["owner"] != rec.owner:
        return False
    return _within(rec.project, token_scope.get("project"))


def rightful(open_before: tuple[OpenSubscription, ...], rec: Written) -> list[OpenSubscription]:
    """The open subscriptions that could rightly have been told of `rec`."""
    return [sub for sub in open_before if may_be_told(sub, rec)]


def describe(sub: OpenSubscription) -> str:
    request = sub.request if isinstance(sub.request, dict) else {}
    who = {"owner": sub.auth.owner, "anonymous": "no token"}.get(sub.auth.kind, "a token of the check's")
    return f"{sub.handle or 'a subscription'} (scope {request.get('scope', 'none named')}, as {who})"
