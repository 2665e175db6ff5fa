"""UPP round trip between two servers (issue 7): place events in A, move them to B with
upp/export_events → upp/import_events, read them back, and name every field that did not survive.

The journey, each step seen on its own so a loss is charged where it happened:

1. **placing** — one ExportPackage the suite writes (`PLAN`, below) is imported into A for a fresh
   entity_key; A's `upp/get_events` is the view *import into A*;
2. A's `upp/export_events` file, read from A's export folder, is the view *export from A*;
3. that file, copied byte for byte next to B's own exports (a folder B reads), is imported into B
   for another fresh entity_key; B's `upp/get_events` is the view *import into B*;
4. B's `upp/export_events` file is the view *export from B*.

Every view is compared with the plan, event by event. Ids are re-minted by every import
(upp/import-new-ids), so events are matched by their value (case and spacing folded); an event whose
value changed is paired with a leftover of the same labels. Each field is charged once, at the
first view where it differs (a value lost on export from A is not charged again on every later
view). A view is skipped when the server cannot show it (no upp/get_events: the import is then seen
through the export that follows, and the stage says so).

What is placed (`PLAN`, one package, created one second apart in this order, all labels of user/v1):

| key | labels | cardinality | confidence | source_type | validity | expected |
|---|---|---|---|---|---|---|
| name-1 | who_name | singular | 0.95 | user_stated | from + until | superseded by name-2 |
| hobby-1 | what_interests_hobbies | plural | 0.85 | agent_observed | from | valid (accumulates) |
| name-2 | who_name | singular | 0.9 | inferred | from | superseded by name-3 |
| hobby-2 | what_interests_hobbies | plural | 0.82 | inferred | until | valid (accumulates) |
| language-low | who_languages | plural | 0.3 | inferred | — | staged (or valid: MAY) |
| home-1 | where_home | singular | 0.88 | user_stated | from | superseded by home-2 |
| name-3 | who_name | singular | 1.0 | user_stated | — | valid |
| both-plural | who_languages + what_interests_hobbies | plural | 0.8 | agent_observed | from + until | valid |
| home-2 | where_home | singular | 0.99 | agent_observed | from (+02:00) | valid ("São Paulo") |

Fields compared, and the requirement (suite/upp/catalogue.toml) that promises each survives:

| field (JSON pointer) | seen at an import (into A / into B) | seen at an export (from A / from B) |
|---|---|---|
| the event itself (`""`) | upp/import-persists | upp/export-all-events |
| `/value`, `/labels`, `/confidence`, `/source_type`, `/valid_from`, `/valid_until` | upp/import-persists | upp/export-all-events |
| `/entity_key` | upp/import-persists (the request's user) | — |
| `/status`: superseded expected, or a singular label's latest superseded | upp/import-supersession | upp/export-all-events |
| `/status`: a plural event superseded | upp/plural-accumulate | upp/export-all-events |
| `/status`: staged above the side's own threshold | upp/high-confidence-valid | upp/export-all-events |
| `/status`: not one of valid, staged, superseded | upp/stored-event-status | upp/stored-event-status |
| `/superseded_by`: the re-id'd successor in the same view | upp/supersession-superseded-by | upp/supersession-superseded-by |

Allowances (what a server may change without a loss):

* `id` and `created_at` are the importing server's (upp/import-new-ids), `entity_key` is the
  destination user, the package's `exported_at` is the export's; none is compared across servers.
* `superseded_by` is compared as a structure, not as a string: it must name, in the same view, the
  event that the plan's successor became. Importers re-derive supersession from the package
  ("Supersession rules apply as during normal storage", stored in created_at order, package order
  for ties: docs/live-upp.md), so the package's pointers need not be copied, only the result must
  be the same. A server that copies them and re-maps the ids passes too.
* Where low confidence ends is each server's (02 §6; variant upp-high-staging-threshold): each side
  is judged against the staging threshold its import view shows (`Reading`: the plan's readings are
  stage below nothing, below 0.5, below each planned confidence; 1.0 is high in every reading), the
  one its statuses are closest to, with the supersessions that follow. Another threshold than the
  plan's, or the 0.3 event stored `valid` (upp/low-confidence-staged is a MAY), is a note, not a
  loss. An export must still show the statuses its import held (export-all-events).
* `labels` are compared as a set (order and repeats are not promised); `confidence` within 1e-6
  (a server may store a float); `valid_from`/`valid_until` as instants (an equivalent ISO-8601
  spelling, another UTC offset or fractional zeros pass), and an absent member equals null.
* `superseded_by` on an event that is not superseded may be null or absent.
* Members beyond the StoredEvent (extensions) are ignored; events the destination holds beyond the
  plan are listed in the notes, not charged (the user is fresh: an extra is the server's own).

Preconditions (the round trip is skipped with the reason, `NotApplicable`, when one fails; each is
judged by the single-target checks): both servers serve upp/export_events and upp/import_events and
share this machine's files (`shares_files()`: the suite reads export files and writes packages);
both speak the ontology user/v1; A accepts the placing package; A's and B's exports are readable
ExportPackages. A package of A's that B refuses is no precondition: every event A exported is lost at
*import into B* (upp/import-persists, `got` the refusal), unless A's file is no valid ExportPackage
(upp/l3/export-file's reading): then B refusing it is what B may do, and each problem of the file is
charged at *export from A* to its own requirement.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.suite.interop.model import MISSING, Loss, RoundTrip, charge_once
from memconform.suite.outcomes import NotApplicable
from memconform.suite.upp import model, ontology
from memconform.suite.upp.isotime import instant as _instant
from memconform.suite.upp.checks._common import (
    INVALID_PARAMS, compact, fold, fresh_entity, need, served, server_ontology,
)
from memconform.suite.upp.checks._placing import (
    folder_learned, import_folder, listed, package, package_file, read_export_file,
)
from memconform.suite.upp.client import UppClient

SPEC = "upp"
STATUSES = ("valid", "staged", "superseded")
CONFIDENCE_TOLERANCE = 1e-6
#: The Event members compared on every view (upp/02 §1), in the order losses are listed.
CONTENT_FIELDS = ("value", "labels", "confidence", "source_type", "valid_from", "valid_until")


@dataclass(frozen=True)
class Planned:
    """One event of the plan: its Event members as placed, and what every server must make of it."""

    key: str
    event: dict[str, Any]
    status: str                   # valid, superseded or staged (the status a conforming server stores)
    successor: str | None = None  # the key of the event that supersedes it
    may_stage: bool = False       # low confidence: staged or valid, the server's choice (MAY)

    @property
    def value(self) -> str:
        return self.event["value"]

    @property
    def plural(self) -> bool:
        return all(ontology.user_v1().cardinality(label) == "plural" for label in self.event["labels"])


def _event(value: str, labels: list[str], confidence: float, source_type: str, **validity: str) -> dict[str, Any]:
    return {"value": value, "labels": labels, "confidence": confidence, "source_type": source_type, **validity}


#: The events placed in A, in storage order (the package's created_at order).
PLAN: tuple[Planned, ...] = (
    Planned("name-1", _event("My name is Ada Lovelace.", ["who_name"], 0.95, "user_stated",
                             valid_from="2001-01-01T00:00:00Z", valid_until="2009-12-31T23:59:59Z"),
            "superseded", successor="name-2"),
    Planned("hobby-1", _event("I love hiking.", ["what_interests_hobbies"], 0.85, "agent_observed",
                              valid_from="2003-05-01T08:00:00Z"), "valid"),
    Planned("name-2", _event("My name is Grace Hopper.", ["who_name"], 0.9, "inferred",
                             valid_from="2010-01-01T00:00:00Z"), "superseded", successor="name-3"),
    Planned("hobby-2", _event("I love playing chess.", ["what_interests_hobbies"], 0.82, "inferred",
                              valid_until="2030-06-30T12:00:00Z"), "valid"),
    Planned("language-low", _event("I speak Finnish.", ["who_languages"], 0.3, "inferred"), "staged",
            may_stage=True),
    Planned("home-1", _event("I live in Lisbon.", ["where_home"], 0.88, "user_stated",
                             valid_from="2004-02-29T10:30:00Z"), "superseded", successor="home-2"),
    Planned("name-3", _event("My name is Ada Hopper.", ["who_name"], 1.0, "user_stated"), "valid"),
    Planned("both-plural", _event("I speak Portuguese and love fado.", ["who_languages", "what_interests_hobbies"],
                                  0.8, "agent_observed", valid_from="2015-03-01T00:00:00Z",
                                  valid_until="2035-03-01T00:00:00Z"), "valid"),
    Planned("home-2", _event("I live in São Paulo.", ["where_home"], 0.99, "agent_observed",
                             valid_from="2020-07-14T09:15:00+02:00"), "valid"),
)


@dataclass
class _Ctx:
    """What the placing helpers need of a check context: the client."""

    client: Any


@dataclass
class View:
    """What one server showed of the user at one stage."""

    stage: str
    kind: str                # "import" (get_events after an import) or "export" (an export file)
    side: str                # "source" or "destination"
    entity_key: str
    events: list[dict[str, Any]]
    package: Any = None      # an export view's whole file, as read (judged again only if B refuses it)


def round_trip(source: UppClient, destination: UppClient, *, version: str, source_label: str,
               destination_label: str) -> RoundTrip:
    """Place `PLAN` in `source`, move it to `destination` through export_events/import_events, and
    compare every view with the plan (module docstring). Raises NotApplicable when a precondition
    fails; a driver's TargetError passes through."""
    a, b = _Ctx(source), _Ctx(destination)
    for ctx, label in ((a, source_label), (b, destination_label)):
        _preconditions(ctx, label)
    entity_a, entity_b = fresh_entity("interop-src"), fresh_entity("interop-dst")
    notes: list[str] = []
    extra: dict[str, Any] = {"source_entity": entity_a, "destination_entity": entity_b}
    try:
        views, refused = _journey(a, b, entity_a, entity_b, source_label, destination_label, notes, extra)
    finally:
        for ctx, entity in ((a, entity_a), (b, entity_b)):
            _forget(ctx, entity)
    records = _record_ids(views)
    extra["records"] = {records[p.key]: p.value for p in PLAN}
    losses, compared = _compare(views, records, notes)
    if refused is not None:
        # views[-1] is A's export: what B refused
        broken = model.export_package_problems(views[-1].package)
        if broken:  # B refused a file A wrote wrong, as it must (may): the loss is A's
            losses += [Loss(str(extra["source_export"]), problem.split(":", 1)[0], problem.requirement,
                            "an ExportPackage (02 §4)", problem, f"export from {source_label}") for problem in broken]
            notes.append(f"{destination_label} refused {source_label}'s export file, which is no valid ExportPackage "
                         f"({len(broken)} problem(s), charged to {source_label}'s export): a refusal is what "
                         f"{destination_label} may do with it")
        else:  # what A lost is charged to A; what it exported, B lost whole
            travelled, _ = _match(views[-1].events)
            losses += [Loss(records[p.key], "", "upp/import-persists", _brief(p.event), refused,
                            f"import into {destination_label}") for p in PLAN if p.key in travelled]
        compared = 0
    return RoundTrip(SPEC, version, source_label, destination_label, placed=len(PLAN), compared=compared,
                     losses=tuple(losses), notes=tuple(notes), extra=extra)


