"""Idea 1: every MUST at a level the suite claims has a check; every check names known ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.suite import catalogue
from memconform.suite.outcomes import Keyword
from memconform.suite.registry import all_checks
from memconform.vectors import load as vectors


@pytest.mark.parametrize("spec", catalogue.SPECS)
def test_every_claimed_must_has_a_check(spec):
    cat = catalogue.load(spec)
    checked = {rid for chk in all_checks(spec) for rid in chk.requirements}
    missing = [r.id for r in cat.requirements
               if r.level in cat.claimed_levels and r.keyword is Keyword.MUST and r.testable
               and r.id not in checked]
    assert not missing, f"MUST requirements at claimed levels {cat.claimed_levels} without a check: {missing}"


@pytest.mark.parametrize("spec", catalogue.SPECS)
def test_every_derived_requirement_carries_its_reading(spec):
    """A derived requirement is one the text does not state in those words: its failure message
    must say so and how it was read (suite/plugin.py prints the note), never pass as the text's MUST."""
    unread = [r.id for r in catalogue.load(spec).requirements if r.derived and not (r.note or "").strip()]
    assert not unread, f"derived requirements without the reading that derives them: {unread}"


def test_a_failure_names_a_derived_requirement_as_derived_and_a_class_as_no_level():
    ump = catalogue.load("ump")
    assert ump.get("ump/record-kind").cite() == "ump/record-kind (§2.1, MUST, L0)"
    assert ump.get("ump/http-route-capabilities").cite() == "ump/http-route-capabilities (§4.2, MUST, derived, L1)"
    assert ump.get("ump/capabilities-open").cite() == \
        "ump/capabilities-open (§4.2, MUST, derived, L1, class ump-reference-interop, no level)"


@pytest.mark.parametrize("spec", catalogue.SPECS)
def test_checks_name_only_known_requirements(spec):
    cat = catalogue.load(spec)
    unknown = {(chk.id, rid) for chk in all_checks(spec) for rid in chk.requirements if rid not in cat.by_id}
    assert not unknown


def test_vectors_name_only_known_requirements():
    cat = catalogue.load("ump")
    unknown = {(case.id, rid) for v in cat.versions for case in vectors.cases("ump", v)
               for rid in case.requirements if rid not in cat.by_id}
    assert not unknown


def test_faults_name_only_known_requirements():
    unknown = {(f.name, rid) for f in FAULTS.values() for rid in f.breaks
               if rid not in catalogue.load(f.spec).by_id}
    assert not unknown


#: Known defects, listed so they stay visible: MUST checks no fault proves yet (each entry also
#: fails this test once a fault covers it, so the list only shrinks). Open work, not a waiver.
KNOWN_WITHOUT_FAULT: set[str] = set()
#: MUST checks shown failing by a miniature instead of a reference fault, where the reference
#: cannot emit the thing judged (its OAMS export is a bundle, never the optional Markdown form)
PROVEN_BY_MINIATURE = {"oams/markdown-shape": ("tests/oams/test_drivers.py", "test_markdown_check_can_fail")}


def test_every_must_check_has_a_fault():
    """Idea 5: a MUST check that no fault can fail is a defect."""
    # an interop-only fault shows only across implementations: it proves no single-target check
    broken = {rid for f in FAULTS.values() if not f.interop_only for rid in f.breaks}
    root = Path(__file__).resolve().parents[2]
    for rid, (path, test) in PROVEN_BY_MINIATURE.items():
        assert f"def {test}(" in (root / path).read_text(encoding="utf-8"), (rid, path, test)
        broken.add(rid)
    for spec in catalogue.SPECS:
        cat = catalogue.load(spec)
        checked = {rid for chk in all_checks(spec) for rid in chk.requirements}
        musts = {rid for rid in checked if cat.get(rid).keyword is Keyword.MUST}
        without = musts - broken
        assert without <= KNOWN_WITHOUT_FAULT, f"MUST requirements with a check but no fault: {sorted(without - KNOWN_WITHOUT_FAULT)}"
        assert not KNOWN_WITHOUT_FAULT & broken, f"stale: now proven by a fault: {sorted(KNOWN_WITHOUT_FAULT & broken)}"


def test_catalogue_entries_are_complete():
    cat = catalogue.load("ump")
    assert set(cat.versions) == {"0.1", "1.0"}
    for r in cat.requirements:
        assert r.summary.strip() and r.quote.strip(), r.id
        assert r.id.startswith("ump/"), r.id
    # Requirements only 1.0 has (§8 versioning) must not leak into 0.1.
    assert not cat.get("ump/reject-unknown-major").applies_to("0.1")
    assert cat.get("ump/md-roundtrip-lossless").applies_to("0.1")


def test_catalogue_parser_refuses_bad_entries():
    with pytest.raises(catalogue.CatalogueError, match="duplicate"):
        catalogue.parse_catalogue({"versions": ["1.0"], "requirement": [
            dict(id="x/a", section="1", level="L0", keyword="MUST", since="1.0", summary="s", quote="q"),
            dict(id="x/a", section="1", level="L0", keyword="MUST", since="1.0", summary="s", quote="q")]}, "x")
    with pytest.raises(catalogue.CatalogueError, match="keyword"):
        catalogue.parse_catalogue({"versions": ["1.0"], "requirement": [
            dict(id="x/a", section="1", level="L0", keyword="MUSTN'T", since="1.0", summary="s", quote="q")]}, "x")


@pytest.mark.parametrize("spec", catalogue.SPECS)
def test_requirement_and_check_ids_fit_the_report_schema(spec):
    import json
    import re
    from importlib import resources

    schema = json.loads(resources.files("memconform.reports").joinpath("report.schema.json").read_text())
    pattern = re.compile(schema["$defs"]["requirementId"]["pattern"])
    bad = [r.id for r in catalogue.load(spec).requirements if not pattern.match(r.id)]
    assert not bad, f"ids the report schema refuses: {bad}"


@pytest.mark.parametrize("spec, cls, members", [
    ("upp", "upp-line-framed-stdio", {"upp/stdio-line-framing"}),
    ("ump", "ump-reference-interop", {"ump/cap-token-format", "ump/integrity-signature", "ump/http-route-feedback",
                                      "ump/http-route-subscribe", "ump/mcp-errors-iserror",
                                      "ump/subscribe-event-form", "ump/runner-rules", "ump/capabilities-open"}),
])
def test_each_conformance_class_holds_exactly_its_requirements(spec, cls, members):
    """A `class = …` line is a member of whichever [[requirement]] table precedes it: one left below
    a section comment once moved UPP's stdio framing class onto a newly inserted requirement."""
    from memconform.suite import catalogue

    held = {r.id for r in catalogue.load(spec).requirements if r.conformance_class == cls}
    assert held == members
