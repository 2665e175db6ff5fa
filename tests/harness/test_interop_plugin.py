"""Interop in the plugin: with two targets, every ordered pair makes a round trip per shared spec
version; its losses fail with the record, the field and the promise; the report keeps them and the
terminal shows the matrix. The round trip is replaced here by a scripted one, so these tests judge
the wiring, not the spec engines (tests/interop/ judge those)."""

from __future__ import annotations

import sys
import types

import jsonschema
import pytest

from memconform.suite.interop import pairing
from memconform.suite.interop.model import MISSING, Loss, RoundTrip
from memconform.suite.outcomes import NotApplicable, TargetError
from memconform.targets.base import Subject

from .helpers import run_suite


def _subjects(label: str, *triples: tuple[str, str, str]) -> list[Subject]:
    return [Subject(label, s, v, b) for s, v, b in triples]


def test_pairings_take_every_ordered_pair_and_a_usable_binding_on_each_side():
    subjects = {
        "a": _subjects("a", ("ump", "1.0", "file"), ("ump", "1.0", "mcp"), ("ump", "1.0", "http"), ("omf", "1.0", "cli")),
        "b": _subjects("b", ("ump", "1.0", "mcp"), ("ump", "0.1", "http"), ("upp", "1.0.0", "stdio")),
        "c": _subjects("c", ("ump", "1.0", "file")),  # a file can be read, not imported into
    }
    got = {(p.source.target, p.destination.target, p.spec, p.version, p.source.binding, p.destination.binding)
           for p in pairing.pairings(subjects)}
    assert got == {("a", "b", "ump", "1.0", "http", "mcp"), ("b", "a", "ump", "1.0", "mcp", "http")}


def test_pairings_honour_the_runs_spec_and_binding_filter():
    subjects = {"a": _subjects("a", ("ump", "1.0", "http"), ("upp", "1.0.0", "http")),
                "b": _subjects("b", ("ump", "1.0", "http"), ("upp", "1.0.0", "http"))}
    only_upp = pairing.pairings(subjects, lambda spec, version, binding: spec == "upp")
    assert {(p.spec, p.source.target) for p in only_upp} == {("upp", "a"), ("upp", "b")}


def _script(monkeypatch, behaviour):
    module = types.ModuleType("memconform_test_round_trip")
    module.round_trip = behaviour
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(pairing.ROUND_TRIPS, "ump", module.__name__)


def _pair() -> pairing.Pairing:
    return pairing.Pairing(Subject("a", "ump", "1.0", "http"), Subject("b", "ump", "1.0", "http"))


@pytest.mark.parametrize("raised, outcome, reason", [
    (TargetError("connection refused"), "error", "target error: connection refused"),
    (NotApplicable("b offers no remember"), "skipped", "b offers no remember"),
    (ZeroDivisionError("bug"), "error", "the round trip itself crashed"),
])
def test_a_round_trip_that_cannot_be_made_is_an_error_or_skipped_never_a_verdict(monkeypatch, raised, outcome, reason):
    def behaviour(*args, **kwargs):
        raise raised
    _script(monkeypatch, behaviour)
    judged = pairing.run_pairing(_pair(), lambda: "A", lambda: "B")
    assert judged.outcome.value == outcome and reason in judged.reason


def test_a_lost_must_field_fails_a_lost_should_field_warns_and_a_short_return_fails(monkeypatch):
    must = Loss("rec-1", "/scope", "ump/remember-persists", "team", MISSING, "export from b")
    should = Loss("rec-1", "/x", "ump/http-error-status", 1, 2, "export from b")
    for losses, placed, compared, outcome in (((must, should), 2, 2, "failed"), ((should,), 2, 2, "warning"),
                                              ((), 2, 1, "failed"), ((), 2, 2, "passed")):
        def behaviour(source, destination, **kw):
            return RoundTrip("ump", kw["version"], kw["source_label"], kw["destination_label"], placed, compared, losses)
        _script(monkeypatch, behaviour)
        judged = pairing.run_pairing(_pair(), lambda: "A", lambda: "B")
        assert judged.outcome.value == outcome, (losses, placed, compared)
    text = pairing.describe_losses(pairing.run_pairing(_pair(), lambda: "A", lambda: "B"))
    assert "a (http) → b (http)" in text


