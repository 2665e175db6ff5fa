"""`memconform compare`: two real runs side by side — the clean reference and one with a fault —
differ on exactly the requirements the fault breaks, in the terminal table and in the HTML page."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from click.testing import CliRunner

from memconform.reference_impl.faults import FAULTS
from memconform.reports.compare import comparison, render_html, render_terminal
from memconform.suite.cli import cli

from harness.helpers import run_suite  # tests/ is on sys.path (rootdir-relative packages)

FAULT = "omf-accepts-other-version"


def _two_reports(pytester) -> tuple[dict, dict]:
    args = ("--spec=omf", "--binding=http", "--memconform-only")
    _, clean = run_suite(pytester, "--target=reference", *args)
    _, faulty = run_suite(pytester, f"--target=reference?fault={FAULT}", *args)
    return clean, faulty


def test_the_comparison_differs_exactly_where_the_fault_breaks(pytester):
    clean, faulty = _two_reports(pytester)
    cmp = comparison([("clean.json", clean), ("faulty.json", faulty)])
    assert cmp.targets == ("reference", f"reference?fault={FAULT}")
    assert cmp.levels[("omf", "1.0", "http")] == {"reference": "L1", f"reference?fault={FAULT}": None}
    assert {rid for _, _, rid in cmp.disagreements()} == set(FAULTS[FAULT].breaks)
    text = render_terminal(cmp, width=200)
    assert "not conformant" in text and "omf/omf-version-gated" in text
    assert "omf/memories-required" not in text  # same outcome on both: left out without --all
    assert "omf/memories-required" in render_terminal(cmp, everything=True, width=200)


def test_same_labels_are_told_apart_and_html_escapes_everything(pytester):
    clean, _ = _two_reports(pytester)
    hostile = json.loads(json.dumps(clean).replace('"reference"', '"<script>x</script>"'))
    cmp = comparison([("a.json", clean), ("b.json", clean), ("c.json", hostile)])
    assert cmp.targets == ("reference (a.json)", "reference (b.json)", "<script>x</script>")
    assert cmp.disagreements() == []  # three identical runs
    page = render_html(cmp)

    class Scripts(HTMLParser):
        count = 0

        def handle_starttag(self, tag, attrs):
            Scripts.count += tag == "script"

    Scripts().feed(page)
    assert Scripts.count == 0 and "&lt;script&gt;x&lt;/script&gt;" in page


def test_the_command_prints_the_table_and_writes_the_page(pytester, tmp_path):
    clean, faulty = _two_reports(pytester)
    (tmp_path / "clean.json").write_text(json.dumps(clean), encoding="utf-8")
    (tmp_path / "faulty.json").write_text(json.dumps(faulty), encoding="utf-8")
    out = tmp_path / "cmp.html"
    result = CliRunner().invoke(cli, ["compare", str(tmp_path / "clean.json"), str(tmp_path / "faulty.json"),
                                      "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.count("Levels reached") == 1 and "omf/omf-version-gated" in result.output
    assert "omf/omf-version-gated" in out.read_text(encoding="utf-8")
    bad = CliRunner().invoke(cli, ["compare", str(tmp_path / "cmp.html")])
    assert bad.exit_code == 2
