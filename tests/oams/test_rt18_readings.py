"""False verdicts found by the blind red team of round 18 against an independent OAMS server over
JSON-RPC stdio and its export files, each pinned here (the variant oams-unknown-namespace-error-first
pins F1 in tests/harness/test_variants.py; the Markdown reading is tests/oams/test_model.py's)."""

from __future__ import annotations

import pytest

from harness.helpers import run_suite  # tests/ is on sys.path
from memconform.suite.oams import model

MEMORY = {"key": "a", "namespace": "user-x123ab:personal", "value": "v", "created_at": "2026-01-01T00:00:00Z",
          "updated_at": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize("name, render", [("store.jsonl", lambda ms: model.render_jsonl(ms)),
                                          ("export.md", lambda ms: model.render_markdown(ms).encode())])
def test_a_store_alone_or_a_markdown_file_alone_reaches_the_file_claim(pytester, name, render):
    """§1: "a single JSONL file on disk is a valid OAMS store"; the bundle's rules are not exercised by
    it (nor the memory rules by the Markdown form, which carries no metadata): never "incomplete"."""
    (pytester.path / name).write_bytes(render([MEMORY, dict(MEMORY, key="b")]))
    result, report = run_suite(pytester, f"--target=file:{name}", "--spec=oams")
    (level,) = report["levels"]
    assert level["claim"]["reached"] and not level["claim"]["not_assessed"], level
    assert report["totals"].get("failed", 0) == 0 and result.ret == 0


def test_a_markdown_file_whose_headers_lost_key_is_broken_oams_not_another_protocol(pytester):
    text = model.render_markdown([MEMORY]).replace("## key: ", "## ")
    (pytester.path / "export.md").write_text(text, encoding="utf-8")
    result, report = run_suite(pytester, "--target=file:export.md", "--spec=oams")
    assert report["totals"].get("error", 0) == 0
    assert {f["requirement"] for r in report["results"] for f in r["findings"]} == {"oams/markdown-shape"}
    assert result.ret == 1
