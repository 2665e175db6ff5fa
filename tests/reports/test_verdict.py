"""The one verdict model (reports/verdict.py) on a small catalogue of its own: levels from real
outcomes only, every blocking requirement named, conformance classes beside the level, profiles."""

from __future__ import annotations

import tomllib

import pytest

from memconform.reports.model import build_report
from memconform.suite import catalogue

TOML = """
spec = "zz"
versions = ["1.0"]
claimed_levels = ["L0", "L1"]
profiles = ["full", "lite"]
default_profile = "full"

[[conformance_class]]
id = "zz-ref"
title = "interoperates with the zz reference implementation"
summary = "choices of one implementation"

[[requirement]]
id = "zz/a"
section = "1"
level = "L0"
keyword = "MUST"
since = "1.0"
summary = "a"
quote = "a"

[[requirement]]
id = "zz/b"
section = "2"
level = "L1"
keyword = "MUST"
since = "1.0"
summary = "b"
quote = "b"

[[requirement]]
id = "zz/c"
section = "2"
level = "L1"
keyword = "MUST"
since = "1.0"
profiles = ["full"]
summary = "c: only the full profile"
quote = "c"

[[requirement]]
id = "zz/nice"
section = "2"
level = "L1"
keyword = "SHOULD"
since = "1.0"
summary = "a SHOULD"
quote = "n"

[[requirement]]
id = "zz/wire"
section = "3"
level = "L1"
keyword = "MUST"
since = "1.0"
class = "zz-ref"
summary = "the reference's encoding"
quote = "w"
"""


@pytest.fixture
def zz(monkeypatch):
    cat = catalogue.parse_catalogue(tomllib.loads(TOML), "zz")
    real = catalogue.load
    monkeypatch.setattr(catalogue, "load", lambda spec: cat if spec == "zz" else real(spec))
    return cat


def _res(check, reqs, outcome="passed", findings=(), **extra):
    return {"node_id": f"memconform::t::zz-1.0::http::{check}", "check": check, "title": check, "target": "t",
            "spec": "zz", "version": "1.0", "binding": "http", "case": None, "requirements": list(reqs),
            "level": "L0", "keyword": "MUST", "outcome": outcome, "reason": None,
            "findings": [{"requirement": f, "message": "m"} for f in findings], "duration": 0.0, "seed": None,
            **extra}


def _row(results):
    report = build_report(results, [{"label": "t", "kind": "http", "advertised": {}}],
                          {"memconform": "0", "pytest": "0", "python": "3", "options": {}})
    (row,) = report["levels"]
    return row


def test_a_failed_class_requirement_never_blocks_the_level_and_is_said_beside_it(zz):
    row = _row([_res("a", ["zz/a"]), _res("b", ["zz/b", "zz/c"]),
                _res("w", ["zz/wire"], "failed", ["zz/wire"])])
    assert row["level"] == "L1" and row["status"] == "conformant" and row["blocked_by"] == []
    assert row["classes"] == [{"id": "zz-ref", "title": "interoperates with the zz reference implementation",
                               "reached": False, "passed": 0, "failed": ["zz/wire"], "errors": [],
                               "not_assessed": [], "warnings": [], "required": False}]
    # not required by the run (--require-class): failed, xfailed, and the line says so
    assert row["summary"].endswith("; interoperates with the zz reference implementation: no, zz/wire "
                                   "(not required: xfailed; --require-class zz-ref fails the run)")


def test_a_requirement_outside_the_profile_neither_counts_nor_blocks(zz):
    # under "lite", zz/c binds nobody: its failure is not the target's, L1 is reached
    results = [_res("a", ["zz/a"], profile="lite"), _res("b", ["zz/b"], profile="lite"),
               _res("c", ["zz/c"], "failed", ["zz/c"], profile="lite")]
    row = _row(results)
    assert row["profile"] == "lite" and row["level"] == "L1", row["summary"]
    assert "t · ZZ 1.0 (lite) / L1 / http: conformant" in row["summary"]
    # the same results under the default profile: zz/c blocks L1
    row = _row([{**r, "profile": "full"} for r in results])
    assert row["level"] == "L0" and row["blocked_by"] == ["zz/c"] and row["status"] == "partial"


def test_an_accepted_failure_keeps_its_level_and_is_counted_apart(zz):
    accepted = {"status": "accepted", "by": "b.toml", "entries": ["b"], "reason": "expected by b.toml: known"}
    row = _row([_res("a", ["zz/a"]), _res("b", ["zz/b", "zz/c"], "failed", ["zz/b"], baseline=accepted)])
    assert row["level"] == "L0" and row["blocked_by"] == ["zz/b"] and row["status"] == "partial"
    assert row["accepted"] == {"must": 1, "requirements": ["zz/b"], "by": ["b.toml"]}
    assert "L1 blocked by zz/b" in row["summary"] and "1 accepted by b.toml" in row["summary"]


