"""OMF round trips (suite/interop/omf.py) between two separate reference implementations: one in
process (`--target=reference`, its HTTP routes and its CLI), one served over HTTP by
`memconform serve` in a child process with its own OMF store. Clean, nothing is lost either way;
each interop-only OMF fault is caught on whichever side it sits; the trust gate is applied to the
source's export as the spec says; a refused export is charged to the right side."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.suite.interop import omf
from memconform.suite.omf import model
from memconform.targets.omf_http import OmfHttpTarget

from . import helpers
from .helpers import described

SERVED, IN_PROCESS = "served", "in-process"
ALL = dict(include_history=True, include_superseded=True, include_expired=True)

#: For each interop-only OMF fault: the fields its losses name (JSON pointers into the item).
EXPECTED = {
    "omf-import-one-pass-edges": {"/extensions/memd/lifecycle/supersedes", "/extensions/memd/lifecycle/superseded_by"},
    "omf-import-dates-override-lifecycle": {"/extensions/memd/lifecycle/lifecycle_updated_at_ms",
                                            "/extensions/memd/lifecycle/expires_at_ms"},
    "omf-export-truncates-content": {"/content"},
}
INTEROP_FAULTS = sorted(n for n, f in FAULTS.items() if f.spec == "omf" and f.interop_only)


# -- the two implementations ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(served_reference) -> Iterator[OmfHttpTarget]:
    """The served reference's OMF routes; the server is tests/interop/conftest.py's
    `served_reference`, with an OMF store of its own."""
    target = OmfHttpTarget(served_reference.url, timeout=30.0)
    try:
        yield target
    finally:
        target.close()




def in_process(fault: str | None = None, **kw: Any) -> tuple[Any, Any]:
    return helpers.in_process("omf", fault, **kw)


def trip(source, destination, source_label: str, destination_label: str):
    return omf.round_trip(source, destination, version="1.0", source_label=source_label,
                          destination_label=destination_label)




class Rewritten:
    """An OmfTarget whose exports are rewritten by `change(document) -> document` (another
    implementation's export, simulated)."""

    def __init__(self, inner: Any, change):
        self.inner, self.change, self.binding = inner, change, inner.binding

    def export(self, tenant: str, **flags: Any):
        run = self.inner.export(tenant, **flags)
        doc = self.change(json.loads(run.document))
        return dataclasses.replace(run, document=json.dumps(doc, ensure_ascii=False))

    def import_document(self, tenant: str, document: Any, **flags: Any):
        return self.inner.import_document(tenant, document, **flags)

    def close(self) -> None:
        self.inner.close()


# -- clean: nothing lost ----------------------------------------------------------------------------

@pytest.mark.parametrize("direction", ["in-process to served", "served to in-process"])
def test_reference_to_reference_keeps_everything(served, direction):
    driver, local = in_process()
    try:
        rt = (trip(local, served, IN_PROCESS, SERVED) if direction == "in-process to served"
              else trip(served, local, SERVED, IN_PROCESS))
    finally:
        driver.close()
    assert rt.losses == (), described(rt)
    assert rt.placed == rt.compared == len(omf.plan())
    assert rt.kept_everything
    assert (rt.spec, rt.version) == ("omf", "1.0")
    assert rt.notes == (), described(rt)
    assert set(rt.extra["records"]) == {p.record for p in omf.plan()}


def test_cli_source_keeps_everything(served):
    """The same through the reference's command line (memd's flags) as the source."""
    driver, local = in_process(binding="cli")
    try:
        rt = trip(local, served, f"{IN_PROCESS} (cli)", SERVED)
    finally:
        driver.close()
    assert rt.losses == (), described(rt)
    assert rt.compared == rt.placed


def test_two_in_process_references_share_no_state():
    (da, a), (db, b) = in_process(), in_process()
    try:
        tenant = model.fresh_tenant("isolation")
        assert a.import_document(tenant, model.dumps(model.document([model.item("mcf isolation")]))).ok
        assert [it["content"] for it in a.export(tenant, **ALL).parsed_document()["memories"]] == ["mcf isolation"]
        assert b.export(tenant, **ALL).parsed_document()["memories"] == []
    finally:
        da.close()
        db.close()


# -- faults: each is caught where it happens ---------------------------------------------------------

def test_every_interop_only_omf_fault_has_expectations():
    assert set(INTEROP_FAULTS) == set(EXPECTED)
    assert len(INTEROP_FAULTS) >= 2


@pytest.mark.parametrize("side", ["source", "destination"])
@pytest.mark.parametrize("name", INTEROP_FAULTS)
def test_interop_fault_is_caught(served, name, side):
    driver, faulty = in_process(name)
    label = f"{IN_PROCESS}?fault={name}"
    try:
        rt = (trip(faulty, served, label, SERVED) if side == "source"
              else trip(served, faulty, SERVED, label))
    finally:
        driver.close()
    assert rt.losses, f"{name} on the {side} side went unseen"
    assert {loss.requirement for loss in rt.losses} == set(FAULTS[name].breaks), described(rt)
    assert {loss.field for loss in rt.losses} == EXPECTED[name], described(rt)
    assert {loss.stage for loss in rt.losses} == {f"import into {label} + export from {label}"}, described(rt)
    assert rt.compared == rt.placed
    for loss in rt.losses:
        assert loss.record in rt.extra["records"]
        assert loss.expected != loss.got


def test_existing_faults_are_caught_across_too(served):
    """Faults the single-target suite already proves show in a round trip as well, on their field.
    (A category-only project reaches B as an explicit project_id: category-ignored shows at A.)"""
    for name, side, field, requirement in (
            ("omf-tags-lowercased", "destination", "/tags", "omf/tags-verbatim"),
            ("omf-drops-supersession", "destination", "/extensions/memd/lifecycle/supersedes",
             "omf/supersedes-replayed"),
            ("omf-category-ignored", "source", "/extensions/memd/project_id", "omf/project-resolution")):
        driver, faulty = in_process(name)
        try:
            rt = trip(faulty, served, name, SERVED) if side == "source" else trip(served, faulty, SERVED, name)
        finally:
            driver.close()
        assert (field, requirement) in {(loss.field, loss.requirement) for loss in rt.losses}, (name, described(rt))


# -- the trust gate and refusals ----------------------------------------------------------------------

def _third_party(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "source": {"app": "nanomem"}}


def test_untrusted_source_export_lands_at_defaults(served):
    """A source exporting under another app name is not trusted by the gate: the destination must
    reset the lifecycle to memd's defaults and drop the edges, while content, tags, project, type
    and mode flow. The reference does exactly that: no loss, and a note says what was compared."""
    driver, local = in_process()
    try:
        rt = trip(Rewritten(local, _third_party), served, "third-party", SERVED)
    finally:
        driver.close()
    assert rt.losses == (), described(rt)
    assert rt.compared == rt.placed
    assert any("trust gate" in n for n in rt.notes), rt.notes


def test_destination_that_trusts_any_source_is_caught(served):
    driver, trusting = in_process("omf-trusts-any-source")
    try:
        rt = trip(Rewritten(served, _third_party), trusting, "third-party", "trusts-any-source")
    finally:
        driver.close()
    assert rt.losses
    assert {loss.requirement for loss in rt.losses} == {"omf/untrusted-defaults"}, described(rt)
    assert {loss.stage for loss in rt.losses} == {"import into trusts-any-source + export from trusts-any-source"}
    fields = {loss.field.rsplit("/", 1)[-1] for loss in rt.losses}
    assert {"status", "tier", "supersedes", "superseded_by"} <= fields, described(rt)


def test_refused_invalid_export_is_charged_to_the_source(served):
    """B refusing an export that breaks OMF 1.0 loses every item, charged to A's export."""
    driver, local = in_process()
    try:
        rt = trip(Rewritten(local, lambda d: {**d, "omf": "2.0"}), served, "exports-2.0", SERVED)
    finally:
        driver.close()
    travelled = [p for p in omf.plan() if p.exported]
    assert rt.compared == 0
    assert len(rt.losses) == len(travelled)
    assert {(loss.field, loss.requirement, loss.stage) for loss in rt.losses} == {
        ("", "omf/omf-version", "export from exports-2.0")}
    assert any("refused" in n for n in rt.notes)
