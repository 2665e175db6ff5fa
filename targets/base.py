"""What every driver offers the plugin: the subjects it can be judged on, and a client per subject."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Subject:
    """One column of a result: a target judged on one spec version over one binding."""

    target: str
    spec: str
    version: str
    binding: str

    @property
    def title(self) -> str:
        return f"{self.spec.upper()} {self.version} / {self.binding}"


class Driver(Protocol):
    label: str

    def subjects(self) -> list[Subject]: ...

    def advertised_level(self, subject: Subject) -> str | None: ...

    def client(self, subject: Subject) -> Any: ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...
