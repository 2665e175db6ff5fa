import base64
import copy
import json
import random

import blake3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nacl.signing import VerifyKey

from memconform.suite.ump.canonical import canonical_bytes, without_integrity
from memconform.suite.ump.did import public_key_from_did_key
from memconform.suite.ump.integrity import IntegrityReport, content_hash, sign, verify
from memconform.suite.ump.testkeys import test_did, test_signing_key

from ._data import EXAMPLE_HASH, example, minimal
from .strategies import signed_records, valid_records

REQS = {"ump/integrity-content-hash", "ump/integrity-signature", "ump/integrity-signer-owner"}


def owned_by(name: str) -> dict:
    record = minimal()
    record["scope"]["owner"] = test_did(name)
    return record


# -- the real signed example ---------------------------------------------------------------------


def test_example_content_hash():
    assert content_hash(example()) == EXAMPLE_HASH


def test_example_verifies():
    report = verify(example())
    assert report == IntegrityReport(True, True, True, True, EXAMPLE_HASH, ())
    assert report.ok


def test_signature_is_over_blake3_of_the_hash_string():
    # The reference implementation's reading, checked independently of integrity.verify.
    record = example()
    integ = record["integrity"]
    key = VerifyKey(public_key_from_did_key(integ["signer"]))
    sig = base64.b64decode(integ["signature"][len("ed25519:"):])
    key.verify(blake3.blake3(integ["content_hash"].encode()).digest(), sig)
    with pytest.raises(Exception):
        key.verify(canonical_bytes(without_integrity(record)), sig)


def test_one_byte_of_body_text_breaks_it():
    record = example()
    record["body"]["text"] = record["body"]["text"].replace("reviewed", "reviewer")
    report = verify(record)
    assert not report.ok
    assert report.hash_ok is False
    assert report.signature_ok is True  # the signature still covers the stated (old) hash
    assert report.expected_hash != EXAMPLE_HASH
    [problem] = report.problems
    assert problem.requirement == "ump/integrity-content-hash"
    assert problem.pointer == "/integrity/content_hash"
    assert problem.code == "signature_invalid"
    assert EXAMPLE_HASH in problem.message and report.expected_hash in problem.message


def test_hash_covers_every_member_but_integrity():
    record = example()
    record["integrity"]["extra"] = "ignored by the hash"
    assert content_hash(record) == EXAMPLE_HASH
    record["ump"] = "0.1"
    assert content_hash(record) != EXAMPLE_HASH


def test_signed_by_another_key_claiming_the_owner():
    record = example()
    forged = sign(record, test_signing_key("mallory"))
    forged["integrity"]["signer"] = record["scope"]["owner"]
    report = verify(forged)
    assert report.hash_ok is True
    assert report.signature_ok is False
    assert report.signer_is_owner is True
    assert not report.ok
    assert [p.requirement for p in report.problems] == ["ump/integrity-signature"]


def test_signer_is_not_the_owner():
    record = owned_by("owner-a")
    signed = sign(record, test_signing_key("owner-b"))
    report = verify(signed)
    assert report.hash_ok and report.signature_ok
    assert report.signer_is_owner is False
    assert not report.ok
    [problem] = report.problems
    assert problem.requirement == "ump/integrity-signer-owner"
    assert problem.pointer == "/integrity/signer"
    assert test_did("owner-a") in problem.message and test_did("owner-b") in problem.message


def test_sign_format_and_purity():
    record = owned_by("owner-a")
    before = copy.deepcopy(record)
    signed = sign(record, test_signing_key("owner-a"))
    assert record == before and "integrity" not in record
    integ = signed["integrity"]
    assert list(integ) == ["content_hash", "signature", "signer"]
    assert integ["content_hash"] == content_hash(record)
    assert integ["signature"].startswith("ed25519:") and integ["signature"].endswith("==")
    assert len(base64.b64decode(integ["signature"][8:], validate=True)) == 64
    assert integ["signer"] == test_did("owner-a")
    assert verify(signed).ok
    # Ed25519 is deterministic: signing again gives the same bytes; re-signing replaces integrity.
    assert sign(signed, test_signing_key("owner-a")) == signed


