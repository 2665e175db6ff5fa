"""The circuit breaker of a run: one per target and binding (docs/live-ump.md, "Broken targets").

A target that is alive but broken (it answers discovery, then hangs) would make every later check
wait its timeout: hundreds of items times `--timeout`. So each (driver, binding) counts its
consecutive transport failures: check items that ended in a `TargetError` that is a failure to get
an answer at all (no answer in time, connection refused or closed, the process died, an answer
over the size bound). After `THRESHOLD` of them in a row the binding is declared dead, and every
later item on it is an error at once that names the first of them. An item that got a verdict
(passed, failed, warned, inconclusive) resets the count: the target answered.

What does not count either way: a skip, a crash of the check itself, and a target error whose
exception says `transport_failure = False` (an answer came, but not in the protocol:
`targets/answers.py`). Those come quickly, so they need no breaker, and one route answering
garbage must not take the server's other verdicts with it.

The state is a frozen value (`BreakerState`); the registry keys it by the driver object, so each
run (each pytest session, each xdist worker) has its own and the plugin needs no state of its own
for it. Nothing here resets a dead binding: a run does not come back to it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memconform.suite.outcomes import CheckResult, Outcome

THRESHOLD = 3
#: `CheckResult.extra` key the runner sets on a target error: whether it was a transport failure
TRANSPORT_FAILURE = "transport_failure"
_TARGET_ERROR = "target error: "
_VERDICTS = frozenset({Outcome.PASSED, Outcome.FAILED, Outcome.WARNING, Outcome.INFO})


@dataclass(frozen=True)
class BreakerState:
    """Consecutive transport failures of one binding, and the reason of the first of them."""

    failures: int = 0
    first: str | None = None

    @property
    def dead(self) -> bool:
        return self.failures >= THRESHOLD

    def after(self, result: CheckResult) -> BreakerState:
        if self.dead:
            return self
        if result.outcome in _VERDICTS:
            return BreakerState()
        if result.outcome is Outcome.ERROR and result.extra.get(TRANSPORT_FAILURE):
            reason = (result.reason or "").removeprefix(_TARGET_ERROR)
            return BreakerState(self.failures + 1, self.first if self.failures else reason)
        return self

    def reason(self) -> str:
        return (f"binding declared dead after {self.failures} consecutive transport failures; "
                f"first: {self.first}")


_lock = threading.Lock()
_states: weakref.WeakKeyDictionary[Any, dict[str, BreakerState]] = weakref.WeakKeyDictionary()


def state(driver: Any, binding: str) -> BreakerState:
    with _lock:
        return _states.get(driver, {}).get(binding, BreakerState())


def _record(driver: Any, binding: str, result: CheckResult) -> None:
    with _lock:
        per_driver = _states.setdefault(driver, {})
        per_driver[binding] = per_driver.get(binding, BreakerState()).after(result)


def dead_reason(driver: Any, binding: str) -> str | None:
    """Why the binding is dead, or None while it is alive."""
    current = state(driver, binding)
    return current.reason() if current.dead else None


def guarded(driver: Any, binding: str, run: Callable[[], CheckResult]) -> CheckResult:
    """`run()`'s result, counted; on a dead binding an error at once, without running."""
    reason = dead_reason(driver, binding)
    if reason is not None:
        return CheckResult(Outcome.ERROR, reason=_TARGET_ERROR + reason)
    result = run()
    _record(driver, binding, result)
    return result


__all__ = ["THRESHOLD", "TRANSPORT_FAILURE", "BreakerState", "dead_reason", "guarded", "state"]
