"""A record going back to the format it came from: restored from what it carried, when that is
still a valid record of its format (every direction's converter starts here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memconform.suite.convert import carry, formats, mapping
from memconform.suite.convert.common import Ctx


def carried_home(host_record: Any, host: str, fmt: str, natives: Sequence[Any], rid: str, ctx: Ctx) -> dict[str, Any] | None:
    """The `fmt` record the `host`-format record carries (`natives`: the pair fmt → host), restored and
    valid; None when it carries none, or (with a warning) when what it carries does not restore."""
    home = carry.payload_in(host_record, host, fmt)
    if home is None:
        return None
    kind = formats.get(fmt)
    record = kind.tidy(carry.restore(home, host_record, natives, mapping.lost_pointers(fmt, host)))
    problems = kind.record_problems(record)
    if not problems:
        return record
    ctx.warn(f"{rid}: the {mapping.NAMES[fmt]} {mapping.RECORD[fmt]} it carries does not restore ({problems[0]}); "
             f"converted as a new {mapping.RECORD[fmt]}")
    return None
