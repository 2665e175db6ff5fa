"""memoturn faults of the reference implementation (spec "memoturn", since 2026.06): each one
deliberate violation, made apart from the right implementation by wrapping a method
(reference_impl/wraps.py) of the engine (plain keys: `_validate_memory`, `_ingest_one`, `_record`,
`_hit`, `_keyword_channel`, …), of its REST binding (`http.<method>`, http.RestBinding) or its MCP
binding (`mcp.<method>`, mcp.McpBinding), or by setting a decision point of policy.MemoturnPolicy
(`overrides`). engine.py, http.py and mcp.py hold no branch on a fault's name.

`breaks` are exactly the requirements the checks report against each fault."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.reference_impl.faults import Fault

LIVE = ("http", "mcp")


def _f(name: str, description: str, *breaks: str, bindings: tuple[str, ...] | None = None,
       overrides: dict[str, Any] | None = None, wraps: dict[str, Callable[..., Any]] | None = None) -> Fault:
    return Fault(f"memoturn-{name}", "memoturn", description, tuple(f"memoturn/{b}" for b in breaks),
                 since="2026.06", bindings=bindings, overrides=dict(overrides or {}), wraps=dict(wraps or {}))


MEMOTURN_FAULTS: tuple[Fault, ...] = ()

BY_NAME = {f.name: f for f in MEMOTURN_FAULTS}


def by_name(name: str | None) -> Fault | None:
    """The memoturn fault of that name; None for no name or another spec's fault (a `reference?fault=`
    string names one fault for every spec)."""
    if not name:
        return None
    return BY_NAME.get(name)
