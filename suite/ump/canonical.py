"""Canonical JSON for hashing and signing (UMP §6.1): RFC 8785 (JCS) via the ``rfc8785`` library.

The library refuses integers outside the IEEE 754 "safe" range ±(2**53 − 1), because JSON numbers are
doubles. Such an integer that a double represents exactly (``2**53``, ``10**21``) is converted to that
float before canonicalization, so it serializes as the JavaScript reference implementation prints the
same number (``9007199254740992``, ``1e+21``). So is an integer whose digits are exactly how ECMAScript
prints its nearest double (``57497085263901210``, which is how JavaScript writes 5.749708526390121e16): that
text can only have come from a double, and its canonical form is itself. Any other integer a double cannot
hold exactly (``2**53 + 1``) has no canonical form: :class:`CanonicalizationError` is raised and names the JSON pointer of the offending value. The
same holds for NaN/infinities, lone surrogates, non-string keys and non-JSON types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import rfc8785

__all__ = ["CanonicalizationError", "canonical_bytes", "without_integrity", "json_pointer"]

_SAFE = 2**53 - 1


class CanonicalizationError(ValueError):
    """The value has no RFC 8785 canonical form; ``pointer`` says where (RFC 6901)."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(f"{message} at {pointer or '(root)'!s}")
        self.pointer = pointer
        self.reason = message


def json_pointer(parts: Any) -> str:
    """RFC 6901 pointer for a sequence of keys/indices (``~`` → ``~0``, ``/`` → ``~1``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _has_surrogate(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _prepare(value: Any, path: list) -> Any:
    """Return a JSON-only copy rfc8785 accepts, or raise CanonicalizationError with the pointer."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_SAFE <= value <= _SAFE:
            return value
        try:
            as_float = float(value)
        except OverflowError:
            raise CanonicalizationError(
                f"integer {value} is too large for a JSON number (IEEE 754 double)", json_pointer(path)
            ) from None
        if int(as_float) == value:
            return as_float
        if rfc8785.dumps(as_float) == str(value).encode("ascii"):
            # The integer is digit for digit how ECMAScript (and so JCS) prints the nearest double, e.g.
            # 57497085263901210 for 5.749708526390121e16: JSON written by a JavaScript implementation.
            return as_float
        raise CanonicalizationError(
            f"integer {value} is outside ±(2**53−1) and no IEEE 754 double equals it "
            f"(nearest {as_float!r}), so it has no JCS form",
            json_pointer(path),
        )
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise CanonicalizationError(f"{value!r} is not a JSON number", json_pointer(path))
        return value
    if isinstance(value, str):
        if _has_surrogate(value):
            raise CanonicalizationError("string contains a lone surrogate (not UTF-8)", json_pointer(path))
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise CanonicalizationError(f"object key {k!r} is not a string", json_pointer(path))
            if _has_surrogate(k):
                raise CanonicalizationError(
                    "object key contains a lone surrogate (not UTF-8)", json_pointer([*path, k])
                )
            out[k] = _prepare(v, [*path, k])
        return out
    if isinstance(value, (list, tuple)):
        return [_prepare(v, [*path, i]) for i, v in enumerate(value)]
    raise CanonicalizationError(f"{type(value).__name__} is not a JSON type", json_pointer(path))


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value (see the module docstring for big integers)."""
    try:
        # rfc8785 accepts exactly the values _prepare returns unchanged (safe integers, finite
        # floats, UTF-8 strings, string keys, dicts and lists) and raises on every other: those
        # take the walk below, which converts big integers and names the pointer of what is wrong.
        # The walk alone doubles the cost of every hash and signature.
        return rfc8785.dumps(value)
    except Exception:  # noqa: BLE001 - any refusal (domain, type, encoding, depth) takes the walk
        pass
    try:
        prepared = _prepare(value, [])
    except RecursionError:
        raise CanonicalizationError("value is nested too deeply to canonicalize") from None
    try:
        return rfc8785.dumps(prepared)
    except rfc8785.CanonicalizationError as exc:  # pragma: no cover - _prepare catches these first
        raise CanonicalizationError(str(exc)) from exc
    except RecursionError:
        raise CanonicalizationError("value is nested too deeply to canonicalize") from None


def without_integrity(record: Mapping[str, Any]) -> dict:
    """Shallow copy of ``record`` without its ``integrity`` member (what §2.8 hashes)."""
    return {k: v for k, v in record.items() if k != "integrity"}
