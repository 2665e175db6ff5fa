"""Variant switches of the reference implementation: the mirror of faults (DESIGN.md, idea 5).

A fault is one deliberate violation: the suite must fail exactly its requirements. A *variant* is
one legitimate choice the spec leaves open, made the other way from the reference's default
reading: the suite must pass it as it passes the reference — no MUST failure, no error, the top
level reached (tests/harness/test_variants.py). A check that fails a variant is a defect, exactly
like a check that passes a fault.

Each spec's reference implementation reads its open choices from one policy object
(`reference_impl/<spec>/policy.py`): a frozen dataclass whose defaults are the reference readings.
A variant is an entry in that spec's table (`reference_impl/<spec>/variants.py`) that overrides
decision points; several variants combine (`reference?variant=A&variant=B`) as long as they do
not set one decision point two ways.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar


@dataclass(frozen=True)
class Variant:
    name: str
    spec: str
    #: the other legitimate choice, in a sentence
    description: str
    #: the requirement ids whose reading this variant pins (docs/catalogue-<spec>.md says why the
    #: text allows both readings)
    readings: tuple[str, ...]
    #: decision point of the spec's policy -> the value this variant gives it
    overrides: Mapping[str, Any] = field(default_factory=dict)
    since: str = "0.1"  # first spec version the variant applies to
    #: the bindings on which the choice shows; None: every binding of the spec the reference serves
    bindings: tuple[str, ...] | None = None

    def applies_to(self, spec: str, version: str) -> bool:
        from memconform.suite.catalogue import version_key

        return spec == self.spec and version_key(version) >= version_key(self.since)


def _collect() -> dict[str, Variant]:
    from memconform.suite.specs import SPECS

    table: dict[str, Variant] = {}
    for v in (v for spec in SPECS.values() for part in spec.variants for v in spec.load(part)):
        if v.name in table:
            raise ValueError(f"variant {v.name!r} is declared twice")
        table[v.name] = v
    return table


_TABLE: dict[str, Variant] | None = None


def _variants() -> dict[str, Variant]:
    # Built on first use, not at import: each spec's table imports `Variant` from here, and the
    # engines import their tables, so building it at import would be circular.
    global _TABLE
    if _TABLE is None:
        _TABLE = _collect()
    return _TABLE


def __getattr__(name: str) -> Any:  # `VARIANTS`: every variant by name
    if name == "VARIANTS":
        return _variants()
    raise AttributeError(name)


class VariantError(ValueError):
    """Unknown variant names, or variants that set one decision point two ways."""


def check_names(names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n for n in names if n))
    table = _variants()
    unknown = [n for n in names if n not in table]
    if unknown:
        raise VariantError(f"unknown variant(s) {', '.join(map(repr, unknown))}; known variants: "
                           f"{', '.join(sorted(table)) or 'none'} (memconform variants lists them)")
    return names


P = TypeVar("P")


def apply(policy: P, spec: str, names: Iterable[str]) -> P:
    """`policy` (the spec's defaults) with the overrides of the named variants of `spec`; names of
    other specs' variants are ignored, so one `reference?variant=…` string can serve every spec."""
    chosen: dict[str, tuple[str, Any]] = {}
    for name in check_names(names):
        variant = _variants()[name]
        if variant.spec != spec:
            continue
        for point, value in variant.overrides.items():
            if not hasattr(policy, point):
                raise VariantError(f"variant {name!r} sets {point!r}, which the {spec} policy does not have")
            if point in chosen and chosen[point][1] != value:
                raise VariantError(f"variants {chosen[point][0]!r} and {name!r} set the {spec} decision point "
                                   f"{point!r} two ways")
            chosen[point] = (name, value)
    return dataclasses.replace(policy, **{k: v for k, (_, v) in chosen.items()}) if chosen else policy
