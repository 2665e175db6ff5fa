"""A descriptor's known_deviations: checked against the catalogues, printed, and like a baseline
they change the exit status and never the level (issue 12, item 1)."""

from __future__ import annotations

import re

from harness.helpers import run_suite  # tests/ is on sys.path (rootdir-relative packages)

BROKEN = "omf/omf-version-gated"  # the one requirement omf-accepts-other-version breaks
CLI = ("{python} -m memconform.suite.cli omf {op} --db {db} --tenant-id {tenant} --fault omf-accepts-other-version "
       "--input {file} --dry-run {dry_run}")


def _descriptor(tmp_path, deviations: str) -> str:
    path = tmp_path / "vendor.toml"
    path.write_text(f"""name = "a vendor that accepts any OMF version"
specs = ["omf@1.0"]
known_deviations = {deviations}

[omf.cli]
export = "{{python}} -m memconform.suite.cli omf export --db {{db}} --tenant-id {{tenant}} --output {{file}}"
import = "{CLI.format(python='{python}', db='{db}', tenant='{tenant}', file='{file}', dry_run='{dry_run}', op='import')}"

[omf.vars]
db = "{{workdir}}/store.sqlite"
""", encoding="utf-8")
    return str(path)


RUN = ("--memconform-only", "--check", "omf/validation/omf-version")


def test_an_unknown_deviation_id_is_a_usage_error_naming_it(pytester, tmp_path):
    target = _descriptor(tmp_path, '["omf/omf-version-gatd"]')
    result, report = run_suite(pytester, f"--target={target}", *RUN)
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*known_deviations names 'omf/omf-version-gatd'*no catalogue knows*"])
    assert report == {}


def test_a_known_deviation_accepts_the_failure_and_never_raises_the_level(pytester, tmp_path):
    target = _descriptor(tmp_path, f'[{{ requirement = "{BROKEN}", reason = "we read 0.9 files until Q3" }}]')
    result, report = run_suite(pytester, f"--target={target}", *RUN)
    out = result.stdout.str()
    assert result.ret == 0, out[-3000:]
    result.assert_outcomes(xfailed=1)
    assert f"known deviation {BROKEN} — we read 0.9 files until Q3" in out
    (row,) = report["levels"]
    assert row["level"] is None and row["blocked_by"] == [BROKEN] and row["status"] == "not-conformant"
    assert row["accepted"]["requirements"] == [BROKEN]
    assert re.search(rf"not conformant: L1 blocked by {re.escape(BROKEN)} — .*1 MUST failed, 1 accepted by "
                     r"\S*vendor.toml known_deviations", row["summary"]), row["summary"]
    (res,) = [r for r in report["results"] if r["check"] == "omf/validation/omf-version"]
    assert res["outcome"] == "failed" and res["baseline"]["status"] == "accepted"
    assert report["run"]["options"]["known_deviations"][target][0]["id"] == BROKEN