# -- the journey ----------------------------------------------------------------------------------

def _preconditions(ctx: _Ctx, label: str) -> None:
    for op in ("upp/export_events", "upp/import_events"):
        if not served(ctx, op):
            raise NotApplicable(f"{label} does not serve {op} (upp/info does not list it and the server answers "
                                f"-32601): a UPP round trip needs level 3 on both sides")
    if not ctx.client.shares_files():
        raise NotApplicable(f"{label} does not share this machine's files (neither a stdio child nor on a "
                            f"loopback address): the suite can neither read its export files nor write a "
                            f"package it can import")
    served_ontology = server_ontology(ctx)
    if served_ontology != ontology.USER_V1:
        raise NotApplicable(f"{label} speaks the ontology {served_ontology!r} (upp/info), not {ontology.USER_V1}: "
                            f"the round trip places user/v1 events")


def _journey(a: _Ctx, b: _Ctx, entity_a: str, entity_b: str, source_label: str, destination_label: str,
             notes: list[str], extra: dict[str, Any]) -> tuple[list[View], str | None]:
    """The views in order; the second member is why B refused A's package (None: it imported it)."""
    views: list[View] = []
    placing = package(fresh_entity("interop-plan"), [dict(p.event) for p in PLAN], ontology_id=ontology.USER_V1)
    extra["package_ids"] = {p.key: e["id"] for p, e in zip(PLAN, placing["events"], strict=True)}
    with package_file(a, placing, "interop-place") as path:
        reply = a.client.import_events(entity_a, str(path))
    _readable(a, reply, source_label)
    need(reply, f"upp/import_events of the round trip's package into {source_label}")
    held = _held(a, entity_a, "source", views, notes, source_label)
    exported_a, file_a = _exported(a, entity_a, "source", source_label, after_held=held)
    views.append(exported_a)
    extra["source_export"] = file_a

    folder = import_folder(b)
    copy = folder.path / f"mcf-interop-{secrets.token_hex(6)}.json"
    copy.write_bytes(Path(file_a).read_bytes())  # byte for byte: B judges A's file, not the suite's rewrite
    folder.written.append(copy)
    try:
        reply = b.client.import_events(entity_b, str(copy))
    finally:
        copy.unlink(missing_ok=True)
        if copy in folder.written:
            folder.written.remove(copy)
    _readable(b, reply, destination_label)
    if not reply.ok:
        notes.append(f"{destination_label} refused {source_label}'s export file: {reply.describe()}")
        return views, f"refused: {reply.describe()}"
    result = reply.result if isinstance(reply.result, dict) else {}
    skipped = result.get("skipped_count")
    if isinstance(skipped, int) and not isinstance(skipped, bool) and skipped:
        notes.append(f"{destination_label} skipped {skipped} event(s) of {source_label}'s export "
                     f"(import_events answered {compact(result)})")
    held = _held(b, entity_b, "destination", views, notes, destination_label)
    exported_b, file_b = _exported(b, entity_b, "destination", destination_label, after_held=held)
    views.append(exported_b)
    extra["destination_export"] = file_b
    return views, None


