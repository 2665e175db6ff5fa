"""Validity of whole documents and single records, by the suite's own models: the input is refused
when invalid (InvalidInput names each problem), the output is checked before it is returned (a
converter never emits an invalid document)."""

from __future__ import annotations

from typing import Any

from memconform.suite.omf import model as omf_model
from memconform.suite.ump import consent, record as ump_record
from memconform.suite.upp import model as upp_model


#: Deeper than this a document is refused before anything recurses into it (no memory format needs
#: it; Python's recursion would otherwise decide, somewhere in a copy or a validator).
MAX_DEPTH = 256
#: A converted document nests a little deeper than its input (a carrier adds up to six levels), so
#: an input within a few levels of the limit converts, and its conversion may then be refused.
OUTPUT_DEPTH = MAX_DEPTH + 16


def _surrogate(text: str) -> str | None:
    for ch in text:
        if "\ud800" <= ch <= "\udfff":
            return f"U+{ord(ch):04X}"
    return None


def json_problems(document: Any, limit: int = MAX_DEPTH) -> list[str]:
    """What no format accepts: nesting deeper than MAX_DEPTH, and strings that are not Unicode text
    (a lone surrogate, from an escape like "\\ud800": not UTF-8, no canonical form). Iterative: it
    never recurses, whatever the input."""
    stack: list[tuple[Any, str, int]] = [(document, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > limit:
            return [f"{where[:120]}…: nested deeper than {limit} levels"]
        if isinstance(value, str):
            lone = _surrogate(value)
            if lone:
                return [f"{where or '/'}: a lone surrogate ({lone}) is not Unicode text"]
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and _surrogate(key):
                    return [f"{where or '/'}: a member name with a lone surrogate is not Unicode text"]
                stack.append((item, f"{where}/{key}", depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{where}/{i}", depth + 1) for i, item in enumerate(value))
    return []


def ump_record_problems(rec: Any, where: str = "") -> list[str]:
    found = [f"{where}{v.pointer}: {v.message} ({v.requirement})" for v in ump_record.validate(rec)]
    if not found:
        try:
            consent.redact_paths(rec)
        except consent.RedactPathError as exc:
            found.append(f"{where}/consent/redact: {exc}")
    return found


def ump_problems(document: Any) -> list[str]:
    if not isinstance(document, list):
        return ["/: a UMP document is an array of records (or one record object)"]
    return [p for i, rec in enumerate(document) for p in ump_record_problems(rec, f"/{i}")]


def _omf_binding(problems: list[Any]) -> list[Any]:
    """The problems that make a document unreadable: a SHOULD's (an informational date's form) does
    not, as an importer takes such a document (created_at is "not used on import")."""
    from memconform.suite import catalogue
    from memconform.suite.outcomes import Keyword

    cat = catalogue.load("omf")
    return [p for p in problems if cat.get(p.requirement).keyword is Keyword.MUST]


def omf_problems(document: Any) -> list[str]:
    # produced_by_memd=False: a third-party document (and every converted one) need not carry memd's
    # namespace on each item.
    return [str(p) for p in _omf_binding(omf_model.problems(document, produced_by_memd=False))]


def omf_item_problems(item: Any) -> list[str]:
    probe = {"omf": omf_model.VERSION, "exported_at": "2000-01-01T00:00:00Z", "memories": [item]}
    return [str(p).replace("/memories/0", "", 1)
            for p in _omf_binding(omf_model.problems(probe, produced_by_memd=False))]


def upp_problems(document: Any) -> list[str]:
    return [f"{p} ({p.requirement})" for p in upp_model.export_package_problems(document)]


def upp_event_problems(event: Any) -> list[str]:
    return [f"{p} ({p.requirement})" for p in upp_model.stored_event_problems(event)]


def __getattr__(name: str) -> Any:
    # `<format>_problems` for a format a spec declares (suite/specs.py): its document validator
    if name.endswith("_problems"):
        from memconform.suite.convert import formats

        fmt = name.removesuffix("_problems")
        if fmt in formats.names():
            return formats.get(fmt).problems
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def problems(fmt: str, document: Any, *, output: bool = False) -> list[str]:
    from memconform.suite.convert import formats

    found = json_problems(document, OUTPUT_DEPTH if output else MAX_DEPTH)
    return found or list(dict.fromkeys(formats.get(fmt).problems(document)))   # once each, in order
