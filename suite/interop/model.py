"""Value types for interop results: a round trip and the losses it found.

A round trip moves a known set of records (UMP records, UPP events, OMF items) from a source to a
destination and reads them back; every field the spec promises to keep and did not survive is one
`Loss`, naming the record, the field and the requirement that promised it. Checks turn losses into
findings; the matrix renders round trips side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class _Missing:
    """A field that was not there at all (as opposed to null)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Loss:
    record: str        # the record's id in the source (UMP id, UPP event id, OMF content digest …)
    field: str         # a JSON pointer into the record ("/body/text", "/supersedes")
    requirement: str   # the catalogue requirement id that promised the field survives
    expected: Any      # the value placed in the source
    got: Any           # the value read back (MISSING when absent)
    stage: str         # where it was seen: "export from A", "import into B", "export from B", …
    #: why neither side is to blame: each followed a reading the spec leaves open, and the two readings
    #: together change the record (None: the requirement's side broke it). Such a loss is reported as
    #: a warning, never a failure: it tells a user the move changes data and a spec author where.
    disagreement: str | None = None

    def describe(self) -> str:
        blame = f"readings disagree: {self.disagreement}" if self.disagreement else self.requirement
        return (f"{self.record}{self.field}: expected {self.expected!r}, got {self.got!r} "
                f"({self.stage}; {blame})")


@dataclass(frozen=True)
class RoundTrip:
    """One spec version moved from `source` to `destination` (target labels, or format names for a
    conversion) and back."""

    spec: str
    version: str
    source: str
    destination: str
    placed: int                       # records placed in the source
    compared: int                     # records compared at the end
    losses: tuple[Loss, ...] = ()
    notes: tuple[str, ...] = ()       # what was not compared and why
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def kept_everything(self) -> bool:
        return not self.losses and self.compared == self.placed


def charge_once(losses: list[Loss], charged: set[tuple[str, str]], loss: Loss) -> None:
    """A field is charged once, at the first stage where it was lost (and nothing more of a record
    already charged whole, field "")."""
    if (loss.record, loss.field) in charged or (loss.record, "") in charged:
        return
    charged.add((loss.record, loss.field))
    losses.append(loss)


def loss_json(loss: Loss) -> dict[str, Any]:
    """A loss as the report keeps it; a value JSON cannot hold (MISSING …) as its repr."""
    return {"record": loss.record, "field": loss.field, "requirement": loss.requirement,
            "expected": jsonable(loss.expected), "got": jsonable(loss.got), "stage": loss.stage,
            **({"disagreement": loss.disagreement} if loss.disagreement else {})}


def jsonable(value: Any) -> Any:
    import json

    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)
