"""How a failure message quotes a value a target sent: JSON as it came (non-ASCII kept), cut at a limit.
What a target sends is data, never formatted as anything but a quotation."""

from __future__ import annotations

import json
from typing import Any


def shown(value: Any, limit: int = 300) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def exchange(request: str, sent: Any, status: int | None, *, ok: bool, value: Any, error: Any,
             received_text: str | None, omitted: Any = None, value_label: str = "") -> str:
    """One operation as a failure message tells it: what was sent and what came back (a success
    value, an error, or the raw text). `omitted` is the sentinel a client uses for "no body"."""
    said = f"{request} with {shown(sent)}" if sent is not omitted and sent is not None else request
    head = f"HTTP {status} " if status is not None else ""
    if ok:
        got = f"{head}{value_label}{shown(value)}"
    elif error is not None:
        got = f"{head}error {shown(error)}"
    elif received_text is None:
        got = f"{head}no answer body"
    else:
        got = f"{head}{received_text[:300]!r}"
    return f"sent {said}; got {got}"
