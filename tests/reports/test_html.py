"""The HTML page: complete, filterable, self-contained, and inert against server-chosen text."""

from __future__ import annotations

import html

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
    assert "/records/0/kind" in page and "<dt>received</dt>" in page and "<dt>sent</dt>" in page
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


# -- the page a reader opens: levels first, then failures, then requirements (issue 12 item 8) --

def _res(target: str, binding: str, check: str, requirements: list[str], outcome: str = "passed", *,
         findings: list[dict] | None = None, reason: str | None = None, baseline: dict | None = None) -> dict:
    return {"node_id": f"memconform::{target}::ump-1.0::{binding}::{check}", "check": check, "title": check,
            "target": target, "spec": "ump", "version": "1.0", "binding": binding, "case": None,
            "requirements": requirements, "level": "L0", "keyword": "MUST", "outcome": outcome,
            "reason": reason, "findings": findings or [], "duration": 0.01, "seed": None,
            **({"baseline": baseline} if baseline else {})}


def _owner_token() -> str:
    from memconform.suite.ump import captoken, testkeys

    return captoken.mint(testkeys.test_signing_key("owner-a"), scope={"owner": testkeys.test_did("owner-a")})


TOKEN = _owner_token()
FILE_TARGET = "file:demo.ump.json"


def _verdict_report() -> dict:
    """A live target whose L0 is blocked by five MUSTs (one accepted by a baseline, one finding sent
    with owner-a's capability token), and an export file that reaches its claim."""
    from memconform.reports.model import build_report
    from memconform.suite import catalogue as cats
    from memconform.suite.ump import testkeys

    cat = cats.load("ump")
    http_l0 = sorted(r.id for r in cat.for_version("1.0", "http")
                     if r.level == "L0" and r.keyword.value == "MUST" and r.testable)
    failing = ["ump/record-kind", "ump/record-time", "ump/record-version", "ump/record-visibility",
               "ump/record-id-format"]
    sent = (f"POST /ump/recall\nAuthorization: Bearer {TOKEN}\n"
            f'{{"query": "x", "scope": {{"owner": "{testkeys.test_did("owner-a")}"}}}}')
    results = [_res("demo", "http", "ump/rest", [r for r in http_l0 if r not in failing])]
    for rid in failing:
        findings = [{"requirement": rid, "message": f"{rid} broken {HOSTILE}", "sent": sent,
                     "received": f"HTTP 200 echo Bearer {TOKEN}", "where": f"/records/0/{rid}"}]
        results.append(_res("demo", "http", f"c/{rid}", [rid], "failed", findings=findings,
                            baseline={"status": "accepted", "by": "baseline.toml", "entries": [rid],
                                      "reason": "known"} if rid == "ump/record-id-format" else None))
    file_musts = [r.id for r in cat.for_version("1.0", "file")
                  if r.level == "L0" and r.keyword.value == "MUST" and r.testable and r.role != "reader"]
    results.append(_res(FILE_TARGET, "file", "ump/file-all", file_musts))
    options = {"targets": ["demo", FILE_TARGET], "specs": ["ump@1.0"], "level": "L3", "bindings": ["file", "http"],
               "strict": False, "seed": 0, "timeout": 10.0, "environment": {},
               "baseline": {"path": f"base{HOSTILE}.toml", "blake3": "ab" * 32,
                            "entries": [{"id": "ump/record-id-format", "reason": "known"}]},
               "known_deviations": {"demo": [{"id": "ump/record-kind", "reason": "wontfix"}]}}
    return build_report(results, [{"label": "demo", "kind": "http", "advertised": {"ump": "L1"}},
                                  {"label": FILE_TARGET, "kind": "file", "as": "export"}],
                        {"memconform": "0", "pytest": "0", "python": "3", "options": options})


@pytest.fixture(scope="module")
def verdicts():
    report = _verdict_report()
    return report, render_html(report)


