"""A variant of the reference is a legitimate reading the spec leaves open (tests/harness/test_variants.py
proves the whole suite passes it). Two servers that read the text differently, each legitimately, must
also move records between them without a loss being charged to either: a round trip that fails
between the reference and one of its variants blames a server for a choice the spec gave it.

Each variant makes the round trips of its spec with the clean reference, both ways, through the
plugin's own pairing (suite/interop/pairing.py), as `pytest --target=reference
--target=reference?variant=NAME` would."""

from __future__ import annotations

import pytest

from memconform.reference_impl.variants import VARIANTS
from memconform.suite.interop.pairing import pairings, run_pairing
from memconform.suite.outcomes import Outcome
from memconform.targets import open_driver

from .helpers import described


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_variant_and_the_reference_move_records_both_ways_and_nobody_is_charged(name):
    spec = VARIANTS[name].spec
    labels = ("reference", f"reference?variant={name}")
    drivers = {label: open_driver(label, timeout=30.0) for label in labels}
    try:
        subjects = {label: [s for s in d.subjects() if s.spec == spec] for label, d in drivers.items()}
        pairs = pairings(subjects)
        assert pairs, f"{name}: no round trip of {spec} between the reference and the variant"
        judged = [run_pairing(p, lambda p=p: drivers[p.source.target].client(p.source),
                              lambda p=p: drivers[p.destination.target].client(p.destination)) for p in pairs]
    finally:
        for d in drivers.values():
            d.close()
    problems = [f"{j.pairing.name}: {j.outcome.value} {j.reason or ''}\n{described(j.round_trip) if j.round_trip else ''}"
                for j in judged if j.outcome is not Outcome.PASSED]
    assert not problems, "\n".join(problems)
    assert all(j.round_trip.kept_everything for j in judged)


def test_two_readings_of_the_package_order_that_change_the_current_event_warn_and_blame_neither():
    # upp-newest-first lists its export newest first; upp-import-package-order applies a package in the
    # order listed. Each is legitimate (03 §4 fixes neither order), and together they make the oldest
    # name the current one: the move changes data, which the user must see, and neither server broke a MUST.
    labels = ("reference?variant=upp-newest-first", "reference?variant=upp-import-package-order")
    drivers = {label: open_driver(label, timeout=30.0) for label in labels}
    try:
        subjects = {label: [s for s in d.subjects() if s.spec == "upp"] for label, d in drivers.items()}
        judged = {p.source.target: run_pairing(p, lambda p=p: drivers[p.source.target].client(p.source),
                                               lambda p=p: drivers[p.destination.target].client(p.destination))
                  for p in pairings(subjects)}
    finally:
        for d in drivers.values():
            d.close()
    assert judged[labels[1]].outcome is Outcome.PASSED, described(judged[labels[1]].round_trip)
    newest_first = judged[labels[0]]
    assert newest_first.outcome is Outcome.WARNING, described(newest_first.round_trip)
    losses = newest_first.round_trip.losses
    assert losses and all(loss.disagreement and "03 §4 fixes neither order" in loss.disagreement for loss in losses)
    assert {loss.field for loss in losses} >= {"/status"} and all(loss.stage.startswith("import into") for loss in losses)
    assert all(loss.field in ("/status", "/superseded_by") for loss in losses)
