"""A check that sends several probes judges every one and reports every failing one, not only the
first (issue 12, item 7: `upp/jsonrpc-invalid-request` used to stop at 1 of 8)."""

from __future__ import annotations

import pytest

from harness.helpers import run_suite  # tests/ is on sys.path (rootdir-relative packages)


@pytest.mark.parametrize(("fault", "check", "probes"), [
    ("upp-invalid-request-as-parse-error", "upp/wire/invalid-request", 8),  # every non-request value
    ("upp-parse-error-with-id", "upp/wire/parse-error", 4),  # every text that is not JSON
    ("upp-unknown-method-as-invalid-request", "upp/wire/method-not-found", 2),  # both unknown methods
])
def test_every_failing_probe_is_a_finding(pytester, fault, check, probes):
    result, report = run_suite(pytester, f"--target=reference?fault={fault}", "--spec", "upp", "--binding", "http",
                               "--check", check, "--memconform-only")
    assert result.ret == 1
    (res,) = report["results"]
    assert res["outcome"] == "failed"
    assert len(res["findings"]) == probes, [f["message"] for f in res["findings"]]
    assert len({f["sent"] for f in res["findings"]}) == probes  # each names what it sent
