"""Signed reports: round trip, tampering, another signer, the schema, and the CLI commands."""

from __future__ import annotations

import base64
import copy
import json
import tomllib
from importlib import resources

import blake3
import jsonschema
import pytest
import rfc8785
from click.testing import CliRunner

from memconform.reports.baseline import parse_baseline
from memconform.reports.sign import sign_report, verify_report
from memconform.suite.cli_reports import baseline_write, report_sign, report_verify
from memconform.suite.ump.testkeys import test_did, test_seed, test_signing_key

SCHEMA = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())


def _report():
    return {
        "format": "memconform-report/1", "generated_at": "2026-01-01T00:00:00Z",
        "run": {"memconform": "0.1", "pytest": "9", "python": "3.11", "options": {"strict": False}},
        "targets": [{"label": "reference", "kind": "reference", "advertised": {}}], "levels": [],
        "results": [{"node_id": "memconform::reference::omf/a", "check": "omf/a", "title": "t",
                     "target": "reference", "spec": "omf", "version": "1.0", "binding": "http", "case": None,
                     "requirements": ["omf/omf-version-gated"], "level": "L1", "keyword": "MUST",
                     "outcome": "failed", "reason": None,
                     "findings": [{"requirement": "omf/omf-version-gated", "message": "accepted 0.9"}],
                     "duration": 0.012345, "seed": None}],
        "requirements": [], "coverage": [], "totals": {"failed": 1},
    }


def test_round_trip_and_format():
    report = _report()
    signed = sign_report(report, test_signing_key("owner-a"))
    sig = signed["signature"]
    assert sig["alg"] == "ed25519" and sig["key"] == test_did("owner-a")
    digest = blake3.blake3(rfc8785.dumps(report)).digest()  # the documented construction, rebuilt here
    assert sig["hash"] == "blake3:" + digest.hex()
    test_signing_key("owner-a").verify_key.verify(digest, base64.b64decode(sig["value"]))
    assert "signature" not in report  # the input is not modified
    assert verify_report(signed) == (True, f"valid signature by {test_did('owner-a')}")
    jsonschema.Draft202012Validator(SCHEMA).validate(signed)


def test_reserialised_report_still_verifies_and_seed_bytes_sign_the_same():
    signed = sign_report(_report(), test_seed("owner-a"))  # a 32-byte seed works as well as a SigningKey
    assert signed == sign_report(_report(), test_signing_key("owner-a"))  # Ed25519 is deterministic
    reordered = json.loads(json.dumps(dict(reversed(list(signed.items()))), indent=4))
    assert verify_report(reordered)[0]


def test_resigning_replaces_the_signature():
    twice = sign_report(sign_report(_report(), test_signing_key("owner-a")), test_signing_key("owner-b"))
    assert verify_report(twice) == (True, f"valid signature by {test_did('owner-b')}")


def test_changed_outcome_is_detected():
    signed = sign_report(_report(), test_signing_key("owner-a"))
    signed["results"][0]["outcome"] = "passed"
    ok, reason = verify_report(signed)
    assert not ok and "changed after signing" in reason


def test_changed_signature_byte_is_detected():
    signed = sign_report(_report(), test_signing_key("owner-a"))
    raw = bytearray(base64.b64decode(signed["signature"]["value"]))
    raw[10] ^= 0x01
    signed["signature"]["value"] = base64.b64encode(bytes(raw)).decode()
    ok, reason = verify_report(signed)
    assert not ok and "does not verify" in reason