def test_two_targets_make_interop_items_whose_losses_fail_and_reach_the_report(pytester, monkeypatch):
    calls = []

    def behaviour(source, destination, *, version, source_label, destination_label):
        calls.append((source_label, destination_label, version))
        losses = ()
        if "fault" in destination_label:
            losses = (Loss("rec-7", "/provenance", "ump/remember-persists", ["a"], MISSING, "export from B"),)
        return RoundTrip("ump", version, source_label, destination_label, 3, 3, losses)

    _script(monkeypatch, behaviour)
    faulty = "reference?fault=recall-nonstandard-code"
    result, report = run_suite(pytester, "--target=reference", f"--target={faulty}", "--spec=ump",
                               "--binding=http", "--check=interop/round-trip")
    assert sorted(calls) == sorted([("reference", faulty, "0.1"), ("reference", faulty, "1.0"),
                                    (faulty, "reference", "0.1"), (faulty, "reference", "1.0")])
    entries = report["interop"]
    assert {(e["source"], e["destination"], e["version"], e["outcome"]) for e in entries} == {
        ("reference", faulty, "0.1", "failed"), ("reference", faulty, "1.0", "failed"),
        (faulty, "reference", "0.1", "passed"), (faulty, "reference", "1.0", "passed")}
    lost = [x for e in entries for x in e["losses"]]
    assert lost[0] == {"record": "rec-7", "field": "/provenance", "requirement": "ump/remember-persists",
                       "expected": ["a"], "got": "<missing>", "stage": "export from B"}
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    assert "memconform interop" in out and "UMP 1.0 — targets" in out
    assert "lost 1 (3)" in out and "kept 3/3" in out
    assert "rec-7/provenance (ump/remember-persists, export from B)" in out

    from importlib import resources
    import json
    schema = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())
    jsonschema.validate(report, schema)


def test_one_target_makes_no_interop_items(pytester, monkeypatch):
    _script(monkeypatch, lambda *a, **k: pytest.fail("no round trip with one target"))
    result, report = run_suite(pytester, "--target=reference", "--spec=ump@1.0", "--binding=http",
                               "--check=ump/l1/capabilities")
    assert [r["check"] for r in report["results"]] == ["ump/l1/capabilities"]
    assert "interop" not in report


def test_two_targets_also_judge_the_format_round_trips_by_the_mapping_table(pytester, monkeypatch):
    _script(monkeypatch, lambda *a, **k: RoundTrip("ump", k["version"], k["source_label"], k["destination_label"], 1, 1))
    from memconform.suite.convert import dispatch

    real = dispatch.DIRECTIONS[("ump", "omf")]

    def drops_the_project(*args, **kwargs):  # a converter that breaks a promise of the table
        document = real(*args, **kwargs)
        for item in document["memories"]:
            item.get("extensions", {}).get("memd", {}).pop("project_id", None)
        return document

    monkeypatch.setitem(dispatch.DIRECTIONS, ("ump", "omf"), drops_the_project)
    result, report = run_suite(pytester, "--target=reference", "--target=reference?fault=recall-nonstandard-code",
                               "--binding=http", "--check=interop/format-round-trip")
    formats = {(e["source"], e["destination"]): e for e in report["interop"]
               if e["check"] == "interop/format-round-trip"}
    from memconform.suite.convert.mapping import FORMATS

    assert set(formats) == {(a, b) for a in FORMATS for b in FORMATS if a != b}
    broken = formats[("ump", "omf")]
    assert broken["outcome"] == "failed"
    assert {x["requirement"] for x in broken["losses"]} == {"mapping/ump-omf/scope.project"}
    # OMF → UMP → OMF comes back through the broken direction too; nothing else uses it
    assert {k for k, e in formats.items() if e["outcome"] != "passed"} == {("ump", "omf"), ("omf", "ump")}
    assert "formats (A → B → A, by the mapping table)" in result.stdout.str()


def test_spec_narrows_the_format_round_trips_to_pairs_of_asked_formats(pytester, monkeypatch):
    _script(monkeypatch, lambda *a, **k: RoundTrip("ump", k["version"], k["source_label"], k["destination_label"], 1, 1))
    result, report = run_suite(pytester, "--target=reference", "--target=reference?fault=recall-nonstandard-code",
                               "--spec=ump", "--spec=omf", "--binding=http", "--check=interop/format-round-trip")
    assert {(e["source"], e["destination"]) for e in report["interop"]} == {("ump", "omf"), ("omf", "ump")}
