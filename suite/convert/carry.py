"""Carrying one format's fields inside another, and bringing them home.

A converted record holds, at `CARRIER[target]/<source>`, a payload

    {"fields": <the source record minus its mapped and lost fields>,
     "absent": [<source pointers the target had to invent a value for>],
     "document": <the source envelope's members other records cannot hold>}

so the way back is mechanical: start from `fields`, put back every mapped field from the native
field it went to (unless the payload kept the original because the native value could not say it
exactly, or it was never there: `absent`), drop what the table says is lost. A record that carries
the payload of the format it is converted to is *going home*: the carried original is restored and
what the intermediate format added (its defaults and hints) is left behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memconform.suite.convert import mapping
from memconform.suite.convert.pointers import MISSING, clone, drop, get, has, put


def _always(value: Any) -> bool:
    return True


@dataclass(frozen=True)
class Native:
    """A mapped field: `a` in the source record goes to `b` in the target record, unchanged, when
    `fits(value)`; otherwise the value travels in the extension."""

    a: str
    b: str
    fits: Callable[[Any], bool] = _always


def carrier(host: str, fmt: str) -> str:
    return f"{mapping.CARRIER[host]}/{fmt}"


def payload_in(record: Any, host: str, fmt: str) -> dict[str, Any] | None:
    """The payload of `fmt` a `host`-format record carries, when it is well formed."""
    found = get(record, carrier(host, fmt))
    if isinstance(found, dict) and isinstance(found.get("fields"), dict):
        return found
    return None


def attach(record: dict[str, Any], host: str, fmt: str, payload: dict[str, Any]) -> None:
    put(record, carrier(host, fmt), payload)


def move_natives(source_record: Any, natives: Sequence[Native], out: dict[str, Any],
                 refuse: Iterable[str] = ()) -> list[str]:
    """Write every native field whose value fits into `out`; the source pointers moved. `refuse`:
    pointers the caller found unfit for reasons beyond the value (an id already taken)."""
    refused = set(refuse)
    moved = []
    for n in natives:
        value = get(source_record, n.a)
        if value is MISSING or n.a in refused or not n.fits(value):
            continue
        put(out, n.b, clone(value))
        moved.append(n.a)
    return moved


def payload(source_record: Any, *, moved: Iterable[str], natives: Sequence[Native], built: Any,
            lost: Iterable[str], also_drop: Iterable[str] = (), document: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """The payload for `source_record` once `built` (the target record) holds the moved fields."""
    fields = clone(source_record)
    for ptr in [*moved, *lost, *also_drop]:
        drop(fields, ptr)
    absent = [n.a for n in natives if not has(source_record, n.a) and has(built, n.b)]
    out: dict[str, Any] = {"fields": fields}
    if absent:
        out["absent"] = absent
    if document:
        out["document"] = clone(document)
    return out


def restore(carried: dict[str, Any], host_record: Any, natives: Sequence[Native], lost: Iterable[str]) -> dict[str, Any]:
    """The record `carried` came from: its fields, the mapped ones read back from `host_record`
    (`natives`: the pair that carried it, source → host), minus what is lost (a carrier is not
    trusted to bring back what the table drops, e.g. a UMP signature)."""
    record = clone(carried["fields"])
    absent = carried.get("absent")
    absent = set(a for a in absent if isinstance(a, str)) if isinstance(absent, list) else set()
    for n in natives:
        if has(record, n.a) or n.a in absent:
            continue
        value = get(host_record, n.b)
        if value is not MISSING:
            put(record, n.a, clone(value))
    for ptr in lost:
        drop(record, ptr)
    return record


def carried_document(records: Iterable[Any], host: str, fmt: str) -> dict[str, Any]:
    """The envelope members the first record carrying a `fmt` payload brought."""
    for record in records:
        found = payload_in(record, host, fmt)
        if found is not None and isinstance(found.get("document"), dict):
            return found["document"]
    return {}
