"""The wrong UMP implementations that need more than a line: each named after its fault
(reference_impl/ump/faults.py, where the one-line ones sit beside their entries) and written apart
from the right one (service.py), as Bowtie's miniatures are.

A wrap takes the service and the method it replaces (`original`) and returns the wrong method
(reference_impl/faults.py, `install_wraps`); `after`, `before` and `instead` build the common ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.suite.ump import captoken

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