def _readable(ctx: _Ctx, reply: Any, label: str) -> None:
    """A package refused with -32602 where the suite could not learn the server's export folder: the
    server may only read its own folders (06 §7), and the suite could not write there."""
    if reply.error_code == INVALID_PARAMS and not folder_learned(ctx):
        raise NotApplicable(f"{label} refused a package the suite wrote to {str(import_folder(ctx).path)!r} "
                            f"({reply.describe()}): the suite could not learn the server's export folder, so it "
                            f"cannot write where the server reads")


def _held(ctx: _Ctx, entity: str, side: str, views: list[View], notes: list[str], label: str) -> bool:
    """Append the view of what the import stored (upp/get_events); False when it cannot be read."""
    if not served(ctx, "upp/get_events"):
        notes.append(f"{label} does not serve upp/get_events: what its import stored is seen only through its "
                     f"export, so a loss there is charged to the import")
        return False
    views.append(View(f"import into {label}", "import", side, entity,
                      listed(ctx, entity, f"upp/get_events for {entity!r} ({label})")))
    return True


def _exported(ctx: _Ctx, entity: str, side: str, label: str, *, after_held: bool) -> tuple[View, str]:
    """The view of the export file; judged as the import's result when no get_events view came first."""
    reply = ctx.client.export_events(entity)
    result = need(reply, f"upp/export_events for {entity!r} ({label})")
    file = result.get("file") if isinstance(result, dict) else None
    content, why = read_export_file(file)
    if why is not None or not isinstance(content, dict) or not isinstance(content.get("events"), list):
        raise NotApplicable(f"precondition failed: {label}'s export of {entity!r} is not a readable ExportPackage "
                            f"({why or 'no events array'}); judged by upp/l3/export-file")
    events = [e for e in content["events"] if isinstance(e, dict)]
    if after_held:
        return View(f"export from {label}", "export", side, entity, events, content), file
    return View(f"import into {label} (seen in the export from {label})", "import", side, entity, events,
                content), file


