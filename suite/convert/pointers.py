"""JSON pointers over parsed JSON, and JSON equality that tells `true` from `1`.

The mapping table names fields by pointer ("/body/text", "/extensions/memd/chunk_id"); a pointer
ending in "/*" names every member at that level that no other row of the same format names (OMF's
other extension namespaces, a StoredEvent's vendor members). Absent is `MISSING`, never None: null
is a value.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from memconform.suite.interop.model import MISSING

WILDCARD = "*"


def parts(pointer: str) -> list[str]:
    if pointer in ("", "/"):
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def get(value: Any, ptr: str) -> Any:
    """The value at `ptr` (object members only: the table never points into arrays), or MISSING."""
    for key in parts(ptr):
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    return value


def has(value: Any, ptr: str) -> bool:
    return get(value, ptr) is not MISSING


def put(value: dict[str, Any], ptr: str, new: Any) -> None:
    """Set the member at `ptr`, creating objects on the way. A non-object on the way is replaced:
    callers only write into records they built."""
    keys = parts(ptr)
    for key in keys[:-1]:
        nxt = value.get(key)
        if not isinstance(nxt, dict):
            nxt = value[key] = {}
        value = nxt
    value[keys[-1]] = new


def drop(value: Any, ptr: str) -> Any:
    """Remove the member at `ptr` (containers on the way stay, even when left empty: an empty
    object the source had is part of what comes back); returns what was there, or MISSING."""
    keys = parts(ptr)
    for key in keys[:-1]:
        if not isinstance(value, dict) or key not in value:
            return MISSING
        value = value[key]
    if isinstance(value, dict) and keys and keys[-1] in value:
        return value.pop(keys[-1])
    return MISSING


def others(value: Any, ptr: str, named: Iterable[str]) -> Any:
    """For a wildcard pointer ("/extensions/*"): the members of the object at its parent that are
    not `named` (the names other rows give at that level), as one object; MISSING when none."""
    parent = get(value, ptr[: -len("/" + WILDCARD)])
    if not isinstance(parent, dict):
        return MISSING
    rest = {k: v for k, v in parent.items() if k not in set(named)}
    return rest if rest else MISSING


def read(value: Any, ptr: str, siblings: dict[str, set[str]]) -> Any:
    """`get`, or `others` for a wildcard pointer (`siblings`: parent pointer → the names other
    rows give there)."""
    if ptr.endswith("/" + WILDCARD):
        parent = ptr[: -len("/" + WILDCARD)]
        return others(value, ptr, siblings.get(parent, set()))
    return get(value, ptr)


def clone(value: Any) -> Any:
    return copy.deepcopy(value)
