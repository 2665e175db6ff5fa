"""Model-based state machines (issue 16): the run-time every spec's machine shares.

A spec's machine is a Hypothesis `RuleBasedStateMachine` over the spec's client protocol (so it
runs over every binding a target offers): its rules are the spec's operations with generated
arguments, its model is what the spec says the state must be, and its invariants compare what the
target shows with the model after every step. This module runs one such machine inside a check:

- effort: sequences, steps and seconds from `suite/effort.py` (`--effort`, the environment);
- seed: the run's `--seed`, so a replay draws the same sequences (`memconform replay`);
- a discrepancy (`Broken`) names the requirement it breaks; Hypothesis shrinks the sequence, and
  the finding prints the minimal one as numbered steps (what was sent, what came back);
- the target failing to answer (`TargetError`) ends the machine at once, without shrinking
  against a dead server: the check is then a target error, as the circuit breaker reads it.

A machine subclasses `SpecMachine`, calls its client through `self.call(...)` (which logs the
step) and raises through `self.broken(...)`.

A machine is one check naming many requirements, and a sequence reaches only some of them: a
target that answers `unsupported` to an operation, or draws that never build the state a
requirement is about, leave it unobserved. So a machine says what it judged (`self.judged(...)`,
where it compares something the target showed with the model); the check is credited with those
requirements alone, and the report lists the others as not judged (absence is never evidence).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from memconform.suite import effort
from memconform.suite.generation import quiet_hypothesis
from memconform.suite.outcomes import NotApplicable, TargetError

#: A logged step quotes at most this much of what was sent or came back
_QUOTE = 300
#: Extra time for shrinking a failure, as a share of the machine's budget: a shorter sequence is
#: worth waiting for, an endless shrink is not
_SHRINK_SHARE = 1.0


class Broken(Exception):
    """What the target showed differs from what the spec says the state must be."""

    def __init__(self, requirement: str, message: str, *, sent: Any = None, received: Any = None):
        super().__init__(f"{requirement}: {message}")
        self.requirement = requirement
        self.message = message
        self.sent = sent
        self.received = received


class _Stop(BaseException):
    """The budget is spent: a BaseException, so Hypothesis stops at once. (Rejecting the sequence
    instead would tell Hypothesis that a prefix it saw drawing now draws nothing: a flaky
    strategy.)"""


class _Gone(BaseException):
    """The target stopped answering: a BaseException, so Hypothesis neither catches nor shrinks it."""

    def __init__(self, error: TargetError):
        super().__init__(str(error))
        self.error = error


def asks(spec: str, requirement: str, *, quote_limit: int = 160) -> str:
    """How a machine's finding cites the requirement it breaks, the same way a single check's
    report does (Requirement.cite, the plugin's "how memconform reads it"): its section, keyword,
    `derived` where the text gives no keyword for this detail, and level; then what the spec asks
    and, for a derived one, memconform's reading, since the reading is what the target failed."""
    from memconform.suite import catalogue as catalogues

    req = catalogues.load(spec).get(requirement)
    text = req.quote if len(req.quote) <= quote_limit else req.quote[:quote_limit - 1] + "…"
    out = f"{req.cite()}: {req.summary} The spec: “{text}”"
    if req.derived and req.note:
        out += f" How memconform reads it (derived): {req.note}"
    return out


def quote(value: Any, limit: int = _QUOTE) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class _Run:
    """What the runner and the machines of one check share."""

    started: float
    deadline: float
    shrink_deadline: float | None = None
    #: how long shortening a failure may take: the effort's shrink figure, at most the machine's
    #: budget (a budget raised through the environment, as the project's tests do so that what is
    #: found does not depend on the machine's speed, does not lengthen the shortening)
    shrink_seconds: float = 0.0
    sequences: int = 0
    steps: int = 0
    first_failure: tuple[Broken, list[str]] | None = None
    #: the sequence (counted from 1) that first failed, before any shrinking: how much of the
    #: effort finding it took
    found_in: int | None = None
    shortest: tuple[Broken, list[str]] | None = None
    stopped: bool = False
    last: "SpecMachine | None" = None
    #: the requirements some sequence compared against the model (a discrepancy counts)
    judged: set[str] = field(default_factory=set)
    #: why some were not: what the machine learnt of the target (an operation it does not offer)
    notes: dict[str, None] = field(default_factory=dict)


class SpecMachine:
    """Mixin for a spec's RuleBasedStateMachine (put it first in the bases).

    `ctx` (the CheckContext) and `client` are set on the bound subclass `run_machine` makes. Each
    sequence starts from a fresh instance; `steps` is its log."""

    ctx: Any = None
    client: Any = None
    _run: _Run | None = None

    def __init__(self) -> None:
        super().__init__()
        self.steps: list[str] = []
        run = type(self)._run
        if run is not None:
            run.last = self
            run.sequences += 1
            self._out_of_time(run)

    @staticmethod
    def _out_of_time(run: _Run) -> None:
        now = time.monotonic()
        if run.first_failure is None:
            if now > run.deadline:
                run.stopped = True
                raise _Stop()  # the budget is spent: no new sequence
        elif run.shrink_deadline is not None and now > run.shrink_deadline:
            run.stopped = True
            raise _Stop()  # shrinking is over: the shortest failing sequence seen is reported

    def log(self, line: str) -> None:
        self.steps.append(line)
        run = type(self)._run
        if run is not None:
            run.steps += 1

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the target, logging the step; a target error ends the whole machine, and so does
        the budget (checked before each call: one long sequence must not overrun it)."""
        run = type(self)._run
        if run is not None:
            self._out_of_time(run)
        try:
            result = fn(*args, **kwargs)
        except TargetError as exc:
            self.log(f"{what} → the target failed: {exc}")
            raise _Gone(exc) from None
        self.log(f"{what} → {quote(getattr(result, 'describe', lambda: result)())}")
        return result

    def judged(self, *requirements: str) -> None:
        """Credit `requirements`: the step compared what the target showed with the model, so a
        target that broke them would have been caught here."""
        run = type(self)._run
        if run is not None:
            run.judged.update(requirements)

    def note(self, text: str) -> None:
        """Why part of the machine did not run (an operation the target does not offer), for the
        report beside the requirements not judged."""
        run = type(self)._run
        if run is not None:
            run.notes.setdefault(text)

    def gone(self, message: str) -> NoReturn:
        """The target answered, but as a server that failed (a 5xx, an `internal` error): end the
        machine as a target error, as `call` does for no answer."""
        self.log(f"→ the target failed: {message}")
        raise _Gone(TargetError(message))

    def broken(self, requirement: str, message: str, *, sent: Any = None, received: Any = None) -> NoReturn:
        """Raise the discrepancy. The first one of a check is kept with its steps, so it is still
        reported should the replay of the shrunk sequence not fail again (a flaky target)."""
        exc = Broken(requirement, message, sent=sent, received=received)
        run = type(self)._run
        if run is not None:
            run.judged.add(requirement)
            if run.first_failure is None:
                run.first_failure = (exc, list(self.steps))
                run.found_in = run.sequences
                run.shrink_deadline = time.monotonic() + run.shrink_seconds * _SHRINK_SHARE
            if run.shortest is None or len(self.steps) < len(run.shortest[1]):
                run.shortest = (exc, list(self.steps))
        raise exc

    def script(self) -> str:
        return "\n".join(f"  {i}. {line}" for i, line in enumerate(self.steps, 1)) or "  (no step)"


def run_machine(ctx: Any, machine: type, *, name: str | None = None, **attributes: Any) -> dict[str, Any]:
    """Run `machine` (a SpecMachine + RuleBasedStateMachine subclass) against `ctx.client` within
    the effort's budget. A discrepancy becomes one finding on its requirement with the shrunk
    sequence; a target that stops answering raises TargetError. Returns what was run (sequences,
    steps, seconds) for the check's notes."""
    from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
    from hypothesis.errors import Flaky, HypothesisException
    from hypothesis.stateful import run_state_machine_as_test

    try:
        sequences, steps, seconds = effort.stateful_budget()
        shrink = effort.stateful_shrink_seconds()
    except ValueError as exc:
        raise NotApplicable(str(exc)) from None
    if sequences == 0 or steps == 0 or seconds == 0:
        raise NotApplicable(f"the state machines are switched off ({effort.ENV_STATEFUL_EXAMPLES}={sequences}, "
                            f"{effort.ENV_STATEFUL_STEPS}={steps}, {effort.ENV_STATEFUL_SECONDS}={seconds:g})")
    started = time.monotonic()
    run = _Run(started=started, deadline=started + seconds,
               shrink_seconds=min(seconds, shrink))  # 0: the first failing sequence as it was found
    bound = type(name or machine.__name__, (machine,), {"ctx": ctx, "client": ctx.client, "_run": run, **attributes})
    run_seed = ctx.property_seed()
    seed(run_seed)(bound)
    chosen = settings(max_examples=sequences, stateful_step_count=steps, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink],
                      report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)

    failure: Broken | None = None
    flaky = False
    try:
        with quiet_hypothesis():
            run_state_machine_as_test(bound, settings=chosen)
    except _Gone as gone:
        raise TargetError(f"the target stopped answering during the state machine: {gone.error}") from None
    except _Stop:
        pass
    except Broken as exc:
        failure = exc
    except Flaky:
        flaky = True
    except HypothesisException as exc:
        if type(exc).__name__ != "Unsatisfiable" or run.sequences == 0:
            raise NotApplicable(f"Hypothesis could not run the machine: {type(exc).__name__}: {exc}") from None
    except BaseExceptionGroup as group:
        gone = group.subgroup(_Gone)
        if gone is not None:
            first = next(iter(_leaves(gone)))
            raise TargetError(f"the target stopped answering during the state machine: {first.error}") from None
        flaky = group.subgroup(Broken) is not None
        if not flaky and group.subgroup(_Stop) is None:
            raise
    if run.stopped and run.first_failure is None and run.sequences <= sequences:
        # said, so a machine that judged little is not read as one that saw nothing to judge
        run.notes.setdefault(f"the machine stopped at its {seconds:g} s cap, having started {run.sequences} of "
                             f"{sequences} sequences ({run.steps} steps): the target answered too slowly for the "
                             f"rest (give it more with --effort thorough or {effort.ENV_STATEFUL_SECONDS})")
    summary = {"sequences": run.sequences, "steps": run.steps, "seconds": round(time.monotonic() - started, 2),
               "seed": run_seed}
    if run.found_in is not None:
        summary["found_in_sequence"] = run.found_in
    if run.notes:
        summary["notes"] = list(run.notes)
    ctx.effort = summary  # in the report beside the result: what this run of the machine tried
    ctx.judged = set(run.judged)
    for text in run.notes:
        ctx.note(text)
    if failure is not None:
        last = run.last
        script = last.script() if last is not None else "  (no step)"
        ctx.violation(failure.requirement,
                      f"{failure.message}\nThe shortest sequence found ({len(last.steps) if last else 0} steps; "
                      f"seed {run_seed}: `memconform replay REPORT {ctx.check.id}` runs it again):\n{script}",
                      sent=failure.sent, received=failure.received)
    elif run.stopped and run.shortest is not None:
        exc, steps_seen = run.shortest
        script = "\n".join(f"  {i}. {line}" for i, line in enumerate(steps_seen, 1))
        ctx.violation(exc.requirement,
                      f"{exc.message}\nThe shortest sequence found before the budget ran out ({len(steps_seen)} steps; "
                      f"seed {run_seed}: `memconform replay REPORT {ctx.check.id}` runs it again):\n{script}",
                      sent=exc.sent, received=exc.received)
    elif flaky and run.first_failure is not None:
        exc, steps_seen = run.first_failure
        script = "\n".join(f"  {i}. {line}" for i, line in enumerate(steps_seen, 1))
        ctx.violation(exc.requirement,
                      f"{exc.message}\n(seen once; the same sequence did not fail again, so it was not "
                      f"shortened; seed {run_seed})\n{script}", sent=exc.sent, received=exc.received)
    return summary


def _leaves(group: BaseException) -> Any:
    if isinstance(group, BaseExceptionGroup):
        for inner in group.exceptions:
            yield from _leaves(inner)
    else:
        yield group