def _forget(ctx: _Ctx, entity: str) -> None:
    """Leave nothing behind in a shared server (best effort: never hides the round trip's outcome)."""
    try:
        if served(ctx, "upp/delete_events"):
            ctx.client.delete_events(entity)
    except Exception:  # noqa: BLE001 - cleanup only
        pass


# -- matching and comparing -----------------------------------------------------------------------

def _match(events: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Each planned key → the view's event it became (by folded value; then a leftover of the same
    labels, in order), and the events no planned one became."""
    left = list(events)
    found: dict[str, dict[str, Any]] = {}
    for p in PLAN:
        twin = next((e for e in left if fold(e.get("value")) == fold(p.value)), None)
        if twin is not None:
            found[p.key] = twin
            left.remove(twin)
    for p in PLAN:
        if p.key in found:
            continue
        twin = next((e for e in left if _label_set(e.get("labels")) == _label_set(p.event["labels"])
                     and fold(e.get("value")) not in {fold(q.value) for q in PLAN}), None)
        if twin is not None:
            found[p.key] = twin
            left.remove(twin)
    return found, left


def _label_set(labels: Any) -> frozenset[str] | None:
    if isinstance(labels, list) and all(isinstance(x, str) for x in labels):
        return frozenset(labels)
    return None


def _record_ids(views: list[View]) -> dict[str, str]:
    """The record name of each planned event: its id in A (the first view that shows it with a
    string id), else the id the suite gave it in the placing package."""
    names: dict[str, str] = {}
    for view in (v for v in views if v.side == "source"):
        found, _ = _match(view.events)
        for key, e in found.items():
            if key not in names and isinstance(e.get("id"), str) and e["id"]:
                names[key] = e["id"]
    return {p.key: names.get(p.key, f"(placed {p.key})") for p in PLAN}


def _compare(views: list[View], records: dict[str, str], notes: list[str]) -> tuple[list[Loss], int]:
    losses: list[Loss] = []
    charged: set[tuple[str, str]] = set()
    held_reading: dict[str, Reading] = {}  # side → the staging reading its import view showed
    sent: dict[str, dict[str, Any]] = {}  # planned key → the event as the source's last view showed it
    compared = 0
    for n, view in enumerate(views):
        found, extras = _match(view.events)
        disagreement = None
        if view.kind == "import":
            held_reading[view.side] = _closest(found)
            _note_reading(held_reading[view.side], view, notes)
            disagreement = _order_disagreement(found, held_reading[view.side], views, view)
        reading = held_reading.get(view.side, READINGS[0])
        if extras:
            notes.append(f"{view.stage}: {len(extras)} event(s) beyond the plan: "
                         + "; ".join(compact({k: e.get(k) for k in ("id", "value", "labels", "status")}, 160)
                                     for e in extras[:4]))
        if n == len(views) - 1:
            compared = len(found)
        for p in PLAN:
            got = found.get(p.key)
            record = records[p.key]
            if got is None:
                broken = model.event_problems(sent[p.key]) if view.side == "destination" and p.key in sent else []
                if broken:  # an Event A wrote wrong, which B may skip (03 §4): A's loss, charged at A's views
                    notes.append(f"{view.stage}: {p.key} is not there; the source exported it as no valid Event "
                                 f"({'; '.join(broken[:2])}), which an importer skips (03 §4)")
                    continue
                charge_once(losses, charged, Loss(record, "", _content_requirement(view), _brief(p.event), MISSING,
                                              view.stage))
                continue
            for field, expected, value, rid in _differences(p, got, view, found, reading):
                why = disagreement if field in ("/status", "/superseded_by") else None
                charge_once(losses, charged, Loss(record, field, rid, expected, value, view.stage, disagreement=why))
        if view.side == "source":
            sent.update(found)
    return losses, compared


@dataclass(frozen=True)
class Reading:
    """How a server stores PLAN when it stages events below `threshold` (02 §6: "New event with low
    confidence → Created as staged", where "low" ends is the server's; variant
    upp-high-staging-threshold): each key's status and the key of the event that superseded it."""

    threshold: float
    stored: dict[str, tuple[str, str | None]]


