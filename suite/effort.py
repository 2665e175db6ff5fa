"""How hard the generated-input checks try (issue 15): `--effort quick|default|thorough`.

Today that is the OpenAPI fuzz (ump/l1/openapi-fuzz): examples per operation and the wall-clock
budget of the whole fuzz. `default` is what a run does unless told otherwise and what a badge is
earned with; `quick` is a smoke run (a vendor's pre-commit hook); `thorough` a nightly one. The
environment (MEMCONFORM_FUZZ_EXAMPLES, MEMCONFORM_FUZZ_SECONDS) still overrides either figure, and
the report records what applied, so a replay tries as hard as the run it replays.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_EXAMPLES = "MEMCONFORM_FUZZ_EXAMPLES"
ENV_SECONDS = "MEMCONFORM_FUZZ_SECONDS"


@dataclass(frozen=True)
class Effort:
    name: str
    fuzz_examples: int     # examples per operation, half positive and half negative
    fuzz_seconds: float    # what the whole fuzz may take; what is left then is not sent

    def describe(self) -> str:
        return (f"{self.name} — OpenAPI fuzz {self.fuzz_examples} examples per operation and as many stateful "
                f"scenarios, at most {self.fuzz_seconds:g} s")


EFFORTS = {
    "quick": Effort("quick", 6, 5.0),
    "default": Effort("default", 25, 15.0),
    "thorough": Effort("thorough", 200, 120.0),
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
    out: list[float] = []
    for name, default, kind in ((ENV_EXAMPLES, chosen.fuzz_examples, int), (ENV_SECONDS, chosen.fuzz_seconds, float)):
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
    return int(out[0]), float(out[1])
