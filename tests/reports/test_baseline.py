"""Expected-failure baselines: parsing, the XFAILED/STALE mapping, and a real suite run."""

from __future__ import annotations

import json
import tomllib
from importlib import resources

import blake3
import jsonschema
import pytest

from memconform.reports.baseline import (
    BaselineError, apply_baseline, baseline_outcome, load_baseline, parse_baseline, write_baseline,
)
from memconform.suite.outcomes import Outcome

from harness.helpers import run_suite  # tests/ is on sys.path (rootdir-relative packages)

FAULT = "reference?fault=omf-accepts-other-version"
BROKEN = "omf/omf-version-gated"  # the one requirement that fault breaks over OMF/http
RUN = ("--spec", "omf", "--binding", "http", "--memconform-only")
SCHEMA = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())


def _result(outcome="failed", findings=(BROKEN,), check="omf/validation/omf-version", case=None,
            requirements=(BROKEN,), target="reference", spec="omf", binding="http"):
    return {"node_id": f"memconform::{target}::{check}", "check": check, "title": "t", "target": target,
            "spec": spec, "version": "1.0", "binding": binding, "case": case,
            "requirements": list(requirements), "level": "L1", "keyword": "MUST", "outcome": outcome,
            "reason": None, "findings": [{"requirement": r, "message": "broken"} for r in findings],
            "duration": 0.0, "seed": None}


def _baseline(tmp_path, text):
    path = tmp_path / "baseline.toml"
    path.write_text(text, encoding="utf-8")
    return load_baseline(path)


# -- parsing ---------------------------------------------------------------------------------

def test_loads_entries_with_optional_fields(tmp_path):
    b = _baseline(tmp_path, f'''format = "memconform-baseline/1"
[[expected]]
id = "{BROKEN}"
reason = "accepted until 2.0"
issue = "https://example.org/issues/6"
target = "{FAULT}"
spec = "omf"
binding = "http"
[[expected]]
id = "omf/validation/omf-version"
reason = "r"
''')
    assert [e.id for e in b.entries] == [BROKEN, "omf/validation/omf-version"]
    assert b.entries[0].issue == "https://example.org/issues/6" and b.entries[0].target == FAULT
    assert b.entries[1].binding is None and b.path == str(tmp_path / "baseline.toml")


@pytest.mark.parametrize(("text", "message"), [
    ("[[expected]]\nreason = 'r'\n", "entry 1: 'id' is required"),
    ("[[expected]]\nid = 'x/y'\n", "entry 1: 'reason' is required"),
    ("[[expected]]\nid = 'x/y'\nreason = '  '\n", "'reason' is required and must be a non-empty string"),
    ("[[expected]]\nid = 'x/y'\nreason = 'r'\nwhy = 'r'\n", "unknown key(s) ['why']"),
    ("[[expected]]\nid = 'x/y'\nreason = 'r'\nissue = 'bug 12'\n", "is not an http(s) URL"),
    ("[[expected]]\nid = 'x/y'\nreason = 'r'\nspec = 3\n", "'spec' must be a non-empty string"),
    ("[[expected]]\nid = 'x y'\nreason = 'r'\n", "contains whitespace"),
    ("[[expected]]\nid = 'x/y'\nreason = 'r'\n[[expected]]\nid = 'x/y'\nreason = 'r'\n", "entry 2: duplicates entry 1"),
    ("expected = 'x/y'\n", "must be an array of tables"),
    ("[[fails]]\nid = 'x/y'\n", "unknown top-level key(s) ['fails']"),
    ("format = 'memconform-baseline/9'\n", "is not 'memconform-baseline/1'"),
    ("[[expected]\nid = 'x'\n", "not valid TOML"),
])
def test_bad_baselines_are_refused_with_the_place(tmp_path, text, message):
    with pytest.raises(BaselineError) as exc:
        _baseline(tmp_path, text)
    assert message in str(exc.value)
    assert str(tmp_path / "baseline.toml") in str(exc.value)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(BaselineError, match="cannot be read"):
        load_baseline(tmp_path / "nope.toml")


# -- mapping ---------------------------------------------------------------------------------

def _one(id_, **narrow):
    return parse_baseline({"expected": [{"id": id_, "reason": "known", **narrow}]}, "b.toml")


def _word(result):
    """What the baseline made of a result, else its outcome."""
    return (result.get("baseline") or {}).get("status") or result["outcome"]


def test_listed_failure_is_accepted_with_the_reason_and_keeps_its_real_outcome():
    res = _result()
    out = apply_baseline(res, parse_baseline({"expected": [
        {"id": BROKEN, "reason": "known", "issue": "https://example.org/6"}]}, "b.toml"))
    assert out["baseline"]["status"] == "accepted" and out["outcome"] == "failed"
    assert baseline_outcome(out) is Outcome.XFAILED
    assert "known" in out["baseline"]["reason"] and "https://example.org/6" in out["baseline"]["reason"]
    assert out["findings"] == res["findings"]  # the evidence stays in the report
    assert res["outcome"] == "failed"  # the input is not modified


def test_listed_item_that_passes_becomes_stale():
    out = apply_baseline(_result("passed", findings=()), _one(BROKEN))
    assert out["baseline"]["status"] == "stale" and out["outcome"] == "passed"
    assert baseline_outcome(out) is Outcome.STALE
    reason = out["baseline"]["reason"]
    assert "stale" in reason and BROKEN in reason and "b.toml" in reason


