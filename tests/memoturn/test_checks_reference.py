"""The memoturn checks against the reference (REST in a thread, MCP in process): the clean reference
passes every check over http and mcp; each fault fails exactly its `breaks` (the union over the
bindings it shows on, no other requirement on any of them) with no error; each variant passes.

A fault runs the checks that can see it — those naming a requirement it breaks (a check can only
report the requirements it names) — and the clean run is the control for every other check;
MEMCONFORM_FULL_FAULT_RUNS=1 runs every check against every fault (tests/harness/helpers.observing_checks)."""

from __future__ import annotations

import pytest

from memconform.reference_impl.memoturn.faults import MEMOTURN_FAULTS
from memconform.reference_impl.memoturn.variants import MEMOTURN_VARIANTS
from memconform.suite import catalogue as catalogues
from memconform.suite.outcomes import Keyword, Outcome

from harness.helpers import observing_checks  # the checks that can see a fault, as for the other specs

from .helpers import LIVE, failed_requirements, memoturn_checks, outcomes

SCRIPTED = [f for f in MEMOTURN_FAULTS if not f.stateful]
SEQUENCE = [f for f in MEMOTURN_FAULTS if f.stateful]


def _problems(results: dict, binding: str, warned: frozenset[str] = frozenset()) -> list[str]:
    """What is not a clean pass: a check must judge every requirement it names (a state machine must
    reach them), but those that bind another binding (the HTTP error envelope, over mcp). `warned`:
    SHOULDs a variant's reading is allowed to warn on (its other form, e.g. RFC 3339 times)."""
    cat = catalogues.load("memoturn")

    def allowed(r) -> bool:
        return (r.outcome is Outcome.WARNING and bool(r.findings)
                and all(f.requirement in warned and cat.get(f.requirement).keyword is Keyword.SHOULD
                        for f in r.findings))

    return [f"{k}: {r.outcome.value} {r.reason or ''} {[f.message[:300] for f in r.findings]}"
            for k, r in results.items() if r.outcome is not Outcome.PASSED and not allowed(r)] + \
        [f"{k}: passed but did not judge {r.extra['not_judged']}" for k, r in results.items()
         if [rid for rid in r.extra.get("not_judged") or () if cat.get(rid).applies_to_binding(binding)]]


@pytest.mark.parametrize("binding", LIVE)
def test_clean_reference_passes_every_check(binding):
    results = outcomes(binding)
    assert len(results) >= 30, binding
    assert not _problems(results, binding)
    if binding == "mcp":  # the HTTP error envelope is not seen over mcp: not judged, never passed
        from memconform.suite.memoturn.checks.core import ERRORS

        for check_id in ("memoturn/type-and-topic-key-validity", "memoturn/batch-atomic"):
            assert results[check_id].extra["not_judged"] == list(ERRORS), check_id




@pytest.mark.parametrize("fault", SCRIPTED, ids=lambda f: f.name)
def test_each_fault_fails_exactly_its_breaks(fault):
    seen: set[str] = set()
    cat = catalogues.load("memoturn")
    for binding in fault.bindings or LIVE:
        results = outcomes(binding, fault=fault.name, only=observing_checks(fault))
        errors = [f"{k}: {r.reason}" for k, r in results.items() if r.outcome is Outcome.ERROR]
        assert not errors, (binding, errors)
        got = {r for r in failed_requirements(results) if cat.get(r).keyword is not Keyword.MAY}
        assert got, f"{fault.name} shows nothing on {binding}"
        assert got <= set(fault.breaks), (binding, sorted(got - set(fault.breaks)))
        seen |= got
    assert seen == set(fault.breaks)


@pytest.mark.parametrize("variant", MEMOTURN_VARIANTS, ids=lambda v: v.name)
def test_each_variant_passes(variant):
    for binding in variant.bindings or LIVE:
        results = outcomes(binding, variants=(variant.name,))
        assert not _problems(results, binding, frozenset(variant.readings)), binding


def test_every_testable_requirement_has_a_check_and_every_must_a_fault():
    cat = catalogues.load("memoturn")
    named = {r for c in memoturn_checks() for r in c.requirements}
    for rid in named:
        cat.get(rid)  # an unknown id raises
    testable = {r.id for r in cat.requirements if r.testable}
    assert testable <= named, sorted(testable - named)
    assert not {r.id for r in cat.requirements if not r.testable} & named
    broken = {b for f in MEMOTURN_FAULTS for b in f.breaks}
    musts = {r.id for r in cat.requirements if r.testable and r.keyword is Keyword.MUST}
    assert musts <= broken, sorted(musts - broken)
    assert len({f.name for f in MEMOTURN_FAULTS}) == len(MEMOTURN_FAULTS)
    for f in MEMOTURN_FAULTS:
        for b in f.breaks:
            cat.get(b)
    for v in MEMOTURN_VARIANTS:
        for r in v.readings:
            cat.get(r)


