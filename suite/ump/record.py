"""The UMP memory record: JSON Schemas for 0.1 and 1.0, validation mapped to requirement ids, 0.1 → 1.0.

:func:`validate` never raises on any record value: every problem becomes a :class:`Violation` whose
``requirement`` is the most specific catalogue id (see ``_requirement_for``), ``pointer`` an RFC 6901
pointer into the record and ``message`` a sentence saying what is there and what is required.

Two things the schema language cannot say are checked in code: ``time.valid_to`` not earlier than
``time.valid_from``, and the ``ump`` member (an unknown major version is *rejected*, §8, and the rest of
such a record is not interpreted). Patterns and ``date-time`` are matched with ECMA-262 end-of-input
semantics: Python's ``$`` also matches before a final newline, so ``"urn:ump:abc\\n"`` would otherwise
pass where a JavaScript validator rejects it (schemas/DIFFERENCES.md).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from jsonschema import validators as _validators

from memconform.suite.formats import FORMAT_CHECKER, is_date_time
from memconform.suite.jsonvalue import json_type

from .canonical import json_pointer

__all__ = [
    "VERSIONS",
    "KINDS",
    "VISIBILITIES",
    "schema",
    "detect_version",
    "validate",
    "normalize",
    "Violation",
]

VERSIONS = ("0.1", "1.0")


def known_minor(declared: str) -> str | None:
    """The known version of `declared`'s major ("1.7" -> "1.0", "0.2" -> "0.1"), for a reader that
    takes an unknown minor as additive (§8); None when `declared` is no major.minor of a known major."""
    parts = declared.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return next((v for v in VERSIONS if v.split(".")[0] == parts[0]), None)
KINDS = ("semantic", "episodic", "procedural", "working", "identity")
VISIBILITIES = ("private", "shared", "public")
TIME_FIELDS = ("created", "observed", "valid_from", "valid_to")

REQ_REQUIRED = "ump/record-required-fields"
REQ_VERSION = "ump/record-version"
REQ_UNKNOWN_MAJOR = "ump/reject-unknown-major"
REQ_ID = "ump/record-id-format"
REQ_KIND = "ump/record-kind"
REQ_VISIBILITY = "ump/record-visibility"
REQ_TIME = "ump/record-time"
REQ_TYPES = "ump/record-field-types"
CODE = "invalid_record"

# The members §2 marks REQUIRED (as paths from the record root).
_REQUIRED_MEMBERS = {
    ("ump",), ("id",), ("kind",), ("body",), ("body", "text"), ("scope",), ("scope", "owner"),
    ("scope", "visibility"), ("time",), ("time", "created"),
}


@dataclass(frozen=True)
class Violation:
    pointer: str
    requirement: str
    message: str
    code: str = CODE
    #: The text the violation rests on when it is not the requirement's own quote (a message cites
    #: it instead): an unknown member of a 1.0 record breaks the published schema's
    #: `"additionalProperties": false`, not §2's confidence range the requirement quotes.
    source: str = field(default="", compare=False)


#: What an unknown member of a 1.0 record breaks (see `Violation.source`, `open_versions`).
CLOSED_SOURCE = ('the 1.0 record schema (ump-record.schema.json, shipped with the 1.0 reference): '
                 '“"additionalProperties": false”')

#: What a missing member the text's record leaves unmarked rests on (see `Violation.source`).
SCHEMA_REQUIRED_SOURCE = ('the published record schema (ump-record.schema.json): its "required" lists hold body.text, '
                          'scope.visibility and time.created, which §2\'s record shows without a REQUIRED mark')
#: Those members, as paths.
_SCHEMA_ONLY_REQUIRED = {("body", "text"), ("scope", "visibility"), ("time", "created")}

#: Versions whose text never closes the record: the UMP 0.1 text defines the members of §2 and no
#: rule about others (no "additional members MUST NOT", no schema it makes normative), so a member
#: it does not define (a vendor's `x_acme`) is no violation there. 1.0 keeps the closed record its
#: own schema file publishes (schemas/DIFFERENCES.md).
OPEN_VERSIONS = ("0.1",)

#: Members the published schema requires that a version's text leaves unmarked, by version. UMP 0.1
#: marks `scope.owner` REQUIRED and `user`, `agent`, `session` OPTIONAL and leaves `visibility`
#: unmarked, as it leaves `project`; the schema that requires it ships with the 1.0 reference
#: (round 17). A 0.1 record without it is read as §2.2's narrowest audience, private.
UNMARKED_MEMBERS = {"0.1": frozenset({("scope", "visibility")})}


# --------------------------------------------------------------------------------------------------
# schemas and the validator


def _check_version(version: str) -> None:
    if version not in VERSIONS:
        raise ValueError(f"unknown UMP version {version!r}; known: {', '.join(VERSIONS)}")


@functools.lru_cache(maxsize=None)
def _load_schema(version: str) -> dict:
    text = resources.files(__package__).joinpath("schemas", f"record-{version}.schema.json").read_text("utf-8")
    return json.loads(text)


def schema(version: str) -> dict:
    """The JSON Schema (2020-12) of a record of this UMP version (a fresh copy)."""
    _check_version(version)
    return copy.deepcopy(_load_schema(version))


def _ecma_pattern(pattern: str) -> str:
    """Translate an ECMA-262 pattern's ``$`` (end of input) into Python's ``\\Z``.

    Only ``$`` outside character classes and not escaped is touched; the record schemas use nothing
    else that differs between the two dialects.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
        elif c == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(_ecma_pattern(pattern))


