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
