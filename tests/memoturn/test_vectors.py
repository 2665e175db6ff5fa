"""The memoturn id vectors (vectors/memoturn/2026.06/ids.json, generated from hashlib + json by
vectors/build_memoturn.py and re-derived in JavaScript by tests/vectors/node) against the project's
model: memconform.suite.memoturn.model must compute every id the oracle does."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from memconform.suite import catalogue as catalogues
from memconform.suite.memoturn import model
from memconform.vectors import build_memoturn, load, manifest

CASES = load.cases("memoturn", model.VERSION)
BY_ID = {c.id: c for c in CASES}


def test_there_are_vectors():
    assert len(CASES) >= 30
    assert {c.kind for c in CASES} == {"memoturn-id"}
    assert {c.input["type"] for c in CASES} == set(model.TYPES)
    assert any("topic_key" in c.input for c in CASES) and any("topic_key" not in c.input for c in CASES)
    cat = catalogues.load("memoturn")
    for c in CASES:
        for r in c.requirements:
            cat.get(r)


def test_the_readings_worked_values_are_vectors():
    # reading D.1 computed these by hand before any code existed
    ids = {c.expect["id"] for c in CASES}
    assert set(build_memoturn.READING_D1.values()) <= ids


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_model_agrees_with_the_vector(case):
    given = case.input
    assert set(given) <= {"type", "topic_key", "content"}
    assert not model.has_float(given["content"])
    assert model.canonical_content(given["content"]) == case.expect["canonical"]
    assert model.memory_id(given["type"], given.get("topic_key"), given["content"]) == case.expect["id"]
    assert model.ID_PATTERN.fullmatch(case.expect["id"])
    assert case.expect["id"] == "mem_" + case.expect["sha256"][:32]
    memory = model.new_memory(given["type"], "a summary outside the hash", given["content"],
                              topic_key=given.get("topic_key"), keywords="k", source="agent-x",
                              session_id="s-1", embedding=[0.5, 0.25])
    assert model.id_of(memory) == case.expect["id"]


def test_key_order_pairs_give_one_id():
    pairs = [c for c in CASES if "same_id_as" in c.expect]
    assert len(pairs) >= 3
    for c in pairs:
        other = BY_ID[c.expect["same_id_as"]]
        assert "memoturn/id-key-order-insensitive" in c.requirements
        assert list(c.input["content"]) != list(other.input["content"]), "a pair must differ in member order"
        assert model.id_of(c.input) == model.id_of(other.input) == c.expect["id"] == other.expect["id"]


def test_differing_cases_give_other_ids():
    differing = [c for c in CASES if "differs_from" in c.expect]
    assert differing
    for c in differing:
        assert model.id_of(c.input) != model.id_of(BY_ID[c.expect["differs_from"]].input)
    nfc, nfd = BY_ID["memoturn/2026.06/ids/unicode-nfc"], BY_ID["memoturn/2026.06/ids/unicode-nfd"]
    assert nfc.expect["id"] != nfd.expect["id"]


def test_committed_vectors_equal_a_fresh_generation():
    fresh = build_memoturn.build()
    assert build_memoturn.build() == fresh
    for path, data in fresh.items():
        assert (manifest.PACKAGE_DIR / path).read_bytes() == data, "run python -m memconform.vectors.build_memoturn"
    assert {p for p in load.files() if p.startswith("memoturn/")} == set(fresh)


def test_generator_does_not_import_the_project_model():
    tree = ast.parse(Path(build_memoturn.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert not {m for m in imported if m.startswith(("memconform", "suite", "reference_impl", "targets"))}


def test_file_format():
    doc = json.loads((manifest.PACKAGE_DIR / build_memoturn.PATH).read_text(encoding="utf-8"))
    assert doc["spec"] == "memoturn" and doc["version"] == model.VERSION
    for word in ("summary", "keywords", "source", "session_id", "embedding", "ttl"):
        assert word in doc["description"]


def test_the_manifest_signs_the_memoturn_vectors():
    report = manifest.verify()
    assert report.ok, str(report)
    listed = json.loads((manifest.PACKAGE_DIR / "MANIFEST.json").read_text())["files"]
    assert build_memoturn.PATH in listed
