"""Naming JSON values in messages, shared by every spec's model, driver and reference server."""

from __future__ import annotations

import json
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


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: `true` is not `1` (Python's `==` says it is, in any place), `1`
    equals `1.0` (JSON has one number type), object members in any order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def json_differences(sent: Any, back: Any, path: str = "", limit: int = 4) -> list[str]:
    """Where two JSON values differ (by `json_equal`), as "path: sent X, came back Y", the first
    `limit` of them: a message naming the member that changed, not two long values to compare."""
    out: list[str] = []

    def walk(a: Any, b: Any, at: str) -> None:
        if len(out) >= limit or json_equal(a, b):
            return
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            for key in list(a) + [k for k in b if k not in a]:
                member = f"{at}.{key}" if at else str(key)
                if key not in b:
                    out.append(f"{member}: sent, not returned")
                elif key not in a:
                    out.append(f"{member}: not sent, returned")
                else:
                    walk(a[key], b[key], member)
            return
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{at}[{i}]")
            return
        out.append(f"{at or '(the value)'}: sent {json.dumps(a, ensure_ascii=False)[:120]}, came back "
                   f"{json.dumps(b, ensure_ascii=False, default=repr)[:120]}")

    walk(sent, back, path)
    return out[:limit]
