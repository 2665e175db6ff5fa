"""The plugin as a vendor meets it: options, collection, outcomes, messages and the report."""

from __future__ import annotations

import json
import re
from importlib import resources

import jsonschema
import pytest

from memconform.suite.ump import consent, files
from memconform.suite.ump.corpus import export_corpus

from .helpers import run_suite

SCHEMA = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())


def _validate_report(report):
    validator = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


def _good_export(path, version="1.0"):
    records = consent.export_view([r for r in export_corpus(version) if r["ump"] == version])
    path.write_text(files.dump_json(records), encoding="utf-8")
    return records


def test_without_target_the_vendors_run_is_untouched(pytester):
    pytester.makepyfile(test_vendor="def test_own():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "= memconform =" not in result.stdout.str()  # no summary section, no items
    assert not (pytester.path / "memconform-report.json").exists()


def test_help_lists_the_options(pytester):
    result = pytester.runpytest_inprocess("--help")
    out = result.stdout.str()
    for option in ("--target", "--spec", "--level", "--binding", "--memconform-strict", "--report", "--timeout"):
        assert option in out


def test_reference_run_prints_one_line_per_spec_version_binding(reference_quick_run):
    report = reference_quick_run.report
    _validate_report(report)
    out = reference_quick_run.out
    for version in ("0.1", "1.0"):
        assert re.search(rf"UMP {re.escape(version)} / L0 / file: conformant — \d+ MUST passed, \d+ SHOULD warnings?",
                         out), out[-3000:]
        for binding in ("http", "mcp"):
            assert re.search(rf"UMP {re.escape(version)} / L3 / {binding}: conformant — \d+ MUST passed", out), \
                out[-3000:]
    for binding in ("http", "stdio"):
        assert re.search(rf"UPP 1\.0\.0 / L3 / {binding}: conformant — \d+ MUST passed", out), out[-3000:]
    assert {(r["spec"], r["version"], r["binding"]) for r in report["levels"]} == {
        ("ump", v, b) for v in ("0.1", "1.0") for b in ("file", "http", "mcp")} | {
        ("upp", "1.0.0", b) for b in ("http", "stdio")} | {("omf", "1.0", b) for b in ("cli", "http")} | {
        ("oams", "0.1", b) for b in ("file", "http", "jsonrpc", "stdio")} | {
        ("memoturn", "2026.06", b) for b in ("http", "mcp")}
    for binding in ("cli", "http"):
        assert re.search(rf"OMF 1\.0 \(memd\) / L1 / {binding}: conformant — \d+ MUST passed", out), out[-3000:]
    for binding in ("http", "jsonrpc", "stdio"):
        assert re.search(rf"OAMS 0\.1 / L3 \(read/write \+ consolidation\) / {binding}: conformant — \d+ MUST passed",
                         out), out[-3000:]
    assert re.search(r"OAMS 0\.1 / L1 \(export\) / file: claim reached — \d+ MUST passed", out), out[-3000:]
    for binding in ("http", "mcp"):
        assert re.search(rf"MEMOTURN 2026\.06 / L3 \(Lifecycle\) / {binding}: conformant — \d+ MUST passed", out), \
            out[-3000:]
    covered = [c for c in report["coverage"] if c["claimed"] and c["keyword"] == "MUST"]
    assert covered and all(c["with_checks"] == c["testable"] for c in covered)


def test_file_target_judges_a_vendor_export(pytester):
    _good_export(pytester.path / "export.ump.json")
    result, report = run_suite(pytester, "--target=file:export.ump.json")
    _validate_report(report)
    assert report["totals"].get("failed", 0) == 0, [r["findings"] for r in report["results"] if r["outcome"] == "failed"]
    (row,) = report["levels"]
    assert row["version"] == "1.0"
    # Parsing cannot be judged from files: no implementation level, but the file's own claim
    assert row["level"] is None and "ump/kinds-accept-all" in row["blocked_at"]["not_assessed"]
    assert row["status"] == "claim" and row["claim"]["reached"] and row["claim"]["id"] == "emitted-file"
    assert "ump/kinds-accept-all" in row["claim"]["left_out"]["reader"]
    assert "UMP 1.0 / L0 (emitted file) / file: claim reached" in row["summary"]
    skipped = [r for r in report["results"] if r["outcome"] == "skipped"]
    assert skipped and all(r["reason"] for r in skipped)


def test_file_target_failure_names_file_pointer_requirement_and_section(pytester):
    records = _good_export(pytester.path / "export.ump.json")
    records[2]["kind"] = "dream"
    records[3]["scope"]["visibility"] = "everyone"
    (pytester.path / "bad.ump.json").write_text(json.dumps(records), encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:bad.ump.json", "--spec=ump")
    assert result.ret == 1
    out = result.stdout.str()
    assert "ump/record-kind (§2.1, MUST, L0)" in out
    assert "bad.ump.json /2 /kind" in out
    assert "ump/record-visibility (§2.2, MUST, L0)" in out and "bad.ump.json /3 /scope/visibility" in out
    assert "the spec asks:" in out and "received:" in out
    assert "Traceback" not in out
    (row,) = report["levels"]
    assert "not conformant" in row["summary"]


@pytest.mark.parametrize("content", ["{not json", "[1, 2", "", "\x00\x01"])
def test_malformed_file_is_a_failed_check_not_a_crash(pytester, content):
    (pytester.path / "broken.ump.json").write_text(content, encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:broken.ump.json")
    out = result.stdout.str()
    assert "Traceback" not in out
    assert result.ret == 1
    failed = {f["requirement"] for r in report["results"] if r["outcome"] == "failed" for f in r["findings"]}
    assert "ump/file-json" in failed
    assert "broken.ump.json" in out


def test_missing_file_is_an_error_and_the_run_completes(pytester):
    # the reference's own file binding is enough to show the other target still runs
    result, report = run_suite(pytester, "--target=file:nowhere.ump.json", "--target=reference", "--spec=ump",
                               "--binding=file")
    assert report["totals"].get("error") == 1
    assert report["totals"].get("passed", 0) > 0  # the other target still ran
    (err,) = [r for r in report["results"] if r["outcome"] == "error"]
    assert "does not exist" in err["reason"]
    # a forced version does not turn it into one error per check
    _, forced = run_suite(pytester, "--target=file:nowhere.ump.json", "--spec=ump@1.0")
    assert forced["totals"] == {"error": 1}, forced["totals"]
    # a MAY not offered is "info" in the report and a pass to pytest
    result.assert_outcomes(errors=1, passed=report["totals"]["passed"] + report["totals"].get("info", 0),
                           skipped=report["totals"].get("skipped", 0))


def test_bad_target_string_is_a_usage_error(pytester):
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--target=gopher://x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "cannot read target" in result.stderr.str()
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--target=reference?fault=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "known faults" in result.stderr.str()


def test_a_report_that_cannot_be_written_is_a_usage_error_before_the_run(pytester):
    # it was a traceback after the whole run, and the run's verdict was lost
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--target=reference", "--spec=ump@1.0",
                                          "--binding=file", "--report=no-such-folder/report.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "does not exist" in result.stderr.str() and "no-such-folder" in result.stderr.str()
    pytester.mkdir("a-folder")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--target=reference", "--report=a-folder")
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "is a folder" in result.stderr.str()


def test_spec_and_level_filters(pytester):
    _, report = run_suite(pytester, "--target=reference", "--spec=ump@1.0", "--level=L0")
    assert {r["version"] for r in report["results"]} == {"1.0"}
    assert {r["level"] for r in report["results"]} == {"L0"}


def test_should_warnings_fail_only_under_strict(pytester):
    records = [r for r in _good_export(pytester.path / "export.ump.json") if "integrity" not in r]
    for r in records:
        r.pop("consent", None)
    (pytester.path / "noconsent.ump.json").write_text(json.dumps(records), encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:noconsent.ump.json")
    assert report["totals"].get("warning", 0) >= 1 and report["totals"].get("failed", 0) == 0
    assert result.ret == 0
    assert "SHOULD ump/consent-recommended" in result.stdout.str()
    result, _ = run_suite(pytester, "--target=file:noconsent.ump.json", "--memconform-strict")
    assert result.ret == 1


_RANDOM = re.compile(r"urn:ump:[a-z2-7]+|mcf[a-z]*[0-9a-f]{12}"
                     # the reference's OAMS export: a temporary folder, a bundle named by its time
                     r"|memconform-oams-\w+/oams-export-\d{8}T\d+Z")


def _stable(report):
    """The report without what differs between any two runs: times, and the ids and markers of
    records the checks create (random by design)."""
    report = json.loads(_RANDOM.sub("<random>", json.dumps(report)))
    report.pop("generated_at")
    for r in report["results"]:
        r["duration"] = 0
        r.pop("effort", None)  # how many sequences a machine fitted in its seconds depends on the load
    return report


def test_xdist_gives_the_same_report(pytester, monkeypatch, reference_quick_run):
    pytest.importorskip("xdist")
    # quick effort: the fuzz draws fewer cases, the same ones serially and in parallel; its time
    # budget lifted so that the counts govern (on a loaded machine the fuzz ran out of time in one
    # run and not the other: a verdict of this test must not depend on the machine's speed)
    monkeypatch.setenv("MEMCONFORM_FUZZ_SECONDS", "300")
    monkeypatch.setenv("MEMCONFORM_STATEFUL_SECONDS", "300")  # so also the machines' sequences (the fixture's too)
    # UMP 1.0 and UPP, of five specs and six versions: between them every kind of binding (file,
    # HTTP, MCP, stdio) and of subject opening the plugin schedules; the others would only repeat it
    # (and triple the test's time)
    specs = (("ump", "1.0"), ("upp", "1.0.0"))
    serial = _of_specs(reference_quick_run.report, specs)  # the serial run, as the shared fixture made it
    report_path = pytester.path / "parallel.json"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--target=reference",
                                           *(f"--spec={s}@{v}" for s, v in specs), "--effort=quick",
                                           "--report", str(report_path))
    assert result.ret == 0, result.stdout.str()[-2000:]
    parallel = json.loads(report_path.read_text())
    assert _stable(parallel)["results"] == _stable(serial)["results"]
    assert _stable(parallel)["levels"] == _stable(serial)["levels"]
    assert parallel["requirements"] == serial["requirements"]
    assert {r["binding"] for r in parallel["results"]} >= {"file", "http", "mcp", "stdio"}


def _of_specs(report, specs):
    """The report's rows of `specs` ((spec, version) pairs)."""
    return dict(report, results=[r for r in report["results"] if (r["spec"], r["version"]) in specs],
                levels=[r for r in report["levels"] if (r["spec"], r["version"]) in specs],
                requirements=[r for r in report["requirements"] if (r["spec"], r["version"]) in specs])


@pytest.mark.parametrize("shape", ["ndjson", "md-folder", "single-object"])
def test_file_target_reads_every_export_shape(pytester, shape):
    records = consent.export_view([r for r in export_corpus("1.0") if r["ump"] == "1.0"])
    if shape == "ndjson":
        (pytester.path / "export.ump.ndjson").write_text(files.dump_ndjson(records), encoding="utf-8")
        target = "file:export.ump.ndjson"
    elif shape == "md-folder":
        files.write_md_folder(records, pytester.path / "memories")
        target = "file:memories"
    else:
        (pytester.path / "one.ump.json").write_text(json.dumps(records[0]), encoding="utf-8")
        target = "file:one.ump.json"
    result, report = run_suite(pytester, f"--target={target}")
    assert report["totals"].get("failed", 0) == 0, [r["findings"] for r in report["results"] if r["outcome"] == "failed"]
    assert report["totals"].get("error", 0) == 0
    judged = [r for r in report["results"] if r["check"] == "ump/l0/record-schema"]
    assert judged and judged[0]["outcome"] == "passed"
    assert result.ret == 0
