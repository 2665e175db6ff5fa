"""What a format declares to the converter, and where the converter finds it: each spec with a
document format names its `Format` and its converter tables in its `Spec` entry (suite/specs.py:
`format`, `converters`), so the converter lists no format itself.

Formats are shown (`--from` choices, the round-trip matrix, the interop report, docs/mapping.md)
in the mapping table's order: the three it began with, then the others in the registry's order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Format:
    name: str
    #: the spec's own spelling ("UMP"), the version the converters read and write, what one record is
    #: called ("record", "item", …)
    label: str
    version: str
    record: str
    #: where a record carries fields of another format (that format's name is the member below it)
    carrier: str
    #: every member of a record the mapping table gives a row, at the depth a conversion treats
    #: differently ("/*": every member no other row names)
    record_fields: tuple[str, ...]
    #: document problems (every problem named with its JSON pointer), [] when valid
    problems: Callable[[Any], list[str]]
    #: problems of one record alone (whether a carried record restores as a valid one)
    record_problems: Callable[[Any], list[str]]
    #: a rich, valid, deterministic document exercising the format's rows of the mapping table
    corpus: Callable[[], Any]
    #: the same for the envelope's members ("document:/…"); none when the document is a bare list
    document_fields: tuple[str, ...] = ()
    #: envelope members that are structure, not data (the record list, a format version)
    envelope: tuple[str, ...] = ()
    #: the envelope member holding the records; None when the document is the list of records
    records_member: str | None = None
    #: the mapping table's pairs between this format and the formats before it (mapping.build_pair);
    #: None for UMP, OMF and UPP, whose rows predate the registry and are written in mapping.py
    rows: Callable[[], list[Any]] | None = None
    #: the pointer of a record's own name in messages (else its position is)
    id_pointer: str = "/id"
    #: a name computed from several members (None: use id_pointer)
    record_name: Callable[[Any], str | None] | None = None
    #: the document form of what was given (one record object, a bare list of records)
    normalize: Callable[[Any], Any] = _same
    #: a record's members in the order the spec lists them
    tidy: Callable[[dict[str, Any]], dict[str, Any]] = _same
    #: JSON Lines: read when the text is not one JSON value, written when the output ends .ndjson/.jsonl
    jsonl: bool = False
    #: what an empty (or BOM-only) text reads as; None: empty text is not JSON
    empty: Callable[[], Any] | None = None
    #: reads a path itself: a document, or None to read the file's bytes as text
    read_path: Callable[[str], Any] | None = None
    #: writes the document itself (`output`: the file name, for its extension)
    dumps: Callable[[Any, str | None], str] | None = None
    #: file-name endings that say the format when --from is not given
    extensions: tuple[str, ...] = ()
    #: how --help says them (" → <name>" follows)
    extensions_help: str = ""
    #: a folder that holds a document of the format, and how the usage error says it
    folder: Callable[[Path], bool] | None = None
    folder_help: str = ""
    #: what OMF's --tenant names in this format when nothing else does (--help)
    tenant_help: str = ""

    def records(self, document: Any) -> list[Any]:
        """The records of a (valid) document, in order."""
        if self.records_member is None or isinstance(document, list):
            return list(document)
        return list(document[self.records_member])

    def record_id(self, rec: Any, index: int) -> str:
        if self.record_name is not None:
            named = self.record_name(rec)
            if named is not None:
                return named
        from memconform.suite.convert.pointers import get

        value = get(rec, self.id_pointer)
        if isinstance(value, str) and value:
            return value
        return f"{'/' + self.records_member if self.records_member else ''}/{index}"


#: The formats the mapping table began with, in its order (the registry lists UPP before OMF); the
#: others follow in the registry's order.
_FIRST = ("ump", "omf", "upp")


@cache
def names() -> tuple[str, ...]:
    """The formats the specs declare, without importing one (collection lists the pairs)."""
    from memconform.suite.specs import SPECS

    declared = [name for name, spec in SPECS.items() if spec.format]
    return tuple([n for n in _FIRST if n in declared] + [n for n in declared if n not in _FIRST])


@cache
def registered() -> dict[str, Format]:
    from memconform.suite.specs import SPECS

    return {name: SPECS[name].load(SPECS[name].format) for name in names()}


def get(name: str) -> Format:
    try:
        return registered()[name]
    except KeyError:
        raise ValueError(f"unknown format {name!r} (formats: {', '.join(names())})") from None


def converters() -> dict[tuple[str, str], Callable[[Any, Any], Any]]:
    """(source, destination) → converter, every spec's tables together."""
    from memconform.suite.specs import SPECS

    table: dict[tuple[str, str], Callable[[Any, Any], Any]] = {}
    for spec in SPECS.values():
        for part in spec.converters:
            table.update(spec.load(part))
    return table
