"""Checking an operation's params (docs/live-upp.md, "Params"): by name (an object); a missing
required parameter or one of the wrong type is `-32602 Invalid params` with
`data.missing_params` / `data.invalid_params`; unknown extra members are ignored (extension
parameters, upp/08 §5). `info` and `get_labels` take none: params absent or an object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.reference_impl.upp.rpc import ABSENT, INVALID_PARAMS, RpcError
from memconform.suite.jsonvalue import a_json_type

_MISSING = object()


def utf8_text(value: Any) -> bool:
    """A string that can be stored and sent as UTF-8 (JSON allows lone surrogate escapes)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def entity_key(value: Any) -> bool:
    return utf8_text(value) and bool(value)


def string(value: Any) -> bool:
    return utf8_text(value)


def nonempty_string(value: Any) -> bool:
    return utf8_text(value) and bool(value)


def string_array(value: Any) -> bool:
    return isinstance(value, list) and all(utf8_text(v) for v in value)


def positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


#: What each kind of parameter must be, said in the error message.
_SHAPES: dict[Callable[[Any], bool], str] = {
    entity_key: "a non-empty string",
    string: "a string",
    nonempty_string: "a non-empty string",
    string_array: "an array of strings",
    positive_int: "a positive integer",
}




def params_object(params: Any, method: str) -> dict[str, Any]:
    """The params object; `ABSENT` (no params member) reads as `{}`. Anything else that is not
    an object (an array, null, a scalar) is -32602: params are by name."""
    if params is ABSENT:
        return {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {method} takes its params by name (an object), "
                                       f"not {a_json_type(params)}", {"invalid_params": ["params"]})
    return params


def take(params: Any, method: str, required: dict[str, Callable[[Any], bool]],
         optional: dict[str, Callable[[Any], bool]] | None = None) -> dict[str, Any]:
    """The checked parameters (optional ones only when given). Every problem is reported at once."""
    given = params_object(params, method)
    missing, invalid, reasons = [], [], []
    out: dict[str, Any] = {}
    for name, check in {**required, **(optional or {})}.items():
        value = given.get(name, _MISSING)
        if value is _MISSING:
            if name in required:
                missing.append(name)
                reasons.append(f"{name!r} is required")
            continue
        if not check(value):
            invalid.append(name)
            reasons.append(f"{name!r} must be {_SHAPES[check]}")
            continue
        out[name] = value
    if missing or invalid:
        data: dict[str, Any] = {}
        if missing:
            data["missing_params"] = missing
        if invalid:
            data["invalid_params"] = invalid
        raise RpcError(INVALID_PARAMS, f"Invalid params: {'; '.join(reasons)}", data)
    return out
