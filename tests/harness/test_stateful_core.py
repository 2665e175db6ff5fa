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


def test_switched_off_is_not_applicable(monkeypatch):
    monkeypatch.setenv(effort.ENV_STATEFUL_EXAMPLES, "0")
    with pytest.raises(NotApplicable, match="switched off"):
        run_machine(_ctx(Counter()), CounterMachine)
