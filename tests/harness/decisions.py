"""Which checks meet which decision points of the reference implementation, so that a variant's
whole-suite run re-runs only the checks that can meet its choice (tests/harness/test_variants.py).

Each spec's reference reads its open choices from one policy object, made by
`reference_impl.faults.deviate`. While recording, that object is wrapped so that every read of a
decision point is written down against the check running at that moment. A variant overrides some
points; a check that read none of them in a clean run took the same path as it would under the
variant (the reference is deterministic given the same reads, and every check places its own data),
so its clean result is its result under the variant. Reads made while a subject is opened (a
service built, its versions fixed) count for every check of the spec, as do reads inside a child
process (stdio, a command line), which the recorder cannot see: a binding with no recorded read at
all is re-run whole.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

#: Reads made outside a check: while a subject is opened
OPENING = "(opening a subject)"


def key(check: str, version: str, binding: str) -> str:
    return f"{check}|{version}|{binding}"


@dataclass
class Recorder:
    current: str = OPENING
    read: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def meeting(self, points: set[str], bindings: tuple[str, ...]) -> set[str] | None:
        """The check ids that read one of `points` (any version, any binding); None when every check
        must run (a point read while opening a subject, or a binding whose reads were not seen)."""
        if self.read.get(OPENING, set()) & points:
            return None
        seen_bindings = {k.rsplit("|", 1)[1] for k, names in self.read.items() if k != OPENING and names}
        if set(bindings) - seen_bindings:
            return None
        return {k.split("|", 1)[0] for k, names in self.read.items() if k != OPENING and names & points}


class _Consulted:
    """A policy whose every attribute read is written down."""

    def __init__(self, policy: Any, recorder: Recorder) -> None:
        object.__setattr__(self, "_policy", policy)
        object.__setattr__(self, "_recorder", recorder)

    def __getattr__(self, name: str) -> Any:
        recorder = object.__getattribute__(self, "_recorder")
        recorder.read[recorder.current].add(name)
        return getattr(object.__getattribute__(self, "_policy"), name)


def record(monkeypatch: Any) -> Recorder:
    """Record, for the in-process runs that follow (until the test ends), which checks read which
    decision points."""
    from memconform.reference_impl import faults
    from memconform.suite import plugin

    recorder = Recorder()
    deviate = faults.deviate
    monkeypatch.setattr(faults, "deviate", lambda *a, **k: _Consulted(deviate(*a, **k), recorder))
    run_check = plugin.run_check

    def recorded(check: Any, version: str, binding: str, client_factory: Any, *a: Any, **k: Any) -> Any:
        label = key(check.id, version, binding)

        def opening() -> Any:
            recorder.current = OPENING
            try:
                return client_factory()
            finally:
                recorder.current = label

        recorder.current = label
        try:
            return run_check(check, version, binding, opening, *a, **k)
        finally:
            recorder.current = OPENING

    monkeypatch.setattr(plugin, "run_check", recorded)
    return recorder
