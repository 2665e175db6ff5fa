"""The OAMS checks run directly against the reference (served in a thread; stdio as a child): the
clean reference passes every check over http, jsonrpc, stdio and file; each fault fails exactly its
`breaks` (over the bindings it shows on) with no error; each variant passes. Until OAMS is wired
into `pytest --target=…`, these direct runs are the proof (DESIGN.md, idea 5)."""

from __future__ import annotations

import pytest

from memconform.reference_impl.oams.faults import OAMS_FAULTS
from memconform.reference_impl.oams.variants import OAMS_VARIANTS
from memconform.suite import catalogue as catalogues
from memconform.suite.outcomes import Keyword, Outcome
from harness.helpers import observing_checks  # the checks that can see a fault, as for the other specs

from .helpers import failed_requirements, oams_checks, outcomes

BINDINGS = ("http", "jsonrpc", "stdio", "file")
#: Requirements no reference subject can show broken, proven able to fail by a miniature instead: the
#: reference's file subject is a bundle, and the Markdown serialization is a file of its own.
PROVEN_ELSEWHERE = {"oams/markdown-shape": "tests/oams/test_drivers.py::test_markdown_check_can_fail"}
#: the one check that cannot apply to the reference's export (a bundle, not a Markdown file): skipped
NOT_APPLICABLE = "oams/file-markdown:"


#: What the reference's file subject does not hold, so a file check leaves it not judged (absence is
#: never evidence): the bundle leaves out the OPTIONAL embeddings.bin (the variant below writes it).
ABSENT_FROM_THE_BUNDLE = {"oams/file-bundle": {"oams/embeddings-bin-layout"}}
WITH_EMBEDDINGS_BIN = "oams-export-embeddings-bin"


#: Checks of a request the spec lets a target answer either way: each way leaves the other's rules
#: not judged (absence is never evidence). RECALL on a namespace never written: empty, or -32001
#: (the code then judged); FORGET of a key never stored: success (REST: 204), or -32002 in §3's shape.
EITHER_WAY = {"oams/recall-single-namespace": ({"oams/error-codes"},),
              "oams/forget-unknown": ({"oams/forget-204"}, {"oams/error-codes", "oams/error-shape"})}


def _problems(results: dict, absent: dict[str, set[str]] | None = None, binding: str | None = None) -> list[str]:
    """What is not a clean pass; a check must judge every requirement it names (a state machine must
    reach them, a scripted check find what each is about), but what `absent` says the subject lacks,
    what binds another binding (forget-204 binds REST), and the way a target did not take (EITHER_WAY)."""
    absent = absent or {}
    cat = catalogues.load("oams")

    def unjudged(k: str, r) -> set[str]:
        left = {rid for rid in r.extra.get("not_judged") or () if binding is None
                or cat.get(rid).applies_to_binding(binding)} - absent.get(k, set())
        return set() if any(left <= way for way in EITHER_WAY.get(k, ())) else left

    return [f"{k}: {r.outcome.value} {r.reason or ''} {[f.message[:300] for f in r.findings]}"
            for k, r in results.items() if r.outcome is not Outcome.PASSED] + \
        [f"{k}: passed but did not judge {r.extra['not_judged']}" for k, r in results.items() if unjudged(k, r)]


@pytest.mark.parametrize("binding", BINDINGS)
def test_clean_reference_passes_every_check(binding):
    results = outcomes(binding)
    assert results, binding
    bad = [p for p in _problems(results, ABSENT_FROM_THE_BUNDLE, binding) if not p.startswith(NOT_APPLICABLE)]
    assert not bad, bad
    if binding != "file":  # the reference answers the unknown namespace empty and refuses the unknown key
        assert results["oams/recall-single-namespace"].extra["not_judged"] == ["oams/error-codes"]
        assert results["oams/forget-unknown"].extra["not_judged"] == ["oams/forget-204"]
    if binding == "file":  # what the bundle lacks is left not judged, never passed
        assert results["oams/file-bundle"].extra["not_judged"] == ["oams/embeddings-bin-layout"]


@pytest.mark.parametrize("fault", OAMS_FAULTS, ids=lambda f: f.name)
def test_each_fault_fails_exactly_its_breaks(fault):
    seen: set[str] = set()
    cat = catalogues.load("oams")
    for binding in fault.bindings or ("http", "jsonrpc", "stdio"):
        results = outcomes(binding, fault=fault.name, only=observing_checks(fault))
        errors = [f"{k}: {r.reason}" for k, r in results.items() if r.outcome is Outcome.ERROR]
        assert not errors, (binding, errors)
        # a MAY the fault takes away is "not offered" (information), never a break
        got = {r for r in failed_requirements(results) if cat.get(r).keyword is not Keyword.MAY}
        assert got, f"{fault.name} shows nothing on {binding}"
        assert got <= set(fault.breaks), (binding, sorted(got - set(fault.breaks)))
        seen |= got
    assert seen == set(fault.breaks)


