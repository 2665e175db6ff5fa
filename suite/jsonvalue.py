"""Naming JSON values in messages, shared by every spec's model, driver and reference server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: null, boolean, number, string, array or object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return f"non-JSON value ({type(value).__name__})"


def a_json_type(value: Any) -> str:
    """`json_type` with its article, for prose: "an object", "a number", "null"."""
    kind = json_type(value)
    if kind == "null":
        return kind
    return ("an " if kind[0] in "aeiou" else "a ") + kind
