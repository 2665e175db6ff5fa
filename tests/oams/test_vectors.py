"""The OAMS golden vectors (vectors/oams/0.1/, hand-written from the spec text) against the model and
the reference engine: valid memories have no problem and are stored; each invalid one breaks the rule
it names and is refused with -32003."""

from __future__ import annotations

import pytest

from memconform.reference_impl.oams.engine import OamsError, OamsService
from memconform.suite import catalogue as catalogues
from memconform.suite.oams import model
from memconform.vectors.load import cases

CASES = cases("oams", "0.1")


def test_there_are_vectors():
    assert len([c for c in CASES if c.expect["verdict"] == "valid"]) >= 10
    assert len([c for c in CASES if c.expect["verdict"] == "invalid"]) >= 20
    cat = catalogues.load("oams")
    for c in CASES:
        for r in c.requirements:
            cat.get(r)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_model_and_reference_agree_with_the_vector(case):
    problems = model.memory_problems(case.input)
    service = OamsService()
    try:
        if case.expect["verdict"] == "valid":
            assert problems == []
            stored = service.store(case.input)
            assert stored["value"] == case.input["value"]
        else:
            assert {p.requirement for p in problems} & set(case.requirements), problems
            if case.expect.get("store") == "timestamps-assigned":
                stored = service.store(case.input)
                assert model.memory_problems(stored) == []
                return
            with pytest.raises(OamsError) as info:
                service.store(case.input)
            assert info.value.code == case.expect["error"]
    finally:
        service.close()
