"""What a revise successor may legitimately be (§3.5), shared by the checks (suite/ump/checks/l2.py)
and the interop round trip (suite/interop/ump.py), so that both accept the same readings.

§3.5: the successor is "the prior record with the patch applied". It gives no merge rule, so a
member the patch names is either merged into the prior's member, object by object (the §3.5
example's reading), or replaced whole (variant revise-patch-replaces). §2.3 makes time.observed a
transaction time, "when the system learned it": a successor either carries the prior's over or is
stamped at the revise (variant revise-restamps-observed)."""

from __future__ import annotations

import copy
import datetime as _dt
from typing import Any

#: How far a successor's re-stamped time.observed may lie past its time.created (two stamps of one
#: revise, taken a moment apart).
OBSERVED_SLACK = _dt.timedelta(minutes=1)


def merged(base: Any, patch: Any) -> Any:
    """A patch merged into a record as §3.5's example reads (objects member by member, other values
    replaced)."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = copy.deepcopy(base)
        for k, v in patch.items():
            out[k] = merged(base.get(k), v) if isinstance(v, dict) and isinstance(base.get(k), dict) \
                else copy.deepcopy(v)
        return out
    return copy.deepcopy(patch)


def replaced(patched: Any, got: Any) -> bool:
    """Whether `got` is the patch's member taking the prior's place whole (a lifecycle whose status
    the server fills counts: the patch did not name it)."""
    if isinstance(patched, dict) and isinstance(got, dict) and "status" not in patched:
        got = {k: v for k, v in got.items() if k != "status"}
    return got == patched


def parse_time(value: Any) -> _dt.datetime | None:
    """An RFC 3339 date-time as an aware datetime (UTC when it names no offset), or None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = _dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=_dt.timezone.utc)


def observed_carried_or_restamped(prior_observed: Any, succ_time: dict[str, Any]) -> bool:
    """The successor's time.observed is the prior's, carried over, or a transaction time of the
    revise itself, no earlier than the prior's and no later than the successor's own time.created."""
    before, after = parse_time(prior_observed), parse_time(succ_time.get("observed"))
    if after is None or before is None:
        return after == before and succ_time.get("observed") is not None
    if after == before:
        return True
    created = parse_time(succ_time.get("created"))
    return after > before and created is not None and after <= created + OBSERVED_SLACK
