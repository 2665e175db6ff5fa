"""The user/v1 ontology copy and what suite/upp/ontology.py reads from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from memconform.suite.upp import model, ontology

SPEC_COPY = Path("/work/shared/specs/upp/ontology-user-v1.json")


def test_the_copy_is_the_specs_file():
    if not SPEC_COPY.exists():
        pytest.skip("the spec folder is not on this machine")
    shipped = Path(ontology.__file__).with_name("ontology-user-v1.json")
    assert shipped.read_bytes() == SPEC_COPY.read_bytes()


def test_user_v1_follows_the_ontology_file_format():
    raw = ontology.raw_user_v1()
    assert {"type", "version", "label_count", "labels"} <= set(raw)  # 07 §4, the required members
    assert raw["label_count"] == len(raw["labels"]) == 57  # 04 §5: 57 labels
    for label in raw["labels"]:
        assert model.label_definition_problems(label) == [], label["name"]


def test_identifier_and_counts_per_category():
    onto = ontology.user_v1()
    assert onto.identifier == ontology.USER_V1 == "user/v1"
    counts = {c: sum(1 for lab in onto.labels if lab.category == c) for c in ("WHO", "WHAT", "WHERE", "WHEN", "WHY", "HOW")}
    assert counts == {"WHO": 19, "WHAT": 9, "WHERE": 6, "WHEN": 8, "WHY": 6, "HOW": 9}  # 04 §5 table


def test_cardinality_sets_agree_with_the_specs_examples():
    onto = ontology.user_v1()
    # 02 §3 and 04 §4 name these examples of each cardinality.
    assert {"who_name", "where_home", "when_timezone", "where_current_location"} <= onto.singular
    assert {"who_languages", "what_interests_hobbies"} <= onto.plural
    assert onto.singular.isdisjoint(onto.plural)
    assert onto.singular | onto.plural == onto.label_names
    assert onto.cardinality("who_name") == "singular" and onto.by_name["who_name"].singular


def test_label_definition_keeps_the_optional_members():
    name = ontology.user_v1().by_name["who_name"]
    assert name.classification_guidance and isinstance(name.anti_examples, tuple)
    assert name.semantics() == {"category": "WHO", "cardinality": "singular", "sensitivity": "tier_personal",
                                "durability": "permanent"}


def test_from_label_definitions():
    onto = ontology.from_label_definitions("gaming/v1", [
        {"name": "gaming_handle", "display_name": "Gamer Tag", "description": "handle", "category": "WHO",
         "sensitivity": "tier_personal", "cardinality": "singular", "durability": "transient", "examples": ["x"]}])
    assert onto.identifier == "gaming/v1" and onto.singular == {"gaming_handle"}
