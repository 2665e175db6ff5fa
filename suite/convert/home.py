"""A record going back to the format it came from: restored from what it carried, when that is
still a valid record of its format (every direction's converter starts here)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memconform.suite.convert import carry, mapping, memoturnside, oamsside, omfside, umpside, validate
from memconform.suite.convert.common import Ctx


@dataclass(frozen=True)
class _Kind:
    noun: str                                   # "UMP record" …, for the warning
    tidy: Callable[[dict[str, Any]], dict[str, Any]]
    problems: Callable[[dict[str, Any]], list[Any]]


KINDS = {
    "ump": _Kind("UMP record", umpside.tidy, validate.ump_record_problems),
    "omf": _Kind("OMF item", omfside.tidy, validate.omf_item_problems),
    # an event is judged without its package: the entity_key lives on the package
    "oams": _Kind("OAMS memory", oamsside.tidy, validate.oams_memory_problems),
    "upp": _Kind("UPP event", lambda event: event, lambda event: validate.upp_event_problems({**event, "entity_key": "-"})),
    "memoturn": _Kind("memoturn memory", memoturnside.tidy, validate.memoturn_memory_problems),
}


def carried_home(host_record: Any, host: str, fmt: str, natives: Sequence[Any], rid: str, ctx: Ctx) -> dict[str, Any] | None:
    """The `fmt` record the `host`-format record carries (`natives`: the pair fmt → host), restored and
    valid; None when it carries none, or (with a warning) when what it carries does not restore."""
    home = carry.payload_in(host_record, host, fmt)
    if home is None:
        return None
    kind = KINDS[fmt]
    record = kind.tidy(carry.restore(home, host_record, natives, mapping.lost_pointers(fmt, host)))
    problems = kind.problems(record)
    if not problems:
        return record
    ctx.warn(f"{rid}: the {kind.noun} it carries does not restore ({problems[0]}); "
             f"converted as a new {kind.noun.split()[1]}")
    return None
