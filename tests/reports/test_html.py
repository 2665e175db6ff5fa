"""The HTML page: complete, filterable, self-contained, and inert against server-chosen text."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from memconform.reports.html import FILTER_OUTCOMES, render_html
from memconform.suite.cli import cli

from . import HOSTILE, make_report


class _Collect(HTMLParser):
    """Tags with their attributes and the text inside <script>, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)


def _parse(page: str) -> _Collect:
    p = _Collect()
    p.feed(page)
    return p


@pytest.fixture(scope="module")
def report():
    return make_report()


@pytest.fixture(scope="module")
def page(report):
    return render_html(report)


def test_the_hand_made_report_is_a_valid_report(report):
    import jsonschema
    from importlib import resources

    schema = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())
    jsonschema.validate(report, schema)


def test_every_requirement_and_level_line_is_shown(report, page):
    rows = [attrs for tag, attrs in _parse(page).tags if tag == "tr" and "req" in (attrs.get("class") or "")]
    assert len(rows) == len(report["requirements"]) + 1  # + the requirement only a skipped check touched
    for req in report["requirements"]:
        assert f"<code>{req['id']}</code>" in page
    for level in report["levels"]:
        assert level["summary"] in page
    assert "ump/consent-recommended" in page and 'data-outcome="skipped"' in page


def test_findings_are_shown_with_sent_received_and_where(page):
    assert "/records/0/kind" in page and "received:" in page and "sent:" in page
    assert "timed out &lt;after 5s&gt;" in page  # the error's reason


def test_filter_buttons_for_each_outcome(page):
    buttons = {attrs.get("data-filter") for tag, attrs in _parse(page).tags if tag == "button"}
    assert buttons == {"all", *FILTER_OUTCOMES}
    assert any("data-outcome" in s and "#filters" in s for s in _parse(page).scripts)


def test_coverage_matrix_has_a_column_per_binding(page):
    matrix = page[page.index('<table class="matrix">'):]
    matrix = matrix[:matrix.index("</table>")]
    assert "<th>file</th><th>http</th>" in matrix
    # record-kind: passed on file, failed on http, in one row of the matrix
    assert re.search(r"ump/record-kind</code></td><td class=\"o-passed\">passed</td>"
                     r"<td class=\"o-failed\">failed</td>", matrix)
    assert "n/a" in matrix  # file-only requirements cannot be judged on http


def test_untrusted_text_is_inert(page):
    parsed = _parse(page)
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in page
    # exactly the page's own script, and no element the finding tried to inject
    assert [t for t, _ in parsed.tags if t == "script"] == ["script"]
    assert not any("pwned" in s for s in parsed.scripts)
    assert not any(t == "img" or "onerror" in a for t, a in parsed.tags)
    assert not any(t == "b" for t, _ in parsed.tags)  # from the `sent` text


def test_the_page_is_self_contained(page):
    for tag, attrs in _parse(page).tags:
        for name in ("src", "href"):
            value = attrs.get(name) or ""
            assert not value.lower().startswith(("http:", "https:", "//")), (tag, attrs)
        assert tag not in ("link", "iframe", "img")
    assert "@import" not in page and "url(" not in page


def test_cli_report_html(tmp_path, report):
    src = tmp_path / "memconform-report.json"
    src.write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", "html", str(src), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    stdout = CliRunner().invoke(cli, ["report", "html", str(src)], catch_exceptions=False)
    assert stdout.exit_code == 0 and "ump/record-kind" in stdout.output


def test_cli_report_html_refuses_what_is_not_a_report(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "other"}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["report", "html", str(bad)])
    assert result.exit_code == 2 and "not a memconform report" in result.output


def test_renders_a_report_of_a_real_run(pytester):
    from harness.helpers import run_suite  # tests/ is on sys.path (rootdir-relative packages)

    result, report = run_suite(pytester, "--target=reference", "--spec", "omf", "--memconform-only")
    assert result.ret == 0 and report["requirements"]
    page = render_html(report)
    for req in report["requirements"]:
        assert f"<code>{req['id']}</code>" in page
    assert all(level["summary"] in page for level in report["levels"])