def test_no_integrity():
    report = verify(minimal())
    assert report.present is False and report.ok is False
    assert report.hash_ok is None and report.signature_ok is None and report.signer_is_owner is None
    assert report.expected_hash == content_hash(minimal())
    assert report.problems == ()


@pytest.mark.parametrize("value", [None, [], "x", 3])
def test_not_a_record(value):
    report = verify(value)
    assert not report.present and not report.ok


def _with_integrity(**changes):
    record = sign(owned_by("owner-a"), test_signing_key("owner-a"))
    for key, value in changes.items():
        if value is _DELETE:
            del record["integrity"][key]
        else:
            record["integrity"][key] = value
    return record


_DELETE = object()


@pytest.mark.parametrize(
    "changes, requirement, pointer",
    [
        ({"content_hash": 5}, "ump/integrity-content-hash", "/integrity/content_hash"),
        ({"content_hash": _DELETE}, "ump/integrity-content-hash", "/integrity/content_hash"),
        ({"content_hash": "sha256:abc"}, "ump/integrity-content-hash", "/integrity/content_hash"),
        ({"signature": "rsa:AAAA"}, "ump/integrity-signature", "/integrity/signature"),
        ({"signature": "ed25519:!!not base64!!"}, "ump/integrity-signature", "/integrity/signature"),
        ({"signature": "ed25519:AAAA"}, "ump/integrity-signature", "/integrity/signature"),
        ({"signature": "ed25519:" + base64.b64encode(bytes(64)).decode()}, "ump/integrity-signature", "/integrity/signature"),
        ({"signature": None}, "ump/integrity-signature", "/integrity/signature"),
        ({"signature": _DELETE}, "ump/integrity-signature", "/integrity/signature"),
        ({"signer": "did:web:example.com"}, "ump/integrity-signature", "/integrity/signer"),
        ({"signer": "did:key:z0000"}, "ump/integrity-signature", "/integrity/signer"),
        ({"signer": 7}, "ump/integrity-signature", "/integrity/signer"),
        ({"signer": _DELETE}, "ump/integrity-signature", "/integrity/signer"),
    ],
)
def test_malformed_integrity_gives_problems(changes, requirement, pointer):
    report = verify(_with_integrity(**changes))
    assert report.present and not report.ok
    assert (requirement, pointer) in {(p.requirement, p.pointer) for p in report.problems}
    for p in report.problems:
        assert p.requirement in REQS and p.code == "signature_invalid" and p.message


def test_the_signature_and_digest_are_read_in_any_unambiguous_encoding():
    # the text names no encoding (its examples: "blake3:5e…", "ed25519:9c…"); red team round 17
    import base64

    from memconform.suite.ump.integrity import digest_of, signature_bytes

    record = _with_integrity()
    sig = signature_bytes(record["integrity"]["signature"])
    assert sig is not None and len(sig) == 64
    for text in (base64.b64encode(sig).decode().rstrip("="), sig.hex(), base64.urlsafe_b64encode(sig).decode()):
        record["integrity"]["signature"] = "ed25519:" + text
        assert verify(record).signature_ok is True, text
    digest = digest_of(record["integrity"]["content_hash"])
    assert digest is not None and digest_of("blake3:" + digest.hex()) == digest
    assert digest_of("blake3:" + digest.hex().upper()) == digest
    # a signature that reads as no 64 bytes is refused, saying what was read
    record["integrity"]["signature"] = "ed25519:" + sig.hex()[:-2]
    report = verify(record)
    assert report.signature_ok is False and "64 bytes" in " ".join(p.message for p in report.problems)


@pytest.mark.parametrize("integ", ["x", [], 5, None])
def test_integrity_not_an_object(integ):
    record = minimal(integrity=integ)
    report = verify(record)
    assert report.present and not report.ok
    assert {p.pointer for p in report.problems} == {"/integrity"}


def test_uncanonicalizable_record_gives_a_problem():
    record = _with_integrity()
    record["body"]["structured"] = {"n": float("nan")}
    report = verify(record)
    assert report.expected_hash is None and report.hash_ok is False
    assert any(p.requirement == "ump/integrity-content-hash" and p.pointer == "/body/structured/n"
               for p in report.problems)


