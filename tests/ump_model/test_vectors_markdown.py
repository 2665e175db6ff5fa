"""Cross-check the Markdown reader against the project's golden vectors (the independent oracle)."""

import json
from pathlib import Path

import pytest

from memconform.suite.ump.markdown import ProjectionError, from_markdown
from memconform.suite.ump.record import validate

from .strategies import strict_json

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "ump"


def _cases():
    for path in sorted(VECTORS.glob("**/*.json")):
        try:
            doc = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict):
            for case in doc.get("cases", ()):
                if case.get("kind") == "markdown" and "input_md" in case:
                    yield pytest.param(case, id=case["id"])


CASES = list(_cases())


@pytest.mark.skipif(not CASES, reason="no markdown vectors in this checkout")
@pytest.mark.parametrize("case", CASES)
def test_markdown_vector(case):
    expect = case["expect"]
    try:
        record = from_markdown(case["input_md"], source=case["id"])
    except ProjectionError:
        assert expect["verdict"] == "invalid", case["id"]
        return
    if "record" in expect:
        assert strict_json(record) == strict_json(expect["record"])
    if expect["verdict"] == "invalid":
        # Readable Markdown, invalid record: the record model must say where.
        violations = validate(record)
        assert violations
        if "pointer" in expect:
            assert expect["pointer"] in {v.pointer for v in violations}