def _section(page: str, heading: str) -> str:
    """The page from `<h2>heading</h2>` up to the next h2."""
    start = page.index(f"<h2>{heading}</h2>")
    end = page.find("<h2>", start + 1)
    return page[start:end if end > 0 else len(page)]


def test_the_page_opens_with_levels_then_failures_then_requirements(verdicts):
    report, page = verdicts
    order = [page.index(h) for h in ("<h2>levels</h2>", "<h2>failures</h2>", "<h2>requirements</h2>")]
    assert order == sorted(order)
    assert page.index("<h2>levels</h2>") < page.index('class="req')  # no requirement row before the levels
    levels = _section(page, "levels")
    demo = next(r for r in report["levels"] if r["target"] == "demo")
    assert demo["status"] == "not-conformant" and len(demo["blocked_by"]) == 5
    for rid in demo["blocked_by"]:  # every blocking id, not "+2 more"
        assert f"<code>{rid}</code>" in levels
    assert "more)" not in levels
    assert 'class="s-not-conformant"' in levels and "1 MUST accepted by baseline.toml" in levels
    file_row = next(r for r in report["levels"] if r["target"] == FILE_TARGET)
    assert file_row["status"] == "claim" and "L0 (emitted file)" in levels and 'class="s-claim"' in levels
    assert "claim reached; 5 MUST about reading records need a live implementation" in levels
    for cell in ("<th>target</th>", "<th>spec</th>", "<th>version</th>", "<th>binding</th>"):
        assert cell in levels


def test_each_failure_cites_its_requirement_with_message_where_sent_received(verdicts):
    report, page = verdicts
    failures = _section(page, "failures")
    for rid in ("ump/record-kind", "ump/record-time", "ump/record-id-format"):
        assert f"<code>{rid}</code> §" in failures and f"/records/0/{rid}" in failures
    assert "§2.1 · L0 · MUST" in failures  # ump/record-kind's section, level and keyword
    # ump/record-time is derived: the keyword says so, and its finding shows the reading
    from memconform.suite import catalogue as cats

    assert "§2.3 · L0 · MUST (derived)" in failures and "§2.1 · L0 · MUST (derived)" not in failures
    assert failures.count("<dt>reading</dt>") == 1
    assert html.escape(cats.load("ump").get("ump/record-time").note, quote=True) in failures
    for label in ("message", "where", "sent", "received"):
        assert f"<dt>{label}</dt>" in failures
    assert "accepted by baseline.toml" in failures  # the accepted failure says so, and stays listed


def test_sent_names_method_path_and_identity_with_tokens_redacted(verdicts):
    report, page = verdicts
    failures = _section(page, "failures")
    assert "<dt>request</dt><dd><code>POST</code> <code>/ump/recall</code>" in failures
    assert "token of owner-a" in failures  # the identity the token carries stays visible
    assert f"{TOKEN[:8]}…(redacted)" in failures
    assert TOKEN not in page and TOKEN.split(".")[1][8:40] not in page and TOKEN.rsplit(":", 1)[1] not in page
    from memconform.suite.ump import testkeys

    assert "owner-a" in failures and testkeys.test_did("owner-a") in failures
    # the JSON report keeps what the check recorded; only the page redacts
    assert any(TOKEN in f["sent"] for r in report["results"] for f in r["findings"])


def test_run_options_are_a_readable_list_not_a_json_dump(verdicts):
    _, page = verdicts
    options = page[page.index('<dl class="options">'):]
    options = options[:options.index("</dl>")]
    for term in ("targets", "specs", "level", "bindings", "strict", "seed", "timeout", "baseline",
                 "known deviations"):
        assert f"<dt>{term}</dt>" in options
    assert "demo, file:demo.ump.json" in options and "ump@1.0" in options and "10.0 s" in options
    assert "blake3 " + "ab" * 32 in options and "1 entry" in options
    assert "demo: ump/record-kind" in options
    assert "&quot;targets&quot;" not in page and "{&#x27;targets" not in page
    assert HOSTILE not in page
