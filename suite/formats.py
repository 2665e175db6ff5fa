"""The JSON Schema format checker every spec's model validates with.

jsonschema checks `date-time` only with the format-nongpl extra and a format checker; its RFC 3339
pattern ends in `$`, which lets a trailing newline through, so `date-time` is tightened here once.
"""

from __future__ import annotations

from jsonschema import Draft202012Validator, FormatChecker

FORMAT_CHECKER = FormatChecker()
FORMAT_CHECKER.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
_LIBRARY_DATE_TIME = Draft202012Validator.FORMAT_CHECKER.checkers["date-time"]


@FORMAT_CHECKER.checks("date-time", raises=_LIBRARY_DATE_TIME[1])
def _date_time(instance: object) -> bool:
    if isinstance(instance, str) and instance.endswith("\n"):
        return False
    return _LIBRARY_DATE_TIME[0](instance)


def is_date_time(value: object) -> bool:
    """RFC 3339 `date-time` (date, time, and a UTC offset or Z), as the validators check it."""
    return isinstance(value, str) and FORMAT_CHECKER.conforms(value, "date-time")
