"""UPP round trips (suite/interop/upp.py) between two separate reference servers: one in process
(`--target=reference`), one served over HTTP by `memconform serve` in a child process with its own
stores and export folder. Clean, nothing is lost either way; each interop-only UPP fault is caught
on whichever side it sits, as a loss naming the field, the stage and exactly the fault's requirements."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memconform.reference_impl.faults import FAULTS
from memconform.suite.interop import upp
from memconform.suite.upp.checks._common import USER_NOT_FOUND
from memconform.targets import open_driver

from . import helpers
from .helpers import described

SERVED, IN_PROCESS = "served", "in-process"

#: For each interop-only UPP fault: the fields its losses name, and where they are seen
#: ("export from" / "import into" the faulty side).
EXPECTED = {
    "upp-export-drops-superseded-by": ({"/superseded_by"}, "export from"),
    "upp-export-rounds-confidence": ({"/confidence"}, "export from"),
    "upp-import-drops-validity": ({"/valid_from", "/valid_until"}, "import into"),
}
INTEROP_FAULTS = sorted(n for n, f in FAULTS.items() if f.spec == "upp" and f.interop_only)


# -- the two servers ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(served_reference) -> Iterator:
    """The served reference's UPP client (http, loopback: it shares this machine's files); the
    server is tests/interop/conftest.py's `served_reference`, with stores of its own."""
    driver = open_driver(served_reference.url, timeout=30.0)
    try:
        subject = next(s for s in driver.subjects() if s.spec == "upp")
        yield driver.client(subject)
    finally:
        driver.close()




def in_process(fault: str | None = None, **kw: Any) -> tuple[Any, Any]:
    return helpers.in_process("upp", fault, **kw)


def trip(source, destination, source_label: str, destination_label: str):
    return upp.round_trip(source, destination, version="1.0.0", source_label=source_label,
                          destination_label=destination_label)




# -- clean: nothing lost ----------------------------------------------------------------------------

@pytest.mark.parametrize("direction", ["in-process to served", "served to in-process"])
def test_reference_to_reference_keeps_everything(served, direction):
    driver, local = in_process()
    try:
        if direction == "in-process to served":
            rt = trip(local, served, IN_PROCESS, SERVED)
        else:
            rt = trip(served, local, SERVED, IN_PROCESS)
    finally:
        driver.close()
    assert rt.losses == (), described(rt)
    assert rt.placed == rt.compared == len(upp.PLAN)
    assert rt.kept_everything
    assert (rt.spec, rt.version) == ("upp", "1.0.0")
    # records are named by the source's own event ids
    assert set(rt.extra["records"].values()) == {p.value for p in upp.PLAN}
    assert all(r.startswith("evt_") for r in rt.extra["records"])


def test_stdio_source_keeps_everything(served):
    """The same over the reference's stdio binding (a child process) as the source."""
    driver, local = in_process(binding="stdio")
    try:
        rt = trip(local, served, f"{IN_PROCESS} (stdio)", SERVED)
    finally:
        driver.close()
    assert rt.losses == (), described(rt)
    assert rt.compared == rt.placed


def test_two_in_process_references_share_no_state():
    """A fair round trip needs two stores: what one in-process reference holds, the other does not."""
    (da, a), (db, b) = in_process(), in_process()
    try:
        assert a.ingest("mcf-interop-isolation", "My name is Ada Lovelace.").ok
        assert a.get_events("mcf-interop-isolation").ok
        assert b.get_events("mcf-interop-isolation").error_code == USER_NOT_FOUND
    finally:
        da.close()
        db.close()


# -- faults: each is caught where it happens ---------------------------------------------------------

def test_every_interop_only_upp_fault_has_expectations():
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
    fields, where = EXPECTED[name]
    assert rt.losses, f"{name} on the {side} side went unseen"
    assert {loss.requirement for loss in rt.losses} == set(FAULTS[name].breaks), described(rt)
    assert {loss.field for loss in rt.losses} == fields, described(rt)
    assert {loss.stage for loss in rt.losses} == {f"{where} {label}"}, described(rt)
    assert rt.compared == rt.placed  # a field was lost, never a whole event
    assert not rt.kept_everything
    for loss in rt.losses:  # every loss names a record of the source, what was placed and what came back
        assert loss.record in rt.extra["records"]
        assert loss.expected != loss.got


class RefusingImports:
    """A UPP client whose import_events for the round trip's destination user names a file that is
    not there: the server refuses (-32602) what it was given."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def import_events(self, entity_key, file, **extra):
        if str(entity_key).startswith("mcf-interop-dst"):
            file = f"{file}.gone"
        return self.inner.import_events(entity_key, file, **extra)


def test_refused_package_loses_every_event_at_the_import(served):
    driver, local = in_process()
    try:
        rt = trip(served, RefusingImports(local), SERVED, "refusing")
    finally:
        driver.close()
    assert rt.compared == 0
    assert len(rt.losses) == len(upp.PLAN)
    assert {(loss.field, loss.requirement, loss.stage) for loss in rt.losses} == {
        ("", "upp/import-persists", "import into refusing")}
    assert all(str(loss.got).startswith("refused: upp/import_events -> error -32602") for loss in rt.losses)


@pytest.mark.parametrize("name", ["upp-export-package-no-ontology", "upp-confidence-as-string",
                                  "upp-event-missing-source-type"])
def test_a_file_the_source_wrote_wrong_is_charged_to_the_source_never_to_the_importer_that_refuses_it(name):
    # Found by running every fault against the clean reference both ways: the clean destination rightly
    # refused (no ontology) or skipped (03 §4: a string confidence, a missing source_type) what the faulty
    # source exported, and was charged upp/import-persists for it.
    (df, faulty), (dc, clean) = in_process(name), in_process()
    try:
        rt = trip(faulty, clean, "faulty", "clean")
    finally:
        df.close()
        dc.close()
    assert rt.losses, described(rt)
    assert not [loss for loss in rt.losses if loss.stage.endswith(" clean")], described(rt)
    assert {loss.requirement for loss in rt.losses} <= set(FAULTS[name].breaks) | {"upp/import-persists"}