def test_signature_by_another_key_is_reported():
    signed = sign_report(_report(), test_signing_key("mallory"))
    assert verify_report(signed, expected_key=test_did("mallory"))[0]
    ok, reason = verify_report(signed, expected_key=test_did("owner-a"))
    assert not ok and reason == f"signed by another key: {test_did('mallory')}, expected {test_did('owner-a')}"
    # Claiming owner-a's key for mallory's signature does not verify at all.
    forged = copy.deepcopy(signed)
    forged["signature"]["key"] = test_did("owner-a")
    ok, reason = verify_report(forged)
    assert not ok and "does not verify under " + test_did("owner-a") in reason


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda s: s.pop("signature"), "not signed"),
    (lambda s: s["signature"].update(alg="rsa"), "unsupported signature algorithm"),
    (lambda s: s["signature"].update(hash="sha256:00"), "not 'blake3:'"),
    (lambda s: s["signature"].update(key="did:web:example.org"), "not an Ed25519 did:key"),
    (lambda s: s["signature"].update(value="not base64!"), "not valid base64"),
    (lambda s: s["signature"].update(extra=1), "exactly alg, hash, key and value"),
])
def test_malformed_signatures_are_refused(mutate, reason):
    signed = sign_report(_report(), test_signing_key("owner-a"))
    mutate(signed)
    ok, why = verify_report(signed)
    assert not ok and reason in why


def test_schema_refuses_a_malformed_signature_block():
    signed = sign_report(_report(), test_signing_key("owner-a"))
    signed["signature"]["alg"] = "rsa"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(signed)


# -- CLI -------------------------------------------------------------------------------------

def _write(tmp_path, data, name="report.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_cli_sign_with_test_key_then_verify(tmp_path):
    path = _write(tmp_path, _report())
    out = tmp_path / "signed.json"
    res = CliRunner().invoke(report_sign, [str(path), "--test-key", "owner-b", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["signature"]["key"] == test_did("owner-b")
    assert "signature" not in json.loads(path.read_text())  # -o leaves the input alone
    res = CliRunner().invoke(report_verify, [str(out)])
    assert res.exit_code == 0 and "valid signature" in res.output
    res = CliRunner().invoke(report_verify, [str(out), "--expect-key", test_did("owner-a")])
    assert res.exit_code == 1 and "signed by another key" in res.output


def test_cli_sign_with_seed_file_in_place(tmp_path):
    path = _write(tmp_path, _report())
    seed = tmp_path / "seed.hex"
    seed.write_text(test_seed("owner-a").hex() + "\n")
    res = CliRunner().invoke(report_sign, [str(path), "--key", str(seed)])
    assert res.exit_code == 0, res.output
    assert verify_report(json.loads(path.read_text())) == (True, f"valid signature by {test_did('owner-a')}")


@pytest.mark.parametrize("args", [[], ["--test-key", "owner-a", "--key", "x"], ["--test-key", "nobody"]])
def test_cli_sign_needs_exactly_one_known_key(tmp_path, args):
    path = _write(tmp_path, _report())
    res = CliRunner().invoke(report_sign, [str(path), *args])
    assert res.exit_code == 2 and "signature" not in json.loads(path.read_text())


def test_cli_sign_refuses_a_short_seed(tmp_path):
    seed = tmp_path / "seed.hex"
    seed.write_text("abcd")
    res = CliRunner().invoke(report_sign, [str(_write(tmp_path, _report())), "--key", str(seed)])
    assert res.exit_code == 2 and "32 bytes" in res.output


def test_cli_verify_exit_codes(tmp_path):
    signed = sign_report(_report(), test_signing_key("owner-a"))
    signed["totals"] = {"failed": 0}
    assert CliRunner().invoke(report_verify, [str(_write(tmp_path, signed))]).exit_code == 1
    assert CliRunner().invoke(report_verify, [str(_write(tmp_path, _report()))]).exit_code == 1  # unsigned
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.json", _write(tmp_path, [1, 2], "list.json")):
        res = CliRunner().invoke(report_verify, [str(path)])
        assert res.exit_code == 2, (path, res.output)


def test_cli_baseline_write(tmp_path):
    path = _write(tmp_path, _report())
    res = CliRunner().invoke(baseline_write, [str(path)])
    assert res.exit_code == 0
    assert [e.id for e in parse_baseline(tomllib.loads(res.output)).entries] == ["omf/a"]
    out = tmp_path / "baseline.toml"
    assert CliRunner().invoke(baseline_write, [str(path), "-o", str(out)]).exit_code == 0
    assert out.read_text() == res.output
    assert CliRunner().invoke(baseline_write, [str(tmp_path / "missing.json")]).exit_code == 2