@pytest.mark.parametrize("id_", ["omf/validation/omf-version", "omf/validation/omf-version[c1]"])
def test_check_id_and_case_match(id_):
    res = _result(case="c1", findings=(BROKEN, "omf/other"), requirements=(BROKEN, "omf/other"))
    assert _word(apply_baseline(res, _one(id_))) == "accepted"


def test_other_case_of_the_check_is_not_matched():
    assert _word(apply_baseline(_result(case="c2"), _one("omf/validation/omf-version[c1]"))) == "failed"


def test_a_new_finding_on_an_unlisted_requirement_still_fails():
    res = _result(findings=(BROKEN, "omf/other"), requirements=(BROKEN, "omf/other"))
    assert _word(apply_baseline(res, _one(BROKEN))) == "failed"


@pytest.mark.parametrize(("narrow", "expected"), [
    ({"target": "reference"}, "accepted"), ({"target": "http://elsewhere"}, "failed"),
    ({"spec": "ump"}, "failed"), ({"binding": "file"}, "failed"), ({"binding": "http", "spec": "omf"}, "accepted"),
])
def test_narrowing(narrow, expected):
    assert _word(apply_baseline(_result(), _one(BROKEN, **narrow))) == expected


@pytest.mark.parametrize("outcome", ["skipped", "error", "info"])
def test_unjudged_results_are_left_alone(outcome):
    res = _result(outcome, findings=())
    assert apply_baseline(res, _one(BROKEN)) == res


def test_unlisted_results_and_no_baseline_are_untouched():
    res = _result()
    assert apply_baseline(res, _one("omf/something-else")) == res
    assert apply_baseline(res, None) == res


def test_write_baseline_lists_every_failure_and_round_trips():
    report = {"run": {"options": {"strict": False}}, "results": [
        _result(), _result("passed", findings=(), check="omf/a"),
        _result("warning", findings=("omf/should",), check="omf/b"),
        _result(check="omf/c", case="k", target="http://x:1"),
    ]}
    text = write_baseline(report)
    entries = parse_baseline(tomllib.loads(text)).entries
    assert {(e.id, e.target, e.spec, e.binding) for e in entries} == {
        ("omf/validation/omf-version", "reference", "omf", "http"), ("omf/c[k]", "http://x:1", "omf", "http")}
    assert all(e.reason.startswith("TODO") for e in entries)
    assert all(_word(apply_baseline(r, parse_baseline(tomllib.loads(text)))) == "accepted"
               for r in report["results"] if r["outcome"] == "failed")
    report["run"]["options"]["strict"] = True  # warnings fail a strict run, so they are listed
    assert "omf/b" in {e.id for e in parse_baseline(tomllib.loads(write_baseline(report))).entries}


# -- a real run ------------------------------------------------------------------------------

def _baseline_file(tmp_path):
    path = tmp_path / "baseline.toml"
    path.write_text(f'[[expected]]\nid = "{BROKEN}"\nreason = "accepted for the test"\n'
                    f'spec = "omf"\nbinding = "http"\n', encoding="utf-8")
    return path


def _valid(report):
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


def test_run_with_baseline_of_the_broken_requirement_passes_as_xfailed(pytester, tmp_path):
    path = _baseline_file(tmp_path)
    result, report = run_suite(pytester, f"--target={FAULT}", *RUN, "--baseline", str(path))
    assert result.ret == 0
    result.assert_outcomes(xfailed=1, passed=report["totals"]["passed"])
    xf = [r for r in report["results"] if (r.get("baseline") or {}).get("status") == "accepted"]
    assert [r["check"] for r in xf] == ["omf/validation/omf-version"]
    assert xf[0]["outcome"] == "failed" and "accepted for the test" in xf[0]["baseline"]["reason"]
    assert report["run"]["options"]["baseline"]["path"] == str(path)
    assert report["run"]["options"]["baseline"]["blake3"] == blake3.blake3(path.read_bytes()).hexdigest()
    assert report["run"]["options"]["baseline"]["entries"][0]["id"] == BROKEN
    # the level is the one the target really reached: the baseline changes the exit status only
    (row,) = [r for r in report["levels"] if r["binding"] == "http"]
    assert row["level"] is None and row["status"] == "not-conformant" and BROKEN in row["blocked_by"]
    assert row["accepted"] == {"must": 1, "requirements": [BROKEN], "by": [str(path)]}
    assert f"1 accepted by {path}" in row["summary"]
    _valid(report)


def test_same_run_without_the_baseline_fails(pytester):
    result, report = run_suite(pytester, f"--target={FAULT}", *RUN)
    assert result.ret == 1 and report["totals"].get("failed") == 1
    assert "baseline" not in report["run"]["options"]


def test_baseline_on_the_clean_reference_is_stale_and_fails(pytester, tmp_path):
    result, report = run_suite(pytester, "--target=reference", *RUN, "--baseline", str(_baseline_file(tmp_path)))
    assert result.ret == 1
    # the stale item really passed: pytest fails it, the report keeps "passed" beside the word
    result.assert_outcomes(failed=1, passed=report["totals"]["passed"] - 1)
    assert report["totals"]["stale"] == 1 and "failed" not in report["totals"]
    result.stdout.fnmatch_lines([f"*baseline entry {BROKEN} is stale*remove it*"])
    _valid(report)


def test_a_broken_baseline_is_a_usage_error(pytester, tmp_path):
    path = tmp_path / "baseline.toml"
    path.write_text("[[expected]]\nid = 'x/y'\n", encoding="utf-8")
    result, _ = run_suite(pytester, "--target=reference", *RUN, "--baseline", str(path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'reason' is required*"])
