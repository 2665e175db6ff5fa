"""False verdicts found by the blind red team of round 18 against an independent OAMS server over
JSON-RPC stdio and its export files, each pinned here (the variant oams-unknown-namespace-error-first
pins F1 in tests/harness/test_variants.py; the Markdown reading is tests/oams/test_model.py's)."""

from __future__ import annotations

import sys

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


class _Echoing:
    """The reference (times made UTC, variant oams-times-normalized) behind a STORE whose answer echoes
    the memory as sent: round 18's store-echo-input."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def store(self, memory, namespace=None, key=None):
        import dataclasses

        reply = self._inner.store(memory, namespace, key)
        if reply.ok and isinstance(memory, dict) and "created_at" in memory:
            return dataclasses.replace(reply, result=dict(memory))
        return reply


def test_a_non_utc_time_stored_in_utc_is_not_charged_to_refusal_for_an_echoed_answer():
    """A server that stores an offset time as the same instant in UTC has stored what §2 asks; an
    answer echoing the input is store-returns-stored's finding, not invalid-memory-refused's."""
    from memconform.suite.registry import _REGISTRY
    from memconform.suite.runner import run_check

    from .helpers import reference

    check = _REGISTRY["oams/invalid-memory-refused"]
    with reference("http", variants=("oams-times-normalized",)) as factory:
        result = run_check(check, "0.1", "http", lambda: _Echoing(factory()), None)
    assert not result.findings, [f.message for f in result.findings]
    assert "LIST shows its times as the same instant in UTC" in (result.reason or ""), result.reason


DIES_ON_GARBAGE = r'''
import json, sys
from memconform.reference_impl.oams.engine import OamsService
from memconform.reference_impl.oams.rpc import endpoint

rpc = endpoint(OamsService())
for raw in sys.stdin.buffer:
    try:
        json.loads(raw)
    except ValueError:
        sys.exit(1)  # a server that ends on a line it cannot parse
    answer = rpc.handle(raw.strip())
    if answer is not None:
        sys.stdout.buffer.write(answer.rstrip(b"\n") + b"\n")
        sys.stdout.buffer.flush()
'''


def test_a_stdio_server_ending_on_a_malformed_line_gets_verdicts_not_errors(pytester, tmp_path):
    """The suite sends lines that are not JSON on purpose: a child that exits on one is started again,
    and what it did is judged (error-shape fails, the JSON-RPC class's parse-error too), never an error."""
    script = tmp_path / "dies.py"
    script.write_text(DIES_ON_GARBAGE, encoding="utf-8")
    result, report = run_suite(pytester, f"--target=oams+jsonrpc+stdio:{sys.executable} {script}", "--spec=oams")
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    failed = {f["requirement"] for r in report["results"] if r["outcome"] == "failed" for f in r["findings"]}
    assert {"oams/error-shape", "oams/jsonrpc-parse-error"} <= failed, failed