#: A variant whose other choice is what a SHOULD advises against: the suite must pass it, warning on that
#: check (and only there), never failing a MUST.
WARNED_BY_DESIGN = {"oams-no-batches": "oams/jsonrpc-batch"}


@pytest.mark.parametrize("variant", OAMS_VARIANTS, ids=lambda v: v.name)
def test_each_variant_passes(variant):
    for binding in variant.bindings or ("http", "jsonrpc", "stdio", "file"):
        results = outcomes(binding, variants=(variant.name,))
        absent = {} if variant.name == WITH_EMBEDDINGS_BIN else ABSENT_FROM_THE_BUNDLE
        bad = [p for p in _problems(results, absent, binding) if not p.startswith(NOT_APPLICABLE)]
        warned = WARNED_BY_DESIGN.get(variant.name)
        if warned:
            assert results[warned].outcome is Outcome.WARNING, (binding, results[warned].outcome)
            assert {f.requirement for f in results[warned].findings} == {warned}, binding
            bad = [p for p in bad if not p.startswith(f"{warned}: warning")]
        if variant.name == "oams-forget-unknown-ok" and binding not in ("http", "file"):
            # success to FORGET of an unknown key shows no error, and off REST no 204: only the sibling
            # namespace's memory surviving a FORGET of its key elsewhere is judged
            assert results["oams/forget-unknown"].extra["not_judged"] == ["oams/error-codes", "oams/error-shape",
                                                                          "oams/forget-204"], binding
        assert not bad, (binding, bad)


def test_every_testable_requirement_has_a_check_and_every_must_a_fault():
    cat = catalogues.load("oams")
    named = {r for c in oams_checks() for r in c.requirements}
    for rid in named:
        cat.get(rid)  # an unknown id raises
    testable = {r.id for r in cat.requirements if r.testable}
    assert testable <= named, sorted(testable - named)
    assert not {r.id for r in cat.requirements if not r.testable} & named
    broken = {b for f in OAMS_FAULTS for b in f.breaks} | set(PROVEN_ELSEWHERE)
    musts = {r.id for r in cat.requirements if r.testable and r.keyword is not Keyword.MAY}
    assert musts <= broken, sorted(musts - broken)
    assert len({f.name for f in OAMS_FAULTS}) == len(OAMS_FAULTS)
    for f in OAMS_FAULTS:
        for b in f.breaks:
            cat.get(b)
    for v in OAMS_VARIANTS:
        for r in v.readings:
            cat.get(r)


def test_catalogue_shape():
    import tomllib
    from importlib import resources

    data = tomllib.loads(resources.files("memconform.suite.oams").joinpath("catalogue.toml").read_text("utf-8"))
    assert data["spec"] == "oams" and data["versions"] == ["0.1"]
    assert data["level_names"] == {"L1": "export", "L2": "read/write", "L3": "read/write + consolidation"}
    cat = catalogues.parse_catalogue(data, "oams")
    assert all(r.id.startswith("oams/") for r in cat.requirements)
    assert {b for r in cat.requirements for b in (r.bindings or ())} <= {"http", "jsonrpc", "stdio", "file"}
    assert cat.claim_for("file") is not None


#: faults the state machine sees too: what it reports must be among their breaks
MACHINE_SEES = ("oams-forget-noop", "oams-soft-deleted-visible", "oams-batch-partial", "oams-upsert-keeps-old",
                "oams-list-cursor-overlap", "oams-duplicate-pairs", "oams-list-ascending", "oams-list-ignores-limit",
               "oams-value-astral-replaced")


@pytest.mark.parametrize("name", MACHINE_SEES)
def test_the_state_machine_sees_sequence_faults(name):
    fault = next(f for f in OAMS_FAULTS if f.name == name)
    result = outcomes("http", fault=name, machine=True)["oams/stateful/store"]
    assert result.outcome is Outcome.FAILED, result.reason
    assert {f.requirement for f in result.findings} <= set(fault.breaks)
    assert "The shortest sequence found" in result.findings[0].message


def test_what_a_failure_kept_from_view_is_not_judged():
    """Absence is never evidence: a target that takes namespaces whose scope holds / or : fails
    scope-no-slash-colon, and the error shape and code of a refusal that never came are not judged,
    not passed; one that answers a query across owners fails cross-owner-refused and leaves the error
    shape not judged."""
    taken = outcomes("http", fault="oams-scope-unchecked", only=("oams/scope-refused",))["oams/scope-refused"]
    assert {f.requirement for f in taken.findings} == {"oams/scope-no-slash-colon"}
    assert taken.extra["not_judged"] == ["oams/error-codes", "oams/error-shape"], taken.extra
    answered = outcomes("http", fault="oams-cross-owner-allowed",
                        only=("oams/cross-owner-refused",))["oams/cross-owner-refused"]
    assert {f.requirement for f in answered.findings} == {"oams/cross-owner-refused"}
    assert answered.extra["not_judged"] == ["oams/error-shape"], answered.extra
