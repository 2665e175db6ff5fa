"""Which round trips a run with several targets makes, and how one is judged.

For every ordered pair of targets (A, B) and every spec version both speak, one round trip moves
records from A to B over one binding on each side: the first of BINDING_PREFERENCE the target offers
(a live binding that can both export and import; UMP's file binding can only be read). A round trip
that lost nothing passes; a loss fails with the keyword of the requirement that promised the field
(a SHOULD loss is a warning); a target that stopped answering is an error; a spec operation one side
does not offer skips the round trip with the reason.
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memconform.suite.interop.model import RoundTrip, loss_json
from memconform.suite.outcomes import Inconclusive, NotApplicable, Outcome, TargetError
from memconform.suite.specs import SPECS

#: spec → the module whose `round_trip(source, destination, *, version, source_label,
#: destination_label)` moves that spec's records, and the bindings tried in order (suite/specs.py)
ROUND_TRIPS = {name: spec.interop for name, spec in SPECS.items() if spec.interop}
BINDING_PREFERENCE = {name: spec.interop_bindings for name, spec in SPECS.items() if spec.interop}
CHECK_ID = "interop/round-trip"


@dataclass(frozen=True)
class Pairing:
    """One round trip to make: A's subject → B's subject, same spec version."""

    source: Any       # a targets.base.Subject
    destination: Any

    @property
    def spec(self) -> str:
        return self.source.spec

    @property
    def version(self) -> str:
        return self.source.version

    @property
    def name(self) -> str:
        return (f"{self.source.target}→{self.destination.target}::{self.spec}-{self.version}::"
                f"{self.source.binding}→{self.destination.binding}")


def _preferred(subjects: list[Any], spec: str, version: str) -> Any | None:
    for binding in BINDING_PREFERENCE.get(spec, ()):
        for s in subjects:
            if (s.spec, s.version, s.binding) == (spec, version, binding):
                return s
    return None


def pairings(subjects_by_target: dict[str, list[Any]], wants: Any = None) -> list[Pairing]:
    """Every ordered pair of distinct targets × every spec version both offer over a usable
    binding; `wants(spec, version, binding)` (the run's --spec/--binding filter) applies to both sides."""
    out = []
    labels = list(subjects_by_target)
    for a in labels:
        for b in labels:
            if a == b:
                continue
            versions = sorted({(s.spec, s.version) for s in subjects_by_target[a] if s.spec in ROUND_TRIPS})
            for spec, version in versions:
                src = _preferred(subjects_by_target[a], spec, version)
                dst = _preferred(subjects_by_target[b], spec, version)
                if src is None or dst is None:
                    continue
                if wants is not None and not (wants(spec, version, src.binding) and wants(spec, version, dst.binding)):
                    continue
                out.append(Pairing(src, dst))
    return out


@dataclass(frozen=True)
class Judged:
    """A round trip's outcome, as the report keeps it."""

    pairing: Pairing
    outcome: Outcome
    round_trip: RoundTrip | None
    reason: str | None
    duration: float
    check: str = CHECK_ID

    def to_json(self) -> dict[str, Any]:
        rt = self.round_trip
        return {
            "check": self.check, "spec": self.pairing.spec, "version": self.pairing.version,
            "source": self.pairing.source.target, "destination": self.pairing.destination.target,
            "source_binding": self.pairing.source.binding, "destination_binding": self.pairing.destination.binding,
            "outcome": self.outcome.value, "reason": self.reason,
            "placed": rt.placed if rt else 0, "compared": rt.compared if rt else 0,
            "losses": [loss_json(x) for x in (rt.losses if rt else ())],
            "notes": list(rt.notes) if rt else [], "duration": round(self.duration, 6),
        }



def loss_outcome(rt: RoundTrip) -> Outcome:
    """Failed for a lost MUST (or a mapping-table promise), warning when every loss is a SHOULD's or
    comes of two legitimate readings that disagree (`Loss.disagreement`)."""
    if not rt.losses:
        return Outcome.PASSED
    from memconform.suite import catalogue

    strongest = Outcome.WARNING
    for loss in rt.losses:
        if loss.disagreement:
            continue  # two legitimate readings: a warning, whatever the requirement's keyword
        try:
            keyword = catalogue.load(rt.spec).get(loss.requirement).keyword.value
        except (ImportError, LookupError, OSError, ValueError):
            keyword = "MUST"  # a promise from outside the catalogue (the mapping table) binds like a MUST
        if keyword == "MUST":
            strongest = Outcome.FAILED
    return strongest


def run_pairing(pairing: Pairing, source_client: Callable[[], Any], destination_client: Callable[[], Any]) -> Judged:
    """Makes the round trip with clients from the two factories; never raises."""
    started = time.perf_counter()
    try:
        module = importlib.import_module(ROUND_TRIPS[pairing.spec])
        rt = module.round_trip(source_client(), destination_client(), version=pairing.version,
                               source_label=pairing.source.target, destination_label=pairing.destination.target)
    except NotApplicable as exc:
        return Judged(pairing, Outcome.SKIPPED, None, str(exc), time.perf_counter() - started)
    except Inconclusive as exc:
        return Judged(pairing, Outcome.INFO, None, f"inconclusive: {exc}", time.perf_counter() - started)
    except TargetError as exc:
        return Judged(pairing, Outcome.ERROR, None, f"target error: {exc}", time.perf_counter() - started)
    except Exception:  # a bug in the suite: an error, never a verdict on either target
        return Judged(pairing, Outcome.ERROR, None, "the round trip itself crashed:\n" + traceback.format_exc(),
                      time.perf_counter() - started)
    outcome = loss_outcome(rt)
    reason = None
    if rt.losses:
        reason = f"{len(rt.losses)} field(s) lost moving {rt.placed} record(s)"
    elif rt.compared != rt.placed:
        outcome, reason = Outcome.FAILED, f"only {rt.compared} of {rt.placed} record(s) came back"
    return Judged(pairing, outcome, rt, reason, time.perf_counter() - started)


def describe_losses(judged: Judged, limit: int = 40) -> str:
    """The failure message: every loss with the record, the field and the promise, then notes."""
    p, rt = judged.pairing, judged.round_trip
    lines = [f"{p.spec.upper()} {p.version}: {p.source.target} ({p.source.binding}) → "
             f"{p.destination.target} ({p.destination.binding})"]
    if judged.reason:
        lines.append(judged.reason)
    if rt is not None:
        for loss in rt.losses[:limit]:
            lines.append(f"✗ {loss.describe()}")
        if len(rt.losses) > limit:
            lines.append(f"… and {len(rt.losses) - limit} more in the report")
        lines.extend(f"note: {n}" for n in rt.notes)
    return "\n".join(lines)
