"""The server's configured ontology (upp/04, upp/07 §8): `user/v1`, one per server instance.

The reference builds on the suite's own model (`memconform.suite.upp.ontology`, a verbatim copy
of the spec's ontology-user-v1.json): the same labels the checks judge by. This module only adds
what the server needs: the LabelDefinitions get_labels answers (as written in the file, so
optional members like classification_guidance go out too) and lookups by name.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from memconform.suite.upp import ontology as model


@dataclass(frozen=True)
class Ontology:
    """An ontology as the server uses it: its identifier, the LabelDefinitions get_labels
    answers, and each label's cardinality (which drives supersession)."""

    id: str
    definitions: tuple[dict[str, Any], ...]
    _by_name: dict[str, dict[str, Any]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {d["name"]: d for d in self.definitions})

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    def cardinality(self, name: str) -> str | None:
        return self._by_name.get(name, {}).get("cardinality")

    def definition(self, name: str) -> dict[str, Any] | None:
        return self._by_name.get(name)

    def label_definitions(self) -> list[dict[str, Any]]:
        """Copies, so no caller can change the server's ontology."""
        return copy.deepcopy(list(self.definitions))


@cache
def user_v1() -> Ontology:
    parsed = model.user_v1()
    return Ontology(parsed.identifier, tuple(model.raw_user_v1()["labels"]))
