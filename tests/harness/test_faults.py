"""Idea 5: each fault of the reference implementation makes exactly the requirements it names
fail, and nothing else; the clean reference passes everything."""

from __future__ import annotations

import pytest

from memconform.reference_impl.faults import FAULTS

from .helpers import failed_requirements, run_suite


def test_clean_reference_passes_every_must(pytester):
    result, report = run_suite(pytester, "--target=reference")
    assert report["totals"].get("failed", 0) == 0, failed_requirements(report)
    assert report["totals"].get("error", 0) == 0
    assert report["totals"].get("passed", 0) > 50
    assert all(row["level"] == "L0" for row in report["levels"]), [r["summary"] for r in report["levels"]]
    assert result.ret == 0


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_caught_by_its_requirements_only(pytester, name):
    fault = FAULTS[name]
    result, report = run_suite(pytester, f"--target=reference?fault={name}")
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    assert failed_requirements(report) == set(fault.breaks)
    assert result.ret == 1
