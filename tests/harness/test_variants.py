"""The mirror of the fault tests (DESIGN.md idea 5): each variant of the reference implementation is a
legitimate reading the spec leaves open, made the other way; the whole suite must pass it over every
binding it shows on: no MUST failure, no error, the top level reached. A check that fails a variant is
a defect, exactly like a check that passes a fault.

A variant re-runs the checks that can meet its choice: those that read one of its decision points in
a clean run of the same spec and bindings (tests/harness/decisions.py); every other check's clean
result is its result under the variant, and the levels are computed over both, as one run would.
MEMCONFORM_FULL_VARIANT_RUNS=1 runs the whole suite against every variant instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memconform.reference_impl.variants import VARIANTS, Variant, VariantError, apply, check_names
from memconform.suite import catalogue
from memconform.targets.reference import _LIVE_BY_SPEC

from . import decisions
from .helpers import failed_requirements, made_once, run_suite

FULL_VARIANT_RUNS = os.environ.get("MEMCONFORM_FULL_VARIANT_RUNS") == "1"
#: spec -> the clean run's report and what each check read, once per session and worker
_CLEAN: dict[str, tuple[dict, decisions.Recorder]] = {}

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Where each spec's levels end on each binding the reference serves.
TOP = {("ump", "file"): "L0", ("ump", "http"): "L3", ("ump", "mcp"): "L3", ("upp", "http"): "L3",
       ("upp", "stdio"): "L3", ("omf", "cli"): "L1", ("omf", "http"): "L1", ("oams", "http"): "L3",
       ("oams", "jsonrpc"): "L3", ("oams", "stdio"): "L3", ("memoturn", "http"): "L3", ("memoturn", "mcp"): "L3",
       ("oams", "file"): None}  # a file reaches its claim, "L1 (export)", not a level (asserted below)


def _bindings(variant: Variant) -> tuple[str, ...]:
    if variant.bindings is not None:
        return variant.bindings
    return ("file", *_LIVE_BY_SPEC["ump"]) if variant.spec == "ump" else _LIVE_BY_SPEC[variant.spec]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_passes_the_whole_suite(pytester, monkeypatch, shared_folder, name):
    monkeypatch.setenv("MEMCONFORM_FUZZ_EXAMPLES", "0")  # the fuzz judges 5xx only: no reading to pin
    # the state machines are run against every variant by test_stateful_faults*.py, at their own budget
    monkeypatch.setenv("MEMCONFORM_STATEFUL_EXAMPLES", "0")
    variant = VARIANTS[name]
    bindings = _bindings(variant)
    versions = [v for v in catalogue.load(variant.spec).versions if variant.applies_to(variant.spec, v)]
    # a variant of a later version only (since) is judged on the versions it is a reading of
    specs = [f"--spec={variant.spec}"] if len(versions) == len(catalogue.load(variant.spec).versions) \
        else [f"--spec={variant.spec}@{v}" for v in versions]
    args = [*specs, *[f"--binding={b}" for b in bindings]]
    meeting = None
    if not FULL_VARIANT_RUNS:
        clean, recorder = _clean_run(pytester, monkeypatch, shared_folder, variant.spec)
        meeting = recorder.meeting({f"{variant.spec}.{p}" for p in variant.overrides}, bindings)
        # a variant no check meets would prove nothing about the checks
        assert meeting is None or meeting, f"{name}: no check reads {sorted(variant.overrides)}"
    result, report = run_suite(pytester, f"--target=reference?variant={name}", *args,
                               *[f"--check={c}" for c in sorted(meeting or ())])
    if meeting:
        report = _with_clean_results(report, clean, set(versions), set(bindings))
    assert report["totals"].get("error", 0) == 0, [r["reason"] for r in report["results"] if r["outcome"] == "error"]
    # a variant that reads the text otherwise than the public implementation may fail that
    # implementation's class (e.g. ump-reference-interop) on the requirements it names: never a level
    cat = catalogue.load(variant.spec)
    own_class = {r for r in variant.readings if cat.get(r).conformance_class is not None}
    assert failed_requirements(report) - own_class == set(), [
        f["message"] for r in report["results"] if r["outcome"] == "failed" for f in r["findings"]]
    reached = {(r["version"], r["binding"]): r["level"] for r in report["levels"]}
    expected = {(v, b): TOP[(variant.spec, b)] for v in catalogue.load(variant.spec).versions
                if variant.applies_to(variant.spec, v) for b in bindings}
    assert {k: reached.get(k) for k in expected} == expected, [(r["summary"], r["blocked_by"], r["blocked_at"]) for r in report["levels"]]
    for row in report["levels"]:
        if row["level"] is None and (row["spec"], row["binding"]) in TOP:
            assert row["claim"] and row["claim"]["reached"], row["summary"]
    # a class counts toward no exit status unless the run requires it (--require-class)
    assert result.ret == 0, result.stdout.str()[-2000:]


def _clean_run(pytester, monkeypatch, shared_folder, spec: str) -> tuple[dict, decisions.Recorder]:
    """The clean reference over the spec and every binding it serves, recording what each check
    read: made once per session, by the first xdist worker that needs it (under a lock), and read by
    the others from the shared folder. One run serves every variant of the spec, whatever its
    bindings (one per set of bindings made five UMP runs)."""
    bindings = tuple(b for s, b in TOP if s == spec)
    if spec not in _CLEAN:
        def make() -> dict:
            with monkeypatch.context() as patch:
                recorder = decisions.record(patch, Path(pytester.path))
                _, report = run_suite(pytester, "--target=reference", f"--spec={spec}",
                                      *[f"--binding={b}" for b in bindings])
            assert report["totals"].get("failed", 0) == 0 and report["totals"].get("error", 0) == 0
            return {"report": report, "read": {k: sorted(v) for k, v in recorder.read.items()}}

        data = made_once(shared_folder / f"variants-clean-{spec}.json", make)
        recorder = decisions.Recorder()
        recorder.read.update({k: set(v) for k, v in data["read"].items()})
        _CLEAN[spec] = (data["report"], recorder)
    return _CLEAN[spec]


def _with_clean_results(report: dict, clean: dict, versions: set[str], bindings: set[str]) -> dict:
    """The variant run's report with the clean run's results of every check it did not re-run on
    the variant's versions and bindings (as the variant's target), levels and totals computed over
    all, as one whole run would."""
    from memconform.reports.model import build_report

    label = report["targets"][0]["label"]
    ran = {r["node_id"].split("::", 2)[2] for r in report["results"]}
    kept = [dict(r, target=label, node_id=f"memconform::{label}::{r['node_id'].split('::', 2)[2]}")
            for r in clean["results"] if r["node_id"].split("::", 2)[2] not in ran
            and r["version"] in versions and r["binding"] in bindings]
    return build_report(report["results"] + kept, report["targets"], report["run"])


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_is_documented_beside_the_reading_it_pins(name):
    variant = VARIANTS[name]
    cat = catalogue.load(variant.spec)
    assert variant.readings, f"{name}: a variant names the requirement(s) whose reading it pins"
    for rid in variant.readings:
        cat.get(rid)  # raises for an unknown id
    text = (DOCS / f"catalogue-{variant.spec}.md").read_text(encoding="utf-8")
    assert f"`{name}`" in text, f"docs/catalogue-{variant.spec}.md does not name the variant `{name}`"
    assert variant.overrides, f"{name}: a variant overrides at least one decision point"


def test_unknown_and_conflicting_variants_are_refused():
    with pytest.raises(VariantError, match="unknown variant"):
        check_names(["no-such-variant"])

    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Policy:
        point: str = "a"

    one = Variant("t-one", "omf", "x", ("omf/omf-version",), {"point": "b"})
    two = Variant("t-two", "omf", "x", ("omf/omf-version",), {"point": "c"})
    VARIANTS.update({v.name: v for v in (one, two)})
    try:
        assert apply(Policy(), "omf", ["t-one"]).point == "b"
        assert apply(Policy(), "ump", ["t-one"]).point == "a"  # another spec's variant is ignored
        with pytest.raises(VariantError, match="two ways"):
            apply(Policy(), "omf", ["t-one", "t-two"])
    finally:
        for v in (one, two):
            VARIANTS.pop(v.name)


def test_the_target_string_carries_variants_and_a_fault(pytester):
    from memconform.targets.target_string import TargetStringError, parse_target

    with pytest.raises(TargetStringError, match="unknown variant"):
        parse_target("reference?variant=no-such-variant")
    target = parse_target("reference?fault=omf-accepts-other-version")
    assert target.variants == () and target.label == "reference?fault=omf-accepts-other-version"


def test_readings_a_server_combines_keep_its_own_round_trip(pytester):
    """Found by running the reference with every compatible variant of a spec at once (the audit of
    stop 26): an export listing events newest first, imported in the order listed, makes the older
    name current. Each reading is legitimate (03 §4 fixes neither order), so the server's own round
    trip must pass, saying what changed."""
    result, report = run_suite(pytester, "--target=reference?variant=upp-newest-first,upp-import-package-order",
                               "--spec=upp", "--binding=http", "--check=upp/l3/round-trip")
    assert result.ret == 0, result.stdout.str()[-2000:]
    (res,) = report["results"]
    assert res["outcome"] == "passed" and "not_judged" not in res, res
    assert "applied supersession in the order listed" in res["reason"], res
