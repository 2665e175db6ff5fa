"""A conformance class (a claim beside the levels: UMP's "interoperates with the UMP reference
implementation") fails the run only when the run requires it (--require-class): a server that read the
text another way reaches its level and keeps exit status 0, and the report still says the class is not
reached (round 14: its honest MCP server's only failures were the class's, and CI went red)."""

from __future__ import annotations

import pytest

from memconform.suite.outcomes import CheckResult, Finding, Outcome
from memconform.suite.plugin import unrequired_class

from .helpers import run_suite

CLASS_ONLY = ("--target=reference?variant=created-201", "--spec=ump@1.0", "--binding=http",
              "--check=ump/runner13/remember")


def _failed(*requirements: str) -> CheckResult:
    return CheckResult(Outcome.FAILED, tuple(Finding(r, "x") for r in requirements))


def test_only_a_failure_of_class_musts_alone_is_left_to_the_class():
    assert "--require-class ump-reference-interop" in unrequired_class("ump", _failed("ump/runner-rules"), ())
    # a level's MUST beside it fails the run, as does a required class
    assert unrequired_class("ump", _failed("ump/runner-rules", "ump/remember-returns-id"), ()) is None
    assert unrequired_class("ump", _failed("ump/runner-rules"), ("ump-reference-interop",)) is None
    assert unrequired_class("ump", _failed("ump/no-such-requirement"), ()) is None


def test_a_class_not_required_is_reported_failed_and_xfailed(pytester):
    result, report = run_suite(pytester, *CLASS_ONLY)
    assert result.ret == 0, result.stdout.str()[-2000:]
    result.assert_outcomes(xfailed=1)
    (res,) = report["results"]
    assert res["outcome"] == "failed" and "ump-reference-interop" in res["class_not_required"]
    # what the target got, and apart what does not fail the run (a dashboard reading totals)
    assert report["totals"]["failed"] == 1 and report["totals"]["class_not_required"] == 1
    (row,) = report["levels"]
    (cls,) = row["classes"]
    assert cls["id"] == "ump-reference-interop" and not cls["reached"] and not cls["required"]
    assert "no, ump/runner-rules (not required" in row["summary"]


def test_a_required_class_fails_the_run(pytester):
    result, report = run_suite(pytester, *CLASS_ONLY, "--require-class=ump-reference-interop")
    assert result.ret == 1
    result.assert_outcomes(failed=1)
    assert "class_not_required" not in report["totals"]
    assert report["levels"][0]["classes"][0]["required"] is True
    assert "not required" not in report["levels"][0]["summary"]


def test_an_unknown_class_is_a_usage_error(pytester):
    result, _ = run_suite(pytester, "--target=reference", "--require-class=no-such-class")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ump-reference-interop (ump)" in result.stderr.str()
