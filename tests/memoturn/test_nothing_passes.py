"""Absence is never a pass, for memoturn (as tests/harness/test_nothing_passes_on_nothing.py is for UMP,
UPP and OMF): the reference with its memory taken away — every request is validated and answered in
the page's shapes, ingest answers `created` with the engine's ids, but nothing is kept, so GET answers
not found, recall finds nothing and a session holds nothing. A check that passes against it must have
observed what its requirement asks of such a target; each allowed pass says what it observed."""

from __future__ import annotations

import pytest

from memconform.reference_impl.memoturn.engine import MemoturnService
from memconform.suite.outcomes import Outcome
from memconform.suite.runner import run_check
from memconform.targets.memoturn import MemoturnRestClient, McpPart

from .helpers import MACHINE, VERSION, environment, memoturn_checks

ALLOWED = {
    "memoturn/type-and-topic-key-validity": "observed each invalid memory refused (400 invalid_request)",
    "memoturn/summary-required": "observed each memory without a summary refused",
    "memoturn/errors": "observed malformed requests refused in the envelope, and not_found for an unknown id",
    "memoturn/content-addressed-ids": "observed the ids ingest answered: the same three inputs, the same id",
    "memoturn/recall-needs-a-channel": "observed the recall without query, embedding or topic_key refused",
    "memoturn/recall-unknown-profile": "observed {\"memories\": [], \"txid\": 0} for a profile never written: what "
                                       "an empty store owes",
    "memoturn/recall-empty-valid": "observed 200 with memories: [] for a query nothing matches: exactly the rule",
    "memoturn/mcp-tools": "observed each tool answer a well-formed call",
    "memoturn/mcp-get-not-found": "observed memory_get of an unknown id answer a not-found result",
}


def _empty() -> MemoturnService:
    service = MemoturnService()
    for name in ("_insert", "_row"):
        if not hasattr(service, name):
            raise AssertionError(f"MemoturnService.{name} is gone: update this test")
    service._insert = lambda *args, **kwargs: None  # nothing kept; every answer stays the reference's own
    return service


@pytest.mark.parametrize("binding", ("http", "mcp"))
def test_no_memoturn_check_passes_on_an_empty_store(binding):
    from memconform.reference_impl.memoturn.http import app
    from memconform.reference_impl.memoturn.mcp import build_mcp_server
    from memconform.reference_impl.ump.serve import start_in_thread

    service = _empty()
    server = part = None
    try:
        if binding == "http":
            server = start_in_thread(None, app=app(service))
            base = server.base_url.rstrip("/")
            factory = lambda: MemoturnRestClient(base, 10.0)  # noqa: E731
        else:
            part = McpPart("empty", server=build_mcp_server(service), timeout=10.0)
            factory = lambda: part.client(None)  # noqa: E731
        with environment(MACHINE):
            results = {c.id: run_check(c, VERSION, binding, factory, None) for c in memoturn_checks()
                       if binding in c.bindings}
    finally:
        if server is not None:
            server.stop()
        if part is not None:
            part.close()
        service.close()
    assert not [k for k, r in results.items() if r.outcome is Outcome.ERROR], \
        {k: r.reason for k, r in results.items() if r.outcome is Outcome.ERROR}
    passed = sorted(k for k, r in results.items() if r.outcome is Outcome.PASSED)
    offenders = [k for k in passed if k not in ALLOWED]
    assert not offenders, f"passed against a store that keeps nothing: {offenders}"
    assert set(ALLOWED) <= {c.id for c in memoturn_checks()}, "an allow-list entry names no check"
    assert len(passed) < len(results) / 3, passed