def test_owner_missing():
    record = _with_integrity()
    del record["scope"]["owner"]
    report = verify(record)
    assert report.signer_is_owner is False
    assert any(p.requirement == "ump/integrity-signer-owner" for p in report.problems)


# -- properties -----------------------------------------------------------------------------------


def _shuffled(value, rnd: random.Random):
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _shuffled(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


@settings(max_examples=60, deadline=None)
@given(valid_records(), st.randoms(use_true_random=False), st.sampled_from([None, 0, 1, 2, 4, "\t"]),
       st.booleans())
def test_hash_invariant_under_key_order_and_whitespace(record, rnd, indent, ascii_only):
    text = json.dumps(_shuffled(record, rnd), indent=indent, ensure_ascii=ascii_only,
                      separators=(", ", " : ") if indent is None else None)
    assert content_hash(json.loads(text)) == content_hash(record)


@settings(max_examples=40, deadline=None)
@given(signed_records())
def test_sign_then_verify(record):
    assert verify(record).ok
    assert verify(json.loads(json.dumps(record, indent=1))).ok


OPTIONAL_TOP = ("lifecycle", "supersedes", "superseded_by", "relations", "provenance", "consent")


def _leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def _changed(value):
    if isinstance(value, bool):
        return not value
    if value is None:
        return "was null"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2 if abs(value) > 1 else value + 1.0
    return value + "x"


def _set(record, path, value):
    target = record
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


@st.composite
def mutations(draw):
    record = draw(signed_records())
    mutated = copy.deepcopy(record)
    content = without_integrity(mutated)
    kind = draw(st.sampled_from(("leaf", "add", "remove")))
    if kind == "leaf":
        leaves = [(p, v) for p, v in _leaves(content)]
        path, value = draw(st.sampled_from(leaves))
        _set(mutated, path, _changed(value))
    elif kind == "add":
        missing = [k for k in OPTIONAL_TOP if k not in mutated]
        choices = [("top", k) for k in missing] + [("structured", None)]
        where, key = draw(st.sampled_from(choices))
        if where == "top":
            mutated[key] = {"lifecycle": {}, "consent": {}, "provenance": {
                "actor": "a", "actor_kind": "user", "method": "m"}}.get(key, [])
        else:
            structured = mutated["body"].setdefault("structured", {})
            structured["added-by-mutation" + "x" * len(structured)] = 1
    else:
        removable = [(k,) for k in OPTIONAL_TOP if k in mutated]
        removable += [("scope", k) for k in ("user", "project", "agent", "session") if k in mutated["scope"]]
        removable += [("time", k) for k in ("observed", "valid_from", "valid_to") if k in mutated["time"]]
        removable += [("body", "structured")] if "structured" in mutated["body"] else []
        if not removable:
            mutated["body"]["structured"] = {}
        else:
            path = draw(st.sampled_from(removable))
            target = mutated
            for step in path[:-1]:
                target = target[step]
            del target[path[-1]]
    return record, mutated


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_any_single_mutation_breaks_verification(pair):
    original, mutated = pair
    assert verify(original).ok
    report = verify(mutated)
    assert not report.ok
    assert report.hash_ok is False
    assert any(p.requirement == "ump/integrity-content-hash" for p in report.problems)


@settings(max_examples=80, deadline=None)
@given(signed_records(), st.dictionaries(st.sampled_from(["content_hash", "signature", "signer", "x"]),
                                         st.one_of(st.none(), st.integers(), st.text(max_size=90),
                                                   st.lists(st.integers(), max_size=2)), max_size=4))
def test_verify_never_raises_on_garbage_integrity(record, garbage):
    before = dict(record["integrity"])
    record["integrity"].update(garbage)
    report = verify(record)
    assert isinstance(report, IntegrityReport) and isinstance(report.ok, bool)
    changed = any(before.get(k, _DELETE) != record["integrity"].get(k, _DELETE)
                  for k in ("content_hash", "signature", "signer"))
    assert report.ok is not changed


def test_absurdly_deep_record_gives_a_problem_not_an_exception():
    record = _with_integrity()
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    record["body"]["structured"] = {"deep": deep}
    report = verify(record)
    assert not report.ok and report.hash_ok is False and report.expected_hash is None
