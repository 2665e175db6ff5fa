"""The UPP 1.0.0 data model as memconform judges it: Event, StoredEvent, LabelDefinition,
ExportPackage, TaskStatus and the operation results (upp/02-data-models.md, upp/03-operations.md).

The shapes live in `schemas/*.schema.json` (JSON Schema 2020-12, additional members allowed,
date-time formats asserted); this module validates against them and turns each validation error
into a `Problem`: a sentence for a human, carrying the catalogue requirement it breaks, so a
check can charge the precise id (a missing member, a value outside a vocabulary, a bad timestamp).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from referencing import Registry, Resource

from memconform.suite.formats import FORMAT_CHECKER, is_date_time
from memconform.suite.upp import isotime
from memconform.suite.upp.ontology import SOURCE_TYPES  # noqa: F401  re-exported

EVENT_STATUSES = ("valid", "staged", "superseded")  # 02 §5 EventStatus
TASK_STATUSES = ("pending", "running", "completed", "failed")  # 03 §3 upp/get_tasks
SENSITIVITY_TIERS = ("tier_public", "tier_work", "tier_personal", "tier_sensitive", "tier_internal")
CARDINALITIES = ("singular", "plural")
DURABILITIES = ("permanent", "transient", "ephemeral")
CATEGORIES = ("WHO", "WHAT", "WHERE", "WHEN", "WHY", "HOW", "PREF", "REL", "META")  # 04 §3

SCHEMA_NAMES = ("event", "stored-event", "label-definition", "export-package", "task-status",
                "info-result", "export-result", "import-result", "delete-result",
                "contextualize-result")


class Problem(str):
    """One thing wrong with a value: the sentence, and the requirement it breaks."""

    requirement: str

    def __new__(cls, message: str, requirement: str) -> Problem:
        obj = super().__new__(cls, message)
        obj.requirement = requirement
        return obj


# -- date-times ------------------------------------------------------------------------------------

#: UPP's timestamps are ISO-8601 (02 §2 "datetime … (ISO-8601)"), offset optional; an event's
#: validity window may also be a date alone (suite/upp/isotime.py says why).
is_iso_date_time = isotime.is_date_time
#: RFC 3339 (with an offset): what the reference writes, a stricter form than UPP asks for.
is_rfc3339 = is_date_time

UPP_FORMATS = FormatChecker()
UPP_FORMATS.checkers = dict(FORMAT_CHECKER.checkers)
# A format judges strings only; a value of another type is the schema's `type` business.
UPP_FORMATS.checks("upp-date-time")(lambda v: not isinstance(v, str) or isotime.is_date_time(v))
# The task times only: 03 §3 says "ISO-8601 UTC" of them and of no other timestamp.
UPP_FORMATS.checks("upp-utc-date-time")(lambda v: not isinstance(v, str) or isotime.is_utc_date_time(v))
UPP_FORMATS.checks("upp-date-or-date-time")(lambda v: not isinstance(v, str) or isotime.is_date_or_date_time(v))


# -- schemas ---------------------------------------------------------------------------------------

def _sid(name: str) -> str:
    return f"urn:memconform:upp:schema:{name}"


@functools.cache
def schema(name: str) -> dict[str, Any]:
    text = resources.files("memconform.suite.upp").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")
    return json.loads(text)


@functools.cache
def _registry() -> Registry:
    return Registry().with_resources((_sid(n), Resource.from_contents(schema(n))) for n in SCHEMA_NAMES)


@functools.cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(schema(name), registry=_registry(), format_checker=UPP_FORMATS)


# -- routing a validation error to its requirement ------------------------------------------------

def _event_rule(prop: str | None, keyword: str, stored: bool) -> str:
    if keyword == "required" and prop is None:
        return "upp/stored-event-required-fields" if stored else "upp/event-required-fields"
    if prop == "confidence" and keyword in ("minimum", "maximum"):
        return "upp/event-confidence-range"
    if prop == "source_type":
        return "upp/event-source-type"
    if stored and prop == "status":
        return "upp/stored-event-status"
    if stored and prop == "created_at":
        return "upp/stored-event-created-at"
    return "upp/stored-event-field-types" if stored else "upp/event-field-types"


#: For each shape: the requirement of a problem with the shape itself, and the members that hold
#: StoredEvents (whose problems are routed as StoredEvent problems).
_SHAPE_RULE = {
    "label-definition": "upp/label-definition-field-types",
    "export-package": "upp/export-package-fields",
    "task-status": "upp/get-tasks-returns-statuses",
    "info-result": "upp/info-result-fields",
    "export-result": "upp/export-result-shape",
    "import-result": "upp/import-result-shape",
    "delete-result": "upp/delete-result-shape",
    "contextualize-result": "upp/contextualize-result-shape",
}
_EVENT_LISTS = {"export-package": "events", "task-status": "result", "contextualize-result": "events"}


def _route(name: str, error: ValidationError) -> str:
    path = list(error.absolute_path)
    if name in ("event", "stored-event"):
        prop = path[0] if path and isinstance(path[0], str) else None
        return _event_rule(prop, error.validator, stored=name == "stored-event")
    member = _EVENT_LISTS.get(name)
    if member and len(path) >= 2 and path[0] == member and isinstance(path[1], int):
        prop = path[2] if len(path) > 2 and isinstance(path[2], str) else None
        return _event_rule(prop, error.validator, stored=True)
    if name == "task-status" and "allOf" in error.absolute_schema_path:
        return "upp/get-tasks-result-by-status"
    if name == "label-definition" and error.validator == "required" and not path:
        return "upp/label-definition-required-fields"
    if name == "info-result" and path[:1] == ["conformance_level"]:
        return "upp/info-conformance-level"
    if name == "info-result" and path[:1] == ["ontology"] and error.validator == "pattern":
        return "upp/info-ontology"
    return _SHAPE_RULE[name]


def _pointer(path: Iterable[Any]) -> str:
    return "/" + "/".join(str(p) for p in path)


def _message(error: ValidationError) -> str:
    if error.validator == "format" and error.validator_value == "upp-date-or-date-time":
        return f"{error.instance!r} is not an ISO-8601 date or date-time (e.g. 2026-01-15 or 2026-01-15T10:30:00Z)"
    if error.validator == "format" and error.validator_value == "upp-utc-date-time" and isotime.is_date_time(
            error.instance):
        if not isotime.has_offset(error.instance):
            return (f"{error.instance!r} carries no UTC designator: ISO-8601 reads a time without Z or an offset as "
                    "local time, not UTC (03 §3 upp/get_tasks: \"ISO-8601 UTC\"; e.g. 2026-03-08T10:30:00Z)")
        return (f"{error.instance!r} is not in UTC: its offset is not zero (03 §3 upp/get_tasks: \"ISO-8601 UTC\"; "
                "e.g. 2026-03-08T10:30:00Z)")
    if error.validator == "format":
        return f"{error.instance!r} is not an ISO-8601 date-time (e.g. 2026-01-15T10:30:00Z)"
    if error.validator == "enum":
        return f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    return error.message


def problems(name: str, value: Any) -> list[Problem]:
    """Every way `value` is not a `name` (see SCHEMA_NAMES), as problems with a JSON pointer."""
    found = sorted(validator(name).iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    return [Problem(f"{_pointer(e.absolute_path)}: {_message(e)}", _route(name, e)) for e in found]


# -- the shapes -------------------------------------------------------------------------------------

def event_problems(value: Any) -> list[Problem]:
    """02 §1 Event (a member of upp/retrieve's result)."""
    return problems("event", value)


def stored_event_problems(value: Any, *, entity_key: str | None = None) -> list[Problem]:
    """02 §2 StoredEvent; with `entity_key`, also that the event belongs to that user."""
    found = problems("stored-event", value)
    if not isinstance(value, dict):
        return found
    if entity_key is not None and isinstance(value.get("entity_key"), str) and value["entity_key"] != entity_key:
        found.append(Problem(f"/entity_key: {value['entity_key']!r}, but the request was for {entity_key!r}",
                             "upp/stored-event-entity-key"))
    by = value.get("superseded_by")
    if isinstance(by, str) and value.get("status") in EVENT_STATUSES and value["status"] != "superseded":
        found.append(Problem(f"/superseded_by: {by!r} on an event whose status is {value['status']!r} "
                             f"(only a superseded event names its successor)", "upp/superseded-by-consistent"))
    if isinstance(by, str) and by == value.get("id"):
        found.append(Problem(f"/superseded_by: the event names itself ({by!r})", "upp/superseded-by-consistent"))
    return found


def stored_events_problems(values: Any, *, entity_key: str | None = None) -> list[Problem]:
    """A StoredEvent[]: each member, and that no two share an id."""
    if not isinstance(values, list):
        return [Problem(f"/: expected an array of StoredEvents, got {type(values).__name__}",
                        "upp/stored-event-field-types")]
    found: list[Problem] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(values):
        found += [Problem(f"/{i}{p}", p.requirement) for p in stored_event_problems(item, entity_key=entity_key)]
        eid = item.get("id") if isinstance(item, dict) else None
        if isinstance(eid, str):
            if eid in seen:
                found.append(Problem(f"/{i}/id: {eid!r} is also the id of event /{seen[eid]}",
                                     "upp/stored-event-id-unique"))
            seen.setdefault(eid, i)
    return found


def events_problems(values: Any) -> list[Problem]:
    """An Event[] (upp/retrieve)."""
    if not isinstance(values, list):
        return [Problem(f"/: expected an array of Events, got {type(values).__name__}", "upp/event-field-types")]
    return [Problem(f"/{i}{p}", p.requirement) for i, item in enumerate(values) for p in event_problems(item)]


def label_definition_problems(value: Any) -> list[Problem]:
    return problems("label-definition", value)


def export_package_problems(value: Any) -> list[Problem]:
    found = problems("export-package", value)
    if isinstance(value, dict) and isinstance(value.get("events"), list):
        key = value.get("entity_key") if isinstance(value.get("entity_key"), str) else None
        # Schema problems of the events are already in `found`; add the cross-member ones.
        found += [Problem(f"/events{p}", p.requirement)
                  for p in stored_events_problems(value["events"], entity_key=key)
                  if p.requirement in ("upp/stored-event-entity-key", "upp/stored-event-id-unique",
                                       "upp/superseded-by-consistent")]
    return found


def task_status_problems(value: Any) -> list[Problem]:
    return problems("task-status", value)


def info_result_problems(value: Any) -> list[Problem]:
    return problems("info-result", value)


def export_result_problems(value: Any) -> list[Problem]:
    return problems("export-result", value)


def import_result_problems(value: Any) -> list[Problem]:
    return problems("import-result", value)


def delete_result_problems(value: Any) -> list[Problem]:
    return problems("delete-result", value)


def contextualize_result_problems(value: Any) -> list[Problem]:
    return problems("contextualize-result", value)


def unknown_labels(event: Any, known: Sequence[str] | frozenset[str]) -> list[str]:
    """The labels of an event that are not in `known` (non-strings count as unknown)."""
    labels = event.get("labels") if isinstance(event, dict) else None
    if not isinstance(labels, list):
        return []
    return [lab if isinstance(lab, str) else repr(lab) for lab in labels if lab not in known]
