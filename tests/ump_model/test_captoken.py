"""Capability tokens (§5.2) in the reference implementation's format."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings, strategies as st

from memconform.suite.ump import captoken
from memconform.suite.ump.testkeys import test_did, test_signing_key

A, B = test_did("owner-a"), test_did("owner-b")
NOW = 1_800_000_000.0


def _token(**kw):
    kw.setdefault("scope", {"owner": A})
    kw.setdefault("now", NOW)
    return captoken.mint(test_signing_key(kw.pop("key", "owner-a")), **kw)


def test_round_trip_gives_the_grant():
    grant = captoken.verify(_token(verbs=["read"], scope={"owner": A, "project": "p"}), now=NOW)
    assert grant.issuer == A
    assert grant.verbs == frozenset({"read"})
    assert dict(grant.scope) == {"owner": A, "project": "p"}
    assert grant.expires == NOW + 900


def test_wire_format():
    token = _token()
    prefix, payload, sig = token.split(".")
    assert prefix == "umpcap" and sig.startswith("ed25519:")
    assert "=" not in payload and "=" not in sig
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    # times as the public implementation writes them: ISO-8601 UTC strings (issue 13)
    assert claims["v"] == "ump-cap/1.0" and claims["iss"] == A and isinstance(claims["exp"], str)
    assert claims["exp"].endswith("Z") and captoken.read_time(claims["exp"], "exp", "iso") == int(NOW + 900)
    numeric = json.loads(base64.urlsafe_b64decode(_token(times="numeric").split(".")[1] + "=="))
    assert isinstance(numeric["exp"], int)
    # canonical JSON: keys sorted, no spaces
    assert base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode() == json.dumps(
        claims, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("mutate, code", [
    (lambda t: t.replace("umpcap.", "umpcop.", 1), "malformed"),
    (lambda t: t + ".x", "malformed"),
    (lambda t: t.rsplit(".", 1)[0] + ".rsa:AAAA", "bad_sig_format"),
    (lambda t: t.rsplit(".", 1)[0] + ".ed25519:AAAA", "bad_sig_format"),
    (lambda t: "umpcap.%%%." + t.rsplit(".", 1)[1], "bad_payload"),
])
def test_malformed_tokens_are_refused_with_a_reason(mutate, code):
    with pytest.raises(captoken.TokenError) as exc:
        captoken.verify(mutate(_token()), now=NOW)
    assert exc.value.code == code


def test_forged_signature_is_refused():
    token = _token()
    head, sig = token.rsplit("ed25519:", 1)
    raw = bytearray(base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)))
    raw[0] ^= 1
    forged = head + "ed25519:" + base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    with pytest.raises(captoken.TokenError) as exc:
        captoken.verify(forged, now=NOW)
    assert exc.value.code == "signature_invalid"


def test_claimed_issuer_that_did_not_sign_is_refused():
    token = _token(key="mallory", iss=A)
    with pytest.raises(captoken.TokenError) as exc:
        captoken.verify(token, now=NOW)
    assert exc.value.code == "signature_invalid"


def test_time_window():
    with pytest.raises(captoken.TokenError, match="expired"):
        captoken.verify(_token(exp=NOW - 1), now=NOW)
    with pytest.raises(captoken.TokenError, match="not_yet_valid"):
        captoken.verify(_token(nbf=NOW + 60), now=NOW)
    assert captoken.verify(_token(nbf=NOW - 60), now=NOW).not_before == NOW - 60


def test_unknown_version_and_verbs_are_refused():
    with pytest.raises(captoken.TokenError, match="unsupported_version"):
        captoken.verify(_token(version="ump-cap/9"), now=NOW)
    with pytest.raises(captoken.TokenError, match="bad_payload"):
        captoken.verify(_token(verbs=["read", "delete"]), now=NOW)
    assert captoken.verify(_token(version="ump-cap/0.1"), now=NOW).version == "ump-cap/0.1"


def test_grant_is_bound_to_the_issuer_as_owner():
    grant = captoken.verify(_token(scope={}), now=NOW)
    assert grant.covers({"scope": {"owner": A, "visibility": "private"}})
    assert not grant.covers({"scope": {"owner": B, "visibility": "private"}})
    # a token signed by mallory naming owner-a's scope grants nothing of owner-a's
    evil = captoken.verify(_token(key="mallory", scope={"owner": A}), now=NOW)
    assert not evil.covers({"scope": {"owner": A}})


def test_scope_members_narrow_the_grant():
    grant = captoken.verify(_token(scope={"owner": A, "project": "p"}), now=NOW)
    assert grant.covers({"scope": {"owner": A, "project": "p"}})
    assert not grant.covers({"scope": {"owner": A, "project": "q"}})
    assert not grant.covers({"scope": {"owner": A}})
    assert grant.covers_request_scope({"owner": A, "project": "p"})
    assert not grant.covers_request_scope({"project": "q"})
    assert not grant.covers_request_scope({"owner": B})


def test_verb_for_every_operation():
    assert captoken.VERB_FOR_OPERATION["recall"] == "read"
    assert captoken.VERB_FOR_OPERATION["remember"] == "write"
    assert captoken.VERB_FOR_OPERATION["feedback"] == "derive"
    assert captoken.VERB_FOR_OPERATION["capabilities"] is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_verifies_and_never_crashes(text):
    with pytest.raises(captoken.TokenError):
        captoken.verify(text, now=NOW)
