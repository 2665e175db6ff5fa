"""Issue 16: the shared run-time of the state machines (suite/stateful.py), on a miniature: a
counter whose model is an int, against a client that is right, one that drifts after a few
increments, one that dies, and one whose failure does not repeat."""

from __future__ import annotations

import pytest
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memconform.suite import effort
from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.suite.registry import Check
from memconform.suite.runner import CheckContext
from memconform.suite.stateful import SpecMachine, run_machine

CHECK = Check(id="mini/stateful/counter", spec="ump", title="counter", requirements=("ump/error-codes",),
              bindings=("http",), func=lambda ctx: None)


class Counter:
    def __init__(self, drift_after: int | None = None, die_after: int | None = None, once: bool = False):
        self.value = 0
        self.adds = 0
        self.drift_after, self.die_after, self.once = drift_after, die_after, once
        self.drifted = False

    def add(self, n: int) -> int:
        self.adds += 1
        if self.die_after is not None and self.adds > self.die_after:
            raise TargetError("connection refused")
        self.value += n
        if self.drift_after is not None and self.adds > self.drift_after and not (self.once and self.drifted):
            self.drifted = True
            self.value += 1
        return self.value

    def reset(self) -> None:  # a fresh store per sequence; a one-off drift stays spent
        self.value = 0
        if self.die_after is None:
            self.adds = 0


