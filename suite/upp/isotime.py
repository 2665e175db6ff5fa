"""ISO-8601 as UPP uses it (02 §1–§4: "ISO-8601", "datetime"; 03 §3 tasks: "ISO-8601 UTC",
`is_utc_date_time`).

UPP says ISO-8601, not RFC 3339: a date-time without a UTC offset ("2026-01-15T10:30:00", what
Python's `isoformat()` writes for a naive time) is ISO-8601 (a local time), and so is a calendar date alone
("2026-01-15") where the spec asks for no time of day (an event's validity window). What is not
ISO-8601 is refused: another layout ("Thu, 15 Jan 2026 10:30:00 GMT", "15/01/2026"), an epoch number,
a time without a date, an impossible date. Extended format only (with `-` and `:`), which is what
every UPP example and every JSON encoder writes; no dependency on jsonschema, so the reference
server can use it without loading the validators.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

_DATE = r"(\d{4})-(\d{2})-(\d{2})"
_DATE_TIME = re.compile(_DATE + r"[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?")
_DATE_ONLY = re.compile(_DATE)


def is_date_time(value: object) -> bool:
    """An ISO-8601 extended date-time, with or without a UTC offset, seconds and fraction optional."""
    if not isinstance(value, str):
        return False
    m = _DATE_TIME.fullmatch(value)
    if m is None:
        return False
    y, mo, d, h, mi, sec, _, offset = m.groups()
    try:
        datetime(int(y), int(mo), int(d), int(h), int(mi), int(sec or 0))
    except ValueError:
        return False
    if offset and offset not in "Zz":
        hours, minutes = int(offset[1:3]), int(offset.replace(":", "")[3:5] or 0)
        if hours > 23 or minutes > 59:
            return False
    return True


def is_utc_date_time(value: object) -> bool:
    """`is_date_time` in UTC, for the task times (03 §3 upp/get_tasks: "ISO-8601 UTC"): `Z`/`z` or an
    offset of zero (`+00:00`, `-00:00`, `+0000`, `+00`). A date-time without any designator is not
    taken here: ISO-8601 reads such a time as local time, so it does not say it is UTC (red team round
    11: a server writing its local wall-clock time without an offset). Only the task times are read
    so; every other UPP timestamp may be a local time (`is_date_time`)."""
    if not is_date_time(value):
        return False
    offset = _DATE_TIME.fullmatch(value).group(8)  # type: ignore[union-attr]
    return offset is not None and (offset in "Zz" or not offset[1:].replace(":", "").strip("0"))


def has_offset(value: object) -> bool:
    """Whether an ISO-8601 date-time carries a UTC designator or an offset."""
    m = _DATE_TIME.fullmatch(value) if isinstance(value, str) else None
    return m is not None and m.group(8) is not None


def is_date(value: object) -> bool:
    """An ISO-8601 calendar date in extended format (2026-01-15)."""
    if not isinstance(value, str) or _DATE_ONLY.fullmatch(value) is None:
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def is_date_or_date_time(value: object) -> bool:
    return is_date(value) or is_date_time(value)


def instant(value: object) -> datetime | None:
    """An ISO-8601 date-time (or date) as an aware datetime in UTC, one without an offset read as UTC;
    None when it is not one (comparing instants, not spellings: "…Z" and "…+00:00" are one)."""
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
    except ValueError:
        return None
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)