def _stored_under(threshold: float, order: tuple[str, ...] | None = None) -> dict[str, tuple[str, str | None]]:
    """02 §6 applied to PLAN in order (or in `order`, planned keys as a package lists them): a
    staged event supersedes nothing and is superseded by nothing ("contradicts an existing valid
    event"); a valid one supersedes the valid events it shares a singular label with."""
    state: dict[str, list[Any]] = {}
    by_key = {p.key: p for p in PLAN}
    for p in (by_key[key] for key in order) if order is not None else PLAN:
        if p.event["confidence"] < threshold:
            state[p.key] = ["staged", None]
            continue
        for key, held in state.items():
            shared = set(by_key[key].event["labels"]) & set(p.event["labels"])
            if held[0] == "valid" and any(ontology.user_v1().cardinality(label) == "singular" for label in shared):
                held[0], held[1] = "superseded", p.key
        state[p.key] = ["valid", None]
    return {key: (held[0], held[1]) for key, held in state.items()}


def _readings() -> tuple[Reading, ...]:
    """Every distinct way to store PLAN, one per staging threshold: below nothing, below each planned
    confidence (1.0 is high in every reading). The plan's own reading (stage below 0.5) comes first."""
    out = [Reading(0.5, _stored_under(0.5))]
    for threshold in sorted({0.0, *(p.event["confidence"] for p in PLAN)}):
        stored = _stored_under(threshold)
        if threshold < 1.0 and all(r.stored != stored for r in out):
            out.append(Reading(threshold, stored))
    return tuple(out)


