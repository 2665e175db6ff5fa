"""Issue 14, "keep what held": the capability-token corpus against the reference server's UMP HTTP
binding. Malformed, truncated, non-base64, empty, expired, not-yet-valid, wrong-signature and
wrong-issuer tokens, and claims of every wrong type, each sent to every operation: 401 or 403 in the §3
envelope, never a 5xx, never a byte of the owner's private record, nothing written.

Tokens are minted with suite/ump/captoken.py and the test keys; the broken ones are re-signed here with
the same format (Ed25519 over BLAKE3 of the payload text) so that only the one thing each case breaks is
wrong. Cases a known open bug makes fail are marked xfail(strict=True): once fixed they pass, the run goes
red, and the mark must go.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import blake3
import httpx
import pytest
from jsonschema import Draft202012Validator

from memconform.reference_impl.ump.serve import start_in_thread
from memconform.reference_impl.ump.service import UmpService
from memconform.suite.ump import captoken, testkeys

OWNER = testkeys.test_did("owner-a")
SECRET = "tokencorpus7f3a secret of owner-a"  # the private record's text: never in an answer to a bad token


def _error_schema() -> Draft202012Validator:
    defs = json.loads((resources.files("memconform.suite.ump") / "schemas" / "operations.schema.json")
                      .read_text("utf-8"))["$defs"]
    return Draft202012Validator({"$ref": "#/$defs/error", "$defs": defs})


UMP_ERROR = _error_schema()


# -- making tokens ----------------------------------------------------------------------------------

def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def valid(name: str = "owner-a", **kw: Any) -> str:
    kw.setdefault("scope", {"owner": testkeys.test_did(name)})
    kw.setdefault("ttl", 3600)
    return captoken.mint(testkeys.test_signing_key(name), **kw)


def base_claims() -> dict[str, Any]:
    """The claims of a fresh valid token, in whatever form captoken writes them."""
    return captoken.claims_of(valid())


def signed(payload_text: str, signer: str = "owner-a") -> str:
    """A token of exactly this payload text, signed as the format says by a test key."""
    payload = _b64(payload_text.encode("utf-8"))
    signature = testkeys.test_signing_key(signer).sign(blake3.blake3(payload.encode("ascii")).digest()).signature
    return f"{captoken.PREFIX}.{payload}.ed25519:{_b64(signature)}"


def claims(signer: str = "owner-a", drop: tuple[str, ...] = (), **changes: Any) -> str:
    body = {k: v for k, v in {**base_claims(), **changes}.items() if k not in drop}
    return signed(json.dumps(body), signer)


def raw_claim(name: str, literal: str) -> str:
    """A token whose claim `name` is the JSON literal text `literal` (NaN, 1e400, 401 digits, ...)."""
    body = base_claims()
    body[name] = "@@LITERAL@@"
    return signed(json.dumps(body).replace('"@@LITERAL@@"', literal))


def _with_payload(token: str, payload: str) -> str:
    head, _, sig = token.split(".")
    return f"{head}.{payload}.{sig}"


def _with_sig(token: str, sig: str) -> str:
    head, payload, _ = token.split(".")
    return f"{head}.{payload}.{sig}"


def corpus() -> dict[str, tuple[str | None, str]]:
    """case → (the Authorization header or None for none, what it attacks)."""
    now = time.time()
    good = valid()
    head, payload, sig = good.split(".")
    sig_bytes = base64.urlsafe_b64decode(sig[len("ed25519:"):] + "==")
    other = valid()  # another valid token: its signature belongs to another payload
    not_utf8 = _b64(b'{"v": "\xff\xfe"}')
    cases: dict[str, tuple[str | None, str]] = {
        "absent": (None, "empty"), "Bearer alone": ("Bearer", "empty"), "Bearer and a tab": ("Bearer\tx", "malformed"),
        "empty header": ("", "empty"), "Basic scheme": ("Basic b3duZXItYTpwYXNz", "malformed"),
        "Token scheme": (f"Token {good}", "malformed"), "no scheme": (good, "malformed"),
        "two tokens": (f"Bearer {good} {good}", "malformed"),
    }
    bare = {
        "garbage": "garbage", "prefix only": "umpcap", "prefix and dot": "umpcap.", "empty parts": "umpcap..",
        "two parts": f"umpcap.{payload}", "four parts": f"{good}.x", "other prefix": f"jwt.{payload}.{sig}",
        "upper-case prefix": f"UMPCAP.{payload}.{sig}", "rsa signature scheme": _with_sig(good, "rsa:" + sig[8:]),
        "no signature scheme": _with_sig(good, sig[8:]), "empty signature": _with_sig(good, "ed25519:"),
        "payload !!!": _with_payload(good, "!!!!"),
        "payload with +/": _with_payload(good, payload.replace("-", "+") + "+/"),
        "payload padded": _with_payload(good, payload + "=="),
        "payload with a space": _with_payload(good, payload[:10] + " " + payload[10:]),
        "payload with a dot inside": _with_payload(good, payload[:10] + "." + payload[10:]),
        "signature !!!": _with_sig(good, "ed25519:!!!!"), "signature padded": _with_sig(good, sig + "=="),
        "non-ASCII payload": _with_payload(good, "é" + payload), "non-ASCII signature": _with_sig(good, sig + "é"),
        "long garbage": "umpcap." + "A" * 6000 + ".ed25519:" + "A" * 86,
        "not JSON": signed("not json"), "JSON array": signed("[]"), "JSON null": signed("null"),
        "JSON string": signed('"x"'), "truncated JSON": signed('{"v": "ump-cap/1.0"'), "empty payload": signed(""),
        "invalid UTF-8 payload": f"umpcap.{not_utf8}.{sig}",
        "flipped signature": _with_sig(good, sig[:-4] + ("AAAA" if not sig.endswith("AAAA") else "BBBB")),
        "signature of another token": _with_sig(good, other.split(".")[2]),
        "all-zero signature": _with_sig(good, "ed25519:" + _b64(bytes(64))),
        "63-byte signature": _with_sig(good, "ed25519:" + _b64(sig_bytes[:63])),
        "65-byte signature": _with_sig(good, "ed25519:" + _b64(sig_bytes + b"\0")),
        "mallory signs as owner-a": claims(signer="mallory"),
        "owner-b signs as owner-a": claims(signer="owner-b"),
        "claimed issuer owner-b, signed by owner-a": claims(iss=testkeys.test_did("owner-b")),
        "issuer missing": claims(drop=("iss",)), "issuer a number": claims(iss=5), "issuer empty": claims(iss=""),
        "issuer did:web": claims(iss="did:web:example.com"), "issuer bad did:key": claims(iss="did:key:zBAD"),
        "version missing": claims(drop=("v",)), "version unknown": claims(v="ump-cap/9"),
        "version a number": claims(v=1),
        "verbs missing": claims(drop=("verbs",)), "verbs a string": claims(verbs="read"),
        "verbs numbers": claims(verbs=[5]), "verbs unknown": claims(verbs=["admin"]),
        "verbs wildcard": claims(verbs=["*"]), "verbs null": claims(verbs=None), "verbs empty": claims(verbs=[]),
        "scope a string": claims(scope="all"), "scope a list": claims(scope=[]),
        "scope owner a number": claims(scope={"owner": 5}),
        "exp missing": claims(drop=("exp",)), "exp null": claims(exp=None), "exp true": claims(exp=True),
        "exp a list": claims(exp=[]), "exp an object": claims(exp={}), "exp a word": claims(exp="tomorrow"),
        "exp impossible date": claims(exp="2030-13-45T00:00:00Z"),
        "exp without offset": claims(exp="2030-01-01T00:00:00"),
        "exp NaN": raw_claim("exp", "NaN"), "exp Infinity": raw_claim("exp", "Infinity"),
        "exp 1e400": raw_claim("exp", "1e400"), "exp -1e400": raw_claim("exp", "-1e400"),
        "exp 0": claims(exp=0), "exp -1": claims(exp=-1), "exp 1970": claims(exp="1970-01-01T00:00:00Z"),
        "expired an hour ago (numeric)": claims(exp=int(now - 3600)),
        "expired a second ago (numeric)": claims(exp=int(now - 1)),
        "expired an hour ago (RFC 3339)": claims(exp=captoken.claims_of(valid(now=now - 7200, ttl=3600))["exp"]),
        "expired (minted)": valid(now=now - 3600, ttl=60),
        "nbf in an hour (minted)": valid(nbf=now + 3600),
        "nbf in an hour (numeric)": claims(nbf=int(now + 3600)),
        "nbf in 3000 (RFC 3339)": claims(nbf="3000-01-01T00:00:00Z"),
        "nbf a word": claims(nbf="now"), "nbf null": claims(nbf=None), "nbf NaN": raw_claim("nbf", "NaN"),
        "nbf 1e400": raw_claim("nbf", "1e400"), "nbf after exp": claims(nbf=int(now + 7200), exp=int(now + 3600)),
    }
    for fraction in (0.25, 0.5, 0.9):
        cut = int(len(good) * fraction)
        bare[f"truncated to {int(fraction * 100)}%"] = good[:cut]
    bare["truncated by one"] = good[:-1]
    bare["truncated inside the signature"] = good[:len(head) + len(payload) + 12]
    for label, token in bare.items():
        what = ("expired" if "expired" in label or label.startswith("exp") else
                "not yet valid" if label.startswith("nbf") else
                "wrong signature" if "sign" in label and "scheme" not in label else
                "wrong issuer" if "issuer" in label else "truncated" if "truncated" in label else
                "non-base64" if "payload" in label or "signature" in label else "malformed")
        cases[label] = (f"Bearer {token}", what)
    return cases


#: The case names, for collection; the tokens themselves are made when the module's tests run (`tokens`), so
#: that a long wait between collecting and running (a full run under xdist) expires none of them.
CASES = sorted(corpus())
#: Issue 14 item 1: integers no float can hold.
HUGE_CASES = {"exp 10**400": ("exp", "1" + "0" * 400), "nbf 10**400": ("nbf", "1" + "0" * 400),
              "exp -10**400": ("exp", "-1" + "0" * 400), "nbf -10**400": ("nbf", "-1" + "0" * 400)}


# -- the server ------------------------------------------------------------------------------------

@dataclass
class Server:
    url: str
    db: Path

    def victim(self) -> str:
        """A fresh private record of owner-a (an attack that got through must not spoil the next case)."""
        r = httpx.post(f"{self.url}/ump/remember", timeout=30,
                       headers={"UMP-Version": "1.0", "Authorization": f"Bearer {valid()}"},
                       json={"record": _record(f"{SECRET} {time.monotonic_ns()}")})
        assert r.status_code == 200, r.text
        return r.json()["id"]

    def snapshot(self) -> str:
        digest = hashlib.sha256()
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                       "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall():
                for row in db.execute(f'SELECT * FROM "{table}"'):
                    digest.update(repr(row).encode())
        return digest.hexdigest()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("hostile-tokens") / "ump.sqlite"
    service = UmpService(db=str(db), require_capability=True)
    running = start_in_thread(service)
    try:
        yield Server(running.base_url, db)
    finally:
        running.stop()
        service.close()


def _record(text: str) -> dict[str, Any]:
    return {"kind": "semantic", "body": {"text": text}, "scope": {"owner": OWNER, "visibility": "private"},
            "provenance": {"actor": OWNER, "actor_kind": "agent", "method": "memconform-test"}}


def _requests(private: str) -> list[tuple[str, str, Any]]:
    quoted = "/ump/memory/" + urllib.parse.quote(private, safe="")
    return [("POST", "/ump/recall", {"query": SECRET.split()[0]}),
            ("POST", "/ump/remember", {"record": _record("planted")}),
            ("GET", quoted, None), ("POST", "/ump/revise", {"id": private, "patch": {"body": {"text": "overwritten"}}}),
            ("POST", "/ump/forget", {"id": private, "reason": "user_revoked", "hard": True}),
            ("POST", "/ump/feedback", {"id": private, "outcome": "followed"}),
            ("POST", "/ump/rehydrate", {"ids": [private]}), ("GET", "/ump/subscribe", None)]


def attack(server: Server, header: str | bytes | None, allowed: tuple[int, ...] = (401, 403)) -> list[str]:
    """Every operation with this Authorization header; what went wrong."""
    headers: dict[str, Any] = {"UMP-Version": "1.0"}
    if header is not None:
        headers["Authorization"] = header.encode("utf-8") if isinstance(header, str) else header
    failures = []
    private = server.victim()
    before = server.snapshot()
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as c:
        for method, path, body in _requests(private):
            with c.stream(method, path, json=body) as r:
                # An accepted subscribe is an endless stream: its status says all, and nothing is read.
                text = r.read().decode("utf-8", "replace") if r.status_code != 200 or method == "POST" or \
                    not path.endswith("subscribe") else ""
            where = f"{method} {path.split('/')[2] if path.count('/') > 1 else path}"
            if r.status_code not in allowed:
                failures.append(f"{where}: {r.status_code} {text[:160]}")
                continue
            if SECRET in text:
                failures.append(f"{where}: served the private record: {text[:160]}")
            if r.status_code >= 400:
                try:
                    errors = [e.message for e in UMP_ERROR.iter_errors(json.loads(text))]
                except ValueError:
                    errors = ["not JSON"]
                if errors or "Traceback" in text:
                    failures.append(f"{where}: {r.status_code} not the §3 envelope {errors}: {text[:160]}")
    if server.snapshot() != before:
        failures.append("the store changed")
    r = httpx.get(f"{server.url}/ump/memory/{urllib.parse.quote(private, safe='')}", timeout=30,
                  headers={"UMP-Version": "1.0", "Authorization": f"Bearer {valid()}"})
    if r.status_code != 200 or r.json()["record"]["lifecycle"]["status"] != "active":
        failures.append(f"the owner's record is not as it was: {r.status_code} {r.text[:160]}")
    return failures


# -- the tests --------------------------------------------------------------------------------------

def test_the_corpus_is_made_right(server: Server) -> None:
    """The control: the forging helper makes tokens the server honours, so a refusal below is the
    server's judgement of the one broken thing, not of the helper."""
    server.victim()
    for token in (valid(), claims(), signed(json.dumps(base_claims()))):
        r = httpx.post(f"{server.url}/ump/recall", json={"query": SECRET.split()[0]}, timeout=30,
                       headers={"UMP-Version": "1.0", "Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and SECRET in r.text, r.text[:300]
    assert len(CASES) >= 90, len(CASES)


@pytest.fixture(scope="module")
def tokens() -> dict[str, tuple[str | None, str]]:
    return corpus()


@pytest.mark.parametrize("case", CASES)
def test_a_bad_token_is_refused_everywhere(server: Server, tokens: dict[str, tuple[str | None, str]],
                                           case: str) -> None:
    header, _ = tokens[case]
    failures = attack(server, header)
    assert not failures, f"{case}:\n" + "\n".join(failures)


@pytest.mark.parametrize("case", sorted(HUGE_CASES))
def test_a_token_time_no_float_can_hold_is_refused(server: Server, case: str) -> None:
    name, literal = HUGE_CASES[case]
    failures = attack(server, f"Bearer {raw_claim(name, literal)}", allowed=(401,))
    assert not failures, f"{case}:\n" + "\n".join(failures)


@pytest.mark.parametrize("depth", [2000, 500])
@pytest.mark.parametrize("signer", ["owner-a", None])
def test_a_token_whose_payload_nests_deeply_is_refused(server: Server, depth: int, signer: str | None) -> None:
    payload = "[" * depth + "]" * depth
    token = signed(payload) if signer else f"umpcap.{_b64(payload.encode())}.ed25519:{_b64(bytes(64))}"
    failures = attack(server, f"Bearer {token}", allowed=(401,))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("issuer", ["mallory", "owner-b"])
def test_another_owners_valid_token_reaches_nothing_of_owner_a(server: Server, issuer: str) -> None:
    """A token that verifies but whose issuer is not the owner: refused, or served only what is not
    owner-a's (recall answers 200 with other results, a private id is 404 so ids do not leak)."""
    header = f"Bearer {valid(issuer, scope={'owner': OWNER})}"
    failures = attack(server, header, allowed=(200, 401, 403, 404))
    own = f"Bearer {valid(issuer)}"
    failures += attack(server, own, allowed=(200, 401, 403, 404))
    assert not failures, "\n".join(failures)


def test_a_token_without_the_verb_is_forbidden(server: Server) -> None:
    failures = attack(server, f"Bearer {valid(verbs=['export'])}", allowed=(403,))
    assert not failures, "\n".join(failures)
