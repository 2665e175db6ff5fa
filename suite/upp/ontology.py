"""The user/v1 ontology of UPP 1.0.0 (upp/04-ontology.md §5, upp/07-ontology-management.md §4).

`ontology-user-v1.json` is a verbatim copy of the spec's `ontology-user-v1.json`; this module reads
it and answers the questions the checks ask: which labels exist, which are singular (they supersede)
and which plural (they accumulate).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

SOURCE_TYPES = ("user_stated", "agent_observed", "inferred")  # 02 §5 SourceType

#: The identifier a server configured with this file reports in upp/info (`<type>/v<major>`, 07 §5).
USER_V1 = "user/v1"


@dataclass(frozen=True)
class LabelDefinition:
    """02 §3: one label of an ontology."""

    name: str
    display_name: str
    description: str
    category: str
    sensitivity: str
    cardinality: str
    durability: str
    examples: tuple[str, ...]
    classification_guidance: str | None = None
    anti_examples: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> LabelDefinition:
        return cls(
            name=raw["name"], display_name=raw["display_name"], description=raw["description"],
            category=raw["category"], sensitivity=raw["sensitivity"], cardinality=raw["cardinality"],
            durability=raw["durability"], examples=tuple(raw["examples"]),
            classification_guidance=raw.get("classification_guidance"),
            anti_examples=tuple(raw.get("anti_examples", ())),
        )

    @property
    def singular(self) -> bool:
        return self.cardinality == "singular"

    def semantics(self) -> dict[str, str]:
        """What 07 §5 forbids changing within a major version."""
        return {"category": self.category, "cardinality": self.cardinality,
                "sensitivity": self.sensitivity, "durability": self.durability}


@dataclass(frozen=True)
class Ontology:
    type: str
    version: str
    label_count: int
    labels: tuple[LabelDefinition, ...]

    @property
    def identifier(self) -> str:
        return f"{self.type}/v{self.version.split('.')[0]}"

    @functools.cached_property
    def by_name(self) -> dict[str, LabelDefinition]:
        return {label.name: label for label in self.labels}

    @property
    def label_names(self) -> frozenset[str]:
        return frozenset(self.by_name)

    def cardinality(self, name: str) -> str:
        return self.by_name[name].cardinality

    @property
    def singular(self) -> frozenset[str]:
        return frozenset(n for n, label in self.by_name.items() if label.cardinality == "singular")

    @property
    def plural(self) -> frozenset[str]:
        return frozenset(n for n, label in self.by_name.items() if label.cardinality == "plural")


def raw_user_v1() -> dict[str, Any]:
    """The file as JSON (a fresh copy each call: callers may change it)."""
    text = resources.files("memconform.suite.upp").joinpath("ontology-user-v1.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def user_v1() -> Ontology:
    raw = raw_user_v1()
    return Ontology(type=raw["type"], version=raw["version"], label_count=raw["label_count"],
                    labels=tuple(LabelDefinition.from_json(item) for item in raw["labels"]))


def from_label_definitions(identifier: str, definitions: list[dict[str, Any]]) -> Ontology:
    """An ontology as a server describes it through upp/get_labels (definitions already validated)."""
    type_, _, version = identifier.partition("/v")
    return Ontology(type=type_, version=version or "0", label_count=len(definitions),
                    labels=tuple(LabelDefinition.from_json(d) for d in definitions))
