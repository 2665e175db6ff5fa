"""The edges of the plugin a user touches first (issue 12, items 11, 13, 14): a filter that matches
nothing is a usage error naming what is accepted, --collect-only leaves reports alone, a target that
could not be judged has its own exit status, and JUnit classnames keep hosts and versions whole."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from memconform.suite.exit_codes import NOT_JUDGED

from .helpers import run_suite


def _run(pytester, *args: str):
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--memconform-only", *args)


@pytest.mark.parametrize(("option", "named"), [
    ("--spec=nonsense", ["ump", "upp", "omf"]),
    ("--spec=ump@9.9", ["ump@0.1", "ump@1.0"]),
    ("--spec=upp@2", ["upp@1.0.0"]),
    ("--binding=carrier-pigeon", ["file", "http", "mcp", "stdio", "cli"]),
])
def test_an_unknown_spec_version_or_binding_is_a_usage_error_naming_the_accepted(pytester, option, named):
    result = _run(pytester, "--target=reference", "--report=-", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-1500:]
    err = result.stderr.str()
    assert option.split("=", 1)[1] in err
    for value in named:
        assert value in err, err


def test_known_filters_in_any_case_still_run(pytester):
    result = _run(pytester, "--target=reference", "--report=-", "--spec=UMP@1.0", "--binding=FILE", "--level=L0")
    assert result.ret == 0, result.stdout.str()[-1500:]


def test_collect_only_writes_no_report_and_keeps_an_existing_one(pytester):
    report = pytester.path / "memconform-report.json"
    result = _run(pytester, "--target=reference", "--spec=ump@1.0", "--binding=file", "--collect-only")
    assert result.ret == 0
    assert not report.exists()
    report.write_text('{"kept": true}\n', encoding="utf-8")
    _run(pytester, "--target=reference", "--spec=ump@1.0", "--binding=file", "--collect-only")
    assert json.loads(report.read_text(encoding="utf-8")) == {"kept": True}


def test_a_target_that_cannot_be_reached_is_not_judged(pytester):
    result = _run(pytester, "--target=http://127.0.0.1:1", "--report=-")
    assert result.ret == NOT_JUDGED, result.stdout.str()[-1500:]


def test_errors_beside_passes_are_not_judged_and_a_failure_is_a_verdict(pytester):
    result, report = run_suite(pytester, "--memconform-only", "--target=file:nowhere.ump.json",
                               "--target=reference", "--spec=ump@1.0", "--binding=file")
    assert report["totals"].get("error", 0) > 0 and report["totals"].get("passed", 0) > 0
    assert result.ret == NOT_JUDGED
    (pytester.path / "broken.ump.json").write_text("[1, 2", encoding="utf-8")
    result, _ = run_suite(pytester, "--memconform-only", "--target=file:nowhere.ump.json",
                          "--target=file:broken.ump.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a failure outweighs the error


def test_a_vendor_test_failing_beside_an_unreachable_target_is_a_failure(pytester):
    pytester.makepyfile(test_vendor="def test_own():\n    assert 1 + 1 == 3\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--target=http://127.0.0.1:1",
                                          "--report=-")
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_not_judged_does_not_collide_with_pytest_codes():
    assert NOT_JUDGED not in {int(code) for code in pytest.ExitCode}


def _junit_cases(pytester, *args: str) -> set[tuple[str, str]]:
    junit = pytester.path / "junit.xml"
    _run(pytester, "--report=-", f"--junitxml={junit}", *args)
    return {(c.get("classname"), c.get("name")) for c in ET.parse(junit).getroot().iter("testcase")}


def test_junit_classnames_keep_hosts_ports_and_versions_whole(pytester):
    from memconform.suite.ump import consent, files
    from memconform.suite.ump.corpus import export_corpus

    records = consent.export_view([r for r in export_corpus("1.0") if r["ump"] == "1.0"])
    (pytester.path / "export.v2.ump.json").write_text(files.dump_json(records), encoding="utf-8")
    got = _junit_cases(pytester, "--target=reference", "--target=file:export.v2.ump.json", "--spec=ump@1.0",
                       "--binding=file")
    assert ("memconform.reference.ump-1_0.file", "ump/l0/record-schema") in got, sorted(got)[:5]
    assert ("memconform.file:export_v2_ump_json.ump-1_0.file", "ump/l0/record-schema") in got, sorted(got)[:5]
    got |= _junit_cases(pytester, "--target=file:nowhere.ump.json", "--spec=ump@1.0")
    assert ("memconform.file:nowhere_ump_json", "connect") in got, sorted(got)[:5]
    assert any(name.startswith("ump/l0/") and name.endswith("]") for _, name in got)  # cases keep their id
    got |= _junit_cases(pytester, "--target=http://127.0.0.1:1")
    assert ("memconform.http://127_0_0_1:1", "connect") in got, sorted(got)[:5]
    for classname, _ in got:
        assert classname.count(".") <= 3, classname  # memconform . target . spec-version . binding


def test_junit_names_of_round_trips_and_ipv6_targets():
    from memconform.suite.junit import junit_names

    assert junit_names("memconform::http://[::1]:8700::ump-1.0::http::ump/l1/recall[a.b]") == (
        "memconform.http://[::1]:8700.ump-1_0.http", "ump/l1/recall[a.b]")
    assert junit_names("memconform::interop::formats::ump→omf→ump") == (
        "memconform.interop.formats", "ump→omf→ump")
    assert junit_names("tests/test_vendor.py::test_own") is None