READINGS = _readings()


def _misses(reading: Reading, found: dict[str, dict[str, Any]]) -> int:
    out = 0
    for key, (status, successor) in reading.stored.items():
        got = found.get(key)
        if got is None:
            continue
        out += got.get("status") != status
        if successor is not None and got.get("status") == "superseded":
            out += found.get(successor) is None or got.get("superseded_by") != found[successor].get("id")
    return out


def _closest(found: dict[str, dict[str, Any]]) -> Reading:
    """The reading the statuses of an import view follow (the plan's own on a tie): a server is
    judged against its own threshold, consistently, never against one it does not have."""
    return min(READINGS, key=lambda reading: _misses(reading, found))


def _listed_order(package: View) -> tuple[str, ...] | None:
    """The planned keys in the order a package lists them, when that is not the order they were
    stored in (None otherwise, or when not every planned event is in it)."""
    found, _ = _match(package.events)
    if set(found) != {p.key for p in PLAN}:
        return None
    position = {id(e): i for i, e in enumerate(package.events)}
    order = tuple(sorted(found, key=lambda key: position[id(found[key])]))
    return None if order == tuple(p.key for p in PLAN) else order


def _order_disagreement(found: dict[str, dict[str, Any]], reading: Reading, views: list[View], view: View) -> str | None:
    """Why a destination whose supersession differs from the plan is not to blame: it applied the
    package it was given in the order the file lists the events, the source listed them in another
    order than it stored them, and 03 §4 fixes neither order ("Supersession rules apply as during
    normal storage"; variants upp-newest-first, upp-import-package-order). None when the destination's
    statuses are not exactly that derivation."""
    if view.side != "destination" or _misses(reading, found) == 0:
        return None
    package = next((v for v in reversed(views[:views.index(view)]) if v.side == "source"), None)
    order = _listed_order(package) if package is not None else None
    if order is None:
        return None
    listed = Reading(reading.threshold, _stored_under(reading.threshold, order))
    if _misses(listed, found) != 0:
        return None
    return (f"the source's export lists the events in another order than it stored them ({', '.join(order)}), "
            f"and the destination applied them in the order listed: 03 §4 fixes neither order (\"Supersession "
            f"rules apply as during normal storage\"), so together they change which event is current")