def test_blocked_by_names_every_failure_at_and_above_the_blocked_level_with_more_in_the_line(zz):
    row = _row([_res("a", ["zz/a"], "failed", ["zz/a"]), _res("b", ["zz/b", "zz/c"], "failed", ["zz/b", "zz/c"])])
    assert row["level"] is None and row["status"] == "not-conformant"
    assert row["blocked_by"] == ["zz/a", "zz/b", "zz/c"]
    # the blocked level's own apart from those above it (a blind red team read an L2 rule as L1's)
    assert "not conformant: L0 blocked by zz/a; above it, also zz/b, zz/c" in row["summary"]


def test_nothing_judged_is_incomplete_never_conformant(zz):
    row = _row([_res("a", ["zz/a"], "skipped", reason="not offered")])
    assert row["level"] is None and row["status"] == "incomplete"


def test_a_waived_requirement_blocks_no_level_is_never_passed_and_is_named(zz):
    """A check the target waived (an option its spec gives to leave out what it judges): its MUST
    neither passes nor keeps L1 from being reached, and the line says so."""
    waived = {"outcome": "skipped", "waived": True}
    row = _row([_res("a", ["zz/a"]), _res("b", ["zz/b"]), {**_res("c", ["zz/c"]), **waived, "reason": "left out"}])
    assert row["level"] == "L1" and row["status"] == "conformant" and row["waived"] == {"zz/c": "left out"}
    assert row["must_passed"] == 2 and "1 MUST waived as the spec allows (zz/c)" in row["summary"]
    # a waiver stands only where nothing judged the requirement: a failure elsewhere still blocks
    row = _row([_res("a", ["zz/a"]), _res("b", ["zz/b"]), {**_res("c", ["zz/c"]), **waived},
                _res("c2", ["zz/c"], "failed", ["zz/c"])])
    assert row["level"] == "L0" and row["blocked_by"] == ["zz/c"] and "waived" not in row
    # a plain skip is not a waiver: zz/c is then not assessed
    row = _row([_res("a", ["zz/a"]), _res("b", ["zz/b"]), _res("c", ["zz/c"], "skipped")])
    assert row["level"] == "L0" and row["status"] == "not-assessed"


def test_a_should_named_beside_a_failed_must_of_the_same_check_is_a_warning_not_a_failure(zz):
    # found by a blind red team: one check judging a MUST and a SHOULD failed both in the report's
    # requirements, while the line said "0 SHOULD warnings"
    report = build_report([_res("a", ["zz/a"]), _res("b", ["zz/b", "zz/nice"], "failed", ["zz/b", "zz/nice"])],
                          [{"label": "t", "kind": "http", "advertised": {}}],
                          {"memconform": "0", "pytest": "0", "python": "3", "options": {}})
    outcomes = {r["id"]: r["outcome"] for r in report["requirements"]}
    assert outcomes["zz/b"] == "failed" and outcomes["zz/nice"] == "warning"
    (row,) = report["levels"]
    assert row["should_warnings"] == 1 and row["must_failed"] == 1 and "1 SHOULD warning" in row["summary"]


def test_a_level_blocked_by_target_errors_alone_is_not_assessed_never_not_conformant(zz):
    # found by a blind red team: a GET answering an HTML page (a target error) read "not conformant:
    # L1 blocked by …", a verdict on what was never observed
    row = _row([_res("a", ["zz/a"]), _res("b", ["zz/b", "zz/c"], "error", reason="garbage")])
    assert row["level"] == "L0" and row["status"] == "not-assessed", row["summary"]
    assert "conformant up to L0; L1 not assessed, the target failed on zz/b, zz/c" in row["summary"]
    row = _row([_res("a", ["zz/a"], "error", reason="garbage"), _res("b", ["zz/b"])])
    assert row["level"] is None and row["status"] == "error", row["summary"]
    assert "error: L0 not assessed, the target failed on zz/a" in row["summary"]
    # one real failure beside the errors: that is a verdict again
    row = _row([_res("a", ["zz/a"]), _res("b", ["zz/b"], "error", reason="garbage"),
                _res("c", ["zz/c"], "failed", ["zz/c"])])
    assert row["status"] == "partial" and set(row["blocked_by"]) == {"zz/b", "zz/c"}, row["summary"]
    assert "L1 blocked by zz/c, zz/b" in row["summary"]
