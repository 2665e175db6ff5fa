"""Idea 5: each fault of the reference implementation makes exactly the requirements it names
fail, and nothing else; the clean reference passes everything over every binding."""

from __future__ import annotations

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.suite import catalogue
from memconform.suite.outcomes import Keyword

from .helpers import failed_requirements, observing_checks, run_suite, warned_requirements

LIVE = ("http", "mcp")
UPP_LIVE = ("http", "stdio")
OMF_LIVE = ("cli", "http")


def test_clean_reference_passes_every_must_over_every_binding(reference_quick_run):
    # quick effort: the generated-input checks are proven at their default by their own tests
    # (test_effort.py, test_stateful_faults*.py); here every check runs, a little of each
    result, report = reference_quick_run, reference_quick_run.report
    assert report["totals"].get("failed", 0) == 0, failed_requirements(report)
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"]
                                                   if r["outcome"] == "error"]
    levels = {(row["spec"], row["version"], row["binding"]): row["level"] for row in report["levels"]}
    assert levels == {("ump", v, b): ("L0" if b == "file" else "L3") for v in ("0.1", "1.0")
                      for b in ("file", *LIVE)} | {("upp", "1.0.0", b): "L3" for b in UPP_LIVE} | {
        ("omf", "1.0", b): "L1" for b in OMF_LIVE} | {("oams", "0.1", b): "L3" for b in ("http", "jsonrpc", "stdio")} | {
        ("oams", "0.1", "file"): None} | {("memoturn", "2026.06", b): "L3" for b in ("http", "mcp")}, \
        [r["summary"] for r in report["levels"]]
    assert result.ret == 0


def _judged_bindings(name: str) -> tuple[str, ...]:
    # A server fault lives in the engine both live bindings share: it is judged over HTTP (the
    # clean run above proves the MCP and stdio wiring); binding-level faults over their own binding.
    bindings = FAULTS[name].bindings
    return ("http",) if bindings is None else bindings


def _observing_checks(fault) -> list[str]:
    # only the checks that can see the fault (helpers.observing_checks); the clean reference run
    # above is the control for every other check
    return [f"--check={c}" for c in observing_checks(fault) or ()]


#: Faults only a round trip between two targets shows are proven by tests/interop/ instead, and
#: those only a state machine shows by test_stateful_faults.py.
SINGLE_TARGET_FAULTS = sorted(name for name, fault in FAULTS.items() if not fault.interop_only and not fault.stateful
                              # OAMS's and memoturn's faults are proven binding by binding, the union
                              # of their breaks over the bindings, by tests/<spec>/test_checks_reference.py
                              and fault.spec not in ("oams", "memoturn"))


@pytest.mark.parametrize("name", SINGLE_TARGET_FAULTS)
def test_fault_is_caught_by_its_requirements_only(pytester, monkeypatch, name):
    # The OpenAPI fuzz judges only 5xx and error envelopes, which faults of their own prove; off
    # here, it would double the time of every fault run.
    monkeypatch.setenv("MEMCONFORM_FUZZ_EXAMPLES", "0")
    # The state machines are proven against faults of their own (test_stateful_faults.py); here
    # they would add their whole budget to every fault whose requirement they name.
    monkeypatch.setenv("MEMCONFORM_STATEFUL_EXAMPLES", "0")
    fault = FAULTS[name]
    args = [f"--target=reference?fault={name}", f"--spec={fault.spec}", "--timeout=3"] + [
        f"--binding={b}" for b in _judged_bindings(name)] + _observing_checks(fault)
    result, report = run_suite(pytester, *args)
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    cat = catalogue.load(fault.spec)
    musts = {r for r in fault.breaks if cat.get(r).keyword is Keyword.MUST}
    assert failed_requirements(report) == musts
    # A fault of a SHOULD shows as a warning (and the run stays green without --strict).
    assert set(fault.breaks) - musts <= warned_requirements(report)
    # a conformance class's MUSTs alone fail no run that does not require the class (--require-class)
    assert result.ret == (1 if {r for r in musts if cat.get(r).conformance_class is None} else 0)


def test_a_refusal_whose_code_cannot_be_read_is_charged_to_the_error_form_alone(pytester, monkeypatch):
    # A blind red team's bug (fault mcp-forbidden-scope-codeless): forbidden_scope comes back as a tool
    # error saying only "Error: access denied". The checks that expected that code charged the token,
    # forget and signing rules; they stop without a verdict now, and ump/mcp-errors is charged.
    monkeypatch.setenv("MEMCONFORM_FUZZ_EXAMPLES", "0")
    monkeypatch.setenv("MEMCONFORM_STATEFUL_EXAMPLES", "0")
    stopping = ("ump/l3/cap-token-verbs", "ump/l2/forget-hard-owner-only", "ump/l1/vectors")
    result, report = run_suite(pytester, "--target=reference?fault=mcp-forbidden-scope-codeless", "--spec=ump",
                               "--binding=mcp", "--check=ump/l1/mcp-errors", *(f"--check={c}" for c in stopping))
    assert report["totals"].get("error", 0) == 0
    assert failed_requirements(report) == {"ump/mcp-errors"}
    stopped = {r["check"] for r in report["results"]
               if r["outcome"] == "skipped" and "no §3.7 code that can be read" in (r["reason"] or "")}
    assert stopped == set(stopping), stopped


def test_a_batch_stopping_at_its_first_error_is_warned_on_the_batch_rule_not_failed_on_the_id_rule(
        pytester, monkeypatch):
    # A blind red team's bug (round 11, fault upp-batch-stops-on-error): the request beside a bad id in a
    # batch went unanswered, and upp/jsonrpc-id-unreadable (a MUST) was charged for it. The bad id itself
    # got its -32600 with id null: that check passes, noting the neighbour; upp/jsonrpc-batch warns.
    monkeypatch.setenv("MEMCONFORM_STATEFUL_EXAMPLES", "0")
    result, report = run_suite(pytester, "--target=reference?fault=upp-batch-stops-on-error", "--spec=upp",
                               "--binding=http", "--check=upp/attacks/id-unreadable", "--check=upp/wire/batch")
    assert report["totals"].get("error", 0) == 0
    assert failed_requirements(report) == set()
    assert warned_requirements(report) == {"upp/jsonrpc-batch"}
    [ids] = [r for r in report["results"] if r["check"] == "upp/attacks/id-unreadable"]
    assert ids["outcome"] == "passed", ids
    assert result.ret == 0