def _note_reading(reading: Reading, view: View, notes: list[str]) -> None:
    default = READINGS[0].stored
    moved = [p for p in PLAN if reading.stored[p.key][0] != default[p.key][0]]
    if not moved:
        return
    if all(p.may_stage for p in moved):
        p = moved[0]
        notes.append(f"{view.stage}: {p.value!r} (confidence {p.event['confidence']}) was stored "
                     f"{reading.stored[p.key][0]}, not {default[p.key][0]}: allowed (upp/low-confidence-staged is a MAY)")
        return
    notes.append(f"{view.stage}: events below confidence {reading.threshold} are stored staged, and supersede "
                 f"nothing (02 §6 leaves where low confidence ends to the server): "
                 + "; ".join(f"{p.key} ({p.event['confidence']}) {reading.stored[p.key][0]}" for p in moved))



def _content_requirement(view: View) -> str:
    return "upp/import-persists" if view.kind == "import" else "upp/export-all-events"


def _differences(p: Planned, got: dict[str, Any], view: View, found: dict[str, dict[str, Any]], reading: Reading):
    """(pointer, expected, got, requirement) for every field of `got` that is not what `p` promises,
    its status and successor as the side's own staging reading stores them."""
    rid = _content_requirement(view)
    for name in CONTENT_FIELDS:
        expected = p.event.get(name)
        value = got.get(name, MISSING)
        if not _same(name, expected, value):
            yield f"/{name}", expected, value, rid
    if view.kind == "import" and got.get("entity_key", MISSING) != view.entity_key:
        yield "/entity_key", view.entity_key, got.get("entity_key", MISSING), "upp/import-persists"
    status = got.get("status", MISSING)
    wanted, successor_key = reading.stored[p.key]
    if status != wanted:
        yield "/status", wanted, status, _status_requirement(p, status, view)
    if successor_key is not None and status == "superseded":
        successor = found.get(successor_key)
        if successor is not None:  # a missing successor is its own loss
            pointer = got.get("superseded_by", MISSING)
            successor_id = successor.get("id", MISSING)
            # A successor without an id cannot be pointed at: a null pointer to it is no kept edge.
            if not (isinstance(successor_id, str) and successor_id) or pointer != successor_id:
                yield "/superseded_by", successor_id, pointer, "upp/supersession-superseded-by"


def _status_requirement(p: Planned, status: Any, view: View) -> str:
    if status not in STATUSES:
        return "upp/stored-event-status"
    if view.kind == "export":
        return "upp/export-all-events"
    if status == "staged":
        return "upp/high-confidence-valid"
    if status == "superseded" and p.plural:
        return "upp/plural-accumulate"
    return "upp/import-supersession"


def _same(name: str, expected: Any, value: Any) -> bool:
    if name == "labels":
        return _label_set(value) is not None and _label_set(value) == frozenset(expected)
    if name == "confidence":
        return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                and abs(value - expected) <= CONFIDENCE_TOLERANCE)
    if name in ("valid_from", "valid_until"):
        if expected is None:
            return value is MISSING or value is None
        return value == expected or (_instant(value) is not None and _instant(value) == _instant(expected))
    return value == expected


def _brief(event: dict[str, Any]) -> dict[str, Any]:
    return {k: event[k] for k in ("value", "labels") if k in event}


__all__ = ["round_trip", "PLAN", "Planned", "View"]
