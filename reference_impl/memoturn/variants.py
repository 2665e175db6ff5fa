"""memoturn variants of the reference implementation: each one legitimate choice the typed-memories
page leaves open, made the other way (reference_impl/variants.py; decision points in policy.py).
The suite must pass every one; docs/catalogue-memoturn.md says why the text allows both readings."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from memconform.reference_impl.variants import Variant


def _v(name: str, description: str, readings: tuple[str, ...], bindings: tuple[str, ...] | None = None,
       **overrides: object) -> Variant:
    return Variant(f"memoturn-{name}", "memoturn", description, tuple(f"memoturn/{r}" for r in readings),
                   overrides, since="2026.06", bindings=bindings)


MEMOTURN_VARIANTS: tuple[Variant, ...] = (
    _v("expired-task-revived", "an expired task ingested again answers `revived`: its row is active again with a "
       "fresh expiry (instead of `created`, a new row)", ("expired-task-reingest",),
       expired_task_reingest="revived"),
    _v("ingest-200", "ingest answers 200 instead of 201", ("ingest-status-per-memory",), bindings=("http",),
       ingest_status=200),
    _v("forget-204", "DELETE of a memory answers 204 with no body instead of 200 {\"deleted\", \"txid\"}",
       ("forget-hard",), bindings=("http",), forget_status=204),
    _v("batch-cap-413", "a batch of more than 1,000 memories is refused with 413 payload_too_large instead of "
       "400 invalid_request", ("batch-cap",), over_cap_code="payload_too_large"),
)

BY_NAME = {v.name: v for v in MEMOTURN_VARIANTS}


def apply(policy: Any, names: Iterable[str]) -> Any:
    """`policy` with the overrides of the named memoturn variants; names of other specs' variants are
    passed over (one `reference?variant=…` string serves every spec); two variants setting one
    point two ways are refused."""
    chosen: dict[str, tuple[str, Any]] = {}
    for name in dict.fromkeys(n for n in names if n):
        variant = BY_NAME.get(name)
        if variant is None:
            if name.startswith("memoturn-"):
                raise ValueError(f"unknown memoturn variant {name!r}; known: {', '.join(sorted(BY_NAME))}")
            continue
        for point, value in variant.overrides.items():
            if point in chosen and chosen[point][1] != value:
                raise ValueError(f"variants {chosen[point][0]!r} and {name!r} set {point!r} two ways")
            chosen[point] = (name, value)
    return dataclasses.replace(policy, **{k: v for k, (_, v) in chosen.items()}) if chosen else policy
