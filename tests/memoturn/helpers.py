"""Running the memoturn checks directly against the reference (its REST routes served in a thread,
its MCP server in process): `outcomes(binding, fault=…, variants=…)` → {check id: CheckResult}."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any
from unittest import mock

from memconform.suite.memoturn import checks as _checks  # noqa: F401 (registers them)
from memconform.suite.runner import run_check
from memconform.targets.base import Subject
from memconform.targets.memoturn import reference_part

VERSION = "2026.06"
LIVE = ("http", "mcp")


def memoturn_checks() -> list[Any]:
    from memconform.suite.registry import _REGISTRY

    return [c for c in _REGISTRY.values() if c.spec == "memoturn"]


@contextlib.contextmanager
def reference(binding: str, fault: str | None = None, variants: tuple[str, ...] = ()) -> Iterator[Any]:
    part = reference_part(label="reference", fault=fault, variants=variants, timeout=20.0)
    subject = Subject("reference", "memoturn", VERSION, binding)
    try:
        yield lambda: part.client(subject)
    finally:
        part.close()


# sequences and steps bound the machine; its wall-clock cap is lifted (a loaded machine must not change a verdict)
MACHINE = {"MEMCONFORM_STATEFUL_EXAMPLES": "8", "MEMCONFORM_STATEFUL_STEPS": "12", "MEMCONFORM_STATEFUL_SECONDS": "60",
           "MEMCONFORM_STATEFUL_SHRINK_SECONDS": "0.5"}
MACHINE_OFF = {"MEMCONFORM_STATEFUL_EXAMPLES": "0"}


def environment(values: dict[str, str]) -> Any:
    """The environment with `values` set for the block, restored after."""
    return mock.patch.dict(os.environ, values)


def outcomes(binding: str, fault: str | None = None, variants: tuple[str, ...] = (), *,
             machine: bool | dict[str, str] | None = None, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Every memoturn check of `binding` (or the `only` ones) against the reference. The state
    machine runs (small budget) unless a fault is set, or `machine` says otherwise (or gives its
    budget as MEMCONFORM_STATEFUL_* values)."""
    on = fault is None if machine is None else machine
    env = on if isinstance(on, dict) else MACHINE if on else MACHINE_OFF
    with environment(env), reference(binding, fault, variants) as factory:
        return {c.id: run_check(c, VERSION, binding, factory, None)
                for c in memoturn_checks() if binding in c.bindings and (only is None or c.id in only)}


def failed_requirements(results: dict[str, Any]) -> set[str]:
    return {f.requirement for r in results.values() for f in r.findings}
