"""What the UMP checks need from an implementation, independent of how it is reached.

L0 (the file binding, §4.3) is `UmpFileClient`; the live operations (L1-L3) come with the
server bindings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from memconform.suite.ump.files import Loaded

FileFormat = Literal["json", "ndjson", "md"]


@dataclass(frozen=True)
class ParseOutcome:
    """What an implementation did with one document it was asked to read."""

    sent: str
    accepted: tuple[dict[str, Any], ...] = ()  # the records as the implementation re-emits them
    error: str | None = None  # the spec's error code when refused
    message: str | None = None
    stored_after: tuple[str, ...] = ()  # ids the store holds after the attempt


class UmpFileClient(Protocol):
    version: str

    def exported(self) -> Loaded:
        """The records the implementation emitted, in every format it emitted them."""

    def seeded(self) -> tuple[dict[str, Any], ...] | None:
        """The records it was given before exporting, or None when that is unknown (a plain file)."""

    def parse(self, text: str, fmt: FileFormat) -> ParseOutcome:
        """Ask the implementation to read a document; raises NotApplicable when it cannot be asked."""