def _pattern_keyword(validator, patrn, instance, schema_):
    if validator.is_type(instance, "string") and not _compiled(patrn).search(instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


_RecordValidator = _validators.extend(Draft202012Validator, {"pattern": _pattern_keyword})


@functools.lru_cache(maxsize=None)
def _validator(version: str):
    return _RecordValidator(_load_schema(version), format_checker=FORMAT_CHECKER)


# --------------------------------------------------------------------------------------------------
# messages




def _show(value: Any) -> str:
    kind = json_type(value)
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return f"an array of {len(value)}"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{kind} {text}"


def _where(pointer: str) -> str:
    return pointer or "the record"


def _messages(error: ValidationError, pointer: str) -> str:
    kw = error.validator
    inst = error.instance
    val = error.validator_value
    where = _where(pointer)
    if kw == "type":
        wanted = " or ".join(val) if isinstance(val, list) else val
        return f"{where} is {_show(inst)}; required: {wanted}"
    if kw == "enum":
        return f"{where} is {_show(inst)}; required one of: {', '.join(json.dumps(v) for v in val)}"
    if kw == "const":
        return f"{where} is {_show(inst)}; required: {json.dumps(val)}"
    if kw == "pattern":
        return f"{where} is {_show(inst)}; required a string matching {val}"
    if kw == "format":
        return f"{where} is {_show(inst)}; required an RFC 3339 date-time such as 2026-06-04T10:00:00Z"
    if kw == "minimum":
        return f"{where} is {_show(inst)}; required a number >= {val}"
    if kw == "maximum":
        return f"{where} is {_show(inst)}; required a number <= {val}"
    return f"{where}: {error.message}"


# --------------------------------------------------------------------------------------------------
# mapping schema errors to requirements


def _requirement_for(parts: tuple, keyword: str) -> str:
    if parts == ("id",):
        return REQ_ID
    if parts == ("kind",):
        return REQ_KIND
    if parts == ("scope", "visibility"):
        return REQ_VISIBILITY
    if len(parts) == 2 and parts[0] == "time" and parts[1] in TIME_FIELDS:
        return REQ_TIME
    if parts == ("ump",):
        return REQ_VERSION
    return REQ_TYPES


def _from_schema_error(error: ValidationError, version: str | None = None) -> list[Violation]:
    base = tuple(error.absolute_path)
    kw = error.validator
    if kw == "required" and isinstance(error.instance, Mapping):
        out = []
        for member in error.validator_value:
            parts = (*base, member)
            if member in error.instance or parts == ("ump",):
                continue  # ("ump",) is judged in _validate
            if parts in UNMARKED_MEMBERS.get(version or "", ()):
                continue
            pointer = json_pointer(parts)
            req = REQ_REQUIRED if parts in _REQUIRED_MEMBERS else REQ_TYPES
            parent = json_pointer(base) or "the record"
            out.append(Violation(pointer, req, f"{pointer} is missing; {parent} requires member {member!r}",
                                 source=SCHEMA_REQUIRED_SOURCE if parts in _SCHEMA_ONLY_REQUIRED else ""))
        return out
    if kw == "additionalProperties" and isinstance(error.instance, Mapping):
        if version in OPEN_VERSIONS:
            return []  # the 0.1 text never closes the record (OPEN_VERSIONS)
        allowed = list(error.schema.get("properties", {}))
        out = []
        for member in error.instance:
            if member in allowed:
                continue
            pointer = json_pointer((*base, member))
            parent = json_pointer(base) or "the record"
            out.append(Violation(
                pointer, REQ_TYPES,
                f"{pointer} is an unknown member; {parent} allows only: {', '.join(allowed)}",
                source=CLOSED_SOURCE,
            ))
        return out
    pointer = json_pointer(base)
    return [Violation(pointer, _requirement_for(base, kw), _messages(error, pointer))]


def _non_finite(value: Any, path: list, out: list[Violation], depth: int = 0) -> None:
    if depth > 200:
        return
    if isinstance(value, float) and not math.isfinite(value):
        pointer = json_pointer(path)
        out.append(Violation(pointer, REQ_TYPES, f"{_where(pointer)} is {value!r}; required a finite JSON number"))
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _non_finite(v, [*path, k], out, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _non_finite(v, [*path, i], out, depth + 1)


def _parse_time(value: str) -> datetime | None:
    try:
        dt = datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo is not None else None


def _time_order(record: Mapping) -> list[Violation]:
    time = record.get("time")
    if not isinstance(time, Mapping):
        return []
    start, end = time.get("valid_from"), time.get("valid_to")
    if not (is_date_time(start) and is_date_time(end)):
        return []
    a, b = _parse_time(start), _parse_time(end)
    if a is None or b is None or b >= a:
        return []
    return [Violation(
        "/time/valid_to", REQ_TIME,
        f"/time/valid_to is {json.dumps(end)}, earlier than /time/valid_from {json.dumps(start)}; "
        f"required valid_to >= valid_from (a validity interval cannot end before it begins)",
    )]


def _major(value: str) -> int | None:
    m = re.match(r"^(\d+)(?:\.|\Z)", value)
    return int(m.group(1)) if m else None


_KNOWN_MAJORS = {_major(v) for v in VERSIONS}


def _version_violation(declared: Any, wanted: str | None) -> tuple[Violation | None, bool]:
    """(violation or None, whether the record must not be interpreted further)."""
    need = f"{wanted!r}" if wanted else " or ".join(repr(v) for v in VERSIONS)
    if isinstance(declared, str):
        major = _major(declared)
        if major is not None and major not in _KNOWN_MAJORS:
            return Violation(
                "/ump", REQ_UNKNOWN_MAJOR,
                f"/ump is {declared!r}, major version {major} is unknown; required {need}. "
                f"A record of an unknown major version is rejected, not reinterpreted (§8)",
            ), True
        if wanted is None and declared in VERSIONS:
            return None, False
        if declared == wanted:
            return None, False
        return Violation("/ump", REQ_VERSION, f"/ump is {declared!r}; required {need}"), False
    return Violation("/ump", REQ_VERSION, f"/ump is {_show(declared)}; required the string {need}"), False


def detect_version(record: Any) -> str | None:
    """The record's ``ump`` when it is one of :data:`VERSIONS`, else None."""
    if isinstance(record, Mapping):
        v = record.get("ump")
        if isinstance(v, str) and v in VERSIONS:
            return v
    return None


def validate(record: Any, version: str | None = None) -> tuple[Violation, ...]:
    """Every way ``record`` is not a valid UMP record of ``version`` (default: its own ``ump``).

    ``()`` means valid. Raises only ValueError for an unknown ``version`` argument.
    """
    if version is not None:
        _check_version(version)
    if not isinstance(record, Mapping):
        return (Violation("", REQ_TYPES, f"the record is {_show(record)}; required a JSON object"),)
    try:
        return _validate(record, version)
    except RecursionError:
        return (Violation("", REQ_TYPES, "the record is nested too deeply to validate"),)


def _validate(record: Mapping, version: str | None) -> tuple[Violation, ...]:
    out: list[Violation] = []
    if "ump" not in record:
        out.append(Violation("/ump", REQ_REQUIRED, "/ump is missing; the record requires member 'ump' (the spec version)"))
        effective = version or VERSIONS[-1]
    else:
        declared = record["ump"]
        violation, stop = _version_violation(declared, version)
        if violation is not None:
            out.append(violation)
        if stop:
            return tuple(out)
        if version is not None:
            effective = version
        elif isinstance(declared, str) and declared in VERSIONS:
            effective = declared
        elif isinstance(declared, str) and _major(declared) == 0:
            effective = "0.1"
        else:
            effective = VERSIONS[-1]

    for error in _validator(effective).iter_errors(record):
        if tuple(error.absolute_path)[:1] == ("ump",):
            continue  # the ump member is judged above
        out.extend(_from_schema_error(error, effective))
    _non_finite(record, [], out)
    out.extend(_time_order(record))

    seen: set[tuple[str, str, str]] = set()
    unique = []
    for v in sorted(out, key=lambda v: (v.pointer, v.requirement, v.message)):
        key = (v.pointer, v.requirement, v.message)
        if key not in seen:
            seen.add(key)
            unique.append(v)
    return tuple(unique)


def normalize(record: Mapping[str, Any], version: str) -> dict:
    """A deep copy of ``record`` declaring ``ump: version`` (§8: 0.1 records imported into 1.0).

    Nothing else changes. The record shape is the same in 0.1 and 1.0, so nothing is lost; an existing
    ``integrity`` block is kept as it was and no longer verifies (the version is part of the signed
    bytes): whoever holds the owner's key re-signs the normalized record.
    """
    _check_version(version)
    if not isinstance(record, Mapping):
        raise ValueError(f"a record is a JSON object, found {json_type(record)}")
    declared = record.get("ump")
    if declared is not None and not (isinstance(declared, str) and _major(declared) in _KNOWN_MAJORS):
        raise ValueError(f"cannot normalize a record declaring ump {declared!r} to {version!r}")
    new = copy.deepcopy(dict(record))
    if "ump" in new:
        new["ump"] = version
    else:
        new = {"ump": version, **new}
    return new
