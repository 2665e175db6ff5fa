"""Tests of memconform.reports. `make_report` builds a small real report for the renderings
(HTML page, badges) and `memconform report`."""

from __future__ import annotations

from typing import Any

from memconform.reports.model import build_report
from memconform.suite import catalogue

#: Server-chosen text the page must render inert.
HOSTILE = '<script>alert("pwned")</script><img src=x onerror=alert(1)>'


def _result(check: str, binding: str, requirements: list[str], outcome: str = "passed", *,
            findings: list[dict[str, Any]] | None = None, reason: str | None = None) -> dict[str, Any]:
    return {"node_id": f"memconform::demo::ump-1.0::{binding}::{check}", "check": check, "title": check,
            "target": "demo", "spec": "ump", "version": "1.0", "binding": binding, "case": None,
            "requirements": requirements, "level": "L0", "keyword": "MUST", "outcome": outcome,
            "reason": reason, "findings": findings or [], "duration": 0.01, "seed": None}


def make_report() -> dict[str, Any]:
    """A small real report: on `file` every L0 MUST passes (so L0); on `http` one MUST fails with
    a hostile finding, one check errors and one is skipped."""
    musts = sorted(r.id for r in catalogue.load("ump").for_version("1.0", "file")
                   if r.level == "L0" and r.keyword.value == "MUST" and r.testable)
    results = [_result("ump/file-all", "file", musts)]
    results.append(_result("ump/record-shape", "http", ["ump/record-version", "ump/record-kind"], "failed",
                           findings=[{"requirement": "ump/record-kind", "message": HOSTILE,
                                      "sent": '{"kind": "</pre><b>x</b>"}', "received": "HTTP 200 <html>",
                                      "where": "/records/0/kind"}]))
    results.append(_result("ump/record-time", "http", ["ump/record-time"], "error", reason="timed out <after 5s>"))
    results.append(_result("ump/consent", "http", ["ump/consent-recommended"], "skipped", reason="not offered"))
    return build_report(results, [{"label": "demo", "kind": "http", "advertised": {"ump": "L1"}}],
                        {"memconform": "0", "pytest": "0", "python": "3", "options": {"targets": ["demo"]}})
