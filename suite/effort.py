"""How hard the generated-input checks try (issue 15): `--effort quick|default|thorough`.

The OpenAPI fuzz (ump/l1/openapi-fuzz): examples per operation and the wall-clock budget of the
whole fuzz. The state machines (issue 16, `<spec>/stateful/*`): sequences (Hypothesis examples) per
machine, steps per sequence, and the wall-clock cap of one machine. `default` is what a run does unless told otherwise and what a badge is
earned with; `quick` is a smoke run (a vendor's pre-commit hook); `thorough` a nightly one. The
environment (MEMCONFORM_FUZZ_EXAMPLES, MEMCONFORM_FUZZ_SECONDS, MEMCONFORM_STATEFUL_EXAMPLES, _STEPS, _SECONDS
and _SHRINK_SECONDS) still overrides each figure, and
the report records what applied, so a replay tries as hard as the run it replays.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_EXAMPLES = "MEMCONFORM_FUZZ_EXAMPLES"
ENV_SECONDS = "MEMCONFORM_FUZZ_SECONDS"
ENV_STATEFUL_EXAMPLES = "MEMCONFORM_STATEFUL_EXAMPLES"
ENV_STATEFUL_STEPS = "MEMCONFORM_STATEFUL_STEPS"
ENV_STATEFUL_SECONDS = "MEMCONFORM_STATEFUL_SECONDS"
ENV_STATEFUL_SHRINK_SECONDS = "MEMCONFORM_STATEFUL_SHRINK_SECONDS"


@dataclass(frozen=True)
class Effort:
    name: str
    fuzz_examples: int     # examples per operation, half positive and half negative
    fuzz_seconds: float    # what the whole fuzz may take; what is left then is not sent
    stateful_examples: int = 0   # sequences of operations per state machine
    stateful_steps: int = 0      # operations per sequence at most
    stateful_seconds: float = 0  # what one state machine may take; no new sequence starts after it
    #: how long shortening a failure may take at most (it changes what a finding prints, never whether
    #: there is one): kept apart from the cap, which only guards a slow target
    stateful_shrink_seconds: float = 0

    def describe(self) -> str:
        return (f"{self.name} — OpenAPI fuzz {self.fuzz_examples} examples per operation and as many stateful "
                f"scenarios, at most {self.fuzz_seconds:g} s; state machines {self.stateful_examples} sequences "
                f"of up to {self.stateful_steps} steps, at most {self.stateful_seconds:g} s each")


EFFORTS = {
    "quick": Effort("quick", 6, 5.0, 3, 10, 1.0, 1.0),
    # 12 sequences: every stateful fault of the reference is first seen by sequence 10 at seed 0,
    # most by the fifth (the effort notes' found_in_sequence; tests/harness/test_stateful_faults*.py
    # prove each at these counts); the counts
    # govern (a run draws the same whatever the machine's speed) and the 10 s cap only guards a
    # slow target, whose report then says how many sequences ran
    "default": Effort("default", 12, 8.0, 12, 20, 10.0, 2.5),
    "thorough": Effort("thorough", 200, 120.0, 300, 50, 120.0, 120.0),
}

_current = EFFORTS["default"]


def use(name: str) -> Effort:
    global _current
    _current = EFFORTS[name]
    return _current


def current() -> Effort:
    return _current


def fuzz_budget() -> tuple[int, float]:
    """(examples per operation, wall-clock budget in seconds): the run's effort, each figure
    overridden by the environment when set there. Raises ValueError for a value that is no count."""
    chosen = current()
    examples, seconds = _figures(((ENV_EXAMPLES, chosen.fuzz_examples, int), (ENV_SECONDS, chosen.fuzz_seconds, float)))
    return int(examples), float(seconds)


def stateful_budget() -> tuple[int, int, float]:
    """(sequences per machine, steps per sequence, seconds per machine), as `fuzz_budget`: the
    effort's figures, each overridden by the environment when set there; 0 sequences switches the
    state machines off. Raises ValueError for a value that is no count."""
    chosen = current()
    examples, steps, seconds = _figures(((ENV_STATEFUL_EXAMPLES, chosen.stateful_examples, int),
                                         (ENV_STATEFUL_STEPS, chosen.stateful_steps, int),
                                         (ENV_STATEFUL_SECONDS, chosen.stateful_seconds, float)))
    return int(examples), int(steps), float(seconds)


def stateful_shrink_seconds() -> float:
    """How long shortening a machine's failure may take: the effort's figure, overridden by the
    environment when set there. It changes how short the printed sequence is, never whether there
    is a finding. Raises ValueError for a value that is no number."""
    (seconds,) = _figures(((ENV_STATEFUL_SHRINK_SECONDS, current().stateful_shrink_seconds, float),))
    return float(seconds)


def _figures(wanted: tuple[tuple[str, float, type], ...]) -> list[float]:
    out: list[float] = []
    for name, default, kind in wanted:
        raw = os.environ.get(name, "").strip()
        if not raw:
            out.append(default)
            continue
        try:
            value = kind(raw)
        except ValueError:
            raise ValueError(f"{name}={raw!r}: expected a {'whole ' if kind is int else ''}number") from None
        if value < 0:
            raise ValueError(f"{name}={raw!r}: expected a number ≥ 0")
        out.append(value)
    return out