def test_every_check_runs_on_a_binding_its_requirements_apply_to():
    cat = catalogues.load("memoturn")
    for c in memoturn_checks():
        for b in c.bindings:
            assert any(cat.get(r).bindings is None or b in cat.get(r).bindings for r in c.requirements), (c.id, b)


def test_catalogue_shape():
    import tomllib
    from importlib import resources

    data = tomllib.loads(resources.files("memconform.suite.memoturn").joinpath("catalogue.toml").read_text("utf-8"))
    assert data["spec"] == "memoturn" and data["versions"] == ["2026.06"]
    assert data["level_names"] == {"L1": "Core", "L2": "Recall", "L3": "Lifecycle"}
    cat = catalogues.parse_catalogue(data, "memoturn")
    assert all(r.id.startswith("memoturn/") for r in cat.requirements)
    assert {b for r in cat.requirements for b in (r.bindings or ())} <= {"http", "mcp"}
    # the page has no RFC 2119 keyword: every MUST is derived, and says so
    assert all(r.derived for r in cat.requirements if r.keyword is Keyword.MUST)


@pytest.mark.parametrize("fault", SEQUENCE, ids=lambda f: f.name)
def test_the_state_machine_catches_sequence_faults(fault):
    """Faults only a longer sequence shows: the scripted checks pass them, the machine names them
    (its budget lifted to a count, so what this proves does not depend on the machine's speed)."""
    scripted = outcomes("http", fault=fault.name, machine=False)
    assert not failed_requirements(scripted), sorted(failed_requirements(scripted))
    budget = {"MEMCONFORM_STATEFUL_EXAMPLES": "20", "MEMCONFORM_STATEFUL_STEPS": "20", "MEMCONFORM_STATEFUL_SECONDS": "60",
              "MEMCONFORM_STATEFUL_SHRINK_SECONDS": "0.5"}
    results = outcomes("http", fault=fault.name, machine=budget, only=("memoturn/stateful/ingest",))
    result = results["memoturn/stateful/ingest"]
    assert result.outcome is Outcome.FAILED, result.reason
    assert {f.requirement for f in result.findings} <= set(fault.breaks)
    assert "The shortest sequence found" in result.findings[0].message


def test_what_a_failure_kept_from_view_is_not_judged():
    """A check ended by one requirement's failure credits none it did not reach: a target that takes
    a batch with an invalid memory fails type-enum, and batch-atomic (whether a refused batch stores
    nothing) and the error envelope of a refusal that never came are not judged, not passed; a target
    that refuses the first ingest into a new profile shows no status, id or txid."""
    taken = outcomes("http", fault="memoturn-type-unchecked", only=("memoturn/batch-atomic",))["memoturn/batch-atomic"]
    assert {f.requirement for f in taken.findings} == {"memoturn/type-enum"}
    assert taken.extra["not_judged"] == ["memoturn/batch-atomic", "memoturn/error-envelope", "memoturn/error-codes",
                                         "memoturn/no-server-error"], taken.extra
    refused = outcomes("http", fault="memoturn-profile-not-created",
                       only=("memoturn/ingest-statuses",))["memoturn/ingest-statuses"]
    assert {f.requirement for f in refused.findings} == {"memoturn/profile-auto-create"}
    assert set(refused.extra["not_judged"]) == {
        "memoturn/ingest-status-per-memory", "memoturn/created-otherwise", "memoturn/duplicate-no-write",
        "memoturn/batch-one-txid", "memoturn/id-content-addressed"}, refused.extra


@pytest.mark.parametrize("binding,fault", [("http", "memoturn-error-envelope-nested"), ("mcp", "memoturn-mcp-get-errors"),
                                           ("http", "memoturn-get-hides-superseded"),
                                           ("mcp", "memoturn-get-hides-superseded")])
def test_forget_is_judged_on_a_record_answered_not_on_the_shape_of_a_miss(binding, fault):
    """A blind red team (round 15): a GET after forget that answers a nested 404 envelope or a tool
    error is "gone"; with GET hiding superseded rows, the forget check still forgets both rows of its
    chain, so forget-hard is never charged with what error-envelope, mcp-get-not-found or history-kept
    owns."""
    results = outcomes(binding, fault=fault, machine=True,
                       only=("memoturn/forget", "memoturn/stateful/ingest"))
    assert "memoturn/forget-hard" not in failed_requirements(results), [
        f.message for r in results.values() for f in r.findings if f.requirement == "memoturn/forget-hard"]


def test_an_mcp_recall_without_session_id_waives_the_session_filter():
    """mcp.md's memory_recall lists no session_id: a server whose tool takes none is not judged on the
    filter (waived: skipped, never a pass); the reference's tool takes one and is judged (above)."""
    from unittest import mock

    from memconform.targets.memoturn import MemoturnMcpClient

    with mock.patch.object(MemoturnMcpClient, "tool_parameters", lambda self, op: {"namespace", "profile", "query"}):
        (result,) = outcomes("mcp", only=("memoturn/recall-session-filter",)).values()
    assert result.outcome is Outcome.SKIPPED and result.extra.get("waived"), result
