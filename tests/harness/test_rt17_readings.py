"""False verdicts found by the blind red team of round 17 against an independent UMP 0.1 server and
its export generator (FF-7, FF-9, FF-11, FF-12), each pinned here: against the reference server seen
through a small twist a legitimate server may make, or against a file written the other legitimate
way (the variant refuses-reused-id and the fault kind-any-case pin FF-11 in test_variants.py and
test_faults.py too)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from harness.helpers import (export_with_markdown, failed_requirements, md_roundtrip_result,  # tests/ is on sys.path
                             run_suite, served_reference)
from memconform.suite.outcomes import CheckResult, Outcome
from memconform.suite.registry import all_checks
from memconform.suite.runner import run_check
from memconform.suite.ump import ids, markdown
from memconform.suite.ump import record as ump_record
from memconform.suite.ump.checks import l1
from memconform.suite.ump.checks._live import OWNER_A, did
from memconform.suite.ump.client import Auth, Reply
from memconform.targets.http import HttpUmpClient

CHECKS = {c.id: c for c in all_checks("ump")}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served_reference() as base_url:
        yield base_url


def explain(result: CheckResult) -> str:
    return f"{result.outcome} {result.reason or ''} " + " | ".join(f"{f.requirement}: {f.message[:400]}"
                                                                   for f in result.findings)


class Twist:
    """The reference server through the HTTP client, one thing done differently."""

    def __init__(self, inner: HttpUmpClient):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _refusal(record: Any, code: str, message: str, status: int) -> Reply:
    return Reply("remember", "http", {"record": record}, status=status,
                 body={"error": {"code": code, "message": message}}, error_code=code, error_message=message)


# -- FF-11: invalid vectors sharing an id ------------------------------------------------------------

def _vector_case(version: str, name: str) -> Any:
    return next(c for c in l1._vector_cases(version) if c.id.endswith(name))


def test_invalid_vectors_are_sent_with_an_id_no_earlier_request_used():
    """The unsigned invalid vectors all carry one id (and the partial ones may be stored under it):
    each is sent with a fresh id, unless it is signed or about its id."""
    sent = [l1._fresh_id(c.payload, c.payload.input) for c in l1._vector_cases("0.1")
            if c.payload.expect.get("verdict") in ("invalid", "acceptable")]
    unsigned = [r for r in sent if isinstance(r, dict) and "integrity" not in r
                and isinstance(r.get("id"), str) and ids.ID_PATTERN.fullmatch(r["id"])]
    shared = "urn:ump:t3nlbwb72nntb3nryjzussctha"
    assert sum(1 for r in unsigned if r["id"] == shared) == 0
    # those about the id keep theirs
    kept = l1._fresh_id(_vector_case("0.1", "id-uppercase").payload, _vector_case("0.1", "id-uppercase").payload.input)
    assert kept["id"] == "urn:ump:JBSWY3DPEHPK3PXP"
    # valid vectors and signed ones are sent as they are
    signed = _vector_case("0.1", "records-invalid/signature-truncated").payload
    assert l1._fresh_id(signed, signed.input) is signed.input


def test_a_refused_record_is_not_blamed_for_an_earlier_record_under_its_id(url):
    """Before: missing-time (the vector's base without time) was refused for its reused id, and the
    earlier, valid record under that id was taken for it ("refused record stored")."""
    client = HttpUmpClient(url, "0.1", timeout=10)
    ctx = SimpleNamespace(client=client)
    base = copy.deepcopy(_vector_case("0.1", "records-invalid/missing-time").payload.input)
    base["id"] = ids.random_id()
    base["body"] = {"text": f"{base['id']} a record of this test's own"}
    # (as the reference completes it: a server that adds nothing stores what was sent, FF-11's case)
    base["time"] = {"created": "2026-06-04T10:00:00Z", "valid_from": "2026-06-04T10:00:00Z"}
    base["lifecycle"] = dict(base.get("lifecycle") or {}, status="active")
    base["provenance"] = {"actor": did(OWNER_A), "actor_kind": "agent", "method": "memconform-test"}
    auth = Auth.as_owner(OWNER_A)
    assert l1._put(ctx, copy.deepcopy(base), auth=auth).body.get("result") == "created"
    without_time = {k: v for k, v in base.items() if k != "time"}
    l1._put(ctx, copy.deepcopy(without_time), auth=auth)
    assert l1._stored_copy(ctx, without_time, auth) is None  # the record found is the earlier one
    # (what the earlier request sent is what tells them apart: forgotten, the record is blamed)
    l1._SENT_IDS.pop((id(client), base["id"]))
    assert l1._stored_copy(ctx, without_time, auth) is not None


class RefusesReusedIdsLowersKind(Twist):
    """The red team's server with its bug kind-case: an id is used once (any remember naming a
    held id is refused, before the record is read), and kind is read case-insensitively."""

    def remember(self, record: Any, **kw: Any) -> Any:
        rid = record.get("id") if isinstance(record, dict) else None
        if isinstance(rid, str) and self._inner.get(rid, auth=Auth.as_owner(OWNER_A)).ok:
            return _refusal(record, "invalid_record", "id already in use", 400)
        if isinstance(record, dict) and isinstance(record.get("kind"), str):
            record = dict(record, kind=record["kind"].lower())
        return self._inner.remember(record, **kw)


def test_a_wrong_case_kind_is_caught_behind_a_refusal_of_reused_ids():
    """Before: missing-ump (a partial record the server completes) was stored under the id every
    invalid vector shared, and kind-wrong-case was then refused for the id: passed. (A server of
    its own: one holding a record of the vectors' text would merge missing-ump into it.)"""
    check = CHECKS["ump/l1/vectors"]
    with served_reference() as fresh:
        client = RefusesReusedIdsLowersKind(HttpUmpClient(fresh, "0.1", timeout=10))
        results = {c.id: run_check(check, "0.1", "http", lambda: client, c)
                   for c in l1._vector_cases("0.1") if c.payload.expect.get("verdict") != "valid"}
    failed = {cid: r for cid, r in results.items() if r.outcome is Outcome.FAILED}
    assert set(failed) == {"ump/0.1/records-invalid/kind-wrong-case"}, {k: explain(r) for k, r in failed.items()}
    (result,) = failed.values()
    assert {f.requirement for f in result.findings} == {"ump/record-kind", "ump/reject-invalid-record"}
    assert "was accepted" in result.findings[0].message


def test_the_fault_kind_any_case_fails_under_the_variant_refuses_reused_id(pytester, monkeypatch):
    monkeypatch.setenv("MEMCONFORM_FUZZ_EXAMPLES", "0")
    monkeypatch.setenv("MEMCONFORM_STATEFUL_EXAMPLES", "0")
    result, report = run_suite(pytester, "--target=reference?fault=kind-any-case&variant=refuses-reused-id",
                               "--spec=ump@0.1", "--binding=http", "--check=ump/l1/vectors")
    assert report["totals"].get("error", 0) == 0
    assert failed_requirements(report) == {"ump/record-kind", "ump/reject-invalid-record"}


# -- FF-7: an extension member in a 0.1 record --------------------------------------------------------

def _minimal(version: str) -> dict[str, Any]:
    return {"ump": version, "id": ids.random_id(), "kind": "semantic", "body": {"text": "x"},
            "scope": {"owner": did(OWNER_A), "visibility": "private"}, "time": {"created": "2026-06-04T10:00:00Z"}}


def test_an_extension_member_breaks_no_0_1_rule_but_the_closed_1_0_schema():
    for where in ((), ("provenance",)):
        rec = _minimal("0.1")
        node = rec
        for part in where:
            node = node.setdefault(part, {"actor": did(OWNER_A), "actor_kind": "agent", "method": "m"})
        node["x_acme"] = {"tier": "gold"}
        assert ump_record.validate(rec, "0.1") == (), where
        rec["ump"] = "1.0"
        (v,) = ump_record.validate(rec, "1.0")
        assert v.requirement == "ump/record-field-types" and "unknown member" in v.message
        assert "additionalProperties" in v.source


class ServesExtension(Twist):
    """Records served by get carry a vendor member x_acme (§2 never closes a 0.1 record)."""

    def get(self, id: str, **kw: Any) -> Any:
        reply = self._inner.get(id, **kw)
        if isinstance(reply.body, dict) and isinstance(reply.body.get("record"), dict):
            reply.body["record"]["x_acme"] = {"tier": "gold"}
        return reply


@pytest.mark.parametrize("version", ["0.1", "1.0"])
def test_served_records_with_an_extension_member(url, version):
    client = ServesExtension(HttpUmpClient(url, version, timeout=10))
    result = run_check(CHECKS["ump/l1/served-records"], version, "http", lambda: client, None)
    if version == "0.1":
        assert result.outcome is Outcome.PASSED, explain(result)
        return
    assert result.outcome is Outcome.FAILED, explain(result)
    fields = [f for f in result.findings if f.requirement == "ump/record-field-types"]
    assert fields and all("additionalProperties" in f.message and "confidence" not in f.message for f in fields)


# -- FF-9: a policy refusal of a valid vector -------------------------------------------------------

class RefusesTombstoned(Twist):
    """A store whose policy takes no record that arrives tombstoned (consent_violation, §3.3); a
    record without provenance it refuses first, as an L3 server (invalid_record)."""

    def remember(self, record: Any, **kw: Any) -> Any:
        life = record.get("lifecycle") if isinstance(record, dict) else None
        if isinstance(life, dict) and life.get("status") == "tombstoned" and "provenance" in record:
            return _refusal(record, "consent_violation", "policy: no records that arrive tombstoned", 403)
        return self._inner.remember(record, **kw)


def test_a_policy_refusal_of_a_valid_vector_is_not_a_parse_failure(url):
    client = RefusesTombstoned(HttpUmpClient(url, "0.1", timeout=10))
    case = _vector_case("0.1", "records-valid/lifecycle-status-tombstoned")
    assert "provenance" not in case.payload.input  # so it is sent again with provenance added
    result = run_check(CHECKS["ump/l1/vectors"], "0.1", "http", lambda: client, case)
    assert result.outcome is Outcome.SKIPPED, explain(result)
    assert "refused for policy with provenance added" in result.reason and "consent_violation" in result.reason


# -- FF-12: the body's final newline in .ump.md -------------------------------------------------------

def _export(tmp_path, text: str, md_body: str) -> str:
    def md_of(rec):
        md = markdown.to_markdown(rec)
        assert md.endswith(text + "\n")
        return md[: -len(text) - 1] + md_body
    return export_with_markdown(tmp_path, "0.1", text, md_of)


def test_body_readings_take_the_final_newline_both_ways():
    md = markdown.to_markdown(_minimal("0.1") | {"body": {"text": "a\n"}})
    assert [r["body"]["text"] for r in markdown.body_readings(md)] == ["a\n", "a\n\n"]
    exact = md[:-1]  # a writer that adds no newline after the body
    assert [r["body"]["text"] for r in markdown.body_readings(exact)] == ["a", "a\n"]
    assert [r["body"]["text"] for r in markdown.body_readings(md.replace("a\n\n", "a"))] == ["a"]


@pytest.mark.parametrize("md_body, verdict", [("line one\nשלום\n", "passed"),    # exact bytes, no newline added
                                              ("line one\nשלום\n\n", "passed"),  # one newline added
                                              ("line one\nשלום!\n", "failed")])
def test_md_roundtrip_takes_either_framing_and_says_how_values_differ(pytester, tmp_path, md_body, verdict):
    res = md_roundtrip_result(pytester, _export(tmp_path, "line one\nשלום\n", md_body), "0.1")
    assert res["outcome"] == verdict, res
    if verdict == "failed":
        message = res["findings"][0]["message"]
        assert "they part at character 13" in message and "read both ways" in message, message
