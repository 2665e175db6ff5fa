"""False verdicts found against an independent UMP implementation (issue 13), each pinned by a
run of the one check against the reference server seen through a small twist of what a legitimate
server may do differently (the variants of reference_impl/ump/variants.py pin the others)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .helpers import served_reference
from memconform.suite.outcomes import CheckResult, Outcome
from memconform.suite.registry import all_checks
from memconform.suite.runner import run_check
from memconform.suite.ump.checks._live import OWNER_A, did, sample_record
from memconform.suite.ump.client import Auth
from memconform.targets.http import HttpUmpClient

CHECKS = {c.id: c for c in all_checks("ump")}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with served_reference() as base_url:
        yield base_url


class RanksEverything:
    """A server whose recall is a similarity engine: every visible record is an answer to any
    query, ranked (the public UMP implementation's recall behaves so for words it does not hold).
    Seen from the client: the query is dropped."""

    def __init__(self, inner: HttpUmpClient):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def recall(self, request: Any, **kw: Any) -> Any:
        request = dict(request) if isinstance(request, dict) else request
        if isinstance(request, dict):
            request["query"] = ""
        return self._inner.recall(request, **kw)


def run(check_id: str, client: Any, version: str = "1.0") -> CheckResult:
    return run_check(CHECKS[check_id], version, client.binding, lambda: client, None)


def explain(result: CheckResult) -> str:
    return f"{result.outcome} {result.reason or ''} " + " | ".join(f"{f.requirement}: {f.message[:400]}"
                                                                   for f in result.findings)


@pytest.fixture
def ranking_client(url) -> Iterator[RanksEverything]:
    inner = HttpUmpClient(url, "1.0", timeout=10)
    try:
        # something for the engine to answer with, whatever it is asked
        inner.remember(sample_record(text="an unrelated memory the engine ranks for every query"),
                       auth=Auth.as_owner(OWNER_A))
        yield RanksEverything(inner)
    finally:
        inner.close()


@pytest.mark.parametrize("check_id", ["ump/l1/reject-invalid-record", "ump/l1/remember-invalid",
                                      "ump/l1/reject-unknown-major"])
def test_a_refused_record_is_not_taken_for_the_first_recall_hit(ranking_client, check_id):
    """Before: the first recall result, whatever record it was, was reported as the refused record
    "still held" (the same id blamed for four different refused records)."""
    result = run(check_id, ranking_client)
    assert result.outcome == Outcome.PASSED, explain(result)


def test_the_sentinel_written_after_capabilities_is_no_side_effect(ranking_client):
    """Before: the suite's own sentinel remember showed in the second recall of a ranking engine
    and was charged to capabilities."""
    result = run("ump/l1/capabilities-no-side-effects", ranking_client)
    assert result.outcome == Outcome.PASSED, explain(result)


class NoRehydrateRoute:
    """A server without the reference implementation's rehydration helper: POST /ump/rehydrate
    answers 404 (a route it does not have)."""

    def __init__(self, inner: HttpUmpClient):
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def rehydrate(self, request: Any, **kw: Any) -> Any:
        return self._inner.call_raw("POST", "/ump/no-such-route", b"{}", {"Content-Type": "application/json"})


def test_rehydrate_never_execute_skips_an_absent_helper_like_its_siblings(url):
    """Before: a 404 from an absent helper failed ump/rehydrate-never-execute while the other
    rehydrate checks skipped."""
    inner = HttpUmpClient(url, "1.0", timeout=10)
    try:
        client = NoRehydrateRoute(inner)
        for check_id in ("ump/l3/rehydrate-never-execute", "ump/l3/rehydrate-verify"):
            result = run(check_id, client)
            assert result.outcome == Outcome.SKIPPED, (check_id, explain(result))
    finally:
        inner.close()


def test_the_recall_scope_names_owner_a(url):
    """(the twist above keeps the scope: only records owner-a may see are ranked)"""
    inner = HttpUmpClient(url, "1.0", timeout=10)
    try:
        reply = RanksEverything(inner).recall({"query": "x", "scope": {"owner": did(OWNER_A)}},
                                              auth=Auth.as_owner(OWNER_A))
        assert reply.ok, reply.describe()
    finally:
        inner.close()