class CounterMachine(SpecMachine, RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.client.reset()
        self.model = 0

    @rule(n=__import__("hypothesis").strategies.integers(0, 3))
    def add(self, n: int) -> None:
        self.call(f"add({n})", self.client.add, n)
        self.model += n

    @invariant()
    def agrees(self) -> None:
        self.judged("ump/error-codes")
        if self.client.value != self.model:
            self.broken("ump/error-codes", f"the counter shows {self.client.value}, the model {self.model}")


def _ctx(client) -> CheckContext:
    return CheckContext(check=CHECK, version="1.0", binding="http", client=client, seed=0)


@pytest.fixture(autouse=True)
def _budget(monkeypatch):
    for name in (effort.ENV_STATEFUL_EXAMPLES, effort.ENV_STATEFUL_STEPS, effort.ENV_STATEFUL_SECONDS):
        monkeypatch.delenv(name, raising=False)
    effort.use("default")


def test_a_right_target_passes_every_sequence():
    ctx = _ctx(Counter())
    summary = run_machine(ctx, CounterMachine)
    assert ctx.findings == []
    assert summary["sequences"] >= effort.EFFORTS["default"].stateful_examples
    assert summary["steps"] > 0 and ctx.seed_used
    assert ctx.effort == summary  # what the run tried goes into the report beside the result


def test_a_drift_is_found_shrunk_and_named():
    ctx = _ctx(Counter(drift_after=3))
    run_machine(ctx, CounterMachine)
    (finding,) = ctx.findings
    assert finding.requirement == "ump/error-codes"
    # the shortest sequence that drifts: four adds, whatever numbers
    assert "(4 steps; seed 0" in finding.message, finding.message
    assert finding.message.count("add(") == 4


def test_a_dead_target_is_a_target_error_not_a_shrunk_finding():
    client = Counter(die_after=5)
    with pytest.raises(TargetError, match="stopped answering.*connection refused"):
        run_machine(_ctx(client), CounterMachine)
    assert client.adds == 6  # no call after the first refusal


def test_a_failure_that_does_not_repeat_is_still_reported():
    ctx = _ctx(Counter(drift_after=2, once=True))
    run_machine(ctx, CounterMachine)
    (finding,) = ctx.findings
    assert "did not fail again" in finding.message


class SlowCounter(Counter):
    def add(self, n: int) -> int:
        __import__("time").sleep(0.02)
        return super().add(n)


def test_a_machine_cut_by_its_time_cap_says_so(monkeypatch):
    monkeypatch.setenv(effort.ENV_STATEFUL_SECONDS, "0.1")
    ctx = _ctx(SlowCounter())
    summary = run_machine(ctx, CounterMachine)
    assert ctx.findings == [] and summary["sequences"] < effort.EFFORTS["default"].stateful_examples
    (note,) = [n for n in ctx.notes if "cap" in n]
    assert note.startswith("the machine stopped at its 0.1 s cap, having started") and "too slowly" in note
    assert summary["notes"] == [note]


def test_a_machine_that_runs_every_sequence_notes_no_cap():
    ctx = _ctx(Counter())
    run_machine(ctx, CounterMachine)
    assert not any("cap" in n for n in ctx.notes)


def test_switched_off_is_not_applicable(monkeypatch):
    monkeypatch.setenv(effort.ENV_STATEFUL_EXAMPLES, "0")
    with pytest.raises(NotApplicable, match="switched off"):
        run_machine(_ctx(Counter()), CounterMachine)


# -- what a machine is credited with ----------------------------------------------------------

class HalfMachine(CounterMachine):
    """Names two requirements, observes one; told the other operation is not offered."""

    def __init__(self) -> None:
        super().__init__()
        self.note("reset answered unsupported: not judged here")


def _two(func) -> Check:
    return Check(id="mini/stateful/two", spec="ump", title="two", requirements=("ump/error-codes", "ump/id-unique"),
                 bindings=("http",), func=func)


def _as_reported(check: Check, result) -> dict:
    """The result as the report writes it (suite/plugin.py), for the report's own functions."""
    return {"node_id": "n", "requirements": list(check.requirements), "outcome": result.outcome.value,
            "findings": [f.to_json() for f in result.findings], "reason": result.reason,
            **({"not_judged": result.extra["not_judged"]} if result.extra.get("not_judged") else {})}


def test_a_machine_is_credited_only_with_what_it_judged():
    from memconform.reports.model import requirement_outcomes
    from memconform.suite.outcomes import Outcome
    from memconform.suite.runner import run_check

    check = _two(lambda ctx: run_machine(ctx, HalfMachine))
    result = run_check(check, "1.0", "http", Counter, None)
    assert result.outcome is Outcome.PASSED
    assert result.extra["not_judged"] == ["ump/id-unique"]
    assert "judged 1 of its 2 requirements; not judged: ump/id-unique (reset answered unsupported" in result.reason
    assert result.extra["effort"]["notes"] == ["reset answered unsupported: not judged here"]
    # the report credits the observed requirement alone: the other is neither passed nor failed
    assert set(requirement_outcomes([_as_reported(check, result)])) == {"ump/error-codes"}


def test_a_finding_counts_as_judged():
    from memconform.suite.runner import run_check

    class Drifting(HalfMachine):
        @invariant()
        def agrees(self) -> None:  # compares without saying so: the finding itself is the observation
            if self.client.value != self.model:
                self.broken("ump/error-codes", "the counter drifted")

    check = _two(lambda ctx: run_machine(ctx, Drifting))
    result = run_check(check, "1.0", "http", lambda: Counter(drift_after=3), None)
    assert result.outcome.value == "failed"
    assert result.extra["not_judged"] == ["ump/id-unique"]


def test_a_machine_that_judged_nothing_is_skipped_not_passed():
    from memconform.reports.model import requirement_outcomes
    from memconform.suite.outcomes import Outcome
    from memconform.suite.runner import run_check

    class Blind(HalfMachine):
        @invariant()
        def agrees(self) -> None:
            pass

    check = _two(lambda ctx: run_machine(ctx, Blind))
    result = run_check(check, "1.0", "http", Counter, None)
    assert result.outcome is Outcome.SKIPPED
    assert result.reason.startswith("judged none of its requirements: reset answered unsupported")
    assert requirement_outcomes([_as_reported(check, result)]) == {}


def test_a_scripted_check_may_opt_in_to_credit_only_what_it_observed():
    from memconform.suite.outcomes import Outcome
    from memconform.suite.runner import run_check

    def shape(ctx):
        ctx.credit_only_observed()
        ctx.observed("ump/error-codes")  # the subject held nothing ump/id-unique is about

    result = run_check(_two(shape), "1.0", "http", Counter, None)
    assert result.outcome is Outcome.PASSED and result.extra["not_judged"] == ["ump/id-unique"]

    def forgetful(ctx):
        ctx.observed("ump/error-codes")

    crashed = run_check(_two(forgetful), "1.0", "http", Counter, None)
    assert crashed.outcome is Outcome.ERROR and "without credit_only_observed" in crashed.reason


def test_a_check_that_stops_after_a_finding_keeps_it_and_credits_nothing_else():
    from memconform.suite.outcomes import Outcome
    from memconform.suite.runner import run_check

    def stops(ctx):
        ctx.violation("ump/error-codes", "answered 200 to garbage")
        raise NotApplicable("the second step needs an operation the target does not offer")

    result = run_check(_two(stops), "1.0", "http", Counter, None)
    assert result.outcome is Outcome.FAILED and [f.requirement for f in result.findings] == ["ump/error-codes"]
    assert result.extra["not_judged"] == ["ump/id-unique"]
    assert "stopped early: the second step needs" in result.reason


def test_a_machine_cites_a_derived_requirement_as_a_single_check_does():
    """A machine's finding names section, keyword, `derived` and level (Requirement.cite) and, for
    a derived requirement, memconform's reading: the same as a single check's report."""
    from memconform.suite import catalogue as catalogues
    from memconform.suite.stateful import asks

    req = catalogues.load("ump").get("ump/forget-retained")
    text = asks("ump", "ump/forget-retained")
    assert text.startswith("ump/forget-retained (§3.6, SHOULD, derived, L2): ")
    assert f"How memconform reads it (derived): {req.note}" in text
    plain = asks("ump", "ump/record-required-fields")
    assert "derived" not in plain.split(":")[0] and "How memconform reads it" not in plain
