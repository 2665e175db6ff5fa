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
    assert result.output.count("Level changes") == 1 and "omf/omf-version-gated" in result.output
    assert "omf/omf-version-gated" in out.read_text(encoding="utf-8")
    bad = CliRunner().invoke(cli, ["compare", str(tmp_path / "cmp.html")])
    assert bad.exit_code == 2


# -- what changed first, on one screen (issue 12 item 9) ------------------------------------------

def _run(target: str, failed: set[str], absent: set[str], musts: list[str]) -> dict:
    """A small real report of `target` on UMP 1.0 over http: every MUST in `musts` judged, passing
    unless in `failed`, those in `absent` not judged at all."""
    from memconform.reports.model import build_report

    results = [{"node_id": f"memconform::{target}::ump-1.0::http::c/{rid}", "check": f"c/{rid}", "title": rid,
                "target": target, "spec": "ump", "version": "1.0", "binding": "http", "case": None,
                "requirements": [rid], "level": "L1", "keyword": "MUST",
                "outcome": "failed" if rid in failed else "passed", "reason": None,
                "findings": [{"requirement": rid, "message": "broken"}] if rid in failed else [],
                "duration": 0.0, "seed": None}
               for rid in musts if rid not in absent]
    return build_report(results, [{"label": target, "kind": "http"}],
                        {"memconform": "0", "pytest": "0", "python": "3", "options": {}})


def _before_after() -> tuple[dict, dict, dict[str, list[str]]]:
    from memconform.suite import catalogue as cats

    cat = cats.load("ump")
    by_level = {lv: sorted(r.id for r in cat.for_version("1.0", "http")
                           if r.level == lv and r.keyword.value == "MUST" and r.testable
                           and r.counts_for_level()) for lv in ("L0", "L1")}  # a class's requirements block no level
    l0, l1 = by_level["L0"], by_level["L1"]
    sets = {"fixed": l1[:12], "regressed": l0[:3] + l1[12:24], "one_side": l1[24:28]}
    musts = l0 + l1
    before = _run("srv", set(sets["fixed"]), set(), musts)
    after = _run("srv", set(sets["regressed"]), set(sets["one_side"]), musts)
    return before, after, sets


def test_compare_leads_with_level_changes_then_regressions_then_fixes_on_one_screen():
    before, after, sets = _before_after()
    cmp = comparison([("before.json", before), ("after.json", after)])
    text = render_terminal(cmp, width=120)
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= 40, text
    heads = [next(i for i, ln in enumerate(lines) if ln.startswith(h))
             for h in ("Level changes", "MUST regressions", "Fixes")]
    assert heads == sorted(heads), text
    level_rows = [ln for ln in lines[heads[0]:heads[1]] if ln.startswith("UMP 1.0 / http")]
    assert len(level_rows) == 1
    assert "L0 partial (L1 blocked by 12 MUST)" in level_rows[0]
    assert "not conformant: L0 blocked by 15 MUST" in level_rows[0]
    assert "MUST regressions (15)" in text and "Fixes (12)" in text
    assert "+7 more, --all for everything" in text  # 15 regressions, 8 shown
    assert "4 requirements judged on one side only" in text
    for rid in sets["one_side"]:
        assert rid not in text  # counted apart, not listed as a difference
    assert {k[3] for k in cmp.regressions()} == set(sets["regressed"])
    assert {k[3] for k in cmp.fixes()} == set(sets["fixed"])
    assert not set(sets["one_side"]) & {k[2] for k in cmp.disagreements()}

    full = render_terminal(cmp, everything=True, width=120)
    assert "--all for everything" not in full
    for rid in sets["regressed"] + sets["fixed"]:
        assert rid in full


def test_compare_page_follows_the_same_order():
    before, after, sets = _before_after()
    page = render_html(comparison([("before.json", before), ("after.json", after)]))
    heads = [page.index(f"<h2>{h}") for h in ("Level changes", "MUST regressions", "Fixes", "All requirements")]
    assert heads == sorted(heads)
    regressions = page[heads[1]:heads[2]]
    assert all(rid in regressions for rid in sets["regressed"])  # the page lists everything
    assert "4 requirements judged on one side only" in page
